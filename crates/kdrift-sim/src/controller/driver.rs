//! The controllers' IO: follows the store's changes, keeps an owner index (Deployment →
//! ReplicaSets → Pods) and timers, runs the pure decisions of the sibling modules for each changed
//! object and writes their results through the store. Work is per changed object; an idle
//! cluster has no work and no timers except pending readiness, back-offs and deadlines.
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Duration;

use jiff::Timestamp;
use serde_json::Value;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::time::Instant;

use super::cluster::Cluster;
use super::deployment::{DeploymentAction, sync_deployment};
use super::events::{Component, EventSpec, event_object};
use super::index::{Index, Owned, Timer, Timers, Watched};
use super::object::{Key, controller_uid, name, str_at, uid};
use super::pods::PodStage;
use super::replicaset::{random_suffix, sync_replicaset};
use super::scheduler::pod_requests;
use super::{Gitops, Timings};
use crate::error::ApiError;
use crate::resources::ResourceType;
use crate::store::{EventType, Store, StoreEvent, WriteOptions};

/// Work items handled between two looks at the store's change feed, so a burst (seeding
/// thousands of Deployments) neither starves the HTTP server nor overflows the feed.
const BATCH: usize = 64;
/// Pause between two batches while there is a backlog.
const PAUSE: Duration = Duration::from_millis(2);
const CONTROLLER_MANAGER: &str = "kube-controller-manager";
/// Attempts of a read-modify-write that lost a race with another writer (409).
const RETRIES: usize = 5;

mod gitops;
mod pods;
mod workloads;

struct Driver {
    store: Store,
    timings: Timings,
    gitops: Gitops,
    gitops_work: gitops::GitopsWork,
    index: Index,
    dirty_deployments: BTreeSet<Key>,
    dirty_replica_sets: BTreeSet<Key>,
    /// Pods the kubelet has not started following yet.
    new_pods: BTreeSet<Key>,
    /// Kubelet state per pod: uid and stage.
    pod_stages: HashMap<Key, (String, PodStage)>,
    /// Objects to delete because their owner went (garbage collection).
    orphans: Vec<(ResourceType, Key)>,
    timers: Timers,
    /// When each Deployment and ReplicaSet with a timer is next looked at.
    planned: HashMap<(ResourceType, Key), Instant>,
    /// Repeated kubelet events (`BackOff`, `Failed`): (pod, reason and message) → event name.
    repeated: HashMap<(Key, String), String>,
    /// Deployment uids seen, to tell orphans from objects whose owner is still coming.
    deployment_uids: HashSet<String>,
    /// CustomResourceDefinitions whose status the apiextensions server has to write.
    dirty_definitions: BTreeSet<Key>,
    /// Autoscalers to look at (theirs or their target's spec changed).
    dirty_autoscalers: BTreeSet<Key>,
    /// The scheduler's cache: nodes, what is bound to them, pods waiting for one.
    cluster: Cluster,
    /// Nodes the node lifecycle controller looks at (a cordon to mirror as a taint).
    dirty_nodes: BTreeSet<Key>,
    dirty_stateful_sets: BTreeSet<Key>,
    dirty_daemon_sets: BTreeSet<Key>,
    /// Every DaemonSet: they all look again when the nodes change.
    daemon_sets: BTreeSet<Key>,
    /// controller uid → its ControllerRevisions.
    revisions: Index,
    /// The PodDisruptionBudgets of each namespace: they look again when its pods change.
    budgets: HashMap<String, BTreeSet<Key>>,
    dirty_budgets: BTreeSet<Key>,
}

/// Run the controllers until the task is aborted.
pub async fn run(store: Store, timings: Timings, gitops: Gitops) {
    let mut feed = store.subscribe();
    let mut driver = Driver::new(store, timings, gitops);
    driver.resync();
    loop {
        // Take every change already announced, then do a bounded amount of work.
        loop {
            match feed.try_recv() {
                Ok(event) => driver.observe(&event),
                Err(TryRecvError::Lagged(_)) => driver.resync(),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Closed) => return,
            }
        }
        driver.fire_due_timers();
        if driver.work(BATCH) {
            // A real pause, not just a yield: the store is one lock, and a thread that is woken
            // when it is released must get a chance to take it before the next write.
            tokio::time::sleep(PAUSE).await;
            continue;
        }
        let next_timer = driver.timers.next_due();
        tokio::select! {
            received = feed.recv() => match received {
                Ok(event) => driver.observe(&event),
                Err(RecvError::Lagged(_)) => driver.resync(),
                Err(RecvError::Closed) => return,
            },
            () = sleep_until(next_timer) => {}
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn key_of(object: &Value) -> Key {
    Key::of(object)
}

impl Driver {
    fn new(store: Store, timings: Timings, gitops: Gitops) -> Driver {
        Driver {
            store,
            timings,
            gitops,
            gitops_work: gitops::GitopsWork::default(),
            index: Index::default(),
            dirty_deployments: BTreeSet::new(),
            dirty_replica_sets: BTreeSet::new(),
            new_pods: BTreeSet::new(),
            pod_stages: HashMap::new(),
            orphans: Vec::new(),
            timers: Timers::default(),
            planned: HashMap::new(),
            repeated: HashMap::new(),
            deployment_uids: HashSet::new(),
            dirty_definitions: BTreeSet::new(),
            dirty_autoscalers: BTreeSet::new(),
            cluster: Cluster::default(),
            dirty_nodes: BTreeSet::new(),
            dirty_stateful_sets: BTreeSet::new(),
            dirty_daemon_sets: BTreeSet::new(),
            daemon_sets: BTreeSet::new(),
            revisions: Index::default(),
            budgets: HashMap::new(),
            dirty_budgets: BTreeSet::new(),
        }
    }

    /// Rebuild the index from a full list (at start, and when the change feed overflowed),
    /// look at everything once, and collect objects whose owner is gone.
    fn resync(&mut self) {
        self.index = Index::default();
        self.deployment_uids.clear();
        self.cluster = Cluster::default();
        for node in self.store.list(ResourceType::NODE, None) {
            self.observe_object(ResourceType::NODE, EventType::Added, &node);
        }
        for d in self.store.list(ResourceType::DEPLOYMENT, None) {
            self.observe_object(ResourceType::DEPLOYMENT, EventType::Added, &d);
        }
        let replica_sets = self.store.list(ResourceType::REPLICA_SET, None);
        for rs in &replica_sets {
            self.observe_object(ResourceType::REPLICA_SET, EventType::Added, rs);
        }
        let stateful_sets = self.store.list(ResourceType::STATEFUL_SET, None);
        for sts in &stateful_sets {
            self.observe_object(ResourceType::STATEFUL_SET, EventType::Added, sts);
        }
        let daemon_sets = self.store.list(ResourceType::DAEMON_SET, None);
        self.daemon_sets.clear();
        for ds in &daemon_sets {
            self.observe_object(ResourceType::DAEMON_SET, EventType::Added, ds);
        }
        // The owners of pods, and of ControllerRevisions.
        let mut pod_owners: HashSet<&str> = replica_sets.iter().map(uid).collect();
        let revision_owners: HashSet<&str> =
            stateful_sets.iter().chain(&daemon_sets).map(uid).collect();
        pod_owners.extend(&revision_owners);
        self.revisions = Index::default();
        for revision in self.store.list(ResourceType::CONTROLLER_REVISION, None) {
            self.observe_object(
                ResourceType::CONTROLLER_REVISION,
                EventType::Added,
                &revision,
            );
            if controller_uid(&revision).is_some_and(|o| !revision_owners.contains(o)) {
                self.orphans
                    .push((ResourceType::CONTROLLER_REVISION, key_of(&revision)));
            }
        }
        for rs in &replica_sets {
            if controller_uid(rs).is_some_and(|o| !self.deployment_uids.contains(o)) {
                self.orphans.push((ResourceType::REPLICA_SET, key_of(rs)));
            }
        }
        self.budgets.clear();
        for pdb in self.store.list(ResourceType::POD_DISRUPTION_BUDGET, None) {
            self.observe_object(ResourceType::POD_DISRUPTION_BUDGET, EventType::Added, &pdb);
        }
        for crd in self
            .store
            .list(ResourceType::CUSTOM_RESOURCE_DEFINITION, None)
        {
            self.dirty_definitions.insert(key_of(&crd));
        }
        for hpa in self
            .store
            .list(ResourceType::HORIZONTAL_POD_AUTOSCALER, None)
        {
            self.dirty_autoscalers.insert(key_of(&hpa));
        }
        let pods = self.store.list(ResourceType::POD, None);
        let live: HashSet<Key> = pods.iter().map(key_of).collect();
        self.pod_stages.retain(|k, _| live.contains(k));
        for pod in &pods {
            self.observe_object(ResourceType::POD, EventType::Added, pod);
            if controller_uid(pod).is_some_and(|o| !pod_owners.contains(o)) {
                self.orphans.push((ResourceType::POD, key_of(pod)));
            }
        }
        self.resync_gitops();
    }

    fn observe(&mut self, event: &StoreEvent) {
        self.observe_object(event.resource, event.kind, &event.object);
    }

    fn observe_object(&mut self, resource: ResourceType, kind: EventType, object: &Value) {
        if self.observe_gitops(resource, kind, object) {
            return;
        }
        let key = key_of(object);
        if resource == ResourceType::CUSTOM_RESOURCE_DEFINITION && kind != EventType::Deleted {
            self.dirty_definitions.insert(key);
            return;
        }
        if resource == ResourceType::HORIZONTAL_POD_AUTOSCALER && kind != EventType::Deleted {
            self.dirty_autoscalers.insert(key);
            return;
        }
        if resource == ResourceType::DEPLOYMENT && kind != EventType::Deleted {
            self.autoscalers_of(&key);
        }
        let id = uid(object).to_string();
        let owner = controller_uid(object).map(str::to_string);
        if resource == ResourceType::POD
            && let Some(budgets) = self.budgets.get(&key.namespace)
        {
            self.dirty_budgets.extend(budgets.iter().cloned());
        }
        match (Watched::of(resource), kind) {
            (Some(Watched::Deployment), EventType::Deleted) => {
                self.index.by_uid.remove(&id);
                self.deployment_uids.remove(&id);
                self.collect_children(&id, ResourceType::REPLICA_SET);
            }
            (Some(Watched::Deployment), _) => {
                self.index.by_uid.insert(
                    id.clone(),
                    Owned {
                        key: key.clone(),
                        kind: Watched::Deployment,
                    },
                );
                self.deployment_uids.insert(id);
                self.dirty_deployments.insert(key);
            }
            (Some(Watched::ReplicaSet), EventType::Deleted) => {
                self.index.by_uid.remove(&id);
                self.index.remove_child(owner.as_deref(), &key);
                self.collect_children(&id, ResourceType::POD);
                self.mark_owner(owner.as_deref());
            }
            (Some(Watched::ReplicaSet), _) => {
                self.index.by_uid.insert(
                    id,
                    Owned {
                        key: key.clone(),
                        kind: Watched::ReplicaSet,
                    },
                );
                self.index.add_child(owner.as_deref(), &key);
                self.dirty_replica_sets.insert(key);
                self.mark_owner(owner.as_deref());
            }
            (Some(Watched::Pod), EventType::Deleted) => {
                self.index.remove_child(owner.as_deref(), &key);
                self.pod_stages.remove(&key);
                self.new_pods.remove(&key);
                self.cluster.forget(&key);
                self.repeated.retain(|(pod, _), _| *pod != key);
                self.mark_owner(owner.as_deref());
            }
            (Some(Watched::Pod), _) => {
                self.index.add_child(owner.as_deref(), &key);
                match str_at(object, &["spec", "nodeName"]).filter(|n| !n.is_empty()) {
                    Some(node) => {
                        if !self.cluster.is_bound(&key) {
                            self.cluster
                                .bind(&key, node, pod_requests(object), owner.as_deref());
                        }
                        if !self.cluster.nodes.contains_key(node) {
                            // Bound to a node that does not exist: the pod GC's.
                            self.orphans.push((ResourceType::POD, key));
                        } else if self.pod_stages.get(&key).is_none_or(|(u, _)| *u != id) {
                            self.new_pods.insert(key);
                        }
                    }
                    // Pods for another scheduler are that scheduler's to bind.
                    None if str_at(object, &["spec", "schedulerName"])
                        .is_none_or(|s| s == "default-scheduler") =>
                    {
                        self.cluster.enqueue(&key);
                    }
                    None => {}
                }
                self.mark_owner(owner.as_deref());
            }
            (Some(Watched::StatefulSet), EventType::Deleted) => {
                self.index.by_uid.remove(&id);
                self.collect_children(&id, ResourceType::POD);
                self.collect_children(&id, ResourceType::CONTROLLER_REVISION);
            }
            (Some(Watched::StatefulSet), _) => {
                self.index.by_uid.insert(
                    id,
                    Owned {
                        key: key.clone(),
                        kind: Watched::StatefulSet,
                    },
                );
                self.dirty_stateful_sets.insert(key);
            }
            (Some(Watched::DaemonSet), EventType::Deleted) => {
                self.index.by_uid.remove(&id);
                self.daemon_sets.remove(&key);
                self.collect_children(&id, ResourceType::POD);
                self.collect_children(&id, ResourceType::CONTROLLER_REVISION);
            }
            (Some(Watched::DaemonSet), _) => {
                self.index.by_uid.insert(
                    id,
                    Owned {
                        key: key.clone(),
                        kind: Watched::DaemonSet,
                    },
                );
                self.daemon_sets.insert(key.clone());
                self.dirty_daemon_sets.insert(key);
            }
            (Some(Watched::DisruptionBudget), EventType::Deleted) => {
                if let Some(set) = self.budgets.get_mut(&key.namespace) {
                    set.remove(&key);
                }
            }
            (Some(Watched::DisruptionBudget), _) => {
                self.budgets
                    .entry(key.namespace.clone())
                    .or_default()
                    .insert(key.clone());
                self.dirty_budgets.insert(key);
            }
            (Some(Watched::ControllerRevision), EventType::Deleted) => {
                self.revisions.remove_child(owner.as_deref(), &key);
                self.mark_owner(owner.as_deref());
            }
            (Some(Watched::ControllerRevision), _) => {
                self.revisions.add_child(owner.as_deref(), &key);
            }
            (Some(Watched::Node), EventType::Deleted) => {
                // The pod GC deletes what was bound to a node that is gone.
                for pod in self.cluster.remove_node(&key.name) {
                    self.orphans.push((ResourceType::POD, pod));
                }
                self.dirty_daemon_sets
                    .extend(self.daemon_sets.iter().cloned());
            }
            (Some(Watched::Node), _) => {
                self.cluster.set_node(object);
                self.dirty_nodes.insert(key);
                self.dirty_daemon_sets
                    .extend(self.daemon_sets.iter().cloned());
            }
            _ => {}
        }
    }

    /// A child changed: its owner looks again.
    fn mark_owner(&mut self, owner: Option<&str>) {
        let Some(owned) = owner.and_then(|o| self.index.by_uid.get(o)) else {
            return;
        };
        let key = owned.key.clone();
        match owned.kind {
            Watched::Deployment => self.dirty_deployments.insert(key),
            Watched::ReplicaSet => self.dirty_replica_sets.insert(key),
            Watched::StatefulSet => self.dirty_stateful_sets.insert(key),
            Watched::DaemonSet => self.dirty_daemon_sets.insert(key),
            _ => false,
        };
    }

    /// The index of what `resource` objects an owner has.
    fn index_of(&mut self, resource: ResourceType) -> &mut Index {
        if resource == ResourceType::CONTROLLER_REVISION {
            &mut self.revisions
        } else {
            &mut self.index
        }
    }

    fn collect_children(&mut self, owner: &str, resource: ResourceType) {
        if let Some(children) = self.index_of(resource).children.remove(owner) {
            self.orphans
                .extend(children.into_iter().map(|k| (resource, k)));
        }
    }

    fn schedule(&mut self, after: Duration, timer: Timer) {
        self.timers.schedule(after, timer);
    }

    /// Look at an object again after `after`, unless a look no later than that is already
    /// planned: every sync of a rollout asks for its deadline, one timer per object is enough.
    fn look_again(&mut self, after: Duration, timer: Timer) {
        let (key, kind) = match &timer {
            Timer::Deployment(key) => (key.clone(), ResourceType::DEPLOYMENT),
            Timer::ReplicaSet(key) => (key.clone(), ResourceType::REPLICA_SET),
            Timer::StatefulSet(key) => (key.clone(), ResourceType::STATEFUL_SET),
            Timer::DaemonSet(key) => (key.clone(), ResourceType::DAEMON_SET),
            Timer::Pod(..) | Timer::Application(_) | Timer::Kustomization(_) => {
                return self.schedule(after, timer);
            }
        };
        let now = Instant::now();
        let at = now + after;
        match self.planned.get(&(kind, key.clone())) {
            Some(planned) if *planned > now && *planned <= at => {}
            _ => {
                self.planned.insert((kind, key), at);
                self.schedule(after, timer);
            }
        }
    }

    fn fire_due_timers(&mut self) {
        let now = Instant::now();
        while let Some(timer) = self.timers.pop_due(now) {
            match timer {
                Timer::Deployment(key) => {
                    self.planned
                        .remove(&(ResourceType::DEPLOYMENT, key.clone()));
                    self.dirty_deployments.insert(key);
                }
                Timer::ReplicaSet(key) => {
                    self.planned
                        .remove(&(ResourceType::REPLICA_SET, key.clone()));
                    self.dirty_replica_sets.insert(key);
                }
                Timer::StatefulSet(key) => {
                    self.planned
                        .remove(&(ResourceType::STATEFUL_SET, key.clone()));
                    self.dirty_stateful_sets.insert(key);
                }
                Timer::DaemonSet(key) => {
                    self.planned
                        .remove(&(ResourceType::DAEMON_SET, key.clone()));
                    self.dirty_daemon_sets.insert(key);
                }
                Timer::Application(key) => self.gitops_timer_fired(true, key),
                Timer::Kustomization(key) => self.gitops_timer_fired(false, key),
                Timer::Pod(key, pod_uid, stage) => self.enter_stage(&key, &pod_uid, stage),
            }
        }
    }

    /// Do up to `budget` items of work; whether any is left.
    fn work(&mut self, mut budget: usize) -> bool {
        while budget > 0 {
            budget -= 1;
            if let Some((resource, key)) = self.orphans.pop() {
                self.delete(resource, &key);
            } else if let Some(key) = self.dirty_nodes.pop_first() {
                self.sync_node(&key);
            } else if let Some(key) = self.cluster.next_to_schedule() {
                self.schedule_pod(&key);
            } else if let Some(key) = self.new_pods.pop_first() {
                self.start_pod(&key);
            } else if let Some(key) = self.dirty_replica_sets.pop_first() {
                self.sync_replica_set(&key);
            } else if let Some(key) = self.dirty_deployments.pop_first() {
                self.sync_deployment(&key);
            } else if let Some(key) = self.dirty_stateful_sets.pop_first() {
                self.sync_stateful_set(&key);
            } else if let Some(key) = self.dirty_daemon_sets.pop_first() {
                self.sync_daemon_set(&key);
            } else if let Some(key) = self.dirty_budgets.pop_first() {
                self.sync_budget(&key);
            } else if let Some(key) = self.dirty_definitions.pop_first() {
                self.establish(&key);
            } else if let Some(key) = self.dirty_autoscalers.pop_first() {
                self.autoscale(&key);
            } else if let Some(key) = self.gitops_work.dirty_sources.pop_first() {
                self.reconcile_source(&key);
            } else if let Some(key) = self.gitops_work.dirty_kustomizations.pop_first() {
                self.reconcile_kustomization(&key);
            } else if let Some(key) = self.gitops_work.dirty_apps.pop_first() {
                self.reconcile_application(&key);
            } else {
                return false;
            }
        }
        !(self.orphans.is_empty()
            && self.dirty_nodes.is_empty()
            && !self.cluster.has_work()
            && self.new_pods.is_empty()
            && self.dirty_replica_sets.is_empty()
            && self.dirty_deployments.is_empty()
            && self.dirty_stateful_sets.is_empty()
            && self.dirty_daemon_sets.is_empty()
            && self.dirty_budgets.is_empty()
            && self.dirty_definitions.is_empty()
            && self.dirty_autoscalers.is_empty()
            && self.gitops_work.is_idle())
    }

    /// The autoscalers of the namespace of Deployment `key` that target it look again.
    fn autoscalers_of(&mut self, key: &Key) {
        for hpa in self.store.list(
            ResourceType::HORIZONTAL_POD_AUTOSCALER,
            Some(&key.namespace),
        ) {
            if super::autoscaler::target(&hpa) == Some(("Deployment", key.name.as_str())) {
                self.dirty_autoscalers.insert(key_of(&hpa));
            }
        }
    }

    /// The autoscaler: its target's replicas within bounds (through `/scale`), then its status.
    fn autoscale(&mut self, key: &Key) {
        let Some(hpa) = self.store.get(
            ResourceType::HORIZONTAL_POD_AUTOSCALER,
            &key.namespace,
            &key.name,
        ) else {
            return;
        };
        let Some(("Deployment", target)) = super::autoscaler::target(&hpa) else {
            return;
        };
        let Some(deploy) = self
            .store
            .get(ResourceType::DEPLOYMENT, &key.namespace, target)
        else {
            return;
        };
        let current = deploy
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let wanted = super::autoscaler::desired(&hpa, current);
        if wanted != current {
            let scale = WriteOptions {
                manager: CONTROLLER_MANAGER.to_string(),
                subresource: Some("scale".into()),
                dry_run: false,
            };
            let patch =
                crate::store::Patch::Merge(serde_json::json!({"spec": {"replicas": wanted}}));
            if let Err(error) = self.store.patch(
                ResourceType::DEPLOYMENT,
                &key.namespace,
                target,
                &patch,
                &scale,
            ) {
                tracing::warn!(%key, %error, "autoscaler write failed");
            }
        }
        let now = self.store.now_rfc3339();
        let opts = WriteOptions::status(CONTROLLER_MANAGER);
        self.modify(ResourceType::HORIZONTAL_POD_AUTOSCALER, key, &opts, |hpa| {
            let status = super::autoscaler::status(hpa, wanted, &now);
            let same = hpa.get("status").is_some_and(|s| {
                s.get("currentReplicas") == status.get("currentReplicas")
                    && s.get("conditions").is_some()
            });
            if !same {
                hpa["status"] = status;
            }
        });
    }

    /// The apiextensions server: a definition's names accepted, its kind established.
    fn establish(&mut self, key: &Key) {
        let now = self.store.now_rfc3339();
        let opts = WriteOptions::status("kube-apiserver");
        self.modify(
            ResourceType::CUSTOM_RESOURCE_DEFINITION,
            key,
            &opts,
            |crd| {
                if let Some(status) = super::apiextensions::definition_status(crd, &now) {
                    crd["status"] = status;
                }
            },
        );
    }

    fn delete(&mut self, resource: ResourceType, key: &Key) {
        match self
            .store
            .delete(resource, &key.namespace, &key.name, false)
        {
            Ok(_) | Err(ApiError::NotFound(_)) => {}
            Err(error) => tracing::warn!(%key, ?resource, %error, "garbage collection failed"),
        }
    }

    /// Objects of `resource` listed under `owner` in the index, as they are now.
    fn children(&mut self, owner: &str, resource: ResourceType) -> Vec<Value> {
        let keys: Vec<Key> = self
            .index_of(resource)
            .children
            .get(owner)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        let mut found = Vec::with_capacity(keys.len());
        for key in keys {
            match self.store.get(resource, &key.namespace, &key.name) {
                Some(child) if controller_uid(&child) == Some(owner) => found.push(child),
                _ => self.index_of(resource).remove_child(Some(owner), &key),
            }
        }
        found
    }

    fn sync_deployment(&mut self, key: &Key) {
        let Some(deploy) = self
            .store
            .get(ResourceType::DEPLOYMENT, &key.namespace, &key.name)
        else {
            return;
        };
        let owned = self.children(uid(&deploy), ResourceType::REPLICA_SET);
        let now = Timestamp::now();
        let result = sync_deployment(&deploy, &owned, now);
        let manager = WriteOptions::manager(CONTROLLER_MANAGER);
        for action in result.actions {
            match action {
                DeploymentAction::CreateReplicaSet(rs) => {
                    match self.store.create(ResourceType::REPLICA_SET, rs, &manager) {
                        Ok(created) => self.observe_object(
                            ResourceType::REPLICA_SET,
                            EventType::Added,
                            &created,
                        ),
                        Err(error) => tracing::warn!(%key, %error, "creating a ReplicaSet failed"),
                    }
                }
                DeploymentAction::ScaleReplicaSet {
                    name,
                    replicas,
                    annotations,
                } => {
                    self.modify(
                        ResourceType::REPLICA_SET,
                        &Key::new(&key.namespace, &name),
                        &manager,
                        |rs| {
                            rs["spec"]["replicas"] = Value::from(replicas);
                            set_annotations(rs, &annotations);
                        },
                    );
                }
                DeploymentAction::AnnotateReplicaSet { name, annotations } => {
                    self.modify(
                        ResourceType::REPLICA_SET,
                        &Key::new(&key.namespace, &name),
                        &manager,
                        |rs| {
                            set_annotations(rs, &annotations);
                        },
                    );
                }
                DeploymentAction::DeleteReplicaSet { name } => {
                    self.delete(ResourceType::REPLICA_SET, &Key::new(&key.namespace, &name));
                }
            }
        }
        self.record_events(&deploy, &result.events, None);
        if let Some(revision) = result.revision {
            self.modify(ResourceType::DEPLOYMENT, key, &manager, |d| {
                d["metadata"]["annotations"][super::deployment::REVISION] =
                    Value::from(revision.clone());
            });
        }
        self.finish_sync(
            ResourceType::DEPLOYMENT,
            key,
            result.status,
            result.requeue_after,
            Timer::Deployment,
        );
    }

    /// The end of a controller's sync: its new status, written through `/status`, and another
    /// look after `again` when the decision asked for one.
    fn finish_sync(
        &mut self,
        resource: ResourceType,
        key: &Key,
        status: Option<Value>,
        again: Option<Duration>,
        timer: fn(Key) -> Timer,
    ) {
        if let Some(status) = status {
            self.modify(
                resource,
                key,
                &WriteOptions::status(CONTROLLER_MANAGER),
                |o| o["status"] = status.clone(),
            );
        }
        if let Some(after) = again {
            self.look_again(after, timer(key.clone()));
        }
    }

    /// Create and delete pods as the controller at `owner` decided.
    fn change_pods(&mut self, owner: &Key, create: Vec<Value>, delete: &[String]) {
        for pod in create {
            self.create_pod(owner, pod);
        }
        for pod in delete {
            self.delete(ResourceType::POD, &Key::new(&owner.namespace, pod));
        }
    }

    fn sync_replica_set(&mut self, key: &Key) {
        let Some(rs) = self
            .store
            .get(ResourceType::REPLICA_SET, &key.namespace, &key.name)
        else {
            return;
        };
        let pods = self.children(uid(&rs), ResourceType::POD);
        let result = sync_replicaset(&rs, &pods, Timestamp::now(), &mut random_suffix);
        self.change_pods(key, result.create, &result.delete);
        self.record_events(&rs, &result.events, None);
        self.finish_sync(
            ResourceType::REPLICA_SET,
            key,
            result.status,
            result.requeue_after,
            Timer::ReplicaSet,
        );
    }

    /// Record events about `involved`; a kubelet warning already recorded for this pod is
    /// counted again instead of repeated.
    fn record_events(&mut self, involved: &Value, events: &[EventSpec], host: Option<&str>) {
        let now = Timestamp::now();
        for spec in events {
            let opts = WriteOptions::manager(spec.component.manager());
            let repeat_key = (
                key_of(involved),
                format!("{}/{}", spec.reason, spec.message),
            );
            // The kubelet repeats these every back-off, the scheduler every attempt: counted,
            // as the event recorder does.
            let counted = matches!(
                (spec.component, spec.reason.as_str()),
                (Component::Kubelet, "BackOff" | "Failed")
                    | (Component::Scheduler, "FailedScheduling")
            );
            if counted && let Some(event_name) = self.repeated.get(&repeat_key).cloned() {
                let event_key = Key::new(&repeat_key.0.namespace, &event_name);
                let bumped = self.modify(ResourceType::EVENT, &event_key, &opts, |e| {
                    let patch = super::events::repeat_patch(e, now);
                    e["count"] = patch["count"].clone();
                    e["lastTimestamp"] = patch["lastTimestamp"].clone();
                });
                if bumped.is_some() {
                    continue;
                }
            }
            let event = event_object(involved, spec, now, host);
            match self.store.create(ResourceType::EVENT, event, &opts) {
                Ok(created) if counted => {
                    self.repeated.insert(repeat_key, name(&created).to_string());
                }
                Ok(_) => {}
                Err(error) => tracing::debug!(%error, "recording an event failed"),
            }
        }
    }

    /// Read, change and write back one object, again on a 409 (another writer got in first).
    /// Nothing is written when `change` leaves the object as it was.
    fn modify(
        &self,
        resource: ResourceType,
        key: &Key,
        opts: &WriteOptions,
        change: impl Fn(&mut Value),
    ) -> Option<Value> {
        for _ in 0..RETRIES {
            let current = self.store.get(resource, &key.namespace, &key.name)?;
            let mut next = current.clone();
            change(&mut next);
            if next == current {
                return Some(current);
            }
            match self.store.update(resource, next, opts) {
                Ok(written) => return Some(written),
                Err(ApiError::Conflict { .. }) => continue,
                Err(ApiError::NotFound(_)) => return None,
                Err(error) => {
                    tracing::warn!(%key, ?resource, %error, "controller write failed");
                    return None;
                }
            }
        }
        None
    }
}

fn set_annotations(object: &mut Value, annotations: &serde_json::Map<String, Value>) {
    for (k, v) in annotations {
        object["metadata"]["annotations"][k] = v.clone();
    }
}

#[cfg(test)]
#[path = "driver_tests.rs"]
mod tests;

#[cfg(test)]
mod node_tests;

#[cfg(test)]
mod workload_tests;
