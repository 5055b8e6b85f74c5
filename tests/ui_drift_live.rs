//! Drift in the real loop (`Session::drive` on a TestBackend) against the demo cluster with its
//! manifests in a folder: `kubectl set env` shows as one drifted field attributed to
//! `kubectl-set` in the table and the diff view; editing the manifest on disk to match brings the
//! row back in sync without a restart.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod live_screen;

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

/// The DRIFT cell of a row: what follows the last column before the border.
fn row_drift(screen: &str, name: &str) -> Option<String> {
    screen.lines().find_map(|line| {
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == '│')
            .filter(|w| !w.is_empty())
            .collect();
        if words.get(1) != Some(&name) {
            return None;
        }
        let tail = line.trim_end().trim_end_matches('│').trim_end();
        ["in sync", "unmanaged", "missing", "error"]
            .iter()
            .find(|d| tail.ends_with(*d))
            .map(|d| d.to_string())
            .or_else(|| {
                let n = words.len();
                (n >= 2 && words[n - 1].starts_with("field"))
                    .then(|| format!("{} {}", words[n - 2], words[n - 1]))
            })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_env_drifts_one_field_by_kubectl_set_and_a_manifest_edit_brings_it_back() {
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
    let mut term = Terminal::new(TestBackend::new(150, 30)).unwrap();
    let theme = Theme::default_theme();
    let driver = session.drive(&mut term, &theme, &mut frontend);
    let script = async {
        wait_for(&text, "cart in sync", |s| {
            row_drift(s, "cart").as_deref() == Some("in sync")
        })
        .await;

        let out = tokio::process::Command::new("/usr/bin/kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args([
                "-n",
                "shop",
                "set",
                "env",
                "deployment/cart",
                "FEATURE_X=on",
            ])
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "kubectl: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        wait_for(&text, "cart drifted by one field", |s| {
            row_drift(s, "cart").as_deref() == Some("1 field")
        })
        .await;

        // Select cart through the filter, then open its diff.
        keys(&tx, "/shop/cart\n");
        keys(&tx, "d");
        wait_for(&text, "the diff naming kubectl-set", |s| {
            s.contains("diff deployment shop/cart")
                && s.lines()
                    .any(|l| l.contains("FEATURE_X") && l.contains("kubectl-set"))
        })
        .await;
        key(&tx, KeyCode::Esc);

        // Git catches up with the hotfix: the row is in sync again, no restart.
        let file = workdir.path.join("shop/cart.yaml");
        let yaml = std::fs::read_to_string(&file).unwrap();
        let edited = yaml.replacen(
            "          env:\n",
            "          env:\n            - name: FEATURE_X\n              value: \"on\"\n",
            1,
        );
        assert_ne!(yaml, edited, "the demo manifest of cart has an env list");
        std::fs::write(&file, edited).unwrap();
        wait_for(&text, "cart back in sync", |s| {
            row_drift(s, "cart").as_deref() == Some("in sync")
        })
        .await;
        keys(&tx, "q");
    };
    let (result, ()) = tokio::join!(driver, script);
    result.unwrap();
    drop(session);
    server.shutdown().await;
}
