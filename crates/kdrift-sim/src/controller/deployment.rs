//! The deployment controller's decisions, as pure functions: given a Deployment and the
//! ReplicaSets it owns, which ReplicaSets to create, scale or delete (rolling update within
//! maxSurge/maxUnavailable, Recreate, proportional scaling, paused, revision history), with the
//! events and the status it would write. Mirrors kube-controller-manager's `sync` steps: one
//! step per sync, the next sync comes from the change it causes.
use std::time::Duration;

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use super::deploy_status::{
    FOUND_NEW_RS, NEW_RS_CREATED, PROGRESSING, condition, deployment_complete, fenceposts,
    is_recreate, paused_condition, progress_deadline, rollout_status, set_condition,
};
use super::events::{Component, EventSpec};
use super::hash::{POD_TEMPLATE_HASH, pod_template_hash, templates_equal};
use crate::object::{
    annotation, at, i64_at, name, namespace, owner_reference, spec_replicas, status_count,
};

pub const REVISION: &str = "deployment.kubernetes.io/revision";
pub const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
pub const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
pub const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// One write the deployment controller wants.
#[derive(Debug, Clone, PartialEq)]
pub enum DeploymentAction {
    /// Create this ReplicaSet (complete object, owner reference included).
    CreateReplicaSet(Value),
    /// Set `spec.replicas` and these annotations of a ReplicaSet.
    ScaleReplicaSet {
        name: String,
        replicas: i64,
        annotations: Map<String, Value>,
    },
    /// Only set annotations of a ReplicaSet (its revision).
    AnnotateReplicaSet {
        name: String,
        annotations: Map<String, Value>,
    },
    /// Delete an old ReplicaSet beyond `revisionHistoryLimit`.
    DeleteReplicaSet { name: String },
}

/// What one sync of a Deployment decided.
#[derive(Debug, Clone, Default)]
pub struct DeploymentSync {
    pub actions: Vec<DeploymentAction>,
    pub events: Vec<EventSpec>,
    /// The revision annotation to write on the Deployment, when it changes.
    pub revision: Option<String>,
    /// The new status, when it differs from the current one.
    pub status: Option<Value>,
    /// Look again after this long (a progress deadline to check).
    pub requeue_after: Option<Duration>,
}

fn revision_of(rs: &Value) -> i64 {
    annotation(rs, REVISION)
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// Decide what the deployment controller does for `deploy`, owning `owned` ReplicaSets.
pub fn sync_deployment(deploy: &Value, owned: &[Value], now: Timestamp) -> DeploymentSync {
    let mut d = deploy.clone();
    let mut out = DeploymentSync::default();
    if let Some(status) = paused_condition(&d, now) {
        d["status"] = status;
    }
    // Old ReplicaSets oldest first; the new one is the (newest) one with the current template.
    let mut rss: Vec<&Value> = owned.iter().collect();
    rss.sort_by_key(|rs| (revision_of(rs), name(rs).to_string()));
    let template = at(&d, &["spec", "template"])
        .cloned()
        .unwrap_or(Value::Null);
    let new_index = rss.iter().rposition(|rs| {
        at(rs, &["spec", "template"]).is_some_and(|t| templates_equal(t, &template))
    });
    let new_rs: Option<Value> = new_index.map(|i| rss[i].clone());
    let olds: Vec<Value> = rss
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != new_index)
        .map(|(_, rs)| (*rs).clone())
        .collect();
    let paused = at(&d, &["spec", "paused"]).and_then(Value::as_bool) == Some(true);

    // The new ReplicaSet's revision is one past every old one.
    let next_revision = olds.iter().map(revision_of).max().unwrap_or(0) + 1;
    let mut new_rs = new_rs;
    if let Some(rs) = new_rs.as_mut() {
        if revision_of(rs) < next_revision {
            let mut annotations = Map::new();
            annotations.insert(REVISION.into(), json!(next_revision.to_string()));
            // A ReplicaSet brought back (rollback) remembers the revisions it had.
            if let Some(old) = annotation(rs, REVISION) {
                let history = match annotation(rs, REVISION_HISTORY) {
                    Some(h) => format!("{h},{old}"),
                    None => old.to_string(),
                };
                annotations.insert(REVISION_HISTORY.into(), json!(history));
            }
            out.actions.push(DeploymentAction::AnnotateReplicaSet {
                name: name(rs).to_string(),
                annotations: annotations.clone(),
            });
            for (k, v) in &annotations {
                rs["metadata"]["annotations"][k] = v.clone();
            }
        }
        set_revision(&mut d, &mut out, revision_of(rs));
        if progress_deadline(&d).is_some()
            && d.get("status")
                .and_then(|s| condition(s, PROGRESSING))
                .is_none()
        {
            let message = format!("Found new replica set \"{}\"", name(rs));
            set_condition(
                status_mut(&mut d),
                PROGRESSING,
                "True",
                FOUND_NEW_RS,
                &message,
                now,
            );
        }
    }

    let active_scaling = !paused && is_scaling_event(&d, new_rs.as_ref(), &olds);
    if paused || active_scaling {
        scale(&d, new_rs.as_ref(), &olds, &mut out);
        if paused {
            cleanup(&d, &olds, &mut out);
        }
    } else if is_recreate(&d) {
        rollout_recreate(&mut d, &mut new_rs, &olds, next_revision, now, &mut out);
    } else {
        rollout_rolling(&mut d, &mut new_rs, &olds, next_revision, now, &mut out);
    }

    let all: Vec<&Value> = olds.iter().chain(new_rs.as_ref()).collect();
    let (status, requeue) = if paused || active_scaling {
        (
            super::deploy_status::calculate_status(&d, &all, new_rs.as_ref(), now),
            None,
        )
    } else {
        rollout_status(&d, &all, new_rs.as_ref(), now)
    };
    if deploy.get("status") != Some(&status) {
        out.status = Some(status);
    }
    out.requeue_after = requeue;
    out
}

fn status_mut(d: &mut Value) -> &mut Value {
    if !d.get("status").is_some_and(Value::is_object) {
        d["status"] = json!({});
    }
    &mut d["status"]
}

fn set_revision(d: &mut Value, out: &mut DeploymentSync, revision: i64) {
    let text = revision.to_string();
    if annotation(d, REVISION) != Some(text.as_str()) {
        d["metadata"]["annotations"][REVISION] = json!(text);
        out.revision = Some(text);
    }
}

/// The annotations a scaled ReplicaSet carries: the Deployment's size and its surge ceiling.
fn size_annotations(d: &Value) -> Map<String, Value> {
    let desired = spec_replicas(d);
    let mut annotations = Map::new();
    annotations.insert(DESIRED_REPLICAS.into(), json!(desired.to_string()));
    annotations.insert(
        MAX_REPLICAS.into(),
        json!((desired + fenceposts(d).0).to_string()),
    );
    annotations
}

fn scale_rs(d: &Value, rs: &Value, replicas: i64, out: &mut DeploymentSync) {
    let current = spec_replicas(rs);
    let annotations = size_annotations(d);
    let annotations_stale = annotations
        .iter()
        .any(|(k, v)| annotation(rs, k) != v.as_str());
    if current == replicas && !annotations_stale {
        return;
    }
    out.actions.push(DeploymentAction::ScaleReplicaSet {
        name: name(rs).to_string(),
        replicas,
        annotations,
    });
    if current != replicas {
        let direction = if replicas > current { "up" } else { "down" };
        out.events.push(EventSpec::normal(
            Component::DeploymentController,
            "ScalingReplicaSet",
            format!(
                "Scaled {direction} replica set {} from {current} to {replicas}",
                name(rs)
            ),
        ));
    }
}

fn is_active(rs: &Value) -> bool {
    spec_replicas(rs) > 0
}

fn is_scaling_event(d: &Value, new_rs: Option<&Value>, olds: &[Value]) -> bool {
    let desired = spec_replicas(d).to_string();
    olds.iter()
        .chain(new_rs)
        .filter(|rs| is_active(rs))
        .any(|rs| annotation(rs, DESIRED_REPLICAS).is_some_and(|a| a != desired))
}

/// Scaling without a rollout (`sync` in kube-controller-manager): a single active ReplicaSet
/// takes the whole size; several share a change in proportion to their size.
fn scale(d: &Value, new_rs: Option<&Value>, olds: &[Value], out: &mut DeploymentSync) {
    let desired = spec_replicas(d);
    let active: Vec<&Value> = olds
        .iter()
        .chain(new_rs)
        .filter(|rs| is_active(rs))
        .collect();
    let target = match active.len() {
        0 => new_rs.or_else(|| olds.last()),
        1 => active.first().copied(),
        _ => None,
    };
    if let Some(rs) = target {
        scale_rs(d, rs, desired, out);
        return;
    }
    if let Some(rs) = new_rs {
        let saturated = spec_replicas(rs) == desired
            && annotation(rs, DESIRED_REPLICAS) == Some(desired.to_string().as_str())
            && status_count(rs, "availableReplicas") == desired;
        if saturated {
            for old in olds.iter().filter(|rs| is_active(rs)) {
                scale_rs(d, old, 0, out);
            }
            return;
        }
    }
    if is_recreate(d) {
        return;
    }
    proportional_scale(d, active, out);
}

fn proportional_scale(d: &Value, mut active: Vec<&Value>, out: &mut DeploymentSync) {
    let desired = spec_replicas(d);
    let allowed = if desired > 0 {
        desired + fenceposts(d).0
    } else {
        0
    };
    let current: i64 = active.iter().map(|rs| spec_replicas(rs)).sum();
    let to_add = allowed - current;
    // Larger first; among equals the newer first when growing, the older first when shrinking.
    if to_add > 0 {
        active.sort_by_key(|rs| {
            (
                std::cmp::Reverse(spec_replicas(rs)),
                std::cmp::Reverse(revision_of(rs)),
            )
        });
    } else {
        active.sort_by_key(|rs| (std::cmp::Reverse(spec_replicas(rs)), revision_of(rs)));
    }
    let mut added = 0;
    let mut sizes: Vec<i64> = Vec::new();
    for rs in &active {
        let size = spec_replicas(rs);
        if to_add == 0 {
            sizes.push(size);
            continue;
        }
        let fraction = if desired == 0 {
            -size
        } else {
            let annotated = annotation(rs, MAX_REPLICAS)
                .and_then(|a| a.parse::<i64>().ok())
                .unwrap_or_else(|| i64_at(d, &["status", "replicas"]).unwrap_or(0))
                .max(1);
            ((size * allowed) as f64 / annotated as f64).round() as i64 - size
        };
        let allowed_left = to_add - added;
        let proportion = if to_add > 0 {
            fraction.min(allowed_left)
        } else {
            fraction.max(allowed_left)
        };
        sizes.push(size + proportion);
        added += proportion;
    }
    if let Some(first) = sizes.first_mut() {
        *first = (*first + to_add - added).max(0);
    }
    for (rs, size) in active.iter().zip(sizes) {
        scale_rs(d, rs, size, out);
    }
}

/// A new ReplicaSet for the Deployment's current template.
fn new_replica_set(d: &Value, replicas: i64, revision: i64) -> Value {
    let mut template = at(d, &["spec", "template"])
        .cloned()
        .unwrap_or_else(|| json!({}));
    let hash = pod_template_hash(&template);
    template["metadata"]["labels"][POD_TEMPLATE_HASH] = json!(hash);
    let mut selector = at(d, &["spec", "selector"])
        .cloned()
        .unwrap_or_else(|| json!({}));
    selector["matchLabels"][POD_TEMPLATE_HASH] = json!(hash);
    let labels = template["metadata"]["labels"].clone();
    let mut annotations: Map<String, Value> = at(d, &["metadata", "annotations"])
        .and_then(Value::as_object)
        .map(|a| {
            a.iter()
                .filter(|(k, _)| !k.starts_with("deployment.kubernetes.io/") && *k != LAST_APPLIED)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    annotations.extend(size_annotations(d));
    annotations.insert(REVISION.into(), json!(revision.to_string()));
    let mut spec = json!({"replicas": replicas, "selector": selector, "template": template});
    if let Some(min_ready) = i64_at(d, &["spec", "minReadySeconds"]).filter(|s| *s > 0) {
        spec["minReadySeconds"] = json!(min_ready);
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": format!("{}-{hash}", name(d)),
            "namespace": namespace(d),
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner_reference(d)],
        },
        "spec": spec,
    })
}

fn create_new_rs(
    d: &mut Value,
    replicas: i64,
    revision: i64,
    now: Timestamp,
    out: &mut DeploymentSync,
) -> Value {
    let rs = new_replica_set(d, replicas, revision);
    let rs_name = name(&rs).to_string();
    out.actions
        .push(DeploymentAction::CreateReplicaSet(rs.clone()));
    if replicas > 0 {
        out.events.push(EventSpec::normal(
            Component::DeploymentController,
            "ScalingReplicaSet",
            format!("Scaled up replica set {rs_name} from 0 to {replicas}"),
        ));
    }
    set_revision(d, out, revision);
    if progress_deadline(d).is_some() {
        let message = format!("Created new replica set \"{rs_name}\"");
        set_condition(
            status_mut(d),
            PROGRESSING,
            "True",
            NEW_RS_CREATED,
            &message,
            now,
        );
    }
    rs
}

/// Rolling update: grow the new ReplicaSet within maxSurge, shrink old ones within
/// maxUnavailable, one step per sync.
fn rollout_rolling(
    d: &mut Value,
    new_rs: &mut Option<Value>,
    olds: &[Value],
    revision: i64,
    now: Timestamp,
    out: &mut DeploymentSync,
) {
    let desired = spec_replicas(d);
    let (surge, unavailable) = fenceposts(d);
    let old_total: i64 = olds.iter().map(spec_replicas).sum();
    // reconcileNewReplicaSet
    let new_size = new_rs.as_ref().map(spec_replicas).unwrap_or(0);
    let wanted_new = if new_size >= desired {
        desired
    } else {
        let room = desired + surge - (old_total + new_size);
        new_size + room.max(0).min(desired - new_size)
    };
    match new_rs {
        None => {
            *new_rs = Some(create_new_rs(d, wanted_new, revision, now, out));
            return;
        }
        Some(rs) if wanted_new != new_size => {
            scale_rs(d, rs, wanted_new, out);
            return;
        }
        Some(_) => {}
    }
    // reconcileOldReplicaSets
    let Some(rs) = new_rs.as_ref() else { return };
    if old_total > 0 {
        let all_total = old_total + new_size;
        let min_available = desired - unavailable;
        let new_unavailable = new_size - status_count(rs, "availableReplicas");
        let mut max_scaled_down = all_total - min_available - new_unavailable;
        if max_scaled_down <= 0 {
            return;
        }
        let mut sizes: Vec<i64> = olds.iter().map(spec_replicas).collect();
        // First the old pods that are not available anyway, oldest first.
        for (rs, size) in olds.iter().zip(sizes.iter_mut()) {
            if max_scaled_down == 0 || *size == 0 {
                continue;
            }
            let unhealthy = (*size - status_count(rs, "availableReplicas")).max(0);
            let cut = unhealthy.min(max_scaled_down);
            *size -= cut;
            max_scaled_down -= cut;
        }
        // Then available ones, as far as minAvailable allows.
        let available: i64 = olds
            .iter()
            .chain(std::iter::once(rs))
            .map(|rs| status_count(rs, "availableReplicas"))
            .sum();
        let mut budget = (available - min_available).max(0);
        for size in sizes.iter_mut() {
            if budget == 0 {
                break;
            }
            let cut = (*size).min(budget);
            *size -= cut;
            budget -= cut;
        }
        let mut scaled = false;
        for (old, size) in olds.iter().zip(sizes) {
            if size != spec_replicas(old) {
                scale_rs(d, old, size, out);
                scaled = true;
            }
        }
        if scaled {
            return;
        }
    }
    cleanup_if_complete(d, new_rs.as_ref(), olds, now, out);
}

/// Recreate: every old pod goes first, then the new ReplicaSet is created at full size.
fn rollout_recreate(
    d: &mut Value,
    new_rs: &mut Option<Value>,
    olds: &[Value],
    revision: i64,
    now: Timestamp,
    out: &mut DeploymentSync,
) {
    let mut scaled = false;
    for old in olds.iter().filter(|rs| is_active(rs)) {
        scale_rs(d, old, 0, out);
        scaled = true;
    }
    if scaled || olds.iter().any(|rs| status_count(rs, "replicas") > 0) {
        return;
    }
    let desired = spec_replicas(d);
    match new_rs {
        None => {
            *new_rs = Some(create_new_rs(d, desired, revision, now, out));
        }
        Some(rs) if spec_replicas(rs) != desired => scale_rs(d, rs, desired, out),
        Some(_) => cleanup_if_complete(d, new_rs.as_ref(), olds, now, out),
    }
}

fn cleanup_if_complete(
    d: &Value,
    new_rs: Option<&Value>,
    olds: &[Value],
    now: Timestamp,
    out: &mut DeploymentSync,
) {
    let all: Vec<&Value> = olds.iter().chain(new_rs).collect();
    let status = super::deploy_status::calculate_status(d, &all, new_rs, now);
    if deployment_complete(d, &status) {
        cleanup(d, olds, out);
    }
}

/// Delete the oldest idle ReplicaSets beyond `revisionHistoryLimit` (default 10).
fn cleanup(d: &Value, olds: &[Value], out: &mut DeploymentSync) {
    let limit = i64_at(d, &["spec", "revisionHistoryLimit"])
        .unwrap_or(10)
        .max(0);
    let cleanable: Vec<&Value> = olds
        .iter()
        .filter(|rs| spec_replicas(rs) == 0 && status_count(rs, "replicas") == 0)
        .filter(|rs| {
            status_count(rs, "observedGeneration")
                >= i64_at(rs, &["metadata", "generation"]).unwrap_or(0)
        })
        .collect();
    let excess = usize::try_from(i64::try_from(cleanable.len()).unwrap_or(0) - limit).unwrap_or(0);
    for rs in cleanable.into_iter().take(excess) {
        out.actions.push(DeploymentAction::DeleteReplicaSet {
            name: name(rs).to_string(),
        });
    }
}

#[cfg(test)]
#[path = "deployment_tests.rs"]
mod tests;
