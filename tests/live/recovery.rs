//! The real loop (`FleetSession::drive`) on a TestBackend against the demo cluster: `:ns` switches,
//! a 403 shows and clears (on one namespace, and under `-A` where only the refused namespace is
//! marked), and the view recovers by itself after the API server restarts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_screen;

use k8s_openapi::api::apps::v1::Deployment;
use kdrift::cluster::client::connect;
use kube::api::{Patch, PatchParams};
use live_screen::{demo, keys, run_on, wait_for};

/// The words of the screen line showing Deployment `name`.
fn row_of(screen: &str, name: &str) -> Option<Vec<String>> {
    screen.lines().find_map(|l| {
        let w: Vec<String> = l
            .split(|c: char| c.is_whitespace() || c == '│')
            .filter(|w| !w.is_empty())
            .map(String::from)
            .collect();
        w.iter().any(|x| x == name).then_some(w)
    })
}

/// The DESIRED column of Deployment `name`, as shown.
fn desired_of(screen: &str, name: &str) -> Option<String> {
    let w = row_of(screen, name)?;
    let i = w.iter().position(|x| x == name)?;
    w.get(i + 1).cloned()
}

fn marked_forbidden(screen: &str, name: &str) -> bool {
    row_of(screen, name).is_some_and(|w| w.iter().any(|x| x == "forbidden:"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_403_under_all_namespaces_marks_only_that_namespace() {
    let demo = demo().await;
    // These runs are about watching: no manifests.
    let common = demo.watching_only();
    let conn = connect(&common.connection()).await.unwrap();
    let client = conn.client.clone();
    let server = &demo.server;
    let script = |tx, text| async move {
        wait_for(&text, "every namespace", |s| {
            s.contains("payments-api") && s.contains("frontend") && s.contains("watch  connected")
        })
        .await;

        server.faults().forbid_namespace("shop");
        wait_for(&text, "shop marked, payments not", |s| {
            s.contains("forbidden in \"shop\"")
                && marked_forbidden(s, "frontend")
                && !marked_forbidden(s, "payments-api")
        })
        .await;

        // The other namespaces stay live.
        let api: kube::Api<Deployment> = kube::Api::namespaced(client.clone(), "payments");
        api.patch_scale(
            "payments-api",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"replicas": 7}})),
        )
        .await
        .unwrap();
        wait_for(&text, "the scale in payments while shop is refused", |s| {
            desired_of(s, "payments-api").as_deref() == Some("7") && marked_forbidden(s, "frontend")
        })
        .await;

        server.faults().allow_namespace("shop");
        wait_for(&text, "recovery from the 403", |s| {
            s.contains("watch  connected")
                && !s.contains("forbidden")
                && s.contains("frontend")
                && desired_of(s, "payments-api").as_deref() == Some("7")
        })
        .await;
        keys(&tx, "q");
    };
    run_on(conn, &common, 140, 30, script).await;
    demo.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_switch_forbidden_and_restart_recovery() {
    let mut demo = demo().await;
    // These runs are about watching: no manifests.
    let common = demo.watching_only();
    let conn = connect(&common.connection()).await.unwrap();
    let client = conn.client.clone();
    // The script restarts the server.
    let server = &mut demo.server;
    let script = |tx, text| async move {
        wait_for(&text, "every namespace", |s| {
            s.contains("payments-api") && s.contains("frontend")
        })
        .await;

        // The picker lists the namespaces; a `:` command typed in it still works.
        keys(&tx, ":ns\n");
        wait_for(&text, "the namespaces to choose from", |s| {
            s.contains("● all namespaces") && s.contains("  payments ") && s.contains("  shop ")
        })
        .await;

        keys(&tx, ":ns shop\n");
        wait_for(&text, "only shop", |s| {
            s.contains("workloads(shop)") && s.contains("frontend") && !s.contains("payments-api")
        })
        .await;

        // Once the seeded rollouts are done, shop is quiet: no object changes after the 403 is
        // lifted, so the recovery must be seen without one.
        wait_for(&text, "shop's rollouts done", |s| {
            s.lines().filter(|l| l.contains(" complete ")).count() == 5
        })
        .await;
        server.faults().forbid_namespace("shop");
        wait_for(&text, "the 403 in the status bar and rows", |s| {
            s.contains("forbidden in \"shop\"") && s.contains("forbidden: ")
        })
        .await;
        server.faults().allow_namespace("shop");
        wait_for(&text, "recovery from the 403 in a quiet namespace", |s| {
            s.contains("watch  connected") && !s.contains("forbidden")
        })
        .await;

        server.restart().await.unwrap();
        let api: kube::Api<Deployment> = kube::Api::namespaced(client.clone(), "shop");
        // The test's own client may first try a pooled connection the restart closed (hyper's
        // IncompleteMessage; a PATCH is not retried by it): the next attempt connects anew.
        let mut attempts = 0;
        while let Err(e) = api
            .patch_scale(
                "frontend",
                &PatchParams::default(),
                &Patch::Merge(serde_json::json!({"spec": {"replicas": 6}})),
            )
            .await
        {
            attempts += 1;
            assert!(
                attempts < 5 && !matches!(e, kube::Error::Api(_)),
                "the scale after the restart: {e}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        wait_for(&text, "the scale after the restart", |s| {
            desired_of(s, "frontend").as_deref() == Some("6")
        })
        .await;
        keys(&tx, "q");
    };
    run_on(conn, &common, 140, 30, script).await;
    demo.server.shutdown().await;
}

/// A store as another server would have it: one Deployment, and resourceVersions far below the
/// demo cluster's.
fn other_cluster() -> kdrift::sim::store::Store {
    use kdrift::sim::resources::ResourceType;
    use kdrift::sim::store::{Store, WriteOptions};
    let store = Store::new();
    let as_kubectl = WriteOptions::manager("kubectl-create");
    store
        .create(
            ResourceType::NAMESPACE,
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}),
            &as_kubectl,
        )
        .unwrap();
    store
        .create(
            ResourceType::DEPLOYMENT,
            serde_json::json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "restored", "namespace": "shop"},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "restored"}},
                    "template": {"metadata": {"labels": {"app": "restored"}},
                        "spec": {"containers": [{"name": "c", "image": "restored:1"}]}}}
            }),
            &as_kubectl,
        )
        .unwrap();
    store
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_comes_back_with_older_state_is_listed_again() {
    // The watch resumes from a resourceVersion the new server has not reached: it answers with
    // silence, as a real one does. kdrift notices when the quiet watch's server is behind.
    kdrift::cluster::watch::set_stale_check(std::time::Duration::from_millis(500));
    let mut demo = demo().await;
    let common = demo.watching_only();
    let conn = connect(&common.connection()).await.unwrap();
    let server = &mut demo.server;
    let script = |tx, text| async move {
        wait_for(&text, "every namespace", |s| {
            s.contains("payments-api") && s.contains("frontend") && s.contains("watch  connected")
        })
        .await;
        server.restart_as(other_cluster()).await.unwrap();
        wait_for(&text, "only the other server's Deployment", |s| {
            s.contains("restored") && !s.contains("frontend") && !s.contains("payments-api")
        })
        .await;
        wait_for(&text, "connected again", |s| s.contains("watch  connected")).await;
        keys(&tx, "q");
    };
    run_on(conn, &common, 140, 30, script).await;
    demo.server.shutdown().await;
}

/// A crash-looping rollout: the detail view says in one line why ready < desired, and under
/// each crashing pod its node, what the kubelet says and how its last run ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_detail_says_why_pods_are_not_ready() {
    let demo = demo().await;
    let common = demo.watching_only();
    let conn = connect(&common.connection()).await.unwrap();
    let script = |tx, text| async move {
        wait_for(&text, "shop's rollouts done", |s| {
            s.lines().filter(|l| l.contains(" complete ")).count() >= 5
        })
        .await;
        demo.kubectl(&[
            "set",
            "image",
            "deployment/cart",
            "-n",
            "shop",
            "cart=registry.example/shop/cart:1.0-crash",
        ])
        .await;
        keys(&tx, "/cart\n");
        keys(&tx, "\n");
        wait_for(&text, "the why line and the crashed pod's last exit", |s| {
            s.contains("why      1 pod CrashLoopBackOff: last exit 1 (Error)")
                && s.contains("↳ last exit 1 (Error) of cart")
                && s.contains("demo-node-")
        })
        .await;
        keys(&tx, "q");
    };
    run_on(conn, &common, 140, 50, script).await;
}

/// StatefulSets and DaemonSets are rows beside the Deployments (KIND column), roll out by their
/// own rules (a partition pauses, not stuck), `:sts` shows that kind alone, and the detail lists
/// a StatefulSet's ControllerRevisions and its pods by ordinal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statefulsets_and_daemonsets_are_rows_with_their_own_rollouts() {
    let demo = demo().await;
    let common = demo.watching_only();
    let conn = connect(&common.connection()).await.unwrap();
    let script = |tx, text| async move {
        wait_for(
            &text,
            "the StatefulSet and DaemonSet rows rolled out",
            |s| {
                row_of(s, "ledger-db").is_some_and(|w| {
                    w.contains(&"sts".to_string()) && w.contains(&"complete".to_string())
                }) && row_of(s, "node-agent").is_some_and(|w| {
                    w.contains(&"ds".to_string()) && w.contains(&"complete".to_string())
                })
            },
        )
        .await;
        demo.kubectl(&[
            "patch",
            "statefulset/ledger-db",
            "-n",
            "payments",
            "-p",
            r#"{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}}}}"#,
        ])
        .await;
        demo.kubectl(&[
            "set",
            "image",
            "statefulset/ledger-db",
            "-n",
            "payments",
            "postgres=registry.example/payments/ledger-db:16.5",
        ])
        .await;
        wait_for(&text, "the partition pauses the rollout", |s| {
            s.contains("paused at partition 2 (1 of 3")
        })
        .await;
        keys(&tx, ":sts\n");
        wait_for(&text, "the StatefulSet view", |s| {
            s.contains("statefulsets(all)[1]")
                && row_of(s, "ledger-db").is_some()
                && row_of(s, "node-agent").is_none()
                && row_of(s, "checkout").is_none()
        })
        .await;
        keys(&tx, "\n");
        wait_for(&text, "the StatefulSet's revisions and pods", |s| {
            let at = |w: &str| s.find(w);
            s.contains("statefulset payments/ledger-db")
                && s.contains("REVISIONS (ControllerRevisions, newest first)")
                && s.contains("RollingUpdate partition 2")
                && s.lines().filter(|l| l.contains("ledger-db-") && l.contains(" desired ")).count() == 2
                && s.contains("image postgres: registry.example/payments/ledger-db:16.4 → registry.example/payments/ledger-db:16.5")
                && matches!(
                    (at("ledger-db-0 "), at("ledger-db-1 "), at("ledger-db-2 ")),
                    (Some(a), Some(b), Some(c)) if a < b && b < c
                )
        })
        .await;
        keys(&tx, "\x1b:workloads\n");
        wait_for(&text, "every kind again", |s| {
            s.contains("workloads(all)") && row_of(s, "node-agent").is_some()
        })
        .await;
        // A deleted DaemonSet leaves the table on its watch event (its key names its own kind:
        // it stayed until the next relist when it named a Deployment).
        demo.kubectl(&["delete", "daemonset/node-agent", "-n", "platform"])
            .await;
        wait_for(&text, "the deleted DaemonSet's row gone", |s| {
            row_of(s, "node-agent").is_none() && row_of(s, "ledger-db").is_some()
        })
        .await;
        keys(&tx, "q");
    };
    run_on(conn, &common, 140, 50, script).await;
}

/// A DaemonSet whose new pods crash: the pods of a stalled row say why (what its stuck reason
/// becomes), read from the demo cluster as from any cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_daemonset_is_explained_by_its_pods() {
    use kdrift::app::Stalled;
    use kdrift::cluster::rows::WorkloadKind;
    let demo = demo().await;
    let common = demo.watching_only();
    let conn = connect(&common.connection()).await.unwrap();
    demo.kubectl(&[
        "set",
        "image",
        "daemonset/node-agent",
        "-n",
        "platform",
        "*=registry.example/platform/node-agent:2.0-crash",
    ])
    .await;
    let key = WorkloadKind::DaemonSet.key("platform", "node-agent");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let stalled = vec![Stalled {
            key: key.clone(),
            desired: 3,
            ready: 2,
        }];
        let pods = kdrift::cluster::live::pods_of_workloads(&conn.client, vec![key.clone()]).await;
        let answer = kdrift::app::detail::explain_stalls(stalled, pods);
        if let [(k, Some(why))] = answer.as_slice()
            && why.contains("CrashLoopBackOff: last exit 1 (Error)")
        {
            assert_eq!(k, &key);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no crash-looping pod explained: {answer:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

/// A row short of ready pods says why in the table, in the scheduler's words, once its pods were
/// asked (after ten seconds without progress); and recovers by itself when they fit again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_short_of_ready_pods_says_why_in_the_table() {
    let demo = demo().await;
    let common = demo.watching_only();
    let conn = connect(&common.connection()).await.unwrap();
    let script = |tx, text| async move {
        wait_for(&text, "inventory-prod rolled out", |s| {
            s.lines()
                .any(|l| l.contains("inventory-prod") && l.contains("complete"))
        })
        .await;
        let demo = &demo;
        let scale = |replicas: &'static str| async move {
            demo.kubectl(&[
                "scale",
                "deployment/inventory",
                "-n",
                "inventory-prod",
                replicas,
            ])
            .await
        };
        // 250m and 256Mi each: sixty do not fit on three nodes (CPU or memory runs out first,
        // depending on where the other pods landed).
        scale("--replicas=60").await;
        wait_for(&text, "the row's pods explained", |s| {
            s.lines()
                .any(|l| l.contains("inventory-prod") && l.contains("Pending: Insufficient "))
        })
        .await;
        scale("--replicas=3").await;
        wait_for(&text, "the row recovered, its why gone", |s| {
            s.lines().any(|l| {
                l.contains("inventory-prod") && l.contains("complete") && !l.contains("Pending")
            })
        })
        .await;
        keys(&tx, "q");
    };
    run_on(conn, &common, 200, 30, script).await;
}

/// The table's watcher sends a screenful of Deployments ahead of its first list's pages of 500,
/// and the list that follows shows every Deployment and ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_screen_of_rows_comes_ahead_of_the_first_list() {
    use kdrift::cluster::events::{ClusterEvent, WatchUpdate};
    use kdrift::cluster::rows::WorkloadKind;

    let demo = demo().await;
    let conn = connect(&demo.watching_only().connection()).await.unwrap();
    let api: kube::Api<Deployment> = kube::Api::namespaced(conn.client.clone(), "bulk");
    demo.kubectl(&["create", "namespace", "bulk"]).await;
    for i in 0..120 {
        let d: Deployment = serde_json::from_value(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": format!("bulk-{i:03}"), "namespace": "bulk"},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "bulk"}},
                "template": {
                    "metadata": {"labels": {"app": "bulk"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}
                }
            }
        }))
        .unwrap();
        api.create(&Default::default(), &d).await.unwrap();
    }
    let total = kube::Api::<Deployment>::all(conn.client.clone())
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .len();
    assert!(total > 120, "{total} Deployments");

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let _watchers =
        kdrift::cluster::watch::spawn_table_watcher(&conn, 0, move |m| tx.send(m).is_ok());
    let mut batches: Vec<Vec<WatchUpdate<_>>> = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !batches
        .iter()
        .flatten()
        .any(|u| matches!(u, WatchUpdate::InitDone))
    {
        assert!(std::time::Instant::now() < deadline, "no end of the list");
        let message = tokio::time::timeout(std::time::Duration::from_secs(20), rx.recv())
            .await
            .unwrap()
            .unwrap();
        if let ClusterEvent::WorkloadsLive(WorkloadKind::Deployment, updates) = message.event {
            batches.push(updates);
        }
    }
    let first = &batches[0];
    assert!(matches!(first[0], WatchUpdate::Init), "{:?}", first[0]);
    assert_eq!(first.len(), 51, "a screenful (50) first");
    assert!(
        first[1..]
            .iter()
            .all(|u| matches!(u, WatchUpdate::InitApply(_)))
    );
    // Then the watcher's own list: it starts again and has every Deployment.
    let rest: Vec<_> = batches[1..].iter().flatten().collect();
    assert!(matches!(rest[0], WatchUpdate::Init), "{:?}", rest[0]);
    let listed = rest
        .iter()
        .filter(|u| matches!(u, WatchUpdate::InitApply(_)))
        .count();
    assert_eq!(listed, total);
}
