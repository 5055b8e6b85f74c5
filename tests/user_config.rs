//! The user config file as an operator meets it: `readonly = true` in it makes the headless
//! accept and revert refuse, naming the file, and takes `r` away in the live view; a bad file is
//! reported with its line and the defaults are used; `--help` says where the file is.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod live_screen;

use std::path::Path;
use std::process::{Command, Output, Stdio};
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
fn a_bad_file_is_reported_with_its_line_and_the_defaults_are_used() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "readonly = true\nthem = \"light\"\n").unwrap();
    // Not read-only (the defaults): the refusal is the one for a missing terminal.
    let out = kdrift(
        dir.path(),
        &config,
        &["revert", "deploy/cart", "-n", "shop"],
    );
    assert_eq!(out.status.code(), Some(2));
    let text = stderr(&out);
    assert!(
        text.contains(&format!(
            "config \"{}\", line 2: unknown field `them`",
            config.display()
        )) && text.contains("using the defaults"),
        "{text}"
    );
    assert!(text.contains("stdin is not a terminal"), "{text}");
    assert!(!text.contains("read-only"), "{text}");

    // A file named by KDRIFT_CONFIG that is not there is said too.
    let out = kdrift(
        dir.path(),
        &dir.path().join("nope.toml"),
        &["revert", "deploy/cart", "--readonly"],
    );
    let text = stderr(&out);
    assert!(text.contains("nope.toml"), "{text}");
    assert!(text.contains("read-only (--readonly)"), "{text}");
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
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "readonly = true\n").unwrap();
    let mut common = CommonArgs {
        kubeconfig: Some(kubeconfig.clone()),
        all_namespaces: true,
        manifests: Some(workdir.path.clone()),
        ..CommonArgs::default()
    };
    kdrift::user_config::apply_from(&mut common, &config, true);
    let conn = connect(&common).await.unwrap();
    let mut session = Session::start(&common, conn);
    let tx = session.sender();
    let text = Arc::new(Mutex::new(String::new()));
    let mut frontend = Screen(text.clone());
    let mut term = Terminal::new(TestBackend::new(150, 40)).unwrap();
    let theme = Theme::default_theme();
    let driver = session.drive(&mut term, &theme, &mut frontend);
    let script = async {
        keys(&tx, "/shop/cart\n");
        wait_for(&text, "cart listed, read-only", |s| {
            s.lines()
                .any(|l| l.contains(" cart ") && l.contains("in sync"))
                && s.contains(" readonly ")
        })
        .await;
        let out = tokio::process::Command::new("/usr/bin/kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["-n", "shop", "scale", "deployment/cart", "--replicas=5"])
            .env("HOME", dir.path())
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
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
    let (result, ()) = tokio::join!(driver, script);
    result.unwrap();
    drop(session);
    server.shutdown().await;
}
