//! The defaults of the workload kinds and of what they hold: pod templates, pods, containers,
//! volumes.
use serde_json::{Map, Value, json};

use super::{default, items, map_at};

pub(super) fn stateful_set(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "replicas", json!(1));
    default(spec, "podManagementPolicy", json!("OrderedReady"));
    default(spec, "revisionHistoryLimit", json!(10));
    if let Some(strategy) = map_at(spec, "updateStrategy") {
        default(strategy, "type", json!("RollingUpdate"));
        if strategy.get("type") == Some(&json!("RollingUpdate"))
            && let Some(rolling) = map_at(strategy, "rollingUpdate")
        {
            default(rolling, "partition", json!(0));
        }
    }
    if let Some(policy) = map_at(spec, "persistentVolumeClaimRetentionPolicy") {
        default(policy, "whenDeleted", json!("Retain"));
        default(policy, "whenScaled", json!("Retain"));
    }
    for claim in items(spec, "volumeClaimTemplates") {
        default(claim, "apiVersion", json!("v1"));
        default(claim, "kind", json!("PersistentVolumeClaim"));
        if let Some(claim_spec) = map_at(claim, "spec") {
            default(claim_spec, "volumeMode", json!("Filesystem"));
        }
        if let Some(status) = map_at(claim, "status") {
            default(status, "phase", json!("Pending"));
        }
    }
    pod_template(spec);
}

pub(super) fn daemon_set(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "revisionHistoryLimit", json!(10));
    if let Some(strategy) = map_at(spec, "updateStrategy") {
        default(strategy, "type", json!("RollingUpdate"));
        if strategy.get("type") == Some(&json!("RollingUpdate"))
            && let Some(rolling) = map_at(strategy, "rollingUpdate")
        {
            default(rolling, "maxUnavailable", json!(1));
            default(rolling, "maxSurge", json!(0));
        }
    }
    pod_template(spec);
}

pub(super) fn job(root: &mut Map<String, Value>) {
    labels_from_template(root);
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    if spec.get("completions").is_none_or(Value::is_null)
        && spec.get("parallelism").is_none_or(Value::is_null)
    {
        spec.insert("completions".into(), json!(1));
    }
    default(spec, "parallelism", json!(1));
    // Per-index limits make the job-wide one unlimited unless it is given.
    let per_index = spec
        .get("backoffLimitPerIndex")
        .is_some_and(|v| !v.is_null());
    default(
        spec,
        "backoffLimit",
        json!(if per_index { i32::MAX } else { 6 }),
    );
    default(spec, "completionMode", json!("NonIndexed"));
    default(spec, "suspend", json!(false));
    default(spec, "manualSelector", json!(false));
    let failure_policy = spec.get("podFailurePolicy").is_some_and(|v| !v.is_null());
    default(
        spec,
        "podReplacementPolicy",
        json!(if failure_policy {
            "Failed"
        } else {
            "TerminatingOrFailed"
        }),
    );
    if let Some(Value::Object(policy)) = spec.get_mut("podFailurePolicy") {
        for rule in items(policy, "rules") {
            for pattern in items(rule, "onPodConditions") {
                default(pattern, "status", json!("True"));
            }
        }
    }
    pod_template(spec);
}

/// A Job or a ReplicationController without labels of its own takes its pod template's.
fn labels_from_template(root: &mut Map<String, Value>) {
    let template_labels = root
        .get("spec")
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"))
        .filter(|l| l.as_object().is_some_and(|l| !l.is_empty()))
        .cloned();
    let Some(labels) = template_labels else {
        return;
    };
    if let Some(meta) = map_at(root, "metadata") {
        let empty = meta
            .get("labels")
            .is_none_or(|l| l.as_object().is_none_or(Map::is_empty));
        if empty {
            meta.insert("labels".into(), labels);
        }
    }
}

/// A ReplicationController: its selector and labels are its template's when it has none.
pub(super) fn replication_controller(root: &mut Map<String, Value>) {
    labels_from_template(root);
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    let template_labels = spec
        .get("template")
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"))
        .filter(|l| l.as_object().is_some_and(|l| !l.is_empty()))
        .cloned();
    if let Some(labels) = template_labels
        && spec
            .get("selector")
            .is_none_or(|s| s.as_object().is_none_or(Map::is_empty))
    {
        spec.insert("selector".into(), labels);
    }
    default(spec, "replicas", json!(1));
    if spec.get("template").is_some_and(Value::is_object) {
        pod_template(spec);
    }
}

pub(super) fn cron_job(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "concurrencyPolicy", json!("Allow"));
    default(spec, "suspend", json!(false));
    default(spec, "successfulJobsHistoryLimit", json!(3));
    default(spec, "failedJobsHistoryLimit", json!(1));
    // The job template's pod template is defaulted; the job's own fields are not (they are
    // when the controller makes a Job of it).
    if let Some(template) = map_at(spec, "jobTemplate") {
        // An empty ObjectMeta serializes as `{}`.
        let _ = map_at(template, "metadata");
        if let Some(job_spec) = map_at(template, "spec") {
            pod_template(job_spec);
        }
    }
}

pub(super) fn deployment(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "replicas", json!(1));
    if let Some(strategy) = map_at(spec, "strategy") {
        default(strategy, "type", json!("RollingUpdate"));
        if strategy.get("type") == Some(&json!("RollingUpdate"))
            && let Some(rolling) = map_at(strategy, "rollingUpdate")
        {
            default(rolling, "maxUnavailable", json!("25%"));
            default(rolling, "maxSurge", json!("25%"));
        }
    }
    default(spec, "revisionHistoryLimit", json!(10));
    default(spec, "progressDeadlineSeconds", json!(600));
    pod_template(spec);
}

pub(super) fn replica_set(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "replicas", json!(1));
    pod_template(spec);
}

/// The pod template under a workload's `spec`.
fn pod_template(spec: &mut Map<String, Value>) {
    let Some(template) = map_at(spec, "template") else {
        return;
    };
    // An empty ObjectMeta serializes as `{}` (since 1.34 a zero creation time is left out,
    // where older servers wrote `creationTimestamp: null`).
    let _ = map_at(template, "metadata");
    if let Some(pod_spec_map) = map_at(template, "spec") {
        pod_spec(pod_spec_map);
    }
}

pub(super) fn pod(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    pod_spec(spec);
    default(spec, "enableServiceLinks", json!(true));
    // Priority and ServiceAccount admission.
    default(spec, "priority", json!(0));
    default(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    default(spec, "serviceAccountName", json!("default"));
    let account = spec
        .get("serviceAccountName")
        .cloned()
        .unwrap_or(json!("default"));
    default(spec, "serviceAccount", account);
    // Requests default to limits in a pod (not in a template).
    for list in ["initContainers", "containers"] {
        for container in items(spec, list) {
            let Some(Value::Object(resources)) = container.get_mut("resources") else {
                continue;
            };
            let Some(Value::Object(limits)) = resources.get("limits").cloned() else {
                continue;
            };
            let Some(requests) = map_at(resources, "requests") else {
                continue;
            };
            for (name, quantity) in limits {
                requests.entry(name).or_insert(quantity);
            }
        }
    }
}

fn pod_spec(spec: &mut Map<String, Value>) {
    // `serviceAccount` is the deprecated name of `serviceAccountName`: the server's conversion
    // fills either from the other in every pod spec, templates included.
    if let Some(account) = spec
        .get("serviceAccountName")
        .filter(|v| !v.is_null())
        .cloned()
    {
        default(spec, "serviceAccount", account);
    } else if let Some(account) = spec.get("serviceAccount").filter(|v| !v.is_null()).cloned() {
        default(spec, "serviceAccountName", account);
    }
    default(spec, "restartPolicy", json!("Always"));
    default(spec, "terminationGracePeriodSeconds", json!(30));
    default(spec, "dnsPolicy", json!("ClusterFirst"));
    default(spec, "securityContext", json!({}));
    default(spec, "schedulerName", json!("default-scheduler"));
    let host_network = spec.get("hostNetwork") == Some(&json!(true));
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for c in items(spec, list) {
            container(c, host_network);
        }
    }
    for v in items(spec, "volumes") {
        volume(v);
    }
}

fn container(c: &mut Map<String, Value>, host_network: bool) {
    // Not a default: the empty ResourceRequirements the API types serialize.
    default(c, "resources", json!({}));
    default(c, "terminationMessagePath", json!("/dev/termination-log"));
    default(c, "terminationMessagePolicy", json!("File"));
    let image = c.get("image").and_then(Value::as_str).unwrap_or("");
    default(c, "imagePullPolicy", json!(pull_policy(image)));
    for port in items(c, "ports") {
        default(port, "protocol", json!("TCP"));
        // With the host's network the container port is the host port.
        if host_network && let Some(p) = port.get("containerPort").cloned() {
            default(port, "hostPort", p);
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(Value::Object(p)) = c.get_mut(probe) {
            default(p, "timeoutSeconds", json!(1));
            default(p, "periodSeconds", json!(10));
            default(p, "successThreshold", json!(1));
            default(p, "failureThreshold", json!(3));
            http_get(p);
            if let Some(Value::Object(grpc)) = p.get_mut("grpc") {
                default(grpc, "service", json!(""));
            }
        }
    }
    if let Some(Value::Object(lifecycle)) = c.get_mut("lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(Value::Object(h)) = lifecycle.get_mut(hook) {
                http_get(h);
            }
        }
    }
    for env in items(c, "env") {
        if let Some(Value::Object(from)) = env.get_mut("valueFrom")
            && let Some(Value::Object(field_ref)) = from.get_mut("fieldRef")
        {
            default(field_ref, "apiVersion", json!("v1"));
        }
    }
}

fn http_get(handler: &mut Map<String, Value>) {
    if let Some(Value::Object(get)) = handler.get_mut("httpGet") {
        if get.get("path").is_none_or(|p| p.is_null() || p == "") {
            get.insert("path".into(), json!("/"));
        }
        default(get, "scheme", json!("HTTP"));
    }
}

fn volume(v: &mut Map<String, Value>) {
    const SOURCES: [&str; 7] = [
        "configMap",
        "secret",
        "emptyDir",
        "persistentVolumeClaim",
        "hostPath",
        "projected",
        "downwardAPI",
    ];
    let has_source = v.keys().any(|k| k != "name");
    if !has_source {
        v.insert("emptyDir".into(), json!({}));
    }
    for source in SOURCES {
        if let Some(Value::Object(s)) = v.get_mut(source) {
            match source {
                // 0644
                "configMap" | "secret" | "projected" | "downwardAPI" => {
                    default(s, "defaultMode", json!(420))
                }
                "hostPath" => default(s, "type", json!("")),
                _ => {}
            }
            field_refs(s);
        }
    }
    if let Some(Value::Object(projected)) = v.get_mut("projected") {
        for source in items(projected, "sources") {
            if let Some(Value::Object(token)) = source.get_mut("serviceAccountToken") {
                default(token, "expirationSeconds", json!(3600));
            }
            if let Some(Value::Object(downward)) = source.get_mut("downwardAPI") {
                field_refs(downward);
            }
        }
    }
    // An ephemeral volume's claim is a PersistentVolumeClaim's spec under an empty ObjectMeta.
    if let Some(Value::Object(ephemeral)) = v.get_mut("ephemeral")
        && let Some(Value::Object(template)) = ephemeral.get_mut("volumeClaimTemplate")
    {
        let _ = map_at(template, "metadata");
        if let Some(spec) = map_at(template, "spec") {
            default(spec, "volumeMode", json!("Filesystem"));
        }
    }
}

/// The `fieldRef`s of a downward API source's items take `apiVersion: v1`.
fn field_refs(source: &mut Map<String, Value>) {
    for item in items(source, "items") {
        if let Some(Value::Object(field_ref)) = item.get_mut("fieldRef") {
            default(field_ref, "apiVersion", json!("v1"));
        }
    }
}

/// `Always` for `:latest` or an image without tag or digest, else `IfNotPresent`.
pub fn pull_policy(image: &str) -> &'static str {
    let name = image.rsplit('/').next().unwrap_or(image);
    if name.contains('@') {
        return "IfNotPresent";
    }
    match name.rsplit_once(':') {
        Some((_, "latest")) | None => "Always",
        Some(_) => "IfNotPresent",
    }
}
