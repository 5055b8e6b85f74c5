//! The one reader of live objects for drift: the headless commands (`check`, `diff`, `accept`,
//! `blame`, `changes`, `compare`) and the live view's fetches read through it. Each object comes
//! as the server's JSON (a `Value`, the form the drift engine reads, or the JSON text for the live
//! view's workloads), with one policy for how: one list call per kind and namespace scope, or —
//! when the manifests name few of the objects a scope holds — a list by a label they carry
//! ([`selector`]) and a GET each of the rest, [`gets_in_flight`] at once.
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use kube::Client;
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::Value;
use tokio::sync::Semaphore;

use super::client::{Connection, NamespaceScope};
use super::describe;
use super::kinds::ServedKind;
use crate::drift::LiveObject;
use crate::manifest::{ManifestIndex, ManifestObject, ObjectKey};
use crate::schema::Schemas;

pub mod selector;

/// Page size of list calls: big lists come in pages, as kubectl does.
pub const PAGE: u32 = 500;

/// What a command's reads need: the connection, the manifests (which objects are wanted) and
/// the schemas their live objects are read with.
#[derive(Clone, Copy)]
pub struct Reads<'a> {
    pub conn: &'a Connection,
    pub index: &'a ManifestIndex,
    pub schemas: &'a Schemas,
}

/// A read of one object that failed: which, and why, as a person can act on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read {what}: {reason}")]
pub struct ReadError {
    pub what: String,
    pub reason: String,
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
#[derive(Clone)]
pub struct Reader {
    client: Client,
    request: kube::core::Request,
    api_version: String,
    kind: String,
}

impl Reader {
    pub fn new(client: &Client, kind: &ServedKind, namespace: Option<&str>) -> Reader {
        Reader::of(
            client,
            &kind.api_resource(),
            namespace.filter(|_| kind.namespaced),
        )
    }

    /// A reader of `resource` in `namespace` (`None`: every namespace, or a cluster-scoped kind).
    pub fn of(
        client: &Client,
        resource: &kube::api::ApiResource,
        namespace: Option<&str>,
    ) -> Reader {
        Reader {
            client: client.clone(),
            request: kube::core::Request::new(<DynamicObject as kube::Resource>::url_path(
                resource, namespace,
            )),
            api_version: resource.api_version.clone(),
            kind: resource.kind.clone(),
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
    pub async fn get(
        &self,
        name: &str,
        version: Option<&str>,
    ) -> Result<Option<Value>, kube::Error> {
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
        Ok(self
            .get_as::<Value>(name, params)
            .await?
            .map(|v| self.typed(v)))
    }

    /// `name` decoded as `T` (the live view's workloads keep the JSON text), `None` when it does
    /// not exist.
    pub async fn get_as<T: serde::de::DeserializeOwned>(
        &self,
        name: &str,
        params: &kube::api::GetParams,
    ) -> Result<Option<T>, kube::Error> {
        let request = self
            .request
            .get(name, params)
            .map_err(kube::Error::BuildRequest)?;
        match self.client.request::<T>(request).await {
            Ok(value) => Ok(Some(value)),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// One page of a list, its items decoded as `T`.
    pub async fn page_as<T: Clone + serde::de::DeserializeOwned>(
        &self,
        params: &ListParams,
    ) -> Result<kube::core::ObjectList<T>, kube::Error> {
        let request = self
            .request
            .list(params)
            .map_err(kube::Error::BuildRequest)?;
        self.client.request(request).await
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
        let page = self.page_as::<Value>(params).await?;
        let text = |field: Option<String>| field.filter(|c| !c.is_empty());
        Ok((
            page.items
                .into_iter()
                .map(|item| self.typed(item))
                .collect(),
            text(page.metadata.resource_version),
            text(page.metadata.continue_),
        ))
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
    Reader::new(client, kind, namespace).list_all().await
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
    ctx: Reads<'_>,
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
        let raw = Reader::new(client, kind, namespace);
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
            let raw = Reader::new(client, kind, namespace);
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
        .buffer_unordered(gets_in_flight(ctx.conn))
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
            listing.read(kind, value, ctx.schemas);
        }
    }
    true
}

/// The objects of `plan.keys` that its selectors find, and the resourceVersion of the first
/// list (`None` when none answered). A list that fails, or that brings back more objects the
/// manifests do not describe than ones they do (a label many other objects carry), ends the
/// listing: what was not found is read by name.
async fn list_selected(
    raw: &Reader,
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
pub async fn list_raw(conn: &Connection, kind: &ServedKind) -> Result<Vec<Value>, String> {
    let ns = conn.scope.as_namespace().map(str::to_owned);
    list_scope(
        &conn.client,
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
    ctx: Reads<'_>,
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
    conn: &Connection,
    kind: &ServedKind,
    key: &ObjectKey,
) -> Result<Option<Value>, ReadError> {
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
    Reader::new(&conn.client, kind, Some(&key.namespace))
        .get(&key.name, None)
        .await
        .map_err(|e| ReadError {
            what,
            reason: describe(&e),
        })
}
