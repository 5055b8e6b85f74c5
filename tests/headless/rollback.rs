//! `kdrift rollback` against the demo cluster (issue 48): a bad image brought by a git commit
//! and applied is rolled back by one command — one commit that restores the image (comments
//! kept) and names the bad commit, the cluster back on the good revision, `check` in sync; an
//! out-of-band bad image is rolled back without a commit; a workload no manifest describes is
//! rolled back as `kubectl rollout undo` does; `--dry-run` changes nothing; the refusals say why.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::headless_util;

use common::Cluster;
use headless_util::{Repo, kdrift};

const GOOD: &str = "registry.example/shop/frontend:2.4.1";
const BAD: &str = "registry.example/shop/frontend:2.5.0-crashes";

fn image(c: &Cluster, name: &str) -> String {
    let live = c.get_json(&format!("deployment/{name}"), "shop");
    live["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The number of the Deployment's current revision.
fn revision(c: &Cluster, name: &str) -> String {
    let live = c.get_json(&format!("deployment/{name}"), "shop");
    live["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Waits until the Deployment's controller has made a new revision.
fn wait_for_revision(c: &Cluster, name: &str, wanted: &str) {
    let start = std::time::Instant::now();
    while revision(c, name) != wanted {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "{name} never reached revision {wanted} (at {})",
            revision(c, name)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// `kdrift rollback deployment/NAME -n shop ARGS`.
fn rollback(c: &Cluster, repo: &Repo, name: &str, args: &[&str]) -> headless_util::Run {
    let target = format!("deployment/{name}");
    let mut all = vec!["rollback", target.as_str(), "-n", "shop"];
    all.extend_from_slice(args);
    kdrift(c, repo, &all)
}

/// The demo with its frontend bumped to a crashing image by a commit, applied as CI would.
fn bad_release_from_git() -> (Cluster, Repo, String) {
    let c = Cluster::start();
    let repo = Repo::demo();
    let before = repo.read("shop/frontend.yaml");
    assert!(before.contains(GOOD));
    repo.write("shop/frontend.yaml", &before.replace(GOOD, BAD));
    repo.git(&["commit", "-qam", "frontend 2.5.0: the new checkout flow"]);
    let bad = repo
        .git(&["rev-parse", "--short=12", "HEAD"])
        .trim()
        .to_owned();
    wait_for_revision(&c, "frontend", "1");
    c.ok(&[
        "apply",
        "-f",
        repo.path("shop/frontend.yaml").to_str().unwrap(),
    ]);
    wait_for_revision(&c, "frontend", "2");
    assert_eq!(image(&c, "frontend"), BAD);
    (c, repo, bad)
}

#[test]
fn a_bad_image_from_git_is_rolled_back_by_one_commit_naming_the_bad_one() {
    let (c, repo, bad) = bad_release_from_git();
    let before = repo.read("shop/frontend.yaml");
    let head = repo.head();

    // --dry-run: the plan, and nothing changed anywhere.
    let dry = rollback(&c, &repo, "frontend", &["--dry-run"]);
    assert_eq!(dry.code, 0, "{}{}", dry.stdout, dry.stderr);
    for said in [
        "Roll back deployment/shop/frontend from revision 2 to revision 1",
        &format!("from commit {bad} frontend 2.5.0: the new checkout flow"),
        &format!("-          image: {BAD}"),
        &format!("+          image: {GOOD}"),
        "+++ deployment/shop/frontend (after rollback)",
        // The demo's shop app self-heals from the branch it watches: the commit must reach it.
        "warning: argo:shop self-heals from the branch it watches, where the bad values are until the commit is pushed: Argo CD app shop: push the commit",
        "dry run: nothing was changed",
    ] {
        assert!(dry.stdout.contains(said), "{said}: {}", dry.stdout);
    }
    assert_eq!(repo.head(), head);
    assert_eq!(repo.read("shop/frontend.yaml"), before);
    assert_eq!(image(&c, "frontend"), BAD);

    let run = rollback(&c, &repo, "frontend", &["--yes"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // One commit, that restores the image with the file's comments, and names the bad commit.
    assert_eq!(
        repo.git(&["rev-list", "--count", &format!("{head}..HEAD")])
            .trim(),
        "1"
    );
    assert_eq!(
        repo.read("shop/frontend.yaml"),
        before.replace(BAD, GOOD),
        "only the image changes, comments kept"
    );
    // The bad commit changed that file alone: the commit is its revert, as git revert makes it.
    assert!(
        run.stdout.contains(&format!(
            "the commit reverts it (as git revert {bad} would: it changed shop/frontend.yaml alone)"
        )),
        "{}",
        run.stdout
    );
    let message = repo.git(&["log", "-1", "--format=%B"]);
    let full = repo.git(&["rev-parse", &bad]);
    assert!(
        message.starts_with(&format!(
            "Revert \"frontend 2.5.0: the new checkout flow\"\n\nThis reverts commit {}.",
            full.trim()
        )) && message.contains("kdrift: roll back deployment/shop/frontend to revision 1")
            && message.contains(&format!("{bad} frontend 2.5.0: the new checkout flow")),
        "{message}"
    );
    // The cluster back on the good image, and in sync with git.
    assert_eq!(image(&c, "frontend"), GOOD);
    let check = kdrift(&c, &repo, &["diff", "deployment/frontend", "-n", "shop"]);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
    // The timeline shows it as a rollback, with who asked.
    let changes = kdrift(&c, &repo, &["changes", "-n", "shop"]);
    assert!(
        changes.stdout.contains("kdrift rollback to revision 1 by "),
        "{} {}",
        changes.stdout,
        changes.stderr
    );
}

#[test]
fn an_out_of_band_bad_image_is_rolled_back_without_a_commit() {
    let c = Cluster::start();
    let repo = Repo::demo();
    wait_for_revision(&c, "frontend", "1");
    c.ok(&[
        "set",
        "image",
        "deployment/frontend",
        "-n",
        "shop",
        &format!("frontend={BAD}"),
    ]);
    wait_for_revision(&c, "frontend", "2");
    let head = repo.head();
    let run = rollback(
        &c,
        &repo,
        "frontend",
        &["--yes", "--wait", "--timeout", "60s"],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("the change was out of band: git already holds revision 1's values"),
        "{}",
        run.stdout
    );
    // --wait follows the rollout back to the good revision until it completes.
    assert!(
        run.stdout
            .contains("deployment/shop/frontend: rollout complete"),
        "{}",
        run.stdout
    );
    assert_eq!(repo.head(), head, "git untouched");
    assert_eq!(image(&c, "frontend"), GOOD);
}

#[test]
fn a_workload_without_a_manifest_is_rolled_back_as_rollout_undo_does() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&[
        "create",
        "deployment",
        "solo",
        "-n",
        "shop",
        "--image=registry.example/solo:1",
    ]);
    let solo = |c: &Cluster| {
        c.get_json("deployment/solo", "shop")["spec"]["template"]["spec"]["containers"][0]["image"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    wait_for_revision(&c, "solo", "1");
    c.ok(&[
        "set",
        "image",
        "deployment/solo",
        "-n",
        "shop",
        "solo=registry.example/solo:2",
    ]);
    wait_for_revision(&c, "solo", "2");
    let run = rollback(&c, &repo, "solo", &["--yes"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("as kubectl rollout undo does it"),
        "{}",
        run.stdout
    );
    assert_eq!(solo(&c), "registry.example/solo:1");
    // Its trace names it a rollback, with who asked.
    let changes = kdrift(&c, &repo, &["changes", "-n", "shop"]);
    assert!(
        changes.stdout.contains("kdrift rollback to revision 1 by ")
            && changes.stdout.contains("as kubectl rollout undo"),
        "{}",
        changes.stdout
    );
    // The controller brings revision 1's ReplicaSet back as revision 3.
    wait_for_revision(&c, "solo", "3");
}

#[test]
fn refusals_say_why_and_change_nothing() {
    let (c, repo, _) = bad_release_from_git();
    let head = repo.head();
    let gone = rollback(&c, &repo, "frontend", &["--to-revision", "7", "--yes"]);
    assert_eq!(gone.code, 2, "{}{}", gone.stdout, gone.stderr);
    assert!(
        gone.stderr
            .contains("has no revision 7 any more (revisionHistoryLimit keeps"),
        "{}",
        gone.stderr
    );
    let current = rollback(&c, &repo, "frontend", &["--to-revision", "2", "--yes"]);
    assert_eq!(current.code, 2);
    assert!(
        current.stderr.contains("is already at revision 2"),
        "{}",
        current.stderr
    );
    // Files with uncommitted changes are not committed over.
    repo.write(
        "shop/frontend.yaml",
        &format!("{}# a note\n", repo.read("shop/frontend.yaml")),
    );
    let dirty = rollback(&c, &repo, "frontend", &["--yes"]);
    assert_eq!(dirty.code, 2, "{}{}", dirty.stdout, dirty.stderr);
    assert!(
        dirty.stderr.contains("uncommitted changes"),
        "{}",
        dirty.stderr
    );
    repo.git(&["checkout", "--", "shop/frontend.yaml"]);
    c.ok(&["rollout", "pause", "deployment/frontend", "-n", "shop"]);
    let paused = rollback(&c, &repo, "frontend", &["--yes"]);
    assert_eq!(paused.code, 2);
    assert!(paused.stderr.contains("is paused"), "{}", paused.stderr);
    // Nobody to ask and no --yes.
    let unasked = rollback(&c, &repo, "frontend", &[]);
    assert_eq!(unasked.code, 2);
    assert!(unasked.stderr.contains("pass --yes"), "{}", unasked.stderr);
    assert_eq!(repo.head(), head);
    assert_eq!(image(&c, "frontend"), BAD);
}

/// A bad image brought by a commit to a kustomize overlay's `images:` entry: the rollback's
/// commit writes the good tag back into that entry (where the overlay sets it, proved by
/// rendering), never into the base the other overlay shares.
#[test]
fn a_bad_tag_from_a_kustomize_overlay_is_rolled_back_in_the_overlay() {
    let c = Cluster::start_with(false);
    let repo = Repo::with_files(crate::kustomize_fixture::FILES);
    c.ok(&["create", "namespace", "prod"]);
    c.apply_k(&repo.path("overlays/prod"));
    let overlay = repo.read("overlays/prod/kustomization.yaml");
    let base = repo.read("base/deployment.yaml");
    repo.write(
        "overlays/prod/kustomization.yaml",
        &overlay.replace("newTag: \"1.27\"", "newTag: \"1.99-bad\""),
    );
    // The bad commit touches another file too: the rollback's commit is not its revert.
    repo.write("NOTES.md", "prod runs nginx 1.99\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-qm", "prod: nginx 1.99"]);
    let bad = repo
        .git(&["rev-parse", "--short=12", "HEAD"])
        .trim()
        .to_owned();
    c.apply_k(&repo.path("overlays/prod"));
    let image = |c: &Cluster| {
        c.get_json("deployment/web", "prod")["spec"]["template"]["spec"]["containers"][0]["image"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let start = std::time::Instant::now();
    while c.get_json("deployment/web", "prod")["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
        != "2"
    {
        assert!(start.elapsed() < std::time::Duration::from_secs(30));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(image(&c), "nginx:1.99-bad");
    let run = kdrift(
        &c,
        &repo,
        &[
            "rollback",
            "deployment/web",
            "-n",
            "prod",
            "--overlay",
            "overlays/prod",
            "--yes",
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains(&format!("from commit {bad} prod: nginx 1.99")),
        "{}",
        run.stdout
    );
    assert_eq!(repo.read("overlays/prod/kustomization.yaml"), overlay);
    assert_eq!(repo.read("base/deployment.yaml"), base);
    assert_eq!(image(&c), "nginx:1.27");
    assert!(
        !run.stdout.contains("the commit reverts it"),
        "{}",
        run.stdout
    );
    let message = repo.git(&["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with("kdrift: roll back deployment/prod/web to revision 1"),
        "{message}"
    );
    assert_eq!(
        repo.read("NOTES.md"),
        "prod runs nginx 1.99\n",
        "left as it is"
    );
}

/// The revisions of a StatefulSet and a DaemonSet are their ControllerRevisions: an
/// out-of-band bad image on each is rolled back to the previous revision (the cluster alone: git
/// holds the good image).
#[test]
fn a_statefulset_and_a_daemonset_are_rolled_back_through_their_controller_revisions() {
    let c = Cluster::start();
    let repo = Repo::demo();
    for (kind, namespace, name, container, good) in [
        (
            "statefulset",
            "payments",
            "ledger-db",
            "postgres",
            "registry.example/payments/ledger-db:16.4",
        ),
        (
            "daemonset",
            "platform",
            "node-agent",
            "agent",
            "registry.example/platform/node-agent:1.8.2",
        ),
    ] {
        let object = format!("{kind}/{name}");
        let image = |c: &Cluster| {
            c.get_json(&object, namespace)["spec"]["template"]["spec"]["containers"][0]["image"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        let revisions = |c: &Cluster| {
            c.ok(&[
                "get",
                "controllerrevisions",
                "-n",
                namespace,
                "-l",
                &format!("app.kubernetes.io/name={name}"),
                "-o",
                "name",
            ])
            .lines()
            .count()
        };
        let start = std::time::Instant::now();
        while revisions(&c) < 1 {
            assert!(start.elapsed() < std::time::Duration::from_secs(30));
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert_eq!(image(&c), good);
        c.ok(&[
            "set",
            "image",
            &object,
            "-n",
            namespace,
            &format!("{container}={good}-bad"),
        ]);
        while revisions(&c) < 2 {
            assert!(start.elapsed() < std::time::Duration::from_secs(30));
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let run = kdrift(&c, &repo, &["rollback", &object, "-n", namespace, "--yes"]);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains("from revision 2 to revision 1")
                && run.stdout.contains("the change was out of band"),
            "{}",
            run.stdout
        );
        assert_eq!(image(&c), good, "{object}");
    }
}
