//! Every kind of an application repository, headless: applied with the real kubectl to an empty
//! demo cluster, `kdrift check` is green; after a `kubectl edit cm`, a `kubectl patch svc`, a
//! `kubectl delete sa` and a rotated Secret it names exactly those fields (and the missing
//! ServiceAccount) with their managers, and no secret value appears in any output, log or
//! commit. Bad input — a kind the cluster does not serve, an OpenAPI that cannot be read, a kind
//! the user may not list, a Secret that is not base64 — is named, and the rest still compared.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::headless_util;

use std::path::Path;

use common::Cluster;
use headless_util::{Repo, Run, drifted_fields, kdrift, keys_with_status};
use kdrift::sim::faults::OpenApiFault;

/// The demo repository applied to an empty cluster with kubectl, as a team would apply theirs.
fn applied() -> (Cluster, Repo) {
    let c = Cluster::start_with(false);
    let repo = Repo::demo();
    let root = repo.root().to_str().unwrap().to_owned();
    c.ok(&["apply", "-f", &format!("{root}/crds")]);
    c.ok(&[
        "wait",
        "--for",
        "condition=established",
        "crd/backuppolicies.ops.example.com",
        "--timeout=30s",
    ]);
    c.ok(&["apply", "-f", &format!("{root}/namespaces.yaml")]);
    apply_demo(&c, repo.root(), &[]);
    (c, repo)
}

/// The demo repository applied as a team applies it: `kubectl apply -R -f` of each folder of
/// plain YAML, and each overlay of the kustomize application (demo/inventory) rendered by the
/// kubectl on PATH (Debian's kubectl 1.20, CI's second run, embeds a kustomize too old for
/// it) and applied with the kubectl under test. `extra` goes to every apply.
fn apply_demo(c: &Cluster, root: &std::path::Path, extra: &[&str]) {
    let apply = |args: &[&str]| {
        let mut all = vec!["apply"];
        all.extend_from_slice(extra);
        all.extend_from_slice(args);
        let out = c.kubectl(&all);
        assert!(
            out.status.success(),
            "kubectl {all:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    for entry in std::fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        // demo/search is a Helm chart: helm installs it (the demo cluster's seed does), not kubectl.
        if name != "inventory" && !name.starts_with('.') && !path.join("Chart.yaml").is_file() {
            apply(&["-R", "-f", path.to_str().unwrap()]);
        }
    }
    for overlay in ["staging", "prod"] {
        let dir = root.join("inventory/overlays").join(overlay);
        let out = std::process::Command::new("kubectl")
            .args(["kustomize", dir.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let file = c.file(
            &format!("inventory-{overlay}.yaml"),
            &String::from_utf8(out.stdout).unwrap(),
        );
        apply(&["-f", file.to_str().unwrap()]);
    }
}

/// Every kind and the count of its objects in a check report.
fn kinds(report: &serde_json::Value) -> std::collections::BTreeMap<String, usize> {
    let mut out = std::collections::BTreeMap::new();
    for object in report["objects"].as_array().unwrap() {
        *out.entry(object["kind"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    out
}

const PLANTED: &str = "planted-s3cret-Zq7";

/// Neither the secret's text nor its base64 anywhere in `text`.
fn assert_no_secret(what: &str, text: &str) {
    use base64::Engine;
    use sha2::Digest;
    for value in [PLANTED, "demo-only-not-a-secret"] {
        let encoded = base64::engine::general_purpose::STANDARD.encode(value);
        assert!(
            !text.contains(value) && !text.contains(&encoded),
            "{what} shows a secret value:\n{text}"
        );
        // Nor its public SHA-256, which a table of known values reverses.
        let public: String = sha2::Sha256::digest(value.as_bytes())
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect();
        assert!(
            !text.contains(&public),
            "{what} shows the unkeyed digest of a secret value:\n{text}"
        );
    }
}

fn all_of(run: &Run) -> String {
    format!("{}\n{}", run.stdout, run.stderr)
}

#[test]
fn an_application_repository_is_compared_kind_by_kind_and_no_secret_leaves() {
    let (c, repo) = applied();
    let clean = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(clean.code, 0, "{clean:?}");
    let report = clean.json();
    let counted = kinds(&report);
    for (kind, at_least) in [
        ("Deployment", 11),
        ("Service", 10),
        ("ServiceAccount", 11),
        ("ConfigMap", 2),
        ("Secret", 1),
        ("HorizontalPodAutoscaler", 1),
        ("Ingress", 1),
        ("PodDisruptionBudget", 1),
        ("CronJob", 1),
        ("ResourceQuota", 1),
        ("Namespace", 3),
        ("CustomResourceDefinition", 1),
        ("BackupPolicy", 1),
    ] {
        assert!(
            counted.get(kind).is_some_and(|n| *n >= at_least),
            "{kind}: {counted:?}"
        );
    }

    // The on-call night.
    let edited = c.edit(
        "configmap/frontend-config",
        "shop",
        "sed -i 's/FEATURE_NEW_CHECKOUT: \"off\"/FEATURE_NEW_CHECKOUT: \"on\"/' \"$1\"",
    );
    assert!(edited.status.success(), "{edited:?}");
    c.ok(&[
        "patch",
        "svc/frontend",
        "-n",
        "shop",
        "-p",
        r#"{"spec":{"type":"NodePort"}}"#,
    ]);
    c.ok(&["delete", "sa/cart", "-n", "shop"]);
    c.ok(&[
        "patch",
        "secret/ledger-db",
        "-n",
        "payments",
        "-p",
        &format!(r#"{{"stringData":{{"password":"{PLANTED}"}}}}"#),
    ]);

    // The NodePort's externalTrafficPolicy: Cluster is what the server fills in for that type:
    // the type is the drift, not the default that follows it.
    let drifted = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(drifted.code, 1, "{drifted:?}");
    let report = drifted.json();
    let named: Vec<(String, String, String)> = drifted_fields(&report)
        .into_iter()
        .map(|[key, _, path, manager, _, _]| (key, path, manager))
        .collect();
    assert_eq!(
        named,
        [
            (
                "configmap/shop/frontend-config".to_owned(),
                "data.FEATURE_NEW_CHECKOUT".to_owned(),
                "kubectl-edit".to_owned()
            ),
            (
                "secret/payments/ledger-db".to_owned(),
                "data.password".to_owned(),
                "kubectl-patch".to_owned()
            ),
            (
                "service/shop/frontend".to_owned(),
                "spec.type".to_owned(),
                "kubectl-patch".to_owned()
            ),
        ],
        "{drifted:?}"
    );
    let missing = keys_with_status(&report, "missing");
    assert_eq!(missing, ["serviceaccount/shop/cart"], "{drifted:?}");

    // No secret value in any output: the check (text and JSON), the diff, the refused accept,
    // the revert's preview, git. (The headless commands write no log; the live view's log is
    // searched in tests/live/kinds.rs.)
    let text = kdrift(&c, &repo, &["check", "-A"]);
    assert!(
        text.stdout
            .contains("secret/payments/ledger-db  data.password  hmac-sha256:"),
        "{text:?}"
    );
    assert_no_secret("check", &all_of(&text));
    // Keyed with the installation's key, made on first use in kdrift's state folder (0600): the
    // same value reads the same from run to run.
    let key = c.dir.path().join(".local/state/kdrift/secret-digest.key");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&key).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "{}", key.display());
    let again = kdrift(&c, &repo, &["check", "-A"]);
    let digest = |run: &Run| {
        run.stdout
            .lines()
            .find(|l| l.contains("data.password"))
            .map(|l| l.split("  ").nth(2).unwrap_or_default().to_owned())
    };
    assert_eq!(digest(&again), digest(&text), "{again:?}");
    assert_no_secret("check -o json", &all_of(&drifted));
    let diff = kdrift(&c, &repo, &["diff", "secret/ledger-db", "-n", "payments"]);
    assert_eq!(diff.code, 1, "{diff:?}");
    assert_no_secret("diff", &all_of(&diff));
    let accept = kdrift(&c, &repo, &["accept", "secret/ledger-db", "-n", "payments"]);
    assert_eq!(accept.code, 2, "{accept:?}");
    assert!(accept.stderr.contains("a Secret's value"), "{accept:?}");
    assert_no_secret("accept", &all_of(&accept));
    let preview = kdrift(
        &c,
        &repo,
        &["revert", "secret/ledger-db", "-n", "payments", "--dry-run"],
    );
    assert_eq!(preview.code, 0, "{preview:?}");
    assert!(
        preview.stdout.contains("password: hmac-sha256:"),
        "{preview:?}"
    );
    assert_no_secret("revert --dry-run", &all_of(&preview));

    // Settle: accept the ConfigMap and the Service into git, revert the Secret, apply the
    // ServiceAccount again. (The repository's own first commit holds its Secret manifest.)
    let before = repo.head();
    for target in ["cm/frontend-config", "svc/frontend"] {
        let run = kdrift(&c, &repo, &["accept", target, "-n", "shop"]);
        assert_eq!(run.code, 0, "{target}: {run:?}");
    }
    assert!(
        repo.read("shop/frontend.yaml")
            .contains("FEATURE_NEW_CHECKOUT: \"on\"")
    );
    let revert = kdrift(
        &c,
        &repo,
        &["revert", "secret/ledger-db", "-n", "payments", "--yes"],
    );
    assert_eq!(revert.code, 0, "{revert:?}");
    assert_no_secret("revert", &all_of(&revert));
    c.ok(&["apply", "-f", repo.path("shop/cart.yaml").to_str().unwrap()]);
    let settled = kdrift(&c, &repo, &["check", "-A"]);
    assert_eq!(settled.code, 0, "{settled:?}");
    let commits = repo.git(&["log", "-p", &format!("{before}..HEAD")]);
    assert_eq!(commits.matches("\ncommit ").count() + 1, 2, "{commits}");
    assert_no_secret("kdrift's commits", &commits);
}

#[test]
fn types_are_named_as_kubectl_names_them() {
    let (c, repo) = applied();
    for (target, namespace) in [
        ("cm/frontend-config", "shop"),
        ("configmap/frontend-config", "shop"),
        ("svc/frontend", "shop"),
        ("services/frontend", "shop"),
        ("sa/cart", "shop"),
        ("hpa/catalog", "shop"),
        ("ing/frontend", "shop"),
        ("pdb/payments-api", "payments"),
        ("cronjob/ledger-reconcile", "payments"),
        ("bp/ledger", "payments"),
        ("backuppolicies.ops.example.com/ledger", "payments"),
        ("ns/shop", "shop"),
        ("crd/backuppolicies.ops.example.com", "shop"),
    ] {
        let run = kdrift(&c, &repo, &["diff", target, "-n", namespace]);
        assert_eq!(run.code, 0, "{target}: {run:?}");
        assert!(run.stderr.contains("is in sync with"), "{target}: {run:?}");
    }
    let unknown = kdrift(&c, &repo, &["diff", "gadgets/x", "-n", "shop"]);
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(
        unknown
            .stderr
            .contains("the server doesn't have a resource type \"gadgets\""),
        "{unknown:?}"
    );
}

#[test]
fn a_kind_the_cluster_does_not_serve_is_a_problem_and_the_rest_is_compared() {
    let c = Cluster::start();
    let repo = Repo::demo();
    // The seeded demo has the definition; a manifest of another group has none.
    repo.write(
        "shop/widget.yaml",
        "# A widget of a definition nobody installed.\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: shop\nspec:\n  size: 3\n",
    );
    // A cluster-scoped kind of a definition not installed: its scope is unknown, so no
    // namespace is made up for it (not `clusterissuer/default/self-signed`).
    repo.write(
        "issuer.yaml",
        "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: self-signed\nspec:\n  selfSigned: {}\n",
    );
    let run = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(run.code, 2, "{run:?}");
    let report = run.json();
    let problems = report["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 2, "{run:?}");
    assert!(
        problems[0]["message"]
            .as_str()
            .unwrap()
            .contains(": clusterissuer/self-signed: no kind ClusterIssuer in cert-manager.io/v1"),
        "{run:?}"
    );
    let problems = &problems[1..];
    assert_eq!(
        problems[0]["file"],
        repo.path("shop/widget.yaml").display().to_string()
    );
    assert_eq!(problems[0]["line"], 2);
    assert!(
        problems[0]["message"].as_str().unwrap().contains(
            "no kind Widget in example.com/v1 on this cluster — is its CustomResourceDefinition installed?"
        ),
        "{run:?}"
    );
    assert_eq!(report["summary"]["drifted"], 0, "{run:?}");
    assert!(
        report["summary"]["in_sync"].as_u64().unwrap() > 40,
        "{run:?}"
    );
    let text = kdrift(&c, &repo, &["check", "-A"]);
    assert!(
        text.stdout.contains(&format!(
            "problem: {}:2: widget/shop/w1: no kind Widget in example.com/v1",
            repo.path("shop/widget.yaml").display()
        )),
        "{text:?}"
    );
}

#[test]
fn an_openapi_that_cannot_be_read_is_said_once_and_the_built_in_schemas_stand_in() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    for fault in [
        OpenApiFault::Forbidden,
        OpenApiFault::Missing,
        OpenApiFault::Broken,
    ] {
        c.server.faults().set_openapi(fault);
        // Each run with a cache of its own: a cached document would hide the fault.
        let cache = tempfile::tempdir().unwrap();
        let mut cmd = headless_util::command(c.dir.path(), repo.root(), &["check", "-A"]);
        cmd.env("KUBECONFIG", &c.kubeconfig)
            .env("KDRIFT_CACHE_DIR", cache.path());
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{fault:?}: {stdout}{stderr}");
        assert!(
            stdout.contains("deployment/shop/cart  spec.replicas  2 → 5"),
            "{fault:?}: {stdout}"
        );
        let notes: Vec<&str> = stderr.lines().filter(|l| l.starts_with("note: ")).collect();
        assert!(!notes.is_empty(), "{fault:?}: {stderr}");
        assert!(
            notes
                .iter()
                .all(|n| n.contains("OpenAPI") && n.contains("1.36")),
            "{fault:?}: {notes:?}"
        );
        assert!(
            notes.len() <= 3,
            "said once per document: {fault:?}: {notes:?}"
        );
    }
}

#[test]
fn the_schemas_are_read_from_the_cluster_once_and_then_from_the_cache() {
    let c = Cluster::start();
    let repo = Repo::demo();
    let cache = tempfile::tempdir().unwrap();
    let run = |faulty: bool| {
        c.server.faults().set_openapi(if faulty {
            OpenApiFault::Missing
        } else {
            OpenApiFault::Served
        });
        let mut cmd = headless_util::command(c.dir.path(), repo.root(), &["check", "-A"]);
        cmd.env("KUBECONFIG", &c.kubeconfig)
            .env("KDRIFT_CACHE_DIR", cache.path());
        cmd.output().unwrap()
    };
    let first = run(false);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    assert!(
        String::from_utf8_lossy(&first.stderr).trim().is_empty(),
        "{first:?}"
    );
    let cached: Vec<_> = walk(cache.path());
    assert!(
        cached
            .iter()
            .any(|f| f.ends_with(".json") && f.contains("apis_ops.example.com_v1")),
        "{cached:?}"
    );
    // The custom resource's document, made by the cluster, is among them.
    assert!(cached.iter().any(|f| f.contains("api_v1.")), "{cached:?}");
    // The index is read every time: with it gone, kdrift says so even with a cache.
    let second = run(true);
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("note: cannot read the cluster's OpenAPI"),
        "{second:?}"
    );
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path.display().to_string());
        }
    }
    out
}

#[test]
fn a_kind_the_user_may_not_list_is_an_error_naming_it_and_the_rest_is_compared() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    c.server.faults().forbid_resource("", "secrets");
    let run = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(run.code, 2, "{run:?}");
    let report = run.json();
    let errors: Vec<&str> = report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    // The cluster-wide list is refused; so is each namespace's the manifests name.
    assert!(
        !errors.is_empty()
            && errors
                .iter()
                .all(|e| e.starts_with("cannot list secrets ") && e.contains("forbidden")),
        "{errors:?}"
    );
    assert_eq!(
        drifted_fields(&report)
            .iter()
            .map(|f| f[2].as_str())
            .collect::<Vec<_>>(),
        ["spec.replicas"],
        "{run:?}"
    );
    assert!(
        report["objects"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["kind"] != "Secret"),
        "an unlisted Secret is not called missing: {run:?}"
    );
}

#[test]
fn a_secret_manifest_that_is_not_base64_is_named() {
    let c = Cluster::start();
    let repo = Repo::demo();
    let ledger = repo.read("payments/ledger.yaml").replace(
        "type: Opaque\nstringData:\n",
        "type: Opaque\ndata:\n  token: not*base64!\nstringData:\n",
    );
    repo.write("payments/ledger.yaml", &ledger);
    let run = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(run.code, 2, "{run:?}");
    let problems = run.json()["problems"].as_array().unwrap().clone();
    assert_eq!(problems.len(), 1, "{run:?}");
    let message = problems[0]["message"].as_str().unwrap();
    assert!(
        message.contains("data.token")
            && message.contains("base64")
            && !message.contains("not*base64"),
        "{message}"
    );
    assert_eq!(
        problems[0]["file"],
        repo.path("payments/ledger.yaml").display().to_string()
    );
}

#[test]
fn a_server_side_apply_of_the_repository_is_in_sync_too() {
    // Applied server-side from the start, then client-side applied and moved to server-side
    // (kubectl hands the client-side apply's fields, defaults included, to the new manager).
    for migrate in [false, true] {
        let (c, repo) = if migrate {
            applied()
        } else {
            let c = Cluster::start_with(false);
            (c, Repo::demo())
        };
        let root = repo.root().to_str().unwrap().to_owned();
        let server_side = |path: &str| {
            let out = c.kubectl(&["apply", "--server-side", "-f", path]);
            assert!(
                out.status.success(),
                "kubectl apply --server-side -f {path}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        server_side(&format!("{root}/crds"));
        c.ok(&[
            "wait",
            "--for",
            "condition=established",
            "crd/backuppolicies.ops.example.com",
            "--timeout=30s",
        ]);
        server_side(&format!("{root}/namespaces.yaml"));
        apply_demo(&c, repo.root(), &["--server-side"]);
        let run = kdrift(&c, &repo, &["check", "-A"]);
        assert_eq!(run.code, 0, "migrate {migrate}: {run:?}");
    }
}
