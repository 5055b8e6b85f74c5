//! Which view shows, the line being typed and the status bar's message, and the moves between the
//! table and the detail view (the other views open and close in their own files).
use super::watch::DETAIL_KINDS;
use super::{App, Command, accept, changes, diff, drift_list, logs, picker, revert};
use crate::cluster::rows::WorkloadKind;
use crate::cluster::watch::WatchHealth;
use crate::manifest::ObjectKey;

/// Which screen is showing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Screen {
    Table,
    Detail {
        key: ObjectKey,
        scroll: u16,
    },
    /// `d`: manifest against live.
    Diff(Box<diff::DiffView>),
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
    /// `:changes`: the change timeline, newest first.
    Changes(Box<changes::ChangesView>),
    /// `:ns` or `:ctx` alone: choose a namespace or context.
    Pick(Box<picker::Picker>),
    /// `l` on a pod in the detail view: its log.
    Log(Box<logs::LogView>),
    /// `u` in a Deployment's detail view: its rollback planned, then confirmed.
    Rollback(Box<super::rollback::RollbackView>),
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

/// Whether a view `width`×`height` keeps only the rule with its title at the top: borders all
/// round would leave a 20×5 terminal (a 3-row body) one line of content, or none in a table.
pub fn bare_frame(width: u16, height: u16) -> bool {
    width < 40 || height < 6
}

impl App {
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

    /// Open the detail view of `key`, watching its namespace's ReplicaSets, Pods and Events.
    pub fn open_detail(&mut self, key: ObjectKey) -> Vec<Command> {
        let namespace = key.namespace.to_string();
        // Opened from the table (or where a revert of its workload ended): `esc` goes there.
        self.back.clear();
        self.screen = Screen::Detail { key, scroll: 0 };
        self.pod_cursor = PodCursor::default();
        self.clear_detail();
        self.detail_epoch += 1;
        for kind in DETAIL_KINDS {
            self.health
                .insert(super::Watcher::Kind(kind), WatchHealth::Syncing);
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
        self.back.clear();
        if self.table.kind != kind {
            self.table.kind = kind;
            self.table.reset_selection();
            self.table.mark_stale();
            self.dirty = true;
        }
        commands
    }

    /// Shows `screen` over the one showing, which it goes back to.
    pub fn open_over(&mut self, screen: Screen) {
        let from = std::mem::replace(&mut self.screen, screen);
        self.back.push(from);
    }

    /// Back to the screen the one showing was opened from (the table when none).
    pub fn go_back(&mut self) {
        self.screen = self.back.pop().unwrap_or(Screen::Table);
    }

    /// Back to the table; the detail rows are dropped with their watchers.
    pub fn close_detail(&mut self) -> Vec<Command> {
        // A log view closes with the detail view it was opened from.
        let mut commands = self.close_log();
        if matches!(self.screen, Screen::Revert(_) | Screen::Rollback(_)) {
            // A revert or rollback view closes with the screen it was opened from.
            self.go_back();
        }
        if matches!(
            self.screen,
            Screen::Diff(_) | Screen::Problems { .. } | Screen::Accept(_)
        ) {
            // These views watch nothing.
            self.screen = Screen::Table;
            self.back.clear();
            return commands;
        }
        if !matches!(self.screen, Screen::Detail { .. }) {
            return commands;
        }
        self.screen = Screen::Table;
        self.back.clear();
        self.clear_detail();
        self.detail_epoch += 1;
        commands.push(Command::StopDetail);
        commands
    }

    pub(super) fn clear_detail(&mut self) {
        self.cache.replicasets = Default::default();
        self.cache.revisions = Default::default();
        self.cache.pods = Default::default();
        self.cache.events = Default::default();
        for kind in DETAIL_KINDS {
            self.health.remove(&super::Watcher::Kind(kind));
        }
    }
}
