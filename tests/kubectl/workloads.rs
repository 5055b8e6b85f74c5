//! The real kubectl against the demo cluster's StatefulSets and DaemonSets: apply, rollout
//! status, set image, rollout history and undo, as an operator types them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::Cluster;
use serde_json::Value;

const STATEFUL_SET: &str = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\n  namespace: default\nspec:\n  replicas: 3\n  serviceName: db\n  selector:\n    matchLabels: {app: db}\n  template:\n    metadata:\n      labels: {app: db}\n    spec:\n      containers:\n      - name: db\n        image: registry.example/db:1.0\n";

/// `kubectl rollout status` to the end; its last line.
fn rollout_status(c: &Cluster, what: &str) -> String {
    let out = c.ok(&["rollout", "status", what, "--timeout=60s"]);
    out.lines().last().unwrap_or_default().to_string()
}

fn revisions_of_pods(c: &Cluster, selector: &str) -> Vec<(String, String)> {
    let list: Value =
        serde_json::from_str(&c.ok(&["get", "pods", "-l", selector, "-o", "json"])).unwrap();
    let mut pods: Vec<(String, String)> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["metadata"]["name"].as_str().unwrap().to_string(),
                p["metadata"]["labels"]["controller-revision-hash"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    pods.sort();
    pods
}

fn history(c: &Cluster, what: &str) -> Vec<String> {
    c.ok(&["rollout", "history", what])
        .lines()
        .skip_while(|l| !l.starts_with("REVISION"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn a_stateful_set_rolls_out_updates_and_rolls_back_under_kubectl() {
    let c = Cluster::start();
    c.apply("db.yaml", STATEFUL_SET);
    assert_eq!(
        rollout_status(&c, "sts/db"),
        "partitioned roll out complete: 3 new pods have been updated..."
    );
    // The template of the captured 1.36 StatefulSet: its revision is named as there.
    let first = "db-b7d7b979b";
    assert_eq!(
        revisions_of_pods(&c, "app=db"),
        [
            ("db-0".to_string(), first.to_string()),
            ("db-1".to_string(), first.to_string()),
            ("db-2".to_string(), first.to_string())
        ]
    );
    let table = c.ok(&["get", "sts", "db"]);
    assert!(
        table.lines().nth(1).unwrap().starts_with("db     3/3"),
        "{table}"
    );
    c.ok(&["set", "image", "sts/db", "db=registry.example/db:1.1"]);
    assert_eq!(
        rollout_status(&c, "sts/db"),
        "partitioned roll out complete: 3 new pods have been updated..."
    );
    let sts: Value = serde_json::from_str(&c.ok(&["get", "sts/db", "-o", "json"])).unwrap();
    let second = sts["status"]["updateRevision"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(second, first);
    assert_eq!(sts["status"]["currentRevision"], second.as_str());
    assert!(
        revisions_of_pods(&c, "app=db")
            .iter()
            .all(|(_, r)| *r == second)
    );
    assert_eq!(history(&c, "sts/db"), ["1", "2"]);

    assert_eq!(
        c.ok(&["rollout", "undo", "sts/db"]).trim(),
        "statefulset.apps/db rolled back"
    );
    rollout_status(&c, "sts/db");
    assert_eq!(
        history(&c, "sts/db"),
        ["2", "3"],
        "revision 1 came back as 3"
    );
    assert!(
        revisions_of_pods(&c, "app=db")
            .iter()
            .all(|(_, r)| r == first)
    );
    let revisions = c.ok(&["get", "controllerrevisions"]);
    assert!(
        revisions
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()[..3]
                == [first, "statefulset.apps/db", "3"]),
        "{revisions}"
    );

    // A partitioned update stops at the partition.
    c.ok(&[
        "patch",
        "sts/db",
        "-p",
        r#"{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}}}}"#,
    ]);
    c.ok(&["set", "image", "sts/db", "db=registry.example/db:2.0"]);
    assert_eq!(
        rollout_status(&c, "sts/db"),
        "partitioned roll out complete: 1 new pods have been updated..."
    );
    let on = revisions_of_pods(&c, "app=db");
    assert_eq!(on[0].1, first);
    assert_eq!(on[1].1, first);
    assert_ne!(on[2].1, first);
}

const DAEMON_SET: &str = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: agent\n  namespace: default\nspec:\n  selector:\n    matchLabels: {app: agent}\n  template:\n    metadata:\n      labels: {app: agent}\n    spec:\n      containers:\n      - name: agent\n        image: registry.example/agent:1.0\n";

fn nodes_of_pods(c: &Cluster, selector: &str) -> Vec<String> {
    let list: Value =
        serde_json::from_str(&c.ok(&["get", "pods", "-l", selector, "-o", "json"])).unwrap();
    let mut nodes: Vec<String> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["spec"]["nodeName"].as_str().unwrap_or("").to_string())
        .collect();
    nodes.sort();
    nodes
}

#[test]
fn a_daemon_set_runs_on_every_node_and_rolls_out_under_kubectl() {
    let c = Cluster::start();
    c.apply("agent.yaml", DAEMON_SET);
    assert_eq!(
        rollout_status(&c, "ds/agent"),
        "daemon set \"agent\" successfully rolled out"
    );
    assert_eq!(
        nodes_of_pods(&c, "app=agent"),
        ["demo-node-1", "demo-node-2", "demo-node-3"]
    );
    let table = c.ok(&["get", "ds", "agent"]);
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        row[..7],
        ["agent", "3", "3", "3", "3", "3", "<none>"],
        "{table}"
    );
    let first = revisions_of_pods(&c, "app=agent")[0].1.clone();
    c.ok(&[
        "set",
        "image",
        "ds/agent",
        "agent=registry.example/agent:1.1",
    ]);
    assert_eq!(
        rollout_status(&c, "ds/agent"),
        "daemon set \"agent\" successfully rolled out"
    );
    let updated = revisions_of_pods(&c, "app=agent");
    assert!(updated.iter().all(|(_, r)| *r != first), "{updated:?}");
    assert_eq!(history(&c, "ds/agent"), ["1", "2"]);
    assert_eq!(
        c.ok(&["rollout", "undo", "ds/agent"]).trim(),
        "daemonset.apps/agent rolled back"
    );
    rollout_status(&c, "ds/agent");
    assert_eq!(history(&c, "ds/agent"), ["2", "3"]);
    assert!(
        revisions_of_pods(&c, "app=agent")
            .iter()
            .all(|(_, r)| *r == first)
    );
    let ds: Value = serde_json::from_str(&c.ok(&["get", "ds/agent", "-o", "json"])).unwrap();
    assert_eq!(ds["status"]["desiredNumberScheduled"], 3);
    assert_eq!(ds["status"]["updatedNumberScheduled"], 3);
    assert_eq!(ds["status"]["numberMisscheduled"], 0);
    assert_eq!(
        ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"],
        "3"
    );
}
