//! `kdrift accept` on the demo cluster: a `kubectl scale` hotfix goes into git as a one-line
//! commit with the comments intact, and the user's own changes are never swept into it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::headless_util;

use common::Cluster;
use headless_util::{Repo, kdrift};

const CART: &str = "shop/cart.yaml";

/// The lines of a unified diff that were added or removed (without the file headers).
fn changed_lines(diff: &str) -> Vec<&str> {
    diff.lines()
        .filter(|l| l.starts_with(['+', '-']) && !l.starts_with("+++") && !l.starts_with("---"))
        .collect()
}

#[test]
fn a_scale_is_accepted_as_one_changed_line_and_check_is_clean_after() {
    let c = Cluster::start();
    let repo = Repo::demo();
    let before = repo.read(CART);
    let start = repo.head();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);

    let accept = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(accept.code, 0, "{accept:?}");
    assert_eq!(
        changed_lines(&accept.stdout),
        ["-  replicas: 2", "+  replicas: 5"],
        "the preview shows the one line: {accept:?}"
    );
    let hash = repo.git(&["rev-parse", "--short", "HEAD"]);
    assert!(
        accept
            .stdout
            .contains(&format!("committed {} on main", hash.trim())),
        "{accept:?}"
    );
    assert_eq!(repo.git(&["rev-parse", "HEAD~1"]).trim(), start);

    let stat = repo.git(&["show", "--stat", "--format=", "HEAD"]);
    assert!(stat.contains("shop/cart.yaml | 2 +-"), "{stat}");
    assert!(
        stat.contains("1 file changed, 1 insertion(+), 1 deletion(-)"),
        "{stat}"
    );
    let show = repo.git(&["show", "--format=", "HEAD"]);
    assert_eq!(
        changed_lines(&show),
        ["-  replicas: 2", "+  replicas: 5"],
        "{show}"
    );
    let message = repo.git(&["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with("kdrift: accept live spec.replicas of deployment/shop/cart\n"),
        "{message}"
    );
    // A v1.36 server records a /scale write with no time, and the demo as it does (issue 34):
    // the message names no time rather than a made-up one.
    assert!(
        message.contains("spec.replicas: 2 → 5 (by kubectl via /scale)\n"),
        "{message}"
    );

    // Every other line, comments included, is as it was.
    let after = repo.read(CART);
    let (old, new): (Vec<&str>, Vec<&str>) = (before.lines().collect(), after.lines().collect());
    assert_eq!(old.len(), new.len());
    let differing: Vec<usize> = (0..old.len()).filter(|&i| old[i] != new[i]).collect();
    assert_eq!(differing.len(), 1, "{after}");
    assert!(
        old.iter().any(|l| l.trim_start().starts_with('#')),
        "the demo file has comments"
    );

    let check = kdrift(&c, &repo, &["check", "-A"]);
    assert_eq!(check.code, 0, "in sync after the accept: {check:?}");
    let again = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(again.stdout.contains("nothing to accept"), "{again:?}");
    assert_eq!(
        repo.git(&["rev-parse", "HEAD~1"]).trim(),
        start,
        "no second commit"
    );
}

#[test]
fn no_commit_writes_the_file_only_and_field_picks_one_of_several() {
    let c = Cluster::start();
    let repo = Repo::demo();
    let start = repo.head();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=4"]);
    c.ok(&["set", "env", "deployment/cart", "-n", "shop", "EXTRA=on"]);

    let unknown = kdrift(
        &c,
        &repo,
        &[
            "accept",
            "deploy/cart",
            "-n",
            "shop",
            "--field",
            "spec.paused",
        ],
    );
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(
        unknown.stderr.contains(
            "drifted fields: spec.replicas, spec.template.spec.containers[name=cart].env[name=EXTRA]"
        ),
        "the error lists what can be accepted: {unknown:?}"
    );

    let env_path = "spec.template.spec.containers[name=cart].env[name=EXTRA]";
    let run = kdrift(
        &c,
        &repo,
        &[
            "accept",
            "deploy/cart",
            "-n",
            "shop",
            "--field",
            env_path,
            "--no-commit",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("not committed"), "{run:?}");
    assert_eq!(repo.head(), start, "no commit with --no-commit");
    assert_eq!(repo.git(&["status", "--porcelain"]), " M shop/cart.yaml\n");
    let added = changed_lines(&run.stdout);
    assert_eq!(added.len(), 2, "{run:?}");
    assert!(
        added[0].starts_with('+') && added[0].contains("- name: EXTRA"),
        "{run:?}"
    );
    assert!(
        added[1].contains("value: \"on\""),
        "\"on\" stays a string: {run:?}"
    );

    let check = kdrift(&c, &repo, &["check", "-n", "shop", "-o", "json"]);
    assert_eq!(check.code, 1, "the replicas are still drift: {check:?}");
    let fields = headless_util::drifted_fields(&check.json());
    assert_eq!(fields.len(), 1, "{fields:?}");
    assert_eq!(fields[0][2], "spec.replicas");
}

#[test]
fn the_users_own_changes_stay_and_a_dirty_manifest_is_refused() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    c.ok(&["scale", "deployment/frontend", "-n", "shop", "--replicas=3"]);

    // Staged and unstaged work elsewhere in the tree.
    let staged = repo.read("shop/checkout.yaml") + "# staged note\n";
    repo.write("shop/checkout.yaml", &staged);
    repo.git(&["add", "shop/checkout.yaml"]);
    let unstaged = repo.read("namespaces.yaml") + "# unstaged note\n";
    repo.write("namespaces.yaml", &unstaged);
    let status = repo.git(&["status", "--porcelain"]);

    let run = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        repo.git(&["show", "--name-only", "--format=", "HEAD"]),
        "shop/cart.yaml\n",
        "the commit holds the accepted file alone"
    );
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        status,
        "other changes as they were"
    );
    assert_eq!(repo.read("shop/checkout.yaml"), staged);
    assert_eq!(repo.read("namespaces.yaml"), unstaged);
    assert_eq!(
        repo.git(&["diff", "--cached", "--name-only"]),
        "shop/checkout.yaml\n"
    );

    // The manifest itself has the user's unfinished edit: refused, nothing written.
    let mine = repo
        .read("shop/frontend.yaml")
        .replace("# Owner:", "# Owners:");
    repo.write("shop/frontend.yaml", &mine);
    let head = repo.head();
    let refused = kdrift(&c, &repo, &["accept", "deploy/frontend", "-n", "shop"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("shop/frontend.yaml has uncommitted changes"),
        "{refused:?}"
    );
    assert!(
        refused.stderr.contains("--no-commit"),
        "says how to proceed: {refused:?}"
    );
    assert_eq!(repo.read("shop/frontend.yaml"), mine, "nothing written");
    assert_eq!(repo.head(), head);
}

#[test]
fn a_branch_template_commits_on_a_new_branch() {
    let c = Cluster::start();
    let repo = Repo::demo();
    repo.write(
        ".kdrift.yaml",
        "accept:\n  branch: \"hotfix/{namespace}-{name}\"\n",
    );
    repo.git(&["add", ".kdrift.yaml"]);
    repo.git(&["commit", "--quiet", "-m", "kdrift config"]);
    let main = repo.head();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=6"]);

    let run = kdrift(
        &c,
        &repo,
        &[
            "accept",
            "deploy/cart",
            "-n",
            "shop",
            "-m",
            "Keep cart at 6 for the sale",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(
            "on the new branch hotfix/shop-cart (your checkout is unchanged: git switch hotfix/shop-cart to see it): Keep cart at 6 for the sale"
        ),
        "{run:?}"
    );
    // The user stays on main, with main's file; the branch has the hotfix.
    assert_eq!(
        repo.git(&["symbolic-ref", "--short", "HEAD"]).trim(),
        "main"
    );
    assert_eq!(
        repo.git(&["rev-parse", "main"]).trim(),
        main,
        "main is not moved"
    );
    assert!(
        repo.read(CART).contains("replicas: 2"),
        "the checkout is untouched"
    );
    assert_eq!(repo.git(&["rev-parse", "hotfix/shop-cart~1"]).trim(), main);
    assert!(
        repo.git(&["show", "hotfix/shop-cart:shop/cart.yaml"])
            .contains("replicas: 6")
    );
    let message = repo.git(&["log", "-1", "--format=%B", "hotfix/shop-cart"]);
    assert!(
        message.starts_with("Keep cart at 6 for the sale\n"),
        "{message}"
    );
    assert!(
        message.contains("spec.replicas: 2 → 6"),
        "the body still lists the field: {message}"
    );

    // A second hotfix, of another object, gets its own branch from main: not stacked.
    c.ok(&["scale", "deployment/catalog", "-n", "shop", "--replicas=3"]);
    let run = kdrift(&c, &repo, &["accept", "deploy/catalog", "-n", "shop"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        repo.git(&["rev-parse", "hotfix/shop-catalog~1"]).trim(),
        main
    );
    assert_eq!(
        repo.git(&["show", "--name-only", "--format=", "hotfix/shop-catalog"])
            .trim(),
        "shop/catalog.yaml"
    );
}

#[test]
fn outside_git_or_with_a_failing_hook_the_file_is_written_and_git_says_why() {
    let c = Cluster::start();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);

    // Not a repository: written, and said so.
    let repo = Repo::demo();
    std::fs::remove_dir_all(repo.path(".git")).unwrap();
    let plain = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(plain.code, 0, "{plain:?}");
    assert!(
        plain
            .stdout
            .contains("not in a git repository, so nothing was committed"),
        "{plain:?}"
    );
    assert!(repo.read(CART).contains("  replicas: 5\n"));

    // A pre-commit hook that refuses: the file stays written, git's words are shown, exit 2.
    let repo = Repo::demo();
    let hook = repo.path(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'lint: replicas must be reviewed' >&2\nexit 1\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&hook)
        .status()
        .unwrap();
    let start = repo.head();
    let hooked = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(hooked.code, 2, "{hooked:?}");
    assert!(
        hooked.stderr.contains("lint: replicas must be reviewed"),
        "{hooked:?}"
    );
    assert!(
        hooked
            .stderr
            .contains("the file is written but not committed"),
        "{hooked:?}"
    );
    assert_eq!(repo.head(), start);
    assert!(repo.read(CART).contains("  replicas: 5\n"));
}

#[test]
fn accept_works_with_a_relative_manifests_folder_from_anywhere_in_the_repository() {
    // The most common way to start kdrift: `--manifests k8s` inside a bigger repository.
    let c = Cluster::start();
    let repo = Repo::demo();
    std::fs::create_dir_all(repo.path("deploy/k8s")).unwrap();
    for entry in ["shop", "payments", "platform", "namespaces.yaml"] {
        std::fs::rename(repo.path(entry), repo.path(&format!("deploy/k8s/{entry}"))).unwrap();
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "--quiet", "-m", "manifests under deploy/k8s"]);
    let cart = "deploy/k8s/shop/cart.yaml";
    for (replicas, cwd, manifests) in [
        ("3", "", "deploy/k8s"),
        ("4", "", "./deploy/k8s"),
        ("5", "deploy", "k8s"),
        ("6", "deploy/k8s/shop", "../../k8s"),
        ("7", "deploy/k8s", "."),
    ] {
        c.ok(&[
            "scale",
            "deployment/cart",
            "-n",
            "shop",
            &format!("--replicas={replicas}"),
        ]);
        let run = headless_util::kdrift_env(
            c.dir.path(),
            &repo.path(cwd),
            &[
                "accept",
                "deploy/cart",
                "-n",
                "shop",
                "--manifests",
                manifests,
            ],
            &[("KUBECONFIG", c.kubeconfig.as_path())],
        );
        assert_eq!(run.code, 0, "--manifests {manifests} from {cwd:?}: {run:?}");
        assert!(
            repo.read(cart).contains(&format!("replicas: {replicas}\n")),
            "--manifests {manifests} from {cwd:?}: {}",
            repo.read(cart)
        );
        let changed = repo.git(&["show", "--name-only", "--format=", "HEAD"]);
        assert_eq!(changed.trim(), cart, "--manifests {manifests} from {cwd:?}");
    }
}

/// Runs git in the repository, success or not (a conflicting rebase or merge fails).
fn git_may_fail(repo: &Repo, args: &[&str]) {
    let _ = std::process::Command::new("git")
        .args(args)
        .current_dir(repo.root())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_EDITOR", "true")
        .output()
        .unwrap();
}

#[test]
fn accept_refuses_during_a_rebase_merge_or_bisect_and_writes_nothing() {
    let c = Cluster::start();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    type Start = fn(&Repo);
    let cases: [(&str, &str, Start); 4] = [
        ("a rebase", "git rebase --abort", |repo| {
            git_may_fail(repo, &["rebase", "other"])
        }),
        ("a git am", "git am --abort", |repo| {
            // A mailbox patch that does not apply stops `git am` half way.
            let patch = repo.git(&["format-patch", "-1", "--stdout", "other"]);
            repo.write("other.patch", &patch);
            git_may_fail(repo, &["am", "other.patch"]);
        }),
        ("a merge", "git merge --abort", |repo| {
            git_may_fail(repo, &["merge", "other"])
        }),
        ("a bisect", "git bisect reset", |repo| {
            git_may_fail(repo, &["bisect", "start"])
        }),
    ];
    for (what, advice, start) in cases {
        let repo = Repo::demo();
        // Two branches that change the same line of another file: the operation stops there.
        repo.git(&["switch", "--quiet", "-c", "other"]);
        repo.write("notes.txt", "other\n");
        repo.git(&["add", "notes.txt"]);
        repo.git(&["commit", "--quiet", "-m", "other"]);
        repo.git(&["switch", "--quiet", "main"]);
        repo.write("notes.txt", "main\n");
        repo.git(&["add", "notes.txt"]);
        repo.git(&["commit", "--quiet", "-m", "main"]);
        start(&repo);
        let (before, head) = (repo.read(CART), repo.git(&["rev-parse", "HEAD"]));

        let accept = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
        assert_eq!(accept.code, 2, "{what}: {accept:?}");
        assert!(
            accept.stderr.contains(&format!("{what} is in progress"))
                && accept.stderr.contains(advice)
                && accept.stderr.contains("nothing was written"),
            "{what}: {accept:?}"
        );
        assert_eq!(repo.read(CART), before, "{what}: the file is untouched");
        assert_eq!(repo.git(&["rev-parse", "HEAD"]), head, "{what}: no commit");
    }
}

#[test]
fn control_characters_from_the_cluster_never_reach_the_terminal_or_the_commit() {
    // An annotation that would retitle the window and clear the screen if printed raw.
    let c = Cluster::start();
    let repo = Repo::demo();
    let evil = "hi\u{1b}]0;pwned\u{7}\u{1b}[2J";
    c.ok(&[
        "annotate",
        "deployment/cart",
        "-n",
        "shop",
        &format!("note={evil}"),
    ]);
    let raw = |text: &str| text.chars().any(|ch| ch == '\u{1b}' || ch == '\u{7}');

    let check = kdrift(&c, &repo, &["check", "-A"]);
    assert_eq!(check.code, 1, "{check:?}");
    assert!(!raw(&check.stdout) && !raw(&check.stderr), "{check:?}");
    // Shown as one value, quoted with its escapes (`text::one_line`).
    assert!(
        check
            .stdout
            .contains(r#""hi\u001b]0;pwned\u0007\u001b[2J""#),
        "{check:?}"
    );
    let diff = kdrift(&c, &repo, &["diff", "deploy/cart", "-n", "shop"]);
    assert!(!raw(&diff.stdout), "{diff:?}");

    let accept = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(accept.code, 0, "{accept:?}");
    assert!(!raw(&accept.stdout) && !raw(&accept.stderr), "{accept:?}");
    let message = repo.git(&["log", "-1", "--format=%B"]);
    assert!(!raw(&message), "{message:?}");
    assert!(message.contains(r#"\u001b]0;pwned\u0007"#), "{message}");
}

#[test]
fn an_object_defined_twice_is_refused_and_a_symlink_is_one_file() {
    let c = Cluster::start();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);

    let repo = Repo::demo();
    repo.write("shop/cart-copy.yaml", &repo.read(CART));
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "--quiet", "-m", "a copy"]);
    let before = repo.read(CART);
    let accept = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(accept.code, 2, "{accept:?}");
    assert!(
        accept.stderr.contains("defined twice")
            && accept.stderr.contains("shop/cart-copy.yaml:3")
            && accept.stderr.contains("shop/cart.yaml:3"),
        "{accept:?}"
    );
    assert_eq!(repo.read(CART), before, "nothing written");

    // One file shared through a symlink inside the repository: not a duplicate.
    let repo = Repo::demo();
    std::fs::create_dir_all(repo.path("shared")).unwrap();
    std::fs::rename(repo.path(CART), repo.path("shared/cart.yaml")).unwrap();
    std::os::unix::fs::symlink("../shared/cart.yaml", repo.path(CART)).unwrap();
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "--quiet", "-m", "shared cart"]);
    let check = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(check.json()["problems"], serde_json::json!([]), "{check:?}");
    let accept = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(accept.code, 0, "{accept:?}");
    assert!(repo.read("shared/cart.yaml").contains("replicas: 5"));
    let changed = repo.git(&["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(
        changed.trim(),
        "shared/cart.yaml",
        "the file itself is committed"
    );
}

#[test]
fn a_hanging_git_hook_is_stopped_after_the_timeout_and_said() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    let hook = repo.path(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\nsleep 600\n").unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let head = repo.head();
    let started = std::time::Instant::now();
    let run = headless_util::kdrift_env(
        c.dir.path(),
        repo.root(),
        &["accept", "deploy/cart", "-n", "shop"],
        &[
            ("KUBECONFIG", c.kubeconfig.as_path()),
            ("KDRIFT_GIT_TIMEOUT", std::path::Path::new("2")),
        ],
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{run:?}"
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("git commit did not finish within 2 s"),
        "{run:?}"
    );
    assert_eq!(repo.head(), head, "no commit");
    assert!(
        repo.read(CART).contains("replicas: 5"),
        "the file stays written"
    );
}
