//! Kustomize roots headless, against the demo cluster driven by the real kubectl: after
//! `kubectl apply -k` of the prod overlay, `kdrift check --overlay overlays/prod` is green (the
//! overlay's namespace, replicas, images, patch, component and hashed ConfigMap are what is
//! compared, not the raw base); every root without `--overlay` reports the staging overlay as
//! missing; a `kubectl scale` of the prod Deployment is drift whose source is the overlay's
//! `replicas:` entry; revert applies the rendered object. Accept writes where each value is set:
//! the overlay's entries and patch, a new patch for a field no file sets, never the base the
//! other overlay shares.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::demo_helm;
use crate::headless_util;
use crate::kustomize_fixture;

use common::Cluster;
use headless_util::{Repo, drifted_fields, kdrift, keys_with_status};
use kustomize_fixture::DEPLOYMENT;

fn repo() -> Repo {
    Repo::with_files(kustomize_fixture::FILES)
}

#[test]
fn an_applied_overlay_is_in_sync_and_a_scale_of_it_is_drift() {
    let c = Cluster::start_with(false);
    let repo = repo();
    c.ok(&["create", "namespace", "prod"]);
    c.apply_k(&repo.path("overlays/prod"));

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
        report["notes"]
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

    // The check names the overlay's replicas entry as the value's source.
    let text = kdrift(&c, &repo, &["check", "-A", "--overlay", "overlays/prod"]);
    assert!(
        text.stdout
            .contains("overlays/prod/kustomization.yaml:6 (replicas) · kubectl"),
        "{text:?}"
    );
    let report = drift.json();
    let item = &report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["status"] == "drifted")
        .unwrap()["items"][0];
    assert_eq!(item["source"]["what"], "replicas", "{item}");
    assert_eq!(item["source"]["line"], 6, "{item}");

    // Revert applies the rendered object: 4 replicas, and the check is green again.
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

/// The demo's kustomize application (demo/inventory): the seed's copy of what each overlay
/// renders is what kustomize renders from demo/ today, and `kubectl apply -k` of each overlay
/// against the seeded demo cluster changes nothing — the seed created exactly what it creates.
#[test]
fn the_demo_overlays_are_seeded_as_kubectl_apply_k_creates_them() {
    let c = Cluster::start();
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo");
    let documents = |text: &str| -> Vec<serde_json::Value> {
        serde_yaml::Deserializer::from_str(text)
            .map(|d| serde::Deserialize::deserialize(d).unwrap())
            .filter(|v: &serde_json::Value| !v.is_null())
            .collect()
    };
    assert_eq!(kdrift::sim::scenario::manifests::DEMO_RENDERED.len(), 2);
    for (root, seeded) in kdrift::sim::scenario::manifests::DEMO_RENDERED {
        let dir = demo.join(root);
        assert_eq!(
            documents(&render(&dir)),
            documents(seeded),
            "{root}: the seed's rendering is stale; render it again into crates/kdrift-sim/src/scenario/rendered/"
        );
        let applied = c.apply_k(&dir);
        let lines: Vec<&str> = applied.lines().collect();
        assert_eq!(lines.len(), 5, "{applied}");
        assert!(lines.iter().all(|l| l.ends_with(" unchanged")), "{applied}");
    }
    let demo_check = std::process::Command::new(env!("CARGO_BIN_EXE_kdrift"))
        .args(["check", "-A", "--manifests", demo.to_str().unwrap()])
        .env("KUBECONFIG", &c.kubeconfig)
        .env("KDRIFT_HELM", demo_helm::kdrift_helm())
        .output()
        .unwrap();
    assert_eq!(
        demo_check.status.code(),
        Some(demo_helm::expected(0)),
        "{demo_check:?}"
    );
}

/// Renders `dir` with the kubectl on PATH.
fn render(dir: &std::path::Path) -> String {
    let out = std::process::Command::new("kubectl")
        .args(["kustomize", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn accept_writes_each_value_where_the_overlay_sets_it_and_nothing_the_other_overlay_reads() {
    let c = Cluster::start_with(false);
    let repo = repo();
    c.ok(&["create", "namespace", "prod"]);
    c.apply_k(&repo.path("overlays/prod"));
    let staging_before = render(&repo.path("overlays/staging"));
    c.ok(&["scale", "deployment/web", "-n", "prod", "--replicas=6"]);
    c.ok(&[
        "set",
        "image",
        "deployment/web",
        "web=nginx:1.28",
        "-n",
        "prod",
    ]);
    c.ok(&[
        "set",
        "env",
        "deployment/web",
        "REGION=us",
        "EXTRA=1",
        "-n",
        "prod",
    ]);

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
    assert_eq!(accept.code, 0, "{accept:?}");
    assert!(accept.stdout.contains("proved by rendering"), "{accept:?}");
    // One commit, of the prod overlay's files only.
    let changed = repo.git(&["diff", "--name-only", &head, "HEAD"]);
    assert_eq!(
        changed.lines().collect::<Vec<_>>(),
        [
            "overlays/prod/kustomization.yaml",
            "overlays/prod/patch.yaml"
        ],
        "{accept:?}"
    );
    assert_eq!(
        repo.git(&["rev-list", "--count", &format!("{head}..HEAD")])
            .trim(),
        "1"
    );
    let kustomization = repo.read("overlays/prod/kustomization.yaml");
    assert!(kustomization.contains("count: 6"), "{kustomization}");
    assert!(
        kustomization.contains("newTag: \"1.28\""),
        "{kustomization}"
    );
    let patch = repo.read("overlays/prod/patch.yaml");
    assert!(
        patch.contains("REGION, value: us") && patch.contains("EXTRA"),
        "{patch}"
    );
    // The overlay now renders as live; the staging overlay exactly as before.
    let check = kdrift(&c, &repo, &["check", "-A", "--overlay", "overlays/prod"]);
    assert_eq!(check.code, 0, "{check:?}");
    assert_eq!(render(&repo.path("overlays/staging")), staging_before);
    assert_eq!(repo.read("base/deployment.yaml"), DEPLOYMENT);

    // Staging has no patch: an env var added live goes into a new patch file of its own.
    c.ok(&["create", "namespace", "staging"]);
    c.apply_k(&repo.path("overlays/staging"));
    c.ok(&[
        "set",
        "env",
        "deployment/stg-web",
        "DEBUG=1",
        "-n",
        "staging",
    ]);
    let head = repo.head();
    let accept = kdrift(
        &c,
        &repo,
        &[
            "accept",
            "deploy/stg-web",
            "-n",
            "staging",
            "--overlay",
            "overlays/staging",
        ],
    );
    assert_eq!(accept.code, 0, "{accept:?}");
    let changed = repo.git(&["diff", "--name-only", &head, "HEAD"]);
    assert_eq!(
        changed.lines().collect::<Vec<_>>(),
        [
            "overlays/staging/kustomization.yaml",
            "overlays/staging/web-deployment-patch.yaml"
        ],
        "{accept:?}"
    );
    let patch = repo.read("overlays/staging/web-deployment-patch.yaml");
    assert!(
        patch.contains("name: web\n") && patch.contains("DEBUG"),
        "{patch}"
    );
    assert!(
        repo.read("overlays/staging/kustomization.yaml")
            .contains("- path: web-deployment-patch.yaml"),
        "{accept:?}"
    );
    let check = kdrift(&c, &repo, &["check", "-A", "--overlay", "overlays/staging"]);
    assert_eq!(check.code, 0, "{check:?}");
    assert_eq!(repo.read("base/deployment.yaml"), DEPLOYMENT);
}

#[test]
fn a_value_a_shared_component_sets_is_accepted_into_the_overlays_own_patch() {
    let component = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: web\n    spec:\n      template:\n        spec:\n          containers:\n          - name: web\n            env:\n            - name: BRAND\n              value: plain\n";
    let files: &[(&str, &str)] = &[
        ("base/deployment.yaml", DEPLOYMENT),
        (
            "base/kustomization.yaml",
            "resources:\n  - deployment.yaml\n",
        ),
        ("components/brand/kustomization.yaml", component),
        (
            "overlays/a/kustomization.yaml",
            "namespace: a\nresources:\n  - ../../base\ncomponents:\n  - ../../components/brand\n",
        ),
        (
            "overlays/b/kustomization.yaml",
            "namespace: b\nresources:\n  - ../../base\ncomponents:\n  - ../../components/brand\n",
        ),
    ];
    let c = Cluster::start_with(false);
    let repo = Repo::with_files(files);
    c.ok(&["create", "namespace", "a"]);
    c.apply_k(&repo.path("overlays/a"));
    let b_before = render(&repo.path("overlays/b"));
    c.ok(&["set", "env", "deployment/web", "BRAND=fancy", "-n", "a"]);

    let check = kdrift(&c, &repo, &["check", "-A", "--overlay", "overlays/a"]);
    assert!(
        check
            .stdout
            .contains("components/brand/kustomization.yaml:16 (patch)"),
        "the inline patch's line is named: {check:?}"
    );
    let head = repo.head();
    let accept = kdrift(
        &c,
        &repo,
        &["accept", "deploy/web", "-n", "a", "--overlay", "overlays/a"],
    );
    assert_eq!(accept.code, 0, "{accept:?}");
    let changed = repo.git(&["diff", "--name-only", &head, "HEAD"]);
    assert_eq!(
        changed.lines().collect::<Vec<_>>(),
        [
            "overlays/a/kustomization.yaml",
            "overlays/a/web-deployment-patch.yaml"
        ],
        "the component overlay b shares is not edited: {accept:?}"
    );
    assert_eq!(repo.read("components/brand/kustomization.yaml"), component);
    assert_eq!(render(&repo.path("overlays/b")), b_before);
    let check = kdrift(&c, &repo, &["check", "-A", "--overlay", "overlays/a"]);
    assert_eq!(check.code, 0, "{check:?}");
}

/// Issue 12, point 8: a value of a generated ConfigMap accepted. The base's generator is shared
/// with staging, so prod's own kustomization merges the value (`behavior: merge`); kustomize
/// then names the ConfigMap by its new content: the new name is reported, the Deployment that
/// refers to it moves with it (the proof allows exactly that), and after `kubectl apply -k`
/// the overlay is in sync. Staging renders as before.
#[test]
fn an_accepted_generator_value_renames_its_configmap_and_says_so() {
    let c = Cluster::start_with(false);
    let repo = repo();
    c.ok(&["create", "namespace", "prod"]);
    c.apply_k(&repo.path("overlays/prod"));
    let names = c.ok(&["-n", "prod", "get", "configmap", "-o", "name"]);
    let old = names
        .lines()
        .find(|l| l.starts_with("configmap/web-config-"))
        .unwrap()
        .to_owned();
    c.ok(&[
        "-n",
        "prod",
        "patch",
        &old,
        "-p",
        r#"{"data":{"MODE":"slow"}}"#,
    ]);
    let staging = render(&repo.path("overlays/staging"));

    let run = kdrift(
        &c,
        &repo,
        &["accept", &old, "-n", "prod", "--overlay", "overlays/prod"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let old_name = old.trim_start_matches("configmap/");
    assert!(
        run.stdout.contains(&format!("(was {old_name})"))
            && run.stdout.contains("with the edit it is web-config-")
            && run
                .stdout
                .contains("deployment/prod/web refers to it by the new name"),
        "{}",
        run.stdout
    );
    let kustomization = repo.read("overlays/prod/kustomization.yaml");
    assert!(
        kustomization.ends_with(
            "configMapGenerator:\n  - name: web-config\n    behavior: merge\n    literals:\n      - MODE=slow\n"
        ),
        "{kustomization}"
    );
    assert_eq!(render(&repo.path("overlays/staging")), staging);
    let prod = render(&repo.path("overlays/prod"));
    assert!(
        !prod.contains(old_name) && prod.contains("MODE: slow"),
        "{prod}"
    );

    c.apply_k(&repo.path("overlays/prod"));
    let after = kdrift(
        &c,
        &repo,
        &["check", "-n", "prod", "--overlay", "overlays/prod"],
    );
    assert_eq!(after.code, 0, "{after:?}");
}
