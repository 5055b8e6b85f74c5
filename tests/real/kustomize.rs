//! The demo's kustomize application (`demo/inventory`) on the real server: its prod overlay,
//! moved into the test's namespace, applied with `kubectl apply -k`, is in sync as kdrift renders
//! it; a `kubectl scale` and a `kubectl set image` of it drift with the overlay's `replicas:` and
//! `images:` entries as their sources; accept writes those entries (one commit, the overlay's
//! file alone, the base the staging overlay shares untouched); with git put back, revert applies
//! the rendered object and the overlay is in sync again.

use std::path::Path;

use crate::case::Case;
use crate::common::kubectl_bin;
use crate::headless_util::drifted_fields;

const OVERLAY: &str = "inventory/overlays/prod";

/// The demo's inventory app with both overlays' namespaces moved to the test's.
fn inventory(ns: &str) -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/inventory");
    let mut files = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap();
            let text = std::fs::read_to_string(&path)
                .unwrap()
                .replace("inventory-prod", ns)
                .replace("inventory-staging", &format!("{ns}-staging"));
            files.push((format!("inventory/{}", rel.display()), text));
        }
    }
    files
}

/// `kubectl apply -k DIR`; a kubectl older than 1.24 embeds a kustomize that knows no
/// components or `replicas:`, so the kubectl on PATH renders for it then.
fn apply_k(c: &Case, dir: &Path) {
    if kubectl_bin::minor() >= 24 {
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
fn the_demo_overlay_is_in_sync_and_its_drift_is_accepted_into_the_overlay_and_reverted() {
    let Some(c) = Case::new("kustomize", inventory) else {
        return;
    };
    apply_k(&c, &c.repo.path(OVERLAY));
    c.rolled_out();
    let check = |format: &str| c.kdrift_ns(&["check", "--overlay", OVERLAY, "-o", format]);

    let clean = check("json");
    assert_eq!(clean.code, 0, "{clean:?}");
    let report = clean.json();
    let objects = report["objects"].as_array().unwrap();
    assert!(
        objects.iter().all(|o| o["rendered_by"]
            .as_str()
            .is_some_and(|r| r.ends_with("overlays/prod/kustomization.yaml"))),
        "{report}"
    );
    let kinds: Vec<&str> = objects
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    for kind in ["Deployment", "Service", "ServiceAccount", "ConfigMap"] {
        assert!(kinds.contains(&kind), "{kind} compared: {kinds:?}");
    }

    c.ok(&["scale", "deployment/inventory", "--replicas=5"]);
    c.ok(&[
        "set",
        "image",
        "deployment/inventory",
        "inventory=registry.example/inventory/api:2.3.2",
    ]);
    let drift = check("json");
    assert_eq!(drift.code, 1, "{drift:?}");
    let key = format!("deployment/{}/inventory", c.ns());
    let fields: Vec<[String; 6]> = drifted_fields(&drift.json());
    let expected: Vec<[String; 6]> = vec![
        [
            &key,
            "changed",
            "spec.replicas",
            "kubectl",
            "Update",
            "scale",
        ],
        [
            &key,
            "changed",
            "spec.template.spec.containers[name=inventory].image",
            "kubectl-set",
            "Update",
            "-",
        ],
    ]
    .into_iter()
    .map(|f| f.map(String::from))
    .collect();
    assert_eq!(fields, expected);
    let text = check("text");
    assert!(
        text.stdout
            .contains("overlays/prod/kustomization.yaml:10 (replicas) · kubectl"),
        "the overlay's replicas entry is the source: {text:?}"
    );

    let accept = c.kdrift_ns(&["accept", "deploy/inventory", "--overlay", OVERLAY]);
    assert_eq!(accept.code, 0, "{accept:?}");
    let changed = c.repo.git(&["show", "--format=", "--name-only", "HEAD"]);
    assert_eq!(
        changed.trim(),
        format!("{OVERLAY}/kustomization.yaml"),
        "only the overlay's file"
    );
    let overlay = c.repo.read(&format!("{OVERLAY}/kustomization.yaml"));
    assert!(
        overlay.contains("count: 5") && overlay.contains("newTag: \"2.3.2\""),
        "{overlay}"
    );
    let after = check("text");
    assert_eq!(after.code, 0, "in sync after the accept: {after:?}");

    c.repo.git(&["reset", "--quiet", "--hard", "HEAD~1"]);
    assert_eq!(check("text").code, 1, "git put back");
    let revert = c.kdrift_ns(&["revert", "deploy/inventory", "--overlay", OVERLAY, "--yes"]);
    assert_eq!(revert.code, 0, "{revert:?}");
    let again = check("text");
    assert_eq!(again.code, 0, "in sync after the revert: {again:?}");
    let live = c.ok(&[
        "get",
        "deployment/inventory",
        "-o",
        "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image}",
    ]);
    assert_eq!(live, "3 registry.example/inventory/api:2.3.1");
}
