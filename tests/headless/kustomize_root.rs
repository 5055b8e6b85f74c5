//! A folder that is itself a kustomization, given as `--manifests`, is rendered as `kubectl
//! apply -k DIR` renders it: the one root. The kustomizations below it that it does not use
//! (test variants, as GoogleCloudPlatform/microservices-demo's `kustomize/tests/*`) are noted,
//! not rendered as roots of their own (which define the same objects twice over).
//! Fixture: `testdata/kustomize-root` (README there).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::headless_util;

use std::path::Path;

use common::Cluster;
use headless_util::{Repo, kdrift};

fn fixture() -> Repo {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kustomize-root");
    let files = files_below(&dir, &dir);
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    Repo::with_files(&borrowed)
}

/// Every file below `dir`, by its path relative to `top`, with its text.
fn files_below(top: &Path, dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_below(top, &path));
        } else {
            let rel = path.strip_prefix(top).unwrap().display().to_string();
            out.push((rel, std::fs::read_to_string(&path).unwrap()));
        }
    }
    out
}

#[test]
fn a_folder_that_is_a_kustomization_is_the_one_root_and_its_test_variants_are_noted() {
    let c = Cluster::start_with(false);
    let repo = fixture();
    c.ok(&["create", "namespace", "shop"]);
    c.apply_k(repo.root());

    let check = kdrift(
        &c,
        &repo,
        &["check", "-A", "--manifests", ".", "-o", "json"],
    );
    assert_eq!(check.code, 0, "in sync after kubectl apply -k: {check:?}");
    let report = check.json();
    assert_eq!(
        report["kustomize"]["roots"],
        serde_json::json!(["."]),
        "{report}"
    );
    let mut keys: Vec<&str> = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["key"].as_str().unwrap())
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["deployment/shop/web", "service/shop/web"],
        "{report}"
    );
    let notes: Vec<String> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.to_string())
        .collect();
    for variant in ["tests/with-policy", "tests/with-policy-and-replicas"] {
        assert!(
            notes
                .iter()
                .any(|n| n.contains(&format!("{variant}/kustomization.yaml"))
                    && n.contains("not rendered")
                    && n.contains(&format!("--overlay {variant}"))),
            "{variant} is noted: {notes:#?}"
        );
    }
    assert!(
        !notes.iter().any(|n| n.contains("also defined")),
        "no duplicates: {notes:#?}"
    );

    // A variant is still there to choose.
    let variant = kdrift(
        &c,
        &repo,
        &[
            "check",
            "-A",
            "--overlay",
            "tests/with-policy",
            "-o",
            "json",
        ],
    );
    let report = variant.json();
    assert_eq!(
        report["kustomize"]["roots"],
        serde_json::json!(["tests/with-policy"]),
        "{report}"
    );
    assert!(
        report["objects"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["key"] == "networkpolicy/default/web" && o["status"] == "missing"),
        "{report}"
    );
}
