#!/usr/bin/env python3
"""A loopback HTTP proxy in front of a demo cluster that keeps every protobuf request body.

Usage: capture.py LISTEN_PORT UPSTREAM_URL OUT_DIR
Each request whose Content-Type is application/vnd.kubernetes.protobuf is saved as
OUT_DIR/NNN-METHOD-<path with / as _>.pb before it is passed on unchanged.
Point kubectl at it with --server=http://127.0.0.1:LISTEN_PORT.
"""
import http.client
import http.server
import itertools
import os
import sys
import urllib.parse

PORT, UPSTREAM, OUT = int(sys.argv[1]), urllib.parse.urlparse(sys.argv[2]), sys.argv[3]
COUNTER = itertools.count(1)


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def relay(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        if body and self.headers.get("Content-Type", "").startswith(
                "application/vnd.kubernetes.protobuf"):
            path = urllib.parse.urlparse(self.path).path.strip("/").replace("/", "_")
            name = f"{next(COUNTER):03}-{self.command}-{path}.pb"
            with open(os.path.join(OUT, name), "wb") as f:
                f.write(body)
        conn = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
        conn.request(self.command, self.path, body=body, headers=headers)
        reply = conn.getresponse()
        data = reply.read()
        self.send_response(reply.status)
        for k, v in reply.getheaders():
            if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = relay

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Proxy).serve_forever()
