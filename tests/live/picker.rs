//! The `:ns` picker in the real loop (`FleetSession::drive` on a TestBackend) against the demo
//! cluster: the namespaces are listed by the runtime, filtered, and picking one shows only its
//! Deployments.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_screen;

use live_screen::{demo, keys, run, wait_for};

/// The screen line containing `needle`.
fn line_with<'a>(screen: &'a str, needle: &str) -> Option<&'a str> {
    screen.lines().find(|l| l.contains(needle))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ns_picker_lists_the_namespaces_and_picking_payments_shows_only_its_rows() {
    let demo = demo().await;
    let script = |tx, text| async move {
        wait_for(&text, "every namespace", |s| {
            s.contains("payments-api") && s.contains("frontend") && s.contains("watch  connected")
        })
        .await;

        keys(&tx, ":ns\n");
        // The demo has three Deployments in payments, five in shop.
        wait_for(&text, "the namespaces with their workloads", |s| {
            line_with(s, "● all namespaces").is_some_and(|l| l.contains("(in use)"))
                && line_with(s, "  payments ")
                    .is_some_and(|l| l.trim_end_matches('│').trim_end().ends_with(" 4"))
                && line_with(s, "  shop ")
                    .is_some_and(|l| l.trim_end_matches('│').trim_end().ends_with(" 5"))
        })
        .await;

        keys(&tx, "/pay");
        wait_for(&text, "only payments in the picker", |s| {
            s.contains("  payments ") && !s.contains("  shop ") && !s.contains("all namespaces")
        })
        .await;
        keys(&tx, "\n\n");
        wait_for(&text, "only the payments rows", |s| {
            s.contains("workloads(payments)")
                && s.contains("payments-api")
                && s.contains("ledger")
                && s.contains("fraud-check")
                && !s.contains("frontend")
                && !s.contains("checkout")
        })
        .await;
        keys(&tx, "q");
    };
    run(&demo.common, 140, 30, script).await;
    demo.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_namespace_list_says_so_and_ns_name_still_switches() {
    let demo = demo().await;
    // RBAC with Roles in some namespaces and no ClusterRole: the namespaces cannot be listed.
    demo.server.faults().set_namespace_list_forbidden(true);
    let script = |tx, text| async move {
        wait_for(&text, "every namespace", |s| {
            s.contains("payments-api") && s.contains("frontend")
        })
        .await;
        keys(&tx, ":ns\n");
        wait_for(&text, "the refusal and what still works", |s| {
            s.contains("cannot list namespaces")
                && s.contains("403 Forbidden")
                && s.contains(":ns NAME")
        })
        .await;
        keys(&tx, ":ns payments\n");
        wait_for(&text, "only the payments rows", |s| {
            s.contains("workloads(payments)") && s.contains("ledger") && !s.contains("frontend")
        })
        .await;
        keys(&tx, "q");
    };
    run(&demo.common, 140, 30, script).await;
    demo.server.shutdown().await;
}
