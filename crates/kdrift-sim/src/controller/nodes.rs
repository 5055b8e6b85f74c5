//! The demo cluster's nodes, as pure functions: the Node objects three kubelets register (labels,
//! capacity and allocatable, conditions, addresses, nodeInfo as a 1.36 kubelet reports them;
//! testdata/kubernetes-1.36/objects/nodes.json), the cordon taint the node lifecycle controller
//! keeps in step with `spec.unschedulable`, and the addresses pods get on a node.
use serde_json::{Value, json};

use super::pods::hex_id;
use super::scheduler::UNSCHEDULABLE_TAINT;
use crate::object::{at, str_at};

/// The demo's nodes.
pub const DEMO_NODES: [&str; 3] = ["demo-node-1", "demo-node-2", "demo-node-3"];

/// What each demo node has: 4 cpus, about 4.5 GiB of memory (100 MiB held back for the
/// kubelet's hard eviction threshold), 110 pods. Small nodes, so that the demo's pods fill
/// them fairly and losing one leaves too little room (the incident's drain).
const CAPACITY_MEMORY_KI: i64 = 4_706_304;
const EVICTION_RESERVE_KI: i64 = 102_400;

/// The Node a kubelet registers for the `index`th demo node (0-based): metadata and spec, as
/// created (the status follows on `/status`, see [`node_status`]).
pub fn registered_node(name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {
                "volumes.kubernetes.io/controller-managed-attach-detach": "true"
            },
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux"
            }
        },
        "spec": {}
    })
}

/// The pod range and the TTL annotation the controller manager gives a new node
/// (`index` 0-based).
pub fn controller_manager_patch(index: usize) -> Value {
    let cidr = format!("10.{}.{}.0/24", 244 + index / 256, index % 256);
    json!({
        "metadata": {"annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
        "spec": {"podCIDR": cidr, "podCIDRs": [cidr]}
    })
}

/// The status a kubelet reports for node `name` (`index` 0-based) at time `now`.
pub fn node_status(name: &str, index: usize, now: &str) -> Value {
    let memory = format!("{CAPACITY_MEMORY_KI}Ki");
    let allocatable_memory = format!("{}Ki", CAPACITY_MEMORY_KI - EVICTION_RESERVE_KI);
    let condition = |kind: &str, status: &str, reason: &str, message: &str| {
        json!({"lastHeartbeatTime": now, "lastTransitionTime": now, "message": message,
               "reason": reason, "status": status, "type": kind})
    };
    json!({"status": {
        "addresses": [
            {"address": format!("172.18.{}.{}", index / 250, index % 250 + 2), "type": "InternalIP"},
            {"address": name, "type": "Hostname"}
        ],
        "allocatable": {"cpu": "4", "ephemeral-storage": "93478772582", "hugepages-1Gi": "0",
                        "hugepages-2Mi": "0", "memory": allocatable_memory, "pods": "110"},
        "capacity": {"cpu": "4", "ephemeral-storage": "101430960Ki", "hugepages-1Gi": "0",
                     "hugepages-2Mi": "0", "memory": memory, "pods": "110"},
        "conditions": [
            condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "architecture": "amd64",
            "bootID": hex_id(&format!("{name}/boot")),
            "containerRuntimeVersion": "containerd://2.1.4",
            "kernelVersion": "6.12.48-1-cloud-amd64",
            "kubeProxyVersion": "",
            "kubeletVersion": "v1.36.2",
            "machineID": hex_id(&format!("{name}/machine")),
            "operatingSystem": "linux",
            "osImage": "Debian GNU/Linux 12 (bookworm)",
            "systemUUID": hex_id(&format!("{name}/uuid"))
        }
    }})
}

fn taints(node: &Value) -> Vec<Value> {
    at(node, &["spec", "taints"])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The node lifecycle controller's view of a cordon: the taints `node` should carry, when they
/// differ from its own (`node.kubernetes.io/unschedulable:NoSchedule` while
/// `spec.unschedulable` is true, not otherwise).
pub fn cordon_taints(node: &Value, now: &str) -> Option<Vec<Value>> {
    let cordoned = at(node, &["spec", "unschedulable"]).and_then(Value::as_bool) == Some(true);
    let mut list = taints(node);
    let has = list
        .iter()
        .any(|t| str_at(t, &["key"]) == Some(UNSCHEDULABLE_TAINT));
    match (cordoned, has) {
        (true, false) => {
            list.push(
                json!({"effect": "NoSchedule", "key": UNSCHEDULABLE_TAINT, "timeAdded": now}),
            );
            Some(list)
        }
        (false, true) => {
            list.retain(|t| str_at(t, &["key"]) != Some(UNSCHEDULABLE_TAINT));
            Some(list)
        }
        _ => None,
    }
}

/// The node's `InternalIP` (empty when it has none).
pub fn internal_ip(node: &Value) -> String {
    at(node, &["status", "addresses"])
        .and_then(Value::as_array)
        .and_then(|a| a.iter().find(|a| a["type"] == "InternalIP"))
        .and_then(|a| a["address"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The node's pod range (`10.244.1.0/24`), empty when it has none.
pub fn pod_cidr(node: &Value) -> String {
    str_at(node, &["spec", "podCIDR"])
        .unwrap_or_default()
        .to_string()
}

/// Whether the node reports `Ready=True`.
pub fn is_ready(node: &Value) -> bool {
    at(node, &["status", "conditions"])
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::controller::scheduler::allocatable;

    #[test]
    fn a_demo_node_looks_like_a_registered_kubelets() {
        let mut node = crate::patch::merge_patch(
            &registered_node("demo-node-2"),
            &controller_manager_patch(1),
        )
        .unwrap();
        node["status"] = node_status("demo-node-2", 1, "2026-11-24T03:00:00Z")["status"].clone();
        assert_eq!(internal_ip(&node), "172.18.0.3");
        assert_eq!(pod_cidr(&node), "10.244.1.0/24");
        assert!(is_ready(&node));
        let a = allocatable(&node);
        assert_eq!((a.milli_cpu, a.pods), (4000, 110));
        assert_eq!(a.memory, (4_706_304 - 102_400) * 1024);
        assert_eq!(
            node["metadata"]["labels"]["kubernetes.io/hostname"],
            "demo-node-2"
        );
        let reference: Value = serde_json::from_str(include_str!(
            "../../../../testdata/kubernetes-1.36/objects/nodes.json"
        ))
        .unwrap();
        let real = &reference["items"][0];
        let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
        assert_eq!(keys(&node["status"]), keys(&real["status"]));
        assert_eq!(
            keys(&node["status"]["nodeInfo"]),
            keys(&real["status"]["nodeInfo"])
        );
        assert_eq!(
            keys(&node["metadata"]["labels"]),
            keys(&real["metadata"]["labels"])
        );
    }

    #[test]
    fn a_cordon_adds_the_unschedulable_taint_and_an_uncordon_removes_it() {
        let mut node = registered_node("demo-node-1");
        assert_eq!(cordon_taints(&node, "t"), None);
        node["spec"]["unschedulable"] = json!(true);
        let taints = cordon_taints(&node, "2026-11-24T03:00:00Z").unwrap();
        assert_eq!(
            taints,
            [
                json!({"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "timeAdded": "2026-11-24T03:00:00Z"})
            ]
        );
        node["spec"]["taints"] = json!(taints);
        assert_eq!(cordon_taints(&node, "t"), None);
        node["spec"]["unschedulable"] = json!(false);
        assert_eq!(cordon_taints(&node, "t"), Some(vec![]));
    }
}
