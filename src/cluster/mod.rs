//! Kube IO: the connection (configured as kubectl would be) and the watchers that turn API
//! objects into slim rows sent as messages.
//!
//! - [`client`]: `connect` — kubeconfig, context, namespace scope, reachability check. UI-free, so
//!   the headless subcommands reuse it.
//! - [`kinds`]: the kinds the cluster serves (discovery), as kubectl's REST mapper knows them.
//! - [`openapi`]: the schemas of those kinds from the cluster's OpenAPI v3, cached on disk.
//! - [`facts`]: the counts and strategy of a StatefulSet or DaemonSet row.
//! - [`rows`]: the slim rows the screen needs, mapped from API objects (pure).
//! - [`slim`]: a Deployment type that decodes only what a row needs.
//! - [`read`]: the one reader of live objects for drift (lists, reads by name, by label, how
//!   many at once), for the headless commands and the live view's fetches alike.
//! - [`live`]: the table watcher's Deployment type (slim row and the object's JSON text, read
//!   into a drift extract only for objects with a manifest) and the live view's fetches, read
//!   through [`read`].
//! - [`logs`]: a container's log streamed in batches of safe, capped lines, reconnecting while
//!   the container runs.
//! - [`helm`]: Helm's release records, listed in the namespace scope and decoded.
//! - [`revert`]: the revert mechanism (dry run, apply, guarded removal), UI-free.
//! - [`traffic`]: requests sent, counted on the client (for the idle bench).
//! - [`watch`]: kube-runtime watchers with backoff, sending [`events::ClusterEvent`]s.
//! - [`events`]: what the watchers send: row updates and watch health.
//! - [`fallback`]: across all namespaces, one watcher per namespace while the single watch is
//!   refused (403), back to one when it is allowed.
pub mod client;
pub mod events;
pub mod facts;
pub mod fallback;
pub mod gitops;
pub mod helm;
pub mod hub;
pub mod kinds;
pub mod live;
pub mod logs;
pub mod openapi;
pub mod read;
pub mod revert;
pub mod rollback;
pub mod rows;
pub mod slim;
pub mod traffic;
pub mod transport;
pub mod watch;
pub mod workload_pods;

/// `kube::Error` in a line a person can act on (the server's own message for API errors).
pub fn describe(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => {
            format!(
                "{} ({}, HTTP {})",
                status.message, status.reason, status.code
            )
        }
        // With its causes: "client error (Connect)" alone does not say "connection refused".
        other => client::error_chain(other),
    }
}

/// The tokio runtime the kube IO runs on: two workers are plenty for four watchers and the UI.
pub fn tokio_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("kdrift")
        .enable_all()
        .build()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// hyper's error: a short text whose cause says what happened.
    #[derive(Debug)]
    struct Client(std::io::Error);

    impl std::fmt::Display for Client {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("client error (Connect)")
        }
    }

    impl std::error::Error for Client {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_transport_error_says_its_cause() {
        let refused = std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "Connection refused (os error 111)",
        );
        let error = kube::Error::Service(Box::new(Client(refused)));
        assert_eq!(
            describe(&error),
            "ServiceError: client error (Connect): Connection refused (os error 111)"
        );
    }
}
