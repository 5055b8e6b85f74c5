//! The real Kubernetes API server this tier runs against, found once per test process:
//!
//! 1. the one `KDRIFT_REALK8S_KUBECONFIG` names (`.ci/run` starts realk8s and exports it; a
//!    developer can point it at any running realk8s). It must answer, else every test fails;
//! 2. else realk8s started from `../shared/realk8s` beside the repository (its binaries unpacked
//!    once under `target/tmp`), stopped by a watchdog when this test process ends;
//! 3. else none: every test returns at once and the reason is written to stderr (past the
//!    test harness's capture, so `cargo test` shows it). `KDRIFT_REALK8S=0` asks for this.
//!
//! Each test works in a namespace of its own ([`Namespace`]), so they share the one server.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Once, OnceLock};
use std::time::{Duration, Instant};

use crate::common::kubectl_bin;
use crate::realk8s_unpack::unpacked;

/// The names realk8s gives its fake nodes when this process starts it: the demo cluster's, so
/// that both servers list the same nodes.
const NODE_NAMES: &str = "demo-node-1,demo-node-2,demo-node-3";

/// A running real API server and a kubectl home (discovery cache) for it.
pub struct Real {
    /// An admin kubeconfig (client certificate).
    pub kubeconfig: PathBuf,
    /// Where the server came from, for messages.
    pub origin: String,
    /// `HOME` and the discovery cache of the kubectl runs against it.
    pub home: tempfile::TempDir,
}

enum Found {
    Ready(Real),
    /// No server: the tests are skipped, saying why.
    Skip(String),
    /// A server was named or could be started, but is not usable: the tests fail, saying why.
    Broken(String),
}

static FOUND: OnceLock<Found> = OnceLock::new();
static SKIP_SAID: Once = Once::new();

/// The real server, or `None` when there is none (the reason is written to stderr once).
/// Panics when one was named or started but does not work: CI must not pass by skipping.
pub fn real() -> Option<&'static Real> {
    match FOUND.get_or_init(find) {
        Found::Ready(real) => Some(real),
        Found::Skip(reason) => {
            say_skipped(reason);
            None
        }
        Found::Broken(why) => panic!("the real-server tier cannot run: {why}"),
    }
}

static SECOND: OnceLock<Result<Real, String>> = OnceLock::new();

/// A second real server, started from `../shared/realk8s` for this test process (the fleet
/// tests run kdrift over two clusters); `None`, with the reason on stderr, when the tier is
/// skipped or realk8s cannot be started from there (only a named server is at hand).
pub fn second() -> Option<&'static Real> {
    real()?;
    let found = SECOND.get_or_init(|| {
        let dir = shared_realk8s();
        if !dir.join("start.sh").is_file() {
            return Err(format!(
                "a second real server is started from {}, which does not exist",
                dir.join("start.sh").display()
            ));
        }
        match start(&dir) {
            Ok(real) => Ok(real),
            Err(why) => panic!("the second real server cannot start: {why}"),
        }
    });
    match found {
        Ok(real) => Some(real),
        Err(reason) => {
            let _ = writeln!(
                std::io::stderr(),
                "\nkdrift real-server tier: the tests over two servers are SKIPPED: {reason}\n"
            );
            None
        }
    }
}

/// Writes the reason the tier is skipped straight to the process's stderr: the test harness
/// captures `eprintln!` of a passing test, and a skip must never be silent.
fn say_skipped(reason: &str) {
    SKIP_SAID.call_once(|| {
        let _ = writeln!(
            std::io::stderr(),
            "\nkdrift real-server tier (tests/real): SKIPPED, every test in it returns at once: {reason}.\n\
             To run it: start realk8s and set KDRIFT_REALK8S_KUBECONFIG to its kubeconfig, or keep \
             realk8s in ../shared/realk8s beside the repository (docs/real-server.md).\n"
        );
    });
}

/// The folder holding realk8s's `start.sh`, beside the repository.
pub fn shared_realk8s() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/realk8s");
    dir.canonicalize().unwrap_or(dir)
}

fn find() -> Found {
    if let Some(named) = std::env::var_os("KDRIFT_REALK8S_KUBECONFIG").filter(|v| !v.is_empty()) {
        let real = Real::at(
            PathBuf::from(&named),
            format!("KDRIFT_REALK8S_KUBECONFIG={}", Path::new(&named).display()),
        );
        return match real.ready() {
            Ok(()) => Found::Ready(real),
            Err(why) => Found::Broken(format!(
                "{}: the server does not answer: {why}",
                real.origin
            )),
        };
    }
    if std::env::var("KDRIFT_REALK8S").is_ok_and(|v| v == "0") {
        return Found::Skip("KDRIFT_REALK8S=0 asks to skip it".into());
    }
    let dir = shared_realk8s();
    if !dir.join("start.sh").is_file() {
        return Found::Skip(format!(
            "no real Kubernetes server: KDRIFT_REALK8S_KUBECONFIG is unset and {} does not exist \
             (a fresh clone has no ../shared)",
            dir.join("start.sh").display()
        ));
    }
    match start(&dir) {
        Ok(real) => Found::Ready(real),
        Err(why) => Found::Broken(why),
    }
}

/// Starts realk8s into a fresh folder, with a watchdog that stops it (by the PIDs start.sh
/// recorded) and removes the folder once this test process has gone, however it ends.
fn start(dir: &Path) -> Result<Real, String> {
    let bin = unpacked(dir)?;
    let run = tempfile::Builder::new()
        .prefix("kdrift-realk8s-")
        .tempdir()
        .map_err(|e| e.to_string())?
        .keep();
    // Its own process group: a ctrl-c in the terminal running the tests does not reach it.
    std::os::unix::process::CommandExt::process_group(
        Command::new("sh")
            .arg("-c")
            .arg(r#"while kill -0 "$1" 2>/dev/null; do sleep 1; done; "$2/stop.sh" >/dev/null 2>&1; rm -rf "$3""#)
            .arg("realk8s-watchdog")
            .arg(std::process::id().to_string())
            .arg(dir)
            .arg(&run)
            .env("REALK8S_RUN", &run)
            .env("REALK8S_BIN", &bin)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
        0,
    )
    .spawn()
    .map_err(|e| format!("the watchdog: {e}"))?;
    let began = Instant::now();
    let out = Command::new(dir.join("start.sh"))
        .env("REALK8S_RUN", &run)
        .env("REALK8S_BIN", &bin)
        .env("REALK8S_NODES", NODE_NAMES)
        .env("KUBECTL", kubectl_bin::path())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", dir.join("start.sh").display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed: {}",
            dir.join("start.sh").display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let kubeconfig = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .map(PathBuf::from)
        .ok_or("start.sh printed no kubeconfig")?;
    let _ = writeln!(
        std::io::stderr(),
        "\nkdrift real-server tier: started realk8s in {} ({:.0?}); it stops when the tests end",
        run.display(),
        began.elapsed()
    );
    let real = Real::at(
        kubeconfig,
        format!("realk8s started from {}", dir.display()),
    );
    real.ready().map(|()| real)
}

impl Real {
    fn at(kubeconfig: PathBuf, origin: String) -> Real {
        Real {
            kubeconfig,
            origin,
            home: tempfile::tempdir().unwrap_or_else(|e| panic!("a temporary folder: {e}")),
        }
    }

    /// `kubectl get --raw /readyz` says ok, within a minute.
    fn ready(&self) -> Result<(), String> {
        let began = Instant::now();
        loop {
            let out = self.kubectl(&["get", "--raw", "/readyz"]);
            if out.status.success() && out.stdout == b"ok" {
                return Ok(());
            }
            if began.elapsed() > Duration::from_secs(60) {
                return Err(String::from_utf8_lossy(&out.stderr).into_owned());
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// A kubectl (the tests' one: `KDRIFT_TEST_KUBECTL`, else PATH's) against this server.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(kubectl_bin::path());
        cmd.args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", self.home.path())
            .env("KUBECACHEDIR", self.home.path().join("cache"))
            .env_remove("KUBECTL_EXTERNAL_DIFF")
            .stdin(Stdio::null());
        cmd
    }

    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.command(args)
            .output()
            .unwrap_or_else(|e| panic!("kubectl {args:?}: {e}"))
    }

    /// Runs kubectl; it must succeed. Returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} against the real server failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A namespace of the test's own, deleted when dropped.
    pub fn namespace(&'static self, test: &str) -> Namespace {
        let mut name: String = test
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        name.truncate(40);
        let name = format!(
            "{}-{}",
            name.trim_end_matches('-'),
            &uuid::Uuid::new_v4().simple().to_string()[..6]
        );
        self.ok(&["create", "namespace", &name]);
        // The namespace's default ServiceAccount, made by the controller manager: a pod is
        // refused until it exists.
        let began = Instant::now();
        while !self
            .kubectl(&["get", "serviceaccount", "default", "-n", &name])
            .status
            .success()
        {
            assert!(
                began.elapsed() < Duration::from_secs(60),
                "no default ServiceAccount in {name} after a minute"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        Namespace { name, real: self }
    }
}

/// A namespace of one test on the real server; deleted (without waiting) when dropped.
pub struct Namespace {
    pub name: String,
    pub real: &'static Real,
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = self
            .real
            .kubectl(&["delete", "namespace", &self.name, "--wait=false"]);
    }
}
