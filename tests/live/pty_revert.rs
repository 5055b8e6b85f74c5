//! `kdrift revert` without `--yes` on a terminal: it shows the preview, asks `[y/N]`, and only a
//! `y` reverts. Run in a pseudo-terminal, as an operator would.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::pty;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::Cluster;
use portable_pty::CommandBuilder;
use pty::Pty;

/// Generous: the machine running tests may be loaded.
const PATIENCE: Duration = Duration::from_secs(60);

struct Session {
    pty: Pty,
    seen: String,
}

impl Session {
    fn start(c: &Cluster, args: &[&str]) -> Session {
        let manifests = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("demo/shop");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_kdrift"));
        cmd.args(args);
        cmd.args(["--kubeconfig", c.kubeconfig.to_str().unwrap()]);
        cmd.args(["--manifests", manifests.to_str().unwrap()]);
        cmd.env("TERM", "xterm-256color");
        cmd.env("HOME", c.dir.path());
        cmd.env_remove("KUBECONFIG");
        Session {
            pty: Pty::spawn(cmd, 50, 160),
            seen: String::new(),
        }
    }

    fn wait_for(&mut self, text: &str) {
        let start = Instant::now();
        while !self.seen.contains(text) {
            assert!(
                start.elapsed() < PATIENCE,
                "waited {PATIENCE:?} for {text:?}; output:\n{}",
                self.seen
            );
            if let Ok(bytes) = self.pty.output.recv_timeout(Duration::from_millis(200)) {
                self.seen.push_str(&String::from_utf8_lossy(&bytes));
            }
        }
    }

    fn answer(&mut self, line: &str) {
        self.pty.send(format!("{line}\r").as_bytes());
    }

    fn exit_code(&mut self) -> u32 {
        let start = Instant::now();
        loop {
            if let Some(status) = self.pty.child.try_wait().unwrap() {
                while let Ok(bytes) = self.pty.output.recv_timeout(Duration::from_millis(200)) {
                    self.seen.push_str(&String::from_utf8_lossy(&bytes));
                }
                return status.exit_code();
            }
            assert!(
                start.elapsed() < PATIENCE,
                "kdrift did not exit:\n{}",
                self.seen
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
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
}

#[test]
fn a_terminal_is_asked_and_y_reverts() {
    let c = Cluster::start();
    break_cart(&c);
    let mut s = Session::start(&c, &["revert", "deploy/cart", "-n", "shop"]);
    s.wait_for("[y/N]");
    assert!(
        s.seen.contains("registry.example/shop/cart:0.9.7"),
        "{}",
        s.seen
    );
    // The preview is coloured on a terminal: the line going away in red.
    assert!(
        s.seen
            .contains("\x1b[31m-        image: registry.example/shop/cart:6.6.6-bad"),
        "{}",
        s.seen
    );
    s.answer("y");
    assert_eq!(s.exit_code(), 0, "{}", s.seen);
    assert!(
        s.seen.contains("reverted deployment/shop/cart"),
        "{}",
        s.seen
    );
    let d = c.get_json("deployment/cart", "shop");
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "registry.example/shop/cart:0.9.7"
    );
}

#[test]
fn a_terminal_answer_other_than_y_changes_nothing() {
    let c = Cluster::start();
    break_cart(&c);
    let mut s = Session::start(&c, &["revert", "deploy/cart", "-n", "shop"]);
    s.wait_for("[y/N]");
    s.answer("");
    assert_eq!(s.exit_code(), 1, "{}", s.seen);
    assert!(s.seen.contains("not reverted"), "{}", s.seen);
    let d = c.get_json("deployment/cart", "shop");
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "registry.example/shop/cart:6.6.6-bad"
    );
}
