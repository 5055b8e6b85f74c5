//! What a real API server fills in on create/update (docs/ARCHITECTURE.md, "Server defaults"): the
//! `SetDefaults_*` functions of the built-in API groups (as a 1.36 server applies them; the
//! objects it stored after `kubectl apply` are in testdata/kubernetes-1.36/objects), plus what the
//! admission plugins of a stock server add to pods (priority, service account) and namespaces
//! (finalizer, name label), and for custom resources the defaults of their schema, as the
//! apiextensions server applies them. The node tolerations and service account token volume
//! admission adds to pods are left out; so are what the server allocates (a Service's cluster
//! IPs and node ports): those are the demo cluster's.
//!
//! Many defaults depend on another field: a Service's `externalTrafficPolicy` on its `type`, the
//! affinity timeout on `sessionAffinity`, a Job's `backoffLimit` on `backoffLimitPerIndex`, a
//! container's `imagePullPolicy` on its image. [`crate::managed_fields::default_without`] answers for one field with the
//! rest of an object as it is, so that such a default is judged by the value those fields have.
//!
//! Shared by the demo cluster (which fills them in as a server does) and the drift engine (a
//! field absent from the manifest whose live value is the server's default is not drift).
//!
//! - [`workloads`]: the workload kinds, pod templates, pods, containers and volumes.
use serde_json::{Map, Value, json};

use super::{Schema, Shape};

#[cfg(test)]
mod tests;
mod workloads;

pub use workloads::pull_policy;
use workloads::{
    cron_job, daemon_set, deployment, job, pod, replica_set, replication_controller, stateful_set,
};

/// Fill in the defaults of an object of `group` and `kind` in place; `schema` is the kind's
/// (whose `default`s a custom resource gets). Kinds without known defaults are left as they are.
pub fn apply_defaults(group: &str, kind: &str, schema: Schema, object: &mut Value) {
    match code_defaults(group, kind) {
        Some(fill) => {
            if let Some(root) = object.as_object_mut() {
                fill(root);
            }
        }
        None if !is_builtin_group(group) => schema_defaults(schema, object),
        None => {}
    }
}

/// What fills in the defaults of a built-in kind, for the kinds this module knows.
fn code_defaults(group: &str, kind: &str) -> Option<fn(&mut Map<String, Value>)> {
    Some(match (group, kind) {
        ("apps", "Deployment") => deployment,
        ("apps", "ReplicaSet") => replica_set,
        ("apps", "StatefulSet") => stateful_set,
        ("apps", "DaemonSet") => daemon_set,
        ("batch", "Job") => job,
        ("batch", "CronJob") => cron_job,
        ("", "Pod") => pod,
        ("", "ReplicationController") => replication_controller,
        ("", "Namespace") => namespace,
        ("", "Service") => service,
        ("", "Secret") => |root| default(root, "type", json!("Opaque")),
        ("", "PersistentVolumeClaim") => |root| {
            if let Some(spec) = map_at(root, "spec") {
                default(spec, "volumeMode", json!("Filesystem"));
            }
        },
        ("", "PersistentVolume") => persistent_volume,
        ("", "Endpoints") => |root| {
            for subset in items(root, "subsets") {
                for port in items(subset, "ports") {
                    default(port, "protocol", json!("TCP"));
                }
            }
        },
        ("autoscaling", "HorizontalPodAutoscaler") => autoscaler,
        ("networking.k8s.io", "NetworkPolicy") => network_policy,
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => binding,
        ("storage.k8s.io", "StorageClass") => |root| {
            default(root, "reclaimPolicy", json!("Delete"));
            default(root, "volumeBindingMode", json!("Immediate"));
        },
        ("scheduling.k8s.io", "PriorityClass") => |root| {
            default(root, "preemptionPolicy", json!("PreemptLowerPriority"));
        },
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => |root| {
            webhooks(root, false);
        },
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => |root| {
            webhooks(root, true);
        },
        ("apiextensions.k8s.io", "CustomResourceDefinition") => definition,
        _ => return None,
    })
}

/// True for the built-in kinds whose defaults this module knows: code, where a default may
/// depend on another field (a custom resource's schema defaults do not).
pub fn has_code_defaults(group: &str, kind: &str) -> bool {
    code_defaults(group, kind).is_some()
}

/// The groups of the built-in kinds (whose defaults are code, not schema).
fn is_builtin_group(group: &str) -> bool {
    group.is_empty() || !group.contains('.') || group.ends_with(".k8s.io")
}

/// The `default`s of a structural schema, filled in where the object lacks them (fields of the
/// objects present, and of every list item), as the apiextensions server defaults a custom
/// resource.
fn schema_defaults(schema: Schema, value: &mut Value) {
    match (schema.shape(), value) {
        (Shape::Struct, Value::Object(map)) => {
            for field in schema.node().fields {
                if !map.contains_key(field.name)
                    && let Some(default) = field.node.default
                {
                    map.insert(field.name.to_owned(), default.clone());
                }
            }
            for (name, child) in map.iter_mut() {
                schema_defaults(schema.field(name), child);
            }
        }
        (Shape::Map, Value::Object(map)) => {
            for child in map.values_mut() {
                schema_defaults(schema.item(), child);
            }
        }
        (Shape::List, Value::Array(items)) => {
            for item in items {
                schema_defaults(schema.item(), item);
            }
        }
        _ => {}
    }
}

fn service(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "sessionAffinity", json!("None"));
    match spec.get("sessionAffinity").and_then(Value::as_str) {
        // The server drops a config that has nothing to configure.
        Some("None") => {
            spec.shift_remove("sessionAffinityConfig");
        }
        Some("ClientIP") => {
            if let Some(config) = map_at(spec, "sessionAffinityConfig")
                && let Some(client) = map_at(config, "clientIP")
            {
                default(client, "timeoutSeconds", json!(10800));
            }
        }
        _ => {}
    }
    default(spec, "type", json!("ClusterIP"));
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    for port in items(spec, "ports") {
        default(port, "protocol", json!("TCP"));
        if let Some(number) = port.get("port").cloned() {
            default(port, "targetPort", number);
        }
    }
    // Reachable from outside the cluster: through node ports, a load balancer, or the external
    // IPs of a ClusterIP Service.
    let external_ips = spec
        .get("externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|ips| !ips.is_empty());
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer") || (ty == "ClusterIP" && external_ips) {
        default(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        default(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if ty == "LoadBalancer" {
        default(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
}

/// A PersistentVolume: what is done with it when released, its mode, and the type of a host
/// path.
fn persistent_volume(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "persistentVolumeReclaimPolicy", json!("Retain"));
    default(spec, "volumeMode", json!("Filesystem"));
    if let Some(Value::Object(host_path)) = spec.get_mut("hostPath") {
        default(host_path, "type", json!(""));
    }
}

/// The webhooks of a validating or mutating webhook configuration.
fn webhooks(root: &mut Map<String, Value>, mutating: bool) {
    for hook in items(root, "webhooks") {
        default(hook, "failurePolicy", json!("Fail"));
        default(hook, "matchPolicy", json!("Equivalent"));
        default(hook, "namespaceSelector", json!({}));
        default(hook, "objectSelector", json!({}));
        default(hook, "timeoutSeconds", json!(10));
        if mutating {
            default(hook, "reinvocationPolicy", json!("Never"));
        }
        for rule in items(hook, "rules") {
            default(rule, "scope", json!("*"));
        }
        if let Some(Value::Object(config)) = hook.get_mut("clientConfig")
            && let Some(Value::Object(service)) = config.get_mut("service")
        {
            default(service, "port", json!(443));
        }
    }
}

fn autoscaler(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "minReplicas", json!(1));
    if spec
        .get("metrics")
        .is_none_or(|m| m.as_array().is_none_or(Vec::is_empty))
    {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
    // A behavior given at all gets both directions' rules, each field the rules leave out.
    if let Some(Value::Object(behavior)) = spec.get_mut("behavior") {
        if let Some(up) = map_at(behavior, "scaleUp") {
            default(up, "stabilizationWindowSeconds", json!(0));
            default(up, "selectPolicy", json!("Max"));
            default(
                up,
                "policies",
                json!([{"type": "Pods", "value": 4, "periodSeconds": 15},
                       {"type": "Percent", "value": 100, "periodSeconds": 15}]),
            );
        }
        if let Some(down) = map_at(behavior, "scaleDown") {
            // No stabilization window: the controller's flag decides it.
            default(down, "selectPolicy", json!("Max"));
            default(
                down,
                "policies",
                json!([{"type": "Percent", "value": 100, "periodSeconds": 15}]),
            );
        }
    }
}

fn network_policy(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    for direction in ["ingress", "egress"] {
        for rule in items(spec, direction) {
            for port in items(rule, "ports") {
                default(port, "protocol", json!("TCP"));
            }
        }
    }
    if spec.get("policyTypes").is_none_or(Value::is_null) {
        let mut types = vec![json!("Ingress")];
        if spec.get("egress").is_some_and(|e| !e.is_null()) {
            types.push(json!("Egress"));
        }
        spec.insert("policyTypes".into(), Value::Array(types));
    }
}

fn binding(root: &mut Map<String, Value>) {
    for subject in items(root, "subjects") {
        // A ServiceAccount's is "" (SetDefaults_Subject), which JSON leaves out (omitempty).
        let group = match subject.get("kind").and_then(Value::as_str) {
            Some("User" | "Group") => "rbac.authorization.k8s.io",
            _ => continue,
        };
        default(subject, "apiGroup", json!(group));
    }
}

fn definition(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    if let Some(conversion) = map_at(spec, "conversion") {
        default(conversion, "strategy", json!("None"));
    }
    if let Some(names) = map_at(spec, "names")
        && let Some(kind) = names.get("kind").and_then(Value::as_str).map(str::to_owned)
    {
        default(names, "listKind", json!(format!("{kind}List")));
        default(names, "singular", json!(kind.to_ascii_lowercase()));
    }
}

/// The map at `key`, created empty when absent; `None` when something else is there (a
/// malformed object the store's validation rejects: nothing to default).
fn map_at<'a>(parent: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    parent
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
}

/// Set `key` to `value` when it is absent or null.
fn default(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_string(), value);
    }
}
fn namespace(root: &mut Map<String, Value>) {
    let name = root
        .get("metadata")
        .and_then(|m| m.get("name"))
        .cloned()
        .unwrap_or(Value::Null);
    if let Value::String(name) = name
        && let Some(labels) = map_at(root, "metadata").and_then(|m| map_at(m, "labels"))
    {
        labels.insert("kubernetes.io/metadata.name".into(), Value::String(name));
    }
    if let Some(spec) = map_at(root, "spec") {
        default(spec, "finalizers", json!(["kubernetes"]));
    }
    if let Some(status) = map_at(root, "status") {
        default(status, "phase", json!("Active"));
    }
}

/// The object items of the list at `key`, if it is a list.
fn items<'a>(
    parent: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    parent
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}
