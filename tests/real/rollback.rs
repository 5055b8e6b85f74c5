//! `kdrift rollback` on the real server (issue 48): the demo's cart, moved into the test's
//! namespace and applied, gets a bad image from a git commit applied as CI would; one
//! `kdrift rollback --yes --wait` makes one commit that restores the image and names the bad
//! commit, and the real Deployment controller rolls back to the good revision (as a new
//! revision, its old ReplicaSet reused); `check` is in sync. Then an out-of-band `kubectl set
//! image` is rolled back with no commit, and `--dry-run` changes nothing.

use crate::case::Case;

const GOOD: &str = "registry.example/shop/cart:0.9.7";
const BAD: &str = "registry.example/shop/cart:1.0.0-crashes";

fn image(c: &Case) -> String {
    let out = c.ok(&[
        "get",
        "deployment/cart",
        "-o",
        "jsonpath={.spec.template.spec.containers[0].image}",
    ]);
    out.trim().to_owned()
}

/// Waits until the Deployment's controller has made revision `wanted` (a crashing image never
/// rolls out: the stand-in kubelet keeps it in CrashLoopBackOff, so no `rollout status`).
fn wait_for_revision(c: &Case, wanted: &str) {
    let start = std::time::Instant::now();
    loop {
        let now = c.ok(&[
            "get",
            "deployment/cart",
            "-o",
            "jsonpath={.metadata.annotations.deployment\\.kubernetes\\.io/revision}",
        ]);
        if now.trim() == wanted {
            return;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "cart never reached revision {wanted} (at {now})"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn a_bad_image_from_git_and_one_out_of_band_are_rolled_back() {
    let Some(c) = Case::demo("kdrift-rollback", "shop", &["shop/cart.yaml"]) else {
        return;
    };
    let before = c.repo.read("shop/cart.yaml");
    c.repo.write("shop/cart.yaml", &before.replace(GOOD, BAD));
    c.repo.git(&["commit", "-qam", "cart 1.0.0"]);
    let bad = c
        .repo
        .git(&["rev-parse", "--short=12", "HEAD"])
        .trim()
        .to_owned();
    c.ok(&[
        "apply",
        "-f",
        c.repo.path("shop/cart.yaml").to_str().unwrap(),
    ]);
    assert_eq!(image(&c), BAD);
    let head = c.repo.head();

    let dry = c.kdrift_ns(&["rollback", "deployment/cart", "--dry-run"]);
    assert_eq!(dry.code, 0, "{dry:?}");
    assert!(
        dry.stdout
            .contains(&format!("from commit {bad} cart 1.0.0"))
            && dry.stdout.contains("dry run: nothing was changed"),
        "{dry:?}"
    );
    assert_eq!(c.repo.head(), head);
    assert_eq!(image(&c), BAD);

    let run = c.kdrift_ns(&[
        "rollback",
        "deployment/cart",
        "--yes",
        "--wait",
        "--timeout",
        "120s",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("rollout complete"), "{run:?}");
    assert_eq!(
        c.repo
            .git(&["rev-list", "--count", &format!("{head}..HEAD")])
            .trim(),
        "1"
    );
    assert_eq!(c.repo.read("shop/cart.yaml"), before, "comments kept");
    assert!(
        c.repo
            .git(&["log", "-1", "--format=%B"])
            .contains(&format!("{bad} cart 1.0.0"))
    );
    assert_eq!(image(&c), GOOD);
    let check = c.kdrift_ns(&["check"]);
    assert_eq!(check.code, 0, "{check:?}");

    // Out of band: the cluster alone.
    c.ok(&["set", "image", "deployment/cart", &format!("cart={BAD}")]);
    wait_for_revision(&c, "4");
    let head = c.repo.head();
    let run = c.kdrift_ns(&["rollback", "deployment/cart", "--yes", "--wait"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("the change was out of band"), "{run:?}");
    assert!(run.stdout.contains("rollout complete"), "{run:?}");
    assert_eq!(c.repo.head(), head);
    assert_eq!(image(&c), GOOD);
}
