//! Slim rows: only what the screen needs from each API object, never the whole object, so that
//! 10,000 Deployments fit in a few tens of MB. Mapping is pure (tested on captured responses).
use crate::manifest::{ObjectKey, SharedStr};
use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ControllerRevision, ReplicaSet};

use super::facts::{DaemonSetFacts, StatefulSetFacts};
use super::slim::{SlimDaemonSet, SlimDeployment, SlimStatefulSet, SlimTemplate};
use k8s_openapi::api::core::v1::{Event, Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The revision annotation the deployment controller writes on Deployments and ReplicaSets.
pub const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";
/// `kubectl rollout restart` writes this template annotation.
pub const RESTARTED_AT_ANNOTATION: &str = "kubectl.kubernetes.io/restartedAt";

/// The kinds the table shows: the workloads that own pods and roll them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum WorkloadKind {
    #[default]
    Deployment,
    StatefulSet,
    DaemonSet,
}

impl WorkloadKind {
    pub const ALL: [WorkloadKind; 3] = [
        WorkloadKind::Deployment,
        WorkloadKind::StatefulSet,
        WorkloadKind::DaemonSet,
    ];

    /// The kind as the API names it.
    pub fn kind(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::StatefulSet => "StatefulSet",
            WorkloadKind::DaemonSet => "DaemonSet",
        }
    }

    /// kubectl's short name, as the KIND column and the `:deploy`/`:sts`/`:ds` views say it.
    pub fn short(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "deploy",
            WorkloadKind::StatefulSet => "sts",
            WorkloadKind::DaemonSet => "ds",
        }
    }

    /// The resource (plural) of the kind.
    pub fn resource(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "deployments",
            WorkloadKind::StatefulSet => "statefulsets",
            WorkloadKind::DaemonSet => "daemonsets",
        }
    }

    /// The workload kind of an `apps` kind name, if it is one.
    pub fn of_kind(group: &str, kind: &str) -> Option<WorkloadKind> {
        if group != "apps" {
            return None;
        }
        WorkloadKind::ALL.into_iter().find(|k| k.kind() == kind)
    }

    /// The kind a user names as kubectl accepts it: `deploy`, `deployment(s)`, `sts`,
    /// `statefulset(s)`, `ds`, `daemonset(s)`, any case.
    pub fn parse(word: &str) -> Option<WorkloadKind> {
        let word = word.to_ascii_lowercase();
        WorkloadKind::ALL.into_iter().find(|k| {
            let kind = k.kind().to_ascii_lowercase();
            word == k.short() || word == kind || word == k.resource()
        })
    }
}

/// The group and kind words of the rows' keys, interned once: every row's key holds them, and
/// the interner takes a lock.
struct Words {
    core: SharedStr,
    apps: SharedStr,
    workloads: [SharedStr; 3],
    replicaset: SharedStr,
    revision: SharedStr,
    pod: SharedStr,
    event: SharedStr,
}

fn words() -> &'static Words {
    static WORDS: std::sync::OnceLock<Words> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| Words {
        core: SharedStr::interned(""),
        apps: SharedStr::interned("apps"),
        workloads: WorkloadKind::ALL.map(|kind| SharedStr::interned(kind.kind())),
        replicaset: SharedStr::interned("ReplicaSet"),
        revision: SharedStr::interned("ControllerRevision"),
        pod: SharedStr::interned("Pod"),
        event: SharedStr::interned("Event"),
    })
}

impl WorkloadKind {
    /// The key of the workload of this kind named `name` in `namespace` (its group and kind
    /// words shared with every other such key).
    pub fn key(self, namespace: &str, name: &str) -> ObjectKey {
        let words = words();
        ObjectKey {
            group: words.apps.clone(),
            // ALL lists the kinds in their declared order.
            kind: words.workloads[self as usize].clone(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The workload kind of `key`, if it is a workload's.
    pub fn of_key(key: &ObjectKey) -> Option<WorkloadKind> {
        WorkloadKind::of_kind(&key.group, &key.kind)
    }

    /// The kind of a table row's key (a workload's: the table holds no other).
    pub fn of_row(key: &ObjectKey) -> WorkloadKind {
        WorkloadKind::of_key(key).unwrap_or_default()
    }

    fn key_of(self, meta: &ObjectMeta) -> ObjectKey {
        self.key(
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default(),
        )
    }
}

/// The key of an object of `kind` in `group` (words of [`words`]) from its metadata.
fn key_of(group: &SharedStr, kind: &SharedStr, meta: &ObjectMeta) -> ObjectKey {
    ObjectKey {
        group: group.clone(),
        kind: kind.clone(),
        namespace: meta.namespace.as_deref().unwrap_or_default().into(),
        name: meta.name.as_deref().unwrap_or_default().into(),
    }
}

/// A row that knows its key: what a watch's deletion of its object must remove (the key comes
/// from the same mapping as the row's, so a StatefulSet's deletion names a StatefulSet, not a
/// Deployment of that name).
pub trait Keyed {
    fn key(&self) -> &ObjectKey;
}

/// The rows whose `key` field is their key.
macro_rules! keyed_by_field {
    ($($row:ty),*) => {$(
        impl Keyed for $row {
            fn key(&self) -> &ObjectKey {
                &self.key
            }
        }
    )*};
}

keyed_by_field!(WorkloadRow, ReplicaSetRow, PodRow, EventRow);

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

/// What the table and the rollout phase need from a workload (Deployment, StatefulSet or
/// DaemonSet). The counts mean the same for each kind: for a DaemonSet, `desired` is the nodes
/// that should run its pod (`desiredNumberScheduled`) and `replicas` those that do
/// (`currentNumberScheduled`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadRow {
    pub key: ObjectKey,
    pub generation: i64,
    pub observed_generation: i64,
    /// `spec.replicas`; the API server defaults it to 1.
    pub desired: i32,
    pub replicas: i32,
    pub updated: i32,
    pub ready: i32,
    pub available: i32,
    /// What only StatefulSets and DaemonSets have (revisions, update strategy).
    pub facts: KindFacts,
    pub paused: bool,
    pub conditions: Vec<ConditionRow>,
    pub revision: Option<i64>,
    /// Interned: a cluster's workloads run a few hundred images between them.
    pub images: Vec<SharedStr>,
    pub created: Option<Timestamp>,
    /// The latest of the creation time and the conditions' update times: "age of the last change".
    pub last_change: Option<Timestamp>,
    /// The GitOps controllers its metadata says own it (none, mostly: no allocation).
    pub owners: Vec<crate::gitops::Owner>,
}

/// The facts of one workload kind its rollout phase needs beyond the common counts. Boxed: the
/// table holds tens of thousands of rows, most of them Deployments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum KindFacts {
    #[default]
    Deployment,
    StatefulSet(Box<StatefulSetFacts>),
    DaemonSet(Box<DaemonSetFacts>),
}

/// A ReplicaSet, as far as the revision list needs it; also a ControllerRevision (see
/// [`ReplicaSetRow::from_controller_revision`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaSetRow {
    /// A ReplicaSet's key, or a ControllerRevision's.
    pub key: ObjectKey,
    /// The kind of the workload it is a revision of: Deployment for a ReplicaSet.
    pub owner_kind: WorkloadKind,
    /// The owning Deployment's name, if a Deployment owns it (a ControllerRevision's owner).
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
    /// The kind of the workload that owns it (Deployment for a ReplicaSet's), if one does.
    pub owner_kind: Option<WorkloadKind>,
    /// The owning ReplicaSet's name, or the owning StatefulSet's or DaemonSet's.
    pub owner: Option<String>,
    /// The `controller-revision-hash` label of a StatefulSet's or DaemonSet's pod.
    pub revision_hash: Option<String>,
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

/// An event about a workload, a ReplicaSet or a Pod.
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

/// The conditions of a StatefulSet's or DaemonSet's status (their types differ, their fields
/// do not).
macro_rules! conditions_of {
    ($status:expr) => {
        $status
            .and_then(|s| s.conditions.as_ref())
            .map(|cs| {
                cs.iter()
                    .map(|c| {
                        condition_row(
                            &c.type_,
                            &c.status,
                            c.reason.as_deref(),
                            c.message.as_deref(),
                            c.last_transition_time.as_ref(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
}

/// A condition of any workload kind, as the detail shows it.
fn condition_row(
    kind: &str,
    status: &str,
    reason: Option<&str>,
    message: Option<&str>,
    time: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
) -> ConditionRow {
    ConditionRow {
        kind: SharedStr::interned(kind),
        status: SharedStr::interned(status),
        reason: SharedStr::interned(reason.unwrap_or_default()),
        message: message.unwrap_or_default().to_owned(),
        last_update: time.map(|t| t.0),
    }
}

fn images_of(template: Option<&SlimTemplate>) -> Vec<SharedStr> {
    template
        .and_then(|t| t.spec.as_ref())
        .map(|p| {
            p.containers
                .iter()
                .filter_map(|c| c.image.as_deref().map(SharedStr::interned))
                .collect()
        })
        .unwrap_or_default()
}

/// The GitOps owners an object's kept labels and annotations name (the instance label is not
/// trusted alone: see [`crate::gitops::owners_of`]).
fn owners_of(meta: &ObjectMeta) -> Vec<crate::gitops::Owner> {
    crate::gitops::owners_of(meta.labels.as_ref(), meta.annotations.as_ref())
}

/// The latest of the creation time and the conditions' update times.
fn last_change_of(conditions: &[ConditionRow], created: Option<Timestamp>) -> Option<Timestamp> {
    conditions
        .iter()
        .filter_map(|c| c.last_update)
        .chain(created)
        .max()
}

impl WorkloadRow {
    /// Its kind (its key is a workload's: the constructors below make it so).
    pub fn kind(&self) -> WorkloadKind {
        WorkloadKind::of_row(&self.key)
    }

    pub fn from_object(d: &SlimDeployment) -> WorkloadRow {
        let spec = d.spec.as_ref();
        let status = d.status.as_ref();
        let conditions: Vec<ConditionRow> = status
            .and_then(|s| s.conditions.as_ref())
            .map(|cs| {
                cs.iter()
                    .map(|c| {
                        condition_row(
                            &c.type_,
                            &c.status,
                            c.reason.as_deref(),
                            c.message.as_deref(),
                            c.last_update_time
                                .as_ref()
                                .or(c.last_transition_time.as_ref()),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let created = created_of(&d.metadata);
        WorkloadRow {
            key: WorkloadKind::Deployment.key_of(&d.metadata),
            generation: d.metadata.generation.unwrap_or(0),
            observed_generation: status.and_then(|s| s.observed_generation).unwrap_or(0),
            desired: spec.and_then(|s| s.replicas).unwrap_or(1),
            replicas: status.and_then(|s| s.replicas).unwrap_or(0),
            updated: status.and_then(|s| s.updated_replicas).unwrap_or(0),
            ready: status.and_then(|s| s.ready_replicas).unwrap_or(0),
            available: status.and_then(|s| s.available_replicas).unwrap_or(0),
            facts: KindFacts::Deployment,
            paused: spec.and_then(|s| s.paused).unwrap_or(false),
            owners: owners_of(&d.metadata),
            last_change: last_change_of(&conditions, created),
            conditions,
            revision: revision_of(&d.metadata),
            images: images_of(spec.map(|s| &s.template)),
            created,
        }
    }

    pub fn from_statefulset(s: &SlimStatefulSet) -> WorkloadRow {
        let f = StatefulSetFacts::of(&s.as_object());
        let counts = [f.desired, f.replicas, f.updated, f.ready, f.available];
        WorkloadRow::without_deadline(
            WorkloadKind::StatefulSet.key_of(&s.metadata),
            &s.metadata,
            (f.generation, f.observed_generation),
            counts,
            conditions_of!(s.status.as_ref()),
            s.spec.as_ref().map(|s| &s.template),
            KindFacts::StatefulSet(Box::new(f)),
        )
    }

    pub fn from_daemonset(d: &SlimDaemonSet) -> WorkloadRow {
        let f = DaemonSetFacts::of(&d.as_object());
        let counts = [f.desired, f.current, f.updated, f.ready, f.available];
        WorkloadRow::without_deadline(
            WorkloadKind::DaemonSet.key_of(&d.metadata),
            &d.metadata,
            (f.generation, f.observed_generation),
            counts,
            conditions_of!(d.status.as_ref()),
            d.spec.as_ref().map(|s| &s.template),
            KindFacts::DaemonSet(Box::new(f)),
        )
    }

    /// The row of a StatefulSet or DaemonSet: `counts` are desired, replicas, updated, ready
    /// and available; nothing pauses them and no revision annotation numbers them.
    fn without_deadline(
        key: ObjectKey,
        meta: &ObjectMeta,
        (generation, observed_generation): (i64, i64),
        [desired, replicas, updated, ready, available]: [i32; 5],
        conditions: Vec<ConditionRow>,
        template: Option<&SlimTemplate>,
        facts: KindFacts,
    ) -> WorkloadRow {
        let created = created_of(meta);
        WorkloadRow {
            key,
            generation,
            observed_generation,
            desired,
            replicas,
            updated,
            ready,
            available,
            facts,
            paused: false,
            owners: owners_of(meta),
            last_change: last_change_of(&conditions, created),
            conditions,
            revision: None,
            images: images_of(template),
            created,
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
            key: key_of(&words().apps, &words().replicaset, &rs.metadata),
            owner_kind: WorkloadKind::Deployment,
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

/// The label the StatefulSet and DaemonSet controllers put on each pod: the ControllerRevision
/// it was made from (the revision's whole name for a StatefulSet, its hash for a DaemonSet).
pub const REVISION_HASH_LABEL: &str = "controller-revision-hash";

impl ReplicaSetRow {
    /// A ControllerRevision of a StatefulSet or DaemonSet, as a revision row of its owner's
    /// kind; its counts are the detail's to fill from the pods (a revision has none).
    pub fn from_controller_revision(cr: &ControllerRevision) -> Option<ReplicaSetRow> {
        let (kind, owner) = cr
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find_map(|o| Some((WorkloadKind::of_kind("apps", &o.kind)?, o.name.clone())))?;
        let template = cr
            .data
            .as_ref()
            .and_then(|d| d.0.get("spec")?.get("template"))
            .and_then(|t| serde_json::from_value::<PodTemplateSpec>(t.clone()).ok())
            .map(|t| template_facts(&t))
            .unwrap_or_default();
        Some(ReplicaSetRow {
            key: key_of(&words().apps, &words().revision, &cr.metadata),
            owner_kind: kind,
            owner: Some(owner),
            revision: Some(cr.revision),
            desired: 0,
            replicas: 0,
            ready: 0,
            available: 0,
            template,
            created: created_of(&cr.metadata),
        })
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
        // A ReplicaSet's pods belong to a Deployment; the others to their workload directly.
        let (owner_kind, owner) = p
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find_map(|o| match o.kind.as_str() {
                "ReplicaSet" => Some((WorkloadKind::Deployment, o.name.clone())),
                kind => Some((WorkloadKind::of_kind("apps", kind)?, o.name.clone())),
            })
            .unzip();
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
            key: key_of(&words().core, &words().pod, &p.metadata),
            owner_kind,
            owner,
            revision_hash: p
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(REVISION_HASH_LABEL))
                .cloned(),
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
        if !matches!(
            kind.as_str(),
            "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" | "Pod"
        ) {
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
            key: key_of(&words().core, &words().event, &e.metadata),
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
#[path = "rows_tests.rs"]
mod tests;
