//! The incident's node loss on the seeded demo: after the incident's other steps, the drain
//! leaves prod's inventory at 3 of 5 with two pods Pending for memory, and the uncordon heals it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use serde_json::Value;

use crate::controller::{Timings, spawn};
use crate::resources::ResourceType;
use crate::scenario::incident::{Step, apply_step, run_step, steps};
use crate::store::Store;
use crate::test_support::{eventually, rolled_out, scheduled_condition};

/// Every Deployment rolled out, but checkout (stuck on its crashing build: 3 old pods
/// available, 2 new ones crashing).
fn all_settled_but_checkout(store: &Store) -> bool {
    store.list(ResourceType::DEPLOYMENT, None).iter().all(|d| {
        if d["metadata"]["name"] == "checkout" {
            d["status"]["availableReplicas"] == 3 && d["status"]["updatedReplicas"] == 2
        } else {
            rolled_out(d)
        }
    }) && store
        .list(ResourceType::POD, None)
        .iter()
        .all(|p| p["spec"]["nodeName"].is_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drained_node_leaves_inventory_at_3_of_5_until_it_is_uncordoned() {
    let store = Store::new();
    crate::scenario::seed(&store).unwrap();
    let controllers = spawn(store.clone(), Timings::fast(), Default::default());
    eventually("the seeded demo to settle", || {
        let deploys = store.list(ResourceType::DEPLOYMENT, None);
        (deploys.len() >= 10 && deploys.iter().all(rolled_out)).then_some(())
    })
    .await;
    let all: Vec<Step> = steps()
        .into_iter()
        .filter(|s| !matches!(s, Step::Release { .. }))
        .collect();
    let (node_steps, object_steps): (Vec<&Step>, Vec<&Step>) = all
        .iter()
        .partition(|s| matches!(s, Step::Drain { .. } | Step::Uncordon { .. }));
    for step in object_steps {
        apply_step(&store, step).unwrap();
    }
    eventually("the incident's rollouts to settle", || {
        all_settled_but_checkout(&store).then_some(())
    })
    .await;
    // No pod is Pending before the drain: the cluster is full, not over-full.
    run_step(&store, &Default::default(), node_steps[0])
        .await
        .unwrap();
    let cordoned: Vec<String> = store
        .list(ResourceType::NODE, None)
        .iter()
        .filter(|n| n["spec"]["unschedulable"] == true)
        .map(|n| n["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(cordoned.len(), 1);
    let expected = "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient memory. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..";
    let pending = eventually("two inventory pods Pending for memory", || {
        let pending: Vec<Value> = store
            .list(ResourceType::POD, None)
            .into_iter()
            .filter(|p| scheduled_condition(p)["status"] == "False")
            .collect();
        (pending.len() == 2
            && pending
                .iter()
                .all(|p| scheduled_condition(p)["message"] == expected))
        .then_some(pending)
    })
    .await;
    assert!(
        pending
            .iter()
            .all(|p| p["metadata"]["namespace"] == "inventory-prod"),
        "{pending:?}"
    );
    let inventory = eventually("inventory at 3 of 5, the rest recovered", || {
        let d = store.get(ResourceType::DEPLOYMENT, "inventory-prod", "inventory")?;
        let others_fine = store
            .list(ResourceType::DEPLOYMENT, None)
            .iter()
            .filter(|d| d["metadata"]["namespace"] != "inventory-prod")
            .all(|d| {
                d["metadata"]["name"] == "checkout"
                    || d["status"]["availableReplicas"] == d["spec"]["replicas"]
            });
        (d["status"]["readyReplicas"] == 3 && others_fine).then_some(d)
    })
    .await;
    assert_eq!(inventory["spec"]["replicas"], 5);
    assert_eq!(inventory["status"]["replicas"], 5);
    assert_eq!(inventory["status"]["availableReplicas"], 3);
    let db = store
        .get(ResourceType::STATEFUL_SET, "payments", "ledger-db")
        .unwrap();
    assert_eq!(db["status"]["readyReplicas"], 3, "the database moved");

    run_step(&store, &Default::default(), node_steps[1])
        .await
        .unwrap();
    eventually("inventory back at 5 of 5", || {
        let d = store.get(ResourceType::DEPLOYMENT, "inventory-prod", "inventory")?;
        (d["status"]["availableReplicas"] == 5).then_some(())
    })
    .await;
    let node = store.get(ResourceType::NODE, "", &cordoned[0]).unwrap();
    assert!(node["spec"].get("unschedulable").is_none());
    controllers.abort();
}
