//! Fault injection for tests, on the server handle: drop every watch stream, stall them (open
//! and silent), answer watches with `410 Gone`, forbid a namespace, a resource type or the list
//! of namespaces (403), break the OpenAPI v3 documents (403, 404, malformed), add latency to
//! every reply.
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

/// The faults in force; cheap to clone (shared inside).
#[derive(Clone)]
pub struct Faults {
    inner: Arc<Inner>,
}

struct Inner {
    /// Bumped to end every open watch stream.
    watch_epoch: watch::Sender<u64>,
    /// Bumped to stall every open watch stream.
    stall_epoch: watch::Sender<u64>,
    /// Watch streams stalled and still open.
    stalled: AtomicUsize,
    watch_gone: AtomicBool,
    forbidden: Mutex<HashSet<String>>,
    /// Listing namespaces (cluster-scoped) is refused, as RBAC with only namespaced Roles does.
    namespace_list_forbidden: AtomicBool,
    /// Resource types (`group/plural`, `""/secrets`) every request for gets a 403.
    forbidden_resources: Mutex<HashSet<String>>,
    openapi: Mutex<OpenApiFault>,
    latency_micros: AtomicU64,
    /// Reads served, per plural and what they were (see [`Read`]).
    pages: Mutex<std::collections::HashMap<(String, Read), usize>>,
    /// The label selector of each list page served: (plural, selector).
    selectors: Mutex<Vec<(String, String)>>,
}

/// What a read of a resource type was, as the demo counts them for tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Read {
    /// A list page without a selector, with room for more than one item.
    Listed,
    /// One object by name.
    ByName,
}

/// How `/openapi/v3` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpenApiFault {
    #[default]
    Served,
    /// 403, as for a user RBAC does not let read it.
    Forbidden,
    /// 404, as a server without OpenAPI v3 (before 1.24, or turned off).
    Missing,
    /// Documents that are not JSON (a proxy's error page).
    Broken,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            inner: Arc::new(Inner {
                watch_epoch: watch::channel(0).0,
                stall_epoch: watch::channel(0).0,
                stalled: AtomicUsize::new(0),
                watch_gone: AtomicBool::new(false),
                forbidden: Mutex::new(HashSet::new()),
                namespace_list_forbidden: AtomicBool::new(false),
                forbidden_resources: Mutex::new(HashSet::new()),
                openapi: Mutex::new(OpenApiFault::Served),
                latency_micros: AtomicU64::new(0),
                pages: Mutex::new(std::collections::HashMap::new()),
                selectors: Mutex::new(Vec::new()),
            }),
        }
    }
}

impl Faults {
    /// Counts a read of `plural` served.
    pub(crate) fn note_read(&self, plural: &str, read: Read) {
        let mut pages = self.inner.pages.lock().unwrap_or_else(|e| e.into_inner());
        *pages.entry((plural.to_owned(), read)).or_default() += 1;
    }

    fn reads(&self, plural: &str, read: Read) -> usize {
        let pages = self.inner.pages.lock().unwrap_or_else(|e| e.into_inner());
        pages.get(&(plural.to_owned(), read)).copied().unwrap_or(0)
    }

    /// List pages of `plural` served without a label or field selector and with room for more
    /// than one item (a one-item page, as a count of a kind, is left out): tests see whether a
    /// client listed a whole kind or read objects by name.
    pub fn pages_listed(&self, plural: &str) -> usize {
        self.reads(plural, Read::Listed)
    }

    /// The label selectors of the list pages of `plural` served, in order.
    pub fn selectors_served(&self, plural: &str) -> Vec<String> {
        let served = self
            .inner
            .selectors
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        served
            .iter()
            .filter(|(p, _)| p == plural)
            .map(|(_, selector)| selector.clone())
            .collect()
    }

    /// Notes a list page of `plural` served for `selector`.
    pub(crate) fn note_selected(&self, plural: &str, selector: &str) {
        let mut served = self
            .inner
            .selectors
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        served.push((plural.to_owned(), selector.to_owned()));
    }

    /// Objects of `plural` read by name (found or not).
    pub fn read_by_name(&self, plural: &str) -> usize {
        self.reads(plural, Read::ByName)
    }

    /// End every open watch stream now (as a server restart or a load balancer would);
    /// clients reconnect from their last resourceVersion.
    pub fn drop_watches(&self) {
        self.inner.watch_epoch.send_modify(|e| *e += 1);
    }

    /// Stall every open watch stream, as a half-open connection behind a load balancer or a
    /// stuck proxy does: the connection stays open and sends nothing more (no event, no
    /// bookmark, no end at `timeoutSeconds`) until the client closes it or the server stops.
    /// Watches opened afterwards are served as usual, so a client that notices the silence and
    /// watches again recovers.
    pub fn stall_watches(&self) {
        self.inner.stall_epoch.send_modify(|e| *e += 1);
    }

    /// Changes when open watches must stall.
    pub fn stall_epoch(&self) -> watch::Receiver<u64> {
        self.inner.stall_epoch.subscribe()
    }

    /// How many stalled watch streams are still open (their clients have not left).
    pub fn stalled_watches(&self) -> usize {
        self.inner.stalled.load(Ordering::SeqCst)
    }

    /// Counts one stalled stream until the guard drops.
    pub(crate) fn stalled_guard(&self) -> StalledGuard {
        self.inner.stalled.fetch_add(1, Ordering::SeqCst);
        StalledGuard(self.clone())
    }

    /// While `true`, every watch from a resourceVersion gets an `ERROR` event with a `410
    /// Expired` Status (as after etcd compaction), and open watches get one and end.
    pub fn set_watch_gone(&self, gone: bool) {
        self.inner.watch_gone.store(gone, Ordering::SeqCst);
        if gone {
            self.drop_watches();
        }
    }

    pub fn watch_gone(&self) -> bool {
        self.inner.watch_gone.load(Ordering::SeqCst)
    }

    /// Every request in `namespace` (and every list or watch across all namespaces) gets a
    /// 403, as for a user whose RBAC grants only the other namespaces.
    pub fn forbid_namespace(&self, namespace: &str) {
        self.forbidden().insert(namespace.to_string());
        // Open watches that can see the namespace end, so clients meet the 403 on reconnect.
        self.drop_watches();
    }

    pub fn allow_namespace(&self, namespace: &str) {
        self.forbidden().remove(namespace);
    }

    /// Is `namespace` forbidden? `None` asks about the cluster scope (all namespaces).
    pub fn is_forbidden(&self, namespace: Option<&str>) -> bool {
        let forbidden = self.forbidden();
        match namespace {
            Some(ns) => forbidden.contains(ns),
            None => !forbidden.is_empty(),
        }
    }

    /// While `true`, listing (and watching) the namespaces themselves gets a 403, as for a user
    /// whose RBAC has Roles in some namespaces but no ClusterRole to list them.
    pub fn set_namespace_list_forbidden(&self, forbidden: bool) {
        self.inner
            .namespace_list_forbidden
            .store(forbidden, Ordering::SeqCst);
    }

    pub fn namespace_list_forbidden(&self) -> bool {
        self.inner.namespace_list_forbidden.load(Ordering::SeqCst)
    }

    /// Every request for resource type `plural` of `group` gets a 403 (a user whose RBAC does
    /// not grant that type, such as Secrets); a subresource is named as RBAC names it
    /// (`pods/log`), and then only it is refused.
    pub fn forbid_resource(&self, group: &str, plural: &str) {
        self.inner
            .forbidden_resources
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(format!("{group}/{plural}"));
        self.drop_watches();
    }

    /// Lift [`Faults::forbid_resource`].
    pub fn allow_resource(&self, group: &str, plural: &str) {
        self.inner
            .forbidden_resources
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&format!("{group}/{plural}"));
    }

    pub fn is_resource_forbidden(&self, group: &str, plural: &str) -> bool {
        self.inner
            .forbidden_resources
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&format!("{group}/{plural}"))
    }

    /// How `/openapi/v3` answers from now on.
    pub fn set_openapi(&self, fault: OpenApiFault) {
        *self.inner.openapi.lock().unwrap_or_else(|e| e.into_inner()) = fault;
    }

    pub fn openapi(&self) -> OpenApiFault {
        *self.inner.openapi.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait this long before answering each request (and each watch before its first event).
    pub fn set_latency(&self, latency: Duration) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.inner.latency_micros.store(micros, Ordering::SeqCst);
    }

    pub fn latency(&self) -> Duration {
        Duration::from_micros(self.inner.latency_micros.load(Ordering::SeqCst))
    }

    /// Changes when watches must end.
    pub fn watch_epoch(&self) -> watch::Receiver<u64> {
        self.inner.watch_epoch.subscribe()
    }

    fn forbidden(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.inner
            .forbidden
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
}

/// One stalled watch stream, counted in [`Faults::stalled_watches`] while it lives.
pub(crate) struct StalledGuard(Faults);

impl Drop for StalledGuard {
    fn drop(&mut self) {
        self.0.inner.stalled.fetch_sub(1, Ordering::SeqCst);
    }
}
