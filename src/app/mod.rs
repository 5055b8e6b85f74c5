//! The app: all state in one place and `update(&mut App, Message) -> Vec<Command>` (pure: no IO,
//! no async, no clock — the runtime stamps `now`).
//!
//! - [`cache`]: the cluster rows, with relist semantics.
//! - [`table`]: the sorted, filtered list of Deployments and the selection.
//! - [`keys`]: what each key does in each mode.
//! - [`detail`]: revisions, pods, events and conditions of one Deployment, assembled for the screen.
//! - [`drift`](mod@drift): drift per row as watch events arrive, manifest reloads, the `d` diff.
//! - [`accept`](mod@accept): the `a` view: fields to accept, the file diff, enter to commit.
//! - [`revert`](mod@revert): the `r` view — dry-run preview, confirmation, outcome.
//! - [`picker`]: the `:ns` and `:ctx` pickers.
//! - [`objects`]: objects of every other kind the manifests use, their drift as they are watched.
//! - [`logs`]: the `l` log view of a pod: ring buffer, follow and pause, search, wrap.
//! - [`drift_list`]: the `:drift` view, every object of any kind that is drifted, missing or in
//!   error.
pub mod accept;
pub mod cache;
pub mod detail;
pub mod drift;
pub mod drift_list;
pub mod keys;
pub mod logs;
pub mod objects;
pub mod picker;
pub mod revert;
pub mod table;
#[cfg(test)]
pub(crate) mod test_keys;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crossterm::event::KeyEvent;
use jiff::Timestamp;

use crate::cluster::client::NamespaceScope;
use crate::cluster::kinds::ServedKind;
use crate::cluster::live::{Fetched, FetchedObject, LiveKinds, LiveRow};
use crate::cluster::rows::ObjectKey;
use crate::cluster::watch::{ClusterEvent, ClusterMessage, WatchHealth, WatchUpdate, WatchedKind};
use crate::manifest::ManifestIndex;
use crate::manifest::reload::FileChange;
use cache::{Change, ClusterCache, deployment_update};
use table::TableView;

/// The identity of an object of any kind (group, kind, namespace, name); the table's rows use
/// the shorter [`ObjectKey`] of a Deployment.
pub type ManifestKey = crate::manifest::ObjectKey;

/// Everything that can happen to the app, from any source.
#[derive(Debug, Clone)]
pub enum Message {
    Key(KeyEvent),
    Resize {
        width: u16,
        height: u16,
    },
    Cluster(ClusterMessage),
    /// The runtime switched to a new connection or namespace scope (reply to `Command::Switch`).
    Switched {
        epoch: u64,
        context: String,
        contexts: Vec<String>,
        scope: NamespaceScope,
    },
    /// A `Command::Switch` failed; the previous connection stays.
    SwitchFailed(String),
    /// The cluster's namespaces, sorted, for the `:ns` picker (reply to `Command::ListNamespaces`),
    /// or why they could not be listed.
    Namespaces(Result<Vec<String>, String>),
    /// Something found outside the app (a bad theme file, where the demo cluster runs), shown in
    /// the status bar until the next key.
    Notice(Flash),
    /// The manifests were loaded (off the UI thread) at start.
    Manifests(Arc<ManifestIndex>),
    /// Manifest files changed on disk and were re-read.
    ManifestsChanged(Vec<FileChange>),
    /// Live objects fetched for `Command::FetchLive`.
    LiveFetched(Vec<Fetched>),
    /// The kinds of the manifests mapped through discovery (reply to `Command::MapKinds`).
    KindsMapped(Result<objects::MappedKinds, String>),
    /// Objects of other kinds fetched for `Command::FetchObjects`.
    ObjectsFetched(Vec<FetchedObject>),
    /// The whole live object for `Command::FetchDiff`.
    DiffFetched(FetchedObject),
    /// The live object, manifest file and git state for `Command::PrepareAccept`.
    AcceptReady(Box<accept::AcceptFetched>),
    /// The end of `Command::Accept`: what was committed, or why nothing was.
    Accepted {
        key: ManifestKey,
        result: Result<String, String>,
    },
    /// The server-side dry run for `Command::PreviewRevert` (the error as the headless command
    /// words it).
    RevertPreviewed {
        id: u64,
        result: Result<revert::PreviewShown, String>,
    },
    /// The answer to `Command::Revert`.
    Reverted {
        id: u64,
        result: Result<revert::RevertDone, String>,
    },
    /// What the log stream of `Command::OpenLog` tagged `epoch` read or met.
    Log {
        epoch: u64,
        event: crate::cluster::logs::LogEvent,
    },
}

/// What the runtime must do for the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Quit,
    /// ctrl-z: restore the terminal, stop the process, re-enter on resume.
    Suspend,
    /// Restart the watchers on another context (`None` = the same) and namespace scope.
    Switch {
        context: Option<String>,
        scope: NamespaceScope,
    },
    /// Watch ReplicaSets, Pods and Events of one namespace for the detail view, tagging their
    /// messages with `epoch` (replaces any detail watchers).
    WatchDetail {
        namespace: String,
        epoch: u64,
    },
    /// The detail view closed: stop its watchers.
    StopDetail,
    /// `:ns` without a name: list the cluster's namespaces off the loop; answer with
    /// `Message::Namespaces`.
    ListNamespaces,
    /// GET (or list) these Deployments and answer with `Message::LiveFetched`: their manifests
    /// changed and no live object is kept to compare again.
    FetchLive(Vec<ObjectKey>),
    /// Map these `apiVersion`s and kinds (of the manifests) through discovery and read their
    /// schemas; answer with `Message::KindsMapped`.
    MapKinds(std::collections::BTreeSet<(String, String)>),
    /// Watch the objects of these kinds (replacing the watchers of the kinds watched before).
    WatchObjects(Vec<ServedKind>),
    /// GET these objects, each in its manifest's `apiVersion`; answer with
    /// `Message::ObjectsFetched`.
    FetchObjects(Vec<(ManifestKey, String)>),
    /// GET one object (in its manifest's `apiVersion`) for the diff view; answer with
    /// `Message::DiffFetched`.
    FetchDiff(ManifestKey, String),
    /// GET one object, read its manifest `file` and ask git about it (under the manifests
    /// `root`) for the accept view; answer with `Message::AcceptReady`.
    PrepareAccept {
        key: ManifestKey,
        api_version: String,
        file: std::path::PathBuf,
        root: std::path::PathBuf,
        /// For a kustomize root's object, the other files its root reads (the accept may edit
        /// an overlay, a patch or a generator source rather than `file`).
        others: Vec<std::path::PathBuf>,
    },
    /// Check the live values again, write the file and commit it; answer with
    /// `Message::Accepted`.
    Accept(Box<accept::AcceptRequest>),
    /// Server-side dry run of reverting `key` to its manifest; answer with
    /// `Message::RevertPreviewed` tagged `id`.
    PreviewRevert {
        id: u64,
        key: ManifestKey,
    },
    /// Revert `key` as previewed under `id`; answer with `Message::Reverted`.
    Revert {
        id: u64,
        key: ManifestKey,
    },
    /// Stream a container's log (replacing any log stream), answering with `Message::Log`
    /// tagged `epoch`.
    OpenLog {
        epoch: u64,
        request: crate::cluster::logs::LogRequest,
    },
    /// The log view closed: stop its stream.
    StopLog,
}

/// The drift slot of a row; filled by the drift engine once it lands.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DriftSummary {
    #[default]
    NotComputed,
    InSync,
    Fields(usize),
    Missing,
    /// Live, without a manifest.
    Unmanaged,
    Error(String),
}

/// Which screen is showing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Screen {
    Table,
    Detail {
        key: ObjectKey,
        scroll: u16,
    },
    /// `d`: manifest against live.
    Diff(Box<drift::DiffView>),
    /// `:problems`: what could not be read in the manifests.
    Problems {
        scroll: u16,
    },
    /// `a`: the fields to accept into the manifest and the file diff.
    Accept(Box<accept::AcceptView>),
    /// `r`: the dry-run preview of a revert, then its confirmation.
    Revert(Box<revert::RevertView>),
    /// `:drift`: every object of any kind that is drifted, missing or in error.
    DriftList(Box<drift_list::DriftListView>),
    /// `:ns` or `:ctx` alone: choose a namespace or context.
    Pick(Box<picker::Picker>),
    /// `l` on a pod in the detail view: its log.
    Log(Box<logs::LogView>),
}

/// The pod selected in the detail view (`j`/`k` move it, `l` opens its log).
#[derive(Debug, Clone, Default)]
pub struct PodCursor {
    /// Its place among the detail's pods (newest first).
    pub index: usize,
    /// The view scrolls to keep it in sight (after `j`/`k`; paging frees the view).
    pub pinned: bool,
    /// The scroll the last frame drew with (the drawing moves it to keep a pinned cursor in
    /// sight; paging goes on from there).
    pub shown: std::cell::Cell<u16>,
}

/// A line being typed at the bottom: `/` filter or `:` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompt {
    Filter(String),
    Command(String),
}

/// A one-line message in the status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    pub text: String,
    pub error: bool,
}

#[derive(Debug, Clone)]
pub struct App {
    pub context: String,
    pub contexts: Vec<String>,
    pub scope: NamespaceScope,
    pub readonly: bool,
    /// Which generation of the table's (Deployment) watcher is current.
    pub epoch: u64,
    /// Which generation of the detail view's watchers is current.
    pub detail_epoch: u64,
    /// Which log stream is current.
    pub log_epoch: u64,
    pub pod_cursor: PodCursor,
    /// The id of the latest revert view opened (late answers for older ones are dropped).
    pub revert_seq: u64,
    pub cache: ClusterCache,
    pub health: BTreeMap<WatchedKind, WatchHealth>,
    /// Deployment watch health per namespace, while the all-namespaces watch is refused and one
    /// watcher per namespace stands in (empty otherwise).
    pub ns_health: BTreeMap<Arc<str>, WatchHealth>,
    pub drift: HashMap<ObjectKey, DriftSummary>,
    /// The newest writer of each drifted Deployment's drifted fields (for `:drift`).
    pub newest: HashMap<ObjectKey, crate::drift::Attribution>,
    /// The manifests, once loaded (`None` before, or when there are none to watch).
    pub manifests: Option<Arc<ManifestIndex>>,
    /// The kinds the cluster serves for the manifests and their schemas, once mapped.
    pub kinds: Option<LiveKinds>,
    /// Objects of the other kinds of the manifests.
    pub objects: objects::Objects,
    /// A `Command::MapKinds` is under way.
    pub mapping: bool,
    /// The `:drift` view's place while a view opened from it shows.
    pub drift_list: Option<drift_list::DriftListView>,
    /// The diff, accept or revert view showing was opened from `:drift` (`esc` goes back there).
    pub from_list: bool,
    pub table: TableView,
    pub screen: Screen,
    pub prompt: Option<Prompt>,
    pub help: bool,
    /// First help line shown, when the help is taller than the screen.
    pub help_scroll: usize,
    pub flash: Option<Flash>,
    pub width: u16,
    pub height: u16,
    /// The time ages are measured against; set by the runtime before each frame.
    pub now: Timestamp,
    /// Something on screen changed since the last frame.
    pub dirty: bool,
}

impl App {
    pub fn new(
        context: impl Into<String>,
        contexts: Vec<String>,
        scope: NamespaceScope,
        now: Timestamp,
    ) -> App {
        App {
            context: context.into(),
            contexts,
            scope,
            readonly: false,
            epoch: 0,
            detail_epoch: 0,
            log_epoch: 0,
            pod_cursor: PodCursor::default(),
            revert_seq: 0,
            cache: ClusterCache::default(),
            health: BTreeMap::from([(WatchedKind::Deployments, WatchHealth::Syncing)]),
            ns_health: BTreeMap::new(),
            drift: HashMap::new(),
            newest: HashMap::new(),
            manifests: None,
            kinds: None,
            objects: objects::Objects::default(),
            mapping: false,
            drift_list: None,
            from_list: false,
            table: TableView::default(),
            screen: Screen::Table,
            prompt: None,
            help: false,
            help_scroll: 0,
            flash: None,
            width: 80,
            height: 24,
            now,
            dirty: true,
        }
    }

    /// Bring derived state (the sorted, filtered row list) up to date; call once before drawing.
    pub fn prepare_frame(&mut self) {
        self.table.refresh(&self.cache, self.table_height());
    }

    /// Table body rows that fit on screen (frame minus header, borders, status bar).
    pub fn table_height(&self) -> usize {
        usize::from(self.height.saturating_sub(5)).max(1)
    }

    pub fn drift_of(&self, key: &ObjectKey) -> &DriftSummary {
        const NOT_COMPUTED: &DriftSummary = &DriftSummary::NotComputed;
        self.drift.get(key).unwrap_or(NOT_COMPUTED)
    }

    /// The worst watch health, for the status bar: forbidden, then reconnecting, then syncing.
    pub fn overall_health(&self) -> WatchHealth {
        let rank = |h: &WatchHealth| match h {
            WatchHealth::Forbidden { .. } => 0,
            WatchHealth::Reconnecting { .. } => 1,
            WatchHealth::Syncing => 2,
            WatchHealth::Connected => 3,
        };
        self.health
            .values()
            .chain(self.ns_health.values())
            .chain(self.objects.health.values())
            .min_by_key(|h| rank(h))
            .cloned()
            .unwrap_or(WatchHealth::Connected)
    }

    /// Open the detail view of `key`, watching its namespace's ReplicaSets, Pods and Events.
    pub fn open_detail(&mut self, key: ObjectKey) -> Vec<Command> {
        let namespace = key.namespace.to_string();
        self.screen = Screen::Detail { key, scroll: 0 };
        self.pod_cursor = PodCursor::default();
        self.clear_detail();
        self.detail_epoch += 1;
        for kind in [
            WatchedKind::ReplicaSets,
            WatchedKind::Pods,
            WatchedKind::Events,
        ] {
            self.health.insert(kind, WatchHealth::Syncing);
        }
        vec![Command::WatchDetail {
            namespace,
            epoch: self.detail_epoch,
        }]
    }

    /// Back to the table; the detail rows are dropped with their watchers.
    pub fn close_detail(&mut self) -> Vec<Command> {
        // A log view closes with the detail view it was opened from.
        let mut commands = self.close_log();
        if let Screen::Revert(view) = &self.screen {
            // A revert view closes with the screen it was opened from.
            self.screen = view.back.clone();
        }
        if matches!(
            self.screen,
            Screen::Diff(_) | Screen::Problems { .. } | Screen::Accept(_)
        ) {
            // These views watch nothing.
            self.screen = Screen::Table;
            return commands;
        }
        if !matches!(self.screen, Screen::Detail { .. }) {
            return commands;
        }
        self.screen = Screen::Table;
        self.clear_detail();
        self.detail_epoch += 1;
        commands.push(Command::StopDetail);
        commands
    }

    fn clear_detail(&mut self) {
        self.cache.replicasets = Default::default();
        self.cache.pods = Default::default();
        self.cache.events = Default::default();
        for kind in [
            WatchedKind::ReplicaSets,
            WatchedKind::Pods,
            WatchedKind::Events,
        ] {
            self.health.remove(&kind);
        }
    }

    fn apply_cluster(&mut self, msg: ClusterMessage) {
        let current = if msg.event.is_table() {
            self.epoch
        } else {
            self.detail_epoch
        };
        if msg.epoch != current {
            return;
        }
        let changed = match msg.event {
            ClusterEvent::Deployments(updates) => self.apply_deployments(None, updates),
            ClusterEvent::DeploymentsLive(updates) => self.apply_live(None, updates),
            ClusterEvent::NamespaceDeployments(ns, updates) => self.apply_live(Some(&ns), updates),
            ClusterEvent::NamespaceHealth(ns, health) => {
                self.ns_health.insert(ns, health.clone()) != Some(health)
            }
            ClusterEvent::AllNamespacesWatch => {
                let had = !self.ns_health.is_empty();
                self.ns_health.clear();
                had
            }
            ClusterEvent::ReplicaSets(updates) => {
                fold(updates, |u| self.cache.replicasets.apply(u)).any()
            }
            ClusterEvent::Pods(updates) => fold(updates, |u| self.cache.pods.apply(u)).any(),
            ClusterEvent::Events(updates) => fold(updates, |u| self.cache.events.apply(u)).any(),
            ClusterEvent::Health(kind, health) => {
                self.health.insert(kind, health.clone()) != Some(health)
            }
            ClusterEvent::Objects(kind, updates) => self.apply_objects(kind, updates),
            ClusterEvent::ObjectHealth(kind, health) => self.object_health(kind, health),
        };
        self.dirty |= changed;
    }

    /// Deployments with their drift extracts, from the watcher of one namespace or of the whole
    /// scope (`None`): drift first (the extracts are dropped), then the rows.
    fn apply_live(
        &mut self,
        namespace: Option<&Arc<str>>,
        updates: Vec<WatchUpdate<LiveRow>>,
    ) -> bool {
        let rows = self.drift_from_watch(updates);
        let listed = rows.iter().any(|u| matches!(u, WatchUpdate::InitDone));
        // The keys of the batch: the only ones whose missing row may change, unless a list
        // ended (rows it did not list went at once).
        let keys: Vec<ObjectKey> = if listed {
            Vec::new()
        } else {
            rows.iter()
                .filter_map(|u| match u {
                    WatchUpdate::Apply(r) | WatchUpdate::InitApply(r) => Some(r.key.clone()),
                    WatchUpdate::Delete(k) => Some(k.clone()),
                    WatchUpdate::Init | WatchUpdate::InitDone => None,
                })
                .collect()
        };
        self.apply_deployments(namespace, rows);
        if listed {
            self.reconcile_missing();
            self.sync_missing_rows();
        } else {
            self.sync_missing_keys(&keys);
        }
        // A drift cell may change while its row does not.
        true
    }

    /// Apply a batch of Deployment updates, from the watcher of one namespace or of the whole
    /// scope (`None`), moving each changed row in the table's order (O(log n) each).
    fn apply_deployments(
        &mut self,
        namespace: Option<&Arc<str>>,
        updates: Vec<WatchUpdate<crate::cluster::rows::DeploymentRow>>,
    ) -> bool {
        let rows = &mut self.cache.deployments;
        let table = &mut self.table;
        let change = fold(updates, |u| {
            let u = deployment_update(u);
            let key = match &u {
                WatchUpdate::Apply(e) | WatchUpdate::InitApply(e) => Some(e.row.key.clone()),
                WatchUpdate::Delete(k) => Some(k.clone()),
                WatchUpdate::Init | WatchUpdate::InitDone => None,
            };
            let before = key
                .as_ref()
                .and_then(|k| rows.get(k))
                .map(|e| table.placement(e));
            let change = match namespace {
                Some(ns) => rows.apply_in(ns, u),
                None => rows.apply(u),
            };
            match &key {
                Some(k) => {
                    let after = rows.get(k).map(|e| table.placement(e));
                    table.row_changed(k, before, after);
                }
                // A relist began or ended and dropped rows at once.
                None if change == Change::Membership => table.mark_stale(),
                None => {}
            }
            change
        });
        change.any()
    }
}

/// Apply a batch; the biggest change wins.
fn fold<T>(updates: Vec<T>, mut apply: impl FnMut(T) -> cache::Change) -> cache::Change {
    updates
        .into_iter()
        .fold(cache::Change::Nothing, |acc, u| acc.max(apply(u)))
}

/// The one state transition.
pub fn update(app: &mut App, msg: Message) -> Vec<Command> {
    match msg {
        Message::Cluster(m) => {
            app.apply_cluster(m);
            Vec::new()
        }
        Message::Key(key) => {
            app.dirty = true;
            keys::handle_key(app, key)
        }
        Message::Resize { width, height } => {
            app.width = width;
            app.height = height;
            app.table.mark_stale();
            app.dirty = true;
            Vec::new()
        }
        Message::Switched {
            epoch,
            context,
            contexts,
            scope,
        } => {
            app.epoch = epoch;
            app.context = context;
            app.contexts = contexts;
            app.scope = scope;
            app.cache = ClusterCache::default();
            app.health = BTreeMap::from([(WatchedKind::Deployments, WatchHealth::Syncing)]);
            app.ns_health.clear();
            app.drift.clear();
            app.newest.clear();
            app.objects = objects::Objects::default();
            app.table.missing.clear();
            let mut commands = app.close_detail();
            // Another cluster may serve other kinds: map them again, and watch them anew.
            app.kinds = None;
            app.mapping = false;
            commands.extend(app.map_kinds_if_new());
            app.table.reset_selection();
            app.table.mark_stale();
            app.dirty = true;
            commands
        }
        Message::SwitchFailed(text) => {
            app.flash = Some(Flash { text, error: true });
            app.dirty = true;
            Vec::new()
        }
        Message::Namespaces(answer) => {
            app.namespaces_listed(answer);
            Vec::new()
        }
        Message::Notice(flash) => {
            app.flash = Some(flash);
            app.dirty = true;
            Vec::new()
        }
        Message::Manifests(index) => app.manifests_loaded(index),
        Message::ManifestsChanged(changes) => app.manifests_changed(changes),
        Message::LiveFetched(fetched) => {
            app.live_fetched(fetched);
            Vec::new()
        }
        Message::KindsMapped(mapped) => app.kinds_mapped(mapped),
        Message::ObjectsFetched(fetched) => {
            app.objects_fetched(fetched);
            Vec::new()
        }
        Message::DiffFetched(fetched) => {
            app.diff_fetched(fetched);
            Vec::new()
        }
        Message::AcceptReady(fetched) => app.accept_ready(*fetched),
        Message::Accepted { key, result } => app.accepted(key, result),
        Message::RevertPreviewed { id, result } => app.revert_previewed(id, result),
        Message::Reverted { id, result } => app.reverted(id, result),
        Message::Log { epoch, event } => {
            app.log_event(epoch, event);
            Vec::new()
        }
    }
}
