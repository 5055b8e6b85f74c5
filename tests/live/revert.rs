//! Revert from the TUI, in the real loop (`FleetSession::drive` on a TestBackend) against the demo
//! cluster: a bad `kubectl set image` (real kubectl) → `r` shows the server's dry run with the
//! image line → `y` → the live object equals the manifest again (`kdrift check` exits 0, the
//! drift engine says in sync) and the detail view shows the rollout back as it happens.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_screen;

use std::sync::{Arc, Mutex};

use live_screen::{Demo, demo, keys, run, wait_for};

const GOOD: &str = "registry.example/shop/checkout:3.1.0";
const BAD: &str = "registry.example/shop/checkout:3.2.0-doesnotexist";

/// The line of the screen holding `needle`, if any.
fn line_with<'a>(screen: &'a str, needle: &str) -> Option<&'a str> {
    screen.lines().find(|l| l.contains(needle))
}

/// Waits until checkout has at least `count` ReplicaSets (the controller made them).
async fn wait_for_replica_sets(d: &Demo, count: usize) {
    let started = std::time::Instant::now();
    loop {
        let sets = d
            .kubectl(&[
                "-n",
                "shop",
                "get",
                "rs",
                "-l",
                "app.kubernetes.io/name=checkout",
                "-o",
                "name",
            ])
            .await;
        if sets.lines().count() >= count {
            return;
        }
        assert!(
            started.elapsed() < live_screen::PATIENCE,
            "checkout has fewer than {count} ReplicaSets: {sets}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The bad `kubectl set image` on checkout, and its row drifting by the one field. The seeded
/// rollout is finished first and the bad ReplicaSet exists after: on a loaded machine the
/// controller may still be at either, and the revision the revert rolls back from must exist.
async fn set_the_bad_image(d: &Demo, text: &Arc<Mutex<String>>) {
    wait_for(text, "checkout's first rollout done", |s| {
        line_with(s, " checkout ").is_some_and(|l| l.contains("complete"))
    })
    .await;
    wait_for_replica_sets(d, 1).await;
    let image = format!("checkout={BAD}");
    d.kubectl(&["-n", "shop", "set", "image", "deployment/checkout", &image])
        .await;
    wait_for(text, "checkout drifted", |s| {
        line_with(s, " checkout ").is_some_and(|l| l.contains("1 field"))
    })
    .await;
    wait_for_replica_sets(d, 2).await;
}

/// Filters the table to checkout and waits for it in sync.
async fn find_checkout(
    tx: &tokio::sync::mpsc::UnboundedSender<kdrift::runtime::event_loop::Event>,
    text: &Arc<Mutex<String>>,
) {
    keys(tx, "/shop/checkout\n");
    wait_for(text, "checkout in sync", |s| {
        line_with(s, " checkout ").is_some_and(|l| l.contains("in sync"))
    })
    .await;
}

/// The names of checkout's environment variables, live.
async fn live_env_names(d: &Demo) -> String {
    d.kubectl(&[
        "-n",
        "shop",
        "get",
        "deployment/checkout",
        "-o",
        "jsonpath={.spec.template.spec.containers[0].env[*].name}",
    ])
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_set_image_is_reverted_in_two_keys_and_the_rollout_back_is_shown() {
    let demo = demo().await;
    let d = &demo;
    let script = |tx, text| async move {
        find_checkout(&tx, &text).await;

        set_the_bad_image(d, &text).await;

        // Key one: the server's dry run, with the image going back.
        keys(&tx, "r");
        wait_for(&text, "the preview with the image line", |s| {
            s.contains("revert deployment shop/checkout")
                && s.contains(&format!("-        image: {BAD}"))
                && s.contains(&format!("+        image: {GOOD}"))
                && s.contains("y/enter revert · esc cancel")
        })
        .await;

        // Key two: revert; the detail view opens on the rollout back.
        keys(&tx, "y");
        wait_for(&text, "the detail view and the flash", |s| {
            s.contains("deployment shop/checkout")
                && s.contains("REVISIONS")
                && s.contains("reverted deployment/shop/checkout to the manifest (")
        })
        .await;
        // The ReplicaSet of the manifest's template is the newest revision again and scales up
        // while the bad one scales down to 0.
        wait_for(&text, "the manifest's ReplicaSet as revision 3", |s| {
            line_with(s, "#3").is_some_and(|l| l.contains(GOOD))
        })
        .await;
        wait_for(&text, "the bad ReplicaSet scaled down", |s| {
            line_with(s, "#2").is_some_and(|l| l.contains("0 desired"))
        })
        .await;
        wait_for(&text, "the detail says in sync", |s| {
            line_with(s, "revision").is_some_and(|l| l.contains("in sync"))
        })
        .await;

        let check = tokio::process::Command::new(env!("CARGO_BIN_EXE_kdrift"))
            .args(["check", "-n", "shop", "--kubeconfig"])
            .arg(&d.kubeconfig)
            .arg("--manifests")
            .arg(&d.manifests)
            .env("HOME", d.dir.path())
            .env("NO_COLOR", "1")
            .env_remove("KUBECONFIG")
            .output()
            .await
            .unwrap();
        assert_eq!(
            check.status.code(),
            Some(0),
            "{}{}",
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        );
        let jsonpath = "jsonpath={.spec.template.spec.containers[0].image}";
        let live = d
            .kubectl(&["-n", "shop", "get", "deployment/checkout", "-o", jsonpath])
            .await;
        assert_eq!(live, GOOD);
        keys(&tx, "q");
    };
    run(&demo.common, 160, 45, script).await;
    demo.server.shutdown().await;
}

/// The errors on the way, each in the view as the headless command words it: RBAC refusing the
/// dry run (fault injection), then a change made after the preview, which is detected and not
/// overwritten; `r` previews again each time and the revert then goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_403_and_a_change_after_the_preview_are_shown_and_r_previews_again() {
    let demo = demo().await;
    let d = &demo;
    let script = |tx, text| async move {
        keys(&tx, "/shop/checkout\n");
        set_the_bad_image(d, &text).await;

        d.server.faults().forbid_namespace("shop");
        keys(&tx, "r");
        wait_for(&text, "the RBAC refusal", |s| {
            s.contains("RBAC refused: you may not get deployments.apps in namespace \"shop\"")
                && s.contains("r preview again · esc back")
        })
        .await;
        d.server.faults().allow_namespace("shop");
        keys(&tx, "r");
        wait_for(&text, "the preview", |s| {
            s.contains(&format!("+        image: {GOOD}"))
        })
        .await;

        // Someone changes the object while the operator reads the preview.
        d.kubectl(&["-n", "shop", "set", "env", "deployment/checkout", "LATE=1"])
            .await;
        keys(&tx, "y");
        wait_for(&text, "the change detected", |s| {
            s.contains("deployment/shop/checkout changed since the preview")
        })
        .await;
        let env = live_env_names(d).await;
        assert!(env.contains("LATE"), "not overwritten: {env}");

        keys(&tx, "r");
        wait_for(&text, "the new preview removing LATE", |s| {
            s.contains("removes spec.template.spec.containers[name=checkout].env[name=LATE]")
        })
        .await;
        keys(&tx, "y");
        wait_for(&text, "reverted", |s| {
            s.contains("reverted deployment/shop/checkout to the manifest (")
        })
        .await;
        let env = live_env_names(d).await;
        assert!(!env.contains("LATE"), "{env}");
        keys(&tx, "q");
    };
    run(&demo.common, 160, 45, script).await;
    demo.server.shutdown().await;
}

/// `q` while a revert runs waits for it; when the revert then fails (RBAC refuses it half-way),
/// what it did is what is printed after the quit — not the "quitting once …" notice that was in
/// the status bar while it ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q_during_a_revert_that_then_fails_says_the_failure_after_quitting() {
    let demo = demo().await;
    let d = &demo;
    let script = |tx, text| async move {
        keys(&tx, "/shop/checkout\n");
        set_the_bad_image(d, &text).await;
        keys(&tx, "r");
        wait_for(&text, "the preview", |s| {
            s.contains(&format!("+        image: {GOOD}"))
        })
        .await;
        // Every request now takes a while: q lands while the revert is under way.
        d.server
            .faults()
            .set_latency(std::time::Duration::from_millis(400));
        keys(&tx, "y");
        keys(&tx, "q");
        wait_for(&text, "the quit waiting for the revert", |s| {
            s.contains("quitting once the accept or revert under way ends")
        })
        .await;
        d.server.faults().forbid_namespace("shop");
    };
    let outcomes = run(&demo.common, 160, 45, script).await;
    demo.server.faults().set_latency(std::time::Duration::ZERO);
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert!(
        outcomes[0].contains("RBAC refused") && !outcomes[0].contains("quitting once"),
        "{outcomes:?}"
    );
    demo.server.shutdown().await;
}

/// Issue 48 in the live view: `u` in checkout's detail view plans its rollback to the previous
/// revision as `kdrift rollback` does (the bad image was set out of band: the cluster alone,
/// git untouched) and `y` carries it out; the detail view shows the rollout back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn u_in_the_detail_view_rolls_back_to_the_previous_revision() {
    let demo = demo().await;
    let d = &demo;
    let head = d.git(&["rev-parse", "HEAD"]);
    let script = |tx, text| async move {
        find_checkout(&tx, &text).await;
        set_the_bad_image(d, &text).await;
        keys(&tx, "\n");
        wait_for(&text, "the detail view", |s| s.contains("REVISIONS")).await;
        keys(&tx, "u");
        wait_for(&text, "the plan", |s| {
            s.contains("roll back deployment shop/checkout")
                && s.contains("from revision 2 to revision 1")
                && s.contains("the change was out of band")
                && s.contains(&format!("+        image: {GOOD}"))
                && s.contains("y/enter roll back")
        })
        .await;
        keys(&tx, "y");
        wait_for(&text, "back in the detail view, rolled back", |s| {
            s.contains("REVISIONS") && s.contains("rolled back deployment/shop/checkout")
        })
        .await;
        wait_for(&text, "the good ReplicaSet as revision 3", |s| {
            line_with(s, "#3").is_some_and(|l| l.contains(GOOD))
        })
        .await;
        keys(&tx, "q");
    };
    d.drive(script).await;
    let image = d
        .kubectl(&[
            "-n",
            "shop",
            "get",
            "deployment/checkout",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ])
        .await;
    assert_eq!(image, GOOD);
    assert_eq!(d.git(&["rev-parse", "HEAD"]), head, "git untouched");
}
