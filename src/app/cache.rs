//! The cluster cache: slim rows by key, with kube-runtime's relist semantics — a relist
//! (`Init`…`InitDone`) refreshes every row it lists and, at its end, drops at once every row it
//! did not list, so nothing deleted during a disconnect survives. Rows are refreshed in place
//! (only their keys are remembered during the relist), so a relist of 10,000 Deployments does
//! not hold a second copy of the table; the first list fills the table as it arrives.
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Bound;
use std::sync::Arc;

use crate::cluster::rows::{EventRow, KindFacts, PodRow, ReplicaSetRow, WorkloadKind, WorkloadRow};
use crate::cluster::watch::WatchUpdate;
use crate::manifest::ObjectKey;
use crate::rollout::{RolloutStatus, rollout_status};

/// What an update changed, so the table is re-sorted only when it must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    Nothing,
    /// Rows changed in place, but not what the table sorts or filters on (phase, last change).
    Display,
    /// Rows changed in place: same keys.
    Values,
    /// Rows came or went.
    Membership,
}

impl Change {
    pub fn any(self) -> bool {
        self != Change::Nothing
    }
}

/// Something a [`RowSet`] can hold: it knows its key.
pub use crate::cluster::rows::Keyed;

/// One watched kind's rows.
#[derive(Debug, Clone)]
pub struct RowSet<T> {
    /// Each row boxed: a B-tree node holds eleven values whether or not it is full, and a
    /// workload's entry is ~360 bytes, so unboxed the nodes' empty slots were ~3 MB at 10,000
    /// rows; boxed they are ~50 bytes a slot.
    live: BTreeMap<ObjectKey, Box<T>>,
    /// Keys listed so far by a relist in progress; the rest go at its end.
    seen: Option<HashSet<ObjectKey>>,
    /// The same for relists of one namespace (per-namespace watchers, see `cluster::fallback`).
    ns_seen: HashMap<Arc<str>, HashSet<ObjectKey>>,
    /// The first `InitDone` has arrived.
    synced: bool,
    /// How many lists (first sync and relists) have completed.
    lists_done: u64,
}

impl<T> Default for RowSet<T> {
    fn default() -> Self {
        RowSet {
            live: BTreeMap::new(),
            seen: None,
            ns_seen: HashMap::new(),
            synced: false,
            lists_done: 0,
        }
    }
}

impl<T: Keyed> RowSet<T> {
    /// Apply one update and say what it changed on screen.
    pub fn apply(&mut self, update: WatchUpdate<T>) -> Change {
        match update {
            WatchUpdate::Apply(row) | WatchUpdate::InitApply(row) => {
                // kube-runtime sends no Apply during a relist; if one came, it counts as listed.
                if let Some(seen) = &mut self.seen {
                    seen.insert(row.key().clone());
                }
                // An update refills the row's box in place rather than allocating another.
                match self.live.get_mut(row.key()) {
                    Some(slot) => {
                        **slot = row;
                        Change::Values
                    }
                    None => {
                        self.live.insert(row.key().clone(), Box::new(row));
                        Change::Membership
                    }
                }
            }
            WatchUpdate::Delete(key) => {
                if let Some(seen) = &mut self.seen {
                    seen.remove(&key);
                }
                match self.live.remove(&key) {
                    Some(_) => Change::Membership,
                    None => Change::Nothing,
                }
            }
            WatchUpdate::Init => {
                // A relist of everything supersedes those of single namespaces.
                self.ns_seen.clear();
                // Rows already shown (a relist, a first list cut short, or the screenful listed
                // ahead of the watcher's first list) stay until the list's end drops those it
                // did not have: the table does not empty and fill again.
                if !self.live.is_empty() {
                    self.seen = Some(HashSet::with_capacity(self.live.len()));
                }
                Change::Nothing
            }
            WatchUpdate::InitDone => {
                self.synced = true;
                self.lists_done += 1;
                match self.seen.take() {
                    Some(seen) => {
                        let before = self.live.len();
                        self.live.retain(|k, _| seen.contains(k));
                        if self.live.len() == before {
                            Change::Values
                        } else {
                            Change::Membership
                        }
                    }
                    // The end of the first list changes "loading…" to "no Deployments".
                    None => Change::Values,
                }
            }
        }
    }

    /// Apply one update from the watcher of one namespace: its relist replaces only that
    /// namespace's rows, and relists of several namespaces may interleave.
    pub fn apply_in(&mut self, namespace: &Arc<str>, update: WatchUpdate<T>) -> Change {
        match update {
            WatchUpdate::Init => {
                self.ns_seen.insert(namespace.clone(), HashSet::new());
                Change::Nothing
            }
            WatchUpdate::InitDone => {
                self.synced = true;
                let Some(seen) = self.ns_seen.remove(namespace) else {
                    return Change::Values;
                };
                let gone: Vec<ObjectKey> = self
                    .in_namespace(namespace)
                    .map(|row| row.key())
                    .filter(|k| !seen.contains(*k))
                    .cloned()
                    .collect();
                for key in &gone {
                    self.live.remove(key);
                }
                if gone.is_empty() {
                    Change::Values
                } else {
                    Change::Membership
                }
            }
            WatchUpdate::Apply(row) | WatchUpdate::InitApply(row) => {
                if let Some(seen) = self.ns_seen.get_mut(namespace) {
                    seen.insert(row.key().clone());
                }
                self.apply(WatchUpdate::Apply(row))
            }
            WatchUpdate::Delete(key) => {
                if let Some(seen) = self.ns_seen.get_mut(namespace) {
                    seen.remove(&key);
                }
                self.apply(WatchUpdate::Delete(key))
            }
        }
    }

    pub fn get(&self, key: &ObjectKey) -> Option<&T> {
        self.live.get(key).map(|row| &**row)
    }

    /// A row to change in place; its key must not change.
    pub fn get_mut(&mut self, key: &ObjectKey) -> Option<&mut T> {
        self.live.get_mut(key).map(|row| &mut **row)
    }

    pub fn len(&self) -> usize {
        self.live.len()
    }

    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    pub fn is_synced(&self) -> bool {
        self.synced
    }

    pub fn lists_done(&self) -> u64 {
        self.lists_done
    }

    /// Rows in key order (namespace, then name: a set holds one kind).
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.live.values().map(|row| &**row)
    }

    /// Rows of one namespace, in name order.
    pub fn in_namespace<'a>(&'a self, namespace: &str) -> impl Iterator<Item = &'a T> + 'a {
        // A set holds one kind: its keys differ in namespace and name only.
        let start = self.live.keys().next().map(|first| ObjectKey {
            namespace: namespace.into(),
            name: Default::default(),
            ..first.clone()
        });
        start
            .into_iter()
            .flat_map(move |start| {
                let ns = start.namespace.clone();
                self.live
                    .range((Bound::Included(start), Bound::Unbounded))
                    .take_while(move |(k, _)| k.namespace == ns)
            })
            .map(|(_, v)| &**v)
    }
}

/// A row short of ready pods this long without progress has its pods asked why.
pub const EXPLAIN_AFTER: jiff::SignedDuration = jiff::SignedDuration::from_secs(10);
/// And again this often while it stays so.
pub const EXPLAIN_EVERY: jiff::SignedDuration = jiff::SignedDuration::from_secs(15);

/// A workload row with its rollout status computed once, when it arrives.
#[derive(Debug, Clone)]
pub struct WorkloadEntry {
    pub row: WorkloadRow,
    pub rollout: RolloutStatus,
    /// When its rollout last moved, as seen by kdrift (for kinds without a progress deadline,
    /// whose stalls kdrift must notice itself): set when a row arrives or its counts change.
    pub progressed: Option<jiff::Timestamp>,
    /// Why its pods are not ready (`2 pods Pending: Insufficient memory`), once they were asked
    /// (see [`WorkloadEntry::explain_at`]); until it has enough ready pods.
    pub pods_why: Option<String>,
    /// When its pods were last asked.
    pub asked: Option<jiff::Timestamp>,
    /// Since when it has fewer ready pods than desired (as seen by kdrift).
    pub short_since: Option<jiff::Timestamp>,
}

impl From<WorkloadRow> for WorkloadEntry {
    fn from(row: WorkloadRow) -> Self {
        WorkloadEntry {
            rollout: rollout_status(&row),
            row,
            progressed: None,
            pods_why: None,
            asked: None,
            short_since: None,
        }
    }
}

impl WorkloadEntry {
    /// What moves when a rollout progresses.
    fn progress(&self) -> (i64, i32, i32, i32, i32) {
        let r = &self.row;
        (
            r.observed_generation,
            r.replicas,
            r.updated,
            r.ready,
            r.available,
        )
    }

    /// Keep the progress time of `old` (the same object before this update) if nothing moved,
    /// else start it at `now`.
    pub fn carry_progress(&mut self, old: Option<&WorkloadEntry>, now: jiff::Timestamp) {
        self.progressed = match old {
            Some(old) if old.progress() == self.progress() => old.progressed.or(Some(now)),
            _ => Some(now),
        };
        // Short of ready pods since when (and what they said, and when they were asked), kept
        // while it stays short, even if its rollout moves.
        (self.short_since, self.pods_why, self.asked) = match old {
            _ if self.row.ready >= self.row.desired => (None, None, None),
            Some(old) if old.short_since.is_some() => {
                (old.short_since, old.pods_why.clone(), old.asked)
            }
            _ => (Some(now), None, None),
        };
    }

    /// When its pods should be asked why they are not ready, if they should: fewer ready than
    /// desired for [`EXPLAIN_AFTER`] (pods that merely start are not worth a list), asked again
    /// every [`EXPLAIN_EVERY`] while that lasts.
    pub fn explain_at(&self) -> Option<jiff::Timestamp> {
        let first = self.short_since?.checked_add(EXPLAIN_AFTER).ok()?;
        let again = match self.asked {
            Some(asked) => asked.checked_add(EXPLAIN_EVERY).ok()?,
            None => first,
        };
        Some(first.max(again))
    }

    /// When this row becomes stuck if nothing moves: only for kinds without a progress deadline,
    /// while a rollout or scale is under way.
    pub fn stall_deadline(&self) -> Option<jiff::Timestamp> {
        if matches!(self.row.facts, KindFacts::Deployment)
            || !crate::rollout::workloads::can_stall(&self.rollout.phase)
        {
            return None;
        }
        self.progressed?
            .checked_add(crate::rollout::workloads::STALL_AFTER)
            .ok()
    }

    /// Past its stall deadline at `now`: stuck, saying what did not move.
    pub fn mark_stalled(&mut self, now: jiff::Timestamp) -> bool {
        let Some(since) = self.progressed else {
            return false;
        };
        let r = &self.row;
        // From the row's own phase: a row stuck already is marked again with what is known now.
        match crate::rollout::workloads::stalled(
            &rollout_status(r),
            (r.desired, r.updated, r.ready),
            since,
            now,
            self.pods_why.as_deref(),
        ) {
            Some(phase) => {
                self.rollout.phase = phase;
                true
            }
            None => false,
        }
    }
}

impl Keyed for WorkloadEntry {
    fn key(&self) -> &ObjectKey {
        &self.row.key
    }
}

/// The table's rows: one set per workload kind, as each kind has its own watcher, whose relist
/// replaces only its own rows.
#[derive(Debug, Clone, Default)]
pub struct Workloads {
    sets: [RowSet<WorkloadEntry>; 3],
}

impl Workloads {
    fn index(kind: WorkloadKind) -> usize {
        match kind {
            WorkloadKind::Deployment => 0,
            WorkloadKind::StatefulSet => 1,
            WorkloadKind::DaemonSet => 2,
        }
    }

    pub fn set(&self, kind: WorkloadKind) -> &RowSet<WorkloadEntry> {
        &self.sets[Self::index(kind)]
    }

    pub fn set_mut(&mut self, kind: WorkloadKind) -> &mut RowSet<WorkloadEntry> {
        &mut self.sets[Self::index(kind)]
    }

    pub fn get(&self, key: &ObjectKey) -> Option<&WorkloadEntry> {
        self.set(WorkloadKind::of_key(key)?).get(key)
    }

    pub fn get_mut(&mut self, key: &ObjectKey) -> Option<&mut WorkloadEntry> {
        self.set_mut(WorkloadKind::of_key(key)?).get_mut(key)
    }

    pub fn len(&self) -> usize {
        self.sets.iter().map(RowSet::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.sets.iter().all(RowSet::is_empty)
    }

    /// Whether the first list of Deployments ended (the table says "loading…" until then; a
    /// kind the user may not list must not hold the table back).
    pub fn is_synced(&self) -> bool {
        self.set(WorkloadKind::Deployment).is_synced()
    }

    pub fn lists_done(&self) -> u64 {
        self.sets.iter().map(RowSet::lists_done).sum()
    }

    /// Every row, kind by kind.
    pub fn iter(&self) -> impl Iterator<Item = &WorkloadEntry> {
        self.sets.iter().flat_map(RowSet::iter)
    }

    /// The rows of one namespace, kind by kind.
    pub fn in_namespace<'a>(
        &'a self,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a WorkloadEntry> + 'a {
        self.sets
            .iter()
            .flat_map(move |s| s.in_namespace(namespace))
    }
}

/// Everything the watchers told us.
#[derive(Debug, Clone, Default)]
pub struct ClusterCache {
    pub workloads: Workloads,
    pub replicasets: RowSet<ReplicaSetRow>,
    /// The ControllerRevisions of StatefulSets and DaemonSets (their revisions).
    pub revisions: RowSet<ReplicaSetRow>,
    pub pods: RowSet<PodRow>,
    pub events: RowSet<EventRow>,
}

/// Turn a Deployment row update into an entry update (computing its rollout status).
pub fn workload_update(u: WatchUpdate<WorkloadRow>) -> WatchUpdate<WorkloadEntry> {
    match u {
        WatchUpdate::Apply(r) => WatchUpdate::Apply(r.into()),
        WatchUpdate::InitApply(r) => WatchUpdate::InitApply(r.into()),
        WatchUpdate::Delete(k) => WatchUpdate::Delete(k),
        WatchUpdate::Init => WatchUpdate::Init,
        WatchUpdate::InitDone => WatchUpdate::InitDone,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn pod_key(ns: &str, name: &str) -> ObjectKey {
        ObjectKey::new("", "Pod", ns, name)
    }

    fn pod(ns: &str, name: &str, restarts: i32) -> PodRow {
        PodRow {
            key: pod_key(ns, name),
            owner_kind: None,
            owner: None,
            revision_hash: None,
            phase: "Running".into(),
            ready_containers: 1,
            containers: 1,
            reason: None,
            restarts,
            created: None,
            deleting: false,
            node: None,
            why: None,
            last_exit: None,
        }
    }

    fn names(set: &RowSet<PodRow>) -> Vec<String> {
        set.iter().map(|p| p.key.name.to_string()).collect()
    }

    #[test]
    fn first_list_shows_rows_as_they_arrive() {
        let mut set = RowSet::default();
        set.apply(WatchUpdate::Init);
        set.apply(WatchUpdate::InitApply(pod("a", "one", 0)));
        assert_eq!(names(&set), ["one"]);
        assert!(!set.is_synced());
        set.apply(WatchUpdate::InitDone);
        assert!(set.is_synced());
    }

    #[test]
    fn a_row_deleted_during_a_disconnect_vanishes_at_relist_end() {
        let mut set = RowSet::default();
        set.apply(WatchUpdate::Init);
        set.apply(WatchUpdate::InitApply(pod("a", "gone", 0)));
        set.apply(WatchUpdate::InitApply(pod("a", "kept", 0)));
        set.apply(WatchUpdate::InitDone);
        // Reconnect: the relist no longer has "gone".
        set.apply(WatchUpdate::Init);
        set.apply(WatchUpdate::InitApply(pod("a", "kept", 3)));
        // Listed rows are fresh at once; unlisted ones wait for the end of the list.
        assert_eq!(names(&set), ["gone", "kept"]);
        assert_eq!(set.get(&pod_key("a", "kept")).unwrap().restarts, 3);
        assert_eq!(set.apply(WatchUpdate::InitDone), Change::Membership);
        assert_eq!(names(&set), ["kept"]);
        assert_eq!(set.get(&pod_key("a", "kept")).unwrap().restarts, 3);
    }

    #[test]
    fn first_list_cut_short_starts_over() {
        let mut set = RowSet::default();
        set.apply(WatchUpdate::Init);
        set.apply(WatchUpdate::InitApply(pod("a", "stale", 0)));
        set.apply(WatchUpdate::InitApply(pod("a", "kept", 0)));
        set.apply(WatchUpdate::Init);
        set.apply(WatchUpdate::InitApply(pod("a", "fresh", 0)));
        set.apply(WatchUpdate::InitApply(pod("a", "kept", 1)));
        // The rows listed first stay on screen until the new list's end...
        assert_eq!(names(&set), ["fresh", "kept", "stale"]);
        assert!(!set.is_synced());
        // ...which drops those it did not list.
        assert_eq!(set.apply(WatchUpdate::InitDone), Change::Membership);
        assert_eq!(names(&set), ["fresh", "kept"]);
        assert_eq!(set.get(&pod_key("a", "kept")).unwrap().restarts, 1);
    }

    #[test]
    fn apply_and_delete_change_rows() {
        let mut set = RowSet::default();
        set.apply(WatchUpdate::Apply(pod("a", "one", 0)));
        set.apply(WatchUpdate::Apply(pod("b", "two", 0)));
        assert_eq!(
            set.apply(WatchUpdate::Delete(pod_key("a", "one"))),
            Change::Membership
        );
        assert_eq!(
            set.apply(WatchUpdate::Delete(pod_key("a", "one"))),
            Change::Nothing
        );
        assert_eq!(names(&set), ["two"]);
    }

    #[test]
    fn a_namespace_relist_replaces_only_that_namespace() {
        let mut set = RowSet::default();
        for (ns, n) in [("a", "gone"), ("a", "kept"), ("b", "other")] {
            set.apply(WatchUpdate::Apply(pod(ns, n, 0)));
        }
        let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
        set.apply_in(&a, WatchUpdate::Init);
        set.apply_in(&b, WatchUpdate::Init);
        set.apply_in(&a, WatchUpdate::InitApply(pod("a", "kept", 2)));
        assert_eq!(set.apply_in(&a, WatchUpdate::InitDone), Change::Membership);
        // b's relist is still running: its row stays until b's own end.
        assert_eq!(names(&set), ["kept", "other"]);
        assert_eq!(set.get(&pod_key("a", "kept")).unwrap().restarts, 2);
        set.apply_in(&b, WatchUpdate::InitDone);
        assert_eq!(names(&set), ["kept"]);
    }

    #[test]
    fn namespace_range_stops_at_the_namespace() {
        let mut set = RowSet::default();
        for (ns, n) in [("a", "x"), ("ab", "y"), ("b", "z"), ("a", "w")] {
            set.apply(WatchUpdate::Apply(pod(ns, n, 0)));
        }
        let in_a: Vec<_> = set.in_namespace("a").map(|p| p.key.name.as_ref()).collect();
        assert_eq!(in_a, ["w", "x"]);
    }
}
