//! The statefulset controller's decisions, as pure functions: pods named `<set>-<ordinal>`
//! created in order (the next only once the previous is Running and Ready, unless
//! `podManagementPolicy: Parallel`), removed from the highest ordinal down, and updated in
//! reverse ordinal order down to `partition`, `maxUnavailable` at a time (`OnDelete`: only pods
//! someone deletes come back on the new revision); the ControllerRevisions of its templates
//! (named and hashed as a real server names them); and the status `kubectl rollout status`
//! reads.
use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};

use super::events::{Component, EventSpec};
use super::hash::revision_hash;
use super::replicaset::{next_available, pod_from_template, ready_since};
use super::revision::{
    HistoryChange, WorkloadSync, expired, labels_with, template_of, template_patch, update_revision,
};
use crate::object::{at, i64_at, name, scaled_int_or_percent, spec_replicas, str_at};

/// The label naming a pod's revision (for a StatefulSet, the revision's whole name).
pub const REVISION_LABEL: &str = "controller-revision-hash";
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// The label a StatefulSet's ControllerRevision carries its hash in.
pub const HASH_LABEL: &str = "controller.kubernetes.io/hash";

fn revision_of(pod: &Value) -> &str {
    str_at(pod, &["metadata", "labels", REVISION_LABEL]).unwrap_or("")
}

fn running_and_ready(pod: &Value) -> bool {
    str_at(pod, &["status", "phase"]) == Some("Running") && ready_since(pod).is_some()
}

/// The ordinal of `pod` if it is named `<set>-<ordinal>`.
fn ordinal(set: &str, pod: &Value) -> Option<i64> {
    name(pod)
        .strip_prefix(set)?
        .strip_prefix('-')?
        .parse::<i64>()
        .ok()
        .filter(|n| *n >= 0)
}

/// Pod `ordinal` of `set` from `template`, on `revision`.
pub fn new_pod(set: &Value, template: &Value, ordinal: i64, revision: &str) -> Value {
    let pod_name = format!("{}-{ordinal}", name(set));
    let labels = labels_with(
        template,
        &[
            (POD_NAME_LABEL, pod_name.clone()),
            (POD_INDEX_LABEL, ordinal.to_string()),
            (REVISION_LABEL, revision.to_string()),
        ],
    );
    let mut pod = pod_from_template(set, template, &pod_name, Value::Object(labels));
    let spec = &mut pod["spec"];
    if let Some(map) = spec.as_object_mut() {
        map.insert("hostname".into(), json!(pod_name));
        if let Some(service) = str_at(set, &["spec", "serviceName"]).filter(|s| !s.is_empty()) {
            map.insert("subdomain".into(), json!(service));
        }
    }
    pod
}

fn event(reason: &str, verb: &str, pod: &str, set: &str) -> EventSpec {
    EventSpec::normal(
        Component::StatefulSetController,
        reason,
        format!("{verb} Pod {pod} in StatefulSet {set} successful"),
    )
}

/// Decide what the statefulset controller does for `set`, owning `pods` and `revisions`.
pub fn sync_statefulset(
    set: &Value,
    pods: &[Value],
    revisions: &[Value],
    now: Timestamp,
) -> WorkloadSync {
    let mut out = WorkloadSync::default();
    let set_name = name(set);
    let collisions = i64_at(set, &["status", "collisionCount"]).unwrap_or(0);
    let data = template_patch(set);
    let hash = revision_hash(&data, collisions);
    let update = update_revision(set, revisions, &data, &hash, HASH_LABEL);
    out.history.extend(update.change);
    let current_name = str_at(set, &["status", "currentRevision"])
        .filter(|c| revisions.iter().any(|r| name(r) == *c))
        .unwrap_or(&update.name)
        .to_string();
    let current_template = revisions
        .iter()
        .find(|r| name(r) == current_name)
        .map_or_else(|| set["spec"]["template"].clone(), template_of);

    let replicas = spec_replicas(set).max(0);
    let start = i64_at(set, &["spec", "ordinals", "start"]).unwrap_or(0);
    let end = start + replicas;
    let rolling = str_at(set, &["spec", "updateStrategy", "type"]).unwrap_or("RollingUpdate")
        == "RollingUpdate";
    let partition = if rolling {
        i64_at(
            set,
            &["spec", "updateStrategy", "rollingUpdate", "partition"],
        )
        .unwrap_or(0)
    } else {
        0
    };
    let monotonic = str_at(set, &["spec", "podManagementPolicy"]) != Some("Parallel");
    let min_ready =
        SignedDuration::from_secs(i64_at(set, &["spec", "minReadySeconds"]).unwrap_or(0));
    let available = |pod: &Value| {
        running_and_ready(pod) && ready_since(pod).is_some_and(|since| since + min_ready <= now)
    };

    let mut by_ordinal: BTreeMap<i64, &Value> = BTreeMap::new();
    for pod in pods {
        if let Some(n) = ordinal(set_name, pod) {
            by_ordinal.insert(n, pod);
        }
    }
    let mut created: Vec<Value> = Vec::new();
    let mut deleted: BTreeSet<String> = BTreeSet::new();
    // Replicas, in order: create what is missing; in order, wait for each to be healthy.
    let mut blocked = false;
    for n in start..end {
        match by_ordinal.get(&n) {
            None => {
                let pod = if rolling && n < start + partition && current_name != update.name {
                    new_pod(set, &current_template, n, &current_name)
                } else {
                    new_pod(set, &set["spec"]["template"], n, &update.name)
                };
                out.events
                    .push(event("SuccessfulCreate", "create", name(&pod), set_name));
                created.push(pod);
                if monotonic {
                    blocked = true;
                    break;
                }
            }
            Some(pod) if monotonic && !running_and_ready(pod) => {
                blocked = true;
                break;
            }
            Some(_) => {}
        }
    }
    // Scale down: the highest ordinal first, one at a time in order.
    if !blocked {
        let condemned: Vec<&Value> = by_ordinal
            .range(end..)
            .chain(by_ordinal.range(..start))
            .map(|(_, p)| *p)
            .collect();
        let mut sorted = condemned;
        sorted.sort_by_key(|p| std::cmp::Reverse(ordinal(set_name, p)));
        for pod in sorted {
            out.events
                .push(event("SuccessfulDelete", "delete", name(pod), set_name));
            deleted.insert(name(pod).to_string());
            if monotonic {
                blocked = true;
                break;
            }
        }
    }
    // Rolling update: from the highest ordinal down to the partition, maxUnavailable at a time.
    if !blocked && rolling && created.is_empty() {
        let max_unavailable = scaled_int_or_percent(
            at(
                set,
                &["spec", "updateStrategy", "rollingUpdate", "maxUnavailable"],
            ),
            replicas,
            false,
        )
        .max(1);
        let in_range: Vec<(i64, &Value)> = by_ordinal
            .range(start..end)
            .map(|(n, p)| (*n, *p))
            .collect();
        let unavailable =
            i64::try_from(in_range.iter().filter(|(_, p)| !available(p)).count()).unwrap_or(0);
        let budget = max_unavailable - unavailable;
        if budget > 0 {
            let outdated = in_range
                .iter()
                .rev()
                .filter(|(n, p)| *n >= start + partition && revision_of(p) != update.name)
                .take(usize::try_from(budget).unwrap_or(0));
            for (_, pod) in outdated {
                out.events
                    .push(event("SuccessfulDelete", "delete", name(pod), set_name));
                deleted.insert(name(pod).to_string());
            }
        }
    }

    // Status over the pods that remain, and those just made.
    let remaining: Vec<&Value> = pods
        .iter()
        .filter(|p| !deleted.contains(name(p)))
        .chain(created.iter())
        .collect();
    let count = |f: &dyn Fn(&Value) -> bool| -> i64 {
        i64::try_from(remaining.iter().filter(|p| f(p)).count()).unwrap_or(0)
    };
    let total = i64::try_from(remaining.len()).unwrap_or(0);
    let ready = count(&running_and_ready);
    let available_count = count(&available);
    let updated = count(&|p: &Value| revision_of(p) == update.name);
    let mut current_revision = current_name.clone();
    let mut current = count(&|p: &Value| revision_of(p) == current_name);
    if rolling && updated == total && ready == total {
        current_revision = update.name.clone();
        current = updated;
    }
    let mut status = Map::new();
    status.insert("availableReplicas".into(), json!(available_count));
    status.insert("collisionCount".into(), json!(collisions));
    if current > 0 {
        status.insert("currentReplicas".into(), json!(current));
    }
    status.insert("currentRevision".into(), json!(current_revision));
    if let Some(g) = i64_at(set, &["metadata", "generation"]) {
        status.insert("observedGeneration".into(), json!(g));
    }
    if ready > 0 {
        status.insert("readyReplicas".into(), json!(ready));
    }
    status.insert("replicas".into(), json!(total));
    status.insert("updateRevision".into(), json!(update.name));
    if updated > 0 {
        status.insert("updatedReplicas".into(), json!(updated));
    }
    let status = Value::Object(status);
    if set.get("status") != Some(&status) {
        out.status = Some(status);
    }
    out.requeue_after = next_available(remaining.iter().copied(), min_ready, now);

    // History: keep the revisions in use, and revisionHistoryLimit more.
    let mut live: BTreeSet<String> = remaining
        .iter()
        .map(|p| revision_of(p).to_string())
        .collect();
    live.insert(update.name.clone());
    live.insert(current_revision);
    let limit = i64_at(set, &["spec", "revisionHistoryLimit"]).unwrap_or(10);
    out.history.extend(
        expired(revisions, &live, limit)
            .into_iter()
            .map(HistoryChange::Delete),
    );
    out.create = created;
    out.delete = deleted.into_iter().collect();
    out
}

#[cfg(test)]
#[path = "statefulset_tests.rs"]
mod tests;
