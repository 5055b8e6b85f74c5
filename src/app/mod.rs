//! The app: all state in one place and `update(&mut App, Message) -> Vec<Command>` (pure: no IO,
//! no async, no clock — the runtime stamps `now`).
//!
//! - [`cache`]: the cluster rows, with relist semantics.
//! - [`table`]: the sorted, filtered list of Deployments and the selection.
//! - [`keys`]: what each key does in each mode.
//! - [`detail`]: revisions, pods, events and conditions of one Deployment, assembled for the screen.
pub mod cache;
pub mod detail;
pub mod keys;
pub mod table;

use std::collections::{BTreeMap, HashMap};

use crossterm::event::KeyEvent;
use jiff::Timestamp;

use crate::cluster::client::NamespaceScope;
use crate::cluster::rows::ObjectKey;
use crate::cluster::watch::{ClusterEvent, ClusterMessage, WatchHealth, WatchedKind};
use cache::{ClusterCache, deployment_update};
use table::TableView;

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
    /// A problem found outside the app (a bad theme file), shown in the status bar.
    Notice(String),
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
}

/// The drift slot of a row; filled by the drift engine once it lands.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DriftSummary {
    #[default]
    NotComputed,
    InSync,
    Fields(usize),
    Missing,
    Error(String),
}

/// Which screen is showing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Screen {
    Table,
    Detail { key: ObjectKey, scroll: u16 },
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
    /// Which connection's watch messages are current.
    pub epoch: u64,
    pub cache: ClusterCache,
    pub health: BTreeMap<WatchedKind, WatchHealth>,
    pub drift: HashMap<ObjectKey, DriftSummary>,
    pub table: TableView,
    pub screen: Screen,
    pub prompt: Option<Prompt>,
    pub help: bool,
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
            cache: ClusterCache::default(),
            health: WatchedKind::ALL
                .iter()
                .map(|k| (*k, WatchHealth::Syncing))
                .collect(),
            drift: HashMap::new(),
            table: TableView::default(),
            screen: Screen::Table,
            prompt: None,
            help: false,
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
            .min_by_key(|h| rank(h))
            .cloned()
            .unwrap_or(WatchHealth::Connected)
    }

    fn apply_cluster(&mut self, msg: ClusterMessage) {
        if msg.epoch != self.epoch {
            return;
        }
        let changed = match msg.event {
            ClusterEvent::Deployments(updates) => {
                let mut changed = false;
                for u in updates {
                    changed |= self.cache.deployments.apply(deployment_update(u));
                }
                if changed {
                    self.table.mark_stale();
                }
                changed
            }
            ClusterEvent::ReplicaSets(updates) => {
                fold(updates, |u| self.cache.replicasets.apply(u))
            }
            ClusterEvent::Pods(updates) => fold(updates, |u| self.cache.pods.apply(u)),
            ClusterEvent::Events(updates) => fold(updates, |u| self.cache.events.apply(u)),
            ClusterEvent::Health(kind, health) => {
                self.health.insert(kind, health.clone()) != Some(health)
            }
        };
        self.dirty |= changed;
    }
}

fn fold<T>(updates: Vec<T>, mut apply: impl FnMut(T) -> bool) -> bool {
    updates.into_iter().fold(false, |acc, u| apply(u) | acc)
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
            app.health = WatchedKind::ALL
                .iter()
                .map(|k| (*k, WatchHealth::Syncing))
                .collect();
            app.drift.clear();
            app.screen = Screen::Table;
            app.table.reset_selection();
            app.table.mark_stale();
            app.dirty = true;
            Vec::new()
        }
        Message::SwitchFailed(text) => {
            app.flash = Some(Flash { text, error: true });
            app.dirty = true;
            Vec::new()
        }
        Message::Notice(text) => {
            app.flash = Some(Flash { text, error: true });
            app.dirty = true;
            Vec::new()
        }
    }
}
