//! Kustomize roots headless, against the demo cluster driven by the real kubectl: after
//! `kubectl apply -k` of the prod overlay, `kdrift check --overlay overlays/prod` is green (the
//! overlay's namespace, replicas, images, patch, component and hashed ConfigMap are what is
//! compared, not the raw base); every root without `--overlay` reports the staging overlay as
//! missing; a `kubectl scale` of the prod Deployment is drift; accept refuses to write into the
//! shared base; revert applies the rendered object.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "headless_util/mod.rs"]
mod headless_util;
#[path = "kustomize_fixture/mod.rs"]
mod kustomize_fixture;

use common::Cluster;
use headless_util::{Repo, drifted_fields, kdrift, keys_with_status};
use kustomize_fixture::DEPLOYMENT;

fn repo() -> Repo {
    Repo::with_files(kustomize_fixture::FILES)
}

/// `kubectl apply -k DIR`. Debian's kubectl 1.20 (the CI's second run) embeds kustomize
/// v2.0.3, which knows no components or `replicas:`: with it, the overlay is rendered by the
/// kubectl on PATH and the output applied with the old one.
fn apply_k(c: &Cluster, dir: &std::path::Path) {
    let old = std::env::var_os("KDRIFT_TEST_KUBECTL").is_some_and(|v| !v.is_empty());
    if !old {
        c.ok(&["apply", "-k", dir.to_str().unwrap()]);
        return;
    }
    let rendered = std::process::Command::new("kubectl")
        .args(["kustomize", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(rendered.status.success(), "{rendered:?}");
    let file = c.file(
        "rendered.yaml",
        &String::from_utf8(rendered.stdout).unwrap(),
    );
    c.ok(&["apply", "-f", file.to_str().unwrap()]);
}

#[test]
fn an_applied_overlay_is_in_sync_and_a_scale_of_it_is_drift() {
    let c = Cluster::start_with(false);
    let repo = repo();
    c.ok(&["create", "namespace", "prod"]);
    apply_k(&c, &repo.path("overlays/prod"));

    let clean = kdrift(
        &c,
        &repo,
        &["check", "-A", "--overlay", "overlays/prod", "-o", "json"],
    );
    assert_eq!(clean.code, 0, "{clean:?}");
    let report = clean.json();
    let objects = report["objects"].as_array().unwrap();
    assert_eq!(objects.len(), 3, "{report}");
    assert_eq!(
        report["kustomize"]["roots"],
        serde_json::json!(["overlays/prod"])
    );
    assert!(
        report["kustomize"]["renderer"]
            .as_str()
            .unwrap()
            .contains("kustomize v"),
        "{report}"
    );
    assert!(
        objects.iter().all(|o| o["rendered_by"]
            .as_str()
            .unwrap()
            .ends_with("overlays/prod/kustomization.yaml")),
        "{report}"
    );
    assert!(
        report["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["message"]
                .as_str()
                .unwrap()
                .contains("overlays/prod (from --overlay)")),
        "which overlay was used is said: {report}"
    );

    // Every root: staging's objects are missing from the cluster.
    let all = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(all.code, 1, "{all:?}");
    let all = all.json();
    let missing = keys_with_status(&all, "missing");
    assert_eq!(missing.len(), 3, "{all}");
    assert!(missing.iter().all(|k| k.contains("staging")), "{missing:?}");

    c.ok(&["scale", "deployment/web", "-n", "prod", "--replicas=6"]);
    let drift = kdrift(
        &c,
        &repo,
        &["check", "-A", "--overlay", "overlays/prod", "-o", "json"],
    );
    assert_eq!(drift.code, 1, "{drift:?}");
    let fields = drifted_fields(&drift.json());
    assert_eq!(fields.len(), 1, "{fields:?}");
    assert_eq!(fields[0][2], "spec.replicas", "{fields:?}");
    assert_eq!(fields[0][3], "kubectl", "{fields:?}");

    // Accept would write into a base the staging overlay shares: refused, nothing written.
    let head = repo.head();
    let accept = kdrift(
        &c,
        &repo,
        &[
            "accept",
            "deploy/web",
            "-n",
            "prod",
            "--overlay",
            "overlays/prod",
        ],
    );
    assert_eq!(accept.code, 2, "{accept:?}");
    assert!(
        accept.stderr.contains("rendered by kustomize")
            && accept.stderr.contains("nothing was written"),
        "{accept:?}"
    );
    assert_eq!(repo.head(), head);
    assert_eq!(
        std::fs::read_to_string(repo.path("base/deployment.yaml")).unwrap(),
        DEPLOYMENT
    );

    // Revert applies the rendered object: 4 replicas, and the check is green again.
    let revert = kdrift(
        &c,
        &repo,
        &[
            "revert",
            "deploy/web",
            "-n",
            "prod",
            "--overlay",
            "overlays/prod",
            "--yes",
        ],
    );
    assert_eq!(revert.code, 0, "{revert:?}");
    let live = c.get_json("deployment/web", "prod");
    assert_eq!(live["spec"]["replicas"], 4, "{live}");
    let again = kdrift(&c, &repo, &["check", "-A", "--overlay", "overlays/prod"]);
    assert_eq!(again.code, 0, "{again:?}");
}
