//! Deployment status as the deployment controller computes it: replica counts summed over the
//! ReplicaSets, the `Available` and `Progressing` conditions with the reasons and messages a real
//! one writes, and progress deadlines (`ProgressDeadlineExceeded`).
use std::time::Duration;

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use crate::object::{
    at, format_time, i64_at, is_zero, name, parse_time, scaled_int_or_percent, spec_replicas,
    status_count,
};

pub const AVAILABLE: &str = "Available";
pub const PROGRESSING: &str = "Progressing";
pub const NEW_RS_CREATED: &str = "NewReplicaSetCreated";
pub const FOUND_NEW_RS: &str = "FoundNewReplicaSet";
pub const RS_UPDATED: &str = "ReplicaSetUpdated";
pub const NEW_RS_AVAILABLE: &str = "NewReplicaSetAvailable";
pub const TIMED_OUT: &str = "ProgressDeadlineExceeded";
pub const PAUSED: &str = "DeploymentPaused";
pub const RESUMED: &str = "DeploymentResumed";

pub fn is_recreate(deploy: &Value) -> bool {
    at(deploy, &["spec", "strategy", "type"]).and_then(Value::as_str) == Some("Recreate")
}

/// (maxSurge, maxUnavailable) resolved against `spec.replicas`: surge rounds up,
/// unavailability down, and both zero becomes one unavailable so a rollout can move.
pub fn fenceposts(deploy: &Value) -> (i64, i64) {
    if is_recreate(deploy) {
        return (0, 0);
    }
    let desired = spec_replicas(deploy);
    let rolling = at(deploy, &["spec", "strategy", "rollingUpdate"]);
    let default = json!("25%");
    let surge_value = rolling.and_then(|r| r.get("maxSurge")).unwrap_or(&default);
    let unavailable_value = rolling
        .and_then(|r| r.get("maxUnavailable"))
        .unwrap_or(&default);
    let surge = scaled_int_or_percent(Some(surge_value), desired, true);
    let unavailable = scaled_int_or_percent(Some(unavailable_value), desired, false);
    if surge == 0 && unavailable == 0 {
        (0, 1)
    } else {
        (surge, unavailable)
    }
}

/// `maxUnavailable` as the Available condition uses it (never more than the desired count).
pub fn max_unavailable(deploy: &Value) -> i64 {
    if is_recreate(deploy) {
        return 0;
    }
    fenceposts(deploy).1.min(spec_replicas(deploy))
}

pub fn progress_deadline(deploy: &Value) -> Option<i64> {
    i64_at(deploy, &["spec", "progressDeadlineSeconds"]).filter(|s| *s < i64::from(i32::MAX))
}

/// The counts of a status, over every ReplicaSet of the Deployment, with the previous
/// conditions carried over and `Available` brought up to date.
pub fn calculate_status(
    deploy: &Value,
    all: &[&Value],
    new_rs: Option<&Value>,
    now: Timestamp,
) -> Value {
    let sum = |field: &str| all.iter().map(|rs| status_count(rs, field)).sum::<i64>();
    let available = sum("availableReplicas");
    let total_spec: i64 = all.iter().map(|rs| spec_replicas(rs)).sum();
    let mut status = Map::new();
    let mut put = |key: &str, value: Value| {
        if !is_zero(&value) {
            status.insert(key.to_string(), value);
        }
    };
    put(
        "observedGeneration",
        json!(i64_at(deploy, &["metadata", "generation"]).unwrap_or(0)),
    );
    put("replicas", json!(sum("replicas")));
    put(
        "updatedReplicas",
        json!(new_rs.map(|rs| status_count(rs, "replicas")).unwrap_or(0)),
    );
    put("readyReplicas", json!(sum("readyReplicas")));
    put("availableReplicas", json!(available));
    put(
        "unavailableReplicas",
        json!((total_spec - available).max(0)),
    );
    if let Some(collisions) = at(deploy, &["status", "collisionCount"]) {
        status.insert("collisionCount".into(), collisions.clone());
    }
    if let Some(conditions) = at(deploy, &["status", "conditions"]) {
        status.insert("conditions".into(), conditions.clone());
    }
    let mut status = Value::Object(status);
    if available >= spec_replicas(deploy) - max_unavailable(deploy) {
        set_condition(
            &mut status,
            AVAILABLE,
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            now,
        );
    } else {
        set_condition(
            &mut status,
            AVAILABLE,
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            now,
        );
    }
    status
}

pub fn condition<'a>(status: &'a Value, kind: &str) -> Option<&'a Value> {
    status
        .get("conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
}

fn condition_field<'a>(status: &'a Value, kind: &str, field: &str) -> Option<&'a str> {
    condition(status, kind)
        .and_then(|c| c.get(field))
        .and_then(Value::as_str)
}

/// Set a condition as `SetDeploymentCondition` does: unchanged if status and reason are the
/// same; the transition time kept if only the reason changes; the new one goes last.
pub fn set_condition(
    status: &mut Value,
    kind: &str,
    state: &str,
    reason: &str,
    message: &str,
    now: Timestamp,
) {
    let mut transition = format_time(now);
    if let Some(current) = condition(status, kind) {
        if current["status"] == state && current["reason"] == reason {
            return;
        }
        if current["status"] == state
            && let Some(t) = current["lastTransitionTime"].as_str()
        {
            transition = t.to_string();
        }
    }
    put_condition(
        status,
        kind,
        state,
        reason,
        message,
        &format_time(now),
        &transition,
    );
}

fn put_condition(
    status: &mut Value,
    kind: &str,
    state: &str,
    reason: &str,
    message: &str,
    updated: &str,
    transition: &str,
) {
    let Some(map) = status.as_object_mut() else {
        return;
    };
    let conditions = map
        .entry("conditions")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    list.retain(|c| c["type"] != kind);
    list.push(json!({
        "lastTransitionTime": transition,
        "lastUpdateTime": updated,
        "message": message,
        "reason": reason,
        "status": state,
        "type": kind,
    }));
}

fn remove_condition(status: &mut Value, kind: &str) {
    if let Some(list) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        list.retain(|c| c["type"] != kind);
        if list.is_empty()
            && let Some(map) = status.as_object_mut()
        {
            map.remove("conditions");
        }
    }
}

/// A rollout is complete when every desired replica is updated and available, and no old one
/// is left.
pub fn deployment_complete(deploy: &Value, status: &Value) -> bool {
    let desired = spec_replicas(deploy);
    let count = |f: &str| status.get(f).and_then(Value::as_i64).unwrap_or(0);
    count("updatedReplicas") == desired
        && count("replicas") == desired
        && count("availableReplicas") == desired
        && count("observedGeneration") >= i64_at(deploy, &["metadata", "generation"]).unwrap_or(0)
}

/// Whether the new status shows progress over the Deployment's current status.
fn deployment_progressing(deploy: &Value, new: &Value) -> bool {
    let old = deploy.get("status").cloned().unwrap_or(Value::Null);
    let count = |s: &Value, f: &str| s.get(f).and_then(Value::as_i64).unwrap_or(0);
    let old_old = count(&old, "replicas") - count(&old, "updatedReplicas");
    let new_old = count(new, "replicas") - count(new, "updatedReplicas");
    count(new, "updatedReplicas") > count(&old, "updatedReplicas")
        || new_old < old_old
        || count(new, "readyReplicas") > count(&old, "readyReplicas")
        || count(new, "availableReplicas") > count(&old, "availableReplicas")
}

fn timed_out(deploy: &Value, status: &Value, now: Timestamp) -> bool {
    let Some(deadline) = progress_deadline(deploy) else {
        return false;
    };
    match condition_field(status, PROGRESSING, "reason") {
        None | Some(NEW_RS_AVAILABLE) => false,
        Some(TIMED_OUT) => true,
        Some(_) => condition_field(status, PROGRESSING, "lastUpdateTime")
            .and_then(parse_time)
            .is_some_and(|from| from + jiff::SignedDuration::from_secs(deadline) < now),
    }
}

/// The status `syncRolloutStatus` writes, and when to look again for a progress deadline.
/// `status` is the Deployment's status as this sync left it (with any condition already set).
pub fn rollout_status(
    deploy: &Value,
    all: &[&Value],
    new_rs: Option<&Value>,
    now: Timestamp,
) -> (Value, Option<Duration>) {
    let mut status = calculate_status(deploy, all, new_rs, now);
    let has_deadline = progress_deadline(deploy).is_some();
    if !has_deadline {
        remove_condition(&mut status, PROGRESSING);
    }
    let current_reason =
        at(deploy, &["status"]).and_then(|s| condition_field(s, PROGRESSING, "reason"));
    let complete_before = status.get("replicas") == status.get("updatedReplicas")
        && current_reason == Some(NEW_RS_AVAILABLE);
    if has_deadline && !complete_before {
        let rs_name = new_rs.map(name).unwrap_or_default();
        if deployment_complete(deploy, &status) {
            let message = format!("ReplicaSet \"{rs_name}\" has successfully progressed.");
            set_condition(
                &mut status,
                PROGRESSING,
                "True",
                NEW_RS_AVAILABLE,
                &message,
                now,
            );
        } else if deployment_progressing(deploy, &status) {
            // Progress moves lastUpdateTime even when the reason stays the same.
            let message = format!("ReplicaSet \"{rs_name}\" is progressing.");
            let now_text = format_time(now);
            let transition = match condition(&status, PROGRESSING) {
                Some(c) if c["status"] == "True" => c["lastTransitionTime"]
                    .as_str()
                    .unwrap_or(&now_text)
                    .to_string(),
                _ => now_text.clone(),
            };
            put_condition(
                &mut status,
                PROGRESSING,
                "True",
                RS_UPDATED,
                &message,
                &now_text,
                &transition,
            );
        } else if timed_out(deploy, &status, now) {
            let message = format!("ReplicaSet \"{rs_name}\" has timed out progressing.");
            set_condition(&mut status, PROGRESSING, "False", TIMED_OUT, &message, now);
        }
    }
    let requeue = requeue_for_deadline(deploy, &status, now);
    (status, requeue)
}

/// When a rollout still in progress would cross its deadline, so the driver looks again then.
fn requeue_for_deadline(deploy: &Value, status: &Value, now: Timestamp) -> Option<Duration> {
    let deadline = progress_deadline(deploy)?;
    let reason = condition_field(status, PROGRESSING, "reason")?;
    if deployment_complete(deploy, status) || reason == TIMED_OUT || reason == NEW_RS_AVAILABLE {
        return None;
    }
    let from = condition_field(status, PROGRESSING, "lastUpdateTime").and_then(parse_time)?;
    let due = from + jiff::SignedDuration::from_secs(deadline);
    // Timestamps are whole seconds: look again just after the deadline has surely passed.
    let wait = due.duration_since(now).as_secs_f64().max(0.0) + 1.0;
    Some(Duration::from_secs_f64(wait))
}

/// Condition for `spec.paused` changes, as `checkPausedConditions` writes it. `None` when
/// nothing changes.
pub fn paused_condition(deploy: &Value, now: Timestamp) -> Option<Value> {
    let paused = at(deploy, &["spec", "paused"]).and_then(Value::as_bool) == Some(true);
    progress_deadline(deploy)?;
    let mut status = deploy.get("status").cloned().unwrap_or_else(|| json!({}));
    let reason = condition_field(&status, PROGRESSING, "reason");
    if paused && reason != Some(PAUSED) {
        set_condition(
            &mut status,
            PROGRESSING,
            "Unknown",
            PAUSED,
            "Deployment is paused",
            now,
        );
    } else if !paused && reason == Some(PAUSED) {
        set_condition(
            &mut status,
            PROGRESSING,
            "Unknown",
            RESUMED,
            "Deployment is resumed",
            now,
        );
    } else {
        return None;
    }
    Some(status)
}
