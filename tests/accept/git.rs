//! git for accept, in temporary repositories: one file committed alone with the user's other
//! work untouched, failing hooks and a missing identity reported with git's words, not a
//! repository, branch mode.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Once;

use kdrift::git::{
    CommitOutcome, GitError, commit_file, commit_on_new_branch, has_uncommitted_changes,
};

static ISOLATE: Once = Once::new();

/// Every git run by this test binary sees an empty global config and no system config, so the
/// machine's own identity and settings cannot leak into the tests.
fn isolate() {
    ISOLATE.call_once(|| {
        // One folder under the target's scratch space, reused by every run (a folder per
        // process was never removed: statics are not dropped).
        let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("accept-git-home");
        std::fs::create_dir_all(&home).expect("home");
        let config = home.join("gitconfig");
        std::fs::write(&config, "").expect("empty config");
        // SAFETY: set once, before any test of this binary runs git (they all wait on the Once).
        unsafe {
            std::env::set_var("HOME", &home);
            std::env::set_var("GIT_CONFIG_GLOBAL", &config);
            std::env::set_var("GIT_CONFIG_NOSYSTEM", "1");
            for name in [
                "GIT_AUTHOR_NAME",
                "GIT_AUTHOR_EMAIL",
                "GIT_COMMITTER_NAME",
                "GIT_COMMITTER_EMAIL",
                "EMAIL",
            ] {
                std::env::remove_var(name);
            }
        }
    });
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A repository with a committed manifest and two other files; `identity` sets user.name/email.
fn repo(identity: bool) -> (tempfile::TempDir, PathBuf) {
    isolate();
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_path_buf();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["config", "user.useConfigOnly", "true"]);
    git(&root, &["config", "commit.gpgSign", "false"]);
    if identity {
        git(&root, &["config", "user.name", "On Call"]);
        git(&root, &["config", "user.email", "oncall@example.com"]);
    }
    std::fs::create_dir_all(root.join("deploy")).expect("folder");
    std::fs::write(
        root.join("deploy/web.yaml"),
        "spec:\n  replicas: 2 # by hand\n",
    )
    .expect("w");
    std::fs::write(root.join("notes.txt"), "notes\n").expect("w");
    std::fs::write(root.join("other.txt"), "other\n").expect("w");
    if identity {
        git(&root, &["add", "."]);
        git(&root, &["commit", "-q", "-m", "initial"]);
    } else {
        // The initial commit is made with an identity given for that one command.
        git(&root, &["add", "."]);
        git(
            &root,
            &[
                "-c",
                "user.name=Setup",
                "-c",
                "user.email=setup@example.com",
                "commit",
                "-q",
                "-m",
                "initial",
            ],
        );
    }
    (dir, root)
}

/// The user's own work in progress: a staged change, an unstaged change, an untracked file.
fn dirty(root: &Path) {
    std::fs::write(root.join("notes.txt"), "notes\nstaged line\n").expect("w");
    git(root, &["add", "notes.txt"]);
    std::fs::write(root.join("other.txt"), "other\nunstaged line\n").expect("w");
    std::fs::write(root.join("scratch.txt"), "untracked\n").expect("w");
}

fn accept_edit(root: &Path) {
    std::fs::write(
        root.join("deploy/web.yaml"),
        "spec:\n  replicas: 5 # by hand\n",
    )
    .expect("w");
}

/// Everything git knows about the user's work: staged diff, unstaged diff of other files, status.
fn user_state(root: &Path) -> (String, String, String) {
    (
        git(root, &["diff", "--cached", "--", "notes.txt", "other.txt"]),
        git(root, &["diff", "--", "notes.txt", "other.txt"]),
        git(
            root,
            &[
                "status",
                "--porcelain",
                "--",
                "notes.txt",
                "other.txt",
                "scratch.txt",
            ],
        ),
    )
}

#[test]
fn commits_the_file_alone_and_leaves_staged_and_unstaged_work_as_it_was() {
    let (_dir, root) = repo(true);
    dirty(&root);
    let before = user_state(&root);
    accept_edit(&root);
    let message =
        "kdrift: accept live spec.replicas of deployment/shop/web\n\nspec.replicas: 2 → 5\n";
    let outcome = commit_file(&root, Path::new("deploy/web.yaml"), message).expect("commit");
    let CommitOutcome::Committed {
        short_hash, branch, ..
    } = outcome
    else {
        panic!("expected a commit, got {outcome:?}");
    };
    assert_eq!(branch.as_deref(), Some("main"));
    assert_eq!(
        git(&root, &["rev-parse", "--short", "HEAD"]).trim(),
        short_hash
    );
    assert_eq!(
        git(&root, &["show", "--name-only", "--format=", "HEAD"]),
        "deploy/web.yaml\n"
    );
    assert_eq!(
        git(&root, &["log", "-1", "--format=%B"]).trim_end(),
        message.trim_end()
    );
    let shown = git(&root, &["show", "--format=", "HEAD"]);
    assert!(
        shown.contains("-  replicas: 2 # by hand\n+  replicas: 5 # by hand\n"),
        "{shown}"
    );
    assert_eq!(
        user_state(&root),
        before,
        "the user's other work must be untouched"
    );
    assert_eq!(git(&root, &["status", "--porcelain", "--", "deploy"]), "");
}

#[test]
fn a_failing_pre_commit_hook_is_reported_and_the_file_stays_written() {
    let (_dir, root) = repo(true);
    dirty(&root);
    let hook = root.join(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'lint: replicas must be even' >&2\nexit 1\n",
    )
    .expect("w");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let head = git(&root, &["rev-parse", "HEAD"]);
    let before = user_state(&root);
    accept_edit(&root);
    let error = commit_file(&root, Path::new("deploy/web.yaml"), "m").expect_err("refused");
    assert!(matches!(error, GitError::Refused { .. }), "{error}");
    assert!(
        error.to_string().contains("lint: replicas must be even"),
        "{error}"
    );
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head, "no commit made");
    assert_eq!(
        std::fs::read_to_string(root.join("deploy/web.yaml")).expect("r"),
        "spec:\n  replicas: 5 # by hand\n"
    );
    assert_eq!(
        git(&root, &["status", "--porcelain", "--", "deploy"]),
        " M deploy/web.yaml\n"
    );
    assert_eq!(user_state(&root), before);
}

#[test]
fn a_missing_identity_is_reported_with_gits_message() {
    let (_dir, root) = repo(false);
    accept_edit(&root);
    let error = commit_file(&root, Path::new("deploy/web.yaml"), "m").expect_err("refused");
    // What accept says of it: the file is written, git's words follow.
    let text = kdrift::accept::AcceptError::Commit(error).to_string();
    assert!(
        text.contains("the file is written but not committed"),
        "{text}"
    );
    assert!(
        text.contains("user.email") || text.contains("identity"),
        "git's own words: {text}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("deploy/web.yaml")).expect("r"),
        "spec:\n  replicas: 5 # by hand\n"
    );
}

#[test]
fn outside_a_repository_nothing_is_committed() {
    isolate();
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("web.yaml"), "a: 1\n").expect("w");
    let outcome = commit_file(dir.path(), Path::new("web.yaml"), "m").expect("no error");
    assert_eq!(outcome, CommitOutcome::NotARepository);
}

const HOTFIX: &str = "spec:\n  replicas: 5 # by hand\n";

#[test]
fn branch_mode_commits_on_a_new_branch_from_the_users_branch_and_leaves_them_there() {
    let (_dir, root) = repo(true);
    dirty(&root);
    let main = git(&root, &["rev-parse", "main"]);
    let manifest = std::fs::read_to_string(root.join("deploy/web.yaml")).expect("r");
    let before = user_state(&root);
    let file = Path::new("deploy/web.yaml");
    let outcome =
        commit_on_new_branch(&root, file, HOTFIX, "m", "hotfix/shop-web").expect("commit");
    let CommitOutcome::Committed { branch, .. } = outcome else {
        panic!("expected a commit, got {outcome:?}");
    };
    assert_eq!(branch.as_deref(), Some("hotfix/shop-web"));
    assert_eq!(
        git(&root, &["rev-parse", "main"]),
        main,
        "main does not move"
    );
    assert_eq!(git(&root, &["rev-parse", "hotfix/shop-web~1"]), main);
    assert_eq!(
        git(
            &root,
            &["show", "--name-only", "--format=", "hotfix/shop-web"]
        ),
        "deploy/web.yaml\n"
    );
    assert_eq!(
        git(&root, &["show", "hotfix/shop-web:deploy/web.yaml"]),
        HOTFIX
    );
    // The user is where they were: same branch, same working copy, same index.
    assert_eq!(git(&root, &["branch", "--show-current"]).trim(), "main");
    assert_eq!(user_state(&root), before);
    assert_eq!(
        std::fs::read_to_string(root.join(file)).expect("r"),
        manifest
    );
    assert_eq!(
        git(&root, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );

    // A second hotfix is made from main too, not stacked on the first.
    commit_on_new_branch(&root, file, HOTFIX, "m", "hotfix/shop-api").expect("commit");
    assert_eq!(git(&root, &["rev-parse", "hotfix/shop-api~1"]), main);

    // The same branch again: refused, the branch is not moved.
    let tip = git(&root, &["rev-parse", "hotfix/shop-web"]);
    let error =
        commit_on_new_branch(&root, file, HOTFIX, "m", "hotfix/shop-web").expect_err("exists");
    assert!(matches!(error, GitError::BranchExists { .. }), "{error}");
    assert_eq!(git(&root, &["rev-parse", "hotfix/shop-web"]), tip);
}

#[test]
fn branch_mode_with_a_failing_hook_leaves_no_branch() {
    let (_dir, root) = repo(true);
    let hook = root.join(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\nexit 1\n").expect("w");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    commit_on_new_branch(&root, Path::new("deploy/web.yaml"), HOTFIX, "m", "hotfix/x")
        .expect_err("hook");
    assert_eq!(git(&root, &["branch", "--show-current"]).trim(), "main");
    assert_eq!(git(&root, &["branch", "--list", "hotfix/x"]), "");
}

#[test]
fn uncommitted_changes_to_the_manifest_itself_are_reported_before_an_accept() {
    let (_dir, root) = repo(true);
    let file = Path::new("deploy/web.yaml");
    assert!(!has_uncommitted_changes(&root, file).expect("status"));
    std::fs::write(
        root.join(file),
        "spec:\n  replicas: 2 # by hand\n  paused: true\n",
    )
    .expect("w");
    assert!(has_uncommitted_changes(&root, file).expect("status"));
    let elsewhere = tempfile::tempdir().expect("temp dir");
    std::fs::write(elsewhere.path().join("a.yaml"), "a: 1\n").expect("w");
    assert!(!has_uncommitted_changes(elsewhere.path(), Path::new("a.yaml")).expect("no repo"));
}
