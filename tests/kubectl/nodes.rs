//! The real kubectl against the demo cluster's nodes: listing them, the scheduler's verdict on a
//! pod no node can hold, cordon, drain (evictions, PodDisruptionBudgets, DaemonSet pods left),
//! and a node deleted under its pods.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::time::Duration;

use common::{Cluster, eventually, kubectl_bin};
use serde_json::Value;

const PATIENCE: Duration = Duration::from_secs(60);

fn json(c: &Cluster, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&c.ok(&all)).unwrap()
}

fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().cloned().unwrap_or_default()
}

#[test]
fn nodes_list_and_a_pod_no_node_can_hold_waits_with_the_schedulers_reason() {
    let c = Cluster::start();
    let table = c.ok(&["get", "nodes"]);
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 3, "{table}");
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[0], format!("demo-node-{}", i + 1));
        assert_eq!(row[1], "Ready");
        assert_eq!(row[4], "v1.36.2");
    }
    c.apply("huge.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: huge\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: huge}\n  template:\n    metadata:\n      labels: {app: huge}\n    spec:\n      containers:\n      - name: huge\n        image: registry.example/huge:1.0\n        resources:\n          requests: {cpu: 100m, memory: 20Gi}\n");
    let expected = "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..";
    let mut pod = Value::Null;
    assert!(
        eventually(PATIENCE, || {
            pod = items(&json(&c, &["get", "pods", "-l", "app=huge"]))
                .pop()
                .unwrap_or(Value::Null);
            pod["status"]["conditions"][0]["message"] == expected
        }),
        "no Unschedulable condition: {pod}"
    );
    assert_eq!(pod["status"]["phase"], "Pending");
    assert_eq!(pod["status"]["conditions"][0]["reason"], "Unschedulable");
    assert!(pod["spec"].get("nodeName").is_none());
    let table = c.ok(&["get", "pods", "-l", "app=huge"]);
    assert!(table.lines().nth(1).unwrap().contains("Pending"), "{table}");
    let name = pod["metadata"]["name"].as_str().unwrap().to_string();
    let events = json(
        &c,
        &[
            "get",
            "events",
            "--field-selector",
            &format!("involvedObject.name={name},reason=FailedScheduling"),
        ],
    );
    let event = &items(&events)[0];
    assert_eq!(event["message"], expected);
    assert_eq!(event["source"]["component"], "default-scheduler");
    let described = c.ok(&["describe", "pod", &name]);
    assert!(
        described.contains("FailedScheduling") && described.contains("3 Insufficient memory"),
        "{described}"
    );
}

/// The nodes the pods matching `selector` (all namespaces) run on.
fn nodes_of(c: &Cluster, selector: &str) -> Vec<String> {
    items(&json(c, &["get", "pods", "-A", "-l", selector]))
        .iter()
        .map(|p| p["spec"]["nodeName"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Every demo Deployment has all its replicas available again.
fn all_available(c: &Cluster) -> bool {
    items(&json(c, &["get", "deployments", "-A"]))
        .iter()
        .all(|d| d["status"]["availableReplicas"] == d["spec"]["replicas"])
}

fn taints(c: &Cluster, node: &str) -> Value {
    json(c, &["get", "node", node])["spec"]["taints"].clone()
}

#[test]
fn cordon_keeps_new_pods_off_a_node_and_uncordon_lets_them_back() {
    let c = Cluster::start();
    assert_eq!(
        c.ok(&["cordon", "demo-node-1"]).trim(),
        "node/demo-node-1 cordoned"
    );
    let table = c.ok(&["get", "node", "demo-node-1"]);
    assert!(table.contains("Ready,SchedulingDisabled"), "{table}");
    assert!(
        eventually(PATIENCE, || taints(&c, "demo-node-1")[0]["key"]
            == "node.kubernetes.io/unschedulable"),
        "no cordon taint"
    );
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=6"]);
    assert!(
        eventually(PATIENCE, || {
            let on = nodes_of(&c, "app.kubernetes.io/name=cart");
            on.len() == 6 && on.iter().all(|n| !n.is_empty())
        }),
        "cart did not scale"
    );
    let before: Vec<String> = nodes_of(&c, "app.kubernetes.io/name=cart");
    let on_cordoned = before.iter().filter(|n| *n == "demo-node-1").count();
    assert!(
        on_cordoned <= 1,
        "new pods went to the cordoned node: {before:?}"
    );
    assert_eq!(
        c.ok(&["uncordon", "demo-node-1"]).trim(),
        "node/demo-node-1 uncordoned"
    );
    assert!(
        eventually(PATIENCE, || taints(&c, "demo-node-1").is_null()),
        "the cordon taint stayed"
    );
    let table = c.ok(&["get", "node", "demo-node-1"]);
    assert!(!table.contains("SchedulingDisabled"), "{table}");
}

#[test]
fn drain_evicts_all_but_daemon_set_pods_and_their_owners_make_them_again_elsewhere() {
    let c = Cluster::start();
    // The demo's node-agent DaemonSet runs on every node.
    c.ok(&[
        "rollout",
        "status",
        "ds/node-agent",
        "-n",
        "platform",
        "--timeout=60s",
    ]);
    assert!(
        eventually(PATIENCE, || all_available(&c)),
        "the demo did not settle"
    );
    let out = c.kubectl(&[
        "drain",
        "demo-node-2",
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--timeout=60s",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.starts_with("node/demo-node-2 cordoned"), "{stdout}");
    assert!(
        stdout.contains("evicting pod payments/payments-api-"),
        "{stdout}"
    );
    // kubectl 1.20 ended its report with "evicted".
    let last = if kubectl_bin::minor() > 20 {
        "drained"
    } else {
        "evicted"
    };
    assert!(
        stdout
            .trim_end()
            .ends_with(&format!("node/demo-node-2 {last}")),
        "{stdout}"
    );
    assert!(
        stderr.contains("ignoring DaemonSet-managed Pods: platform/node-agent-"),
        "{stderr}"
    );
    let left: Vec<Value> = items(&json(
        &c,
        &[
            "get",
            "pods",
            "-A",
            "--field-selector",
            "spec.nodeName=demo-node-2",
        ],
    ));
    let names: Vec<&str> = left
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].starts_with("node-agent-"), "{names:?}");
    assert!(
        eventually(PATIENCE, || all_available(&c)),
        "the evicted pods did not come back elsewhere"
    );
}

#[test]
fn drain_waits_for_a_disruption_budget_and_delete_node_moves_the_pods() {
    let c = Cluster::start();
    c.apply("strict.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: strict, namespace: default}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: strict}}\n  template:\n    metadata: {labels: {app: strict}}\n    spec:\n      containers: [{name: s, image: registry.example/s:1}]\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: strict, namespace: default}\nspec:\n  minAvailable: 3\n  selector: {matchLabels: {app: strict}}\n");
    assert!(
        eventually(
            PATIENCE,
            || json(&c, &["get", "pdb", "strict"])["status"]["currentHealthy"] == 3
        ),
        "the budget never saw its pods"
    );
    let row = c.ok(&["get", "pdb", "strict"]);
    let cells: Vec<&str> = row.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(cells[..4], ["strict", "3", "N/A", "0"], "{row}");
    let on: Vec<String> = nodes_of(&c, "app=strict");
    let node = on[0].clone();
    let out = c.kubectl(&[
        "drain",
        &node,
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--timeout=7s",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("Cannot evict pod as it would violate the pod's disruption budget."),
        "{stderr}"
    );
    assert_eq!(nodes_of(&c, "app=strict"), on, "the budget kept the pod");
    c.ok(&["uncordon", &node]);

    // The node is lost: the pod GC deletes what was bound to it, the owners make it again on
    // the nodes left.
    assert_eq!(
        c.ok(&["delete", "node", "demo-node-3"]).trim(),
        "node \"demo-node-3\" deleted"
    );
    assert!(
        eventually(PATIENCE, || {
            let bound = items(&json(
                &c,
                &[
                    "get",
                    "pods",
                    "-A",
                    "--field-selector",
                    "spec.nodeName=demo-node-3",
                ],
            ));
            bound.is_empty() && all_available(&c)
        }),
        "pods stayed on the deleted node or did not come back"
    );
    assert!(
        nodes_of(&c, "app=strict")
            .iter()
            .all(|n| n != "demo-node-3")
    );
    let table = c.ok(&["get", "nodes"]);
    assert_eq!(table.lines().count(), 3, "{table}");
}

#[test]
fn a_pod_for_another_scheduler_waits_until_a_binding_names_its_node() {
    let c = Cluster::start();
    c.apply("manual.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: manual, namespace: default}\nspec:\n  schedulerName: by-hand\n  containers: [{name: web, image: registry.example/web:1.0}]\n");
    std::thread::sleep(Duration::from_millis(500));
    let waiting = json(&c, &["get", "pod", "manual"]);
    assert!(waiting["spec"].get("nodeName").is_none(), "{waiting}");
    assert!(
        waiting["status"].get("conditions").is_none(),
        "not the default scheduler's"
    );
    let binding = c.file(
        "binding.json",
        r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"manual"},"target":{"apiVersion":"v1","kind":"Node","name":"demo-node-3"}}"#,
    );
    let post = [
        "create",
        "--raw",
        "/api/v1/namespaces/default/pods/manual/binding",
        "-f",
        binding.to_str().unwrap(),
    ];
    c.ok(&post);
    assert!(
        eventually(PATIENCE, || {
            let p = json(&c, &["get", "pod", "manual"]);
            p["spec"]["nodeName"] == "demo-node-3" && p["status"]["phase"] == "Running"
        }),
        "the bound pod did not run on its node"
    );
    let again = c.fails(&post);
    assert!(
        again.contains("pod manual is already assigned to node \"demo-node-3\""),
        "{again}"
    );
}
