//! What the watchers send: batches of [`WatchUpdate`]s of slim rows, tagged with the watcher
//! ([`WatchedKind`]) and the connection's epoch, and each watcher's [`WatchHealth`].
use std::sync::Arc;

use jiff::Timestamp;

use super::live::LiveRow;
use super::rows::{EventRow, Keyed, PodRow, ReplicaSetRow, WorkloadKind, WorkloadRow};
use crate::manifest::ObjectKey;

/// Which watcher a message comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WatchedKind {
    Deployments,
    StatefulSets,
    DaemonSets,
    ReplicaSets,
    ControllerRevisions,
    Pods,
    Events,
    /// The objects of a kind the manifests use (see [`ObjectKind`]).
    Objects,
}

impl WatchedKind {
    /// The watcher of a table kind.
    pub fn of(kind: WorkloadKind) -> WatchedKind {
        match kind {
            WorkloadKind::Deployment => WatchedKind::Deployments,
            WorkloadKind::StatefulSet => WatchedKind::StatefulSets,
            WorkloadKind::DaemonSet => WatchedKind::DaemonSets,
        }
    }

    /// Does it watch one of the table's kinds?
    pub fn is_table(self) -> bool {
        matches!(
            self,
            WatchedKind::Deployments | WatchedKind::StatefulSets | WatchedKind::DaemonSets
        )
    }

    pub fn plural(self) -> &'static str {
        match self {
            WatchedKind::Deployments => "deployments",
            WatchedKind::StatefulSets => "statefulsets",
            WatchedKind::DaemonSets => "daemonsets",
            WatchedKind::ReplicaSets => "replicasets",
            WatchedKind::ControllerRevisions => "controllerrevisions",
            WatchedKind::Pods => "pods",
            WatchedKind::Events => "events",
            WatchedKind::Objects => "objects",
        }
    }
}

/// One change to a cached set of rows, mirroring kube-runtime's `watcher::Event`.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchUpdate<T> {
    Apply(T),
    Delete(ObjectKey),
    /// A relist begins: rows until `InitDone` replace the whole set at once.
    Init,
    InitApply(T),
    InitDone,
}

/// The state of one watcher, for the status bar and the affected rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchHealth {
    /// Listing for the first time.
    Syncing,
    Connected,
    /// The last request failed; kube-runtime retries with backoff.
    Reconnecting {
        since: Timestamp,
        reason: String,
    },
    /// HTTP 403: the user may not list/watch there (`None` = the whole scope).
    Forbidden {
        namespace: Option<String>,
        message: String,
    },
}

/// What the watchers send; `epoch` tells the app which watcher generation it belongs to (the
/// table's for Deployments, the detail view's for the rest), so a message still in flight after
/// `:ns`, `:ctx` or leaving a detail view is ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterMessage {
    pub epoch: u64,
    pub event: ClusterEvent,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ClusterEvent {
    /// Rows of one workload kind, without their JSON (no drift).
    Workloads(WorkloadKind, Vec<WatchUpdate<WorkloadRow>>),
    /// What the table watchers send: rows of one workload kind with their drift extracts.
    WorkloadsLive(WorkloadKind, Vec<WatchUpdate<LiveRow>>),
    ReplicaSets(Vec<WatchUpdate<ReplicaSetRow>>),
    /// The ControllerRevisions of StatefulSets and DaemonSets: their revisions, as rows of the
    /// same shape as ReplicaSets.
    ControllerRevisions(Vec<WatchUpdate<ReplicaSetRow>>),
    Pods(Vec<WatchUpdate<PodRow>>),
    Events(Vec<WatchUpdate<EventRow>>),
    Health(WatchedKind, WatchHealth),
    /// While the all-namespaces watch of a workload kind is refused (403), its rows come from
    /// one watcher per namespace: a relist here replaces only that namespace's rows.
    NamespaceWorkloads(WorkloadKind, Arc<str>, Vec<WatchUpdate<LiveRow>>),
    /// The health of one namespace's watcher of a workload kind, while they stand in for the
    /// all-namespaces watch.
    NamespaceHealth(WorkloadKind, Arc<str>, WatchHealth),
    /// The all-namespaces watch of a workload kind is allowed again and replaces the
    /// per-namespace watchers: their health no longer applies (its relist follows).
    AllNamespacesWatch(WorkloadKind),
    /// Objects of a kind the manifests use (other than Deployments), with their JSON.
    Objects(Arc<ObjectKind>, Vec<WatchUpdate<ObjectRow>>),
    /// The health of one such kind's watcher.
    ObjectHealth(Arc<ObjectKind>, WatchHealth),
}

/// A kind the manifests use whose objects are watched for drift (Deployments aside).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKind {
    pub group: String,
    pub kind: String,
    /// The version it is watched in (the manifests').
    pub api_version: String,
    /// `configmaps`, `widgets.example.com`: how the status bar names it.
    pub resource: String,
    pub namespaced: bool,
}

impl ObjectKind {
    pub fn of(kind: &crate::cluster::kinds::ServedKind) -> ObjectKind {
        ObjectKind {
            group: kind.group.clone(),
            kind: kind.kind.clone(),
            api_version: kind.api_version(),
            resource: kind.resource(),
            namespaced: kind.namespaced,
        }
    }

    /// Whether `key` names an object of this kind.
    pub fn is_kind_of(&self, key: &crate::manifest::ObjectKey) -> bool {
        key.group == self.group && key.kind == self.kind
    }
}

/// One object of a watched kind: its namespace and name, and its JSON text.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectRow {
    pub key: ObjectKey,
    pub json: super::live::LiveJson,
}

impl Keyed for ObjectRow {
    fn key(&self) -> &ObjectKey {
        &self.key
    }
}

impl ClusterEvent {
    /// Does it belong to the table's watchers (else to the detail view's)?
    pub fn is_table(&self) -> bool {
        matches!(
            self,
            ClusterEvent::Workloads(..)
                | ClusterEvent::WorkloadsLive(..)
                | ClusterEvent::NamespaceWorkloads(..)
                | ClusterEvent::NamespaceHealth(..)
                | ClusterEvent::AllNamespacesWatch(_)
                | ClusterEvent::Objects(..)
                | ClusterEvent::ObjectHealth(..)
        ) || matches!(self, ClusterEvent::Health(kind, _) if kind.is_table())
    }
}
