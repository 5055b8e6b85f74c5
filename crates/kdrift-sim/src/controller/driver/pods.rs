//! The driver's pod work: creating a controller's pod, the scheduler binding it (or parking it
//! with its `FailedScheduling` reason), the kubelet running it on its node, and the node
//! lifecycle controller mirroring a cordon as a taint.
use jiff::Timestamp;
use serde_json::{Value, json};

use super::{CONTROLLER_MANAGER, Driver};
use crate::controller::events::{Component, EventSpec};
use crate::controller::index::Timer;
use crate::controller::nodes::{cordon_taints, internal_ip, pod_cidr};
use crate::controller::pods::{
    Host, PodStage, next_stage, observed_stage, pod_outcome, pod_status, stage_events,
};
use crate::controller::scheduler::{Placement, pod_requests, schedule};
use crate::object::{Key, controller_uid, str_at, uid};
use crate::resources::ResourceType;
use crate::store::{EventType, WriteOptions, set_condition};

impl Driver {
    /// Create a pod for the controller of `owner` (its key, for messages); the scheduler takes
    /// it from there.
    pub(super) fn create_pod(&mut self, owner: &Key, pod: Value) {
        let manager = WriteOptions::manager(CONTROLLER_MANAGER);
        match self.store.create(ResourceType::POD, pod, &manager) {
            Ok(created) => self.observe_object(ResourceType::POD, EventType::Added, &created),
            Err(error) => tracing::warn!(%owner, %error, "creating a pod failed"),
        }
    }

    /// The default scheduler's turn for one pod: bind it to the node it prefers, or say why no
    /// node fits (the `PodScheduled` condition and a `FailedScheduling` event) and park it.
    pub(super) fn schedule_pod(&mut self, key: &Key) {
        let Some(pod) = self.store.get(ResourceType::POD, &key.namespace, &key.name) else {
            self.cluster.forget(key);
            return;
        };
        if str_at(&pod, &["spec", "nodeName"]).is_some_and(|n| !n.is_empty()) {
            return;
        }
        let requests = pod_requests(&pod);
        let owner = controller_uid(&pod).map(str::to_string);
        let placement = schedule(&pod, requests, &self.cluster.fits(owner.as_deref()));
        match placement {
            Placement::Node(node) => match self.store.bind_pod(&key.namespace, &key.name, &node) {
                Ok(bound) => {
                    self.cluster.bind(key, &node, requests, owner.as_deref());
                    let message = format!(
                        "Successfully assigned {}/{} to {node}",
                        key.namespace, key.name
                    );
                    self.record_events(
                        &bound,
                        &[EventSpec::normal(
                            Component::Scheduler,
                            "Scheduled",
                            message,
                        )],
                        None,
                    );
                    self.observe_object(ResourceType::POD, EventType::Modified, &bound);
                }
                Err(error) => tracing::warn!(%key, %error, "binding a pod failed"),
            },
            Placement::Unschedulable(message) => {
                self.cluster.park(key);
                let now = self.store.now_rfc3339();
                let condition = json!({"lastProbeTime": null, "lastTransitionTime": now,
                    "message": message, "reason": "Unschedulable", "status": "False", "type": "PodScheduled"});
                let written = self.modify(
                    ResourceType::POD,
                    key,
                    &WriteOptions::status(Component::Scheduler.manager()),
                    |p| set_condition(p, condition.clone()),
                );
                if let Some(pod) = written {
                    self.record_events(
                        &pod,
                        &[EventSpec::warning(
                            Component::Scheduler,
                            "FailedScheduling",
                            message,
                        )],
                        None,
                    );
                }
            }
        }
    }

    /// Where the kubelet of `pod`'s node runs it: the node's address and pod range.
    fn host_of(&self, pod: &Value) -> Option<(String, Host)> {
        let node = str_at(pod, &["spec", "nodeName"])?;
        let entry = self.cluster.nodes.get(node)?;
        Some((
            node.to_string(),
            Host {
                ip: internal_ip(&entry.node),
                pod_cidr: pod_cidr(&entry.node),
            },
        ))
    }

    /// The kubelet meets a pod bound to its node: a new one starts creating; a ready one (seen
    /// after a resync) stays as it is.
    pub(super) fn start_pod(&mut self, key: &Key) {
        let Some(pod) = self.store.get(ResourceType::POD, &key.namespace, &key.name) else {
            return;
        };
        let pod_uid = uid(&pod).to_string();
        if self.pod_stages.get(key).is_some_and(|(u, _)| *u == pod_uid) {
            return;
        }
        match observed_stage(&pod) {
            PodStage::Running => {
                self.pod_stages
                    .insert(key.clone(), (pod_uid, PodStage::Running));
            }
            _ => self.enter_stage(key, &pod_uid, PodStage::Creating),
        }
    }

    /// Report `stage` for the pod (if it is still the same pod on a node that is still there),
    /// then plan the next stage.
    pub(super) fn enter_stage(&mut self, key: &Key, pod_uid: &str, stage: PodStage) {
        let Some(pod) = self.store.get(ResourceType::POD, &key.namespace, &key.name) else {
            self.pod_stages.remove(key);
            return;
        };
        if uid(&pod) != pod_uid {
            return;
        }
        let Some((node, host)) = self.host_of(&pod) else {
            return;
        };
        self.pod_stages
            .insert(key.clone(), (pod_uid.to_string(), stage));
        let status = pod_status(&pod, stage, Timestamp::now(), &host);
        let written = self.modify(
            ResourceType::POD,
            key,
            &WriteOptions::status(Component::Kubelet.manager()),
            |p| {
                p["status"] = status.clone();
            },
        );
        if let Some(pod) = written {
            self.record_events(&pod, &stage_events(&pod, stage), Some(&node));
        }
        if let Some((next, after)) = next_stage(pod_outcome(&pod), stage, &self.timings) {
            self.schedule(after, Timer::Pod(key.clone(), pod_uid.to_string(), next));
        }
    }

    /// The node lifecycle controller: a cordoned node carries the `unschedulable` taint.
    pub(super) fn sync_node(&mut self, key: &Key) {
        let now = self.store.now_rfc3339();
        let opts = WriteOptions::manager(CONTROLLER_MANAGER);
        self.modify(ResourceType::NODE, key, &opts, |node| {
            if let Some(taints) = cordon_taints(node, &now)
                && let Some(spec) = node.get_mut("spec").and_then(Value::as_object_mut)
            {
                if taints.is_empty() {
                    spec.remove("taints");
                } else {
                    spec.insert("taints".into(), Value::Array(taints));
                }
            }
        });
    }
}
