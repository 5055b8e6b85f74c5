//! The real kubectl against the demo cluster's nodes: listing them, the scheduler's verdict on a
//! pod no node can hold, cordon, drain (evictions, PodDisruptionBudgets, DaemonSet pods left),
//! and a node deleted under its pods.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::Duration;

use common::{Cluster, eventually};
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
    let huge = c.file(
        "huge.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: huge\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: huge}\n  template:\n    metadata:\n      labels: {app: huge}\n    spec:\n      containers:\n      - name: huge\n        image: registry.example/huge:1.0\n        resources:\n          requests: {cpu: 100m, memory: 20Gi}\n",
    );
    c.ok(&["apply", "-f", huge.to_str().unwrap()]);
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
