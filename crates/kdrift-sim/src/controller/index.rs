//! The driver's bookkeeping: the owner index (which ReplicaSets a Deployment has, which pods a
//! ReplicaSet, StatefulSet or DaemonSet has, found by uid) and the timers for readiness,
//! back-offs and deadlines.
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::time::Duration;

use tokio::time::Instant;

use super::pods::PodStage;
use crate::object::Key;
use crate::resources::ResourceType;

#[derive(Debug, Clone)]
pub enum Timer {
    Deployment(Key),
    ReplicaSet(Key),
    StatefulSet(Key),
    DaemonSet(Key),
    /// Look at an Argo CD Application again (self-heal's delay over, or git polled).
    Application(Key),
    /// Look at a Flux Kustomization again (its interval).
    Kustomization(Key),
    /// Move the pod with this uid to this stage.
    Pod(Key, String, PodStage),
}

/// A timer in the heap, ordered by when it is due (then by when it was set).
#[derive(Debug)]
struct Due {
    at: Instant,
    seq: u64,
    timer: Timer,
}

impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Due {}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Due {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// The types the controllers follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Watched {
    Deployment,
    ReplicaSet,
    StatefulSet,
    DaemonSet,
    Pod,
    Node,
    ControllerRevision,
    DisruptionBudget,
}

impl Watched {
    pub fn of(resource: ResourceType) -> Option<Watched> {
        [
            (ResourceType::DEPLOYMENT, Watched::Deployment),
            (ResourceType::REPLICA_SET, Watched::ReplicaSet),
            (ResourceType::STATEFUL_SET, Watched::StatefulSet),
            (ResourceType::DAEMON_SET, Watched::DaemonSet),
            (ResourceType::POD, Watched::Pod),
            (ResourceType::NODE, Watched::Node),
            (
                ResourceType::CONTROLLER_REVISION,
                Watched::ControllerRevision,
            ),
            (
                ResourceType::POD_DISRUPTION_BUDGET,
                Watched::DisruptionBudget,
            ),
        ]
        .into_iter()
        .find(|(r, _)| *r == resource)
        .map(|(_, w)| w)
    }
}

/// A controller in the ownership tree.
#[derive(Debug, Clone)]
pub struct Owned {
    pub key: Key,
    pub kind: Watched,
}

#[derive(Default)]
pub struct Index {
    /// uid → key and kind, for the controllers.
    pub by_uid: HashMap<String, Owned>,
    /// controller uid → what it owns: ReplicaSets (of a Deployment) or pods (of the others).
    pub children: HashMap<String, BTreeSet<Key>>,
}

impl Index {
    pub fn add_child(&mut self, owner: Option<&str>, key: &Key) {
        if let Some(owner) = owner {
            self.children
                .entry(owner.to_string())
                .or_default()
                .insert(key.clone());
        }
    }

    pub fn remove_child(&mut self, owner: Option<&str>, key: &Key) {
        if let Some(set) = owner.and_then(|o| self.children.get_mut(o)) {
            set.remove(key);
            if set.is_empty()
                && let Some(o) = owner
            {
                self.children.remove(o);
            }
        }
    }
}

/// Timers, soonest first.
#[derive(Default)]
pub struct Timers {
    heap: BinaryHeap<Reverse<Due>>,
    seq: u64,
}

impl Timers {
    pub fn schedule(&mut self, after: Duration, timer: Timer) {
        self.seq += 1;
        self.heap.push(Reverse(Due {
            at: Instant::now() + after,
            seq: self.seq,
            timer,
        }));
    }

    /// When the next timer is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse(due)| due.at)
    }

    /// The next timer due by `now`, if any.
    pub fn pop_due(&mut self, now: Instant) -> Option<Timer> {
        if self.heap.peek().is_some_and(|Reverse(due)| due.at <= now) {
            self.heap.pop().map(|Reverse(due)| due.timer)
        } else {
            None
        }
    }
}
