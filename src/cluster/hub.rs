//! The Argo CD Applications of the contexts checked or watched together. Argo CD often runs on
//! one cluster (a hub) and deploys to the others: their Applications live on the hub, with the
//! other cluster's address as `destination.server`. Each context's Applications are listed once
//! — by that context when it connects, or by the first other context that asks, on a connection
//! of its own — so every context can ask which of them deploy to its cluster.
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, ListParams};
use serde_json::Value;
use tokio::sync::OnceCell;

use super::client::ConnectionSettings;

/// How long a context waits for another context's Applications (it connects and lists them
/// when that context has not yet): a cluster that does not answer holds up the others'
/// manifests this long at most, and is said.
pub const HUB_WAIT: Duration = Duration::from_secs(5);

/// The label of Argo CD's cluster secrets, and their namespace unless told otherwise.
const CLUSTER_SECRET_LABEL: &str = "argocd.argoproj.io/secret-type=cluster";
const ARGO_NAMESPACE: &str = "argocd";

/// One context's Argo CD: its Applications and the clusters it knows.
#[derive(Debug, Clone)]
pub struct Listing {
    /// Every Application the user may list there; `Err`: why they could not be.
    pub apps: Result<Vec<Value>, String>,
    /// Argo CD's clusters, name → server URL (read only when an Application names its
    /// destination by name).
    pub clusters: BTreeMap<String, String>,
    /// Why the clusters could not be read, when they were needed.
    pub clusters_unread: Option<String>,
}

impl Default for Listing {
    fn default() -> Self {
        Listing {
            apps: Ok(Vec::new()),
            clusters: BTreeMap::new(),
            clusters_unread: None,
        }
    }
}

type Cell = Arc<OnceCell<Listing>>;

/// The contexts watched together and each one's Applications, once listed. Cheap to clone: the
/// clones share the listings.
#[derive(Clone, Default)]
pub struct Peers {
    /// How to connect (the kubeconfig; the context is each peer's).
    settings: ConnectionSettings,
    cells: Arc<Mutex<BTreeMap<String, Cell>>>,
}

impl std::fmt::Debug for Peers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.contexts()).finish()
    }
}

impl Peers {
    /// `contexts` of the kubeconfig `settings` names, watched together.
    pub fn new(settings: ConnectionSettings, contexts: &[String]) -> Peers {
        let peers = Peers {
            settings: ConnectionSettings {
                context: None,
                ..settings
            },
            cells: Arc::default(),
        };
        for context in contexts {
            peers.add(context);
        }
        peers
    }

    /// A context joins (`:ctx +NAME`).
    pub fn add(&self, context: &str) {
        if let Ok(mut cells) = self.cells.lock() {
            cells.entry(context.to_owned()).or_default();
        }
    }

    /// The contexts, in order.
    pub fn contexts(&self) -> Vec<String> {
        self.cells
            .lock()
            .map(|cells| cells.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn cell(&self, context: &str) -> Cell {
        match self.cells.lock() {
            Ok(mut cells) => cells.entry(context.to_owned()).or_default().clone(),
            Err(_) => Cell::default(),
        }
    }

    /// `context`'s own Applications, listed with its `client` unless another context listed
    /// them already.
    pub async fn own(&self, context: &str, client: &Client) -> Listing {
        self.cell(context)
            .get_or_init(|| listing(client.clone()))
            .await
            .clone()
    }

    /// The Applications of every other context: listed on a connection of this one's when their
    /// own context has not yet; `Err` for a context whose answer did not come within
    /// [`HUB_WAIT`] or that could not be reached.
    pub async fn others(&self, context: &str) -> Vec<(String, Listing)> {
        let asks = self
            .contexts()
            .into_iter()
            .filter(|c| c != context)
            .map(|other| {
                let cell = self.cell(&other);
                let settings = ConnectionSettings {
                    context: Some(other.clone()),
                    ..self.settings.clone()
                };
                async move {
                    let listed = cell.get_or_init(|| async move {
                        match super::client::connect(&settings).await {
                            Ok(conn) => listing(conn.client).await,
                            Err(e) => Listing {
                                apps: Err(e.to_string()),
                                ..Listing::default()
                            },
                        }
                    });
                    let listing = match tokio::time::timeout(HUB_WAIT, listed).await {
                        Ok(listing) => listing.clone(),
                        Err(_) => Listing {
                            apps: Err(format!("no answer within {} s", HUB_WAIT.as_secs())),
                            ..Listing::default()
                        },
                    };
                    (other, listing)
                }
            });
        futures::future::join_all(asks).await
    }
}

/// The Applications `client`'s user may list, and Argo CD's clusters when one of them names its
/// destination by name.
pub async fn listing(client: Client) -> Listing {
    let apps = super::gitops::list_applications(&client).await;
    let mut listing = Listing {
        apps,
        ..Listing::default()
    };
    let named = listing
        .apps
        .as_ref()
        .is_ok_and(|apps| crate::gitops::source::names_clusters(apps));
    if named {
        match clusters(&client).await {
            Ok(clusters) => listing.clusters = clusters,
            Err(why) => listing.clusters_unread = Some(why),
        }
    }
    listing
}

/// Argo CD's clusters (its cluster secrets in `argocd`), name → server URL.
async fn clusters(client: &Client) -> Result<BTreeMap<String, String>, String> {
    let api: Api<Secret> = Api::namespaced(client.clone(), ARGO_NAMESPACE);
    let list = api
        .list(&ListParams::default().labels(CLUSTER_SECRET_LABEL))
        .await
        .map_err(|e| match e {
            kube::Error::Api(s) if s.code == 403 => format!("forbidden: {}", s.message),
            other => super::describe(&other),
        })?;
    let text = |secret: &Secret, key: &str| {
        let bytes = secret.data.as_ref()?.get(key)?;
        String::from_utf8(bytes.0.clone()).ok()
    };
    Ok(list
        .items
        .iter()
        .filter_map(|secret| Some((text(secret, "name")?, text(secret, "server")?)))
        .collect())
}

/// The Argo CD owners of `read` that could not be read on the watched cluster (`here`), found
/// among the Applications of the other contexts that deploy to it: Argo CD on a hub is what
/// syncs (and self-heals) this cluster's objects, so its Application's policy is theirs.
pub async fn find_missing_apps(
    peers: &Peers,
    here: &crate::gitops::source::Here<'_>,
    read: &mut BTreeMap<crate::gitops::Owner, crate::gitops::Reconciler>,
) {
    use crate::gitops::{Owner, Policy};
    let missing =
        |r: &crate::gitops::Reconciler| matches!(r.owner, Owner::Argo { .. }) && r.policy.is_err();
    if !read.values().any(missing) {
        return;
    }
    let others = peers.others(here.context).await;
    for reconciler in read.values_mut().filter(|r| missing(r)) {
        let Owner::Argo { app, namespace, .. } = &reconciler.owner else {
            continue;
        };
        let found = others.iter().find_map(|(hub, listing)| {
            let apps = listing.apps.as_ref().ok()?;
            let listed = crate::gitops::source::Listed {
                hub: Some(hub),
                apps,
                clusters: &listing.clusters,
            };
            apps.iter()
                .filter(|a| a.pointer("/metadata/name").and_then(Value::as_str) == Some(app))
                .filter(|a| {
                    namespace.is_none()
                        || a.pointer("/metadata/namespace").and_then(Value::as_str)
                            == namespace.as_deref()
                })
                .find(|a| crate::gitops::source::deploys_to(a, here, &listed))
        });
        if let Some(found) = found {
            reconciler.policy = Ok(Policy::of_application(found));
            reconciler.found_in = found
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
    }
}
