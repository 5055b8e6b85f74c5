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
use crate::cluster::rows::{ObjectKey, WorkloadKind};
use crate::cluster::watch::{ClusterEvent, ClusterMessage, WatchHealth, WatchUpdate, WatchedKind};
use crate::manifest::ManifestIndex;
use crate::manifest::reload::FileChange;
use cache::{Change, ClusterCache, WorkloadEntry, workload_update};
use table::TableView;

/// The identity of an object of any kind (group, kind, namespace, name); the table's rows use
/// the shorter [`ObjectKey`] of a Deployment.
pub type ManifestKey = crate::manifest::ObjectKey;

/// Everything that can happen to the app, from any source.
#[derive(Debug, Clone)]
pub enum Message {
    Key(KeyEvent),
    /// What the owners' Applications, Kustomizations and HelmReleases say (see
    /// [`Command::ReadReconcilers`]).
    /// `epoch`: the table watchers' generation when they were asked (an answer about the cluster
    /// left by `:ctx` is dropped).
    Reconcilers {
        epoch: u64,
        read: BTreeMap<crate::gitops::Owner, crate::gitops::Reconciler>,
    },
    /// What the pods of rows short of ready ones say is wrong (see [`Command::ExplainStalls`]).
    StallsExplained(Vec<(ObjectKey, Option<String>)>),
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
    /// Read the GitOps owners seen on live objects (`Message::Reconcilers`).
    ReadReconcilers(Vec<crate::gitops::Owner>),
    /// List the pods of rows that stalled or lack ready pods and say why they are not ready
    /// (`Message::StallsExplained`).
    ExplainStalls(Vec<Stalled>),
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
    /// Its place among the detail's pods (newest first), when it was selected.
    pub index: usize,
    /// The selected pod's name: a pod that comes or goes before it moves its place, not the
    /// selection (`index` stands in when the pod is gone).
    pub name: Option<std::sync::Arc<str>>,
    /// The view scrolls to keep it in sight (after `j`/`k`; paging frees the view).
    pub pinned: bool,
    /// The scroll the last frame drew with (the drawing moves it to keep a pinned cursor in
    /// sight; paging goes on from there).
    pub shown: std::cell::Cell<u16>,
}

impl PodCursor {
    /// The selected pod's place among `names` (the detail's pods, newest first): where the
    /// selected pod is now, else its old place (clamped).
    pub fn position<'a>(&self, names: impl Iterator<Item = &'a str>) -> usize {
        let mut count = 0;
        for (i, name) in names.enumerate() {
            if self.name.as_deref() == Some(name) {
                return i;
            }
            count = i + 1;
        }
        self.index.min(count.saturating_sub(1))
    }

    /// Selects the pod at `index` of `names`.
    pub fn select<'a>(&mut self, index: usize, mut names: impl Iterator<Item = &'a str>) {
        self.index = index;
        self.name = names.nth(index).map(std::sync::Arc::from);
        self.pinned = true;
    }
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
    /// Workload watch health per kind and namespace, while the all-namespaces watch is refused and one
    /// watcher per namespace stands in (empty otherwise).
    pub ns_health: BTreeMap<(WorkloadKind, Arc<str>), WatchHealth>,
    /// When rows without a progress deadline become stuck if nothing moves (see
    /// [`cache::WorkloadEntry::stall_deadline`]), soonest first.
    pub stalls: std::collections::BTreeSet<(Timestamp, ObjectKey)>,
    /// What each GitOps owner seen on a live object says it will do (see [`crate::gitops`]).
    pub reconcilers: BTreeMap<crate::gitops::Owner, crate::gitops::Reconciler>,
    /// Owners asked about (each once per connection), and those to ask at the next frame.
    owners_asked: std::collections::BTreeSet<crate::gitops::Owner>,
    /// When the owners were last asked about (all of them again every [`RECONCILER_REFRESH`]).
    reconcilers_asked_at: Option<Timestamp>,
    owners_pending: Vec<crate::gitops::Owner>,
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

/// Whether a view `width`×`height` keeps only the rule with its title at the top: borders all
/// round would leave a 20×5 terminal (a 3-row body) one line of content, or none in a table.
pub fn bare_frame(width: u16, height: u16) -> bool {
    width < 40 || height < 6
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
            health: table_health(),
            ns_health: BTreeMap::new(),
            stalls: Default::default(),
            reconcilers: BTreeMap::new(),
            owners_asked: Default::default(),
            reconcilers_asked_at: None,
            owners_pending: Vec::new(),
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
    /// Before each frame (with `now` set): rows that stalled turn stuck, the table's order and
    /// selection are brought up to date, and the pods of rows that stalled or (on screen) lack
    /// ready pods are asked why (the commands).
    pub fn prepare_frame(&mut self) -> Vec<Command> {
        let mut ask = self.expire_stalls();
        self.table.refresh(&self.cache, self.table_height());
        if matches!(self.screen, Screen::Table) {
            // Only the rows due are copied out (most frames: none, no allocation).
            let now = self.now;
            let workloads = &self.cache.workloads;
            let keys: Vec<ObjectKey> = self
                .table
                .window(self.table.offset, self.table_height())
                .filter(|key| {
                    workloads
                        .get(key)
                        .and_then(WorkloadEntry::explain_at)
                        .is_some_and(|at| at <= now)
                })
                .cloned()
                .collect();
            for key in keys {
                let Some(entry) = self.cache.workloads.set_mut(key.kind).get_mut(&key) else {
                    continue;
                };
                if entry.explain_at().is_some_and(|at| at <= self.now)
                    && !ask.iter().any(|s| s.key == key)
                {
                    entry.asked = Some(self.now);
                    ask.push(Stalled {
                        key,
                        desired: entry.row.desired,
                        ready: entry.row.ready,
                    });
                }
            }
        }
        let mut commands = Vec::new();
        if !ask.is_empty() {
            commands.push(Command::ExplainStalls(ask));
        }
        if !self.owners_pending.is_empty() {
            self.reconcilers_asked_at = Some(self.now);
            commands.push(Command::ReadReconcilers(std::mem::take(
                &mut self.owners_pending,
            )));
        } else if self.next_reconciler_read().is_some_and(|at| at <= self.now) {
            // Someone may have turned self-heal off, suspended a Kustomization, or synced.
            self.reconcilers_asked_at = Some(self.now);
            commands.push(Command::ReadReconcilers(
                self.owners_asked.iter().cloned().collect(),
            ));
        }
        commands
    }

    /// The columns and rows inside the view's frame: the screen less the status bar, the hints
    /// line and the frame (see [`bare_frame`]).
    pub fn view_inner(&self) -> (u16, u16) {
        let body = self.height.saturating_sub(2);
        if bare_frame(self.width, body) {
            (self.width, body.saturating_sub(1))
        } else {
            (self.width.saturating_sub(2), body.saturating_sub(2))
        }
    }

    /// Table body rows that fit on screen (the view's inner rows less the header).
    pub fn table_height(&self) -> usize {
        usize::from(self.view_inner().1.saturating_sub(1)).max(1)
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
        for kind in DETAIL_KINDS {
            self.health.insert(kind, WatchHealth::Syncing);
        }
        vec![Command::WatchDetail {
            namespace,
            epoch: self.detail_epoch,
        }]
    }

    /// The table of one workload kind (`:deploy`, `:sts`, `:ds`) or of all (`:workloads`),
    /// closing the view it was typed in.
    pub fn show_table(&mut self, kind: Option<WorkloadKind>) -> Vec<Command> {
        let commands = self.close_detail();
        self.screen = Screen::Table;
        if self.table.kind != kind {
            self.table.kind = kind;
            self.table.reset_selection();
            self.table.mark_stale();
            self.dirty = true;
        }
        commands
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
        self.cache.revisions = Default::default();
        self.cache.pods = Default::default();
        self.cache.events = Default::default();
        for kind in DETAIL_KINDS {
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
            ClusterEvent::Workloads(kind, updates) => self.apply_workloads(kind, None, updates),
            ClusterEvent::WorkloadsLive(kind, updates) => self.apply_live(kind, None, updates),
            ClusterEvent::NamespaceWorkloads(kind, ns, updates) => {
                self.apply_live(kind, Some(&ns), updates)
            }
            ClusterEvent::NamespaceHealth(kind, ns, health) => {
                self.ns_health.insert((kind, ns), health.clone()) != Some(health)
            }
            ClusterEvent::AllNamespacesWatch(kind) => {
                let before = self.ns_health.len();
                self.ns_health.retain(|(k, _), _| *k != kind);
                self.ns_health.len() != before
            }
            ClusterEvent::ReplicaSets(updates) => {
                fold(updates, |u| self.cache.replicasets.apply(u)).any()
            }
            ClusterEvent::ControllerRevisions(updates) => {
                fold(updates, |u| self.cache.revisions.apply(u)).any()
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

    /// Workloads of one kind with their drift extracts, from the watcher of one namespace or of
    /// the whole scope (`None`): drift first (the extracts are dropped), then the rows.
    fn apply_live(
        &mut self,
        kind: WorkloadKind,
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
        self.apply_workloads(kind, namespace, rows);
        if listed {
            self.reconcile_missing();
            self.sync_missing_rows();
        } else {
            self.sync_missing_keys(&keys);
        }
        // A drift cell may change while its row does not.
        true
    }

    /// Apply a batch of updates of one workload kind, from the watcher of one namespace or of
    /// the whole scope (`None`), moving each changed row in the table's order (O(log n) each).
    fn apply_workloads(
        &mut self,
        kind: WorkloadKind,
        namespace: Option<&Arc<str>>,
        updates: Vec<WatchUpdate<crate::cluster::rows::WorkloadRow>>,
    ) -> bool {
        let rows = self.cache.workloads.set_mut(kind);
        let table = &mut self.table;
        let stalls = &mut self.stalls;
        let (asked, pending) = (&mut self.owners_asked, &mut self.owners_pending);
        // The real clock, not the frame's: a row's progress is stamped when it arrives.
        let now = Timestamp::now();
        let change = fold(updates, |u| {
            let mut u = workload_update(u);
            let key = match &u {
                WatchUpdate::Apply(e) | WatchUpdate::InitApply(e) => Some(e.row.key.clone()),
                WatchUpdate::Delete(k) => Some(k.clone()),
                WatchUpdate::Init | WatchUpdate::InitDone => None,
            };
            let old = key.as_ref().and_then(|k| rows.get(k));
            let before = old.map(|e| table.placement(e));
            if let Some(deadline) = old.and_then(WorkloadEntry::stall_deadline)
                && let Some(k) = &key
            {
                stalls.remove(&(deadline, k.clone()));
            }
            if let WatchUpdate::Apply(e) | WatchUpdate::InitApply(e) = &mut u {
                note_owners(asked, pending, &e.row.owners);
                e.carry_progress(old, now);
                if !e.mark_stalled(now)
                    && let Some(deadline) = e.stall_deadline()
                {
                    stalls.insert((deadline, e.row.key.clone()));
                }
            }
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

    /// Rows whose rollout made no progress until now are stuck (StatefulSets and DaemonSets,
    /// which have no progress deadline of their own). Before each frame.
    fn expire_stalls(&mut self) -> Vec<Stalled> {
        let mut stalled = Vec::new();
        while let Some((deadline, key)) = self.stalls.first().cloned()
            && deadline <= self.now
        {
            self.stalls.pop_first();
            let Some(entry) = self.cache.workloads.set_mut(key.kind).get_mut(&key) else {
                continue;
            };
            let before = self.table.placement(entry);
            if entry.mark_stalled(self.now) {
                let after = self.table.placement(entry);
                self.table.row_changed(&key, Some(before), Some(after));
                self.dirty = true;
                entry.asked = Some(self.now);
                stalled.push(Stalled {
                    key,
                    desired: entry.row.desired,
                    ready: entry.row.ready,
                });
            }
        }
        stalled
    }

    /// What the pods of rows short of ready ones say: the row shows it beside its phase, and a
    /// stalled row's stuck reason becomes the pods' state (`stuck: CrashLoopBackOff`).
    fn stalls_explained(&mut self, explained: Vec<(ObjectKey, Option<String>)>) {
        for (key, why) in explained {
            let Some(entry) = self.cache.workloads.set_mut(key.kind).get_mut(&key) else {
                continue;
            };
            let before = self.table.placement(entry);
            if entry.pods_why != why {
                self.dirty = true;
            }
            entry.pods_why = why;
            if entry.mark_stalled(self.now) {
                let after = self.table.placement(entry);
                self.table.row_changed(&key, Some(before), Some(after));
                self.dirty = true;
            }
        }
    }

    /// Whether any live object seen so far names a GitOps owner (the table then shows who).
    pub fn has_gitops_owners(&self) -> bool {
        self.owners_asked.iter().any(|o| self.claims(o))
    }

    /// Whether `owner` is one to show: an instance label's app only once it was read
    /// ([`crate::gitops::Reconciler::claims`]).
    pub fn claims(&self, owner: &crate::gitops::Owner) -> bool {
        !matches!(owner, crate::gitops::Owner::Argo { by_label: true, .. })
            || self
                .reconcilers
                .get(owner)
                .is_some_and(crate::gitops::Reconciler::claims)
    }

    /// When the owners are next read again (the loop wakes then).
    pub fn next_reconciler_read(&self) -> Option<Timestamp> {
        if self.owners_asked.is_empty() {
            return None;
        }
        self.reconcilers_asked_at
            .map(|at| at.saturating_add(RECONCILER_REFRESH).unwrap_or(at))
    }

    /// When the next row stalls, if one may (the loop wakes then to show it).
    pub fn next_stall(&self) -> Option<Timestamp> {
        self.stalls.first().map(|(at, _)| *at)
    }
}

/// A row whose rollout stalled or lacks ready pods: its pods are asked why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stalled {
    pub key: ObjectKey,
    pub desired: i32,
    pub ready: i32,
}

/// How often the GitOps owners' Applications, Kustomizations and HelmReleases are read again:
/// their policy and sync status change by hand or at each sync, rarely; a read of each is one
/// GET.
pub const RECONCILER_REFRESH: jiff::SignedDuration = jiff::SignedDuration::from_secs(60);

/// Owners not asked about yet go to `pending` (once each).
pub(crate) fn note_owners(
    asked: &mut std::collections::BTreeSet<crate::gitops::Owner>,
    pending: &mut Vec<crate::gitops::Owner>,
    owners: &[crate::gitops::Owner],
) {
    for owner in owners {
        if asked.insert(owner.clone()) {
            pending.push(owner.clone());
        }
    }
}

/// What the detail view watches in its namespace.
const DETAIL_KINDS: [WatchedKind; 4] = [
    WatchedKind::ReplicaSets,
    WatchedKind::ControllerRevisions,
    WatchedKind::Pods,
    WatchedKind::Events,
];

/// The table watchers' health before they report: syncing.
fn table_health() -> BTreeMap<WatchedKind, WatchHealth> {
    WorkloadKind::ALL
        .into_iter()
        .map(|k| (WatchedKind::of(k), WatchHealth::Syncing))
        .collect()
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
            app.health = table_health();
            app.ns_health.clear();
            app.stalls.clear();
            app.reconcilers.clear();
            app.owners_asked.clear();
            app.owners_pending.clear();
            app.reconcilers_asked_at = None;
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
        Message::StallsExplained(explained) => {
            app.stalls_explained(explained);
            Vec::new()
        }
        Message::Reconcilers { epoch, read } => {
            if epoch == app.epoch {
                app.reconcilers.extend(read);
                app.dirty = true;
            }
            Vec::new()
        }
        Message::Log { epoch, event } => {
            app.log_event(epoch, event);
            Vec::new()
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod stall_tests {
    use super::*;
    use crate::cluster::rows::{KindFacts, WorkloadRow};
    use crate::rollout::RolloutPhase;
    use crate::rollout::workloads::{DaemonSetFacts, STALL_AFTER};

    /// A DaemonSet rolling onto 3 nodes, `updated` of them done and `ready` ready.
    fn daemonset(updated: i32, ready: i32) -> WorkloadRow {
        let facts = DaemonSetFacts {
            generation: 2,
            observed_generation: 2,
            desired: 3,
            current: 3,
            ready,
            updated,
            available: ready,
            misscheduled: 0,
            on_delete: false,
            max_unavailable: None,
            max_surge: None,
        };
        WorkloadRow {
            key: ObjectKey::workload(WorkloadKind::DaemonSet, "platform", "agent"),
            generation: 2,
            observed_generation: 2,
            desired: 3,
            replicas: 3,
            updated,
            ready,
            available: ready,
            facts: KindFacts::DaemonSet(Box::new(facts)),
            paused: false,
            owners: Vec::new(),
            conditions: Vec::new(),
            revision: None,
            images: Vec::new(),
            created: None,
            last_change: None,
        }
    }

    fn send(app: &mut App, row: WorkloadRow) {
        let kind = row.key.kind;
        update(
            app,
            Message::Cluster(ClusterMessage {
                epoch: 0,
                event: ClusterEvent::Workloads(kind, vec![WatchUpdate::Apply(row)]),
            }),
        );
    }

    fn phase(app: &mut App) -> RolloutPhase {
        app.prepare_frame();
        let key = ObjectKey::workload(WorkloadKind::DaemonSet, "platform", "agent");
        app.cache.workloads.get(&key).unwrap().rollout.phase.clone()
    }

    #[test]
    fn owners_are_read_once_then_all_again_every_refresh() {
        let mut app = app();
        let reads = |commands: Vec<Command>| -> Vec<Vec<crate::gitops::Owner>> {
            commands
                .into_iter()
                .filter_map(|c| match c {
                    Command::ReadReconcilers(owners) => Some(owners),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(app.next_reconciler_read(), None);
        let shop = crate::gitops::Owner::Argo {
            app: "shop".into(),
            namespace: None,
            by_label: false,
        };
        let platform = crate::gitops::Owner::FluxKustomization {
            name: "platform".into(),
            namespace: "flux-system".into(),
        };
        note_owners(
            &mut app.owners_asked,
            &mut app.owners_pending,
            std::slice::from_ref(&shop),
        );
        assert_eq!(reads(app.prepare_frame()), [vec![shop.clone()]]);
        assert!(reads(app.prepare_frame()).is_empty());
        // A new owner is asked about at once, alone.
        app.now = app
            .now
            .saturating_add(jiff::SignedDuration::from_secs(30))
            .unwrap();
        note_owners(
            &mut app.owners_asked,
            &mut app.owners_pending,
            std::slice::from_ref(&platform),
        );
        assert_eq!(reads(app.prepare_frame()), [vec![platform.clone()]]);
        let due = app.next_reconciler_read().unwrap();
        assert_eq!(due, app.now.saturating_add(RECONCILER_REFRESH).unwrap());
        app.now = due;
        let mut again = reads(app.prepare_frame());
        again.iter_mut().for_each(|o| o.sort());
        let mut both = vec![shop, platform];
        both.sort();
        assert_eq!(again, [both]);
        assert!(reads(app.prepare_frame()).is_empty());
    }

    #[test]
    fn the_pod_cursor_follows_its_pod_when_others_come_and_go() {
        let mut cursor = PodCursor::default();
        let pods = ["web-c", "web-b", "web-a"];
        assert_eq!(cursor.position(pods.into_iter()), 0);
        cursor.select(1, pods.into_iter());
        assert_eq!(cursor.position(pods.into_iter()), 1);
        // A newer pod comes first: the selection stays on web-b.
        let pods = ["web-d", "web-c", "web-b", "web-a"];
        assert_eq!(cursor.position(pods.into_iter()), 2);
        // web-b goes: the old place stands in, within the list.
        assert_eq!(cursor.position(["web-d", "web-c", "web-a"].into_iter()), 1);
        assert_eq!(cursor.position(["web-d"].into_iter()), 0);
        assert_eq!(cursor.position(std::iter::empty()), 0);
    }

    fn app() -> App {
        App::new(
            "dev",
            vec!["dev".into()],
            NamespaceScope::All,
            Timestamp::now(),
        )
    }

    #[test]
    fn a_daemonset_without_progress_for_the_stall_time_is_stuck_and_progress_clears_it() {
        let mut app = app();
        send(&mut app, daemonset(1, 2));
        assert_eq!(phase(&mut app), RolloutPhase::Progressing);
        let deadline = app.next_stall().unwrap();
        // An update that moves nothing keeps the deadline.
        send(&mut app, daemonset(1, 2));
        assert_eq!(app.next_stall(), Some(deadline));
        app.now = deadline
            .checked_sub(jiff::SignedDuration::from_secs(1))
            .unwrap();
        assert_eq!(phase(&mut app), RolloutPhase::Progressing);
        app.now = deadline;
        let RolloutPhase::Stuck { reason, message } = phase(&mut app) else {
            panic!("not stuck");
        };
        assert_eq!(reason, "NoProgress");
        assert_eq!(message, "no progress for 10m: 1 of 3 updated, 2 ready");
        assert_eq!(app.table.stuck, 1);
        // The frame that showed it asked the pods why; their answer names the reason.
        let key = ObjectKey::workload(WorkloadKind::DaemonSet, "platform", "agent");
        update(
            &mut app,
            Message::StallsExplained(vec![(
                key.clone(),
                Some("1 pod CrashLoopBackOff: last exit 1 (Error)".into()),
            )]),
        );
        let RolloutPhase::Stuck { reason, message } = phase(&mut app) else {
            panic!("not stuck");
        };
        assert_eq!(reason, "CrashLoopBackOff");
        assert!(
            message.ends_with("ready; 1 pod CrashLoopBackOff: last exit 1 (Error)"),
            "{message}"
        );
        // An update that moves nothing keeps it stuck, with its reason.
        send(&mut app, daemonset(1, 2));
        assert_eq!(phase(&mut app).label(), "stuck: CrashLoopBackOff");
        // Progress (one more pod updated) starts the clock again.
        send(&mut app, daemonset(2, 2));
        assert_eq!(phase(&mut app), RolloutPhase::Progressing);
        assert_eq!(app.table.stuck, 0);
        assert!(app.next_stall().unwrap() > deadline);
        // A complete rollout has no deadline.
        send(&mut app, daemonset(3, 3));
        assert_eq!(phase(&mut app), RolloutPhase::Complete);
        assert_eq!(app.next_stall(), None);
        assert_eq!(STALL_AFTER.as_secs(), 600);
    }

    #[test]
    fn the_frame_that_shows_a_stall_asks_its_pods_why() {
        let mut app = app();
        send(&mut app, daemonset(1, 2));
        app.now = app.next_stall().unwrap();
        let commands = app.prepare_frame();
        let [Command::ExplainStalls(stalled)] = commands.as_slice() else {
            panic!("{commands:?}");
        };
        assert_eq!(
            stalled,
            &[Stalled {
                key: ObjectKey::workload(WorkloadKind::DaemonSet, "platform", "agent"),
                desired: 3,
                ready: 2
            }]
        );
        assert!(app.prepare_frame().is_empty(), "asked once");
    }

    #[test]
    fn a_deployment_never_stalls_by_kdrift_clock() {
        let mut app = app();
        let mut row = daemonset(1, 2);
        row.key = ObjectKey::new("shop", "web");
        row.facts = KindFacts::Deployment;
        row.replicas = 4;
        send(&mut app, row);
        assert_eq!(app.next_stall(), None);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod row_kind_tests {
    use super::*;

    #[test]
    fn a_statefulset_manifest_key_finds_its_row_drift_not_a_deployment_of_that_name() {
        let mut app = App::new(
            "dev",
            vec!["dev".into()],
            NamespaceScope::All,
            Timestamp::now(),
        );
        let sts = ObjectKey::workload(WorkloadKind::StatefulSet, "payments", "db");
        app.drift.insert(sts.clone(), DriftSummary::Fields(1));
        app.drift
            .insert(ObjectKey::new("payments", "db"), DriftSummary::InSync);
        let manifest = drift::manifest_key(&sts);
        assert_eq!(manifest.kind.as_str(), "StatefulSet");
        assert_eq!(drift::row_key(&manifest), Some(sts));
        assert_eq!(app.drift_of_object(&manifest), DriftSummary::Fields(1));
        let deployment = ManifestKey::new("apps", "Deployment", "payments", "db");
        assert_eq!(app.drift_of_object(&deployment), DriftSummary::InSync);
    }
}
