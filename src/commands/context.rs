//! The plumbing the headless commands share: connect as kubectl would, load the manifests, map
//! their kinds through discovery (scope, or why the cluster does not serve one), read the schemas
//! of those kinds from the cluster's OpenAPI, and read live objects — one list call per kind and
//! namespace scope, or one get for one object — as `serde_json::Value`s for the drift engine.
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use kube::Client;
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::Value;
use tokio::sync::Semaphore;

use crate::cli::CommonArgs;
use crate::cluster::client::{ConnectError, Connection, NamespaceScope, connect};
use crate::cluster::describe;
use crate::cluster::kinds::{DiscoveryError, ServedKind, ServedKinds, map_kinds};
use crate::drift::LiveObject;
use crate::manifest::{ManifestIndex, ManifestObject, ObjectKey};
use crate::schema::Schemas;

use super::selector;
use super::target::{Target, TargetError};

/// Page size of list calls: big lists come in pages, as kubectl does.
const PAGE: u32 = 500;

/// Why a headless command could not start or read the cluster.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error("manifests folder \"{}\" is not a readable folder: {reason}", path.display())]
    Manifests { path: PathBuf, reason: String },
    #[error("cannot read {what}: {reason}")]
    Api { what: String, reason: String },
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
    if index.charts_found.is_empty() && index.config.helm_charts.is_empty() {
        return;
    }
    let kube_version = (!server_version.is_empty()).then_some(server_version);
    let (specs, problems) = crate::manifest::charts::specs(index, kube_version);
    let renders = tokio::task::spawn_blocking(move || crate::manifest::charts::render_all(specs))
        .await
        .unwrap_or_default();
    index.set_charts(renders, problems);
}

fn api(client: &Client, kind: &ServedKind, namespace: Option<&str>) -> Api<DynamicObject> {
    let resource = kind.api_resource();
    match namespace.filter(|_| kind.namespaced) {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    }
}

fn is_forbidden(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.is_forbidden())
}

/// Reads of one kind's objects in one namespace (or all, or a cluster-scoped kind) that give
/// the server's JSON as a `Value`, the form the drift engine reads, with no typed object in
/// between (a `DynamicObject` costs a buffered copy to read and another to turn into a `Value`).
/// Owned, so that reads can run on spawned tasks.
struct Raw {
    client: Client,
    request: kube::core::Request,
    api_version: String,
    kind: String,
}

impl Raw {
    fn new(client: &Client, kind: &ServedKind, namespace: Option<&str>) -> Raw {
        let resource = kind.api_resource();
        let namespace = namespace.filter(|_| kind.namespaced);
        Raw {
            client: client.clone(),
            request: kube::core::Request::new(<DynamicObject as kube::Resource>::url_path(
                &resource, namespace,
            )),
            api_version: kind.api_version(),
            kind: kind.kind.clone(),
        }
    }

    /// List items carry no apiVersion and kind: they are filled in from the kind read.
    fn typed(&self, mut value: Value) -> Value {
        if let Some(map) = value.as_object_mut() {
            map.entry("apiVersion")
                .or_insert_with(|| Value::String(self.api_version.clone()));
            map.entry("kind")
                .or_insert_with(|| Value::String(self.kind.clone()));
        }
        value
    }

    /// `name` as of `version` or later, or now (`None` when it does not exist). A GET with a
    /// resourceVersion is answered from the API server's watch cache once the cache has caught
    /// up to that version, where one without it reads etcd: at 30,000 objects on a 2-core
    /// machine, 1,000 such reads took 0.32–0.51 s against 0.61–1.20 s. `version` comes from a
    /// list made when the check began, so every write that ended before it is seen, as with a
    /// plain GET. A server that cannot answer from its cache (behind by more than its wait, or
    /// without one) is asked again without the version.
    async fn get(&self, name: &str, version: Option<&str>) -> Result<Option<Value>, kube::Error> {
        if let Some(version) = version {
            // (Not found is an answer: `get_with` gives it as `None`.)
            match self
                .get_with(name, &kube::api::GetParams::at(version))
                .await
            {
                Err(e) => {
                    tracing::debug!(%name, error = %e, "read from the watch cache failed; reading etcd");
                }
                answer => return answer,
            }
        }
        self.get_with(name, &kube::api::GetParams::default()).await
    }

    async fn get_with(
        &self,
        name: &str,
        params: &kube::api::GetParams,
    ) -> Result<Option<Value>, kube::Error> {
        let request = self
            .request
            .get(name, params)
            .map_err(kube::Error::BuildRequest)?;
        match self.client.request::<Value>(request).await {
            Ok(value) => Ok(Some(self.typed(value))),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every object, page by page.
    async fn list_all(&self) -> Result<Vec<Value>, kube::Error> {
        let mut out = Vec::new();
        let mut params = ListParams::default().limit(PAGE);
        loop {
            let (items, _, next) = self.page(&params).await?;
            out.extend(items);
            match next {
                Some(token) => params = params.continue_token(&token),
                None => return Ok(out),
            }
        }
    }

    /// One page of a list: its objects, its resourceVersion, and the token of the next page.
    async fn page(&self, params: &ListParams) -> Result<Page, kube::Error> {
        let request = self
            .request
            .list(params)
            .map_err(kube::Error::BuildRequest)?;
        let mut page = self.client.request::<Value>(request).await?;
        let text = |field: &str| {
            page.pointer(field)
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
        };
        let (version, next) = (
            text("/metadata/resourceVersion"),
            text("/metadata/continue"),
        );
        let items = match page.get_mut("items").map(Value::take) {
            Some(Value::Array(items)) => items.into_iter().map(|item| self.typed(item)).collect(),
            _ => Vec::new(),
        };
        Ok((items, version, next))
    }
}

/// A list page: its objects, its resourceVersion, and the token of the next page.
type Page = (Vec<Value>, Option<String>, Option<String>);

/// Every object of `kind` in `namespace` (all when `None`), page by page.
async fn list_scope(
    client: &Client,
    kind: &ServedKind,
    namespace: Option<&str>,
) -> Result<Vec<Value>, kube::Error> {
    Raw::new(client, kind, namespace).list_all().await
}

/// What a listing read: the live objects, the failures (one line each), and the scopes it
/// covered, so that manifests outside them are not called missing.
#[derive(Debug, Default)]
pub struct Listing {
    pub objects: Vec<LiveObject>,
    pub errors: Vec<String>,
    /// (group, kind, namespace) listed; namespace `None` means every namespace.
    pub covered: BTreeSet<(String, String, Option<String>)>,
    /// Objects read by name (found or not): covered one by one.
    pub named: BTreeSet<ObjectKey>,
}

impl Listing {
    /// `other`'s reads added to these (after them).
    pub fn extend(&mut self, other: Listing) {
        self.objects.extend(other.objects);
        self.errors.extend(other.errors);
        self.covered.extend(other.covered);
        self.named.extend(other.named);
    }

    /// Was `key`'s kind listed in its namespace?
    pub fn covers(&self, key: &ObjectKey) -> bool {
        let all = (key.group.to_string(), key.kind.to_string(), None);
        let one = (
            key.group.to_string(),
            key.kind.to_string(),
            Some(key.namespace.to_string()),
        );
        self.covered.contains(&all) || self.covered.contains(&one) || self.named.contains(key)
    }

    fn add(
        &mut self,
        kind: &ServedKind,
        namespace: Option<&str>,
        items: Vec<Value>,
        schemas: &Schemas,
    ) {
        // A cluster-scoped kind is listed whole, whatever the namespace scope.
        let namespace = namespace.filter(|_| kind.namespaced);
        self.covered.insert((
            kind.group.clone(),
            kind.kind.clone(),
            namespace.map(str::to_owned),
        ));
        for value in items {
            self.read(kind, value, schemas);
        }
    }

    fn read(&mut self, kind: &ServedKind, value: Value, schemas: &Schemas) {
        match LiveObject::from_value(value, schemas) {
            Ok(object) => self.objects.push(object),
            Err(e) => self
                .errors
                .push(format!("a live {} was not readable: {e}", kind.kind)),
        }
    }
}

/// A kind with more manifests than this is listed: past it, one list is fewer requests.
const BY_NAME_MAX: usize = 2_000;
/// Manifests are read by name when the scope holds more than this many objects of their kind
/// per manifest.
const BY_NAME_RATIO: usize = 4;
/// Reads by name in flight at once over HTTP/1.1, over every kind read together. Each is a
/// connection, a TLS handshake on both sides: against the 30,000-object realk8s on 2 cores, 8
/// read 1,002 objects in a median 260 ms against 274 ms with 16 (21 runs each).
pub const GETS_IN_FLIGHT_HTTP1: usize = 8;

/// Reads by name in flight at once over HTTP/2, where they share one connection. Against the
/// 30,000-object realk8s with 5 ms added each way (a proxy), 1,002 objects took a median 441 ms
/// with 32 against 907 ms with 8 and 831 ms with 8 over HTTP/1.1; on loopback 262 ms against 285.
pub const GETS_IN_FLIGHT_HTTP2: usize = 32;

/// How many reads by name `conn` keeps in flight at once.
pub fn gets_in_flight(conn: &Connection) -> usize {
    if conn.http2 {
        GETS_IN_FLIGHT_HTTP2
    } else {
        GETS_IN_FLIGHT_HTTP1
    }
}

/// How many objects of `kind` the scope holds, from a one-item list's `remainingItemCount`
/// (`None` when the server does not say), and the list's resourceVersion: the cluster's state as
/// of this moment.
async fn count_in_scope(
    client: &Client,
    kind: &ServedKind,
    namespace: Option<&str>,
) -> Option<(usize, Option<String>)> {
    let page = api(client, kind, namespace)
        .list_metadata(&ListParams::default().limit(1))
        .await
        .ok()?;
    let more = page
        .metadata
        .continue_
        .as_deref()
        .is_some_and(|c| !c.is_empty());
    let count = match page.metadata.remaining_item_count {
        Some(rest) => page.items.len() + usize::try_from(rest).ok()?,
        None if more => return None,
        None => page.items.len(),
    };
    Some((
        count,
        page.metadata.resource_version.filter(|v| !v.is_empty()),
    ))
}

/// When the manifests name few of the objects of `kind` the scope holds (a repository of 1,000
/// objects against a cluster of 30,000), only theirs are read, so the cost follows the manifests
/// rather than the cluster: first with a list or two by a label most of them carry
/// ([`selector::plan`]), then each of the others by name, as `kubectl diff` reads. Returns false,
/// having added nothing, when one list of the kind is as cheap, the server does not say how many
/// there are, or a read by name failed otherwise than "not found" (the list then says what went
/// wrong, as it always has).
async fn read_by_name(
    ctx: &Context,
    kind: &ServedKind,
    reads: &Arc<Semaphore>,
    listing: &mut Listing,
) -> bool {
    use futures::StreamExt;
    let client = &ctx.conn.client;
    let scope = ctx.conn.scope.as_namespace().filter(|_| kind.namespaced);
    let manifests: BTreeMap<&ObjectKey, &ManifestObject> = ctx
        .index
        .objects()
        .filter(|m| m.key.group == kind.group && m.key.kind == kind.kind)
        .filter(|m| ctx.index.is_served(m))
        .filter(|m| scope.is_none_or(|ns| *m.key.namespace == *ns))
        .map(|m| (&m.key, m))
        .collect();
    if manifests.is_empty() || manifests.len() > BY_NAME_MAX {
        return false;
    }
    // A label most of the manifests carry finds their objects with a list or two, whatever the
    // scope holds; its resourceVersion is the cluster's state as of then.
    let mut found = BTreeMap::new();
    let mut version = None;
    if let Some(plan) = selector::plan(manifests.values().copied()) {
        // One namespace's list when every object is in it, else the scope's.
        let mut namespaces = plan.keys.iter().map(|k| &*k.namespace);
        let first = namespaces.next();
        let namespace = scope.or(first.filter(|ns| namespaces.all(|n| n == *ns)));
        let raw = Raw::new(client, kind, namespace);
        (found, version) = list_selected(&raw, &plan).await;
    }
    // The others are read by name when they are few, or when the scope holds many more objects
    // than them; else the kind is listed whole.
    let unread = manifests.len() - found.len();
    if version.is_none() || unread > selector::LIST_MIN {
        match count_in_scope(client, kind, scope).await {
            Some((total, counted)) if total > unread * BY_NAME_RATIO => {
                version = version.or(counted);
            }
            _ => return false,
        }
    }
    // Owned futures (a reader and a key each): the check of several contexts runs this on
    // spawned tasks.
    let reads: Vec<_> = manifests
        .into_keys()
        .filter(|key| !found.contains_key(*key))
        .map(|key| {
            let namespace = Some(&*key.namespace).filter(|_| kind.namespaced);
            let raw = Raw::new(client, kind, namespace);
            let key = key.clone();
            let version = version.clone();
            let reads = Arc::clone(reads);
            async move {
                // (Closed never: the semaphore lives as long as the check.)
                let _turn = reads.acquire_owned().await.ok();
                let result = raw.get(&key.name, version.as_deref()).await;
                (key, result)
            }
        })
        .collect();
    let read: Vec<(ObjectKey, Result<Option<Value>, kube::Error>)> = futures::stream::iter(reads)
        .buffer_unordered(gets_in_flight(&ctx.conn))
        .collect()
        .await;
    if read.iter().any(|(_, result)| result.is_err()) {
        return false;
    }
    let found = found.into_iter().map(|(key, value)| (key, Some(value)));
    let read = read
        .into_iter()
        .filter_map(|(key, result)| Some((key, result.ok()?)));
    for (key, value) in found.chain(read) {
        listing.named.insert(key);
        if let Some(value) = value {
            listing.read(kind, value, &ctx.schemas);
        }
    }
    true
}

/// The objects of `plan.keys` that its selectors find, and the resourceVersion of the first
/// list (`None` when none answered). A list that fails, or that brings back more objects the
/// manifests do not describe than ones they do (a label many other objects carry), ends the
/// listing: what was not found is read by name.
async fn list_selected(
    raw: &Raw,
    plan: &selector::LabelPlan,
) -> (BTreeMap<ObjectKey, Value>, Option<String>) {
    let wanted: HashMap<(&str, &str), &ObjectKey> = plan
        .keys
        .iter()
        .map(|k| ((&*k.namespace, &*k.name), k))
        .collect();
    let mut found = BTreeMap::new();
    let mut version = None;
    let mut others = 0;
    for selector in &plan.selectors {
        let mut params = ListParams::default().labels(selector).limit(PAGE);
        loop {
            let (items, listed_at, next) = match raw.page(&params).await {
                Ok(page) => page,
                Err(e) => {
                    tracing::debug!(%selector, error = %e, "listing by label failed; reading by name");
                    return (found, version);
                }
            };
            if version.is_none() {
                version = listed_at;
            }
            for item in items {
                let meta = |field: &str| {
                    item.pointer(&format!("/metadata/{field}"))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                };
                match wanted.get(&(meta("namespace"), meta("name"))) {
                    Some(key) => {
                        found.insert((*key).clone(), item);
                    }
                    None => others += 1,
                }
            }
            if others > wanted.len() {
                tracing::debug!(label = %plan.key, others, "the label selects many other objects; reading by name");
                return (found, version);
            }
            match next {
                Some(token) => params = params.continue_token(&token),
                None => break,
            }
        }
    }
    (found, version)
}

/// The raw objects of `kind` in the connection's scope (managedFields kept), or why not.
pub async fn list_raw(ctx: &Context, kind: &ServedKind) -> Result<Vec<Value>, String> {
    let ns = ctx.conn.scope.as_namespace().map(str::to_owned);
    list_scope(
        &ctx.conn.client,
        kind,
        ns.as_deref().filter(|_| kind.namespaced),
    )
    .await
    .map_err(|e| format!("cannot list {}: {}", kind.resource(), describe(&e)))
}

/// Lists `kind` once for the connection's scope. When a cluster-wide list is forbidden (RBAC
/// that grants only some namespaces), it lists each namespace the manifests name instead, so
/// that what can be read is still compared; each failure is one error line. With
/// `only_manifests` (nothing but the manifests' objects is wanted), a few manifests in a big
/// scope are read by name instead ([`read_by_name`]).
pub async fn list_kind(
    ctx: &Context,
    kind: &ServedKind,
    only_manifests: bool,
    reads: &Arc<Semaphore>,
    listing: &mut Listing,
) {
    if only_manifests && read_by_name(ctx, kind, reads, listing).await {
        return;
    }
    let client = &ctx.conn.client;
    let schemas = &ctx.schemas;
    let what = |ns: Option<&str>| match ns.filter(|_| kind.namespaced) {
        Some(ns) => format!("{} in namespace \"{ns}\"", kind.resource()),
        None if kind.namespaced => format!("{} in all namespaces", kind.resource()),
        None => kind.resource(),
    };
    match ctx.conn.scope.clone() {
        NamespaceScope::One(ns) => match list_scope(client, kind, Some(&ns)).await {
            Ok(items) => listing.add(kind, Some(&ns), items, schemas),
            Err(e) => {
                listing
                    .errors
                    .push(format!("cannot list {}: {}", what(Some(&ns)), describe(&e)))
            }
        },
        NamespaceScope::All => match list_scope(client, kind, None).await {
            Ok(items) => listing.add(kind, None, items, schemas),
            Err(e) if is_forbidden(&e) && kind.namespaced => {
                let namespaces: BTreeSet<String> = ctx
                    .index
                    .objects()
                    .filter(|m| m.key.group == kind.group && m.key.kind == kind.kind)
                    .map(|m| m.key.namespace.to_string())
                    .collect();
                if namespaces.is_empty() {
                    listing
                        .errors
                        .push(format!("cannot list {}: {}", what(None), describe(&e)));
                }
                for ns in namespaces {
                    match list_scope(client, kind, Some(&ns)).await {
                        Ok(items) => listing.add(kind, Some(&ns), items, schemas),
                        Err(e) => listing.errors.push(format!(
                            "cannot list {}: {}",
                            what(Some(&ns)),
                            describe(&e)
                        )),
                    }
                }
            }
            Err(e) => listing
                .errors
                .push(format!("cannot list {}: {}", what(None), describe(&e))),
        },
    }
}

/// One live object as the API server has it now (`None` when it does not exist).
pub async fn get_live(
    ctx: &Context,
    kind: &ServedKind,
    key: &ObjectKey,
) -> Result<Option<Value>, ContextError> {
    let what = if kind.namespaced {
        format!(
            "{}/{} in namespace \"{}\"",
            kind.resource(),
            key.name,
            key.namespace
        )
    } else {
        format!("{}/{}", kind.resource(), key.name)
    };
    Raw::new(&ctx.conn.client, kind, Some(&key.namespace))
        .get(&key.name, None)
        .await
        .map_err(|e| ContextError::Api {
            what,
            reason: describe(&e),
        })
}
