//! kube-runtime watchers (with backoff) for Deployments (always) and ReplicaSets, Pods and Events
//! (one namespace, while its detail view is open), mapped to
//! slim rows and sent as batches of [`WatchUpdate`]s; watch errors become [`WatchHealth`].
//!
//! Each watcher runs on its own task and never lists again on a timer: kube-runtime re-watches
//! from the last resourceVersion and relists only after a 410 or an error (`Init`…`InitDone`).
//! Each watch asks the server to end it after 44–53 s ([`watch_timeout_jittered`]), so that one
//! that falls silent is noticed and replaced within a minute, and the watches of a connection do
//! not all end at the same moment.
//! Across all namespaces, a 403 hands over to one watcher per namespace ([`super::fallback`]).
use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ControllerRevision, ReplicaSet};
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, watcher};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use tokio::task::JoinHandle;

use super::client::{Connection, NamespaceScope};
pub use super::events::{
    ClusterEvent, ClusterMessage, ObjectKind, ObjectRow, WatchHealth, WatchUpdate, WatchedKind,
};
use super::live::{LiveDaemonSet, LiveDeployment, LiveStatefulSet, TableResource};
use super::rows::{EventRow, Keyed, PodRow, ReplicaSetRow};
use crate::manifest::{ObjectKey, SharedStr};

/// The running watcher tasks; dropping it stops them.
pub struct Watchers {
    pub(super) tasks: Vec<JoinHandle<()>>,
}

impl Watchers {
    /// These watchers and `other`'s, stopped together.
    pub fn join(mut self, mut other: Watchers) -> Watchers {
        self.tasks.append(&mut other.tasks);
        self
    }
}

impl Drop for Watchers {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Up to this many watch events that are ready at once travel as one message.
const BATCH: usize = 1024;

/// The table's rows asked for ahead of its watcher's first list: about a screen of them. The
/// watcher lists in pages of 500, which at 10,000 Deployments (with their `managedFields`,
/// 2.8 MB a page) the server takes 40–75 ms to answer on a loaded machine, against 7–20 ms for
/// a page of 50.
const FIRST_PAGE: u32 = 50;

/// Lists a screen of `api`'s objects ([`FIRST_PAGE`]) and sends them as the start of a first
/// list (`Init`, `InitApply`…, with no `InitDone`): the table has rows before the watcher's
/// first page of 500 arrives. The watcher's own list then starts again (its `Init`) and its end
/// drops any of these rows it no longer has. Returns false once the receiver is gone. A failure
/// sends nothing: the watcher's list meets the same error and reports it.
pub(super) async fn first_page<K, T>(
    api: &Api<K>,
    emit: &(impl Fn(ClusterEvent) -> bool + Sync),
    wrap: impl Fn(Vec<WatchUpdate<T>>) -> ClusterEvent,
    map: fn(K) -> Option<T>,
) -> bool
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let params = kube::api::ListParams::default().limit(FIRST_PAGE);
    match api.list(&params).await {
        Ok(list) => {
            let mut updates = Vec::with_capacity(list.items.len() + 1);
            updates.push(WatchUpdate::Init);
            updates.extend(
                list.items
                    .into_iter()
                    .filter_map(map)
                    .map(WatchUpdate::InitApply),
            );
            emit(wrap(updates))
        }
        Err(err) => {
            tracing::debug!(error = %err, "first page not listed; the watcher's list follows");
            true
        }
    }
}

/// Start the table's watchers of a connection: one per workload kind. Across all namespaces,
/// one watch per kind, which falls back to one per namespace while it is refused (see
/// [`super::fallback`]). `send` returns false once the receiver is gone.
pub fn spawn_table_watcher<S>(conn: &Connection, epoch: u64, send: S) -> Watchers
where
    S: Fn(ClusterMessage) -> bool + Clone + Send + Sync + 'static,
{
    Watchers {
        tasks: vec![
            spawn_workloads::<LiveDeployment, S>(conn, epoch, send.clone()),
            spawn_workloads::<LiveStatefulSet, S>(conn, epoch, send.clone()),
            spawn_workloads::<LiveDaemonSet, S>(conn, epoch, send),
        ],
    }
}

/// The watcher of one workload kind (`K`'s).
fn spawn_workloads<K, S>(conn: &Connection, epoch: u64, send: S) -> JoinHandle<()>
where
    K: TableResource,
    S: Fn(ClusterMessage) -> bool + Clone + Send + Sync + 'static,
{
    let scope = &conn.scope;
    if *scope == NamespaceScope::All {
        return tokio::spawn(super::fallback::watch_all_namespaces::<K, S>(
            conn.client.clone(),
            epoch,
            send,
        ));
    }
    let api: Api<K> = api(&conn.client, scope);
    let scope = scope.clone();
    tokio::spawn(async move {
        let emit = |event| send(ClusterMessage { epoch, event });
        let watched = WatchedKind::of(K::KIND);
        let wrap = |u| ClusterEvent::WorkloadsLive(K::KIND, u);
        let map = |d: K| Some(d.into_row());
        if !first_page(&api, &emit, wrap, map).await {
            return;
        }
        pump(
            api,
            &scope,
            watched,
            &emit,
            wrap,
            move |h| ClusterEvent::Health(watched, h),
            map,
            false,
            |_: &K| {},
        )
        .await;
    })
}

/// Start the ReplicaSet, Pod and Event watchers of one namespace, while a detail view of a
/// Deployment there is open: pods and ReplicaSets are kept only as far as the screen needs them,
/// so memory does not grow with the size of the cluster.
pub fn spawn_detail_watchers<S>(conn: &Connection, namespace: &str, epoch: u64, send: S) -> Watchers
where
    S: Fn(ClusterMessage) -> bool + Clone + Send + Sync + 'static,
{
    let scope = NamespaceScope::One(namespace.to_string());
    let client = &conn.client;
    let tasks = vec![
        spawn_one::<ReplicaSet, ReplicaSetRow, _>(
            api(client, &scope),
            scope.clone(),
            WatchedKind::ReplicaSets,
            epoch,
            send.clone(),
            |r| Some(ReplicaSetRow::from_object(&r)),
            ClusterEvent::ReplicaSets,
        ),
        spawn_one::<Pod, PodRow, _>(
            api(client, &scope),
            scope.clone(),
            WatchedKind::Pods,
            epoch,
            send.clone(),
            |p| Some(PodRow::from_object(&p)),
            ClusterEvent::Pods,
        ),
        spawn_one::<ControllerRevision, ReplicaSetRow, _>(
            api(client, &scope),
            scope.clone(),
            WatchedKind::ControllerRevisions,
            epoch,
            send.clone(),
            |r| ReplicaSetRow::from_controller_revision(&r),
            ClusterEvent::ControllerRevisions,
        ),
        spawn_one::<Event, EventRow, _>(
            api(client, &scope),
            scope.clone(),
            WatchedKind::Events,
            epoch,
            send,
            |e| EventRow::from_object(&e),
            ClusterEvent::Events,
        ),
    ];
    Watchers { tasks }
}

/// Start one watcher per kind of `kinds` (the kinds of the manifests, Deployments aside), in the
/// connection's namespace scope (a cluster-scoped kind is watched whole), each object sent with
/// its JSON for its drift.
pub fn spawn_object_watchers<S>(
    conn: &Connection,
    kinds: &[crate::cluster::kinds::ServedKind],
    epoch: u64,
    send: S,
) -> Watchers
where
    S: Fn(ClusterMessage) -> bool + Clone + Send + Sync + 'static,
{
    let tasks = kinds
        .iter()
        .map(|kind| {
            let resource = kind.api_resource();
            let scope = match (&conn.scope, kind.namespaced) {
                (NamespaceScope::One(ns), true) => NamespaceScope::One(ns.clone()),
                _ => NamespaceScope::All,
            };
            let api: Api<super::live::LiveAny> = match scope.as_namespace() {
                Some(ns) => Api::namespaced_with(conn.client.clone(), ns, &resource),
                None => Api::all_with(conn.client.clone(), &resource),
            };
            let tag = Arc::new(ObjectKind::of(kind));
            // Every object's key shares its kind's words.
            let (group, kind_word) = (
                SharedStr::interned(&kind.group),
                SharedStr::interned(&kind.kind),
            );
            let send = send.clone();
            tokio::spawn(async move {
                let emit = |event| send(ClusterMessage { epoch, event });
                let health_tag = tag.clone();
                pump(
                    api,
                    &scope,
                    WatchedKind::Objects,
                    &emit,
                    move |updates| ClusterEvent::Objects(tag.clone(), updates),
                    move |health| ClusterEvent::ObjectHealth(health_tag.clone(), health),
                    move |o: super::live::LiveAny| {
                        let meta = o.meta();
                        Some(ObjectRow {
                            key: ObjectKey {
                                group: group.clone(),
                                kind: kind_word.clone(),
                                namespace: meta.namespace.as_deref().unwrap_or_default().into(),
                                name: meta.name.as_deref().unwrap_or_default().into(),
                            },
                            json: o.json,
                        })
                    },
                    false,
                    |_: &super::live::LiveAny| {},
                )
                .await;
            })
        })
        .collect();
    Watchers { tasks }
}

fn api<K>(client: &Client, scope: &NamespaceScope) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    <K as Resource>::DynamicType: Default,
{
    match scope.as_namespace() {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

#[allow(clippy::too_many_arguments)]
fn spawn_one<K, T, S>(
    api: Api<K>,
    scope: NamespaceScope,
    kind: WatchedKind,
    epoch: u64,
    send: S,
    map: fn(K) -> Option<T>,
    wrap: fn(Vec<WatchUpdate<T>>) -> ClusterEvent,
) -> JoinHandle<()>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    T: Keyed + Send + 'static,
    S: Fn(ClusterMessage) -> bool + Send + Sync + 'static,
{
    tokio::spawn(async move {
        let emit = |event| send(ClusterMessage { epoch, event });
        let to_health = move |h| ClusterEvent::Health(kind, h);
        pump(
            api,
            &scope,
            kind,
            &emit,
            wrap,
            to_health,
            map,
            false,
            |_: &K| {},
        )
        .await;
    })
}

/// How a [`pump`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PumpEnd {
    /// The receiver is gone: the app quit or moved on.
    ReceiverGone,
    /// A 403, when the caller asked to hear of it instead of retrying (its message).
    Forbidden(String),
}

/// Run one watch stream (with kube-runtime's backoff), sending its updates in batches and its
/// health when it changes. `on_object` sees every object (the all-namespaces watcher remembers
/// which namespaces exist, in case it must fall back to one watcher per namespace).
#[allow(clippy::too_many_arguments)]
pub(super) async fn pump<K, T>(
    api: Api<K>,
    scope: &NamespaceScope,
    kind: WatchedKind,
    emit: &(impl Fn(ClusterEvent) -> bool + Sync),
    wrap: impl Fn(Vec<WatchUpdate<T>>) -> ClusterEvent,
    to_health: impl Fn(WatchHealth) -> ClusterEvent,
    map: impl Fn(K) -> Option<T>,
    stop_on_forbidden: bool,
    mut on_object: impl FnMut(&K),
) -> PumpEnd
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    T: Keyed,
{
    let config = watcher::Config::default()
        .any_semantic()
        .timeout(watch_timeout_jittered());
    let probe_api = api.clone();
    let start = || {
        watcher(api.clone(), config.clone())
            .default_backoff()
            .ready_chunks(BATCH)
            .boxed()
    };
    let mut stream = start();
    let mut health = WatchHealth::Syncing;
    if !emit(to_health(health.clone())) {
        return PumpEnd::ReceiverGone;
    }
    let mut probe_delay = PROBE_FIRST;
    // The newest resourceVersion the watch has shown (of its objects), to notice a server whose
    // state went back (an etcd restore, another cluster behind the same address).
    let mut newest: Option<u64> = None;
    let mut heard = tokio::time::Instant::now();
    loop {
        // After a failure the watcher retries by itself, but a watch that comes back on a quiet
        // namespace sends nothing: without a probe the status bar would say "forbidden" or
        // "reconnecting" until the next object changes.
        let failing = matches!(
            health,
            WatchHealth::Forbidden { .. } | WatchHealth::Reconnecting { .. }
        );
        let chunk = if failing {
            tokio::select! {
                chunk = stream.next() => chunk,
                () = tokio::time::sleep(probe_delay) => {
                    probe_delay = (probe_delay * 2).min(PROBE_MAX);
                    if server_answers(&probe_api).await {
                        probe_delay = PROBE_FIRST;
                        health = WatchHealth::Connected;
                        if !emit(to_health(health.clone())) {
                            return PumpEnd::ReceiverGone;
                        }
                    }
                    continue;
                }
            }
        } else {
            probe_delay = PROBE_FIRST;
            // A watch quiet for a while may be waiting on a server that went back: ask.
            tokio::select! {
                chunk = stream.next() => chunk,
                () = tokio::time::sleep_until(heard + stale_check()) => {
                    heard = tokio::time::Instant::now();
                    if let Some(reason) = went_back(&probe_api, newest).await {
                        stream = start();
                        newest = None;
                        health = relisting(reason, &health);
                        if !emit(to_health(health.clone())) {
                            return PumpEnd::ReceiverGone;
                        }
                    }
                    continue;
                }
            }
        };
        let Some(chunk) = chunk else {
            break;
        };
        heard = tokio::time::Instant::now();
        let mut updates = Vec::with_capacity(chunk.len());
        let mut next = health.clone();
        let mut relist: Option<String> = None;
        for item in chunk {
            match item {
                Ok(ev) => {
                    let init_done = matches!(ev, watcher::Event::InitDone);
                    if let Some(reason) = track_version(&ev, &mut newest) {
                        relist = Some(reason);
                    }
                    if let watcher::Event::Apply(o) | watcher::Event::InitApply(o) = &ev {
                        on_object(o);
                    }
                    if let Some(u) = map_event(ev, &map) {
                        updates.push(u);
                    }
                    // The first list is "syncing" until its end; after a failure, any
                    // answer from the server means it is back.
                    if init_done || !matches!(next, WatchHealth::Syncing) {
                        next = WatchHealth::Connected;
                    }
                }
                Err(err) => {
                    tracing::warn!(resource = kind.plural(), namespace = scope.label(), error = %err, "watch failed; retrying with backoff");
                    if is_too_large_version(&err) {
                        relist = Some(format!("the API server is behind what was watched: {err}"));
                    }
                    next = health_of_error(&err, scope, &next);
                }
            }
        }
        if let Some(reason) = relist {
            // kube-runtime would resume from the version the server no longer has: start over.
            tracing::warn!(resource = kind.plural(), namespace = scope.label(), %reason, "listing again");
            stream = start();
            newest = None;
            updates.retain(|u| !matches!(u, WatchUpdate::Apply(_) | WatchUpdate::Delete(_)));
            next = relisting(reason, &next);
        }
        if !updates.is_empty() && !emit(wrap(updates)) {
            return PumpEnd::ReceiverGone;
        }
        if stop_on_forbidden && let WatchHealth::Forbidden { message, .. } = &next {
            return PumpEnd::Forbidden(message.clone());
        }
        if next != health {
            health = next;
            if !emit(to_health(health.clone())) {
                return PumpEnd::ReceiverGone;
            }
        }
    }
    // A watcher stream with backoff never ends; if it did, there is nothing more to send.
    PumpEnd::ReceiverGone
}

/// Follows the newest resourceVersion a watch has shown (a list starts it again); why to list
/// again when an event goes back before it (one server's resourceVersions only grow).
fn track_version<K: Resource>(ev: &watcher::Event<K>, newest: &mut Option<u64>) -> Option<String> {
    match ev {
        watcher::Event::Init => *newest = None,
        watcher::Event::InitApply(o) => *newest = (*newest).max(version_of(o)),
        watcher::Event::Apply(o) | watcher::Event::Delete(o) => match (version_of(o), *newest) {
            (Some(v), Some(n)) if v < n => {
                return Some(format!(
                    "the API server's resourceVersion went back ({v} after {n})"
                ));
            }
            (v, _) => *newest = (*newest).max(v),
        },
        watcher::Event::InitDone => {}
    }
    None
}

/// The `timeoutSeconds` of every watch request (see [`watch_timeout_secs`]).
static WATCH_TIMEOUT_SECS: AtomicU32 = AtomicU32::new(WATCH_TIMEOUT_DEFAULT_SECS);

/// A real API server ends a watch after its `timeoutSeconds` (sending a bookmark 2 s before,
/// when asked for bookmarks), and kube-runtime drops a watch that stays silent for that long
/// plus 5 s and watches again from the last resourceVersion it saw (one request, no list). With
/// 44 s and up to [`WATCH_TIMEOUT_JITTER_NINTHS`] more (53 s), a healthy watch always ends on its
/// own before kube-runtime would give up on it, while a stalled one (a half-open connection, a
/// stuck proxy: open, sending nothing) is dropped after at most 58 s of silence — replaced within
/// the minute with time for the new watch to catch up (the soak measured 60.3 s at 45–55 s).
/// Bookmarks alone cannot tell sooner: a v1.36 server sends one about every 60 s to a quiet
/// watch, and skips some (measured on realk8s: gaps of 60.2–60.8 s, once 120 s;
/// docs/benchmarks.md), so a silence limit under a minute would end healthy quiet watches
/// anyway. client-go's reflector
/// asks for 5–10 min and does not notice such a stall until then; kdrift's limit is the issue's
/// (a stalled watch noticed within 60 s), at about one request a minute per watch.
pub const WATCH_TIMEOUT_DEFAULT_SECS: u32 = 44;

/// Each watcher asks for its timeout plus a random part of up to this many ninths of it (44 s:
/// up to 9 s more), so that the watches of a connection are spread out rather than all resumed
/// in the same second, as client-go's reflector spreads its own.
pub const WATCH_TIMEOUT_JITTER_NINTHS: u32 = 2;

/// Sets [`watch_timeout_secs`] for the whole process, for watchers started afterwards (tests and
/// benches shorten it so that a stalled watch is noticed sooner: after it plus 5 s).
pub fn set_watch_timeout(seconds: u32) {
    WATCH_TIMEOUT_SECS.store(seconds.max(1), Ordering::Relaxed);
}

/// The base `timeoutSeconds` of kdrift's watches: [`WATCH_TIMEOUT_DEFAULT_SECS`] unless set.
pub fn watch_timeout_secs() -> u32 {
    WATCH_TIMEOUT_SECS.load(Ordering::Relaxed)
}

/// The longest `timeoutSeconds` a watcher asks for (the base plus the whole jitter): a stalled
/// watch is dropped at most 5 s after it.
pub fn watch_timeout_max_secs() -> u32 {
    let base = watch_timeout_secs();
    base + base * WATCH_TIMEOUT_JITTER_NINTHS / 9
}

/// The `timeoutSeconds` for a new watcher: the base plus a random part of the jitter.
pub fn watch_timeout_jittered() -> u32 {
    let base = watch_timeout_secs();
    let spread = watch_timeout_max_secs() - base;
    base + jitter(spread)
}

/// A random number in `0..=most` (std's per-process hash keys as the source: this spreads
/// timers, it is not for secrets).
fn jitter(most: u32) -> u32 {
    use std::hash::{BuildHasher, Hasher};
    if most == 0 {
        return 0;
    }
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(Timestamp::now().as_nanosecond().unsigned_abs() as u64);
    u32::try_from(hasher.finish() % u64::from(most + 1)).unwrap_or(0)
}

/// How long a watch may stay quiet before kdrift asks whether the server went back: two minutes
/// (an etcd restore or a server swapped behind the address is rare, and each check is a list
/// request per quiet watch; at 30 s these were a fifth of the idle requests on realk8s).
static STALE_CHECK_MILLIS: AtomicU64 = AtomicU64::new(120_000);

/// Sets [`stale_check`] for the whole process (tests use a short one).
pub fn set_stale_check(every: Duration) {
    let millis = u64::try_from(every.as_millis()).unwrap_or(u64::MAX);
    STALE_CHECK_MILLIS.store(millis.max(1), Ordering::Relaxed);
}

/// After this long without a watch event, one cheap list tells whether the server is behind
/// what the watch showed: a server that went back answers a watch from the newer version with
/// silence, so nothing else would ever tell.
pub fn stale_check() -> Duration {
    Duration::from_millis(STALE_CHECK_MILLIS.load(Ordering::Relaxed))
}

/// The object's resourceVersion as a number (they are opaque, but every server's are numbers;
/// one that is not is never compared).
fn version_of<K: Resource>(object: &K) -> Option<u64> {
    object.meta().resource_version.as_deref()?.parse().ok()
}

/// Why the watch must list again, when the server's resourceVersion (of a one-item list) is
/// below the newest the watch showed.
async fn went_back<K>(api: &Api<K>, newest: Option<u64>) -> Option<String>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let newest = newest?;
    let list = api
        .list_metadata(&kube::api::ListParams::default().limit(1))
        .await
        .ok()?;
    let now: u64 = list.metadata.resource_version?.parse().ok()?;
    (now < newest)
        .then(|| format!("the API server is at resourceVersion {now}, behind the {newest} watched"))
}

/// A `504` whose cause is `ResourceVersionTooLarge`: the server has not reached the version
/// the watch resumes from, and may never.
fn is_too_large_version(err: &watcher::Error) -> bool {
    let status = match err {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s)) => s.as_ref(),
        watcher::Error::WatchError(s) => s.as_ref(),
        _ => return false,
    };
    status.code == 504 && status.message.contains("Too large resource version")
}

/// The health while listing again: reconnecting, with the reason.
fn relisting(reason: String, previous: &WatchHealth) -> WatchHealth {
    let since = match previous {
        WatchHealth::Reconnecting { since, .. } => *since,
        _ => Timestamp::now(),
    };
    WatchHealth::Reconnecting { since, reason }
}

fn map_event<K: Resource, T: Keyed>(
    ev: watcher::Event<K>,
    map: &impl Fn(K) -> Option<T>,
) -> Option<WatchUpdate<T>> {
    Some(match ev {
        watcher::Event::Apply(o) => match map(o) {
            Some(row) => WatchUpdate::Apply(row),
            None => return None,
        },
        // The row's own key: a StatefulSet's (or its pod's) is not a Deployment's.
        watcher::Event::Delete(o) => WatchUpdate::Delete(map(o)?.key().clone()),
        watcher::Event::Init => WatchUpdate::Init,
        watcher::Event::InitApply(o) => WatchUpdate::InitApply(map(o)?),
        watcher::Event::InitDone => WatchUpdate::InitDone,
    })
}

/// First wait before asking whether a failed watch's server answers again; doubled up to
/// [`PROBE_MAX`] while it does not. Probes run only while a watch is failing.
const PROBE_FIRST: std::time::Duration = std::time::Duration::from_secs(1);
const PROBE_MAX: std::time::Duration = std::time::Duration::from_secs(30);

/// True when the API server lets the watched resource be listed and watched again (a list of
/// one item's metadata, then a watch from its resourceVersion that is dropped at once): the
/// watcher's own retry will then succeed too. Watching is asked as well because RBAC can allow
/// `list` and refuse `watch`.
async fn server_answers<K>(api: &Api<K>) -> bool
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let params = kube::api::ListParams::default().limit(1);
    let answer = match api.list_metadata(&params).await {
        Ok(list) => {
            let version = list.metadata.resource_version.unwrap_or_default();
            let watch = kube::api::WatchParams::default().timeout(1);
            api.watch_metadata(&watch, &version).await.map(drop)
        }
        Err(e) => Err(e),
    };
    match answer {
        Ok(()) => true,
        Err(e) => {
            tracing::debug!(error = %e, "the server does not answer the failed watch yet");
            false
        }
    }
}

/// 403 → forbidden; anything else → reconnecting, keeping the time of the first failure.
fn health_of_error(
    err: &watcher::Error,
    scope: &NamespaceScope,
    previous: &WatchHealth,
) -> WatchHealth {
    let status = match err {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s)) => Some(s.as_ref()),
        watcher::Error::WatchError(s) => Some(s.as_ref()),
        _ => None,
    };
    if let Some(s) = status
        && s.code == 403
    {
        return WatchHealth::Forbidden {
            namespace: scope.as_namespace().map(str::to_string),
            message: s.message.clone(),
        };
    }
    let since = match previous {
        WatchHealth::Reconnecting { since, .. } => *since,
        _ => Timestamp::now(),
    };
    WatchHealth::Reconnecting {
        since,
        reason: err.to_string().replace('\n', " "),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::cluster::live::TableResource;
    use crate::cluster::rows::WorkloadKind;

    fn object<K: DeserializeOwned>(value: serde_json::Value) -> K {
        serde_json::from_str(&value.to_string()).unwrap()
    }

    /// A watch's deletion removes the row its object made: found by the soak, where deleted
    /// StatefulSets and DaemonSets stayed in the table until the next relist.
    /// The watchers' timeouts are spread over 44–53 s: a stalled watch is dropped within 58 s
    /// (the timeout plus kube-runtime's 5 s), leaving the resumed watch time to catch up within
    /// the minute, and watches started together do not end together.
    #[test]
    fn watch_timeouts_are_spread_and_stay_within_a_minute_of_silence() {
        assert_eq!(watch_timeout_secs(), WATCH_TIMEOUT_DEFAULT_SECS);
        assert!(
            watch_timeout_max_secs() + 5 <= 58,
            "{}",
            watch_timeout_max_secs()
        );
        let drawn: std::collections::BTreeSet<u32> =
            (0..200).map(|_| watch_timeout_jittered()).collect();
        assert!(
            drawn
                .iter()
                .all(|t| (WATCH_TIMEOUT_DEFAULT_SECS..=watch_timeout_max_secs()).contains(t)),
            "{drawn:?}"
        );
        assert!(drawn.len() >= 5, "not spread: {drawn:?}");
        assert_eq!(jitter(0), 0);
    }

    #[test]
    fn a_deletion_names_the_row_of_its_own_kind() {
        let sts: LiveStatefulSet = object(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "shop", "resourceVersion": "7"},
            "spec": {"replicas": 1, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                "template": {"metadata": {"labels": {"app": "db"}},
                    "spec": {"containers": [{"name": "c", "image": "db:1"}]}}}
        }));
        let applied = map_event(watcher::Event::Apply(sts.clone()), &|s: LiveStatefulSet| {
            Some(s.into_row())
        });
        let Some(WatchUpdate::Apply(row)) = applied else {
            panic!("{applied:?}");
        };
        let deleted = map_event(watcher::Event::Delete(sts), &|s: LiveStatefulSet| {
            Some(s.into_row())
        });
        assert_eq!(deleted, Some(WatchUpdate::Delete(row.row.key.clone())));
        assert_eq!(row.row.kind(), WorkloadKind::StatefulSet);

        // A StatefulSet's pod, in the detail view: a Pod's key, its owner's kind beside it.
        let pod: Pod = object(serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "db-0", "namespace": "shop", "resourceVersion": "8",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                    "uid": "u", "controller": true}]},
            "spec": {"containers": [{"name": "c", "image": "db:1"}]}
        }));
        let deleted = map_event(watcher::Event::Delete(pod.clone()), &|p: Pod| {
            Some(PodRow::from_object(&p))
        });
        let row = PodRow::from_object(&pod);
        assert_eq!(row.owner_kind, Some(WorkloadKind::StatefulSet));
        assert_eq!(
            row.key,
            crate::manifest::ObjectKey::new("", "Pod", "shop", "db-0")
        );
        assert_eq!(deleted, Some(WatchUpdate::Delete(row.key)));
    }
}
