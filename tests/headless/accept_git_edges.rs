//! `kdrift accept` in git set-ups beyond one plain checkout, as a user makes them with the real
//! git: a sparse checkout, a linked worktree, manifests inside a submodule, a read-only manifest,
//! another user's manifest, a checkout on a read-only file system, and signing that would prompt
//! on the terminal. Each works or refuses with a sentence that says what to do; none hangs,
//! leaves a half-written file or makes a half commit.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::headless_util;
use crate::pty;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use common::Cluster;
use headless_util::{Repo, Run, git_in, kdrift, kdrift_in};

const CART: &str = "shop/cart.yaml";

/// Temporary files an interrupted write would leave (`.kdrift-*.tmp`) anywhere under `dir`.
fn leftovers(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() && name != ".git" {
                pending.push(path);
            } else if name.starts_with(".kdrift-") {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

fn is_root() -> bool {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn a_sparse_checkout_names_the_folder_to_add_and_accepts_inside_it() {
    let c = Cluster::start();
    let repo = Repo::demo();
    repo.git(&["sparse-checkout", "set", "shop"]);
    assert!(!repo.path("payments/ledger.yaml").exists());
    c.ok(&[
        "scale",
        "deployment/ledger",
        "-n",
        "payments",
        "--replicas=3",
    ]);
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    let head = repo.head();

    // Its manifest is in git but not on disk: said, with the folder to bring in.
    let outside = kdrift(&c, &repo, &["accept", "deploy/ledger", "-n", "payments"]);
    assert_eq!(outside.code, 2, "{outside:?}");
    assert!(
        outside.stderr.contains(
            "deployment/payments/ledger is defined in payments/ledger.yaml, which this sparse checkout leaves out"
        ) && outside.stderr.contains("sparse-checkout add payments"),
        "{outside:?}"
    );
    let diff = kdrift(&c, &repo, &["diff", "deploy/ledger", "-n", "payments"]);
    assert!(
        diff.stderr.contains("sparse checkout leaves out"),
        "{diff:?}"
    );
    let check = kdrift(&c, &repo, &["check", "-A"]);
    assert_eq!(check.code, 1, "the cart is drift: {check:?}");
    assert!(
        check.stderr.contains("this checkout is sparse")
            && check.stderr.contains("are not compared"),
        "{check:?}"
    );
    assert_eq!(repo.head(), head);

    // Inside the cone, accept works and the checkout stays sparse.
    let inside = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(inside.code, 0, "{inside:?}");
    assert_eq!(
        repo.git(&["show", "--name-only", "--format=", "HEAD"]),
        "shop/cart.yaml\n"
    );
    assert!(!repo.path("payments/ledger.yaml").exists());
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

#[test]
fn a_linked_worktree_commits_on_its_own_branch() {
    let c = Cluster::start();
    let repo = Repo::demo();
    let elsewhere = tempfile::tempdir().unwrap();
    let tree = elsewhere.path().join("hotfix");
    repo.git(&[
        "worktree",
        "add",
        "--quiet",
        "-b",
        "hot",
        tree.to_str().unwrap(),
    ]);
    assert!(
        tree.join(".git").is_file(),
        "a linked worktree's .git is a file"
    );
    let main = repo.head();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);

    let run = kdrift_in(&c, &tree, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains(" on hot: "), "{run:?}");
    assert_eq!(git_in(&tree, &["rev-parse", "hot~1"]).trim(), main);
    assert_eq!(repo.head(), main, "main's checkout does not move");
    assert!(repo.read(CART).contains("replicas: 2\n"));
    assert!(
        git_in(&tree, &["show", "hot:shop/cart.yaml"]).contains("replicas: 5\n"),
        "the worktree's branch has the change"
    );
}

#[test]
fn manifests_in_a_submodule_are_committed_in_the_submodule_and_the_pointer_is_said() {
    let c = Cluster::start();
    let manifests = Repo::demo();
    let top = tempfile::tempdir().unwrap();
    let root = top.path();
    git_in(root, &["init", "--quiet", "--initial-branch=main"]);
    git_in(root, &["config", "user.name", "On Call"]);
    git_in(root, &["config", "user.email", "oncall@example.com"]);
    git_in(root, &["config", "commit.gpgsign", "false"]);
    git_in(
        root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "--quiet",
            manifests.root().to_str().unwrap(),
            "k8s",
        ],
    );
    git_in(
        root,
        &["commit", "--quiet", "-m", "manifests as a submodule"],
    );
    let sub = root.join("k8s");
    for (key, value) in [
        ("user.name", "On Call"),
        ("user.email", "oncall@example.com"),
        ("commit.gpgsign", "false"),
    ] {
        git_in(&sub, &["config", key, value]);
    }
    let (top_head, sub_head) = (
        git_in(root, &["rev-parse", "HEAD"]),
        git_in(&sub, &["rev-parse", "HEAD"]),
    );
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);

    // From the superproject's top: the commit goes into the submodule's repository.
    let run = kdrift_in(&c, root, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("in the submodule k8s: kdrift: accept live spec.replicas")
            && run
                .stdout
                .contains("still records the submodule's previous commit")
            && run.stdout.contains("add k8s and commit there"),
        "{run:?}"
    );
    assert_eq!(git_in(&sub, &["rev-parse", "HEAD~1"]), sub_head);
    assert_eq!(
        git_in(&sub, &["show", "--name-only", "--format=", "HEAD"]),
        "shop/cart.yaml\n"
    );
    assert_eq!(git_in(&sub, &["status", "--porcelain"]), "");
    // The superproject: no commit, nothing staged; only the moved pointer shows.
    assert_eq!(git_in(root, &["rev-parse", "HEAD"]), top_head);
    assert_eq!(git_in(root, &["diff", "--cached", "--name-only"]), "");
    assert_eq!(git_in(root, &["status", "--porcelain"]), " M k8s\n");

    // The dirty-file rule looks in the submodule too: the user's edit there is refused.
    let mine = std::fs::read_to_string(sub.join("shop/frontend.yaml")).unwrap() + "# mine\n";
    std::fs::write(sub.join("shop/frontend.yaml"), &mine).unwrap();
    c.ok(&["scale", "deployment/frontend", "-n", "shop", "--replicas=3"]);
    let refused = kdrift_in(&c, root, &["accept", "deploy/frontend", "-n", "shop"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(
        refused.stderr.contains("has uncommitted changes"),
        "{refused:?}"
    );
    assert_eq!(
        std::fs::read_to_string(sub.join("shop/frontend.yaml")).unwrap(),
        mine
    );
}

/// `kdrift accept deploy/cart -n shop`, then the same with `--no-commit`.
fn accept_both_ways(c: &Cluster, repo: &Repo) -> [Run; 2] {
    [
        kdrift(c, repo, &["accept", "deploy/cart", "-n", "shop"]),
        kdrift(
            c,
            repo,
            &["accept", "deploy/cart", "-n", "shop", "--no-commit"],
        ),
    ]
}

#[test]
fn a_read_only_manifest_is_refused_before_anything_is_written_even_as_root() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    std::fs::set_permissions(repo.path(CART), std::fs::Permissions::from_mode(0o444)).unwrap();
    let (before, head) = (repo.read(CART), repo.head());

    for run in accept_both_ways(&c, &repo) {
        assert_eq!(run.code, 2, "{run:?}");
        assert!(
            run.stderr
                .contains("shop/cart.yaml is read-only (mode 0444)")
                && run.stderr.contains("chmod u+w")
                && run.stderr.contains("nothing was written"),
            "{run:?}"
        );
        assert_eq!(repo.read(CART), before, "the file is untouched");
        assert_eq!(repo.head(), head, "no commit");
        let mode = std::fs::metadata(repo.path(CART)).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o444);
        assert_eq!(leftovers(repo.root()), Vec::<String>::new());
    }

    // Made writable, as the sentence says: accepted.
    std::fs::set_permissions(repo.path(CART), std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn another_users_manifest_is_refused_or_as_root_keeps_its_owner() {
    use kdrift::manifest::edit::write::replace_refusal;
    // Not root: kdrift would replace the file with one of its own user's: refused.
    let refusal = replace_refusal(Path::new("shop/cart.yaml"), 0o100644, 4242, 1000)
        .expect("refused")
        .to_string();
    assert!(
        refusal.contains("shop/cart.yaml belongs to another user (uid 4242; you are uid 1000)")
            && refusal.contains("nothing was written"),
        "{refusal}"
    );
    if !is_root() {
        // Only root can give a file to another user; the rest of this test needs that.
        return;
    }
    let c = Cluster::start();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);

    // Root (a container, sudo): accepted, and the file stays its owner's, not root's.
    let repo = Repo::demo();
    std::os::unix::fs::chown(repo.path(CART), Some(4242), Some(4343)).unwrap();
    let run = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(run.code, 0, "{run:?}");
    let meta = std::fs::metadata(repo.path(CART)).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid()),
        (4242, 4343),
        "owner and group kept"
    );
    assert!(repo.read(CART).contains("replicas: 5\n"));

    // A whole repository of another user: git will not work in it ("dubious ownership"); that
    // is said in git's words before anything is written, not taken for "no repository".
    let repo = Repo::demo();
    let chown = std::process::Command::new("chown")
        .args(["-R", "4242:4242"])
        .arg(repo.root())
        .status()
        .unwrap();
    assert!(chown.success());
    let before = repo.read(CART);
    let run = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("dubious ownership") && run.stderr.contains("safe.directory"),
        "{run:?}"
    );
    assert!(run.stderr.contains("nothing was written"), "{run:?}");
    assert_eq!(repo.read(CART), before);
}

/// Makes `dir` read-only (a bind mount over itself) in a mount namespace of its own, then runs
/// the rest of the arguments.
const READ_ONLY: &str =
    r#"mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 97; shift; exec "$@""#;

/// The `unshare` flags that can make a read-only mount here: as root, or in a user namespace;
/// `None` where the machine allows neither.
fn unshare_flags(dir: &Path) -> Option<&'static [&'static str]> {
    [&["-m"][..], &["-r", "-m"][..]].into_iter().find(|flags| {
        std::process::Command::new("unshare")
            .args(*flags)
            .args(["sh", "-c", READ_ONLY, "sh"])
            .arg(dir)
            .arg("true")
            .output()
            .is_ok_and(|out| out.status.success())
    })
}

/// `kdrift ARGS` run in `repo` with the repository mounted read-only, as `flags` allow.
fn kdrift_read_only(c: &Cluster, repo: &Repo, flags: &[&str], args: &[&str]) -> Run {
    let mut cmd = headless_util::command(c.dir.path(), repo.root(), &[]);
    cmd.env("KUBECONFIG", &c.kubeconfig);
    let mut full = std::process::Command::new("unshare");
    full.args(flags)
        .args(["sh", "-c", READ_ONLY, "sh"])
        .arg(repo.root())
        .arg(env!("CARGO_BIN_EXE_kdrift"))
        .args(args)
        .current_dir(repo.root());
    for (name, value) in cmd.get_envs() {
        match value {
            Some(value) => full.env(name, value),
            None => full.env_remove(name),
        };
    }
    let out = full.output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn a_checkout_on_a_read_only_file_system_is_refused_with_a_sentence() {
    // Where no read-only mount can be made (no root, no user namespaces), the sentence is
    // proved at the function the write goes through (the unit test
    // `a_read_only_file_system_is_said_with_what_to_do` in src/manifest/edit/write.rs).
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    let (before, head) = (repo.read(CART), repo.head());
    let Some(flags) = unshare_flags(repo.root()) else {
        eprintln!("no read-only mount can be made here: only the unit test runs");
        return;
    };
    let check = kdrift_read_only(&c, &repo, flags, &["check", "-A"]);
    assert_eq!(
        check.code, 1,
        "check reads only, and sees the drift: {check:?}"
    );
    for args in [
        &["accept", "deploy/cart", "-n", "shop"][..],
        &["accept", "deploy/cart", "-n", "shop", "--no-commit"][..],
    ] {
        let run = kdrift_read_only(&c, &repo, flags, args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(
            run.stderr
                .contains("shop/cart.yaml is on a read-only file system")
                && run.stderr.contains("nothing was written")
                && run.stderr.contains("writable checkout"),
            "{args:?}: {run:?}"
        );
    }
    assert_eq!(repo.read(CART), before);
    assert_eq!(repo.head(), head);
    assert_eq!(leftovers(repo.root()), Vec::<String>::new());
}

#[test]
fn signing_that_would_prompt_fails_at_once_with_what_to_do_and_no_commit() {
    // A signing program that asks for a passphrase the way gpg-agent's pinentry does: on the
    // terminal named by GPG_TTY, else on its own controlling terminal.
    let c = Cluster::start();
    let repo = Repo::demo();
    let signer = repo.path(".git/ask-passphrase");
    std::fs::write(
        &signer,
        "#!/bin/sh\ntty=${GPG_TTY:-/dev/tty}\nexec 3<>\"$tty\" || exit 2\necho 'Passphrase:' >&3\nread pass <&3\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&signer, std::fs::Permissions::from_mode(0o755)).unwrap();
    repo.git(&["config", "commit.gpgsign", "true"]);
    repo.git(&["config", "gpg.program", signer.to_str().unwrap()]);
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    let head = repo.head();

    // On a terminal, with GPG_TTY set as shells set it for gpg; a generous git time limit, so
    // that a prompt that waits shows as a slow run, not as the time limit's message.
    let mut cmd = portable_pty::CommandBuilder::new("sh");
    cmd.args([
        "-c",
        "GPG_TTY=$(tty) exec \"$@\"",
        "sh",
        env!("CARGO_BIN_EXE_kdrift"),
        "accept",
        "deploy/cart",
        "-n",
        "shop",
    ]);
    cmd.cwd(repo.root());
    cmd.env("HOME", c.dir.path());
    cmd.env("KUBECONFIG", &c.kubeconfig);
    cmd.env("GIT_CONFIG_NOSYSTEM", "1");
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null");
    cmd.env("KDRIFT_LOG", "off");
    cmd.env("KDRIFT_GIT_TIMEOUT", "60");
    cmd.env("TERM", "dumb");
    let started = Instant::now();
    let mut session = pty::Pty::spawn(cmd, 40, 200);
    let mut seen = String::new();
    let status = loop {
        while let Ok(bytes) = session.output.try_recv() {
            seen.push_str(&String::from_utf8_lossy(&bytes));
        }
        if let Some(status) = session.child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(90) {
            let _ = session.child.kill();
            panic!("kdrift did not end:\n{seen}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    while let Ok(bytes) = session.output.recv_timeout(Duration::from_millis(200)) {
        seen.push_str(&String::from_utf8_lossy(&bytes));
    }
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(30),
        "waited on a prompt no one can answer ({took:?}):\n{seen}"
    );
    assert_eq!(status.exit_code(), 2, "{seen}");
    let seen = seen.replace("\r\n", "\n");
    assert!(
        seen.contains("git commit could not sign the commit")
            && seen.contains("commit.gpgsign=false")
            && seen.contains("the file is written but not committed"),
        "{seen}"
    );
    assert!(
        !seen.contains("Passphrase:"),
        "no prompt on the terminal: {seen}"
    );
    assert_eq!(repo.head(), head, "no commit, half-made or otherwise");
    // Kept, as said: committing it from a terminal finishes the accept.
    assert!(repo.read(CART).contains("replicas: 5\n"));
    assert_eq!(repo.git(&["status", "--porcelain"]), " M shop/cart.yaml\n");
}
