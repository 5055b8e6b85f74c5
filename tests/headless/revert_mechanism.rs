//! The revert mechanism on the demo cluster: out-of-band changes made with the real kubectl are
//! undone (values, fields added live, ownership), a dry run changes nothing, a concurrent write is
//! detected and kept, and RBAC and conflicts are reported as a person can act on them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Cluster, managed_entry, owns};
use kdrift::cli::CommonArgs;
use kdrift::cluster::revert::{Preview, RevertError, Reverter, Stage};
use kdrift::drift::{LiveObject, compare};
use kdrift::manifest::{ManifestIndex, ManifestObject, ObjectKey};
use kdrift::sim::WriteOptions;
use kdrift::sim::resources::ResourceType;
use kdrift::sim::store::Patch;
use serde_json::{Value, json};

fn demo_index() -> ManifestIndex {
    ManifestIndex::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("demo"),
        "default",
    )
}

fn cart_key() -> ObjectKey {
    ObjectKey::new("apps", "Deployment", "shop", "cart")
}

fn manifest(index: &ManifestIndex) -> ManifestObject {
    index
        .get(&cart_key())
        .expect("demo manifest for cart")
        .clone()
}

fn reverter(c: &Cluster, index: &ManifestIndex) -> Reverter {
    let common = CommonArgs {
        kubeconfig: Some(c.kubeconfig.clone()),
        ..CommonArgs::default()
    };
    c.runtime.block_on(async {
        let conn = kdrift::cluster::client::connect(&common.connection())
            .await
            .unwrap();
        Reverter::new(
            &conn.client,
            &manifest(index),
            &index.config,
            kdrift::schema::Schemas::builtin(),
        )
        .await
        .unwrap()
    })
}

/// cart as the store holds it now.
fn cart(c: &Cluster) -> Value {
    c.server
        .store()
        .get(ResourceType::DEPLOYMENT, "shop", "cart")
        .unwrap()
}

/// A write to cart straight into the store, as `options` says who makes it.
fn patch_cart(c: &Cluster, patch: Patch, options: &WriteOptions) {
    c.server
        .store()
        .patch(ResourceType::DEPLOYMENT, "shop", "cart", &patch, options)
        .unwrap();
}

/// Drifted fields (class names and paths) of cart as the drift engine sees it now.
fn drift_of(c: &Cluster, index: &ManifestIndex) -> Vec<String> {
    let live = cart(c);
    let live = LiveObject::from_value(live, kdrift::schema::Schemas::builtin()).unwrap();
    compare(&manifest(index), &live, &index.config)
        .items
        .iter()
        .filter(|i| i.class.is_drift())
        .map(|i| format!("{} {}", i.class.name(), i.path))
        .collect()
}

fn break_cart(c: &Cluster) {
    c.ok(&[
        "set",
        "image",
        "deployment/cart",
        "-n",
        "shop",
        "cart=registry.example/shop/cart:6.6.6-bad",
    ]);
    c.ok(&["set", "env", "deployment/cart", "-n", "shop", "DEBUG=1"]);
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
}

fn preview(c: &Cluster, r: &Reverter) -> Preview {
    c.runtime.block_on(r.preview()).unwrap()
}

#[test]
fn set_image_env_and_scale_are_reverted_to_the_manifest() {
    let c = Cluster::start();
    let index = demo_index();
    assert_eq!(
        drift_of(&c, &index),
        Vec::<String>::new(),
        "demo starts in sync"
    );
    break_cart(&c);
    let drift = drift_of(&c, &index);
    assert_eq!(drift.len(), 3, "{drift:?}");

    let r = reverter(&c, &index);
    let p = preview(&c, &r);
    let diff = p.diff(false);
    assert!(
        diff.contains("-        image: registry.example/shop/cart:6.6.6-bad"),
        "{diff}"
    );
    assert!(
        diff.contains("+        image: registry.example/shop/cart:0.9.7"),
        "{diff}"
    );
    assert!(
        diff.contains("-  replicas: 5") && diff.contains("+  replicas: 2"),
        "{diff}"
    );
    assert!(
        diff.lines()
            .any(|l| l.starts_with('-') && l.contains("DEBUG")),
        "{diff}"
    );
    assert_eq!(p.removals.len(), 1, "{:?}", p.removals);

    let outcome = c.runtime.block_on(r.execute(&p)).unwrap();
    assert_eq!(outcome.removed.len(), 1);
    assert_eq!(
        drift_of(&c, &index),
        Vec::<String>::new(),
        "in sync after the revert"
    );

    let d = c.get_json("deployment/cart", "shop");
    assert_eq!(d["spec"]["replicas"], 2);
    let container = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "registry.example/shop/cart:0.9.7");
    assert!(
        !container["env"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "DEBUG")
    );
    assert_eq!(managed_entry(&d, "kdrift")["operation"], "Apply");
    assert!(owns(&d, "kdrift", &["f:spec", "f:replicas"]));
    // The preview's "after" is what the server made.
    assert_eq!(p.after["spec"], d["spec"]);
}

#[test]
fn a_dry_run_changes_nothing() {
    let c = Cluster::start();
    let index = demo_index();
    break_cart(&c);
    let r = reverter(&c, &index);
    // What a revert would change: the spec, labels, annotations and field owners (the controller
    // keeps writing status meanwhile).
    let state = || {
        let d = cart(&c);
        (
            d["spec"].clone(),
            d["metadata"]["labels"].clone(),
            d["metadata"]["managedFields"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["subresource"] != "status")
                .map(|e| (e["manager"].clone(), e["fieldsV1"].clone()))
                .collect::<Vec<_>>(),
        )
    };
    let before = state();
    let p = preview(&c, &r);
    assert!(!p.changes_nothing());
    assert_eq!(before, state());
}

fn write_env(c: &Cluster, name: &str, value: &str) {
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "cart", "env": [{"name": name, "value": value}]}
    ]}}}});
    patch_cart(
        c,
        Patch::Strategic(patch),
        &WriteOptions::manager("kubectl-edit"),
    );
}

fn env_value(c: &Cluster, name: &str) -> Option<Value> {
    let d = cart(c);
    d["spec"]["template"]["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .map(|e| e["value"].clone())
}

#[test]
fn a_write_between_the_preview_and_the_revert_is_detected_not_overwritten() {
    let c = Cluster::start();
    let index = demo_index();
    break_cart(&c);
    let r = reverter(&c, &index);
    let p = preview(&c, &r);
    // Someone changes the object after the operator saw the preview.
    write_env(&c, "DEBUG", "2");
    let err = c.runtime.block_on(r.execute(&p)).unwrap_err();
    assert!(
        matches!(err, RevertError::ChangedSincePreview { .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("changed since the preview"),
        "{err}"
    );
    assert_eq!(
        env_value(&c, "DEBUG"),
        Some(json!("2")),
        "the write is kept"
    );
    let d = c.get_json("deployment/cart", "shop");
    assert_eq!(d["spec"]["replicas"], 5, "nothing was applied");
}

#[test]
fn a_field_changed_between_apply_and_removal_is_kept() {
    let c = Cluster::start();
    let index = demo_index();
    break_cart(&c);
    let r = reverter(&c, &index);
    let p = preview(&c, &r);
    let hook = |stage: Stage| {
        if stage == Stage::BeforeRemoval(1) {
            write_env(&c, "DEBUG", "2");
        }
    };
    let outcome = c.runtime.block_on(r.execute_with(&p, &hook)).unwrap();
    assert!(outcome.retried);
    assert!(outcome.removed.is_empty());
    assert_eq!(outcome.kept.len(), 1);
    assert_eq!(
        env_value(&c, "DEBUG"),
        Some(json!("2")),
        "the concurrent value stays"
    );
    let d = c.get_json("deployment/cart", "shop");
    assert_eq!(d["spec"]["replicas"], 2, "the apply happened");
}

/// A busy writer: inserts an env var at the top of cart's list (every index below shifts).
fn insert_env_first(c: &Cluster, name: &str) {
    let patch = json!([{"op": "add", "path": "/spec/template/spec/containers/0/env/0",
        "value": {"name": name, "value": "x"}}]);
    patch_cart(c, Patch::Json(patch), &WriteOptions::manager("busy-bot"));
}

#[test]
fn removal_conflicting_twice_says_someone_else_is_changing_the_object() {
    let c = Cluster::start();
    let index = demo_index();
    break_cart(&c);
    let r = reverter(&c, &index);
    let p = preview(&c, &r);
    let writes = AtomicUsize::new(0);
    let hook = |stage: Stage| {
        if let Stage::BeforeRemoval(_) = stage {
            let n = writes.fetch_add(1, Ordering::SeqCst);
            insert_env_first(&c, &format!("BUSY{n}"));
        }
    };
    let err = c.runtime.block_on(r.execute_with(&p, &hook)).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RevertError::Conflict { .. }), "{text}");
    assert!(
        text.contains("someone else is changing deployment/shop/cart"),
        "{text}"
    );
    assert!(
        text.contains("the manifest was applied, but removing"),
        "{text}"
    );
    assert!(text.contains("DEBUG"), "{text}");
    assert_eq!(writes.load(Ordering::SeqCst), 2, "one retry");
    assert_eq!(
        env_value(&c, "DEBUG"),
        Some(json!("1")),
        "nothing removed blindly"
    );
    assert_eq!(
        env_value(&c, "BUSY1"),
        Some(json!("x")),
        "the other writes stay"
    );
}

#[test]
fn apply_meeting_status_writes_every_time_applies_nothing() {
    let c = Cluster::start();
    let index = demo_index();
    break_cart(&c);
    let r = reverter(&c, &index);
    let p = preview(&c, &r);
    let writes = AtomicUsize::new(0);
    // A status write between the read and the apply (as the deployment controller makes during a
    // rollout) bumps the resourceVersion without changing the spec: a 409, then a fresh read and
    // a retry, a few times.
    let hook = |stage: Stage| {
        if let Stage::BeforeApply(_) = stage {
            let n = writes.fetch_add(1, Ordering::SeqCst);
            patch_cart(
                &c,
                Patch::Merge(json!({"status": {"observedGeneration": 100 + n}})),
                &WriteOptions::status("kube-controller-manager"),
            );
        }
    };
    let err = c.runtime.block_on(r.execute_with(&p, &hook)).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RevertError::Conflict { .. }), "{text}");
    assert!(text.contains("nothing was applied"), "{text}");
    assert_eq!(
        writes.load(Ordering::SeqCst),
        usize::from(kdrift::cluster::revert::APPLY_ATTEMPTS)
    );
    let d = c.get_json("deployment/cart", "shop");
    assert_eq!(d["spec"]["replicas"], 5);

    // One status write only: the retry succeeds.
    let once = AtomicUsize::new(0);
    let hook = |stage: Stage| {
        if stage == Stage::BeforeApply(1) {
            once.fetch_add(1, Ordering::SeqCst);
            patch_cart(
                &c,
                Patch::Merge(json!({"status": {"observedGeneration": 200}})),
                &WriteOptions::status("kube-controller-manager"),
            );
        }
    };
    c.runtime.block_on(r.execute_with(&p, &hook)).unwrap();
    assert_eq!(once.load(Ordering::SeqCst), 1);
    assert_eq!(drift_of(&c, &index), Vec::<String>::new());
}

#[test]
fn rbac_refusal_names_verb_resource_and_namespace() {
    let c = Cluster::start();
    let index = demo_index();
    break_cart(&c);
    let r = reverter(&c, &index);
    c.server.faults().forbid_namespace("shop");
    let err = c.runtime.block_on(r.preview()).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RevertError::Forbidden { .. }), "{text}");
    assert!(
        text.contains("deployments.apps") && text.contains("\"shop\""),
        "{text}"
    );
    assert!(text.contains("get"), "{text}");
}

#[test]
fn a_manifest_the_server_refuses_is_reported_with_its_file_and_line() {
    let c = Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/shop/cart.yaml"))
            .unwrap()
            .replace("replicas: 2", "replicas: two");
    std::fs::write(dir.path().join("cart.yaml"), text).unwrap();
    let index = ManifestIndex::load(dir.path(), "default");
    let r = reverter(&c, &index);
    let err = c.runtime.block_on(r.preview()).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RevertError::Invalid { .. }), "{text}");
    let file = dir.path().join("cart.yaml");
    // The server names no field here: the document's first line (after the comments).
    assert!(text.contains(&format!("{}:3)", file.display())), "{text}");
    assert!(text.contains("invalid type: string \"two\""), "{text}");
    let d = c.get_json("deployment/cart", "shop");
    assert_eq!(d["spec"]["replicas"], 2);
}

#[test]
fn apply_done_and_removal_refused_says_exactly_that() {
    let c = Cluster::start();
    let index = demo_index();
    break_cart(&c);
    let r = reverter(&c, &index);
    let p = preview(&c, &r);
    let hook = |stage: Stage| {
        if stage == Stage::BeforeRemoval(1) {
            c.server.faults().forbid_namespace("shop");
        }
    };
    let err = c.runtime.block_on(r.execute_with(&p, &hook)).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RevertError::RemovalFailed { .. }), "{text}");
    assert!(
        text.starts_with("the manifest of deployment/shop/cart was applied, but removing the fields added live (spec.template.spec.containers[name=cart].env[name=DEBUG]) failed"),
        "{text}"
    );
    assert!(
        text.contains("you may not patch deployments.apps in namespace \"shop\""),
        "{text}"
    );
    c.server.faults().allow_namespace("shop");
    let d = c.get_json("deployment/cart", "shop");
    assert_eq!(d["spec"]["replicas"], 2, "the apply stays done");
    assert_eq!(env_value(&c, "DEBUG"), Some(json!("1")));
}

#[test]
fn an_api_server_gone_mid_revert_is_called_unreachable() {
    let c = Cluster::start();
    let index = demo_index();
    break_cart(&c);
    let r = reverter(&c, &index);
    let Cluster {
        server, runtime, ..
    } = c;
    runtime.block_on(server.shutdown());
    let err = runtime.block_on(r.preview()).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RevertError::Unreachable { .. }), "{text}");
    assert!(text.starts_with("the API server is unreachable"), "{text}");
}

#[test]
fn replicas_the_autoscaler_owns_are_left_to_it() {
    let c = Cluster::start();
    let index = demo_index();
    c.ok(&[
        "set",
        "image",
        "deployment/cart",
        "-n",
        "shop",
        "cart=registry.example/shop/cart:6.6.6-bad",
    ]);
    patch_cart(
        &c,
        Patch::Merge(json!({"spec": {"replicas": 4}})),
        &WriteOptions {
            manager: "horizontal-pod-autoscaler".into(),
            subresource: Some("scale".into()),
            dry_run: false,
        },
    );
    let r = reverter(&c, &index);
    let p = preview(&c, &r);
    assert!(p.autoscaled);
    assert!(!p.diff(false).contains("replicas"), "{}", p.diff(false));
    c.runtime.block_on(r.execute(&p)).unwrap();
    let d = c.get_json("deployment/cart", "shop");
    assert_eq!(d["spec"]["replicas"], 4, "the autoscaler's count stays");
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "registry.example/shop/cart:0.9.7"
    );
    assert_eq!(drift_of(&c, &index), Vec::<String>::new());
}

#[test]
fn a_resource_limit_added_live_is_removed_and_the_manifest_ones_stay() {
    let c = Cluster::start();
    let index = demo_index();
    c.ok(&[
        "set",
        "resources",
        "deployment/cart",
        "-n",
        "shop",
        "--limits=cpu=2",
    ]);
    c.ok(&[
        "annotate",
        "deployment/cart",
        "-n",
        "shop",
        "example.com/paged-by=alice",
    ]);
    let drift = drift_of(&c, &index);
    assert_eq!(drift.len(), 2, "{drift:?}");
    let r = reverter(&c, &index);
    let p = preview(&c, &r);
    assert_eq!(p.removals.len(), 2, "{:?}", p.removals);
    c.runtime.block_on(r.execute(&p)).unwrap();
    assert_eq!(drift_of(&c, &index), Vec::<String>::new());
    let d = c.get_json("deployment/cart", "shop");
    let resources = &d["spec"]["template"]["spec"]["containers"][0]["resources"];
    assert_eq!(resources["limits"], json!({"memory": "128Mi"}));
    assert!(
        d["metadata"]["annotations"]
            .get("example.com/paged-by")
            .is_none()
    );
}

#[test]
fn preview_and_revert_run_on_spawned_tasks_as_the_tui_runs_them() {
    let c = Cluster::start();
    let index = demo_index();
    break_cart(&c);
    let r = reverter(&c, &index);
    let task = r.clone();
    let p = c
        .runtime
        .block_on(c.runtime.spawn(async move { task.preview().await }))
        .unwrap()
        .unwrap();
    let lines = p.lines();
    assert!(
        lines
            .iter()
            .any(|l| l.kind == kdrift::revert::PreviewKind::Added
                && l.text.contains("registry.example/shop/cart:0.9.7"))
    );
    let task = r.clone();
    let outcome = c
        .runtime
        .block_on(c.runtime.spawn(async move { task.execute(&p).await }))
        .unwrap()
        .unwrap();
    assert_eq!(outcome.removed.len(), 1);
    assert_eq!(drift_of(&c, &index), Vec::<String>::new());
}
