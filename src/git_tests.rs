#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::*;

fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn push_sends_the_branch_to_its_remote_and_says_a_refusal() {
    let tmp = tempfile::tempdir().unwrap();
    let remote = tmp.path().join("remote.git");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    git_in(tmp.path(), &["init", "-q", "--bare", "remote.git"]);
    git_in(&work, &["init", "-q", "-b", "main"]);
    git_in(
        &work,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    std::fs::write(work.join("a.yaml"), "a: 1\n").unwrap();
    git_in(&work, &["add", "a.yaml"]);
    git_in(&work, &["commit", "-q", "-m", "one"]);
    assert_eq!(push(&work, "main").unwrap(), "origin/main");
    assert_eq!(
        git_in(&remote, &["rev-parse", "main"]),
        git_in(&work, &["rev-parse", "HEAD"])
    );
    // A remote that is gone: refused, in git's words, never a prompt or a hang.
    git_in(
        &work,
        &["remote", "set-url", "origin", "/nonexistent/kdrift.git"],
    );
    let err = push(&work, "main").unwrap_err().to_string();
    assert!(err.contains("push"), "{err}");
}

#[test]
fn message_names_object_fields_and_who_changed_them() {
    let fields = [AcceptedField {
        path: "spec.replicas".into(),
        old: Some("2".into()),
        new: Some("5".into()),
        manager: Some("kubectl-scale".into()),
        time: Some("2026-11-22T03:10:00Z".into()),
    }];
    assert_eq!(
        commit_message("Deployment", "shop", "web", &fields),
        "kdrift: accept live spec.replicas of deployment/shop/web\n\n\
         spec.replicas: 2 → 5 (by kubectl-scale at 2026-11-22T03:10:00Z)\n"
    );
}

/// A cluster-scoped object is named as the drift report names it, `clusterrole/NAME`, in the
/// subject and in a branch made from `{namespace}` — never `clusterrole//NAME`.
#[test]
fn a_cluster_scoped_object_has_no_empty_namespace_in_its_names() {
    let fields = [AcceptedField {
        path: "rules[0].verbs".into(),
        old: Some(r#"["get","list"]"#.into()),
        new: Some(r#"["get","list","watch"]"#.into()),
        manager: Some("kubectl-edit".into()),
        time: None,
    }];
    let message = commit_message("ClusterRole", "", "pod-reader", &fields);
    assert!(
        message.starts_with("kdrift: accept live rules[0].verbs of clusterrole/pod-reader\n"),
        "{message}"
    );
    assert_eq!(
        branch_name(
            "kdrift/{kind}/{namespace}/{name}",
            "ClusterRole",
            "",
            "pod-reader"
        ),
        "kdrift/clusterrole/pod-reader"
    );
    assert_eq!(
        branch_name("{namespace}/{name}", "ClusterRole", "", "pod-reader"),
        "pod-reader"
    );
}

#[test]
fn long_field_lists_are_counted_in_the_subject() {
    let field = |path: &str| AcceptedField {
        path: path.into(),
        old: None,
        new: Some("x".into()),
        manager: None,
        time: None,
    };
    let fields = [
        field("spec.template.spec.containers[name=\"web\"].image"),
        field("spec.template.spec.containers[name=\"web\"].resources.limits.memory"),
    ];
    let message = commit_message("deployment", "shop", "web", &fields);
    assert!(message.starts_with("kdrift: accept live 2 fields of deployment/shop/web\n\n"));
    assert!(message.contains("resources.limits.memory: (not set) → x\n"));
}

#[test]
fn branch_names_come_from_the_template_and_are_valid() {
    assert_eq!(
        branch_name("hotfix/{namespace}-{name}", "Deployment", "shop", "web"),
        "hotfix/shop-web"
    );
    assert_eq!(
        branch_name("hotfix/{kind}/{name}", "Deployment", "a", "we b~1"),
        "hotfix/deployment/we-b-1"
    );
}
