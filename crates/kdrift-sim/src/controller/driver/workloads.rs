//! The driver's StatefulSet and DaemonSet work: read the controller with its pods and
//! ControllerRevisions, run the pure decision, write the history first (pods name their
//! revision), then the pods, the events and the status.
use jiff::Timestamp;
use serde_json::Value;

use super::{CONTROLLER_MANAGER, Driver};
use crate::controller::daemonset::sync_daemonset;
use crate::controller::disruption::budget_status;
use crate::controller::index::Timer;
use crate::controller::replicaset::random_suffix;
use crate::controller::revision::HistoryChange;
use crate::controller::statefulset::sync_statefulset;
use crate::object::{Key, uid};
use crate::resources::ResourceType;
use crate::store::{EventType, WriteOptions};

impl Driver {
    pub(super) fn sync_stateful_set(&mut self, key: &Key) {
        let Some(set) = self
            .store
            .get(ResourceType::STATEFUL_SET, &key.namespace, &key.name)
        else {
            return;
        };
        let pods = self.children(uid(&set), ResourceType::POD);
        let revisions = self.children(uid(&set), ResourceType::CONTROLLER_REVISION);
        let result = sync_statefulset(&set, &pods, &revisions, Timestamp::now());
        self.write_history(key, result.history);
        self.change_pods(key, result.create, &result.delete);
        self.record_events(&set, &result.events, None);
        self.finish_sync(
            ResourceType::STATEFUL_SET,
            key,
            result.status,
            result.requeue_after,
            Timer::StatefulSet,
        );
    }

    pub(super) fn sync_daemon_set(&mut self, key: &Key) {
        let Some(ds) = self
            .store
            .get(ResourceType::DAEMON_SET, &key.namespace, &key.name)
        else {
            return;
        };
        let pods = self.children(uid(&ds), ResourceType::POD);
        let revisions = self.children(uid(&ds), ResourceType::CONTROLLER_REVISION);
        let nodes: Vec<&Value> = self.cluster.nodes.values().map(|n| &n.node).collect();
        let result = sync_daemonset(
            &ds,
            &nodes,
            &pods,
            &revisions,
            Timestamp::now(),
            &mut random_suffix,
        );
        self.write_history(key, result.history);
        self.change_pods(key, result.create, &result.delete);
        self.record_events(&ds, &result.events, None);
        self.finish_sync(
            ResourceType::DAEMON_SET,
            key,
            result.status,
            result.requeue_after,
            Timer::DaemonSet,
        );
    }

    /// The disruption controller: a budget's healthy, desired and allowed counts over the pods
    /// of its namespace.
    pub(super) fn sync_budget(&mut self, key: &Key) {
        let Some(pdb) = self.store.get(
            ResourceType::POD_DISRUPTION_BUDGET,
            &key.namespace,
            &key.name,
        ) else {
            return;
        };
        let pods = self.store.list(ResourceType::POD, Some(&key.namespace));
        let status = budget_status(&pdb, &pods, &self.store.now_rfc3339());
        self.modify(
            ResourceType::POD_DISRUPTION_BUDGET,
            key,
            &WriteOptions::status(CONTROLLER_MANAGER),
            |p| p["status"] = status.clone(),
        );
    }

    /// Make the ControllerRevision changes of a sync of the controller at `owner`.
    fn write_history(&mut self, owner: &Key, changes: Vec<HistoryChange>) {
        let manager = WriteOptions::manager(CONTROLLER_MANAGER);
        for change in changes {
            match change {
                HistoryChange::Create(revision) => {
                    match self
                        .store
                        .create(ResourceType::CONTROLLER_REVISION, revision, &manager)
                    {
                        Ok(created) => self.observe_object(
                            ResourceType::CONTROLLER_REVISION,
                            EventType::Added,
                            &created,
                        ),
                        Err(error) => {
                            tracing::warn!(%owner, %error, "creating a ControllerRevision failed");
                        }
                    }
                }
                HistoryChange::Renumber { name, revision } => {
                    self.modify(
                        ResourceType::CONTROLLER_REVISION,
                        &Key::new(&owner.namespace, &name),
                        &manager,
                        |r| r["revision"] = Value::from(revision),
                    );
                }
                HistoryChange::Delete(name) => {
                    self.delete(
                        ResourceType::CONTROLLER_REVISION,
                        &Key::new(&owner.namespace, &name),
                    );
                }
            }
        }
    }
}
