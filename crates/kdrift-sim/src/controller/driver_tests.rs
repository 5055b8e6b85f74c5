//! The controllers running for real against the store, seeded with the demo manifests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::time::Duration;

use serde_json::{Value, json};

use crate::controller::{Timings, spawn};
use crate::resources::ResourceType;
use crate::scenario::seed;
use crate::store::{Store, WriteOptions};
use crate::test_support::{count, eventually, rolled_out};

fn progressing_reason(d: &Value) -> String {
    d["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Progressing"))
        .and_then(|c| c["reason"].as_str())
        .unwrap_or_default()
        .to_string()
}

async fn settled_demo() -> (Store, tokio::task::JoinHandle<()>) {
    let store = Store::new();
    let controllers = spawn(store.clone(), Timings::fast(), Default::default());
    seed(&store).unwrap();
    eventually("every demo Deployment to be rolled out", || {
        let deploys = store.list(ResourceType::DEPLOYMENT, None);
        // Without a progress deadline (the server's default of 600 s may not be filled in)
        // there is no Progressing condition to look at.
        let done = |d: &Value| {
            rolled_out(d)
                && (d["spec"]["progressDeadlineSeconds"].is_null()
                    || progressing_reason(d) == "NewReplicaSetAvailable")
        };
        (deploys.len() >= 8 && deploys.iter().all(done)).then_some(())
    })
    .await;
    (store, controllers)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_demo_becomes_fully_available() {
    let (store, controllers) = settled_demo().await;
    let deploys = store.list(ResourceType::DEPLOYMENT, None);
    let desired: i64 = deploys
        .iter()
        .map(|d| d["spec"]["replicas"].as_i64().unwrap())
        .sum();
    let pods = eventually("pods to be ready", || {
        // The Deployments' pods (the StatefulSet's and the DaemonSet's are theirs).
        let pods: Vec<Value> = store
            .list(ResourceType::POD, None)
            .into_iter()
            .filter(|p| p["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet")
            .collect();
        let ready = pods.iter().all(|p| {
            p["status"]["phase"] == "Running"
                && p["status"]["containerStatuses"][0]["ready"] == true
        });
        (ready && pods.len() as i64 == desired).then_some(pods)
    })
    .await;
    for d in &deploys {
        assert_eq!(
            d["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "1",
            "{}",
            d["metadata"]["name"]
        );
        // kubectl apply's annotation, on all but the Helm release's (helm applies server-side).
        let by_helm = d["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm";
        assert_eq!(
            d["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
                .is_string(),
            !by_helm,
            "{}",
            d["metadata"]["name"]
        );
    }
    let replica_sets = store.list(ResourceType::REPLICA_SET, None);
    assert_eq!(
        replica_sets.len(),
        deploys.len(),
        "one ReplicaSet per Deployment"
    );
    for pod in &pods {
        let owner = &pod["metadata"]["ownerReferences"][0];
        assert_eq!(owner["kind"], "ReplicaSet");
        assert!(
            pod["metadata"]["name"]
                .as_str()
                .unwrap()
                .starts_with(owner["name"].as_str().unwrap())
        );
    }
    let events = store.list(ResourceType::EVENT, Some("shop"));
    // Catalog may scale up twice: created at 1 replica, then raised to 2 by its autoscaler.
    let scaled: std::collections::BTreeSet<&str> = events
        .iter()
        .filter(|e| {
            e["reason"] == "ScalingReplicaSet"
                && e["source"]["component"] == "deployment-controller"
        })
        .filter_map(|e| e["involvedObject"]["name"].as_str())
        .collect();
    assert_eq!(
        scaled.len(),
        5,
        "a scale-up of every shop Deployment: {scaled:?}"
    );
    assert!(events.iter().any(|e| e["reason"] == "SuccessfulCreate"));
    let checkout = store
        .get(ResourceType::DEPLOYMENT, "shop", "checkout")
        .unwrap();
    assert_eq!(
        progressing_reason(&checkout),
        "NewReplicaSetAvailable",
        "checkout sets a deadline"
    );
    // Idle: nothing changes by itself once everything is available. The Deployments are, but
    // the StatefulSet's, the DaemonSet's and the autoscaler's last writes may still be under
    // way on a loaded machine: the cluster must reach half a second without a write (a
    // controller that kept writing would never let it).
    let mut last = (store.resource_version(), std::time::Instant::now());
    eventually("an idle cluster: 500 ms without a write", || {
        let version = store.resource_version();
        if version != last.0 {
            last = (version, std::time::Instant::now());
            return None;
        }
        (last.1.elapsed() >= Duration::from_millis(500)).then_some(())
    })
    .await;
    controllers.abort();
}

fn update_deployment(store: &Store, ns: &str, name: &str, change: impl Fn(&mut Value)) {
    let mut d = store.get(ResourceType::DEPLOYMENT, ns, name).unwrap();
    change(&mut d);
    store
        .update(
            ResourceType::DEPLOYMENT,
            d,
            &WriteOptions::manager("kubectl-edit"),
        )
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashing_image_gets_stuck_past_its_deadline() {
    let (store, controllers) = settled_demo().await;
    update_deployment(&store, "shop", "checkout", |d| {
        d["spec"]["progressDeadlineSeconds"] = json!(1);
        d["spec"]["template"]["spec"]["containers"][0]["image"] =
            json!("registry.example/shop/checkout:3.2.0-crash");
    });
    let stuck = eventually("checkout to exceed its progress deadline", || {
        let d = store.get(ResourceType::DEPLOYMENT, "shop", "checkout")?;
        (progressing_reason(&d) == "ProgressDeadlineExceeded").then_some(d)
    })
    .await;
    assert_eq!(
        stuck["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    // maxSurge 50% of 3 → 2 new pods, maxUnavailable 0 → all 3 old ones stay.
    assert_eq!(count(&stuck, "availableReplicas"), 3);
    let crashing = eventually("pods in CrashLoopBackOff with restarts", || {
        let pods = store.list(ResourceType::POD, Some("shop"));
        let crashing: Vec<Value> = pods
            .into_iter()
            .filter(|p| {
                p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"]
                    == "CrashLoopBackOff"
            })
            .filter(|p| p["status"]["containerStatuses"][0]["restartCount"].as_i64() >= Some(2))
            .collect();
        (crashing.len() == 2).then_some(crashing)
    })
    .await;
    assert_eq!(
        crashing[0]["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Ready")
            .unwrap()["status"],
        "False"
    );
    let backoffs = store
        .list(ResourceType::EVENT, Some("shop"))
        .into_iter()
        .filter(|e| e["reason"] == "BackOff" && e["type"] == "Warning")
        .collect::<Vec<_>>();
    assert!(!backoffs.is_empty());
    assert!(
        backoffs
            .iter()
            .all(|e| e["source"]["component"] == "kubelet")
    );
    controllers.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolling_update_and_deletion_reach_the_pods() {
    let (store, controllers) = settled_demo().await;
    update_deployment(&store, "payments", "ledger", |d| {
        d["spec"]["template"]["spec"]["containers"][0]["image"] =
            json!("registry.example/payments/ledger:2.0.4");
    });
    eventually("ledger (Recreate) to roll out revision 2", || {
        let d = store.get(ResourceType::DEPLOYMENT, "payments", "ledger")?;
        (rolled_out(&d) && d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2")
            .then_some(())
    })
    .await;
    let ledger_pods: Vec<Value> = store
        .list(ResourceType::POD, Some("payments"))
        .into_iter()
        .filter(|p| p["metadata"]["labels"]["app.kubernetes.io/name"] == "ledger")
        .collect();
    assert_eq!(ledger_pods.len(), 1);
    assert_eq!(
        ledger_pods[0]["spec"]["containers"][0]["image"],
        "registry.example/payments/ledger:2.0.4"
    );

    // A deleted pod is replaced by its ReplicaSet.
    let victim = ledger_pods[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    store
        .delete(ResourceType::POD, "payments", &victim, false)
        .unwrap();
    eventually("the ledger pod to be replaced and ready", || {
        let pods: Vec<Value> = store
            .list(ResourceType::POD, Some("payments"))
            .into_iter()
            .filter(|p| p["metadata"]["labels"]["app.kubernetes.io/name"] == "ledger")
            .collect();
        (pods.len() == 1
            && pods[0]["metadata"]["name"] != victim.as_str()
            && pods[0]["status"]["phase"] == "Running")
            .then_some(())
    })
    .await;

    store
        .delete(ResourceType::DEPLOYMENT, "shop", "cart", false)
        .unwrap();
    eventually("cart's ReplicaSets and pods to be collected", || {
        let left = |r| {
            store
                .list(r, Some("shop"))
                .iter()
                .any(|o| o["metadata"]["name"].as_str().unwrap().starts_with("cart-"))
        };
        (!left(ResourceType::REPLICA_SET) && !left(ResourceType::POD)).then_some(())
    })
    .await;
    controllers.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_image_backs_off_and_its_failures_are_counted() {
    let (store, controllers) = settled_demo().await;
    update_deployment(&store, "shop", "cart", |d| {
        d["spec"]["template"]["spec"]["containers"][0]["image"] =
            json!("registry.example/shop/cart:0.9.8-doesnotexist");
    });
    let failed = eventually("a pull failure recorded twice on one event", || {
        let failed: Vec<Value> = store
            .list(ResourceType::EVENT, Some("shop"))
            .into_iter()
            .filter(|e| e["reason"] == "Failed" && e["involvedObject"]["kind"] == "Pod")
            .collect();
        failed
            .iter()
            .any(|e| e["count"].as_i64() >= Some(2))
            .then_some(failed)
    })
    .await;
    let pods: std::collections::BTreeSet<&str> = failed
        .iter()
        .map(|e| e["involvedObject"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        pods.len(),
        failed.len(),
        "one counted event per pod, not one per attempt"
    );
    let waiting = |p: &Value| {
        p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"]
            .as_str()
            .map(str::to_string)
    };
    let reasons: Vec<Option<String>> = store
        .list(ResourceType::POD, Some("shop"))
        .iter()
        .filter(|p| {
            p["spec"]["containers"][0]["image"]
                .as_str()
                .unwrap()
                .ends_with("doesnotexist")
        })
        .map(waiting)
        .collect();
    assert!(!reasons.is_empty());
    for reason in reasons {
        assert!(
            matches!(reason.as_deref(), Some("ErrImagePull" | "ImagePullBackOff")),
            "{reason:?}"
        );
    }
    // Default strategy (25% of 2: surge 1, unavailable 0): the two old pods keep serving.
    let cart = store.get(ResourceType::DEPLOYMENT, "shop", "cart").unwrap();
    assert_eq!(count(&cart, "availableReplicas"), 2);
    controllers.abort();
}

/// Scale check, run by hand (`cargo test --release --lib scale -- --ignored --nocapture`):
/// 10,000 one-replica Deployments in 500 namespaces all become available.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "takes minutes; run by hand to check the controllers at scale"]
async fn scale_ten_thousand_deployments_become_available() {
    // KDRIFT_SCALE_DEPLOYMENTS overrides the count, to try smaller sizes.
    let total: usize = std::env::var("KDRIFT_SCALE_DEPLOYMENTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let store = Store::new();
    // A node takes 110 pods: enough nodes for them all.
    for n in 0..total.div_ceil(100) {
        crate::scenario::seed::register_node(&store, &format!("node-{n}"), n).unwrap();
    }
    let controllers = spawn(store.clone(), Timings::fast(), Default::default());
    let started = std::time::Instant::now();
    for n in 0..500 {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": format!("team-{n}")}});
        store
            .create(ResourceType::NAMESPACE, ns, &WriteOptions::manager("bench"))
            .unwrap();
    }
    for i in 0..total {
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": format!("app-{i}"), "namespace": format!("team-{}", i % 500)},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": format!("app-{i}")}},
                "template": {"metadata": {"labels": {"app": format!("app-{i}")}},
                    "spec": {"containers": [{"name": "app", "image": "registry.example/app:1.0"}]}}}});
        store
            .create(ResourceType::DEPLOYMENT, d, &WriteOptions::manager("bench"))
            .unwrap();
        if i % 100 == 0 {
            tokio::task::yield_now().await;
        }
    }
    println!("created {total} Deployments in {:?}", started.elapsed());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1200);
    loop {
        let available = store
            .list(ResourceType::DEPLOYMENT, None)
            .iter()
            .filter(|d| rolled_out(d))
            .count();
        if available == total {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "only {available} of {total} available"
        );
        println!("{:?}: {available} available", started.elapsed());
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    println!("all {total} available after {:?}", started.elapsed());
    let rss = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rss = rss
        .lines()
        .find(|l| l.starts_with("VmRSS"))
        .unwrap_or("VmRSS: ?");
    let events = store.list(ResourceType::EVENT, None).len();
    println!("{rss}; {events} events");
    assert_eq!(store.list(ResourceType::POD, None).len(), total);
    let version = store.resource_version();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(store.resource_version(), version, "idle after settling");
    controllers.abort();
}
