//! The daemonset controller's decisions, as pure functions: one pod on every node the template
//! fits (nodeSelector, node affinity, taints against the template's tolerations and the ones every
//! DaemonSet pod gets), pinned to its node with a `matchFields metadata.name` affinity as the
//! real controller pins it; a rolling update node by node within `maxUnavailable`, or surging
//! within `maxSurge`; `OnDelete`; the ControllerRevisions of its templates; and its status.
use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};

use super::events::{Component, EventSpec};
use super::hash::pod_template_hash;
use super::replicaset::{next_available, pod_from_template, ready_since};
use super::revision::{
    HistoryChange, WorkloadSync, expired, labels_with, template_patch, update_revision,
};
use super::scheduler::{matches_node_affinity, required_node_terms, untolerated_taint};
use crate::object::{at, i64_at, name, scaled_int_or_percent, str_at};

/// The label naming a DaemonSet pod's revision (its hash) and the revision's own hash label.
pub const REVISION_LABEL: &str = "controller-revision-hash";
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";
/// The annotation the API server counts template changes in.
pub const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// The tolerations every DaemonSet pod gets, so it runs on nodes that are not ready, under
/// pressure or cordoned.
fn daemon_tolerations() -> [Value; 6] {
    let t = |key: &str, effect: &str| json!({"effect": effect, "key": format!("node.kubernetes.io/{key}"), "operator": "Exists"});
    [
        t("not-ready", "NoExecute"),
        t("unreachable", "NoExecute"),
        t("disk-pressure", "NoSchedule"),
        t("memory-pressure", "NoSchedule"),
        t("pid-pressure", "NoSchedule"),
        t("unschedulable", "NoSchedule"),
    ]
}

/// The DaemonSet's pod template with the daemon tolerations added.
fn daemon_template(ds: &Value) -> Value {
    let mut template = at(ds, &["spec", "template"])
        .cloned()
        .unwrap_or_else(|| json!({}));
    let spec = template
        .as_object_mut()
        .map(|t| t.entry("spec").or_insert_with(|| json!({})));
    if let Some(Value::Object(spec)) = spec {
        let list = spec.entry("tolerations").or_insert_with(|| json!([]));
        if let Value::Array(list) = list {
            for t in daemon_tolerations() {
                if !list.contains(&t) {
                    list.push(t);
                }
            }
        }
    }
    template
}

/// Whether a pod of the template should run on `node`, and whether one there may stay.
fn should_run(pod_template: &Value, node: &Value) -> (bool, bool) {
    let probe = json!({"spec": pod_template.get("spec").cloned().unwrap_or(Value::Null)});
    let fits = matches_node_affinity(&probe, node);
    let schedules = untolerated_taint(&probe, node, &["NoSchedule", "NoExecute"]).is_none();
    let stays = untolerated_taint(&probe, node, &["NoExecute"]).is_none();
    (fits && schedules, fits && stays)
}

/// The node a DaemonSet pod is for: its node, or the one its affinity pins it to.
fn target_node(pod: &Value) -> Option<&str> {
    str_at(pod, &["spec", "nodeName"])
        .filter(|n| !n.is_empty())
        .or_else(|| {
            required_node_terms(pod)?
                .iter()
                .filter_map(|t| t.get("matchFields")?.as_array())
                .flatten()
                .find(|f| f["key"] == "metadata.name")?
                .get("values")?
                .get(0)?
                .as_str()
        })
}

/// A pod of `ds` for `node`.
fn new_pod(
    ds: &Value,
    template: &Value,
    node: &str,
    hash: &str,
    generation: &str,
    suffix: &str,
) -> Value {
    let labels = labels_with(
        template,
        &[
            (REVISION_LABEL, hash.to_string()),
            (TEMPLATE_GENERATION_LABEL, generation.to_string()),
        ],
    );
    let mut pod = pod_from_template(
        ds,
        template,
        &format!("{}-{suffix}", name(ds)),
        Value::Object(labels),
    );
    let spec = &mut pod["spec"];
    spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = json!({
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node]}]}]
    });
    pod
}

fn created(pod: &Value) -> &str {
    str_at(pod, &["metadata", "creationTimestamp"]).unwrap_or("")
}

/// Decide what the daemonset controller does for `ds` over `nodes`, owning `pods` and
/// `revisions`. `suffix` gives the random part of new pod names.
pub fn sync_daemonset(
    ds: &Value,
    nodes: &[&Value],
    pods: &[Value],
    revisions: &[Value],
    now: Timestamp,
    suffix: &mut dyn FnMut() -> String,
) -> WorkloadSync {
    let mut out = WorkloadSync::default();
    let template = daemon_template(ds);
    let hash = pod_template_hash(&ds["spec"]["template"]);
    let data = template_patch(ds);
    let update = update_revision(ds, revisions, &data, &hash, REVISION_LABEL);
    let update_hash = revisions
        .iter()
        .find(|r| name(r) == update.name)
        .and_then(|r| str_at(r, &["metadata", "labels", REVISION_LABEL]))
        .unwrap_or(&hash)
        .to_string();
    out.history.extend(update.change);
    let generation = str_at(ds, &["metadata", "annotations", TEMPLATE_GENERATION])
        .unwrap_or("1")
        .to_string();
    let is_updated = |pod: &Value| {
        str_at(pod, &["metadata", "labels", REVISION_LABEL]) == Some(update_hash.as_str())
            || str_at(pod, &["metadata", "labels", TEMPLATE_GENERATION_LABEL])
                == Some(generation.as_str())
    };
    let min_ready =
        SignedDuration::from_secs(i64_at(ds, &["spec", "minReadySeconds"]).unwrap_or(0));
    let available = |pod: &Value| ready_since(pod).is_some_and(|since| since + min_ready <= now);
    let mut create_on = |node: &str, out: &mut WorkloadSync| {
        let pod = new_pod(ds, &template, node, &update_hash, &generation, &suffix());
        out.events.push(EventSpec::normal(
            Component::DaemonSetController,
            "SuccessfulCreate",
            format!("Created pod: {}", name(&pod)),
        ));
        out.create.push(pod);
    };
    let mut delete: BTreeSet<String> = BTreeSet::new();

    // The daemon pods on each node, oldest first.
    let mut on_node: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for pod in pods {
        if let Some(node) = target_node(pod) {
            on_node.entry(node).or_default().push(pod);
        }
    }
    for list in on_node.values_mut() {
        list.sort_by_key(|p| (created(p), name(p)));
    }
    let rolling = str_at(ds, &["spec", "updateStrategy", "type"]).unwrap_or("RollingUpdate")
        == "RollingUpdate";
    let strategy = at(ds, &["spec", "updateStrategy", "rollingUpdate"]);

    let mut desired = 0;
    let mut runs_on: Vec<&str> = Vec::new();
    for node in nodes {
        let node_name = name(node);
        let (run, stay) = should_run(&template, node);
        let here = on_node.get(node_name).cloned().unwrap_or_default();
        if run {
            desired += 1;
            runs_on.push(node_name);
        }
        if run && here.is_empty() {
            create_on(node_name, &mut out);
        } else if !stay {
            delete.extend(here.iter().map(|p| name(p).to_string()));
        } else {
            // One pod a node: the oldest stays (and, in a surge, the oldest updated one).
            let keep_new = here.iter().find(|p| is_updated(p)).map(|p| name(p));
            let keep_old = here.first().map(|p| name(p));
            for pod in &here {
                let n = name(pod);
                if Some(n) != keep_old && Some(n) != keep_new {
                    delete.insert(n.to_string());
                }
            }
        }
    }
    // Pods for nodes that went are the pod GC's; pods on nodes they should not run on go.
    let desired_total = i64::try_from(runs_on.len()).unwrap_or(0);
    if rolling && out.create.is_empty() {
        let max_surge = scaled_int_or_percent(
            strategy.and_then(|s| s.get("maxSurge")),
            desired_total,
            true,
        );
        // Without a surge at least one pod at a time (the API refuses both at 0).
        let max_unavailable = scaled_int_or_percent(
            strategy.and_then(|s| s.get("maxUnavailable")),
            desired_total,
            true,
        )
        .max(1);
        let mut unavailable = 0;
        let mut surging = 0;
        let mut candidates: Vec<&Value> = Vec::new();
        let mut surge_candidates: Vec<&str> = Vec::new();
        for node in &runs_on {
            let here = on_node.get(node).cloned().unwrap_or_default();
            let new = here
                .iter()
                .find(|p| is_updated(p) && !delete.contains(name(p)));
            let old = here
                .iter()
                .find(|p| !is_updated(p) && !delete.contains(name(p)));
            match (old, new) {
                (None, None) => {}
                (None, Some(n)) => {
                    if !available(n) {
                        unavailable += 1;
                    }
                }
                (Some(o), None) if max_surge == 0 => {
                    if available(o) {
                        candidates.push(o);
                    } else {
                        delete.insert(name(o).to_string());
                    }
                }
                (Some(o), None) => {
                    if available(o) {
                        surge_candidates.push(node);
                    } else {
                        create_on(node, &mut out);
                    }
                }
                (Some(o), Some(n)) => {
                    if available(n) {
                        delete.insert(name(o).to_string());
                    } else {
                        surging += 1;
                    }
                }
            }
        }
        if max_surge == 0 {
            let room = usize::try_from((max_unavailable - unavailable).max(0)).unwrap_or(0);
            delete.extend(candidates.iter().take(room).map(|p| name(p).to_string()));
        } else {
            let room = usize::try_from((max_surge - surging).max(0)).unwrap_or(0);
            for node in surge_candidates.into_iter().take(room) {
                create_on(node, &mut out);
            }
        }
    }
    for pod in &delete {
        out.events.push(EventSpec::normal(
            Component::DaemonSetController,
            "SuccessfulDelete",
            format!("Deleted pod: {pod}"),
        ));
    }

    // Status: over the oldest pod of each node it should run on.
    let (mut current, mut ready, mut available_count, mut updated, mut misscheduled) =
        (0, 0, 0, 0, 0);
    for node in nodes {
        let node_name = name(node);
        let here: Vec<&Value> = on_node
            .get(node_name)
            .map(|l| {
                l.iter()
                    .copied()
                    .filter(|p| !delete.contains(name(p)))
                    .collect()
            })
            .unwrap_or_default();
        if runs_on.contains(&node_name) {
            let Some(pod) = here.first() else { continue };
            current += 1;
            if ready_since(pod).is_some() {
                ready += 1;
                if available(pod) {
                    available_count += 1;
                }
            }
            if is_updated(pod) {
                updated += 1;
            }
        } else if !here.is_empty() {
            misscheduled += 1;
        }
    }
    let mut status = Map::new();
    status.insert("currentNumberScheduled".into(), json!(current));
    status.insert("desiredNumberScheduled".into(), json!(desired));
    if available_count > 0 {
        status.insert("numberAvailable".into(), json!(available_count));
    }
    status.insert("numberMisscheduled".into(), json!(misscheduled));
    status.insert("numberReady".into(), json!(ready));
    if desired - available_count > 0 {
        status.insert("numberUnavailable".into(), json!(desired - available_count));
    }
    if let Some(g) = i64_at(ds, &["metadata", "generation"]) {
        status.insert("observedGeneration".into(), json!(g));
    }
    if updated > 0 {
        status.insert("updatedNumberScheduled".into(), json!(updated));
    }
    let status = Value::Object(status);
    if ds.get("status") != Some(&status) {
        out.status = Some(status);
    }
    out.requeue_after = next_available(pods.iter(), min_ready, now);

    let mut live: BTreeSet<String> = BTreeSet::from([update.name.clone()]);
    for pod in pods.iter().filter(|p| !delete.contains(name(p))) {
        if let Some(r) = revisions.iter().find(|r| {
            str_at(r, &["metadata", "labels", REVISION_LABEL])
                == str_at(pod, &["metadata", "labels", REVISION_LABEL])
        }) {
            live.insert(name(r).to_string());
        }
    }
    let limit = i64_at(ds, &["spec", "revisionHistoryLimit"]).unwrap_or(10);
    out.history.extend(
        expired(revisions, &live, limit)
            .into_iter()
            .map(HistoryChange::Delete),
    );
    out.delete = delete.into_iter().collect();
    out
}

#[cfg(test)]
#[path = "daemonset_tests.rs"]
mod tests;
