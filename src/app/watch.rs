//! Watch events into the state: the table's workload rows (with their drift extracts), the
//! detail view's ReplicaSets, revisions, pods and events, and each watcher's health.
use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;

use super::cache::{self, Change, WorkloadEntry, workload_update};
use super::{App, note_owners};
use crate::cluster::live::LiveRow;
use crate::cluster::rows::WorkloadKind;
use crate::cluster::watch::{
    ClusterEvent, ClusterMessage, ObjectKind, WatchHealth, WatchUpdate, WatchedKind,
};
use crate::manifest::ObjectKey;

/// A watcher whose health the app keeps, in its one health map ([`App::health`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Watcher {
    /// One kind's watcher: a table kind's, or the detail view's.
    Kind(WatchedKind),
    /// One namespace's watcher of a table kind, while the all-namespaces watch is refused and
    /// one watcher per namespace stands in.
    Namespace(WorkloadKind, Arc<str>),
    /// The watcher of a kind the manifests use.
    Objects(Arc<ObjectKind>),
}

impl App {
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

    pub(super) fn apply_cluster(&mut self, msg: ClusterMessage) {
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
                self.health
                    .insert(Watcher::Namespace(kind, ns), health.clone())
                    != Some(health)
            }
            ClusterEvent::AllNamespacesWatch(kind) => {
                let before = self.health.len();
                self.health
                    .retain(|w, _| !matches!(w, Watcher::Namespace(k, _) if *k == kind));
                self.health.len() != before
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
                self.health.insert(Watcher::Kind(kind), health.clone()) != Some(health)
            }
            ClusterEvent::Objects(kind, updates) => self.apply_objects(kind, updates),
            ClusterEvent::ObjectHealth(kind, health) => self.object_health(kind, health),
        };
        // Start lines said again now that their objects were compared.
        self.changes.judged();
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
}

/// What the detail view watches in its namespace.
pub(super) const DETAIL_KINDS: [WatchedKind; 4] = [
    WatchedKind::ReplicaSets,
    WatchedKind::ControllerRevisions,
    WatchedKind::Pods,
    WatchedKind::Events,
];

/// The table watchers' health before they report: syncing.
pub(super) fn table_health() -> BTreeMap<Watcher, WatchHealth> {
    WorkloadKind::ALL
        .into_iter()
        .map(|k| (Watcher::Kind(WatchedKind::of(k)), WatchHealth::Syncing))
        .collect()
}

impl App {
    /// The health of one kind's watcher (a table kind's, the detail view's).
    pub fn kind_health(&self, kind: WatchedKind) -> Option<&WatchHealth> {
        self.health.get(&Watcher::Kind(kind))
    }

    /// The watchers of one namespace each that stand in for a refused all-namespaces watch,
    /// and their health.
    pub fn namespace_health(&self) -> impl Iterator<Item = (WorkloadKind, &str, &WatchHealth)> {
        self.health.iter().filter_map(|(w, h)| match w {
            Watcher::Namespace(kind, ns) => Some((*kind, ns.as_ref(), h)),
            _ => None,
        })
    }
}

/// Apply a batch; the biggest change wins.
fn fold<T>(updates: Vec<T>, mut apply: impl FnMut(T) -> cache::Change) -> cache::Change {
    updates
        .into_iter()
        .fold(cache::Change::Nothing, |acc, u| acc.max(apply(u)))
}
