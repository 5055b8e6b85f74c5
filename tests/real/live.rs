//! The live view on the real server: the real loop (`FleetSession::drive` on a TestBackend) watching
//! the test's namespace, with the demo's `shop/cart` and `shop/frontend` applied into it. The
//! rows show what the real controllers report (desired, ready, the rollout complete, in sync);
//! a `kubectl scale` moves the row's replicas and makes it drift by one field; `r` shows the
//! server's dry run and `y` reverts it; a `kubectl set image` is accepted with `a` and `enter`
//! into a commit, and the row is in sync again.

use std::sync::{Arc, Mutex};

use crossterm::event::KeyCode;

use crate::case::Case;
use crate::live_screen::{self, key, keys, run, wait_for};

/// The row of Deployment `name` in the table, as drawn.
pub fn row<'s>(screen: &'s str, name: &str) -> Option<&'s str> {
    screen
        .lines()
        .find(|line| live_screen::row_words(line).get(1) == Some(&name))
}

/// The row of `name` ends with `drift` (the DRIFT column: `in sync`, `1 field`, …).
pub fn row_ends_with(screen: &str, name: &str, drift: &str) -> bool {
    row(screen, name).is_some_and(|l| {
        l.trim_end()
            .trim_end_matches('│')
            .trim_end()
            .ends_with(drift)
    })
}

/// kubectl in the case's namespace, from async code; it must succeed.
pub async fn kubectl(c: &Case, args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["-n", c.ns()]);
    let out = tokio::process::Command::from(c.real.command(&all))
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "kubectl {all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The flags of a live view on the case's namespace, its repository as the manifests, and the
/// kubeconfig `kubeconfig`.
pub fn flags(c: &Case, kubeconfig: &std::path::Path) -> kdrift::cli::CommonArgs {
    kdrift::cli::CommonArgs {
        kubeconfig: Some(kubeconfig.to_path_buf()),
        namespace: Some(c.ns().to_owned()),
        manifests: Some(c.repo.root().to_path_buf()),
        ..kdrift::cli::CommonArgs::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_follow_the_real_controllers_and_r_and_a_settle_the_drift() {
    let Some(c) = Case::demo("live", "shop", &["shop/cart.yaml", "shop/frontend.yaml"]) else {
        return;
    };
    let ns = c.ns().to_owned();
    let common = flags(&c, &c.real.kubeconfig);
    let c = &c;
    let ns = &ns;
    let script = move |tx, text: Arc<Mutex<String>>| async move {
        wait_for(&text, "both rows complete and in sync", |s| {
            ["cart", "frontend"].iter().all(|name| {
                row(s, name).is_some_and(|l| l.contains("complete"))
                    && row_ends_with(s, name, "in sync")
            }) && s.contains(&format!("workloads({ns})"))
        })
        .await;
        let words = live_screen::row_words(row(&text.lock().unwrap(), "cart").unwrap())
            .iter()
            .map(|w| w.to_string())
            .collect::<Vec<_>>();
        assert_eq!(words[1..4], ["cart", "2", "2/2/2"], "{words:?}");

        kubectl(c, &["scale", "deployment/cart", "--replicas=4"]).await;
        wait_for(
            &text,
            "cart scaled to 4 by the real controllers, drifted",
            |s| {
                row(s, "cart").is_some_and(|l| {
                    let w = live_screen::row_words(l);
                    w.get(2) == Some(&"4") && w.get(3) == Some(&"4/4/4")
                }) && row_ends_with(s, "cart", "1 field")
            },
        )
        .await;

        keys(&tx, "/cart\n");
        keys(&tx, "r");
        wait_for(&text, "the server's dry run of the revert", |s| {
            s.contains(&format!("revert deployment {ns}/cart"))
                && s.contains("-  replicas: 4")
                && s.contains("+  replicas: 2")
        })
        .await;
        keys(&tx, "y");
        wait_for(&text, "reverted, and the detail view", |s| {
            s.contains(&format!("reverted deployment/{ns}/cart to the manifest ("))
        })
        .await;
        key(&tx, KeyCode::Esc);
        key(&tx, KeyCode::Esc);
        wait_for(&text, "cart back at 2 and in sync", |s| {
            row(s, "cart").is_some_and(|l| live_screen::row_words(l).get(2) == Some(&"2"))
                && row_ends_with(s, "cart", "in sync")
        })
        .await;

        kubectl(
            c,
            &[
                "set",
                "image",
                "deployment/frontend",
                "frontend=registry.example/shop/frontend:9.9.9",
            ],
        )
        .await;
        wait_for(&text, "frontend drifted by its image", |s| {
            row_ends_with(s, "frontend", "1 field")
        })
        .await;
        keys(&tx, "/frontend\n");
        keys(&tx, "a");
        wait_for(&text, "the accept view with the image line", |s| {
            s.contains(&format!("accept deployment {ns}/frontend"))
                && s.contains("+          image: registry.example/shop/frontend:9.9.9")
        })
        .await;
        key(&tx, KeyCode::Enter);
        wait_for(&text, "the commit", |s| {
            s.contains("committed ") && s.contains("kdrift: accept live ")
        })
        .await;
        wait_for(&text, "frontend in sync with the commit", |s| {
            row_ends_with(s, "frontend", "in sync")
        })
        .await;
        keys(&tx, "q");
    };
    run(&common, 150, 40, script).await;
    let patch = c.repo.git(&["show", "--format=", "--unified=0", "HEAD"]);
    assert_eq!(
        live_screen::changed_lines(&patch),
        [
            "-          image: registry.example/shop/frontend:2.4.1",
            "+          image: registry.example/shop/frontend:9.9.9"
        ],
        "{patch}"
    );
}
