//! `kdrift revert` as an operator runs it against the demo cluster: out-of-band changes made
//! with the real kubectl are put back, `kdrift check` agrees, and the refusals and errors say why.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use common::{Cluster, managed_entry};

fn shop_manifests() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("demo")
        .join("shop")
}

/// The kdrift binary against the cluster, with stdin not a terminal.
fn command(c: &Cluster, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kdrift"));
    cmd.args(args)
        .arg("--kubeconfig")
        .arg(&c.kubeconfig)
        .arg("--manifests")
        .arg(shop_manifests())
        .env("HOME", c.dir.path())
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    cmd
}

/// Runs the kdrift binary against the cluster with stdin not a terminal.
fn kdrift(c: &Cluster, args: &[&str]) -> Output {
    command(c, args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn break_cart(c: &Cluster) {
    c.ok(&[
        "set",
        "image",
        "deployment/cart",
        "-n",
        "shop",
        "cart=registry.example/shop/cart:6.6.6-bad",
    ]);
    c.ok(&["set", "env", "deployment/cart", "-n", "shop", "DEBUG=1"]);
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
}

#[test]
fn revert_yes_puts_the_cluster_back_and_check_agrees() {
    let c = Cluster::start();
    break_cart(&c);
    let before = kdrift(&c, &["check", "-n", "shop"]);
    assert_eq!(before.status.code(), Some(1), "{}", text(&before.stdout));

    let out = kdrift(&c, &["revert", "deployment/cart", "-n", "shop", "--yes"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("-        image: registry.example/shop/cart:6.6.6-bad"),
        "{stdout}"
    );
    assert!(
        stdout.contains("+        image: registry.example/shop/cart:0.9.7"),
        "{stdout}"
    );
    assert!(stdout.contains("added live by kubectl-set"), "{stdout}");
    assert!(stdout.contains("reverted deployment/shop/cart"), "{stdout}");

    let after = kdrift(&c, &["check", "-n", "shop"]);
    assert_eq!(after.status.code(), Some(0), "{}", text(&after.stdout));
    let d = c.get_json("deployment/cart", "shop");
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(managed_entry(&d, "kdrift")["operation"], "Apply");

    // A trace of who reverted (issue 47): an event on the object, which the timeline shows.
    assert!(
        stdout.contains("recorded: event Reverted on deployment/shop/cart by "),
        "{stdout}"
    );
    let events = c.ok(&[
        "get",
        "events",
        "-n",
        "shop",
        "--field-selector",
        "reason=Reverted",
        "-o",
        "jsonpath={.items[*].message}",
    ]);
    assert!(
        events.starts_with("kdrift revert by ")
            && events.contains(": put back spec.replicas, ")
            && events.contains("(applied as field manager \"kdrift\")"),
        "{events}"
    );
    let changes = kdrift(&c, &["changes", "-n", "shop"]);
    let timeline = text(&changes.stdout);
    assert!(
        timeline.contains("Normal Reverted: kdrift revert by "),
        "{timeline}"
    );
    let blame = kdrift(&c, &["blame", "deployment/cart", "-n", "shop"]);
    let shown = text(&blame.stdout);
    assert!(
        shown.lines().any(|l| l.starts_with("# reverted ")
            && l.contains(": kdrift revert by ")
            && l.contains("put back spec.replicas")),
        "{shown}"
    );
}

#[test]
fn dry_run_shows_the_preview_and_changes_nothing() {
    let c = Cluster::start();
    break_cart(&c);
    let out = kdrift(&c, &["revert", "deploy/cart", "-n", "shop", "--dry-run"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("-  replicas: 5") && stdout.contains("+  replicas: 2"),
        "{stdout}"
    );
    assert!(stdout.contains("dry run: nothing was changed"), "{stdout}");
    let d = c.get_json("deployment/cart", "shop");
    assert_eq!(d["spec"]["replicas"], 5);
    let check = kdrift(&c, &["check", "-n", "shop"]);
    assert_eq!(check.status.code(), Some(1));
}

#[test]
fn without_yes_and_without_a_terminal_it_refuses_with_exit_2() {
    let c = Cluster::start();
    break_cart(&c);
    let out = kdrift(&c, &["revert", "deploy/cart", "-n", "shop"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("stdin is not a terminal") && stderr.contains("--yes"),
        "{stderr}"
    );
    assert_eq!(c.get_json("deployment/cart", "shop")["spec"]["replicas"], 5);
}

#[test]
fn readonly_refuses() {
    let c = Cluster::start();
    break_cart(&c);
    let out = kdrift(
        &c,
        &["revert", "deploy/cart", "-n", "shop", "--yes", "--readonly"],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("read-only (--readonly)"), "{stderr}");
    assert_eq!(c.get_json("deployment/cart", "shop")["spec"]["replicas"], 5);
}

#[test]
fn rbac_refusal_names_verb_resource_and_namespace() {
    let c = Cluster::start();
    break_cart(&c);
    c.server.faults().forbid_namespace("shop");
    let out = kdrift(&c, &["revert", "deploy/cart", "-n", "shop", "--yes"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("RBAC refused: you may not get deployments.apps in namespace \"shop\""),
        "{stderr}"
    );
}

#[test]
fn in_sync_object_has_nothing_to_revert() {
    let c = Cluster::start();
    let out = kdrift(&c, &["revert", "deploy/cart", "-n", "shop", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("nothing to revert"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn ctrl_c_during_a_revert_waits_for_its_step_and_the_revert_is_not_left_half_done() {
    use std::io::{BufRead, BufReader};
    let c = Cluster::start();
    break_cart(&c);
    // Each request takes a while: the ctrl-c lands while the revert is under way.
    c.server
        .faults()
        .set_latency(std::time::Duration::from_millis(700));
    let mut child = command(&c, &["revert", "deploy/cart", "-n", "shop", "--yes"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // The preview is printed, then (with --yes) the revert starts.
    let mut printed = String::new();
    while !printed.contains("removes ") {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            break;
        }
        printed.push_str(&line);
    }
    // Into the revert (its first request alone takes 700 ms), then ctrl-c.
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{printed}{rest}\n{stderr}");
    assert!(
        stderr.contains("waiting for the revert of deployment/shop/cart"),
        "{stderr}"
    );
    assert!(rest.contains("reverted deployment/shop/cart"), "{rest}");
    c.server.faults().set_latency(std::time::Duration::ZERO);
    let d = c.get_json("deployment/cart", "shop");
    let env = d["spec"]["template"]["spec"]["containers"][0]["env"].to_string();
    assert!(!env.contains("DEBUG"), "the removal step ran too: {env}");
}
