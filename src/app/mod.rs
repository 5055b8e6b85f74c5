//! The app: all state in one place and `update(&mut App, Message) -> Vec<Command>` (pure: no IO,
//! no async, no clock — the runtime stamps `now`).
//!
//! - [`message`]: the [`Message`]s `update` takes and the [`Command`]s it returns.
//! - [`screen`]: which view shows, the prompt and the status bar's message; table ↔ detail.
//! - `watch`: watch events into the cache, and each watcher's health.
//! - [`stalls`]: rows that make no progress turn stuck; pods of rows short of ready ones asked why.
//! - [`reconcilers`]: the GitOps owners seen, and when their policies are read again.
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
//! - [`fleet`]: several contexts in one table, keyed by (context, object).
//! - [`drift_list`]: the `:drift` view, every object of any kind that is drifted, missing or in
//!   error.
//! - [`changes`](mod@changes): the change timeline (at start and from every watch event) and
//!   its `:changes` view.
pub mod accept;
mod accept_chart;
pub mod cache;
pub mod changes;
mod charts;
pub mod compare;
pub mod detail;
pub mod diff;
pub mod drift;
mod drift_inputs;
pub mod drift_list;
pub mod fleet;
pub mod keys;
pub mod ledger;
pub mod logs;
pub mod message;
pub mod objects;
pub mod picker;
pub mod reconcilers;
pub mod revert;
pub mod rollback;
pub mod screen;
mod scroll;
pub mod stalls;
pub mod table;
#[cfg(test)]
pub(crate) mod test_keys;
#[cfg(test)]
mod tests;
mod watch;

pub use message::{Command, ContextChange, Message};
pub use reconcilers::RECONCILER_REFRESH;
pub(crate) use reconcilers::note_owners;
pub use screen::{Flash, PodCursor, Prompt, Screen, bare_frame};
pub use stalls::Stalled;
pub use watch::Watcher;
use watch::table_health;

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;

use crate::cluster::client::NamespaceScope;
use crate::cluster::live::LiveKinds;
use crate::cluster::watch::WatchHealth;
use crate::manifest::ManifestIndex;
use crate::manifest::ObjectKey;
use cache::{ClusterCache, WorkloadEntry};
use table::TableView;

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
    /// The health of every watcher: the table's, the detail view's, one per namespace while
    /// they stand in for a refused all-namespaces watch, and those of the manifests' kinds.
    pub health: BTreeMap<Watcher, WatchHealth>,
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
    /// The drift of every object compared, of every kind.
    pub ledger: ledger::Ledger,
    /// What each workload's last drift compare read (a write that changes none of it keeps
    /// the answer).
    drift_inputs: drift_inputs::KeptInputs,
    /// The manifests, once loaded (`None` before, or when there are none to watch); changed
    /// through [`App::change_manifests`] alone, which counts their problems again.
    pub manifests: Option<Arc<ManifestIndex>>,
    /// The manifests' notes and other problems, counted when they change (the status bar shows
    /// them every frame; counting walks every file).
    problem_counts: (usize, usize),
    /// The Helm releases of the namespace scope, as last read (set into `manifests` when they
    /// load, and again whenever a release record changes).
    pub releases: Option<crate::helm::Releases>,
    /// The number of the newest chart render asked for (`Command::RenderCharts`).
    charts_asked: u64,
    /// The objects whose release a `helm upgrade` with git's values would change (git's render
    /// of their chart differs from the release): the HELM cell says `→git`.
    pub pending_upgrades: std::collections::HashSet<ObjectKey>,
    /// The kinds the cluster serves for the manifests and their schemas, once mapped.
    pub kinds: Option<LiveKinds>,
    /// Objects of the other kinds of the manifests.
    pub objects: objects::Objects,
    /// A `Command::MapKinds` is under way.
    pub mapping: bool,
    /// The manifests loaded while discovery was under way: their rows are fetched once it
    /// answers, whether it maps the kinds or fails.
    fetch_after_mapping: bool,
    /// The screens the one showing was opened from, the nearest last: `esc`, or the view
    /// ending, goes back to it (the table when there is none). A list's place is kept so while a
    /// view opened from it shows.
    pub back: Vec<Screen>,
    /// The change timeline and the `:changes` view's place.
    pub changes: changes::Changes,
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
            health: table_health(),
            stalls: Default::default(),
            reconcilers: BTreeMap::new(),
            owners_asked: Default::default(),
            reconcilers_asked_at: None,
            owners_pending: Vec::new(),
            ledger: ledger::Ledger::default(),
            drift_inputs: drift_inputs::KeptInputs::default(),
            manifests: None,
            releases: None,
            charts_asked: 0,
            pending_upgrades: Default::default(),
            kinds: None,
            objects: objects::Objects::default(),
            mapping: false,
            fetch_after_mapping: false,
            back: Vec::new(),
            changes: changes::Changes::default(),
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
            problem_counts: (0, 0),
        }
    }

    /// Changes the manifests held (`None` when there are none), then counts their problems
    /// again for the status bar.
    pub fn change_manifests<R>(
        &mut self,
        change: impl FnOnce(&mut ManifestIndex) -> R,
    ) -> Option<R> {
        let changed = self
            .manifests
            .as_mut()
            .map(|index| change(Arc::make_mut(index)));
        self.count_problems();
        changed
    }

    /// Counts the manifests' notes and other problems again (after they changed).
    fn count_problems(&mut self) {
        self.problem_counts = self.manifests.as_ref().map_or((0, 0), |m| {
            m.problems().iter().fold(
                (0, 0),
                |(n, p), x| if x.is_note() { (n + 1, p) } else { (n, p + 1) },
            )
        });
    }

    /// The manifests' notes and other problems: what the status bar counts.
    pub fn problem_counts(&self) -> (usize, usize) {
        self.problem_counts
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
                let Some(entry) = self.cache.workloads.get_mut(&key) else {
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

    /// The drift of a table row.
    pub fn drift_of(&self, key: &ObjectKey) -> &DriftSummary {
        self.ledger.summary(key)
    }
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
            if app.context != context {
                // Another cluster: its timeline starts anew.
                app.changes.clear();
            }
            app.context = context;
            app.contexts = contexts;
            app.scope = scope;
            app.cache = ClusterCache::default();
            app.health = table_health();
            app.stalls.clear();
            app.reconcilers.clear();
            app.owners_asked.clear();
            app.owners_pending.clear();
            app.reconcilers_asked_at = None;
            app.ledger = ledger::Ledger::default();
            app.drift_inputs.clear();
            app.objects = objects::Objects::default();
            app.table.missing.clear();
            let mut commands = app.close_detail();
            app.back.clear();
            // Another cluster may serve other kinds: map them again, and watch them anew.
            app.kinds = None;
            app.mapping = false;
            commands.extend(app.map_kinds_if_new());
            app.table.reset_selection();
            app.table.mark_stale();
            app.dirty = true;
            commands
        }
        Message::Namespaces(answer) => {
            app.namespaces_listed(answer);
            Vec::new()
        }
        Message::Notice(flash) => {
            // A note found later (the manifests' sources, a theme) does not cover an error the
            // user has not dismissed with a key yet: `:ctx NAME` failing, then the note.
            if flash.error || !app.flash.as_ref().is_some_and(|f| f.error) {
                app.flash = Some(flash);
                app.dirty = true;
            }
            Vec::new()
        }
        Message::Manifests(index) => app.manifests_loaded(index),
        Message::HelmReleases { epoch, releases } => {
            if epoch == app.epoch {
                app.releases_changed(releases)
            } else {
                Vec::new()
            }
        }
        Message::ManifestsChanged(changes) => app.manifests_changed(changes),
        Message::RollbackPlanned { id, result } => {
            app.rollback_planned(id, result);
            Vec::new()
        }
        Message::RolledBack { id, result } => {
            app.rolled_back(id, result);
            Vec::new()
        }
        Message::ChartsRendered {
            id,
            renders,
            problems,
        } => app.charts_rendered(id, renders, problems),
        Message::Fetched(fetched) => {
            app.fetched(fetched);
            Vec::new()
        }
        Message::KindsMapped(mapped) => app.kinds_mapped(mapped),
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
        // The fleet's compare view takes these before they reach a context's app
        // (`runtime::fleet`); one context alone never asks for them.
        Message::CompareRead { .. } => Vec::new(),
        Message::Log { epoch, event } => {
            app.log_event(epoch, event);
            Vec::new()
        }
    }
}
