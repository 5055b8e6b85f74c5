//! The user config file as an operator meets it: `readonly = true` in it makes the headless
//! accept and revert refuse, naming the file, and takes `r` away in the live view; a bad file is
//! reported with its line and kdrift runs read-only until it is fixed; `--help` says where the file is.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_screen;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use live_screen::{demo, keys, run, wait_for};

/// The kdrift binary with `KDRIFT_CONFIG` naming `config`, stdin not a terminal, and a
/// kubeconfig that does not exist (the refusals come before any request).
fn kdrift(dir: &Path, config: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kdrift"))
        .args(args)
        .arg("--kubeconfig")
        .arg(dir.join("no-kubeconfig"))
        .arg("--manifests")
        .arg(dir)
        .env("KDRIFT_CONFIG", config)
        .env("HOME", dir)
        .env("XDG_STATE_HOME", dir)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn readonly_in_the_file_makes_accept_and_revert_refuse_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "# on-call laptop\nreadonly = true\n").unwrap();
    let named = format!("readonly = true in \"{}\"", config.display());

    let out = kdrift(
        dir.path(),
        &config,
        &["revert", "deploy/cart", "-n", "shop", "--yes"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains(&format!(
            "revert is disabled: kdrift runs read-only ({named})"
        )) && text.contains("set readonly = false in"),
        "{text}"
    );

    let out = kdrift(
        dir.path(),
        &config,
        &["accept", "deploy/cart", "-n", "shop"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains(&format!(
            "accept is disabled: kdrift runs read-only ({named})"
        )),
        "{text}"
    );
}

#[test]
fn a_bad_file_is_reported_with_its_line_and_kdrift_runs_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    // The file may be the one that says readonly = true: a typo must not lift it.
    std::fs::write(&config, "readonly = true\nthem = \"light\"\n").unwrap();
    let out = kdrift(
        dir.path(),
        &config,
        &["revert", "deploy/cart", "-n", "shop", "--yes"],
    );
    assert_eq!(out.status.code(), Some(2));
    let text = stderr(&out);
    assert!(
        text.contains(&format!(
            "config \"{}\", line 2: unknown field `them`",
            config.display()
        )) && text.contains("read-only until it is fixed"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "revert is disabled: kdrift runs read-only (the config \"{0}\" could not be read); fix \"{0}\" to revert",
            config.display()
        )),
        "{text}"
    );

    // A file named by KDRIFT_CONFIG that is not there is said too, and read-only holds.
    let out = kdrift(
        dir.path(),
        &dir.path().join("nope.toml"),
        &["accept", "deploy/cart"],
    );
    let text = stderr(&out);
    assert!(text.contains("nope.toml"), "{text}");
    assert!(
        text.contains("accept is disabled: kdrift runs read-only"),
        "{text}"
    );
}

#[test]
fn help_names_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kdrift"))
        .arg("--help")
        .env("XDG_CONFIG_HOME", dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let want = dir.path().join("kdrift").join("config.toml");
    assert!(
        text.contains(&format!("Config: {}", want.display())),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readonly_in_the_file_takes_r_away_in_the_live_view() {
    let demo = demo().await;
    let config = demo.dir.path().join("config.toml");
    std::fs::write(&config, "readonly = true\n").unwrap();
    let mut common = demo.common.clone();
    common.apply_config_file(&config, true);
    let d = &demo;
    let script = |tx, text| async move {
        keys(&tx, "/shop/cart\n");
        wait_for(&text, "cart listed, read-only", |s| {
            s.lines()
                .any(|l| l.contains(" cart ") && l.contains("in sync"))
                && s.contains(" readonly ")
        })
        .await;
        d.kubectl(&["-n", "shop", "scale", "deployment/cart", "--replicas=5"])
            .await;
        wait_for(&text, "cart drifted", |s| {
            s.lines()
                .any(|l| l.contains(" cart ") && l.contains("1 field"))
        })
        .await;
        let hints = text.lock().unwrap().lines().last().unwrap_or("").to_owned();
        assert!(
            hints.contains("<d> diff") && !hints.contains("<r>"),
            "{hints}"
        );
        // `r` does nothing; the help that follows it shows no revert.
        keys(&tx, "r?");
        wait_for(&text, "the help", |s| {
            s.contains("esc or ? closes this help")
        })
        .await;
        let screen = text.lock().unwrap().clone();
        assert!(!screen.contains("revert"), "{screen}");
        // The first q closes the help, the second quits.
        keys(&tx, "qq");
    };
    run(&common, 150, 40, script).await;
    demo.server.shutdown().await;
}
