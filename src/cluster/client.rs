//! `connect`: a kube client configured as kubectl would be, checked for reachability before any UI.
//!
//! Order of sources, as kubectl: `--kubeconfig`, then `$KUBECONFIG` (a list, merged), then
//! `~/.kube/config`, then the in-cluster service account. Context: `--context`, else the
//! kubeconfig's current context. Namespace: `-n`, `-A`, else the context's namespace, else all.
use std::path::PathBuf;
use std::time::Duration;

/// The kube client, named here so that the layers above `cluster/` need no `kube::` of their own
/// (the kube crate is used under `cluster/` only).
pub use kube::Client;
use kube::config::{Config, KubeConfigOptions, Kubeconfig, KubeconfigError};

/// What to connect to, as the user chose it: the kubeconfig, context and namespace flags
/// (the command line fills it; tests and benches build it directly).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionSettings {
    /// `--kubeconfig`; else `$KUBECONFIG`, `~/.kube/config`, in-cluster.
    pub kubeconfig: Option<PathBuf>,
    /// `--context`; else the kubeconfig's current context.
    pub context: Option<String>,
    /// `-n`.
    pub namespace: Option<String>,
    /// `-A`.
    pub all_namespaces: bool,
    /// Offer HTTP/2, where every request shares one connection ([`super::transport`]): for the
    /// commands that read and write, not for the live view, whose watches could fill the 100
    /// streams an API server allows a connection and hold every other request back.
    pub http2: bool,
}

/// How long the reachability check waits before the API is called unreachable.
pub const REACHABILITY_TIMEOUT: Duration = Duration::from_secs(5);

/// Which namespaces the watchers cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamespaceScope {
    All,
    One(String),
}

impl NamespaceScope {
    /// The namespace to pass to `Api::namespaced`, or `None` for `Api::all`.
    pub fn as_namespace(&self) -> Option<&str> {
        match self {
            NamespaceScope::All => None,
            NamespaceScope::One(ns) => Some(ns),
        }
    }

    /// How the status bar names the scope.
    pub fn label(&self) -> &str {
        match self {
            NamespaceScope::All => "all",
            NamespaceScope::One(ns) => ns,
        }
    }
}

/// A reachable API server and what the user chose to look at.
#[derive(Clone)]
pub struct Connection {
    pub client: Client,
    /// The kubeconfig context in use, or `in-cluster`.
    pub context: String,
    /// Every context of the kubeconfig (for `:ctx`); empty in-cluster.
    pub contexts: Vec<String>,
    pub cluster_url: String,
    pub scope: NamespaceScope,
    /// The namespace of the kubeconfig context (in-cluster: the service account's), if it
    /// names one.
    pub context_namespace: Option<String>,
    /// The API server's version (`v1.33.0`), from the reachability check.
    pub server_version: String,
    /// The reachability check's answer came over HTTP/2 (one connection carries every request).
    pub http2: bool,
}

impl Connection {
    /// The namespace of an object whose manifest names none, as kubectl gives it: `-n`
    /// (`flag`), else the context's namespace, else `default`. The namespaces watched (`-A`,
    /// `:ns`) do not change it.
    pub fn default_namespace(&self, flag: Option<&str>) -> String {
        flag.filter(|ns| !ns.is_empty())
            .or(self
                .context_namespace
                .as_deref()
                .filter(|ns| !ns.is_empty()))
            .unwrap_or("default")
            .to_owned()
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("context", &self.context)
            .field("cluster_url", &self.cluster_url)
            .field("scope", &self.scope)
            .field("server_version", &self.server_version)
            .finish_non_exhaustive()
    }
}

/// Why no usable connection could be made; each message fits on one line.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error(
        "no kubeconfig found: pass --kubeconfig FILE, set KUBECONFIG, or create ~/.kube/config (or run `kdrift demo`)"
    )]
    NoKubeconfig,
    #[error("cannot read kubeconfig {source_name}: {}", kubeconfig_reason(source))]
    BadKubeconfig {
        source_name: String,
        #[source]
        source: KubeconfigError,
    },
    #[error(
        "kubeconfig {source_name} has no current-context: pass --context NAME (contexts: {available})"
    )]
    NoCurrentContext {
        source_name: String,
        available: String,
    },
    #[error("kubeconfig {source_name} has no contexts: --all-contexts has nothing to check")]
    NoContexts { source_name: String },
    #[error("context \"{context}\" is not in kubeconfig {source_name} (contexts: {available})")]
    UnknownContext {
        context: String,
        source_name: String,
        available: String,
    },
    #[error("context \"{context}\" in {source_name} is not usable: {source}")]
    BadContext {
        context: String,
        source_name: String,
        #[source]
        source: KubeconfigError,
    },
    #[error("in-cluster configuration failed: {0}")]
    InCluster(#[source] kube::config::InClusterError),
    #[error("cannot build a client for {url}: {source}")]
    Client {
        url: String,
        #[source]
        source: kube::Error,
    },
    #[error("API server {url} (context \"{context}\") did not answer within {}s", timeout.as_secs())]
    Timeout {
        url: String,
        context: String,
        timeout: Duration,
    },
    #[error("API server {url} (context \"{context}\") is unreachable: {reason}")]
    Unreachable {
        url: String,
        context: String,
        reason: String,
    },
}

/// Where the kubeconfig came from, for messages.
enum Source {
    File(Box<Kubeconfig>, String),
    InCluster,
}

/// Connect as kubectl would and check the API server answers within [`REACHABILITY_TIMEOUT`].
pub async fn connect(common: &ConnectionSettings) -> Result<Connection, ConnectError> {
    connect_with_timeout(common, REACHABILITY_TIMEOUT).await
}

/// [`connect`] with a chosen reachability timeout (tests use a short one).
pub async fn connect_with_timeout(
    common: &ConnectionSettings,
    timeout: Duration,
) -> Result<Connection, ConnectError> {
    let (config, context, contexts, context_namespace) = match load_source(common)? {
        Source::File(kubeconfig, source_name) => {
            let contexts: Vec<String> =
                kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
            let available = if contexts.is_empty() {
                "none".to_string()
            } else {
                contexts.join(", ")
            };
            let context = match common
                .context
                .clone()
                .or_else(|| kubeconfig.current_context.clone())
            {
                Some(c) if !c.is_empty() => c,
                _ => {
                    return Err(ConnectError::NoCurrentContext {
                        source_name,
                        available,
                    });
                }
            };
            let Some(named) = kubeconfig.contexts.iter().find(|c| c.name == context) else {
                return Err(ConnectError::UnknownContext {
                    context,
                    source_name,
                    available,
                });
            };
            let context_namespace = named.context.as_ref().and_then(|c| c.namespace.clone());
            let options = KubeConfigOptions {
                context: Some(context.clone()),
                ..KubeConfigOptions::default()
            };
            let config = Config::from_custom_kubeconfig(*kubeconfig, &options)
                .await
                .map_err(|source| ConnectError::BadContext {
                    context: context.clone(),
                    source_name,
                    source,
                })?;
            (config, context, contexts, context_namespace)
        }
        Source::InCluster => {
            let config = Config::incluster().map_err(ConnectError::InCluster)?;
            let ns = Some(config.default_namespace.clone());
            (config, "in-cluster".to_string(), Vec::new(), ns)
        }
    };
    let scope = choose_scope(common, context_namespace.clone());
    let cluster_url = config.cluster_url.to_string();
    let (client, protocol) =
        super::transport::client(config, common.http2).map_err(|source| ConnectError::Client {
            url: cluster_url.clone(),
            source,
        })?;
    let server_version = match tokio::time::timeout(timeout, client.apiserver_version()).await {
        Err(_) => {
            return Err(ConnectError::Timeout {
                url: cluster_url,
                context,
                timeout,
            });
        }
        Ok(Err(err)) => {
            return Err(ConnectError::Unreachable {
                url: cluster_url,
                context,
                reason: one_line(&err),
            });
        }
        Ok(Ok(info)) => info.git_version,
    };
    Ok(Connection {
        client,
        context,
        contexts,
        cluster_url,
        scope,
        context_namespace,
        server_version,
        http2: protocol.http2(),
    })
}

/// Every context of the kubeconfig found as [`connect`] finds it (`--all-contexts`), in its
/// order; in-cluster there is none, which is an error.
pub fn kubeconfig_contexts(common: &ConnectionSettings) -> Result<Vec<String>, ConnectError> {
    match load_source(common)? {
        Source::File(kubeconfig, source_name) => {
            let names: Vec<String> = kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
            if names.is_empty() {
                return Err(ConnectError::NoContexts { source_name });
            }
            Ok(names)
        }
        Source::InCluster => Err(ConnectError::NoKubeconfig),
    }
}

/// The kubeconfig's current context, the file found as [`connect`] finds it (no request is made):
/// `None` in-cluster, when no kubeconfig is readable, or when it names none.
pub fn current_context(common: &ConnectionSettings) -> Option<String> {
    match load_source(common).ok()? {
        Source::File(kubeconfig, _) => kubeconfig.current_context,
        Source::InCluster => None,
    }
}

/// `-n` wins, then `-A`, then the context's namespace; with none of them, every namespace.
pub fn choose_scope(
    common: &ConnectionSettings,
    context_namespace: Option<String>,
) -> NamespaceScope {
    if let Some(ns) = &common.namespace {
        return NamespaceScope::One(ns.clone());
    }
    if common.all_namespaces {
        return NamespaceScope::All;
    }
    match context_namespace {
        Some(ns) if !ns.is_empty() => NamespaceScope::One(ns),
        _ => NamespaceScope::All,
    }
}

fn load_source(common: &ConnectionSettings) -> Result<Source, ConnectError> {
    if let Some(path) = &common.kubeconfig {
        let source_name = format!("\"{}\"", path.display());
        return Kubeconfig::read_from(path)
            .map(|k| Source::File(Box::new(k), source_name.clone()))
            .map_err(|source| ConnectError::BadKubeconfig {
                source_name,
                source,
            });
    }
    if let Some(value) = std::env::var_os("KUBECONFIG")
        && std::env::split_paths(&value).any(|p| !p.as_os_str().is_empty())
    {
        let source_name = format!("from KUBECONFIG=\"{}\"", value.to_string_lossy());
        return match Kubeconfig::from_env() {
            Ok(Some(k)) => Ok(Source::File(Box::new(k), source_name)),
            Ok(None) => Err(ConnectError::NoKubeconfig),
            Err(source) => Err(ConnectError::BadKubeconfig {
                source_name,
                source,
            }),
        };
    }
    if let Some(path) = default_kubeconfig_path().filter(|p| p.exists()) {
        let source_name = format!("\"{}\"", path.display());
        return Kubeconfig::read_from(&path)
            .map(|k| Source::File(Box::new(k), source_name.clone()))
            .map_err(|source| ConnectError::BadKubeconfig {
                source_name,
                source,
            });
    }
    if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() {
        return Ok(Source::InCluster);
    }
    Err(ConnectError::NoKubeconfig)
}

fn default_kubeconfig_path() -> Option<PathBuf> {
    dirs::home_dir().map(|h| h.join(".kube").join("config"))
}

/// The cause of a kubeconfig error without repeating the path the message already names.
fn kubeconfig_reason(err: &KubeconfigError) -> String {
    let text = match err {
        KubeconfigError::ReadConfig(io, _) => io.to_string(),
        other => other.to_string(),
    };
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An error and its causes on one line, without kube's debug dumps.
fn one_line(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) => {
            format!("HTTP {} {}: {}", status.code, status.reason, status.message)
        }
        other => error_chain(other),
    }
}

/// An error followed by each of its sources not already in its text, on one line.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text.replace('\n', " ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn args(kubeconfig: Option<PathBuf>, context: Option<&str>) -> ConnectionSettings {
        ConnectionSettings {
            kubeconfig,
            context: context.map(str::to_string),
            ..ConnectionSettings::default()
        }
    }

    fn write_kubeconfig(dir: &std::path::Path, server: &str) -> PathBuf {
        let path = dir.join("config");
        let text = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: a\nclusters:\n- name: c\n  cluster:\n    server: {server}\ncontexts:\n- name: a\n  context:\n    cluster: c\n    user: u\n    namespace: shop\n- name: b\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user:\n    token: t\n"
        );
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn scope_follows_kubectl_precedence() {
        let mut common = ConnectionSettings::default();
        assert_eq!(
            choose_scope(&common, Some("shop".into())),
            NamespaceScope::One("shop".into())
        );
        assert_eq!(choose_scope(&common, None), NamespaceScope::All);
        common.all_namespaces = true;
        assert_eq!(
            choose_scope(&common, Some("shop".into())),
            NamespaceScope::All
        );
        common.all_namespaces = false;
        common.namespace = Some("web".into());
        assert_eq!(
            choose_scope(&common, Some("shop".into())),
            NamespaceScope::One("web".into())
        );
    }

    #[tokio::test]
    async fn missing_kubeconfig_file_names_the_file() {
        let err = connect(&args(Some("/nonexistent/kubeconfig".into()), None))
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("/nonexistent/kubeconfig"), "{text}");
        assert!(!text.contains('\n'));
    }

    #[tokio::test]
    async fn unknown_context_lists_the_known_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_kubeconfig(dir.path(), "https://127.0.0.1:1");
        let err = connect(&args(Some(path), Some("prod"))).await.unwrap_err();
        let text = err.to_string();
        assert!(text.contains("\"prod\"") && text.contains("a, b"), "{text}");
    }

    #[tokio::test]
    async fn unreachable_server_is_reported_in_one_line() {
        // A port nothing listens on: bind one, note it, close it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tempfile::tempdir().unwrap();
        let path = write_kubeconfig(dir.path(), &format!("http://127.0.0.1:{port}"));
        let err = connect_with_timeout(&args(Some(path), None), Duration::from_secs(20))
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ConnectError::Unreachable { .. }), "{text}");
        assert!(
            text.contains(&format!("127.0.0.1:{port}")) && text.contains("\"a\""),
            "{text}"
        );
        assert!(!text.contains('\n'), "{text}");
    }
}
