//! Accept in the real loop (`Session::drive` on a TestBackend) against the demo cluster, its
//! manifests in a temporary git repository: a `kubectl scale` hotfix (the real kubectl) is
//! accepted with `a` and `enter`; the commit changes exactly the one line, the comments stay,
//! the status bar names the commit, and the row goes back in sync without a restart.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod live_screen;

use std::path::Path;
use std::sync::{Arc, Mutex};

use crossterm::event::KeyCode;
use kdrift::cli::CommonArgs;
use kdrift::cluster::client::connect;
use kdrift::runtime::demo::prepare_workdir;
use kdrift::runtime::event_loop::Session;
use kdrift::sim::scenario::DEMO_MANIFESTS;
use kdrift::sim::server::{Scenario, SimConfig, SimServer, Timings};
use kdrift::ui::theme::Theme;
use live_screen::{Screen, key, keys, wait_for};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The row of `name` in the table, as drawn.
fn row<'s>(screen: &'s str, name: &str) -> Option<&'s str> {
    screen.lines().find(|line| {
        line.split(|c: char| c.is_whitespace() || c == '│')
            .filter(|w| !w.is_empty())
            .nth(1)
            == Some(name)
    })
}

fn row_ends_with(screen: &str, name: &str, drift: &str) -> bool {
    row(screen, name).is_some_and(|l| {
        l.trim_end()
            .trim_end_matches('│')
            .trim_end()
            .ends_with(drift)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scale_hotfix_is_accepted_in_three_keys_and_the_row_goes_back_in_sync() {
    let server = SimServer::start(SimConfig {
        port: 0,
        scenario: Scenario::None,
        seed: true,
        timings: Timings::fast(),
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workdir = prepare_workdir(Some(&dir.path().join("manifests")), DEMO_MANIFESTS).unwrap();
    let repo = workdir.path.clone();
    // The test's own identity, so that the machine's git config does not matter.
    git(&repo, &["config", "user.name", "On Call"]);
    git(&repo, &["config", "user.email", "oncall@example.com"]);
    git(&repo, &["config", "commit.gpgsign", "false"]);
    let before = std::fs::read_to_string(repo.join("shop/frontend.yaml")).unwrap();
    let first = git(&repo, &["rev-parse", "HEAD"]);

    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig_yaml()).unwrap();
    let common = CommonArgs {
        kubeconfig: Some(kubeconfig.clone()),
        all_namespaces: true,
        manifests: Some(repo.clone()),
        ..CommonArgs::default()
    };
    let conn = connect(&common).await.unwrap();
    let mut session = Session::start(&common, conn);
    let tx = session.sender();
    let text = Arc::new(Mutex::new(String::new()));
    let mut frontend = Screen(text.clone());
    let mut term = Terminal::new(TestBackend::new(150, 40)).unwrap();
    let theme = Theme::default_theme();
    let driver = session.drive(&mut term, &theme, &mut frontend);
    let script = async {
        wait_for(&text, "frontend in sync", |s| {
            row_ends_with(s, "frontend", "in sync")
        })
        .await;
        let out = tokio::process::Command::new("/usr/bin/kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["-n", "shop", "scale", "deployment/frontend", "--replicas=5"])
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "kubectl: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        wait_for(&text, "frontend drifted by one field", |s| {
            row_ends_with(s, "frontend", "1 field")
        })
        .await;

        keys(&tx, "/shop/frontend\n");
        keys(&tx, "a");
        wait_for(&text, "the accept view with its diff", |s| {
            s.contains("accept deployment shop/frontend")
                && s.contains("[x] spec.replicas")
                && s.contains("2 → 5")
                && s.contains("shop/frontend.yaml:3")
                && s.contains("-  replicas: 2")
                && s.contains("+  replicas: 5")
        })
        .await;
        key(&tx, KeyCode::Enter);
        wait_for(&text, "the commit in the status bar", |s| {
            s.contains("committed ")
                && s.contains("kdrift: accept live spec.replicas of deployment/shop/frontend")
        })
        .await;

        let head = git(&repo, &["rev-parse", "--short", "HEAD"]);
        assert!(
            text.lock()
                .unwrap()
                .contains(&format!("committed {}", head.trim())),
            "the status bar names the commit"
        );
        assert_ne!(git(&repo, &["rev-parse", "HEAD"]), first);
        assert_eq!(
            git(&repo, &["show", "--name-only", "--format=", "HEAD"]),
            "shop/frontend.yaml\n",
            "one file committed"
        );
        let patch = git(&repo, &["show", "--format=", "--unified=0", "HEAD"]);
        let changed: Vec<&str> = patch
            .lines()
            .filter(|l| {
                (l.starts_with('+') || l.starts_with('-'))
                    && !l.starts_with("+++")
                    && !l.starts_with("---")
            })
            .collect();
        assert_eq!(changed, ["-  replicas: 2", "+  replicas: 5"], "{patch}");
        let after = std::fs::read_to_string(repo.join("shop/frontend.yaml")).unwrap();
        assert_eq!(after, before.replace("  replicas: 2\n", "  replicas: 5\n"));
        for comment in before.lines().filter(|l| l.trim_start().starts_with('#')) {
            assert!(after.contains(comment), "comment kept: {comment}");
        }
        assert_eq!(
            git(&repo, &["status", "--porcelain"]),
            "",
            "nothing left over"
        );

        // The file watcher sees the commit's file: back in sync, no restart.
        wait_for(&text, "frontend back in sync", |s| {
            row_ends_with(s, "frontend", "in sync")
        })
        .await;
        keys(&tx, "q");
    };
    let (result, ()) = tokio::join!(driver, script);
    result.unwrap();
    drop(session);
    server.shutdown().await;
}
