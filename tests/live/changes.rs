//! The `:changes` view in the real loop (`FleetSession::drive` on a TestBackend) against the demo
//! cluster: a `kubectl scale` and a `kubectl label` each appear as they happen, newest first,
//! with their manager and the field old → new, without a key pressed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_screen;

use live_screen::{demo, keys, run, wait_for};

/// The first line of the timeline (newest) that names `object` and holds `what`.
fn line_of<'a>(screen: &'a str, object: &str, what: &str) -> Option<&'a str> {
    screen
        .lines()
        .find(|l| l.contains(object) && l.contains(what))
}

/// Once the manifests are read (cart compared, so that lines say whether git agrees), opens
/// `:changes` filtered to `filter`.
async fn open_changes(
    tx: &tokio::sync::mpsc::UnboundedSender<kdrift::runtime::event_loop::Event>,
    text: &std::sync::Arc<std::sync::Mutex<String>>,
    filter: &str,
) {
    wait_for(text, "cart in sync", |s| {
        s.lines()
            .any(|l| l.contains(" cart ") && l.contains("in sync"))
    })
    .await;
    keys(tx, ":changes\n");
    keys(tx, &format!("/{filter}\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_and_label_appear_on_the_timeline_with_their_managers_as_they_happen() {
    let demo = demo().await;
    let d = &demo;
    let script = |tx, text| async move {
        // The objects of the shop namespace: many lines, cart's among them.
        open_changes(&tx, &text, "deployment/shop/cart").await;
        // At start: the lines of the objects' managedFields, as `kdrift changes` prints them.
        wait_for(&text, "the start lines of cart", |s| {
            s.contains(" changes(all)[")
                && line_of(s, "deployment/shop/cart", "kubectl-client-side-apply").is_some()
        })
        .await;

        d.kubectl(&["-n", "shop", "scale", "deployment/cart", "--replicas=5"])
            .await;
        wait_for(&text, "the scale line by kubectl (scale)", |s| {
            line_of(s, "deployment/shop/cart", ".spec.replicas: 2 → 5")
                .is_some_and(|l| l.contains("kubectl (scale) Update") && l.contains("drifted"))
        })
        .await;

        d.kubectl(&["-n", "shop", "label", "deployment/cart", "team=payments"])
            .await;
        wait_for(&text, "the label line by kubectl-label", |s| {
            line_of(s, "deployment/shop/cart", ".metadata.labels.team")
                .is_some_and(|l| l.contains("kubectl-label Update") && l.contains("\"payments\""))
        })
        .await;
        // Newest first: the label above the scale.
        let screen = text.lock().unwrap().clone();
        let at = |what: &str| screen.lines().position(|l| l.contains(what)).unwrap();
        assert!(
            at(".metadata.labels.team") < at(".spec.replicas: 2 → 5"),
            "{screen}"
        );

        // Narrowed to the manager: only kubectl-label's line is left of cart's.
        keys(&tx, "/payments\n");
        wait_for(&text, "the filter keeps the label line", |s| {
            s.contains("/payments")
                && !s.contains(".spec.replicas: 2 → 5")
                && s.contains(".metadata.labels.team")
        })
        .await;
        keys(&tx, "q");
    };
    run(&demo.common, 160, 30, script).await;
    demo.server.shutdown().await;
}

/// The demo's Argo CD and Flux report their syncs in their objects' status: the timeline says
/// each sync once, by its controller, as `kdrift changes` does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argo_cd_and_flux_syncs_are_on_the_timeline_by_their_controllers() {
    let demo = demo().await;
    let script = |tx, text| async move {
        // One filter for each sync: the demo's rollouts write `revision` annotations on every
        // Deployment at about the same second, enough lines to push a sync below the screen.
        open_changes(&tx, &text, "sync to revision").await;
        // Under the filter, the sync's one line by its controller (once, however many status
        // writes reported it; once the filter is applied: a loaded machine draws the lines
        // before it).
        let one_sync = |s: &str, filter: &str, object: &str, by: &str| {
            s.contains(&format!("/{filter}"))
                && line_of(s, object, filter).is_some_and(|l| l.contains(by))
                && s.lines()
                    .filter(|l| l.contains(object) && l.contains(filter))
                    .count()
                    == 1
        };
        wait_for(&text, "the Application's sync", |s| {
            // (The manager cut to its column.)
            one_sync(
                s,
                "sync to revision",
                "application/argocd/shop",
                "argocd-application-controll",
            )
        })
        .await;
        keys(&tx, "/applied revision\n");
        wait_for(&text, "the Kustomization's sync", |s| {
            one_sync(
                s,
                "applied revision",
                "kustomization/flux-system/platform",
                "kustomize-controller",
            )
        })
        .await;
        keys(&tx, "q");
    };
    run(&demo.common, 160, 30, script).await;
    demo.server.shutdown().await;
}
