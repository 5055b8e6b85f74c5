//! `kdrift changes` and `kdrift blame` against the demo cluster, after the writes an operator
//! makes with the real kubectl: each is on the timeline with its manager and fields, and blame
//! puts each on its field.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::changes_util;
use crate::common;
use crate::headless_util;

use changes_util::{blamed, line};
use common::Cluster;
use headless_util::{Repo, kdrift};

#[test]
fn changes_and_blame_name_each_write_with_its_manager_and_fields() {
    let c = Cluster::start();
    let repo = Repo::demo();

    // The seeded frontend's first ReplicaSet exists before its image changes: were the image
    // set first, the controller's first revision would already carry it (one revision, no
    // rollout), as on a real server.
    c.ok(&[
        "rollout",
        "status",
        "deployment/frontend",
        "-n",
        "shop",
        "--timeout=60s",
    ]);
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    c.ok(&[
        "set",
        "image",
        "deployment/frontend",
        "-n",
        "shop",
        "frontend=registry.example/shop/frontend:9.9.9",
    ]);
    // The deployment controller makes the new revision's ReplicaSet on its own time: the
    // timeline's rollout line is read once it exists.
    c.ok(&[
        "rollout",
        "status",
        "deployment/frontend",
        "-n",
        "shop",
        "--timeout=60s",
    ]);
    c.ok(&["label", "deployment/cart", "-n", "shop", "oncall=night"]);
    c.ok(&[
        "patch",
        "deployment/cart",
        "-n",
        "shop",
        "--field-manager=hotfixer",
        "--type=merge",
        "-p",
        r#"{"spec":{"minReadySeconds":7}}"#,
    ]);

    let run = kdrift(
        &c,
        &repo,
        &["changes", "--since", "10m", "-A", "-o", "json"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let lines = run.json();
    let lines = lines.as_array().unwrap();
    let cart = "deployment/shop/cart";
    let scale = line(lines, cart, "kubectl (scale) Update", ".spec.replicas");
    assert_eq!(scale["git"], "drifted", "{scale}");
    assert!(
        scale["what"].as_str().unwrap().contains("→ 5"),
        "old → new from the manifest: {scale}"
    );
    let label = line(
        lines,
        cart,
        "kubectl-label Update",
        ".metadata.labels.oncall",
    );
    assert_eq!(label["git"], "drifted", "{label}");
    assert!(label["time"].is_string(), "{label}");
    let patch = line(lines, cart, "hotfixer Update", ".spec.minReadySeconds");
    assert_eq!(patch["git"], "drifted", "{patch}");
    let image = line(
        lines,
        "deployment/shop/frontend",
        "kubectl-set Update",
        ".spec.template.spec.containers[name=\"frontend\"].image",
    );
    assert!(
        image["what"].as_str().unwrap().contains("frontend:9.9.9"),
        "{image}"
    );
    // The rollout the new image started, with what changed in the template.
    let rollout = line(
        lines,
        "deployment/shop/frontend",
        "deployment-controller",
        "rollout to revision 2",
    );
    assert!(
        rollout["what"]
            .as_str()
            .unwrap()
            .contains("→ registry.example/shop/frontend:9.9.9"),
        "{rollout}"
    );
    // Newest first.
    let times: Vec<&str> = lines.iter().filter_map(|l| l["time"].as_str()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");

    let run = kdrift(
        &c,
        &repo,
        &["blame", "deploy/cart", "-n", "shop", "-o", "json"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let blame = run.json();
    let (owners, git) = blamed(&blame, ".spec.replicas");
    assert_eq!(owners[0], "kubectl (scale)", "{owners:?}");
    assert_eq!(git, "drifted");
    assert_eq!(
        blamed(&blame, ".metadata.labels.oncall"),
        (vec!["kubectl-label".to_owned()], "drifted".to_owned())
    );
    assert_eq!(
        blamed(&blame, ".spec.minReadySeconds"),
        (vec!["hotfixer".to_owned()], "drifted".to_owned())
    );
    let (_, git) = blamed(&blame, ".metadata.labels.app.kubernetes.io/name");
    assert_eq!(git, "in sync");

    let run = kdrift(
        &c,
        &repo,
        &["blame", "deploy/frontend", "-n", "shop", "-o", "json"],
    );
    let (owners, git) = blamed(
        &run.json(),
        ".spec.template.spec.containers[name=\"frontend\"].image",
    );
    assert_eq!(owners[0], "kubectl-set", "{owners:?}");
    assert_eq!(git, "drifted");

    let text = kdrift(&c, &repo, &["blame", "deploy/cart", "-n", "shop"]);
    assert!(
        text.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("replicas: 5")
                && l.contains("# kubectl (scale) Update")),
        "{}",
        text.stdout
    );

    let bad = kdrift(&c, &repo, &["changes", "--since", "10x"]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(bad.stderr.contains("unknown unit \"x\""), "{bad:?}");
}

#[test]
fn changes_lists_statefulset_and_daemonset_revisions_and_the_flux_sync() {
    let repo = Repo::demo();
    let c = Cluster::start_gitops(repo.dir.path(), std::time::Duration::from_secs(3600));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let run = kdrift(&c, &repo, &["changes", "-A", "-o", "json"]);
        assert_eq!(run.code, 0, "{run:?}");
        let lines = run.json().as_array().unwrap().clone();
        let has = |object: &str, who: &str, what: &str| {
            lines.iter().any(|l| {
                l["object"] == object
                    && l["who"] == who
                    && l["what"].as_str().unwrap().contains(what)
            })
        };
        let found = [
            has(
                "statefulset/payments/ledger-db",
                "statefulset-controller",
                "first revision 1 (controllerrevision/payments/ledger-db-",
            ),
            has(
                "daemonset/platform/node-agent",
                "daemonset-controller",
                "first revision 1 (controllerrevision/platform/node-agent-",
            ),
            has(
                "kustomization/flux-system/platform",
                "kustomize-controller",
                "applied revision main@sha1:",
            ),
        ];
        if found.iter().all(|f| *f) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{found:?}:\n{}",
            serde_json::to_string_pretty(&lines).unwrap()
        );
        std::thread::sleep(std::time::Duration::from_secs(2));
    }
}

/// Issue 46: after `kubectl rollout undo`, the rollback is the newest rollout line, dated when it
/// happened, named a rollback, and the rollout it undid keeps its own predecessor (not "first
/// revision 2"); each says whether git agrees with the template it put live.
#[test]
fn a_rollback_is_dated_when_it_happened_and_follows_the_rollout_it_undoes() {
    let c = Cluster::start();
    let repo = Repo::demo();
    let status = [
        "rollout",
        "status",
        "deployment/frontend",
        "-n",
        "shop",
        "--timeout=60s",
    ];
    c.ok(&status);
    // A second apart, so that the three rollouts have three times (the API's are in seconds).
    std::thread::sleep(std::time::Duration::from_millis(1100));
    c.ok(&[
        "set",
        "image",
        "deployment/frontend",
        "-n",
        "shop",
        "frontend=registry.example/shop/frontend:bad-build",
    ]);
    c.ok(&status);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    c.ok(&["rollout", "undo", "deployment/frontend", "-n", "shop"]);
    c.ok(&status);

    let run = kdrift(&c, &repo, &["changes", "--since", "1m", "-A", "-o", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    changes_util::assert_rolled_back(
        &run.json(),
        "deployment/shop/frontend",
        "registry.example/shop/frontend:bad-build",
    );
}

/// Issue 46: a Secret's values are shown by one rule everywhere: `blame` (text and JSON) shows
/// the keyed digests `check` shows, never the base64 or the text; and `changes` digests a value
/// as `check` does, so the lines of one change can be matched up.
#[test]
fn a_secret_is_masked_alike_in_blame_changes_and_check() {
    use base64::Engine;
    let c = Cluster::start();
    let repo = Repo::demo();
    let new_password = "hotfix-password-4711";
    let encoded = base64::engine::general_purpose::STANDARD.encode(new_password);
    c.ok(&[
        "patch",
        "secret/ledger-db",
        "-n",
        "payments",
        "--type",
        "merge",
        "-p",
        &format!(r#"{{"data":{{"password":"{encoded}"}}}}"#),
    ]);
    let check = kdrift(&c, &repo, &["check", "-n", "payments", "-o", "json"]);
    assert_eq!(check.code, 1, "{check:?}");
    let report = check.json();
    let secret = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["key"] == "secret/payments/ledger-db")
        .unwrap();
    let digest = secret["items"][0]["live"].as_str().unwrap().to_owned();
    assert!(digest.starts_with("hmac-sha256:"), "{secret}");

    for output in ["text", "json"] {
        let blame = kdrift(
            &c,
            &repo,
            &["blame", "secret/ledger-db", "-n", "payments", "-o", output],
        );
        assert_eq!(blame.code, 0, "{blame:?}");
        for value in [new_password, encoded.as_str(), "demo-only-not-a-secret"] {
            assert!(
                !blame.stdout.contains(value),
                "{output} shows {value}: {blame:?}"
            );
        }
        assert!(blame.stdout.contains(&digest), "{output}: {blame:?}");
    }

    let changes = kdrift(&c, &repo, &["changes", "-n", "payments", "-o", "json"]);
    assert_eq!(changes.code, 0, "{changes:?}");
    assert!(!changes.stdout.contains(&encoded), "{changes:?}");
    let line = line(
        changes.json().as_array().unwrap(),
        "secret/payments/ledger-db",
        "kubectl-patch Update",
        ".data.password",
    )
    .clone();
    assert!(
        line["what"].as_str().unwrap().contains(&digest),
        "the digest check shows ({digest}): {line}"
    );
}

/// Issue 46: a server-side apply that took ownership of a whole Deployment but changed one field
/// names that field first (and `-o json` lists every field, and the writer as manager and
/// operation); the control plane's status writes and Helm's release records are bookkeeping,
/// left out unless `--bookkeeping` asks for them.
#[test]
fn an_apply_of_many_fields_names_the_changed_one_first_and_bookkeeping_is_off() {
    let c = Cluster::start();
    let repo = Repo::demo();
    let cart = std::fs::read_to_string(repo.path("shop/cart.yaml")).unwrap();
    let deployment = cart.split("\n---\n").next().unwrap();
    let file = c.file(
        "cart.yaml",
        &deployment.replace("replicas: 2", "replicas: 3"),
    );
    c.ok(&[
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=release-bot",
        "-f",
        file.to_str().unwrap(),
    ]);
    let run = kdrift(&c, &repo, &["changes", "-A", "-o", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let lines = run.json();
    let lines = lines.as_array().unwrap();
    let apply = line(
        lines,
        "deployment/shop/cart",
        "release-bot Apply",
        ".spec.replicas",
    );
    assert!(
        apply["what"]
            .as_str()
            .unwrap()
            .starts_with(".spec.replicas: 2 → 3, "),
        "{apply}"
    );
    let fields = apply["fields"].as_array().unwrap();
    assert!(fields.len() > 10, "{apply}");
    assert_eq!(fields[0], ".spec.replicas: 2 → 3", "{apply}");
    assert_eq!(apply["manager"], "release-bot", "{apply}");
    assert_eq!(apply["operation"], "Apply", "{apply}");
    // The control plane's status writes and Helm's records are not on the timeline...
    let bookkeeping = |l: &&serde_json::Value| {
        l["who"]
            .as_str()
            .unwrap()
            .starts_with("kube-controller-manager (status)")
            || l["object"]
                .as_str()
                .unwrap()
                .starts_with("secret/search/sh.helm.release.v1.")
    };
    assert!(!lines.iter().any(|l| bookkeeping(&l)), "{run:?}");
    // ...unless asked for.
    let run = kdrift(&c, &repo, &["changes", "-A", "-o", "json", "--bookkeeping"]);
    let all = run.json();
    let all = all.as_array().unwrap();
    assert!(
        all.iter().filter(|l| bookkeeping(l)).count() >= 2,
        "{run:?}"
    );
}
