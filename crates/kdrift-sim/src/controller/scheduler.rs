//! The default scheduler's decision for one pod, as a pure function: the filters of
//! kube-scheduler in its order (NodeUnschedulable, TaintToleration, NodeAffinity,
//! NodeResourcesFit), the node it prefers among those that fit (fewest pods of the same owner,
//! then the least requested, then by name), and, when none fits, the `FailedScheduling` message
//! worded as kube-scheduler's `FitError` words it, preemption part included:
//!
//! `0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient memory. preemption: 0/3
//! nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found
//! for incoming pod..`
//!
//! (The doubled period is kube-scheduler's: the preemption message ends with one and is
//! appended with `" %v."`.) Every pod has priority 0 here, so preemption never finds a victim.
use std::collections::BTreeMap;

use serde_json::Value;

use super::quantity::{millicores, units};
use crate::object::{at, str_at};

/// The taint the node lifecycle controller puts on a cordoned node.
pub const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// What the scheduler counts: cpu in millicores, memory in bytes, and pods.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resources {
    pub milli_cpu: i64,
    pub memory: i64,
    pub pods: i64,
}

impl Resources {
    pub fn add(&mut self, other: Resources) {
        self.milli_cpu += other.milli_cpu;
        self.memory += other.memory;
        self.pods += other.pods;
    }

    pub fn remove(&mut self, other: Resources) {
        self.milli_cpu -= other.milli_cpu;
        self.memory -= other.memory;
        self.pods -= other.pods;
    }
}

fn container_requests(container: &Value) -> Resources {
    let requests = at(container, &["resources", "requests"]);
    Resources {
        milli_cpu: millicores(requests.and_then(|r| r.get("cpu"))),
        memory: units(requests.and_then(|r| r.get("memory"))),
        pods: 0,
    }
}

/// What a pod requests: the sum of its containers' requests, at least any init container's
/// (they run one at a time, before the others), plus its overhead; and one pod.
pub fn pod_requests(pod: &Value) -> Resources {
    let list = |name: &str| {
        at(pod, &["spec", name])
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    };
    let mut total = Resources::default();
    for c in list("containers") {
        total.add(container_requests(c));
    }
    for c in list("initContainers") {
        let init = container_requests(c);
        total.milli_cpu = total.milli_cpu.max(init.milli_cpu);
        total.memory = total.memory.max(init.memory);
    }
    let overhead = at(pod, &["spec", "overhead"]);
    total.milli_cpu += millicores(overhead.and_then(|o| o.get("cpu")));
    total.memory += units(overhead.and_then(|o| o.get("memory")));
    total.pods = 1;
    total
}

/// A node's `status.allocatable`.
pub fn allocatable(node: &Value) -> Resources {
    let a = at(node, &["status", "allocatable"]);
    Resources {
        milli_cpu: millicores(a.and_then(|a| a.get("cpu"))),
        memory: units(a.and_then(|a| a.get("memory"))),
        pods: units(a.and_then(|a| a.get("pods"))),
    }
}

/// One node as the scheduler's cache holds it.
#[derive(Debug, Clone, Copy)]
pub struct NodeFit<'a> {
    pub name: &'a str,
    pub node: &'a Value,
    pub allocatable: Resources,
    /// The requests of the pods bound to it.
    pub requested: Resources,
    /// Its pods with the same controller as the pod being scheduled.
    pub same_owner: usize,
}

/// Where the pod goes, or why it goes nowhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    Node(String),
    /// The `FailedScheduling` message (also the `PodScheduled` condition's).
    Unschedulable(String),
}

/// A node's answer to the filters.
enum Verdict {
    Fits,
    /// Preemption could help (not enough room).
    Unschedulable(Vec<String>),
    /// Preemption cannot help (taints, selectors, a cordon, more than the node has).
    Unresolvable(Vec<String>),
}

/// Whether `toleration` tolerates a taint of `key`, `value` and `effect`.
pub fn tolerates(toleration: &Value, key: &str, value: &str, effect: &str) -> bool {
    let t_effect = str_at(toleration, &["effect"]).unwrap_or("");
    if !t_effect.is_empty() && t_effect != effect {
        return false;
    }
    let t_key = str_at(toleration, &["key"]).unwrap_or("");
    if !t_key.is_empty() && t_key != key {
        return false;
    }
    match str_at(toleration, &["operator"]).unwrap_or("Equal") {
        "Exists" => true,
        "Equal" | "" => str_at(toleration, &["value"]).unwrap_or("") == value,
        _ => false,
    }
}

fn tolerations(pod: &Value) -> &[Value] {
    at(pod, &["spec", "tolerations"])
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The first taint of `node` with one of `effects` that the pod does not tolerate.
pub fn untolerated_taint<'a>(pod: &Value, node: &'a Value, effects: &[&str]) -> Option<&'a Value> {
    at(node, &["spec", "taints"])?
        .as_array()?
        .iter()
        .filter(|t| effects.contains(&str_at(t, &["effect"]).unwrap_or("")))
        .find(|t| {
            let key = str_at(t, &["key"]).unwrap_or("");
            let value = str_at(t, &["value"]).unwrap_or("");
            let effect = str_at(t, &["effect"]).unwrap_or("");
            !tolerations(pod)
                .iter()
                .any(|tol| tolerates(tol, key, value, effect))
        })
}

fn label<'a>(node: &'a Value, key: &str) -> Option<&'a str> {
    at(node, &["metadata", "labels", key]).and_then(Value::as_str)
}

fn strings(values: Option<&Value>) -> Vec<&str> {
    values
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// One `matchExpressions` or `matchFields` requirement against `actual`.
fn requirement_matches(requirement: &Value, actual: Option<&str>) -> bool {
    let values = strings(requirement.get("values"));
    let number = |s: &str| s.parse::<i64>().ok();
    match str_at(requirement, &["operator"]).unwrap_or("") {
        "In" => actual.is_some_and(|a| values.contains(&a)),
        "NotIn" => actual.is_none_or(|a| !values.contains(&a)),
        "Exists" => actual.is_some(),
        "DoesNotExist" => actual.is_none(),
        "Gt" => {
            matches!((actual.and_then(number), values.first().and_then(|v| number(v))), (Some(a), Some(v)) if a > v)
        }
        "Lt" => {
            matches!((actual.and_then(number), values.first().and_then(|v| number(v))), (Some(a), Some(v)) if a < v)
        }
        _ => false,
    }
}

/// The terms of a pod's required node affinity.
pub fn required_node_terms(pod: &Value) -> Option<&Vec<Value>> {
    at(
        pod,
        &[
            "spec",
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
        ],
    )
    .and_then(Value::as_array)
}

/// `nodeSelector` and the required node affinity (terms ORed, requirements ANDed; an empty
/// term matches no node).
pub fn matches_node_affinity(pod: &Value, node: &Value) -> bool {
    let name = str_at(node, &["metadata", "name"]).unwrap_or("");
    let selector_ok = at(pod, &["spec", "nodeSelector"])
        .and_then(Value::as_object)
        .is_none_or(|s| s.iter().all(|(k, v)| label(node, k) == v.as_str()));
    if !selector_ok {
        return false;
    }
    let Some(terms) = required_node_terms(pod) else {
        return true;
    };
    terms.iter().any(|term| {
        let expressions = term
            .get("matchExpressions")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let fields = term
            .get("matchFields")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if expressions.is_empty() && fields.is_empty() {
            return false;
        }
        expressions.iter().all(|r| {
            let key = str_at(r, &["key"]).unwrap_or("");
            requirement_matches(r, label(node, key))
        }) && fields.iter().all(|r| {
            str_at(r, &["key"]) == Some("metadata.name") && requirement_matches(r, Some(name))
        })
    })
}

fn filter(pod: &Value, requests: Resources, fit: &NodeFit) -> Verdict {
    let node = fit.node;
    let cordoned = at(node, &["spec", "unschedulable"]).and_then(Value::as_bool) == Some(true);
    if cordoned
        && !tolerations(pod)
            .iter()
            .any(|t| tolerates(t, UNSCHEDULABLE_TAINT, "", "NoSchedule"))
    {
        return Verdict::Unresolvable(vec!["node(s) were unschedulable".into()]);
    }
    if let Some(taint) = untolerated_taint(pod, node, &["NoSchedule", "NoExecute"]) {
        return Verdict::Unresolvable(vec![format!(
            "node(s) had untolerated taint {{{}: {}}}",
            str_at(taint, &["key"]).unwrap_or(""),
            str_at(taint, &["value"]).unwrap_or("")
        )]);
    }
    if !matches_node_affinity(pod, node) {
        return Verdict::Unresolvable(vec![
            "node(s) didn't match Pod's node affinity/selector".into(),
        ]);
    }
    let free = |allocatable: i64, requested: i64| allocatable - requested;
    let mut reasons = Vec::new();
    // More than the node has at all: no preemption makes room.
    let mut beyond_node = false;
    if fit.requested.pods + 1 > fit.allocatable.pods {
        reasons.push("Too many pods".to_string());
        beyond_node |= fit.allocatable.pods < 1;
    }
    if requests.milli_cpu > 0
        && requests.milli_cpu > free(fit.allocatable.milli_cpu, fit.requested.milli_cpu)
    {
        reasons.push("Insufficient cpu".to_string());
        beyond_node |= requests.milli_cpu > fit.allocatable.milli_cpu;
    }
    if requests.memory > 0 && requests.memory > free(fit.allocatable.memory, fit.requested.memory) {
        reasons.push("Insufficient memory".to_string());
        beyond_node |= requests.memory > fit.allocatable.memory;
    }
    match (reasons.is_empty(), beyond_node) {
        (true, _) => Verdict::Fits,
        (false, true) => Verdict::Unresolvable(reasons),
        (false, false) => Verdict::Unschedulable(reasons),
    }
}

/// Percent of a resource left free on the node once the pod is there (LeastAllocated).
fn free_percent(allocatable: i64, requested: i64) -> i64 {
    if allocatable <= 0 {
        return 0;
    }
    ((allocatable - requested).max(0) * 100) / allocatable
}

/// kube-scheduler's message for a pod that fits no node: the reasons counted over the nodes,
/// sorted as strings, then what preemption found.
fn histogram(reasons: &[String]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in reasons {
        *counts.entry(r.as_str()).or_default() += 1;
    }
    let mut lines: Vec<String> = counts.iter().map(|(r, n)| format!("{n} {r}")).collect();
    lines.sort();
    lines.join(", ")
}

/// Where the default scheduler puts `pod` (whose requests are `requests`) among `nodes`.
pub fn schedule(pod: &Value, requests: Resources, nodes: &[NodeFit]) -> Placement {
    if nodes.is_empty() {
        return Placement::Unschedulable("no nodes available to schedule pods".into());
    }
    let mut best: Option<(&NodeFit, (usize, i64))> = None;
    let mut reasons = Vec::new();
    let mut preemption = Vec::new();
    for fit in nodes {
        match filter(pod, requests, fit) {
            Verdict::Fits => {
                let score = (
                    fit.same_owner,
                    -(free_percent(
                        fit.allocatable.milli_cpu,
                        fit.requested.milli_cpu + requests.milli_cpu,
                    ) + free_percent(
                        fit.allocatable.memory,
                        fit.requested.memory + requests.memory,
                    )),
                );
                // Nodes come sorted by name: the first of equal scores wins.
                if best.as_ref().is_none_or(|(_, s)| score < *s) {
                    best = Some((fit, score));
                }
            }
            Verdict::Unschedulable(r) => {
                reasons.extend(r);
                preemption.push("No preemption victims found for incoming pod".to_string());
            }
            Verdict::Unresolvable(r) => {
                reasons.extend(r);
                preemption.push("Preemption is not helpful for scheduling".to_string());
            }
        }
    }
    if let Some((fit, _)) = best {
        return Placement::Node(fit.name.to_string());
    }
    let total = nodes.len();
    let preempt = if str_at(pod, &["spec", "preemptionPolicy"]) == Some("Never") {
        "preemption: not eligible due to preemptionPolicy=Never.".to_string()
    } else {
        format!(
            "preemption: 0/{total} nodes are available: {}.",
            histogram(&preemption)
        )
    };
    Placement::Unschedulable(format!(
        "0/{total} nodes are available: {}. {preempt}.",
        histogram(&reasons)
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str) -> Value {
        json!({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "disk": "ssd"}},
               "spec": {},
               "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    }

    fn pod(cpu: &str, memory: &str) -> Value {
        json!({"metadata": {"name": "web-1", "namespace": "shop"},
               "spec": {"containers": [{"name": "web", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}})
    }

    fn fits<'a>(nodes: &'a [Value], used: &[Resources], owners: &[usize]) -> Vec<NodeFit<'a>> {
        nodes
            .iter()
            .enumerate()
            .map(|(i, n)| NodeFit {
                name: n["metadata"]["name"].as_str().unwrap(),
                node: n,
                allocatable: allocatable(n),
                requested: used.get(i).copied().unwrap_or_default(),
                same_owner: owners.get(i).copied().unwrap_or(0),
            })
            .collect()
    }

    const GI: i64 = 1 << 30;

    #[test]
    fn requests_sum_the_containers_and_count_init_containers_as_a_floor() {
        let p = json!({"spec": {
            "initContainers": [{"resources": {"requests": {"memory": "1Gi"}}}],
            "containers": [{"resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}},
                           {"resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}}]}});
        assert_eq!(
            pod_requests(&p),
            Resources {
                milli_cpu: 350,
                memory: GI,
                pods: 1
            }
        );
        assert_eq!(
            allocatable(&node("a")),
            Resources {
                milli_cpu: 4000,
                memory: 8 * GI,
                pods: 110
            }
        );
    }

    #[test]
    fn the_least_requested_node_without_the_owners_pods_wins() {
        let nodes = [
            node("demo-node-1"),
            node("demo-node-2"),
            node("demo-node-3"),
        ];
        let p = pod("100m", "1Gi");
        let used = [
            Resources {
                milli_cpu: 1000,
                memory: 2 * GI,
                pods: 3,
            },
            Resources {
                milli_cpu: 1000,
                memory: GI,
                pods: 3,
            },
            Resources::default(),
        ];
        let r = pod_requests(&p);
        assert_eq!(
            schedule(&p, r, &fits(&nodes, &used, &[0, 0, 0])),
            Placement::Node("demo-node-3".into())
        );
        assert_eq!(
            schedule(&p, r, &fits(&nodes, &used, &[0, 0, 1])),
            Placement::Node("demo-node-2".into()),
            "spread over the owner's pods first"
        );
        assert_eq!(
            schedule(&p, r, &fits(&nodes, &[used[2]; 3], &[0, 0, 0])),
            Placement::Node("demo-node-1".into()),
            "ties go by name"
        );
    }

    #[test]
    fn a_pod_that_fits_nowhere_gets_kube_schedulers_message() {
        let mut nodes = vec![
            node("demo-node-1"),
            node("demo-node-2"),
            node("demo-node-3"),
        ];
        nodes[2]["spec"]["unschedulable"] = json!(true);
        let full = Resources {
            milli_cpu: 1000,
            memory: 8 * GI - GI / 2,
            pods: 20,
        };
        let p = pod("100m", "1Gi");
        assert_eq!(
            schedule(&p, pod_requests(&p), &fits(&nodes, &[full; 3], &[])),
            Placement::Unschedulable(
                "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient memory. \
                 preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, \
                 2 No preemption victims found for incoming pod.."
                    .into()
            )
        );
        let big = pod("8", "1Gi");
        let message = match schedule(
            &big,
            pod_requests(&big),
            &fits(&nodes[..2], &[full; 2], &[]),
        ) {
            Placement::Unschedulable(m) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            message,
            "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.."
        );
        assert_eq!(
            schedule(&p, pod_requests(&p), &[]),
            Placement::Unschedulable("no nodes available to schedule pods".into())
        );
    }

    #[test]
    fn taints_tolerations_and_selectors_filter_nodes() {
        let mut nodes = vec![node("demo-node-1"), node("demo-node-2")];
        nodes[0]["spec"]["taints"] =
            json!([{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]);
        nodes[1]["metadata"]["labels"]["disk"] = json!("hdd");
        let mut p = pod("100m", "128Mi");
        p["spec"]["nodeSelector"] = json!({"disk": "ssd"});
        assert_eq!(
            schedule(&p, pod_requests(&p), &fits(&nodes, &[], &[])),
            Placement::Unschedulable("0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {dedicated: db}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..".into())
        );
        p["spec"]["tolerations"] = json!([{"key": "dedicated", "operator": "Exists"}]);
        assert_eq!(
            schedule(&p, pod_requests(&p), &fits(&nodes, &[], &[])),
            Placement::Node("demo-node-1".into())
        );
        // A DaemonSet pod: pinned by matchFields, tolerating a cordon.
        nodes[1]["spec"]["unschedulable"] = json!(true);
        let ds = json!({"spec": {
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["demo-node-2"]}]}]}}},
            "tolerations": [{"key": UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [{"name": "agent"}]}});
        assert_eq!(
            schedule(&ds, pod_requests(&ds), &fits(&nodes, &[], &[])),
            Placement::Node("demo-node-2".into())
        );
        assert!(tolerates(
            &json!({"operator": "Exists"}),
            "any",
            "thing",
            "NoExecute"
        ));
        assert!(!tolerates(
            &json!({"key": "a", "value": "b"}),
            "a",
            "c",
            "NoSchedule"
        ));
    }

    #[test]
    fn a_full_node_has_too_many_pods() {
        let nodes = [node("demo-node-1")];
        let used = [Resources {
            milli_cpu: 0,
            memory: 0,
            pods: 110,
        }];
        let p = pod("100m", "1Mi");
        let Placement::Unschedulable(m) = schedule(&p, pod_requests(&p), &fits(&nodes, &used, &[]))
        else {
            panic!()
        };
        assert!(
            m.starts_with("0/1 nodes are available: 1 Too many pods."),
            "{m}"
        );
    }
}
