//! A read-only user on the real server, as RBAC makes one: a ServiceAccount bound to the `view`
//! ClusterRole in the test's namespace, its token from `kubectl create token`, in a kubeconfig of
//! its own. `view` reads workloads but not Secrets and writes nothing. kdrift must say plainly
//! what this user may not do — check a Secret, diff or accept it, revert anything (not even the
//! dry run) — while doing what it may (check and diff the Deployment, accept it into git, watch
//! the rows), and change nothing in the cluster.

use std::path::{Path, PathBuf};

use crate::case::Case;
use crate::headless_util::{Run, kdrift_at};
use crate::live::{flags, row, row_ends_with};
use crate::live_screen::{keys, run, wait_for};

/// The demo's `payments/ledger` (a Deployment and its Secret) applied by the admin, then
/// scaled to 3 by the admin (out of band); and the viewer's kubeconfig.
fn ledger_and_viewer() -> Option<(Case, PathBuf)> {
    let c = Case::demo("readonly", "payments", &["payments/ledger.yaml"])?;
    c.ok(&["create", "serviceaccount", "viewer"]);
    c.ok(&[
        "create",
        "rolebinding",
        "viewer",
        "--clusterrole=view",
        &format!("--serviceaccount={}:viewer", c.ns()),
    ]);
    let token = c.ok(&["create", "token", "viewer"]);
    let kubeconfig = c.home.path().join("viewer.kubeconfig");
    std::fs::copy(&c.real.kubeconfig, &kubeconfig).unwrap();
    let as_viewer = |args: &[&str]| {
        let out = c
            .real
            .command(args)
            .env("KUBECONFIG", &kubeconfig)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
    };
    as_viewer(&[
        "config",
        "set-credentials",
        "viewer",
        &format!("--token={}", token.trim()),
    ]);
    as_viewer(&["config", "set-context", "--current", "--user=viewer"]);
    c.ok(&["scale", "deployment/ledger", "--replicas=3"]);
    Some((c, kubeconfig))
}

fn viewer(c: &Case, kubeconfig: &Path, args: &[&str]) -> Run {
    let mut all = args.to_vec();
    all.extend(["-n", c.ns()]);
    kdrift_at(kubeconfig, c.home.path(), c.repo.root(), &all)
}

/// The output says the user may not do `verb` on `resource` (in kdrift's words, then the API
/// server's), and names the namespace.
fn says_forbidden(run: &Run, verb: &str, resource: &str, ns: &str) {
    let all = format!("{}{}", run.stdout, run.stderr);
    let kdrift_says = [
        format!("cannot {verb} {resource}"),
        format!("cannot read {resource}/"),
        format!("you may not {verb} {resource}"),
    ];
    assert!(
        kdrift_says.iter().any(|words| all.contains(words.as_str()))
            && all.contains(&format!("cannot {verb} resource \"{resource}\""))
            && all.contains(&format!("namespace \"{ns}\"")),
        "says it may not {verb} {resource} in {ns}: {run:?}"
    );
}

#[test]
fn the_view_role_reads_what_it_may_and_is_told_what_it_may_not() {
    let Some((c, kubeconfig)) = ledger_and_viewer() else {
        return;
    };
    let ns = c.ns().to_owned();
    let live_before = c.ok(&[
        "get",
        "deployment/ledger",
        "-o",
        "jsonpath={.spec.replicas}",
    ]);

    // check: the Deployment's drift, and an error for the Secrets it may not list (exit 2).
    let check = viewer(&c, &kubeconfig, &["check"]);
    assert_eq!(check.code, 2, "{check:?}");
    assert!(
        check
            .stdout
            .contains(&format!("deployment/{ns}/ledger  spec.replicas  1 → 3")),
        "the drift it may read: {check:?}"
    );
    says_forbidden(&check, "list", "secrets", &ns);
    // Helm's release records are Secrets too: not read, so a release may have drifted unseen,
    // a problem that names what to grant (issue 46), not a note under a green check.
    assert!(
        check.stdout.contains(&format!(
            "problem: helm: skipped: Helm releases stored as secrets in namespace \"{ns}\" were not read"
        )) && check.stdout.contains("let this user list secrets there"),
        "{check:?}"
    );
    let report = viewer(&c, &kubeconfig, &["check", "-o", "json"]).json();
    assert_eq!(report["summary"]["errors"], 1, "{report}");
    assert_eq!(report["summary"]["problems"], 1, "{report}");
    assert_eq!(report["summary"]["drifted"], 1, "{report}");

    // diff and accept: the Deployment yes, the Secret no.
    let diff = viewer(&c, &kubeconfig, &["diff", "deploy/ledger"]);
    assert_eq!(diff.code, 1, "{diff:?}");
    let diff = viewer(&c, &kubeconfig, &["diff", "secret/ledger-db"]);
    assert_eq!(diff.code, 2, "{diff:?}");
    says_forbidden(&diff, "get", "secrets", &ns);
    let accept = viewer(&c, &kubeconfig, &["accept", "secret/ledger-db"]);
    assert_eq!(accept.code, 2, "{accept:?}");
    says_forbidden(&accept, "get", "secrets", &ns);
    let head = c.repo.head();
    let accept = viewer(&c, &kubeconfig, &["accept", "deploy/ledger"]);
    assert_eq!(
        accept.code, 0,
        "accept reads the cluster and writes git: {accept:?}"
    );
    assert_ne!(c.repo.head(), head);
    c.repo.git(&["reset", "--quiet", "--hard", "HEAD~1"]);

    // revert: refused before anything is sent, even the dry run, naming the verb.
    for args in [
        &["revert", "deploy/ledger", "--yes"][..],
        &["revert", "deploy/ledger", "--dry-run"],
    ] {
        let revert = viewer(&c, &kubeconfig, args);
        assert_eq!(revert.code, 2, "{revert:?}");
        assert!(
            revert.stderr.contains(&format!(
                "RBAC refused: you may not patch deployments.apps in namespace \"{ns}\""
            )),
            "{revert:?}"
        );
    }
    let revert = viewer(&c, &kubeconfig, &["revert", "secret/ledger-db", "--yes"]);
    assert_eq!(revert.code, 2, "{revert:?}");
    says_forbidden(&revert, "get", "secrets", &ns);

    let live_after = c.ok(&[
        "get",
        "deployment/ledger",
        "-o",
        "jsonpath={.spec.replicas}",
    ]);
    assert_eq!(live_after, live_before, "nothing changed in the cluster");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_view_of_a_viewer_shows_the_rows_and_says_why_r_cannot_revert() {
    let Some((c, kubeconfig)) = ledger_and_viewer() else {
        return;
    };
    let ns = c.ns().to_owned();
    let common = flags(&c, &kubeconfig);
    let ns = &ns;
    let script = move |tx, text: std::sync::Arc<std::sync::Mutex<String>>| async move {
        wait_for(&text, "ledger scaled to 3, drifted by one field", |s| {
            row(s, "ledger").is_some_and(|l| l.contains(" 3 "))
                && row_ends_with(s, "ledger", "1 field")
        })
        .await;
        keys(&tx, "/ledger\n");
        keys(&tx, "r");
        wait_for(&text, "the refusal, naming the verb", |s| {
            s.contains(&format!(
                "you may not patch deployments.apps in namespace \"{ns}\""
            ))
        })
        .await;
        keys(&tx, "q");
    };
    run(&common, 150, 40, script).await;
    let live = c.ok(&[
        "get",
        "deployment/ledger",
        "-o",
        "jsonpath={.spec.replicas}",
    ]);
    assert_eq!(live, "3", "nothing changed in the cluster");
}
