//! Revert from the TUI, in the real loop (`Session::drive` on a TestBackend) against the demo
//! cluster: a bad `kubectl set image` (real kubectl) → `r` shows the server's dry run with the
//! image line → `y` → the live object equals the manifest again (`kdrift check` exits 0, the
//! drift engine says in sync) and the detail view shows the rollout back as it happens.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod live_screen;

use std::sync::{Arc, Mutex};

use kdrift::cli::CommonArgs;
use kdrift::cluster::client::connect;
use kdrift::runtime::demo::prepare_workdir;
use kdrift::runtime::event_loop::Session;
use kdrift::sim::scenario::DEMO_MANIFESTS;
use kdrift::sim::server::{Scenario, SimConfig, SimServer, Timings};
use kdrift::ui::theme::Theme;
use live_screen::{Screen, keys, wait_for};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const GOOD: &str = "registry.example/shop/checkout:3.1.0";
const BAD: &str = "registry.example/shop/checkout:3.2.0-doesnotexist";

/// The line of the screen holding `needle`, if any.
fn line_with<'a>(screen: &'a str, needle: &str) -> Option<&'a str> {
    screen.lines().find(|l| l.contains(needle))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_set_image_is_reverted_in_two_keys_and_the_rollout_back_is_shown() {
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
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig_yaml()).unwrap();
    let kubectl = |args: &[&str]| {
        let mut cmd = tokio::process::Command::new("/usr/bin/kubectl");
        cmd.arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .env("HOME", dir.path());
        cmd
    };
    let common = CommonArgs {
        kubeconfig: Some(kubeconfig.clone()),
        all_namespaces: true,
        manifests: Some(workdir.path.clone()),
        ..CommonArgs::default()
    };
    let conn = connect(&common).await.unwrap();
    let mut session = Session::start(&common, conn);
    let tx = session.sender();
    let text = Arc::new(Mutex::new(String::new()));
    let mut frontend = Screen(text.clone());
    let mut term = Terminal::new(TestBackend::new(160, 45)).unwrap();
    let theme = Theme::default_theme();
    let driver = session.drive(&mut term, &theme, &mut frontend);
    let script = async {
        keys(&tx, "/shop/checkout\n");
        wait_for(&text, "checkout in sync", |s| {
            line_with(s, " checkout ").is_some_and(|l| l.contains("in sync"))
        })
        .await;

        let out = kubectl(&[
            "-n",
            "shop",
            "set",
            "image",
            "deployment/checkout",
            &format!("checkout={BAD}"),
        ])
        .output()
        .await
        .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        wait_for(&text, "checkout drifted", |s| {
            line_with(s, " checkout ").is_some_and(|l| l.contains("1 field"))
        })
        .await;

        // Key one: the server's dry run, with the image going back.
        keys(&tx, "r");
        wait_for(&text, "the preview with the image line", |s| {
            s.contains("revert deployment shop/checkout")
                && s.contains(&format!("-        image: {BAD}"))
                && s.contains(&format!("+        image: {GOOD}"))
                && s.contains("y/enter revert · esc cancel")
        })
        .await;

        // Key two: revert; the detail view opens on the rollout back.
        keys(&tx, "y");
        wait_for(&text, "the detail view and the flash", |s| {
            s.contains("deployment shop/checkout")
                && s.contains("REVISIONS")
                && s.contains("reverted deployment/shop/checkout to the manifest (")
        })
        .await;
        // The ReplicaSet of the manifest's template is the newest revision again and scales up
        // while the bad one scales down to 0.
        wait_for(&text, "the manifest's ReplicaSet as revision 3", |s| {
            line_with(s, "#3").is_some_and(|l| l.contains(GOOD))
        })
        .await;
        wait_for(&text, "the bad ReplicaSet scaled down", |s| {
            line_with(s, "#2").is_some_and(|l| l.contains("0 desired"))
        })
        .await;
        wait_for(&text, "the detail says in sync", |s| {
            line_with(s, "revision").is_some_and(|l| l.contains("in sync"))
        })
        .await;

        let check = tokio::process::Command::new(env!("CARGO_BIN_EXE_kdrift"))
            .args(["check", "-n", "shop", "--kubeconfig"])
            .arg(&kubeconfig)
            .arg("--manifests")
            .arg(&workdir.path)
            .env("HOME", dir.path())
            .env("NO_COLOR", "1")
            .env_remove("KUBECONFIG")
            .output()
            .await
            .unwrap();
        assert_eq!(
            check.status.code(),
            Some(0),
            "{}{}",
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        );
        let image = kubectl(&[
            "-n",
            "shop",
            "get",
            "deployment/checkout",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ])
        .output()
        .await
        .unwrap();
        assert_eq!(String::from_utf8_lossy(&image.stdout), GOOD);
        keys(&tx, "q");
    };
    let (result, ()) = tokio::join!(driver, script);
    result.unwrap();
    drop(session);
    server.shutdown().await;
}
