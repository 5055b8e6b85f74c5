//! The object store of the demo cluster: every object, the global resourceVersion counter and a
//! bounded history of changes for watches. Every write — HTTP handlers, the controllers and the
//! scenario alike — goes through [`Store`], so `managedFields`, generation and resourceVersion
//! are kept in one place, as a real API server keeps them.
//!
//! Objects are held serialized ([`Entry::json`]) with the few parsed fields selectors need: a
//! `serde_json::Value` per object would not fit 30,000 objects in the memory target. A write
//! parses, changes, and serializes once; that one serialization is shared by the list responses
//! and by every watcher.
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::broadcast;

use super::resources::ResourceType;
use crate::error::{ApiError, not_found};

mod allocate;
mod crd;
mod select;
mod snapshot;
mod subresources;
mod validate;
mod write;

pub use select::{FieldSelector, LabelSelector};
pub use subresources::set_condition;
pub use validate::{FieldValidation, validate_name};
pub use write::scale_of;

/// Who writes, and how: becomes the `managedFields` entry of the write.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// `fieldManager` (kubectl sends one; the server derives one from the user agent otherwise).
    pub manager: String,
    /// `None` for the main resource, `Some("status")` or `Some("scale")` for a subresource.
    pub subresource: Option<String>,
    /// `dryRun=All`: validate and compute the result, store nothing.
    pub dry_run: bool,
}

impl WriteOptions {
    pub fn manager(manager: &str) -> WriteOptions {
        WriteOptions {
            manager: manager.to_string(),
            subresource: None,
            dry_run: false,
        }
    }
    pub fn status(manager: &str) -> WriteOptions {
        WriteOptions {
            manager: manager.to_string(),
            subresource: Some("status".into()),
            dry_run: false,
        }
    }
}

/// A patch body, by content type.
#[derive(Debug, Clone)]
pub enum Patch {
    /// `application/json-patch+json`
    Json(Value),
    /// `application/merge-patch+json`
    Merge(Value),
    /// `application/strategic-merge-patch+json`
    Strategic(Value),
    /// `application/apply-patch+yaml` (server-side apply), with `force`.
    Apply { config: Value, force: bool },
}

/// A change, as a watch or a controller sees it.
#[derive(Debug, Clone)]
pub struct StoreEvent {
    pub resource: ResourceType,
    pub kind: EventType,
    /// The object after the change (before it, for a delete), with its new resourceVersion.
    pub object: std::sync::Arc<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    /// The `type` of a watch event on the wire.
    pub fn wire_name(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One stored object: its JSON as served, and what selectors look at.
#[derive(Debug)]
pub struct Entry {
    pub resource: ResourceType,
    pub namespace: Box<str>,
    pub name: Box<str>,
    pub resource_version: u64,
    /// The object serialized once, shared by lists, gets and watch events.
    pub json: Bytes,
    pub labels: Box<[(Box<str>, Box<str>)]>,
    /// Selectable fields beyond metadata (`status.phase`, `involvedObject.name`, ...).
    pub fields: Box<[(&'static str, Box<str>)]>,
    /// The cells `kubectl get` prints for this version (see [`crate::printers`]), printed once per
    /// write like the serialization; an age is kept as [`crate::printers::AGE_MARK`] and the unix seconds it
    /// counts from, and filled in per request.
    pub cells: Box<[Value]>,
    /// Where `metadata` sits in [`Entry::json`], to serve `PartialObjectMetadata` without a parse.
    pub metadata_range: std::ops::Range<usize>,
}

impl Entry {
    /// The serialized `metadata` of the object (a slice of [`Entry::json`]).
    pub fn metadata_json(&self) -> Bytes {
        if self.metadata_range.is_empty() {
            return Bytes::from_static(b"{}");
        }
        self.json.slice(self.metadata_range.clone())
    }

    /// Parse the stored JSON (it was serialized by the store, so it parses).
    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.json).unwrap_or(Value::Null)
    }
}

/// A change as watchers see it: serialized once, shared by all of them.
#[derive(Debug)]
pub struct WatchEvent {
    pub kind: EventType,
    pub entry: Arc<Entry>,
    /// The object before a modification or a deletion, so a watch with a selector can tell an
    /// object that left its selection (sent as DELETED) from one that entered it (ADDED), and a
    /// continued list can serve the objects as they were at its first page.
    pub previous: Option<Arc<Entry>>,
    line: std::sync::OnceLock<Bytes>,
}

impl WatchEvent {
    pub fn new(kind: EventType, entry: Arc<Entry>, previous: Option<Arc<Entry>>) -> WatchEvent {
        WatchEvent {
            kind,
            entry,
            previous,
            line: std::sync::OnceLock::new(),
        }
    }

    /// The event as a watch stream line, with its own type; built once, for every watcher.
    pub fn line(&self) -> Bytes {
        self.line
            .get_or_init(|| watch_line(self.kind.wire_name(), &self.entry.json))
            .clone()
    }
}

/// `{"type":TYPE,"object":OBJECT}` and a newline.
pub fn watch_line(kind: &str, object: &[u8]) -> Bytes {
    let mut line = Vec::with_capacity(object.len() + 32);
    line.extend_from_slice(b"{\"type\":\"");
    line.extend_from_slice(kind.as_bytes());
    line.extend_from_slice(b"\",\"object\":");
    line.extend_from_slice(object);
    line.extend_from_slice(b"}\n");
    Bytes::from(line)
}

/// What a new watch starts from: the events it must replay, then the live feed.
pub struct WatchStart {
    pub replay: Vec<Arc<WatchEvent>>,
    pub live: broadcast::Receiver<Arc<WatchEvent>>,
    /// The resourceVersion of the store when the watch started.
    pub resource_version: u64,
    /// A watch from a resourceVersion ahead of the store: the version it waits for.
    pub waiting_for: Option<u64>,
}

/// A page of a list.
pub struct ListPage {
    pub items: Vec<Arc<Entry>>,
    /// The resourceVersion of the list (of the first page, for a paginated list).
    pub resource_version: u64,
    /// The key to continue after, when `limit` cut the list short.
    pub continue_after: Option<(String, String)>,
    pub remaining: usize,
}

/// How many changes the store remembers for watches that resume from a resourceVersion; older
/// ones get `410 Expired`, as a real server does once etcd compacted them.
pub const HISTORY_CAPACITY: usize = 10_000;
/// Buffered events per live watcher before it is cut off (and must resume or relist).
const WATCH_CHANNEL_CAPACITY: usize = 16_384;
const CONTROLLER_CHANNEL_CAPACITY: usize = 4_096;

/// The namespaces every cluster has.
pub const SYSTEM_NAMESPACES: [&str; 4] =
    ["default", "kube-system", "kube-public", "kube-node-lease"];

/// The PriorityClasses the API server makes at start (name, value, description).
pub const SYSTEM_PRIORITY_CLASSES: [(&str, i64, &str); 2] = [
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but are moved to another node if necessary.",
    ),
];

type Key = (String, String);

struct Inner {
    resource_version: u64,
    /// The types served: the built-in ones, then the custom resources of the
    /// CustomResourceDefinitions stored (see `store::crd`).
    types: Arc<Vec<ResourceType>>,
    /// The custom resource types and OpenAPI documents of the definitions stored.
    custom: crd::Custom,
    /// Cluster IPs and node ports handed out.
    allocations: allocate::Allocations,
    objects: HashMap<ResourceType, BTreeMap<Key, Arc<Entry>>>,
    history: VecDeque<Arc<WatchEvent>>,
    /// Changes at or below this resourceVersion are forgotten.
    history_floor: u64,
}

struct Shared {
    inner: Mutex<Inner>,
    watch_tx: broadcast::Sender<Arc<WatchEvent>>,
    controller_tx: broadcast::Sender<StoreEvent>,
    /// Seconds the store's clock is behind the wall clock (0: it tells the time).
    clock_behind: std::sync::atomic::AtomicI64,
}

/// The demo cluster's object store. Cheap to clone (shared state inside).
#[derive(Clone)]
pub struct Store {
    shared: Arc<Shared>,
}

impl Default for Store {
    fn default() -> Self {
        Store::new()
    }
}

impl Store {
    /// Sets the store's clock `seconds` behind the wall clock (0 puts it right): what is written
    /// meanwhile is stamped then — creation and managedFields times — as in a cluster whose
    /// objects were made days ago. Benchmarks seed with it; the demo never does.
    pub fn set_clock_behind(&self, seconds: i64) {
        self.shared
            .clock_behind
            .store(seconds, std::sync::atomic::Ordering::Relaxed);
    }

    /// The store's time as the API writes it (`2026-11-24T03:12:09Z`).
    pub fn now_rfc3339(&self) -> String {
        let behind = self
            .shared
            .clock_behind
            .load(std::sync::atomic::Ordering::Relaxed);
        let now = jiff::Timestamp::now();
        let at = now
            .checked_sub(jiff::SignedDuration::from_secs(behind))
            .unwrap_or(now);
        write::rfc3339(at)
    }

    /// An empty cluster with the system namespaces.
    pub fn new() -> Store {
        let (watch_tx, _) = broadcast::channel(WATCH_CHANNEL_CAPACITY);
        let (controller_tx, _) = broadcast::channel(CONTROLLER_CHANNEL_CAPACITY);
        let store = Store {
            shared: Arc::new(Shared {
                inner: Mutex::new(Inner {
                    resource_version: 0,
                    types: Arc::new(ResourceType::BUILTIN.to_vec()),
                    custom: crd::Custom::default(),
                    allocations: allocate::Allocations::default(),
                    objects: HashMap::new(),
                    history: VecDeque::new(),
                    history_floor: 0,
                }),
                watch_tx,
                controller_tx,
                clock_behind: std::sync::atomic::AtomicI64::new(0),
            }),
        };
        for ns in SYSTEM_NAMESPACES {
            let object = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            // Cannot fail: a valid name in an empty store.
            let _ = store.create(
                ResourceType::NAMESPACE,
                object,
                &WriteOptions::manager("kube-apiserver"),
            );
        }
        for (name, value, description) in SYSTEM_PRIORITY_CLASSES {
            let object = serde_json::json!({
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
                "description": description,
            });
            // Cannot fail: a valid object in a store without it.
            let _ = store.create(
                ResourceType::PRIORITY_CLASS,
                object,
                &WriteOptions::manager("kube-apiserver"),
            );
        }
        store
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave an entry half-written (entries are
        // replaced whole), so a poisoned lock is still consistent.
        self.shared.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every type served: the built-in ones and the custom resources of the definitions stored.
    pub fn resource_types(&self) -> Arc<Vec<ResourceType>> {
        self.lock().types.clone()
    }

    /// The OpenAPI v3 documents served: the built-in group-versions', then one per custom
    /// resource group-version.
    pub fn openapi_documents(&self) -> Vec<Arc<crate::openapi_v3::Document>> {
        let custom = self.lock().custom.documents.clone();
        crate::openapi_v3::builtin()
            .iter()
            .cloned()
            .chain(custom)
            .collect()
    }

    /// The type served at `/apis/{group}/{version}/{plural}` (`""` group: `/api/v1`).
    pub fn resource_type(&self, group: &str, version: &str, plural: &str) -> Option<ResourceType> {
        self.lock()
            .types
            .iter()
            .copied()
            .find(|r| r.group() == group && r.version() == version && r.plural() == plural)
    }

    /// The type of objects of `apiVersion` and `kind`.
    pub fn resource_type_of(&self, api_version: &str, kind: &str) -> Option<ResourceType> {
        self.lock()
            .types
            .iter()
            .copied()
            .find(|r| r.kind() == kind && r.api_version() == api_version)
    }

    /// One object, or `None`.
    pub fn get(&self, resource: ResourceType, namespace: &str, name: &str) -> Option<Value> {
        self.get_entry(resource, namespace, name).map(|e| e.value())
    }

    /// One stored entry, or `None`.
    pub fn get_entry(
        &self,
        resource: ResourceType,
        namespace: &str,
        name: &str,
    ) -> Option<Arc<Entry>> {
        let ns = if resource.namespaced() { namespace } else { "" };
        let inner = self.lock();
        inner
            .objects
            .get(&resource)?
            .get(&(ns.to_string(), name.to_string()))
            .cloned()
    }

    /// Every object of a type, in one namespace or (with `None`) all, sorted by namespace, name.
    pub fn list(&self, resource: ResourceType, namespace: Option<&str>) -> Vec<Value> {
        self.list_entries(resource, namespace)
            .iter()
            .map(|e| e.value())
            .collect()
    }

    /// Every entry of a type, sorted by namespace, name, and the store's resourceVersion.
    pub fn list_entries(&self, resource: ResourceType, namespace: Option<&str>) -> Vec<Arc<Entry>> {
        self.list_page(resource, namespace, None, None, &|_| true)
            .items
    }

    /// A page of entries matching `filter`, after the key `after`, at most `limit` of them.
    pub fn list_page(
        &self,
        resource: ResourceType,
        namespace: Option<&str>,
        after: Option<&(String, String)>,
        limit: Option<usize>,
        filter: &dyn Fn(&Entry) -> bool,
    ) -> ListPage {
        let inner = self.lock();
        let resource_version = inner.resource_version;
        let Some(map) = inner.objects.get(&resource) else {
            return ListPage {
                items: Vec::new(),
                resource_version,
                continue_after: None,
                remaining: 0,
            };
        };
        let ns = namespace.filter(|_| resource.namespaced());
        let range = map.range((snapshot::start(after, ns), std::ops::Bound::Unbounded));
        snapshot::page(range, ns, limit, filter, resource_version)
    }

    /// The current resourceVersion of the whole store.
    pub fn resource_version(&self) -> u64 {
        self.lock().resource_version
    }

    /// Start a watch of every type from `since` (`None`: from now, without replay). A version
    /// older than the history is `Gone`, worded as a real server words it.
    pub fn watch_from(&self, since: Option<u64>) -> Result<WatchStart, ApiError> {
        let inner = self.lock();
        let live = self.shared.watch_tx.subscribe();
        let replay = match since {
            None => Vec::new(),
            Some(rv) if rv < inner.history_floor => {
                return Err(ApiError::Gone(format!(
                    "too old resource version: {rv} ({})",
                    inner.history_floor + 1
                )));
            }
            Some(rv) => {
                // History is sorted by resourceVersion: skip to the first newer change.
                let start = inner
                    .history
                    .partition_point(|e| e.entry.resource_version <= rv);
                inner.history.range(start..).cloned().collect()
            }
        };
        Ok(WatchStart {
            replay,
            live,
            resource_version: inner.resource_version,
            waiting_for: since.filter(|rv| *rv > inner.resource_version),
        })
    }

    /// Start a watch of `resource` (in `namespace`, or all) with the current objects as
    /// synthetic ADDED events, then every change after them.
    pub fn watch_current(&self, resource: ResourceType, namespace: Option<&str>) -> WatchStart {
        let inner = self.lock();
        let live = self.shared.watch_tx.subscribe();
        let ns = namespace.filter(|_| resource.namespaced());
        let replay = inner
            .objects
            .get(&resource)
            .map(|m| {
                m.iter()
                    .filter(|((n, _), _)| ns.is_none_or(|ns| ns == n))
                    .map(|(_, e)| Arc::new(WatchEvent::new(EventType::Added, e.clone(), None)))
                    .collect()
            })
            .unwrap_or_default();
        WatchStart {
            replay,
            live,
            resource_version: inner.resource_version,
            waiting_for: None,
        }
    }

    /// Create; fills uid, creationTimestamp, generation, resourceVersion, defaults, managedFields.
    pub fn create(
        &self,
        resource: ResourceType,
        object: Value,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        self.create_validated(resource, object, opts, FieldValidation::Ignore)
            .map(|(v, _)| v)
    }

    /// Replace (PUT). A `metadata.resourceVersion` that is not current is a 409 Conflict.
    pub fn update(
        &self,
        resource: ResourceType,
        object: Value,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        self.update_validated(resource, object, opts, FieldValidation::Ignore)
            .map(|(v, _)| v)
    }

    /// Patch (any content type), on the main resource or a subresource of `opts`.
    pub fn patch(
        &self,
        resource: ResourceType,
        namespace: &str,
        name: &str,
        patch: &Patch,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        self.patch_validated(
            resource,
            namespace,
            name,
            patch,
            opts,
            FieldValidation::Ignore,
        )
        .map(|(v, _)| v)
    }

    /// Delete; returns the object as it was.
    pub fn delete(
        &self,
        resource: ResourceType,
        namespace: &str,
        name: &str,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let ns = if resource.namespaced() { namespace } else { "" };
        let key = (ns.to_string(), name.to_string());
        let mut inner = self.lock();
        let Some(entry) = inner
            .objects
            .get(&resource)
            .and_then(|m| m.get(&key))
            .cloned()
        else {
            return Err(not_found(resource, name));
        };
        let object = entry.value();
        if dry_run {
            return Ok(object);
        }
        if resource == ResourceType::NAMESPACE {
            // No namespace controller: the contents go at once instead of after Terminating.
            let types = inner.types.clone();
            for r in types.iter().copied().filter(|r| r.namespaced()) {
                let keys: Vec<Key> = inner
                    .objects
                    .get(&r)
                    .map(|m| m.keys().filter(|(n, _)| n == name).cloned().collect())
                    .unwrap_or_default();
                for k in keys {
                    self.remove_locked(&mut inner, r, &k);
                }
            }
        }
        self.remove_locked(&mut inner, resource, &key);
        Ok(object)
    }

    /// Every change from now on, for the controllers. A lagging receiver must resync by listing.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<StoreEvent> {
        self.shared.controller_tx.subscribe()
    }

    fn remove_locked(&self, inner: &mut Inner, resource: ResourceType, key: &Key) {
        let Some(old) = inner.objects.get_mut(&resource).and_then(|m| m.remove(key)) else {
            return;
        };
        let mut object = old.value();
        inner.resource_version += 1;
        let rv = inner.resource_version;
        write::set_resource_version(&mut object, rv);
        let entry = write::make_entry(resource, &object, rv);
        // The object as it was, for a list continued from before its deletion.
        self.publish(inner, EventType::Deleted, entry, Some(old), object);
        if resource == ResourceType::CUSTOM_RESOURCE_DEFINITION {
            self.refresh_custom_types(inner);
        }
    }

    /// Store `object` (already complete, with its resourceVersion) and tell the watchers.
    fn commit_locked(
        &self,
        inner: &mut Inner,
        resource: ResourceType,
        object: Value,
        kind: EventType,
    ) {
        let rv = inner.resource_version;
        let entry = write::make_entry(resource, &object, rv);
        let previous = inner.objects.entry(resource).or_default().insert(
            (entry.namespace.to_string(), entry.name.to_string()),
            entry.clone(),
        );
        self.publish(inner, kind, entry, previous, object);
        if resource == ResourceType::CUSTOM_RESOURCE_DEFINITION {
            self.refresh_custom_types(inner);
        }
    }

    /// Serve the custom resources of the definitions stored; the objects of a type no longer
    /// served go, as the definition's deletion removes them on a real server.
    fn refresh_custom_types(&self, inner: &mut Inner) {
        let before: Vec<ResourceType> = inner.custom.types.clone();
        inner
            .custom
            .refresh(inner.objects.get(&ResourceType::CUSTOM_RESOURCE_DEFINITION));
        let mut types = ResourceType::BUILTIN.to_vec();
        types.extend(inner.custom.types.iter().copied());
        inner.types = Arc::new(types);
        let served = inner.types.clone();
        for gone in before.into_iter().filter(|t| !served.contains(t)) {
            let keys: Vec<Key> = inner
                .objects
                .get(&gone)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            for key in keys {
                self.remove_locked(inner, gone, &key);
            }
            inner.objects.remove(&gone);
        }
    }

    fn publish(
        &self,
        inner: &mut Inner,
        kind: EventType,
        entry: Arc<Entry>,
        previous: Option<Arc<Entry>>,
        object: Value,
    ) {
        let resource = entry.resource;
        let event = Arc::new(WatchEvent::new(kind, entry, previous));
        inner.history.push_back(event.clone());
        while inner.history.len() > HISTORY_CAPACITY {
            if let Some(gone) = inner.history.pop_front() {
                inner.history_floor = gone.entry.resource_version;
            }
        }
        // No receiver is not an error: nobody watches yet.
        let _ = self.shared.watch_tx.send(event);
        if self.shared.controller_tx.receiver_count() > 0 {
            let _ = self.shared.controller_tx.send(StoreEvent {
                resource,
                kind,
                object: Arc::new(object),
            });
        }
    }
}

#[cfg(test)]
mod tests;
