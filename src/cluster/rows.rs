//! Slim rows: only what the screen needs from each API object, never the whole object, so that
//! 10,000 Deployments fit in a few tens of MB. Mapping is pure (tested on captured responses).
use crate::manifest::SharedStr;
use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ReplicaSet;

use super::slim::SlimDeployment;
use k8s_openapi::api::core::v1::{Event, Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The revision annotation the deployment controller writes on Deployments and ReplicaSets.
pub const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";
/// `kubectl rollout restart` writes this template annotation.
pub const RESTARTED_AT_ANNOTATION: &str = "kubectl.kubernetes.io/restartedAt";

/// Namespace and name: how every row is keyed. Shared strings, so the table's sorted key list
/// costs no allocation per row.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    pub namespace: Arc<str>,
    pub name: Arc<str>,
}

impl ObjectKey {
    pub fn new(namespace: impl Into<Arc<str>>, name: impl Into<Arc<str>>) -> ObjectKey {
        ObjectKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    fn of(meta: &ObjectMeta) -> ObjectKey {
        ObjectKey::new(
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default(),
        )
    }
}

/// One status condition, as the detail view shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionRow {
    /// Type, status and reason are words of a small vocabulary: shared, not copied per row.
    pub kind: SharedStr,
    pub status: SharedStr,
    pub reason: SharedStr,
    pub message: String,
    pub last_update: Option<Timestamp>,
}

/// What the table and the rollout phase need from a Deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeploymentRow {
    pub key: ObjectKey,
    pub generation: i64,
    pub observed_generation: i64,
    /// `spec.replicas`; the API server defaults it to 1.
    pub desired: i32,
    pub replicas: i32,
    pub updated: i32,
    pub ready: i32,
    pub available: i32,
    pub paused: bool,
    pub conditions: Vec<ConditionRow>,
    pub revision: Option<i64>,
    pub images: Vec<String>,
    pub created: Option<Timestamp>,
    /// The latest of the creation time and the conditions' update times: "age of the last change".
    pub last_change: Option<Timestamp>,
}

/// A ReplicaSet, as far as the revision list needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaSetRow {
    pub key: ObjectKey,
    /// The owning Deployment's name, if a Deployment owns it.
    pub owner: Option<String>,
    pub revision: Option<i64>,
    pub desired: i32,
    pub replicas: i32,
    pub ready: i32,
    pub available: i32,
    /// Facts about the pod template that a revision can change: `image web` → `nginx:1.25`,
    /// `env web FOO` → `bar`, `limits web cpu` → `500m`, `restartedAt` → time.
    pub template: BTreeMap<String, String>,
    pub created: Option<Timestamp>,
}

/// A pod, as the detail view lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodRow {
    pub key: ObjectKey,
    /// The owning ReplicaSet's name.
    pub owner: Option<String>,
    pub phase: String,
    pub ready_containers: u32,
    pub containers: u32,
    /// Why the pod is not running well: a container's waiting or terminated reason
    /// (CrashLoopBackOff, ImagePullBackOff, OOMKilled), the pod's own reason, or why it is
    /// unschedulable.
    pub reason: Option<String>,
    pub restarts: i32,
    pub created: Option<Timestamp>,
    pub deleting: bool,
    /// The node the pod is bound to (`spec.nodeName`), none while it is not scheduled.
    pub node: Option<String>,
    /// Why, in the words of whoever decided: the scheduler's message of an unschedulable pod
    /// (`0/3 nodes are available: 3 Insufficient memory.`), the image and the kubelet's message
    /// of a failing pull, a waiting container's message.
    pub why: Option<String>,
    /// The last termination of a restarted (crash-looping) container.
    pub last_exit: Option<LastExit>,
}

/// How a container's previous run ended (`lastState.terminated`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastExit {
    pub container: String,
    pub exit_code: i32,
    pub reason: Option<String>,
    pub finished: Option<Timestamp>,
}

/// An event about a Deployment, ReplicaSet or Pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    pub key: ObjectKey,
    pub involved_kind: String,
    pub involved_name: String,
    pub reason: String,
    pub message: String,
    pub warning: bool,
    pub count: i32,
    pub last_seen: Option<Timestamp>,
}

fn revision_of(meta: &ObjectMeta) -> Option<i64> {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(REVISION_ANNOTATION))
        .and_then(|r| r.parse().ok())
}

fn created_of(meta: &ObjectMeta) -> Option<Timestamp> {
    meta.creation_timestamp.as_ref().map(|t| t.0)
}

impl DeploymentRow {
    pub fn from_object(d: &SlimDeployment) -> DeploymentRow {
        let spec = d.spec.as_ref();
        let status = d.status.as_ref();
        let conditions: Vec<ConditionRow> = status
            .and_then(|s| s.conditions.as_ref())
            .map(|cs| {
                cs.iter()
                    .map(|c| ConditionRow {
                        kind: SharedStr::interned(&c.type_),
                        status: SharedStr::interned(&c.status),
                        reason: SharedStr::interned(c.reason.as_deref().unwrap_or_default()),
                        message: c.message.clone().unwrap_or_default(),
                        last_update: c
                            .last_update_time
                            .as_ref()
                            .or(c.last_transition_time.as_ref())
                            .map(|t| t.0),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let created = created_of(&d.metadata);
        let last_change = conditions
            .iter()
            .filter_map(|c| c.last_update)
            .chain(created)
            .max();
        let images = spec
            .map(|s| {
                s.template
                    .spec
                    .as_ref()
                    .map(|p| {
                        p.containers
                            .iter()
                            .filter_map(|c| c.image.clone())
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        DeploymentRow {
            key: ObjectKey::of(&d.metadata),
            generation: d.metadata.generation.unwrap_or(0),
            observed_generation: status.and_then(|s| s.observed_generation).unwrap_or(0),
            desired: spec.and_then(|s| s.replicas).unwrap_or(1),
            replicas: status.and_then(|s| s.replicas).unwrap_or(0),
            updated: status.and_then(|s| s.updated_replicas).unwrap_or(0),
            ready: status.and_then(|s| s.ready_replicas).unwrap_or(0),
            available: status.and_then(|s| s.available_replicas).unwrap_or(0),
            paused: spec.and_then(|s| s.paused).unwrap_or(false),
            conditions,
            revision: revision_of(&d.metadata),
            images,
            created,
            last_change,
        }
    }

    pub fn condition(&self, kind: &str) -> Option<&ConditionRow> {
        self.conditions.iter().find(|c| c.kind == kind)
    }
}

/// The template facts a revision can change (see [`ReplicaSetRow::template`]).
pub fn template_facts(template: &PodTemplateSpec) -> BTreeMap<String, String> {
    let mut facts = BTreeMap::new();
    if let Some(at) = template
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.as_ref())
        .and_then(|a| a.get(RESTARTED_AT_ANNOTATION))
    {
        facts.insert("restartedAt".to_string(), at.clone());
    }
    let Some(spec) = template.spec.as_ref() else {
        return facts;
    };
    for c in &spec.containers {
        let name = &c.name;
        facts.insert(format!("image {name}"), c.image.clone().unwrap_or_default());
        for e in c.env.iter().flatten() {
            let value = match (&e.value, &e.value_from) {
                (Some(v), _) => v.clone(),
                (None, Some(_)) => "(from a reference)".to_string(),
                (None, None) => String::new(),
            };
            facts.insert(format!("env {name} {}", e.name), value);
        }
        if let Some(res) = &c.resources {
            for (kind, map) in [("requests", &res.requests), ("limits", &res.limits)] {
                for (k, q) in map.iter().flatten() {
                    facts.insert(format!("{kind} {name} {k}"), q.0.clone());
                }
            }
        }
    }
    facts
}

impl ReplicaSetRow {
    pub fn from_object(rs: &ReplicaSet) -> ReplicaSetRow {
        let status = rs.status.as_ref();
        let owner = rs
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.kind == "Deployment")
            .map(|o| o.name.clone());
        ReplicaSetRow {
            key: ObjectKey::of(&rs.metadata),
            owner,
            revision: revision_of(&rs.metadata),
            desired: rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1),
            replicas: status.map(|s| s.replicas).unwrap_or(0),
            ready: status.and_then(|s| s.ready_replicas).unwrap_or(0),
            available: status.and_then(|s| s.available_replicas).unwrap_or(0),
            template: rs
                .spec
                .as_ref()
                .and_then(|s| s.template.as_ref())
                .map(template_facts)
                .unwrap_or_default(),
            created: created_of(&rs.metadata),
        }
    }
}

impl PodRow {
    pub fn from_object(p: &Pod) -> PodRow {
        let status = p.status.as_ref();
        let statuses = status
            .and_then(|s| s.container_statuses.as_deref())
            .unwrap_or(&[]);
        let containers = p
            .spec
            .as_ref()
            .map(|s| s.containers.len())
            .unwrap_or(statuses.len());
        let owner = p
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.kind == "ReplicaSet")
            .map(|o| o.name.clone());
        let container_reason = statuses.iter().find_map(|c| {
            let state = c.state.as_ref()?;
            if let Some(w) = &state.waiting {
                return w
                    .reason
                    .clone()
                    .filter(|r| r != "ContainerCreating" || !c.ready);
            }
            state.terminated.as_ref().and_then(|t| t.reason.clone())
        });
        let unschedulable_condition = status.and_then(|s| s.conditions.as_ref()).and_then(|cs| {
            cs.iter()
                .find(|c| c.type_ == "PodScheduled" && c.status == "False")
        });
        let unschedulable = unschedulable_condition.and_then(|c| c.reason.clone());
        // The first container in trouble says why; a pull failure names its image.
        let waiting_why = statuses.iter().find_map(|c| {
            let waiting = c.state.as_ref()?.waiting.as_ref()?;
            let reason = waiting.reason.as_deref().unwrap_or_default();
            let message = waiting.message.as_deref().filter(|m| !m.is_empty());
            if reason == "ContainerCreating" {
                return None;
            }
            if matches!(
                reason,
                "ErrImagePull" | "ImagePullBackOff" | "InvalidImageName"
            ) {
                // The image as the spec names it (the status may hold a resolved one).
                let image = p
                    .spec
                    .iter()
                    .flat_map(|s| &s.containers)
                    .find(|spec| spec.name == c.name)
                    .and_then(|spec| spec.image.as_deref())
                    .unwrap_or(&c.image);
                return Some(match message {
                    Some(m) => format!("image {image}: {m}"),
                    None => format!("image {image}"),
                });
            }
            message.map(|m| format!("{}: {m}", c.name))
        });
        let last_exit = statuses
            .iter()
            .filter(|c| c.restart_count > 0 || !c.ready)
            .find_map(|c| {
                let t = c.last_state.as_ref()?.terminated.as_ref()?;
                Some(LastExit {
                    container: c.name.clone(),
                    exit_code: t.exit_code,
                    reason: t.reason.clone(),
                    finished: t.finished_at.as_ref().map(|f| f.0),
                })
            });
        PodRow {
            key: ObjectKey::of(&p.metadata),
            owner,
            phase: status
                .and_then(|s| s.phase.clone())
                .unwrap_or_else(|| "Pending".into()),
            ready_containers: statuses.iter().filter(|c| c.ready).count() as u32,
            containers: containers as u32,
            reason: container_reason
                .or_else(|| status.and_then(|s| s.reason.clone()))
                .or(unschedulable),
            restarts: statuses.iter().map(|c| c.restart_count).sum(),
            created: created_of(&p.metadata),
            deleting: p.metadata.deletion_timestamp.is_some(),
            node: p
                .spec
                .as_ref()
                .and_then(|s| s.node_name.clone())
                .filter(|n| !n.is_empty()),
            why: unschedulable_condition
                .and_then(|c| c.message.clone())
                .filter(|m| !m.is_empty())
                .or(waiting_why),
            last_exit,
        }
    }
}

impl EventRow {
    /// Only events about the kinds the detail view shows are kept.
    pub fn from_object(e: &Event) -> Option<EventRow> {
        let kind = e.involved_object.kind.clone().unwrap_or_default();
        if !matches!(kind.as_str(), "Deployment" | "ReplicaSet" | "Pod") {
            return None;
        }
        let last_seen = e
            .last_timestamp
            .as_ref()
            .map(|t| t.0)
            .or_else(|| e.event_time.as_ref().map(|t| t.0))
            .or_else(|| e.first_timestamp.as_ref().map(|t| t.0))
            .or_else(|| created_of(&e.metadata));
        Some(EventRow {
            key: ObjectKey::of(&e.metadata),
            involved_kind: kind,
            involved_name: e.involved_object.name.clone().unwrap_or_default(),
            reason: e.reason.clone().unwrap_or_default(),
            message: e.message.clone().unwrap_or_default(),
            warning: e.type_.as_deref() == Some("Warning"),
            count: e.count.unwrap_or(1),
            last_seen,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const REFERENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/kubernetes-1.20");

    fn reference(name: &str) -> serde_json::Value {
        let path = format!("{REFERENCE}/{name}");
        let text = std::fs::read_to_string(&path).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    fn items(v: &serde_json::Value) -> Vec<serde_json::Value> {
        v["items"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| vec![v.clone()])
    }

    #[test]
    fn rollout_in_progress_deployment_maps_counts_and_conditions() {
        let d: SlimDeployment =
            serde_json::from_value(reference("deploy-rollout-in-progress.json")).unwrap();
        let row = DeploymentRow::from_object(&d);
        let spec_replicas = d.spec.as_ref().unwrap().replicas.unwrap_or(1);
        assert_eq!(row.desired, spec_replicas);
        assert_eq!(
            row.updated,
            d.status.as_ref().unwrap().updated_replicas.unwrap_or(0)
        );
        assert!(row.condition("Progressing").is_some());
        assert!(!row.images.is_empty());
        assert!(row.last_change >= row.created);
    }

    #[test]
    fn replicasets_carry_revision_owner_and_image() {
        for v in items(&reference("replicasets.json")) {
            let rs: ReplicaSet = serde_json::from_value(v).unwrap();
            let row = ReplicaSetRow::from_object(&rs);
            assert!(row.revision.is_some(), "{:?}", row.key);
            assert!(row.owner.is_some(), "{:?}", row.key);
            assert!(
                row.template.keys().any(|k| k.starts_with("image ")),
                "{:?}",
                row.template
            );
        }
    }

    #[test]
    fn pods_report_ready_counts_and_owner() {
        for v in items(&reference("pods.json")) {
            let p: Pod = serde_json::from_value(v).unwrap();
            let row = PodRow::from_object(&p);
            assert!(row.containers >= 1);
            assert!(row.ready_containers <= row.containers);
            assert!(row.owner.is_some());
        }
    }

    #[test]
    fn crashlooping_pod_shows_the_waiting_reason() {
        let p: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1", "namespace": "shop"},
            "spec": {"containers": [{"name": "web", "image": "web:2"}]},
            "status": {"phase": "Running", "containerStatuses": [{
                "name": "web", "image": "web:2", "imageID": "", "ready": false, "restartCount": 7,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}}
            }]}
        }))
        .unwrap();
        let row = PodRow::from_object(&p);
        assert_eq!(row.reason.as_deref(), Some("CrashLoopBackOff"));
        assert_eq!(
            (row.ready_containers, row.containers, row.restarts),
            (0, 1, 7)
        );
    }

    #[test]
    fn unschedulable_pod_says_why() {
        let p: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1", "namespace": "shop"},
            "spec": {"containers": [{"name": "web"}]},
            "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
            ]}
        }))
        .unwrap();
        assert_eq!(
            PodRow::from_object(&p).reason.as_deref(),
            Some("Unschedulable")
        );
    }

    #[test]
    fn events_about_other_kinds_are_dropped() {
        for v in items(&reference("events.json")) {
            let e: Event = serde_json::from_value(v).unwrap();
            let kind = e.involved_object.kind.clone().unwrap_or_default();
            let row = EventRow::from_object(&e);
            assert_eq!(
                row.is_some(),
                ["Deployment", "ReplicaSet", "Pod"].contains(&kind.as_str())
            );
        }
    }
}
