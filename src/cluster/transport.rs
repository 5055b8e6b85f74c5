//! The HTTP stack under every kube [`Client`] kdrift builds: kube's own layers (base URI, auth,
//! extra headers, retries of 429/503/504) over a hyper client that speaks HTTP/2 where the API
//! server offers it (ALPN over TLS, as kubectl and client-go do) and HTTP/1.1 elsewhere.
//!
//! kube 5 builds an HTTP/1.1-only client: each request in flight holds its own connection and
//! each new connection costs a TLS handshake on both sides. Over HTTP/2 the requests of a command
//! share one connection: `check` reading hundreds of objects by name pays for one handshake, not
//! one per read in flight. A silent HTTP/2 connection is noticed by pings, as client-go does it:
//! a ping after [`PING_AFTER`] without a frame, the connection dropped when no answer comes
//! within [`PING_TIMEOUT`], and its requests fail instead of waiting.
//!
//! The live view asks for HTTP/1.1: an API server allows a connection 100 streams (since its
//! fixes for HTTP/2 "rapid reset", CVE-2023-44487) and a watch holds one while it runs; hyper
//! queues a request past the limit rather than open a second connection, so the watches of many
//! kinds or namespaces could hold every other request back. The commands that read and write
//! (check, diff, accept, revert) keep at most
//! [`crate::cluster::read::GETS_IN_FLIGHT_HTTP2`] reads in flight and no watch, so they ask
//! for HTTP/2.
//!
//! With a proxy in the kubeconfig (`proxy-url`), kube's own builder is used as it is (HTTP/1.1).
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use kube::client::retry::RetryPolicy;
use kube::client::{Body, ClientBuilder, ConfigExt};
use kube::{Client, Config};
use tower::{BoxError, ServiceBuilder};

use super::traffic::CountLayer;

/// A connection that has sent nothing for this long is pinged (client-go's `ReadIdleTimeout`).
pub const PING_AFTER: Duration = Duration::from_secs(30);
/// A ping unanswered for this long drops the connection (client-go's `PingTimeout`).
pub const PING_TIMEOUT: Duration = Duration::from_secs(15);

/// Whether the last answer of a client's server came over HTTP/2 (known after its first).
#[derive(Debug, Clone, Default)]
pub struct Protocol(Arc<AtomicBool>);

impl Protocol {
    /// True when the server's last answer came over HTTP/2.
    pub fn http2(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A client for `config`, counted by [`CountLayer`], offering HTTP/2 when `http2`, and what
/// tells which HTTP it speaks.
pub fn client(config: Config, http2: bool) -> Result<(Client, Protocol), kube::Error> {
    let protocol = Protocol::default();
    if config.proxy_url.is_some() {
        let client = ClientBuilder::try_from(config)?
            .with_layer(&CountLayer)
            .build();
        return Ok((client, protocol));
    }
    let default_ns = config.default_namespace.clone();
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    let tls = config.rustls_client_config()?;
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http();
    let https = match &config.tls_server_name {
        Some(name) => {
            let name = rustls::pki_types::ServerName::try_from(name.clone()).map_err(|e| {
                kube::Error::RustlsTls(kube::client::RustlsTlsError::InvalidServerName(e))
            })?;
            https.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name))
        }
        None => https,
    };
    let https = if http2 {
        https.enable_all_versions().wrap_connector(http)
    } else {
        https.enable_http1().wrap_connector(http)
    };
    let mut connector = hyper_timeout::TimeoutConnector::new(https);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let hyper: hyper_util::client::legacy::Client<_, Body> =
        hyper_util::client::legacy::Builder::new(TokioExecutor::new())
            .timer(TokioTimer::new())
            .http2_keep_alive_interval(PING_AFTER)
            .http2_keep_alive_timeout(PING_TIMEOUT)
            .build(connector);
    let seen = Arc::clone(&protocol.0);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(
            config
                .default_retry
                .then(|| tower::retry::RetryLayer::new(RetryPolicy::server_retry())),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .layer(CountLayer)
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .map_err(BoxError::from)
        .map_response(move |response: http::Response<_>| {
            seen.store(
                response.version() == http::Version::HTTP_2,
                Ordering::Relaxed,
            );
            response
        })
        .service(hyper);
    Ok((Client::new(service, default_ns), protocol))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::sim::server::{Scenario, SimConfig, SimServer, Timings};

    /// The demo cluster listens on plain HTTP: no ALPN, so HTTP/1.1, and the client says so.
    #[tokio::test]
    async fn plain_http_is_spoken_as_http1_and_said_so() {
        let server = SimServer::start(SimConfig {
            port: 0,
            scenario: Scenario::None,
            seed: false,
            timings: Timings::default(),
            gitops_repos: Default::default(),
            fleet_cluster: None,
        })
        .await
        .unwrap();
        let (client, protocol) = client(Config::new(server.url().parse().unwrap()), true).unwrap();
        client.apiserver_version().await.unwrap();
        assert!(!protocol.http2());
        server.shutdown().await;
    }
}
