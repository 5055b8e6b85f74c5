//! Drift in the real loop (`FleetSession::drive` on a TestBackend) against the demo cluster with its
//! manifests in a folder: `kubectl set env` shows as one drifted field attributed to
//! `kubectl-set` in the table and the diff view; editing the manifest on disk to match brings the
//! row back in sync without a restart.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_screen;

use crate::common::copy_tree;
use crossterm::event::KeyCode;
use live_screen::{demo, key, keys, run, wait_for};

/// The DRIFT cell of a row: what follows the last column before the border.
fn row_drift(screen: &str, name: &str) -> Option<String> {
    screen.lines().find_map(|line| {
        let words = live_screen::row_words(line);
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
    let demo = demo().await;
    let d = &demo;
    let script = |tx, text| async move {
        wait_for(&text, "cart in sync", |s| {
            row_drift(s, "cart").as_deref() == Some("in sync")
        })
        .await;

        d.kubectl(&[
            "-n",
            "shop",
            "set",
            "env",
            "deployment/cart",
            "FEATURE_X=on",
        ])
        .await;
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

        // Git catches up with the hotfix: the row is in sync again, no restart. The variable
        // goes last, where `kubectl set env` put it (env order is meaning).
        let file = d.manifests.join("shop/cart.yaml");
        let yaml = std::fs::read_to_string(&file).unwrap();
        let edited = yaml.replacen(
            "              value: 72h\n",
            "              value: 72h\n            - name: FEATURE_X\n              value: \"on\"\n",
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
    run(&demo.common, 150, 30, script).await;
    demo.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifests_folder_removed_is_said_gone_and_read_again_when_it_is_back() {
    let demo = demo().await;
    let d = &demo;
    let saved = d.dir.path().join("saved");
    let script = |tx, text| async move {
        wait_for(&text, "cart in sync", |s| {
            row_drift(s, "cart").as_deref() == Some("in sync")
        })
        .await;
        copy_tree(&d.manifests.join("shop"), &saved.join("shop"));
        let removed = std::time::Instant::now();
        std::fs::remove_dir_all(&d.manifests).unwrap();
        wait_for(&text, "the folder said gone", |s| s.contains("is gone")).await;
        // Told by the watch on the folder holding it, not found at the next look a minute on.
        assert!(
            removed.elapsed() < kdrift::runtime::manifests::FOLDER_CHECK_WATCHED / 2,
            "the removal was seen only after {:?}",
            removed.elapsed()
        );

        // `git checkout` brings it back, with another replica count for cart.
        copy_tree(&saved, &d.manifests);
        let cart = d.manifests.join("shop/cart.yaml");
        let yaml = std::fs::read_to_string(&cart).unwrap();
        std::fs::write(&cart, yaml.replacen("replicas: 2", "replicas: 3", 1)).unwrap();
        wait_for(&text, "the folder read again: cart drifts", |s| {
            s.contains("is back") && row_drift(s, "cart").as_deref() == Some("1 field")
        })
        .await;
        keys(&tx, "q");
    };
    run(&demo.common, 150, 30, script).await;
    demo.server.shutdown().await;
}
