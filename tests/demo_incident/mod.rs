//! The demo incident as the pictures show it (`tests/docs/pictures.rs`): the demo cluster's
//! store after its seed, the autoscaler's first decision and the incident's out-of-band changes,
//! each object stamped with fixed times instead of the wall clock's, and the status the demo's
//! controllers settle on (checkout stuck on its crashing image, the rest rolled out); and what
//! the detail watchers report for checkout.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use kdrift::cluster::rows::{EventRow, PodRow, ReplicaSetRow};
use kdrift::sim::controller::hash::pod_template_hash;
use kdrift::sim::controller::pods::{Host, PodStage, pod_status};
use kdrift::sim::resources::ResourceType;
use kdrift::sim::scenario::incident::{self, Step};
use kdrift::sim::store::{Patch, Store, WriteOptions};
use serde_json::{Value, json};

/// The clock of every picture: the app's `now`.
pub const NOW: &str = "2026-11-22T03:12:00Z";
/// When the team applied `demo/` with kubectl, and when Argo CD and Flux first synced it.
pub const APPLIED: &str = "2026-11-19T10:00:00Z";
pub const SYNCED: &str = "2026-11-19T10:05:00Z";

pub fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

pub fn rfc3339(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// When step `index` of `steps` was made: at the demo's pace (`kdrift demo` makes one change
/// every 12 s), the last 10 s before [`NOW`], as on the screen about two minutes into the demo.
pub fn step_time(index: usize, steps: usize) -> Timestamp {
    let between = SignedDuration::try_from(incident::Pacing::demo().between).unwrap();
    let before = i32::try_from(steps - 1 - index).unwrap();
    at(NOW) - SignedDuration::from_secs(10) - between * before
}

/// The demo cluster's store after its seed and the incident's out-of-band changes (all but the
/// drain and the uncordon, which move pods and change no object's spec, and the release from git,
/// which comes after the pictures' moment).
pub struct Incident {
    pub store: Store,
    /// Each changed object, `(kind, namespace, name)`: when it was changed, and as it was before.
    changed: BTreeMap<(String, String, String), (Timestamp, Value)>,
}

pub fn incident() -> Incident {
    let store = Store::new();
    kdrift::sim::scenario::seed(&store).unwrap();
    autoscale(&store);
    let steps: Vec<Step> = incident::steps()
        .into_iter()
        .filter(|s| {
            !matches!(
                s,
                Step::Drain { .. } | Step::Uncordon { .. } | Step::Release { .. }
            )
        })
        .collect();
    let mut changed = BTreeMap::new();
    for (index, step) in steps.iter().enumerate() {
        let target = step.target();
        let resource = step.resource();
        let before = store
            .get(resource, &target.namespace, &target.name)
            .unwrap();
        incident::apply_step(&store, step).unwrap();
        let key = (
            resource.kind().to_owned(),
            target.namespace.clone(),
            target.name.clone(),
        );
        changed.insert(key, (step_time(index, steps.len()), before));
    }
    Incident { store, changed }
}

/// What the demo's autoscaler does once after the seed: each target's replicas within its
/// HorizontalPodAutoscaler's bounds, through `/scale`, as kube-controller-manager.
pub fn autoscale(store: &Store) {
    for hpa in store.list(ResourceType::HORIZONTAL_POD_AUTOSCALER, None) {
        let Some(("Deployment", target)) = kdrift::sim::controller::autoscaler::target(&hpa) else {
            continue;
        };
        let namespace = hpa["metadata"]["namespace"].as_str().unwrap();
        let deployment = store
            .get(ResourceType::DEPLOYMENT, namespace, target)
            .unwrap();
        let current = deployment
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let wanted = kdrift::sim::controller::autoscaler::desired(&hpa, current);
        let scale = WriteOptions {
            manager: "kube-controller-manager".into(),
            subresource: Some("scale".into()),
            dry_run: false,
        };
        let patch = Patch::Merge(json!({"spec": {"replicas": wanted}}));
        store
            .patch(ResourceType::DEPLOYMENT, namespace, target, &patch, &scale)
            .unwrap();
    }
}

impl Incident {
    fn change(&self, object: &Value) -> Option<&(Timestamp, Value)> {
        let text = |p: &str| object.pointer(p).and_then(Value::as_str).unwrap_or("");
        self.changed.get(&(
            text("/kind").to_owned(),
            text("/metadata/namespace").to_owned(),
            text("/metadata/name").to_owned(),
        ))
    }

    /// When `object` was changed out of band, if it was.
    pub fn changed_at(&self, object: &Value) -> Option<Timestamp> {
        self.change(object).map(|(at, _)| *at)
    }

    /// `object` as it was before the incident changed it (retimed).
    pub fn before(&self, object: &Value) -> Value {
        let (_, before) = self.change(object).unwrap();
        self.retimed(before.clone())
    }

    /// `object` as the store holds it, stamped with the pictures' times instead of the wall
    /// clock's: created when `demo/` was applied, each field manager's write when it was made.
    pub fn retimed(&self, mut object: Value) -> Value {
        let changed = self.changed_at(&object);
        object["metadata"]["creationTimestamp"] = json!(APPLIED);
        let key = format!(
            "{}/{}/{}",
            object["kind"].as_str().unwrap_or(""),
            object["metadata"]["namespace"].as_str().unwrap_or(""),
            object["metadata"]["name"].as_str().unwrap_or("")
        );
        object["metadata"]["uid"] = json!(uid(&key));
        if let Some(entries) = object
            .pointer_mut("/metadata/managedFields")
            .and_then(Value::as_array_mut)
        {
            for entry in entries {
                if entry.get("time").is_none() {
                    continue;
                }
                let manager = entry["manager"].as_str().unwrap_or("");
                let time = match manager {
                    "kubectl-client-side-apply" | "kube-apiserver" | "kube-controller-manager" => {
                        at(APPLIED)
                    }
                    "argocd-controller" | "kustomize-controller" => at(SYNCED),
                    _ => changed.unwrap_or(at(SYNCED)),
                };
                entry["time"] = json!(rfc3339(time));
            }
        }
        object
    }

    /// Every object of `resource`, retimed.
    pub fn list(&self, resource: ResourceType) -> Vec<Value> {
        self.store
            .list(resource, None)
            .into_iter()
            .map(|o| self.retimed(o))
            .collect()
    }

    pub fn get(&self, resource: ResourceType, namespace: &str, name: &str) -> Value {
        self.retimed(self.store.get(resource, namespace, name).unwrap())
    }
}

/// A Deployment condition as the deployment controller writes it.
pub fn condition(kind: &str, status: &str, reason: &str, message: &str, time: Timestamp) -> Value {
    json!({
        "type": kind, "status": status, "reason": reason, "message": message,
        "lastUpdateTime": rfc3339(time), "lastTransitionTime": rfc3339(time),
    })
}

/// The ReplicaSet name of a Deployment's current template, as the deployment controller names it.
pub fn replicaset_name(deployment: &Value) -> String {
    let hash = pod_template_hash(&deployment["spec"]["template"]);
    format!(
        "{}-{hash}",
        deployment["metadata"]["name"].as_str().unwrap()
    )
}

/// The Deployment whose new image crashes: its rollout is stuck.
pub const CHECKOUT: (&str, &str) = ("shop", "checkout");

/// `object` with the status the demo's controllers settle on: every workload rolled out but
/// checkout, whose new ReplicaSet's 2 pods crash-loop beside the 3 old ones still serving, past
/// its 45 s progress deadline; and each Deployment's revision annotation.
pub fn with_status(incident: &Incident, mut object: Value) -> Value {
    let kind = object["kind"].as_str().unwrap_or("").to_owned();
    let generation = object["metadata"]["generation"].as_i64().unwrap_or(1);
    let desired = object
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let since = incident.changed_at(&object).unwrap_or(at(SYNCED));
    let settled = since + SignedDuration::from_secs(40);
    let namespace = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    let name = object["metadata"]["name"].as_str().unwrap_or("").to_owned();
    if kind == "Deployment" {
        // The deployment controller numbers the revisions; checkout's image made its second.
        let revision = if (namespace.as_str(), name.as_str()) == CHECKOUT {
            "2"
        } else {
            "1"
        };
        object["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = json!(revision);
    }
    object["status"] = match kind.as_str() {
        "Deployment" if (namespace.as_str(), name.as_str()) == CHECKOUT => json!({
            "observedGeneration": generation,
            "replicas": desired + 2, "updatedReplicas": 2, "readyReplicas": desired,
            "availableReplicas": desired, "unavailableReplicas": 2,
            "conditions": [
                condition("Available", "True", "MinimumReplicasAvailable",
                    "Deployment has minimum availability.", at(SYNCED)),
                condition("Progressing", "False", "ProgressDeadlineExceeded",
                    &format!("ReplicaSet \"{}\" has timed out progressing.", replicaset_name(&object)),
                    since + SignedDuration::from_secs(46)),
            ],
        }),
        "Deployment" => json!({
            "observedGeneration": generation,
            "replicas": desired, "updatedReplicas": desired, "readyReplicas": desired,
            "availableReplicas": desired,
            "conditions": [
                condition("Available", "True", "MinimumReplicasAvailable",
                    "Deployment has minimum availability.", at(SYNCED)),
                condition("Progressing", "True", "NewReplicaSetAvailable",
                    &format!("ReplicaSet \"{}\" has successfully progressed.", replicaset_name(&object)),
                    settled),
            ],
        }),
        "StatefulSet" => {
            // Only compared for equality (current = update: rolled out), never shown.
            let revision = format!("{name}-{}", pod_template_hash(&object["spec"]["template"]));
            json!({
                "observedGeneration": generation, "replicas": desired, "readyReplicas": desired,
                "currentReplicas": desired, "updatedReplicas": desired, "availableReplicas": desired,
                "currentRevision": revision, "updateRevision": revision,
            })
        }
        "DaemonSet" => json!({
            "observedGeneration": generation, "currentNumberScheduled": 3,
            "desiredNumberScheduled": 3, "numberReady": 3, "updatedNumberScheduled": 3,
            "numberAvailable": 3, "numberMisscheduled": 0,
        }),
        _ => Value::Null,
    };
    object
}

impl Incident {
    pub fn custom(&self, api_version: &str, kind: &str, namespace: &str, name: &str) -> Value {
        let resource = self.store.resource_type_of(api_version, kind).unwrap();
        self.get(resource, namespace, name)
    }

    /// The Argo CD Application `namespace/name` of the demo.
    pub fn application(&self, namespace: &str, name: &str) -> Value {
        self.custom("argoproj.io/v1alpha1", "Application", namespace, name)
    }

    /// The Flux Kustomization `namespace/name` of the demo.
    pub fn kustomization(&self, namespace: &str, name: &str) -> Value {
        self.custom(
            "kustomize.toolkit.fluxcd.io/v1",
            "Kustomization",
            namespace,
            name,
        )
    }
}

/// A uid as the API server makes them, but stable: from `name`.
pub fn uid(name: &str) -> String {
    let hex = kdrift::sim::controller::pods::hex_id(name);
    format!(
        "{}-{}-4{}-8{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

/// A pod of `deployment`'s ReplicaSet of `template` on node `node` (0-based), made at
/// `created`, at `stage` as the demo's kubelet reports it at `now`.
fn pod(
    deployment: &Value,
    template: &Value,
    (suffix, node): (&str, usize),
    stage: PodStage,
    created: Timestamp,
    now: Timestamp,
) -> PodRow {
    let namespace = deployment["metadata"]["namespace"].as_str().unwrap();
    let hash = pod_template_hash(template);
    let replicaset = format!(
        "{}-{hash}",
        deployment["metadata"]["name"].as_str().unwrap()
    );
    let mut labels = template["metadata"]["labels"].clone();
    labels["pod-template-hash"] = json!(hash);
    let mut spec = template["spec"].clone();
    spec["nodeName"] = json!(kdrift::sim::controller::nodes::DEMO_NODES[node]);
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("{replicaset}-{suffix}"), "namespace": namespace,
            "uid": uid(&format!("{replicaset}-{suffix}")),
            "labels": labels, "creationTimestamp": rfc3339(created),
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "name": replicaset, "uid": uid(&replicaset), "controller": true}],
        },
        "spec": spec,
    });
    let host = Host {
        ip: format!("172.18.0.{}", node + 2),
        pod_cidr: format!("10.244.{node}.0/24"),
    };
    pod["status"] = pod_status(&pod, stage, now, &host);
    let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(pod).unwrap();
    PodRow::from_object(&pod)
}

/// An event about `kind/name` in shop, as the demo's controllers and kubelet word them.
fn event(
    kind: &str,
    name: &str,
    reason: &str,
    message: &str,
    count: i32,
    at: Timestamp,
) -> EventRow {
    let warning = reason == "BackOff";
    let object = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("{name}.{}", &uid(message)[..8]), "namespace": "shop"},
        "involvedObject": {"kind": kind, "name": name, "namespace": "shop"},
        "reason": reason, "message": message, "count": count,
        "type": if warning { "Warning" } else { "Normal" },
        "firstTimestamp": rfc3339(at), "lastTimestamp": rfc3339(at),
    });
    let object: k8s_openapi::api::core::v1::Event = serde_json::from_value(object).unwrap();
    EventRow::from_object(&object).unwrap()
}

/// What the detail watchers of shop report for checkout: its two ReplicaSets, the two pods of
/// the crashing one in CrashLoopBackOff (their last run ended 16 s ago) beside the three of the
/// image before, and the events of the rollout.
pub fn checkout_detail_rows(
    incident: &Incident,
) -> (Vec<ReplicaSetRow>, Vec<PodRow>, Vec<EventRow>) {
    let deployment = incident.get(ResourceType::DEPLOYMENT, CHECKOUT.0, CHECKOUT.1);
    let crashing = deployment["spec"]["template"].clone();
    let before = incident.before(&deployment)["spec"]["template"].clone();
    let changed = incident.changed_at(&deployment).unwrap();
    let now = at(NOW);
    let crashed = now - SignedDuration::from_secs(16);
    let replicasets = vec![
        replicaset(&deployment, &crashing, 2, [2, 2, 0], changed),
        replicaset(&deployment, &before, 1, [3, 3, 3], at(APPLIED)),
    ];
    let crash = PodStage::CrashLoop { restarts: 4 };
    let pods = vec![
        pod(
            &deployment,
            &crashing,
            ("b6kbt", 2),
            crash,
            changed,
            crashed,
        ),
        pod(
            &deployment,
            &crashing,
            ("w5vkq", 0),
            crash,
            changed,
            crashed,
        ),
        pod(
            &deployment,
            &before,
            ("7f5sm", 2),
            PodStage::Running,
            at(APPLIED),
            at(APPLIED),
        ),
        pod(
            &deployment,
            &before,
            ("c4tzh", 0),
            PodStage::Running,
            at(APPLIED),
            at(APPLIED),
        ),
        pod(
            &deployment,
            &before,
            ("qmlwc", 1),
            PodStage::Running,
            at(APPLIED),
            at(APPLIED),
        ),
    ];
    let new_rs = replicaset_name(&deployment);
    let started = changed + SignedDuration::from_secs(2);
    let mut events = vec![event(
        "Deployment",
        "checkout",
        "ScalingReplicaSet",
        &format!("Scaled up replica set {new_rs} from 0 to 2"),
        1,
        changed,
    )];
    for pod in &pods[..2] {
        let name = &pod.key.name;
        let reference = format!("{name}_shop({})", uid(name));
        events.extend([
            event(
                "ReplicaSet",
                &new_rs,
                "SuccessfulCreate",
                &format!("Created pod: {name}"),
                1,
                changed,
            ),
            event(
                "Pod",
                name,
                "Started",
                "Started container checkout",
                5,
                started,
            ),
            event(
                "Pod",
                name,
                "BackOff",
                &format!("Back-off restarting failed container checkout in pod {reference}"),
                4,
                crashed,
            ),
        ]);
    }
    (replicasets, pods, events)
}

/// `deployment`'s ReplicaSet of `template`, revision `revision`, with `[desired, replicas,
/// ready]` pods, made at `created`.
fn replicaset(
    deployment: &Value,
    template: &Value,
    revision: i64,
    [desired, replicas, ready]: [i32; 3],
    created: Timestamp,
) -> ReplicaSetRow {
    let name = deployment["metadata"]["name"].as_str().unwrap();
    let hash = pod_template_hash(template);
    let object = json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": format!("{name}-{hash}"), "namespace": deployment["metadata"]["namespace"],
            "annotations": {"deployment.kubernetes.io/revision": revision.to_string()},
            "creationTimestamp": rfc3339(created),
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name,
                "uid": uid(name), "controller": true}],
        },
        "spec": {"replicas": desired, "selector": deployment["spec"]["selector"], "template": template},
        "status": {"replicas": replicas, "readyReplicas": ready, "availableReplicas": ready},
    });
    let object: k8s_openapi::api::apps::v1::ReplicaSet = serde_json::from_value(object).unwrap();
    ReplicaSetRow::from_object(&object)
}
