//! The plumbing the headless commands share: connect as kubectl would, load the manifests, map
//! their kinds through discovery (scope, or why the cluster does not serve one), read the schemas
//! of those kinds from the cluster's OpenAPI. Live objects are read through
//! [`crate::cluster::read`] ([`Context::reads`]).
use std::path::PathBuf;

use crate::cli::CommonArgs;
use crate::cluster::client::{Client, ConnectError, Connection, connect};
use crate::cluster::kinds::{DiscoveryError, ServedKind, ServedKinds, map_kinds};
use crate::manifest::{ManifestIndex, ObjectKey};
use crate::schema::Schemas;

use super::target::{Target, TargetError};

/// Why a headless command could not start or read the cluster.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error("manifests folder \"{}\" is not a readable folder: {reason}", path.display())]
    Manifests { path: PathBuf, reason: String },
    #[error(transparent)]
    Read(#[from] crate::cluster::read::ReadError),
    #[error("live object {what} has no apiVersion, kind or metadata.name")]
    NotAnObject { what: String },
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("loading the manifests failed: {0}")]
    Load(String),
}

/// A connection and the manifests, ready for a command.
pub struct Context {
    pub conn: Connection,
    pub index: ManifestIndex,
    /// The namespace of a manifest or `TYPE/NAME` without one: `-n`, else the context's, else
    /// `default` (as kubectl).
    pub default_namespace: String,
    /// The kinds of the groups the manifests use (and the core and apps groups).
    pub kinds: ServedKinds,
    /// The schemas of the kinds the manifests use, from the cluster's OpenAPI.
    pub schemas: Schemas,
    /// Where the schemas did not come from the cluster, one line each (said once on stderr).
    pub schema_notices: Vec<String>,
    /// The contexts checked with this one (their Argo CD may deploy here).
    pub peers: Option<crate::cluster::hub::Peers>,
}

impl Context {
    /// The kind and key `target` names; discovery is read again for a group it names that was
    /// not read (a definition installed since, a group no manifest uses).
    pub async fn resolve(
        &mut self,
        target: &Target,
    ) -> Result<(ServedKind, ObjectKey), ContextError> {
        if let Ok((kind, key)) = target.resolve(&self.kinds, &self.default_namespace) {
            return Ok((kind.clone(), key));
        }
        let (kinds, loaded) = crate::cluster::openapi::discover_with_schemas(
            &self.conn.client,
            &self.conn.server_version,
            &self.index.kinds(),
            target.group_hint(),
            None,
        )
        .await?;
        self.kinds = kinds;
        self.schemas = loaded.schemas;
        self.schema_notices = loaded.notices;
        map_kinds(&mut self.index, &self.kinds);
        let (kind, key) = target.resolve(&self.kinds, &self.default_namespace)?;
        Ok((kind.clone(), key))
    }

    /// The served kind of a manifest's `apiVersion` and `kind`.
    pub fn kind_of(&self, api_version: &str, kind: &str) -> Option<&ServedKind> {
        self.kinds.get(api_version, kind)
    }

    /// Why `key` has no manifest: the file a sparse checkout leaves out that defines it, if
    /// one does, else where kdrift looked and what to pass.
    pub fn no_manifest(&self, key: &ObjectKey) -> String {
        crate::manifest::sparse::defined_out_of_checkout(
            &self.index.root,
            key,
            &self.default_namespace,
        )
        .unwrap_or_else(|| crate::app::revert::no_manifest(&key.to_string(), &self.index.root))
    }

    /// What the reads of [`crate::cluster::read`] need of this context.
    pub fn reads(&self) -> crate::cluster::read::Reads<'_> {
        crate::cluster::read::Reads {
            conn: &self.conn,
            index: &self.index,
            schemas: &self.schemas,
        }
    }

    /// Says the schema notices once on stderr.
    pub fn tell_schema_notices(&self) {
        for notice in &self.schema_notices {
            tell!("note: {notice}");
        }
    }
}

/// The manifests folder as an absolute path: `--manifests` (relative to the current directory,
/// as a shell user means it), else the current directory. Every file path of the index starts
/// with it, so a relative `--manifests k8s` never gets joined to itself (`k8s/k8s/…`).
pub fn manifests_dir(common: &CommonArgs) -> std::io::Result<PathBuf> {
    match &common.manifests {
        Some(p) => std::path::absolute(p),
        None => std::env::current_dir(),
    }
}

/// The manifests root ([`manifests_dir`]), which must be a folder.
pub fn manifests_root(common: &CommonArgs) -> Result<PathBuf, ContextError> {
    let path = manifests_dir(common).map_err(|e| ContextError::Manifests {
        path: common
            .manifests
            .clone()
            .unwrap_or_else(|| PathBuf::from(".")),
        reason: e.to_string(),
    })?;
    match std::fs::metadata(&path) {
        Ok(m) if m.is_dir() => Ok(path),
        Ok(_) => Err(ContextError::Manifests {
            path,
            reason: "not a folder".into(),
        }),
        Err(e) => Err(ContextError::Manifests {
            path,
            reason: e.to_string(),
        }),
    }
}

/// The manifests of a run on `client`'s cluster (at `cluster_url`): the root and kustomize
/// selection of `--manifests`/`--overlay` as given; without either, the folders the Argo CD
/// Applications deploy here from the git checkout holding `root`, when any do
/// ([`crate::cluster::gitops::manifests_from_apps`]), with notes saying which.
pub async fn choose_manifests(
    common: &CommonArgs,
    client: &Client,
    cluster_url: &str,
    context: &str,
    root: PathBuf,
) -> (PathBuf, crate::manifest::kustomize::Selection) {
    let mut selection = common.kustomize_selection(context);
    if common.overlay.is_some() || (common.manifests.is_some() && !common.manifests_is_checkout) {
        return (root, selection);
    }
    let here = crate::gitops::source::Here {
        cluster_url,
        context,
    };
    let from =
        crate::cluster::gitops::manifests_from_apps(client, &here, common.peers.as_ref(), &root)
            .await;
    selection.notes = from.notes;
    selection.charts = from.charts;
    match from.mapped {
        Some((top, apps)) => {
            selection.apps = apps;
            (top, selection)
        }
        None => (root, selection),
    }
}

/// Connects (one-line error when there is no kubeconfig or the API is unreachable) and loads
/// the manifests (bad files become problems in the index, never an error here).
pub async fn open(common: &CommonArgs) -> Result<Context, ContextError> {
    open_for(common, None).await
}

/// [`open`], reading discovery also for the group a `TYPE/NAME` names.
pub async fn open_for(
    common: &CommonArgs,
    target: Option<&Target>,
) -> Result<Context, ContextError> {
    let root = manifests_root(common)?;
    // One connection for all the reads (HTTP/2 where the server offers it).
    let settings = crate::cluster::client::ConnectionSettings {
        http2: true,
        ..common.connection()
    };
    let conn = connect(&settings).await?;
    let default_namespace = conn.default_namespace(common.namespace.as_deref());
    let (root, selection) =
        choose_manifests(common, &conn.client, &conn.cluster_url, &conn.context, root).await;
    // Off the async workers: kustomize renders run here, and a check over several contexts
    // loads while the other contexts' requests are in flight.
    let namespace = default_namespace.clone();
    let load =
        tokio::task::spawn_blocking(move || ManifestIndex::load_with(&root, &namespace, selection));
    // Helm's releases are desired state too, for the objects their manifests name: read while
    // the manifests load, as is the discovery every repository needs. The charts of the checkout
    // are rendered as their source says (a release's values among them).
    let (index, releases, prefetched) = tokio::join!(
        load,
        crate::cluster::helm::read_releases(&conn.client, &conn.scope),
        crate::cluster::openapi::prefetch(&conn.client, &conn.server_version)
    );
    let mut index = index.map_err(|e| ContextError::Load(e.to_string()))?;
    index.set_releases(&releases);
    render_charts(&mut index, &conn.server_version).await;
    let (kinds, loaded) = crate::cluster::openapi::discover_with_schemas(
        &conn.client,
        &conn.server_version,
        &index.kinds(),
        target.and_then(Target::group_hint),
        Some(prefetched),
    )
    .await?;
    map_kinds(&mut index, &kinds);
    Ok(Context {
        conn,
        index,
        default_namespace,
        kinds,
        schemas: loaded.schemas,
        schema_notices: loaded.notices,
        peers: common.peers.clone(),
    })
}

/// Renders the charts of the checkout with the user's helm (off the async workers: one process
/// per chart) and sets them into `index`.
pub async fn render_charts(index: &mut ManifestIndex, server_version: &str) {
    if !index.has_charts() {
        return;
    }
    let kube_version = (!server_version.is_empty()).then_some(server_version);
    let (specs, problems) = crate::manifest::charts::specs(index, kube_version);
    let renders = tokio::task::spawn_blocking(move || crate::manifest::charts::render_all(specs))
        .await
        .unwrap_or_default();
    index.set_charts(renders, problems);
}
