//! The scheduler, the node lifecycle controller and the pod GC running against the store.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use serde_json::{Value, json};

use crate::controller::{Timings, spawn};
use crate::resources::ResourceType;
use crate::scenario::seed::register_nodes;
use crate::store::{Patch, Store, WriteOptions};
use crate::test_support::{eventually, scheduled_condition};

/// A cluster with the three demo nodes and one namespace, controllers running.
pub(super) fn nodes_only() -> (Store, tokio::task::JoinHandle<()>) {
    let store = Store::new();
    register_nodes(&store).unwrap();
    store
        .create(
            ResourceType::NAMESPACE,
            json!({"metadata": {"name": "shop"}}),
            &WriteOptions::manager("kubectl-create"),
        )
        .unwrap();
    let controllers = spawn(store.clone(), Timings::fast(), Default::default());
    (store, controllers)
}

fn deployment(name: &str, replicas: i64, memory: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": name, "image": "registry.example/web:1.0",
                    "resources": {"requests": {"cpu": "100m", "memory": memory}}}]}}}})
}

fn pods_of(store: &Store, app: &str) -> Vec<Value> {
    store
        .list(ResourceType::POD, Some("shop"))
        .into_iter()
        .filter(|p| p["metadata"]["labels"]["app"] == app)
        .collect()
}

fn node_of(pod: &Value) -> &str {
    pod["spec"]["nodeName"].as_str().unwrap_or("")
}

fn patch_node(store: &Store, node: &str, patch: Value) {
    store
        .patch(
            ResourceType::NODE,
            "",
            node,
            &Patch::Strategic(patch),
            &WriteOptions::manager("kubectl"),
        )
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_spread_over_the_nodes_and_a_pod_that_fits_nowhere_waits_for_room() {
    let (store, controllers) = nodes_only();
    // 3 GiB each: one per node (a demo node has about 4.4 GiB allocatable).
    store
        .create(
            ResourceType::DEPLOYMENT,
            deployment("big", 4, "3Gi"),
            &WriteOptions::manager("kubectl-create"),
        )
        .unwrap();
    let pending = eventually("three pods running, one pending", || {
        let pods = pods_of(&store, "big");
        let running = pods
            .iter()
            .filter(|p| p["status"]["phase"] == "Running")
            .count();
        let pending: Vec<&Value> = pods
            .iter()
            .filter(|p| scheduled_condition(p)["status"] == "False")
            .collect();
        (pods.len() == 4 && running == 3 && pending.len() == 1).then(|| pending[0].clone())
    })
    .await;
    let mut nodes: Vec<String> = pods_of(&store, "big")
        .iter()
        .map(|p| node_of(p).to_string())
        .filter(|n| !n.is_empty())
        .collect();
    nodes.sort();
    assert_eq!(nodes, ["demo-node-1", "demo-node-2", "demo-node-3"]);
    let condition = scheduled_condition(&pending);
    assert_eq!(condition["reason"], "Unschedulable");
    assert_eq!(
        condition["message"],
        "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.."
    );
    assert_eq!(pending["status"]["phase"], "Pending");
    assert!(pending["status"].get("containerStatuses").is_none());
    let name = pending["metadata"]["name"].as_str().unwrap().to_string();
    let events = store.list(ResourceType::EVENT, Some("shop"));
    let failed = events
        .iter()
        .find(|e| e["reason"] == "FailedScheduling" && e["involvedObject"]["name"] == name.as_str())
        .expect("a FailedScheduling event");
    assert_eq!(failed["type"], "Warning");
    assert_eq!(failed["source"]["component"], "default-scheduler");
    assert_eq!(failed["message"], condition["message"]);
    let scheduled = events.iter().filter(|e| e["reason"] == "Scheduled").count();
    assert_eq!(scheduled, 3);
    // A bound pod's nodeName has no owner in managedFields, as the binding writes it.
    let bound = pods_of(&store, "big")
        .into_iter()
        .find(|p| !node_of(p).is_empty())
        .unwrap();
    let owners = bound["metadata"]["managedFields"].to_string();
    assert!(!owners.contains("nodeName"), "{owners}");

    // A fourth node joins: the pending pod lands there.
    crate::scenario::seed::register_node(&store, "demo-node-4", 3).unwrap();
    let placed = eventually("the pending pod to run on the new node", || {
        let p = store.get(ResourceType::POD, "shop", &name)?;
        (p["status"]["phase"] == "Running").then_some(p)
    })
    .await;
    assert_eq!(node_of(&placed), "demo-node-4");
    assert_eq!(scheduled_condition(&placed)["status"], "True");
    assert_eq!(placed["status"]["hostIP"], "172.18.0.5");
    controllers.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cordon_taints_the_node_and_a_deleted_nodes_pods_move() {
    let (store, controllers) = nodes_only();
    store
        .create(
            ResourceType::DEPLOYMENT,
            deployment("web", 6, "64Mi"),
            &WriteOptions::manager("kubectl-create"),
        )
        .unwrap();
    eventually("six pods running, two per node", || {
        let pods = pods_of(&store, "web");
        let per_node = |n: &str| pods.iter().filter(|p| node_of(p) == n).count();
        (pods.iter().all(|p| p["status"]["phase"] == "Running")
            && pods.len() == 6
            && per_node("demo-node-1") == 2
            && per_node("demo-node-2") == 2)
            .then_some(())
    })
    .await;
    patch_node(
        &store,
        "demo-node-1",
        json!({"spec": {"unschedulable": true}}),
    );
    let tainted = eventually("the cordon taint", || {
        let n = store.get(ResourceType::NODE, "", "demo-node-1")?;
        n["spec"]["taints"].is_array().then_some(n)
    })
    .await;
    assert_eq!(
        tainted["spec"]["taints"][0]["key"],
        "node.kubernetes.io/unschedulable"
    );
    assert_eq!(tainted["spec"]["taints"][0]["effect"], "NoSchedule");
    // The node goes: its pods are collected and made again on the one node left that takes
    // new pods.
    store
        .delete(ResourceType::NODE, "", "demo-node-2", false)
        .unwrap();
    eventually("demo-node-2's pods recreated on demo-node-3", || {
        let pods = pods_of(&store, "web");
        let on = |n: &str| pods.iter().filter(|p| node_of(p) == n).count();
        (pods.len() == 6
            && on("demo-node-2") == 0
            && on("demo-node-1") == 2
            && on("demo-node-3") == 4
            && pods.iter().all(|p| p["status"]["phase"] == "Running"))
        .then_some(())
    })
    .await;
    patch_node(
        &store,
        "demo-node-1",
        json!({"spec": {"unschedulable": null}}),
    );
    eventually("the taint gone with the cordon", || {
        let n = store.get(ResourceType::NODE, "", "demo-node-1")?;
        n["spec"].get("taints").is_none().then_some(())
    })
    .await;
    controllers.abort();
}
