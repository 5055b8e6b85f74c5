//! Every sentence kdrift prints is true (issues 29 and 34), headless against the demo cluster:
//! a live value cannot repaint the terminal or forge a report line; a kustomize object's places
//! and its revert name what rendered it; the overlays `--overlay` leaves out are not "unused";
//! a pod on no node has no log, said with why; an accept on a detached HEAD is warned; a
//! cluster-scoped object is named without an empty namespace; a hand-scaled Deployment an
//! autoscaler scales keeps its replicas through a revert; a ctrl-c during an accept stops git
//! and puts the file back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::headless_util;
use crate::kustomize_fixture;

use std::time::Duration;

use common::{Cluster, eventually};
use headless_util::{Repo, Run, kdrift};

const PATIENCE: Duration = Duration::from_secs(60);

/// A value set live with an escape sequence, a carriage return and a line break that reads as a
/// line of the report: every output that reaches a terminal or a CI log shows it on one line,
/// escaped, and no report line starts with what it forged.
#[test]
fn a_live_value_can_neither_repaint_the_terminal_nor_forge_a_report_line() {
    let c = Cluster::start();
    let repo = Repo::demo();
    let forged = "configmap/shop/forged  data.X  a → b  kubectl (Update)";
    let value = format!("off\u{1b}[31m\r\n{forged}");
    let patch = serde_json::json!({"data": {"FEATURE_NEW_CHECKOUT": value}}).to_string();
    c.ok(&[
        "patch",
        "configmap/frontend-config",
        "-n",
        "shop",
        "--type",
        "merge",
        "-p",
        &patch,
    ]);
    let forged_line = |out: &str| out.lines().any(|l| l.starts_with("configmap/shop/forged"));
    let raw = |out: &str| out.contains(['\u{1b}', '\r']);

    let text = kdrift(&c, &repo, &["check", "-A"]);
    assert_eq!(text.code, 1, "{text:?}");
    assert!(!raw(&text.stdout) && !forged_line(&text.stdout), "{text:?}");
    // The value on its field's line, quoted with its escapes: what it holds is seen.
    let line = text
        .stdout
        .lines()
        .find(|l| l.starts_with("configmap/shop/frontend-config  data.FEATURE_NEW_CHECKOUT"))
        .unwrap_or_else(|| panic!("{text:?}"));
    assert!(
        line.contains(&format!(
            "off → \"off\\u001b[31m\\r\\n{forged}\"  kubectl-patch (Update)"
        )),
        "{line}"
    );

    let github = kdrift(&c, &repo, &["check", "-A", "-o", "github"]);
    assert_eq!(github.code, 1, "{github:?}");
    assert!(!raw(&github.stdout), "{github:?}");
    assert!(
        github
            .stdout
            .lines()
            .all(|l| l.starts_with("::") || l.contains(" objects: ")),
        "a value starts no line of its own: {github:?}"
    );
    assert!(
        github.stdout.contains("off in git, \"off\\u001b[31m\\r\\n"),
        "{github:?}"
    );

    let yaml = kdrift(&c, &repo, &["check", "-A", "-o", "yaml"]);
    assert_eq!(yaml.code, 1, "{yaml:?}");
    assert!(!raw(&yaml.stdout), "{yaml:?}");
    let read: serde_json::Value = serde_yaml::from_str(&yaml.stdout).unwrap();
    assert!(read.to_string().contains("\\u001b[31m\\r\\n"), "{read}");

    // The commit of an accept holds the value on one line too.
    let accept = kdrift(&c, &repo, &["accept", "cm/frontend-config", "-n", "shop"]);
    assert_eq!(accept.code, 0, "{accept:?}");
    let message = repo.git(&["log", "-1", "--format=%B"]);
    assert!(!raw(&message) && !forged_line(&message), "{message}");
    assert!(
        message.contains("FEATURE_NEW_CHECKOUT: off → \"off\\u001b[31m\\r\\n"),
        "{message}"
    );
}

/// The kustomize tree with a staging overlay that reads a file of its own.
fn kustomize_repo() -> Repo {
    let mut files: Vec<(&str, &str)> = kustomize_fixture::FILES
        .iter()
        .filter(|(path, _)| *path != "overlays/staging/kustomization.yaml")
        .copied()
        .collect();
    files.push((
        "overlays/staging/kustomization.yaml",
        "namespace: staging\nnamePrefix: stg-\nresources:\n  - ../../base\npatches:\n  - path: patch.yaml\n",
    ));
    files.push((
        "overlays/staging/patch.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n",
    ));
    Repo::with_files(&files)
}

/// The places a text names in `file` (`base/deployment.yaml:31`), each once.
fn places_in(text: &str, file: &str) -> std::collections::BTreeSet<String> {
    text.match_indices(file)
        .map(|(at, _)| {
            let rest = &text[at + file.len()..];
            let digits: String = rest
                .strip_prefix(':')
                .unwrap_or("")
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            format!("{file}:{digits}")
        })
        .collect()
}

/// Under `--overlay overlays/prod`: the staging overlay is a root left out, not "unused"; a
/// field of the base resource is named by one line everywhere (check, the diff's note and hunk);
/// the revert says it applied what the overlay renders, not the base file.
#[test]
fn a_kustomize_objects_places_and_revert_name_what_renders_it() {
    let c = Cluster::start_with(false);
    let repo = kustomize_repo();
    c.ok(&["create", "namespace", "prod"]);
    c.apply_k(&repo.path("overlays/prod"));
    let overlay = ["--overlay", "overlays/prod"];

    let clean = kdrift(
        &c,
        &repo,
        &[&["check", "-A", "-o", "json"][..], &overlay].concat(),
    );
    assert_eq!(clean.code, 0, "{clean:?}");
    let report = clean.json();
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("overlays/staging/kustomization.yaml")
            && notes.contains("a kustomize root left out by the choice of roots"),
        "{notes}"
    );
    assert!(!notes.contains("no kustomize root uses"), "{notes}");

    // A field of the base's Service, set live.
    c.ok(&[
        "patch",
        "service/web",
        "-n",
        "prod",
        "--type",
        "json",
        "-p",
        r#"[{"op":"replace","path":"/spec/ports/0/targetPort","value":9090}]"#,
    ]);
    let check = kdrift(&c, &repo, &[&["check", "-A"][..], &overlay].concat());
    assert_eq!(check.code, 1, "{check:?}");
    let diff = kdrift(
        &c,
        &repo,
        &[&["diff", "svc/web", "-n", "prod"][..], &overlay].concat(),
    );
    assert_eq!(diff.code, 1, "{diff:?}");
    let in_check = places_in(&check.stdout, "base/deployment.yaml");
    assert_eq!(in_check.len(), 1, "{check:?}");
    // The diff names the document in its header (where the object starts) and the field's
    // line in its hunk and in the note: the field's line is the one check names.
    let hunks_and_notes: String = diff
        .stdout
        .lines()
        .filter(|l| l.starts_with("@@") || l.contains("  # "))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        places_in(&hunks_and_notes, "base/deployment.yaml"),
        in_check,
        "{diff:?}\n{check:?}"
    );

    let revert = kdrift(
        &c,
        &repo,
        &[&["revert", "svc/web", "-n", "prod", "--yes"][..], &overlay].concat(),
    );
    assert_eq!(revert.code, 0, "{revert:?}");
    let kustomization = repo.path("overlays/prod/kustomization.yaml");
    assert!(
        revert.stdout.contains(&format!(
            "reverted service/prod/web: applied what {} renders, from {}:",
            kustomization.display(),
            repo.path("base/deployment.yaml").display()
        )),
        "{revert:?}"
    );
}

/// A pod no node took has run nothing: its log is not an empty success but exit 2 with the
/// scheduler's reason.
#[test]
fn the_log_of_a_pod_on_no_node_says_why_there_is_none() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&[
        "set",
        "resources",
        "deployment/cart",
        "-n",
        "shop",
        "--requests=cpu=64",
    ]);
    let mut run = kdrift(&c, &repo, &["logs", "deploy/cart", "-n", "shop"]);
    assert!(
        eventually(PATIENCE, || {
            run = kdrift(&c, &repo, &["logs", "deploy/cart", "-n", "shop"]);
            // Until the scheduler has tried it, the pod is only "not scheduled yet".
            run.stderr.contains("Insufficient cpu")
        }),
        "{run:?}"
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    assert!(
        run.stderr
            .contains("has no log: it is not scheduled to a node")
            && run.stderr.contains("Insufficient cpu"),
        "{run:?}"
    );
}

/// An accept on a detached HEAD commits where it is, and says first that the commit will be on
/// no branch.
#[test]
fn an_accept_on_a_detached_head_warns_before_it_commits() {
    let c = Cluster::start();
    let repo = Repo::demo();
    repo.git(&["checkout", "--quiet", "--detach"]);
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    let accept = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(accept.code, 0, "{accept:?}");
    assert!(
        accept
            .stderr
            .contains("kdrift: warning: HEAD is detached: the commit will be on no branch"),
        "{accept:?}"
    );
    assert!(accept.stdout.contains("(detached HEAD)"), "{accept:?}");
    // On a branch, no such warning.
    repo.git(&["checkout", "--quiet", "main"]);
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=6"]);
    let accept = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(accept.code, 0, "{accept:?}");
    assert!(!accept.stderr.contains("detached"), "{accept:?}");
}

const ROLE: &str = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: pod-reader\nrules:\n  - apiGroups: [\"\"]\n    resources: [\"pods\"]\n    verbs: [\"get\", \"list\"]\n";

/// A ClusterRole's commit is named as the report names it, `clusterrole/pod-reader`, and its
/// flow list keeps its quotes.
#[test]
fn a_cluster_role_accept_names_it_without_an_empty_namespace() {
    let c = Cluster::start_with(false);
    let repo = Repo::with_files(&[("rbac/pod-reader.yaml", ROLE)]);
    c.ok(&[
        "apply",
        "-f",
        repo.path("rbac/pod-reader.yaml").to_str().unwrap(),
    ]);
    c.ok(&[
        "patch",
        "clusterrole/pod-reader",
        "--type",
        "json",
        "-p",
        r#"[{"op":"add","path":"/rules/0/verbs/-","value":"watch"}]"#,
    ]);
    let accept = kdrift(&c, &repo, &["accept", "clusterrole/pod-reader"]);
    assert_eq!(accept.code, 0, "{accept:?}");
    let subject = repo.git(&["log", "-1", "--format=%s"]);
    assert_eq!(
        subject.trim(),
        "kdrift: accept live rules of clusterrole/pod-reader"
    );
    assert_eq!(
        repo.read("rbac/pod-reader.yaml"),
        ROLE.replace("[\"get\", \"list\"]", "[\"get\", \"list\", \"watch\"]")
    );
}

/// `kubectl scale` of a Deployment its HorizontalPodAutoscaler scales: the revert does not
/// remove `spec.replicas` (the server would set 1 until the autoscaler acts) and says why.
#[test]
fn a_revert_leaves_a_hand_scale_to_the_autoscaler_and_says_why() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&["scale", "deployment/catalog", "-n", "shop", "--replicas=5"]);
    let check = kdrift(&c, &repo, &["check", "-n", "shop"]);
    assert!(
        check
            .stdout
            .contains("deployment/shop/catalog  spec.replicas  (absent) → 5"),
        "{check:?}"
    );
    let preview = kdrift(
        &c,
        &repo,
        &["revert", "deploy/catalog", "-n", "shop", "--dry-run"],
    );
    assert_eq!(preview.code, 0, "{preview:?}");
    assert!(
        !preview.stdout.contains("removes spec.replicas"),
        "{preview:?}"
    );
    assert!(
        preview.stdout.contains(
            "leaves spec.replicas at 5: horizontalpodautoscaler shop/catalog (2 to 6 replicas) scales deployment/shop/catalog, and removing the field would set 1 replica until that autoscaler acts"
        ),
        "{preview:?}"
    );
    let revert = kdrift(
        &c,
        &repo,
        &["revert", "deploy/catalog", "-n", "shop", "--yes"],
    );
    assert_eq!(revert.code, 0, "{revert:?}");
    let live = c.get_json("deployment/catalog", "shop");
    assert_eq!(live["spec"]["replicas"], 5, "{live}");
}

/// A pre-commit hook that says it started, then takes its time.
const SLOW_HOOK: &str = "#!/bin/sh\ntouch \"$(git rev-parse --git-dir)/hook-started\"\nsleep 20\ntouch \"$(git rev-parse --git-dir)/hook-finished\"\n";

/// Ctrl-c while an accept's git commits (a slow hook): kdrift stops git with SIGTERM, puts the
/// file back, says so and exits 130 — not a silent death while git commits 20 s later.
#[test]
fn a_ctrl_c_during_an_accept_stops_git_and_puts_the_file_back() {
    use std::os::unix::fs::PermissionsExt;
    let c = Cluster::start();
    let repo = Repo::demo();
    let hook = repo.path(".git/hooks/pre-commit");
    std::fs::write(&hook, SLOW_HOOK).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    let before = repo.read("shop/cart.yaml");
    let head = repo.head();

    let mut cmd = headless_util::command(
        c.dir.path(),
        repo.root(),
        &["accept", "deploy/cart", "-n", "shop"],
    );
    cmd.env("KUBECONFIG", &c.kubeconfig)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let started = repo.path(".git/hook-started");
    assert!(
        eventually(PATIENCE, || started.exists()),
        "the hook never ran"
    );
    // What the terminal sends kdrift on ctrl-c (git is in a session of its own).
    // SAFETY: kill(2) on the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(run.code, 130, "{run:?}");
    assert!(
        run.stderr
            .contains("interrupted before the commit: git was stopped and nothing was committed")
            && run.stderr.contains("shop/cart.yaml put back as it was"),
        "{run:?}"
    );
    assert_eq!(repo.read("shop/cart.yaml"), before);
    assert!(!repo.path(".git/index.lock").exists());
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    // The hook was stopped with git: no commit comes later.
    std::thread::sleep(Duration::from_secs(2));
    assert!(!repo.path(".git/hook-finished").exists());
    assert_eq!(repo.head(), head);
}
