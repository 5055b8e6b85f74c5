//! The statefulset and daemonset controllers running against the store, with the scheduler and
//! the kubelet.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use serde_json::{Value, json};

use super::node_tests::nodes_only;
use crate::resources::ResourceType;
use crate::store::{Patch, Store, WriteOptions};
use crate::test_support::eventually;

fn stateful_set(replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "shop"},
        "spec": {"replicas": replicas, "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "registry.example/db:1.0",
                    "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}}}]}}}})
}

fn patch(store: &Store, resource: ResourceType, name: &str, patch: Value) {
    store
        .patch(
            resource,
            "shop",
            name,
            &Patch::Strategic(patch),
            &WriteOptions::manager("kubectl-patch"),
        )
        .unwrap();
}

fn pods(store: &Store, app: &str) -> Vec<Value> {
    store
        .list(ResourceType::POD, Some("shop"))
        .into_iter()
        .filter(|p| p["metadata"]["labels"]["app"] == app)
        .collect()
}

fn revisions(store: &Store) -> Vec<Value> {
    store.list(ResourceType::CONTROLLER_REVISION, Some("shop"))
}

/// The names of the set's pods and the revision each is on, once all are running and ready and
/// the status says so.
async fn settled(store: &Store, replicas: usize) -> (Value, Vec<(String, String)>) {
    eventually("the StatefulSet to settle", || {
        let set = store.get(ResourceType::STATEFUL_SET, "shop", "db")?;
        let pods = pods(store, "db");
        let ready = pods.iter().all(|p| {
            p["status"]["phase"] == "Running"
                && p["status"]["containerStatuses"][0]["ready"] == true
        });
        let status = &set["status"];
        let done = ready
            && pods.len() == replicas
            && status["readyReplicas"].as_u64().unwrap_or(0) == replicas as u64
            && status["replicas"] == replicas
            && status["observedGeneration"] == set["metadata"]["generation"];
        done.then(|| {
            let mut on: Vec<(String, String)> = pods
                .iter()
                .map(|p| {
                    (
                        p["metadata"]["name"].as_str().unwrap().to_string(),
                        p["metadata"]["labels"]["controller-revision-hash"]
                            .as_str()
                            .unwrap()
                            .to_string(),
                    )
                })
                .collect();
            on.sort();
            (set.clone(), on)
        })
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateful_set_rolls_out_in_order_updates_to_its_partition_and_scales_down() {
    let (store, controllers) = nodes_only();
    store
        .create(
            ResourceType::STATEFUL_SET,
            stateful_set(3),
            &WriteOptions::manager("kubectl-client-side-apply"),
        )
        .unwrap();
    let (set, on) = settled(&store, 3).await;
    let first = set["status"]["updateRevision"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(first.starts_with("db-"));
    assert_eq!(set["status"]["currentRevision"], first.as_str());
    assert_eq!(set["status"]["currentReplicas"], 3);
    assert_eq!(set["status"]["updatedReplicas"], 3);
    assert_eq!(set["status"]["availableReplicas"], 3);
    assert_eq!(
        on.iter()
            .map(|(n, r)| (n.as_str(), r.as_str()))
            .collect::<Vec<_>>(),
        [
            ("db-0", first.as_str()),
            ("db-1", first.as_str()),
            ("db-2", first.as_str())
        ]
    );
    // One pod at a time: each pod was created after the one before it was ready.
    let by_name = |n: &str| store.get(ResourceType::POD, "shop", n).unwrap();
    let events = store.list(ResourceType::EVENT, Some("shop"));
    let creates: Vec<&str> = events
        .iter()
        .filter(|e| {
            e["reason"] == "SuccessfulCreate" && e["involvedObject"]["kind"] == "StatefulSet"
        })
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        creates,
        [
            "create Pod db-0 in StatefulSet db successful",
            "create Pod db-1 in StatefulSet db successful",
            "create Pod db-2 in StatefulSet db successful"
        ]
    );
    assert_eq!(
        by_name("db-1")["metadata"]["labels"]["apps.kubernetes.io/pod-index"],
        "1"
    );
    assert_eq!(revisions(&store).len(), 1);
    assert_eq!(revisions(&store)[0]["revision"], 1);

    // A partitioned update: only db-2 moves to the new revision.
    patch(
        &store,
        ResourceType::STATEFUL_SET,
        "db",
        json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 2}},
            "template": {"spec": {"containers": [{"name": "db", "image": "registry.example/db:1.1"}]}}}}),
    );
    let set = eventually("db-2 on the new revision", || {
        let set = store.get(ResourceType::STATEFUL_SET, "shop", "db")?;
        (set["status"]["updatedReplicas"] == 1 && set["status"]["readyReplicas"] == 3)
            .then_some(set)
    })
    .await;
    let on: Vec<String> = ["db-0", "db-1", "db-2"]
        .iter()
        .map(|n| {
            by_name(n)["metadata"]["labels"]["controller-revision-hash"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let second = set["status"]["updateRevision"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(second, first);
    assert_eq!(on, [first.clone(), first.clone(), second.clone()]);
    assert_eq!(set["status"]["currentRevision"], first.as_str());
    assert_eq!(
        by_name("db-2")["spec"]["containers"][0]["image"],
        "registry.example/db:1.1"
    );
    assert_eq!(revisions(&store).len(), 2);

    // The partition lifted: db-1 then db-0; the new revision becomes current.
    patch(
        &store,
        ResourceType::STATEFUL_SET,
        "db",
        json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}}),
    );
    let set = eventually("every pod on the new revision", || {
        let set = store.get(ResourceType::STATEFUL_SET, "shop", "db")?;
        (set["status"]["currentRevision"] == second.as_str() && set["status"]["readyReplicas"] == 3)
            .then_some(set)
    })
    .await;
    let on = pods(&store, "db");
    assert_eq!(set["status"]["updatedReplicas"], 3);
    assert!(
        on.iter()
            .all(|p| p["metadata"]["labels"]["controller-revision-hash"] == second.as_str())
    );

    // Scale down: the highest ordinals go.
    store
        .patch(
            ResourceType::STATEFUL_SET,
            "shop",
            "db",
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
            &WriteOptions {
                manager: "kubectl".into(),
                subresource: Some("scale".into()),
                dry_run: false,
            },
        )
        .unwrap();
    let (_, on) = settled(&store, 1).await;
    assert_eq!(on[0].0, "db-0");

    // Deleted: its pods and revisions are collected.
    store
        .delete(ResourceType::STATEFUL_SET, "shop", "db", false)
        .unwrap();
    eventually("pods and revisions collected", || {
        (pods(&store, "db").is_empty() && revisions(&store).is_empty()).then_some(())
    })
    .await;
    controllers.abort();
}

fn daemon_set() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "shop"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": "registry.example/agent:1.0",
                    "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}}]}}}})
}

/// The DaemonSet's status once its pods are on `nodes` (sorted), all ready and updated.
async fn daemon_settled(store: &Store, nodes: &[&str]) -> Value {
    eventually("the DaemonSet to settle", || {
        let ds = store.get(ResourceType::DAEMON_SET, "shop", "agent")?;
        let pods = pods(store, "agent");
        let mut on: Vec<&str> = pods
            .iter()
            .map(|p| p["spec"]["nodeName"].as_str().unwrap_or(""))
            .collect();
        on.sort_unstable();
        let n = nodes.len();
        let status = &ds["status"];
        (on == nodes
            && pods.iter().all(|p| p["status"]["phase"] == "Running")
            && status["numberReady"] == n
            && status["updatedNumberScheduled"] == n
            && status["desiredNumberScheduled"] == n
            && status["observedGeneration"] == ds["metadata"]["generation"])
            .then_some(ds)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_set_runs_a_pod_per_node_follows_the_nodes_and_rolls_out() {
    let (store, controllers) = nodes_only();
    store
        .create(
            ResourceType::DAEMON_SET,
            daemon_set(),
            &WriteOptions::manager("kubectl-client-side-apply"),
        )
        .unwrap();
    let all = ["demo-node-1", "demo-node-2", "demo-node-3"];
    let ds = daemon_settled(&store, &all).await;
    assert_eq!(ds["status"]["numberAvailable"], 3);
    assert_eq!(ds["status"]["numberMisscheduled"], 0);
    let pod = &pods(&store, "agent")[0];
    assert_eq!(pod["metadata"]["labels"]["pod-template-generation"], "1");
    assert_eq!(revisions(&store).len(), 1);
    assert_eq!(
        pod["metadata"]["labels"]["controller-revision-hash"],
        revisions(&store)[0]["metadata"]["labels"]["controller-revision-hash"]
    );

    // A cordon does not move a DaemonSet pod; a node that goes takes its pod along.
    store
        .patch(
            ResourceType::NODE,
            "",
            "demo-node-2",
            &Patch::Strategic(json!({"spec": {"unschedulable": true}})),
            &WriteOptions::manager("kubectl-cordon"),
        )
        .unwrap();
    store
        .delete(ResourceType::NODE, "", "demo-node-3", false)
        .unwrap();
    let ds = daemon_settled(&store, &all[..2]).await;
    assert!(ds["status"].get("numberUnavailable").is_none());
    crate::scenario::seed::register_node(&store, "demo-node-3", 2).unwrap();
    daemon_settled(&store, &all).await;

    // A new image rolls out node by node.
    patch(
        &store,
        ResourceType::DAEMON_SET,
        "agent",
        json!({"spec": {"template": {"spec": {"containers": [{"name": "agent", "image": "registry.example/agent:1.1"}]}}}}),
    );
    let ds = daemon_settled(&store, &all).await;
    assert_eq!(ds["metadata"]["generation"], 2);
    assert!(pods(&store, "agent").iter().all(|p| {
        p["spec"]["containers"][0]["image"] == "registry.example/agent:1.1"
            && p["metadata"]["labels"]["pod-template-generation"] == "2"
    }));
    assert_eq!(revisions(&store).len(), 2);
    controllers.abort();
}
