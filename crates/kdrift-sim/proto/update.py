#!/usr/bin/env python3
"""Vendor the upstream Kubernetes .proto files the demo cluster decodes, compile them into
kubernetes.fds (a FileDescriptorSet, with `protoc` from PATH: Debian's protobuf-compiler), and
write gotypes.txt: what Go's JSON encoding needs to know of each message that the wire does not
carry.

Usage: update.py API_REPO APIMACHINERY_REPO APIEXTENSIONS_REPO
  each a git directory (bare or not) of github.com/kubernetes/{api,apimachinery,
  apiextensions-apiserver}; the files are read at the tags in TAGS below, nothing else is used.

gotypes.txt, one block per Go struct that is a protobuf message:
  k8s.io.api.apps.v1.DeploymentSpec          the message's full name
  1 replicas po                              field number, JSON name ("-": inlined, "!": never
                                             in JSON), flags
  ...                                        in the Go struct's order (the JSON's order)
flags: p = a pointer (nil when absent from the wire; written when set, even if zero),
       o = omitempty, z = omitzero, s = a scalar on the wire (a Go bool, number, string or
       []byte: its zero is `false`, `0` or `""`), . = none of them.
An inlined field names the message it embeds after its flags:
  1 - . k8s.io.api.core.v1.ProbeHandler
A Go type that is a slice (`type ExtraValue []string`) but a message on the wire (`items`):
  k8s.io.api.authentication.v1.ExtraValue []
"""
import os
import re
import subprocess
import sys

TAGS = {"api": "v0.36.2", "apimachinery": "v0.36.2", "apiextensions": "v0.36.2"}

# (repository, path in it, import path of the .proto). The GA group-versions of every kind a
# v1.36 server serves by default, and the apimachinery and apiextensions packages they import.
API_GROUPS = [
    "admissionregistration/v1", "apps/v1", "authentication/v1", "authorization/v1",
    "autoscaling/v1", "autoscaling/v2", "batch/v1", "certificates/v1", "coordination/v1",
    "core/v1", "discovery/v1", "events/v1", "flowcontrol/v1", "networking/v1", "node/v1",
    "policy/v1", "rbac/v1", "resource/v1", "scheduling/v1", "storage/v1",
]
FILES = [("api", g, "k8s.io/api/" + g) for g in API_GROUPS] + [
    ("apimachinery", "pkg/apis/meta/v1", "k8s.io/apimachinery/pkg/apis/meta/v1"),
    ("apimachinery", "pkg/runtime", "k8s.io/apimachinery/pkg/runtime"),
    ("apimachinery", "pkg/runtime/schema", "k8s.io/apimachinery/pkg/runtime/schema"),
    ("apimachinery", "pkg/util/intstr", "k8s.io/apimachinery/pkg/util/intstr"),
    ("apimachinery", "pkg/api/resource", "k8s.io/apimachinery/pkg/api/resource"),
    ("apiextensions", "pkg/apis/apiextensions/v1",
     "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"),
]

HERE = os.path.dirname(os.path.abspath(__file__))
# gotypes.txt is the schema crate's: the drift engine reads which fields the server drops at zero.
GOTYPES = os.path.join(HERE, "..", "..", "kdrift-schema", "data", "gotypes.txt")


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


FIELD = re.compile(r"^\t(?:(\w+)\s+)?(\S+)\s+`([^`]*)`")
TAG = re.compile(r'(\w+):"([^"]*)"')


def go_structs(repo, tag, directory):
    """Every struct of the package: name -> [(number, json name, flags)], and slice types."""
    structs, slices, aliases = {}, set(), {}
    for name in git(repo, "ls-tree", "--name-only", f"{tag}:{directory}").split():
        if (not name.endswith(".go") or name.endswith("_test.go") or name.startswith("zz_")
                or name.startswith("generated.")):
            continue
        text = git(repo, "show", f"{tag}:{directory}/{name}")
        current = None
        for line in text.splitlines():
            m = re.match(r"^type (\w+) struct ?\{(\})?", line)
            if m:
                current = structs.setdefault(m.group(1), [])
                if m.group(2):
                    current = None
                continue
            m = re.match(r"^type (\w+) metav1\.(\w+)$", line)
            if m:
                aliases[m.group(1)] = m.group(2)
                continue
            m = re.match(r"^type (\w+) \[\]\S+$", line)
            if m:
                slices.add(m.group(1))
                continue
            if line.startswith("}"):
                current = None
                continue
            if current is None:
                continue
            m = FIELD.match(line)
            if not m:
                continue
            field, gotype, tags = m.groups()
            tags = dict(TAG.findall(tags))
            proto = tags.get("protobuf", "")
            if not proto or proto == "-":
                continue
            parts = proto.split(",")
            number = int(parts[1])
            json_tag = tags.get("json", "").split(",")
            json_name = json_tag[0] or ("-" if field is None or "inline" in json_tag else field)
            if json_name == "-" and field is not None and "inline" not in json_tag:
                json_name = "!"  # json:"-": on the wire, never in JSON
            flags = ("p" if gotype.startswith("*") else "") + \
                    ("o" if "omitempty" in json_tag else "") + \
                    ("z" if "omitzero" in json_tag else "")
            current.append((number, json_name, flags or "."))
    return structs, slices, aliases


def messages(proto_text):
    """The top-level message names of a .proto file (go-to-protobuf nests none)."""
    return re.findall(r"^message (\w+) \{", proto_text, re.M)


SCALARS = {"bool", "bytes", "double", "float", "int32", "int64", "string", "uint32", "uint64"}


def proto_fields(proto_text, package):
    """message -> {field number: (type's full name or scalar, whether repeated or a map)}."""
    fields, current = {}, None
    for line in proto_text.splitlines():
        m = re.match(r"^message (\w+) \{", line)
        if m:
            current = fields.setdefault(m.group(1), {})
            continue
        if line.startswith("}"):
            current = None
            continue
        m = re.match(r"^  (optional|repeated|map<[^>]*>) ?(\S*) \w+ = (\d+);", line)
        if current is None or not m:
            continue
        label, ty, number = m.groups()
        if label.startswith("map<"):
            ty = None
        elif ty.startswith("."):
            ty = ty[1:]
        elif ty not in SCALARS:
            ty = f"{package}.{ty}"
        current[int(number)] = (ty, label != "optional")
    return fields


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    repos = dict(zip(["api", "apimachinery", "apiextensions"], sys.argv[1:]))
    out = [f"# Written by update.py from kubernetes/api {TAGS['api']}, kubernetes/apimachinery "
           f"{TAGS['apimachinery']}, kubernetes/apiextensions-apiserver {TAGS['apiextensions']}"
           " (their types.go struct tags). Do not edit."]
    meta = go_structs(repos["apimachinery"], TAGS["apimachinery"], "pkg/apis/meta/v1")[0]
    for repo_key, directory, import_path in FILES:
        repo, tag = repos[repo_key], TAGS[repo_key]
        proto = git(repo, "show", f"{tag}:{directory}/generated.proto")
        target = os.path.join(HERE, import_path, "generated.proto")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w") as f:
            f.write(proto)
        package = re.search(r"^package ([\w.]+);", proto, re.M).group(1)
        structs, slices, aliases = go_structs(repo, tag, directory)
        wire = proto_fields(proto, package)
        # `type List metav1.List`: the same fields as the type it names.
        structs.update({a: meta[t] for a, t in aliases.items() if t in meta})
        for message in messages(proto):
            if message in slices:
                out.append(f"{package}.{message} []")
            elif message in structs:
                out.append(f"{package}.{message}")
                for n, j, f in structs[message]:
                    ty, many = wire[message].get(n, (None, False))
                    if ty in SCALARS and not many:
                        f = f.rstrip(".") + "s"
                    out.append(f"{n} {j} {f}" + (f" {ty}" if j == "-" else ""))
    with open(GOTYPES, "w") as f:
        f.write("\n".join(out) + "\n")
    with open(os.path.join(HERE, "LICENSE"), "w") as f:
        f.write(git(repos["api"], "show", f"{TAGS['api']}:LICENSE"))
    protos = sorted(os.path.join(p, "generated.proto") for _, _, p in FILES)
    subprocess.run(["protoc", f"--proto_path={HERE}", "--include_imports",
                    f"--descriptor_set_out={os.path.join(HERE, 'kubernetes.fds')}", *protos],
                   check=True)


if __name__ == "__main__":
    main()
