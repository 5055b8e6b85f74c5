//! The demo cluster's Argo CD and Flux, seen with the real kubectl: the Application and
//! Kustomization and their status, what the controllers write on the objects they own, and
//! self-heal undoing a `kubectl scale` unless the change was committed to the demo repository.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::demo_helm;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{Cluster, eventually, owns};
use serde_json::Value;

/// Self-heal's delay in these tests (the demo's is 180 s).
const SELF_HEAL: Duration = Duration::from_secs(2);
const WAIT: Duration = Duration::from_secs(30);

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The demo repository as `kdrift demo` makes it, with an identity for the test's commits.
fn demo_repo(dir: &Path) -> std::path::PathBuf {
    let workdir = kdrift::runtime::demo::prepare_workdir(
        Some(&dir.join("demo")),
        kdrift::sim::scenario::DEMO_MANIFESTS,
    )
    .unwrap();
    let path = workdir.path.clone();
    git(&path, &["config", "user.name", "On Call"]);
    git(&path, &["config", "user.email", "oncall@example.com"]);
    git(&path, &["config", "commit.gpgsign", "false"]);
    path
}

fn app(c: &Cluster) -> Value {
    c.get_json("application/shop", "argocd")
}

fn replicas(c: &Cluster) -> i64 {
    c.get_json("deploy/frontend", "shop")["spec"]["replicas"]
        .as_i64()
        .unwrap()
}

fn synced_at(c: &Cluster, revision: &str) -> bool {
    let app = app(c);
    app["status"]["sync"]["status"] == "Synced" && app["status"]["sync"]["revision"] == revision
}

#[test]
fn applications_and_kustomizations_are_listed_with_their_status() {
    let dir = tempfile::tempdir().unwrap();
    let repo = demo_repo(dir.path());
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let branch = git(&repo, &["symbolic-ref", "--short", "HEAD"]);
    let c = Cluster::start_gitops(&repo, SELF_HEAL);

    let apps = c.ok(&["get", "applications", "-n", "argocd"]);
    assert!(apps.lines().any(|l| l.starts_with("shop ")), "{apps}");
    let short = c.ok(&["get", "app", "-A"]);
    assert!(
        short.contains("argocd") && short.contains("shop"),
        "{short}"
    );
    let ks = c.ok(&["get", "ks", "-A"]);
    assert!(
        ks.lines()
            .any(|l| l.starts_with("flux-system") && l.contains("platform")),
        "{ks}"
    );

    assert!(eventually(WAIT, || synced_at(&c, &head)), "{:#}", app(&c));
    // Progressing while the seeded rollouts finish, then Healthy.
    assert!(
        eventually(WAIT, || app(&c)["status"]["health"]["status"] == "Healthy"),
        "{:#}",
        app(&c)["status"]
    );
    // The definitions' printer columns, as kubectl prints them (wide adds the priority ones).
    let apps = c.ok(&["get", "applications", "-n", "argocd"]);
    let header = apps.lines().next().unwrap();
    assert!(
        header.contains("SYNC STATUS")
            && header.contains("HEALTH STATUS")
            && !header.contains("REVISION"),
        "{apps}"
    );
    let row = apps.lines().find(|l| l.starts_with("shop ")).unwrap();
    assert!(row.contains("Synced") && row.contains("Healthy"), "{apps}");
    let wide = c.ok(&["get", "applications", "-n", "argocd", "-o", "wide"]);
    assert!(wide.contains("REVISION") && wide.contains(&head), "{wide}");
    let status = &app(&c)["status"];
    assert_eq!(status["operationState"]["phase"], "Succeeded");
    assert_eq!(status["operationState"]["syncResult"]["revision"], head);
    assert_eq!(status["history"].as_array().unwrap().len(), 1);
    assert!(
        status["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["kind"] == "Deployment" && r["name"] == "frontend")
    );

    let expected = format!("Applied revision: {branch}@sha1:{head}");
    assert!(
        eventually(WAIT, || {
            let ks = c.get_json("kustomization/platform", "flux-system");
            ks["status"]["conditions"][0]["message"] == expected.as_str()
        }),
        "{:#}",
        c.get_json("kustomization/platform", "flux-system")["status"]
    );
    let ks_table = c.ok(&["get", "ks", "-n", "flux-system"]);
    let header = ks_table.lines().next().unwrap();
    assert!(
        header.contains("AGE") && header.contains("READY") && header.contains("STATUS"),
        "{ks_table}"
    );
    assert!(
        ks_table.contains("True") && ks_table.contains(&expected),
        "{ks_table}"
    );
    let ks = c.get_json("kustomization/platform", "flux-system");
    assert_eq!(ks["status"]["conditions"][0]["type"], "Ready");
    assert_eq!(ks["status"]["conditions"][0]["status"], "True");
    assert_eq!(
        ks["status"]["conditions"][0]["reason"],
        "ReconciliationSucceeded"
    );
    assert_eq!(
        ks["status"]["lastAppliedRevision"],
        format!("{branch}@sha1:{head}")
    );
    let inventory = ks["status"]["inventory"]["entries"].as_array().unwrap();
    assert!(
        inventory
            .iter()
            .any(|e| e["id"] == "platform_auth_apps_Deployment")
    );
}

#[test]
fn gitops_controllers_mark_what_they_applied_as_their_managers() {
    let dir = tempfile::tempdir().unwrap();
    let repo = demo_repo(dir.path());
    let c = Cluster::start_gitops(&repo, SELF_HEAL);

    let frontend = c.get_json("deploy/frontend", "shop");
    assert_eq!(
        frontend["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"],
        "shop:apps/Deployment:shop/frontend"
    );
    assert!(owns(
        &frontend,
        "argocd-controller",
        &[
            "f:metadata",
            "f:annotations",
            "f:argocd.argoproj.io/tracking-id"
        ]
    ));
    assert!(owns(
        &frontend,
        "argocd-controller",
        &["f:spec", "f:replicas"]
    ));
    let service = c.get_json("service/cart", "shop");
    assert_eq!(
        service["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"],
        "shop:/Service:shop/cart"
    );

    let auth = c.get_json("deploy/auth", "platform");
    let labels = &auth["metadata"]["labels"];
    assert_eq!(labels["kustomize.toolkit.fluxcd.io/name"], "platform");
    assert_eq!(
        labels["kustomize.toolkit.fluxcd.io/namespace"],
        "flux-system"
    );
    assert!(owns(
        &auth,
        "kustomize-controller",
        &[
            "f:metadata",
            "f:labels",
            "f:kustomize.toolkit.fluxcd.io/name"
        ]
    ));
    // Objects of neither folder carry either.
    let ledger = c.get_json("deploy/ledger", "payments");
    assert!(ledger["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"].is_null());
    assert!(ledger["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"].is_null());
}

#[test]
fn self_heal_undoes_a_scale_after_its_delay() {
    let dir = tempfile::tempdir().unwrap();
    let repo = demo_repo(dir.path());
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let c = Cluster::start_gitops(&repo, SELF_HEAL);
    assert!(eventually(WAIT, || synced_at(&c, &head)));
    assert_eq!(replicas(&c), 2);

    c.ok(&["scale", "deploy/frontend", "-n", "shop", "--replicas=5"]);
    assert!(
        eventually(WAIT, || app(&c)["status"]["sync"]["status"] == "OutOfSync"),
        "{:#}",
        app(&c)["status"]
    );
    let due = c.server.gitops().heal_due("argocd", "shop");
    assert!(due.is_some(), "no heal planned");
    assert_eq!(c.server.gitops().self_heal_delay(), SELF_HEAL);
    let frontend = app(&c)["status"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "Deployment" && r["name"] == "frontend")
        .cloned()
        .unwrap();
    assert_eq!(frontend["status"], "OutOfSync");

    assert!(eventually(WAIT, || replicas(&c) == 2), "not healed");
    let deploy = c.get_json("deploy/frontend", "shop");
    assert!(owns(
        &deploy,
        "argocd-controller",
        &["f:spec", "f:replicas"]
    ));
    assert!(eventually(WAIT, || synced_at(&c, &head)));
    let status = app(&c)["status"].clone();
    assert_eq!(status["history"].as_array().unwrap().len(), 2, "{status:#}");
    assert_eq!(
        status["operationState"]["syncResult"]["resources"][0]["message"],
        "deployment.apps/frontend serverside-applied"
    );
    assert_eq!(c.server.gitops().heal_due("argocd", "shop"), None);
}

#[test]
fn a_change_committed_to_the_repository_stays() {
    let dir = tempfile::tempdir().unwrap();
    let repo = demo_repo(dir.path());
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let c = Cluster::start_gitops(&repo, SELF_HEAL);
    assert!(eventually(WAIT, || synced_at(&c, &head)));

    c.ok(&["scale", "deploy/frontend", "-n", "shop", "--replicas=5"]);
    // The hotfix accepted into git (as kdrift's accept does: edit, commit), before the delay.
    let file = repo.join("shop/frontend.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("replicas: 2", "replicas: 5", 1)).unwrap();
    git(&repo, &["commit", "-q", "-am", "frontend: 5 replicas"]);
    let accepted = git(&repo, &["rev-parse", "HEAD"]);

    assert!(
        eventually(WAIT, || synced_at(&c, &accepted)),
        "{:#}",
        app(&c)["status"]
    );
    std::thread::sleep(SELF_HEAL * 2);
    assert_eq!(replicas(&c), 5);
    assert_eq!(app(&c)["status"]["sync"]["status"], "Synced");

    // An edit not committed does not count: the working tree is not the pushed branch.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("replicas: 5", "replicas: 7", 1)).unwrap();
    c.ok(&["scale", "deploy/frontend", "-n", "shop", "--replicas=7"]);
    assert!(eventually(WAIT, || replicas(&c) == 5), "not healed to HEAD");
}

/// `kdrift check -o json` names who will act on each drifted object: the scaled frontend is the
/// self-healing Argo CD app's, read from its Application; the text report says it in words.
#[test]
fn check_names_the_reconciler_of_every_drifted_object() {
    let dir = tempfile::tempdir().unwrap();
    let repo = demo_repo(dir.path());
    // Long enough that the check runs before the heal.
    let c = Cluster::start_gitops(&repo, Duration::from_secs(120));
    c.ok(&["scale", "deploy/frontend", "-n", "shop", "--replicas=5"]);
    // Once Argo CD saw it (its status says what check will report).
    assert!(eventually(WAIT, || app(&c)["status"]["sync"]["status"] == "OutOfSync"));
    let kdrift = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_kdrift"))
            .args(args)
            .arg("--kubeconfig")
            .arg(&c.kubeconfig)
            .arg("--manifests")
            .arg(&repo)
            .env("HOME", dir.path())
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .env("KDRIFT_HELM", demo_helm::kdrift_helm())
            .output()
            .unwrap()
    };
    let out = kdrift(&["check", "-A", "-o", "json"]);
    assert_eq!(out.status.code(), Some(demo_helm::expected(1)), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The shipped schema pins the reconciler object too.
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/check-report.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let objects = report["objects"].as_array().unwrap();
    let frontend = objects
        .iter()
        .find(|o| o["key"] == "deployment/shop/frontend")
        .unwrap();
    let reconciler = &frontend["reconciler"];
    assert_eq!(reconciler["controller"], "argocd", "{reconciler}");
    assert_eq!(reconciler["kind"], "Application");
    assert_eq!(reconciler["name"], "shop");
    assert_eq!(reconciler["namespace"], "argocd");
    assert_eq!(reconciler["selfHeal"], true);
    assert_eq!(reconciler["revertsChanges"], true);
    assert_eq!(reconciler["syncStatus"], "OutOfSync");
    // Every drifted object has one here (shop/ is the app's), and in-sync ones none.
    for o in objects {
        let drifted = o["status"] == "drifted";
        assert_eq!(
            o.get("reconciler").is_some(),
            drifted && o["namespace"] == "shop",
            "{o}"
        );
    }
    let text = kdrift(&["check", "-A"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(
            "deployment/shop/frontend  ↳ Argo CD self-heal is on for app shop: this change will be reverted"
        ),
        "{text}"
    );
}

/// `kdrift check -A -o json` from `cwd` (with `--manifests` when given), its report.
fn check_json(c: &Cluster, home: &Path, cwd: &Path, manifests: Option<&str>) -> Value {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kdrift"));
    command
        .args(["check", "-A", "-o", "json", "--kubeconfig"])
        .arg(&c.kubeconfig)
        .current_dir(cwd)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"));
    if let Some(m) = manifests {
        command.args(["--manifests", m]);
    }
    let out = command.output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

/// The status `check` reported for the object `key` (`deployment/shop/frontend`).
fn status(report: &Value, key: &str) -> Option<String> {
    report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["key"] == key)
        .map(|o| o["status"].as_str().unwrap().to_owned())
}

/// Without `--manifests`, the checkout's Application says how its folder is read: the demo's
/// `argocd/shop` deploys `shop/` into namespace `shop`, so manifests there that name no namespace
/// are `shop`'s — as Argo CD applies them — where a plain folder reading puts them in `default`.
#[test]
fn without_manifests_the_apps_folder_is_read_as_argo_cd_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let repo = demo_repo(dir.path());
    let c = Cluster::start_gitops(&repo, Duration::from_secs(600));
    // As many Argo CD repositories do: the namespace comes from the Application's destination.
    for entry in std::fs::read_dir(repo.join("shop")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("  namespace: shop\n", "")).unwrap();
    }
    let check = |cwd: &Path, manifests: Option<&str>| check_json(&c, dir.path(), cwd, manifests);
    // From the checkout's top and from a folder of it.
    for cwd in [repo.clone(), repo.join("payments")] {
        let report = check(&cwd, None);
        assert_eq!(
            status(&report, "deployment/shop/frontend").as_deref(),
            Some("in-sync"),
            "{cwd:?}: {}",
            report["notes"]
        );
        assert_eq!(status(&report, "deployment/default/frontend"), None);
        // The rest of the checkout is read as always.
        assert_eq!(
            status(&report, "deployment/payments/ledger").as_deref(),
            Some("in-sync")
        );
        let notes = report["notes"].to_string();
        assert!(
            notes.contains("manifests from Argo CD apps: argocd/shop → shop (directory)"),
            "{notes}"
        );
    }
    // Named as a folder, the checkout is read as it is written.
    let plain = check(&repo, Some("."));
    assert_eq!(
        status(&plain, "deployment/default/frontend").as_deref(),
        Some("missing"),
        "{}",
        plain["notes"]
    );
    assert!(!plain["notes"].to_string().contains("Argo CD apps"));
}

/// A Flux Kustomization whose GitRepository is the checkout's origin: without `--manifests`
/// its path is read as Flux reads it — here with the `targetNamespace` set with kubectl, for
/// manifests that name no namespace.
#[test]
fn without_manifests_a_flux_kustomizations_folder_is_read_as_flux_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let repo = demo_repo(dir.path());
    let c = Cluster::start_gitops(&repo, Duration::from_secs(600));
    // kubectl drives the source kind: its printer columns (the source controller's status),
    // and the Kustomization's target.
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let ready = format!(
        "True    stored artifact for revision 'main@sha1:{}'",
        head.trim()
    );
    let mut sources = String::new();
    assert!(
        eventually(WAIT, || {
            sources = c.ok(&["get", "gitrepositories", "-n", "flux-system"]);
            sources.contains("https://git.example/kdrift/demo.git") && sources.contains(&ready)
        }),
        "{sources}"
    );
    c.ok(&[
        "patch",
        "kustomization",
        "platform",
        "-n",
        "flux-system",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"targetNamespace":"platform"}}"#,
    ]);
    for entry in std::fs::read_dir(repo.join("platform")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("  namespace: platform\n", "")).unwrap();
    }
    let check = |manifests: Option<&str>| check_json(&c, dir.path(), &repo, manifests);
    let report = check(None);
    assert_eq!(
        status(&report, "deployment/platform/auth").as_deref(),
        Some("in-sync"),
        "{}",
        report["notes"]
    );
    assert_eq!(status(&report, "deployment/default/auth"), None);
    let notes = report["notes"].to_string();
    assert!(
        notes.contains(
            "manifests from Flux Kustomizations: flux-system/platform → platform (directory, recursive)"
        ),
        "{notes}"
    );
    assert!(
        notes.contains("manifests from Argo CD apps: argocd/shop → shop (directory)"),
        "{notes}"
    );
    // Named as a folder, the checkout is read as it is written.
    let plain = check(Some("."));
    assert_eq!(
        status(&plain, "deployment/default/auth").as_deref(),
        Some("missing"),
        "{}",
        plain["notes"]
    );
    assert!(!plain["notes"].to_string().contains("Flux Kustomizations"));
}

/// Label tracking (Argo CD 2.x's default): the `app.kubernetes.io/instance` label names the app
/// only when an Application of that name exists — Helm charts set the label too.
#[test]
fn an_instance_label_names_an_argo_cd_app_only_when_one_exists() {
    let dir = tempfile::tempdir().unwrap();
    let repo = demo_repo(dir.path());
    let c = Cluster::start_gitops(&repo, Duration::from_secs(600));
    let manifests = dir.path().join("labelled");
    std::fs::create_dir_all(&manifests).unwrap();
    for (name, instance) in [("label-web", "shop"), ("helm-cache", "redis")] {
        let text = format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: shop\n  labels:\n    app.kubernetes.io/instance: {instance}\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      labels: {{app: {name}}}\n    spec:\n      containers:\n        - name: main\n          image: registry.example/{name}:1\n"
        );
        let file = manifests.join(format!("{name}.yaml"));
        std::fs::write(&file, text).unwrap();
        c.ok(&["apply", "-f", file.to_str().unwrap()]);
        c.ok(&[
            "scale",
            &format!("deploy/{name}"),
            "-n",
            "shop",
            "--replicas=3",
        ]);
    }
    let out = Command::new(env!("CARGO_BIN_EXE_kdrift"))
        .args(["check", "-n", "shop", "-o", "json", "--kubeconfig"])
        .arg(&c.kubeconfig)
        .arg("--manifests")
        .arg(&manifests)
        .env("HOME", dir.path())
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let object = |key: &str| {
        report["objects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["key"] == key)
            .cloned()
            .unwrap_or_else(|| panic!("no {key}: {report}"))
    };
    let web = object("deployment/shop/label-web");
    assert_eq!(web["status"], "drifted", "{web}");
    assert_eq!(web["reconciler"]["controller"], "argocd", "{web}");
    assert_eq!(web["reconciler"]["name"], "shop");
    assert_eq!(web["reconciler"]["selfHeal"], true);
    let cache = object("deployment/shop/helm-cache");
    assert_eq!(cache["status"], "drifted", "{cache}");
    assert!(cache.get("reconciler").is_none(), "{cache}");
}

/// `kdrift rollback deployment/cart -n shop ARGS` in the demo repository.
fn rollback_cart(c: &Cluster, home: &Path, repo: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kdrift"))
        .args(["rollback", "deployment/cart", "-n", "shop", "--kubeconfig"])
        .arg(&c.kubeconfig)
        .args(args)
        .current_dir(repo)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .output()
        .unwrap()
}

fn cart_image(c: &Cluster) -> String {
    c.get_json("deploy/cart", "shop")["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The demo night's bad release from git (issue 48): a teammate's commit gives the cart a
/// crashing image and its push's webhook has Argo CD sync it at once — long before the app's
/// two-minute resync. `kdrift rollback` makes one commit that names it and restores the image;
/// Argo CD syncs that commit, the cart rolls out on the good image and `check` is in sync.
#[test]
fn the_demos_release_from_git_is_synced_then_rolled_back_through_git() {
    let dir = tempfile::tempdir().unwrap();
    let repo = demo_repo(dir.path());
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let c = Cluster::start_gitops(&repo, Duration::from_secs(600));
    assert!(eventually(WAIT, || synced_at(&c, &head)));
    let good = cart_image(&c);
    assert_eq!(good, "registry.example/shop/cart:0.9.7");
    // The team pushes what kdrift commits (accept.push), to an origin that is a bare repository
    // here (the demo's Argo CD reads the checkout's HEAD as the pushed branch).
    let origin = dir.path().join("origin.git");
    git(
        dir.path(),
        &["init", "-q", "--bare", origin.to_str().unwrap()],
    );
    let rewrite = format!("url.{}.insteadOf", origin.display());
    git(
        &repo,
        &["config", &rewrite, kdrift::sim::scenario::DEMO_REPO_URL],
    );
    let settings = repo.join(".kdrift.yaml");
    let text = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(&settings, format!("{text}accept:\n  push: true\n")).unwrap();
    git(&repo, &["commit", "-qam", "kdrift: push what is accepted"]);
    git(&repo, &["push", "-q", "origin", "main"]);

    let release = kdrift::sim::scenario::incident::steps()
        .into_iter()
        .find(|s| matches!(s, kdrift::sim::scenario::incident::Step::Release { .. }))
        .unwrap();
    c.runtime
        .block_on(kdrift::sim::scenario::incident::run_step(
            c.server.store(),
            c.server.gitops(),
            &release,
        ))
        .unwrap();
    let bad = git(&repo, &["rev-parse", "HEAD"]);
    assert_ne!(bad, head);
    assert_eq!(
        git(&repo, &["log", "-1", "--format=%an <%ae>|%s"]),
        "Dana Whitfield <dana@shop.example>|cart 0.9.8: session store on the new Redis client"
    );
    assert!(
        eventually(WAIT, || synced_at(&c, &bad)
            && cart_image(&c) == "registry.example/shop/cart:0.9.8-crash"),
        "{:#}",
        app(&c)["status"]
    );
    assert!(
        eventually(WAIT, || app(&c)["metadata"]["annotations"]
            .get("argocd.argoproj.io/refresh")
            .is_none()),
        "Argo CD removes the refresh request once it has refreshed"
    );

    let home = dir.path().join("home");
    let run = rollback_cart(&c, &home, &repo, &["--yes", "--wait", "--timeout", "60s"]);
    let said = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let short = &bad[..12];
    assert!(
        said.contains(&format!(
            "from commit {short} cart 0.9.8: session store on the new Redis client"
        )),
        "{said}"
    );
    assert_eq!(
        git(&repo, &["rev-list", "--count", &format!("{bad}..HEAD")]),
        "1"
    );
    let message = git(&repo, &["log", "-1", "--format=%B"]);
    assert!(message.contains(short), "{message}");
    let fixed_short = git(&repo, &["rev-parse", "--short", "HEAD"]);
    for line in [
        format!(
            "committed {fixed_short} on main: Revert \"cart 0.9.8: session store on the new Redis client\"; pushed to origin/main"
        ),
        "asked Argo CD app shop to refresh (argocd.argoproj.io/refresh)".to_owned(),
        // Pushed to the branch a self-healing app syncs: the cluster is Argo CD's to change.
        format!(
            "the cluster is left to Argo CD app shop: it applies commit {fixed_short} (kdrift did not write it)"
        ),
        format!("Argo CD app shop: synced commit {fixed_short}"),
        "rollout complete".to_owned(),
    ] {
        assert!(said.contains(&line), "{line}: {said}");
    }
    assert_eq!(
        git(&origin, &["rev-parse", "main"]),
        git(&repo, &["rev-parse", "HEAD"]),
        "pushed"
    );
    let text = git(&repo, &["show", "HEAD:shop/cart.yaml"]);
    assert!(text.contains(&good) && text.contains("# Owner: storefront team"));
    let fixed = git(&repo, &["rev-parse", "HEAD"]);
    assert!(
        eventually(WAIT, || synced_at(&c, &fixed)),
        "{:#}",
        app(&c)["status"]
    );
    assert_eq!(cart_image(&c), good);
    assert!(
        !said.contains("as field manager \"kdrift\""),
        "kdrift wrote nothing to the cluster: {said}"
    );
    let report = check_json(&c, &home, &repo, None);
    assert_eq!(
        status(&report, "deployment/shop/cart").as_deref(),
        Some("in-sync"),
        "{report:#}"
    );
}
