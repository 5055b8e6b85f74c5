//! The real binary in a pseudo-terminal against the demo cluster: rows appear, a scale through
//! the API shows up on screen, `q` quits and the terminal is restored; ctrl-z gives the terminal
//! back and stops, `fg` brings the screen back; `kdrift demo` accepts a scale hotfix in three keys.
//! And connect() errors exit 2.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_screen;
use crate::pty;

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Patch, PatchParams};
use portable_pty::{CommandBuilder, ExitStatus};
use pty::Pty;

const ROWS: u16 = 40;
const COLS: u16 = 140;
/// Generous: the machine running tests may be loaded.
const PATIENCE: Duration = Duration::from_secs(60);

/// Just enough of a terminal to read what ratatui drew: cursor moves, clears, text.
struct Screen {
    cells: Vec<Vec<char>>,
    x: usize,
    y: usize,
    pending: Vec<u8>,
    /// Every byte seen, for checks on the escape sequences themselves.
    raw: Vec<u8>,
}

impl Screen {
    fn new() -> Screen {
        Screen {
            cells: vec![vec![' '; COLS as usize]; ROWS as usize],
            x: 0,
            y: 0,
            pending: Vec::new(),
            raw: Vec::new(),
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.raw.extend_from_slice(bytes);
        self.pending.extend_from_slice(bytes);
        // Decode the longest valid UTF-8 prefix; keep a split character for the next read.
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(e) => e.valid_up_to() + e.error_len().unwrap_or(1),
        };
        let text: Vec<char> = String::from_utf8_lossy(&self.pending[..valid])
            .chars()
            .collect();
        let mut i = 0;
        let mut consumed_chars = text.len();
        while i < text.len() {
            let c = text[i];
            if c == '\x1b' {
                // An escape sequence may be cut by the read: wait for the rest.
                match self.escape(&text[i..]) {
                    Some(n) => i += n,
                    None => {
                        consumed_chars = i;
                        break;
                    }
                }
                continue;
            }
            match c {
                '\r' => self.x = 0,
                '\n' => self.y = (self.y + 1).min(ROWS as usize - 1),
                c if c >= ' ' => {
                    if self.x < COLS as usize && self.y < ROWS as usize {
                        self.cells[self.y][self.x] = c;
                    }
                    self.x += 1;
                }
                _ => {}
            }
            i += 1;
        }
        let consumed_bytes: usize = text[..consumed_chars].iter().map(|c| c.len_utf8()).sum();
        self.pending.drain(..consumed_bytes.min(valid));
    }

    /// Handle one escape sequence at the start of `s`; its length, or None if incomplete.
    fn escape(&mut self, s: &[char]) -> Option<usize> {
        let kind = *s.get(1)?;
        if kind != '[' {
            return Some(2);
        }
        let mut end = 2;
        while end < s.len() && !(s[end] >= '@' && s[end] <= '~') {
            end += 1;
        }
        let fin = *s.get(end)?;
        let params: String = s[2..end].iter().collect();
        let nums: Vec<usize> = params
            .trim_start_matches('?')
            .split(';')
            .map(|p| p.parse().unwrap_or(0))
            .collect();
        let n = |i: usize| nums.get(i).copied().filter(|v| *v > 0).unwrap_or(1);
        match fin {
            'H' | 'f' => {
                self.y = n(0) - 1;
                self.x = n(1) - 1;
            }
            'J' if !params.starts_with('?') => {
                for row in &mut self.cells {
                    row.fill(' ');
                }
            }
            'K' => {
                if let Some(row) = self.cells.get_mut(self.y) {
                    row[self.x.min(COLS as usize)..].fill(' ');
                }
            }
            'C' => self.x += n(0),
            'D' => self.x = self.x.saturating_sub(n(0)),
            'A' => self.y = self.y.saturating_sub(n(0)),
            'B' => self.y = (self.y + n(0)).min(ROWS as usize - 1),
            'G' => self.x = n(0) - 1,
            _ => {}
        }
        Some(end + 1)
    }

    fn lines(&self) -> Vec<String> {
        self.cells.iter().map(|r| r.iter().collect()).collect()
    }

    fn text(&self) -> String {
        self.lines().join("\n")
    }
}

/// Read from the pty until `done(screen)` holds, or panic with the screen after PATIENCE.
fn wait_for(
    screen: &mut Screen,
    rx: &Receiver<Vec<u8>>,
    what: &str,
    done: impl Fn(&Screen) -> bool,
) {
    let start = Instant::now();
    while !done(screen) {
        if start.elapsed() > PATIENCE {
            panic!("waited {PATIENCE:?} for {what}; screen:\n{}", screen.text());
        }
        if let Ok(bytes) = rx.recv_timeout(Duration::from_millis(200)) {
            screen.feed(&bytes);
        }
    }
}

/// Types `q` on `pty` and waits for the program to exit (failing with `what` after PATIENCE),
/// then takes what it wrote while quitting into `screen`.
fn quit(pty: &mut Pty, screen: &mut Screen, what: &str) -> ExitStatus {
    pty.send(b"q");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = pty.child.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < PATIENCE, "{what}");
        match pty.output.recv_timeout(Duration::from_millis(50)) {
            Ok(bytes) => screen.feed(&bytes),
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(Duration::from_millis(50)),
            Err(RecvTimeoutError::Timeout) => {}
        }
    };
    while let Ok(bytes) = pty.output.recv_timeout(Duration::from_millis(500)) {
        screen.feed(&bytes);
    }
    status
}

/// The DESIRED column of `name`'s row, read from the screen.
fn desired_of(screen: &Screen, name: &str) -> Option<String> {
    screen.lines().iter().find_map(|l| {
        let words: Vec<&str> = l
            .split(|c: char| c.is_whitespace() || c == '│')
            .filter(|w| !w.is_empty())
            .collect();
        let i = words.iter().position(|w| *w == name)?;
        words.get(i + 1).map(|w| w.to_string())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_view_follows_a_scale_and_quits_restoring_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let (server, kubeconfig) = live_screen::start_cluster(dir.path()).await;
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_kdrift"));
    cmd.args(["--kubeconfig", kubeconfig.to_str().unwrap(), "-A"]);
    // kdrift reads the manifests of its working directory: a temporary one, not the crate.
    cmd.cwd(dir.path());
    cmd.env("TERM", "xterm-256color");
    cmd.env("XDG_STATE_HOME", dir.path().join("state"));
    cmd.env_remove("NO_COLOR");
    cmd.env_remove("KUBECONFIG");
    let mut pty = Pty::spawn(cmd, ROWS, COLS);

    let mut screen = Screen::new();
    tokio::task::block_in_place(|| {
        wait_for(&mut screen, &pty.output, "the demo Deployments", |s| {
            let t = s.text();
            ["frontend", "checkout", "payments-api", "ingress-gateway"]
                .iter()
                .all(|n| t.contains(n))
        });
        wait_for(
            &mut screen,
            &pty.output,
            "frontend to show 2 desired",
            |s| desired_of(s, "frontend").as_deref() == Some("2"),
        );
    });

    let api: kube::Api<Deployment> = kube::Api::namespaced(kube_client(&kubeconfig).await, "shop");
    api.patch_scale(
        "frontend",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"replicas": 7}})),
    )
    .await
    .unwrap();

    tokio::task::block_in_place(|| {
        wait_for(
            &mut screen,
            &pty.output,
            "frontend to show 7 desired",
            |s| desired_of(s, "frontend").as_deref() == Some("7"),
        );
    });

    let status = quit(&mut pty, &mut screen, "kdrift did not quit on q");
    assert!(status.success(), "exit status {status:?}");
    let raw = String::from_utf8_lossy(&screen.raw);
    let entered = raw.rfind("\x1b[?1049h").unwrap();
    let left = raw
        .rfind("\x1b[?1049l")
        .expect("the alternate screen was not left");
    assert!(left > entered);
    let shown = raw
        .rfind("\x1b[?25h")
        .expect("the cursor was not shown again");
    assert!(shown > raw.rfind("\x1b[?25l").unwrap_or(0));
    server.shutdown().await;
}

/// The state letter of a process (`T` = stopped), from /proc.
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

#[test]
fn ctrl_z_gives_the_terminal_back_and_fg_brings_the_screen_back() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (server, kubeconfig) = rt.block_on(live_screen::start_cluster(dir.path()));

    // A shell with job control, as the user's: kdrift runs as its foreground job; once it
    // stops, the shell waits for a line, then `fg` resumes it (SIGCONT, terminal handed back).
    let mut cmd = CommandBuilder::new("bash");
    cmd.args([
        "-c",
        "set -m; \"$@\"; read -r _; fg",
        "shell",
        env!("CARGO_BIN_EXE_kdrift"),
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
        "-A",
    ]);
    cmd.cwd(dir.path());
    cmd.env("TERM", "xterm-256color");
    cmd.env("XDG_STATE_HOME", dir.path().join("state"));
    cmd.env_remove("KUBECONFIG");
    let mut pty = Pty::spawn(cmd, ROWS, COLS);
    let shell = pty.child.process_id().unwrap();

    let mut screen = Screen::new();
    wait_for(&mut screen, &pty.output, "the demo Deployments", |s| {
        s.text().contains("frontend")
    });
    let kdrift: u32 = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
        .unwrap()
        .split_whitespace()
        .next()
        .expect("kdrift runs under the shell")
        .parse()
        .unwrap();

    let before = screen.raw.len();
    pty.send(&[0x1a]); // ctrl-z
    wait_for(
        &mut screen,
        &pty.output,
        "kdrift to leave the screen and stop",
        |s| {
            let after = String::from_utf8_lossy(&s.raw[before..]).into_owned();
            after.contains("\x1b[?1049l") && process_state(kdrift) == Some('T')
        },
    );

    // The shell's screen shows now: forget what kdrift drew, so only a redraw brings it back.
    for row in &mut screen.cells {
        row.fill(' ');
    }
    let stopped = screen.raw.len();
    pty.send(b"\n"); // the shell's `read`, then `fg`
    wait_for(
        &mut screen,
        &pty.output,
        "kdrift back on the alternate screen",
        |s| {
            let after = String::from_utf8_lossy(&s.raw[stopped..]).into_owned();
            after.contains("\x1b[?1049h")
                && s.text().contains("frontend")
                && process_state(kdrift).is_some_and(|c| c != 'T')
        },
    );

    let status = quit(&mut pty, &mut screen, "kdrift did not quit on q after fg");
    let raw = String::from_utf8_lossy(&screen.raw);
    let tail: String = raw
        .chars()
        .rev()
        .take(600)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    assert!(
        status.success(),
        "exit status {status:?}; last output: {tail:?}"
    );
    rt.block_on(server.shutdown());
}

async fn kube_client(kubeconfig: &std::path::Path) -> kube::Client {
    let conf = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(conf, &Default::default())
        .await
        .unwrap();
    kube::Client::try_from(config).unwrap()
}

fn run_kdrift(args: &[&str], home: &std::path::Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kdrift"))
        .args(args)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .unwrap()
}

#[test]
fn unreachable_api_exits_2_with_one_line() {
    let home = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let kubeconfig = home.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: dev\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:{port}\ncontexts:\n- name: dev\n  context:\n    cluster: c\nusers: []\n"
        ),
    )
    .unwrap();
    let out = run_kdrift(&["--kubeconfig", kubeconfig.to_str().unwrap()], home.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("127.0.0.1:{port}")) && err.contains("unreachable"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing drawn before the check");
}

#[test]
fn no_kubeconfig_exits_2_with_one_line() {
    let home = tempfile::tempdir().unwrap();
    let out = run_kdrift(&[], home.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("no kubeconfig found"), "{err}");
}

#[test]
fn unknown_context_exits_2_naming_it() {
    let home = tempfile::tempdir().unwrap();
    let kubeconfig = home.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\ncurrent-context: dev\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:1\ncontexts:\n- name: dev\n  context:\n    cluster: c\nusers: []\n",
    )
    .unwrap();
    let out = run_kdrift(
        &[
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--context",
            "prod",
        ],
        home.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"prod\""));
}

/// The `git` command in `dir` as the user of `home` (no identity of the machine's own).
fn git_as(home: &std::path::Path, dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The issue's "done when": `kdrift demo` as a new user (no git identity), a `kubectl scale`
/// hotfix, then select the row, `a`, `enter`: one line committed, comments intact, the row back
/// in sync.
/// `kdrift demo --scenario none` in `dir` (manifests/, kubeconfig, home/, state/ inside it),
/// its log at trace level when `trace`.
fn quiet_demo(dir: &std::path::Path, trace: bool) -> CommandBuilder {
    demo_in(dir, trace, &["--scenario", "none"])
}

/// `kdrift demo ARGS` in `dir`, as [`quiet_demo`].
fn demo_in(dir: &std::path::Path, trace: bool, args: &[&str]) -> CommandBuilder {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_kdrift"));
    cmd.arg("demo");
    cmd.args(args);
    cmd.args([
        "--workdir",
        dir.join("manifests").to_str().unwrap(),
        "--kubeconfig-out",
        dir.join("kubeconfig").to_str().unwrap(),
    ]);
    cmd.cwd(dir);
    cmd.env("HOME", &home);
    cmd.env("XDG_CONFIG_HOME", home.join(".config"));
    cmd.env("XDG_STATE_HOME", dir.join("state"));
    if trace {
        cmd.env("KDRIFT_LOG", "trace");
    }
    cmd.env("GIT_CONFIG_NOSYSTEM", "1");
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("NO_COLOR");
    cmd.env_remove("KUBECONFIG");
    cmd
}

/// Whether the table has the row of `namespace`/`name` and its DRIFT column ends with `drift`.
fn row_ends(screen: &Screen, namespace: &str, name: &str, drift: &str) -> bool {
    screen.lines().iter().any(|l| {
        let mut words = l
            .split(|c: char| c.is_whitespace() || c == '│')
            .filter(|w| !w.is_empty());
        // The KIND column (`:workloads`, the default view) comes between them.
        let mut after_namespace = words.clone().skip(1);
        let kind = after_namespace.next();
        let name_at = if matches!(kind, Some("deploy" | "sts" | "ds")) {
            after_namespace.next()
        } else {
            kind
        };
        words.next() == Some(namespace)
            && name_at == Some(name)
            && l.trim_end()
                .trim_end_matches('│')
                .trim_end()
                .ends_with(drift)
    })
}

#[test]
fn demo_accepts_a_scale_hotfix_from_the_screen_in_three_keys() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let repo = dir.path().join("manifests");
    let kubeconfig = dir.path().join("kubeconfig");
    let mut pty = Pty::spawn(quiet_demo(dir.path(), false), ROWS, COLS);
    let row_ends = |s: &Screen, drift: &str| row_ends(s, "shop", "frontend", drift);
    let mut screen = Screen::new();
    wait_for(&mut screen, &pty.output, "frontend in sync", |s| {
        row_ends(s, "in sync")
    });
    let before = std::fs::read_to_string(repo.join("shop/frontend.yaml")).unwrap();
    let first = git_as(&home, &repo, &["rev-parse", "HEAD"]);

    let scale = std::process::Command::new(live_screen::kubectl_bin::path())
        .args(["--kubeconfig", kubeconfig.to_str().unwrap()])
        .args(["-n", "shop", "scale", "deployment/frontend", "--replicas=5"])
        .output()
        .unwrap();
    assert!(scale.status.success(), "{scale:?}");
    wait_for(&mut screen, &pty.output, "frontend drifted", |s| {
        row_ends(s, "1 field")
    });

    // Select the row (the filter is the quickest way there in a test), then the three keys.
    pty.send(b"/shop/frontend\r");
    wait_for(&mut screen, &pty.output, "the filtered table", |s| {
        s.text().contains("</shop/frontend>")
    });
    pty.send(b"a");
    wait_for(&mut screen, &pty.output, "the accept view", |s| {
        let t = s.text();
        t.contains("[x] spec.replicas") && t.contains("+  replicas: 5")
    });
    pty.send(b"\r");
    wait_for(
        &mut screen,
        &pty.output,
        "the commit in the status bar",
        |s| {
            s.text()
                .contains("kdrift: accept live spec.replicas of deployment/shop/frontend")
        },
    );
    let head = git_as(&home, &repo, &["rev-parse", "--short", "HEAD"]);
    assert!(
        screen
            .text()
            .contains(&format!("committed {}", head.trim()))
    );
    assert_ne!(git_as(&home, &repo, &["rev-parse", "HEAD"]), first);
    let patch = git_as(&home, &repo, &["show", "--format=", "--unified=0", "HEAD"]);
    assert_eq!(
        live_screen::changed_lines(&patch),
        ["-  replicas: 2", "+  replicas: 5"],
        "{patch}"
    );
    let after = std::fs::read_to_string(repo.join("shop/frontend.yaml")).unwrap();
    assert_eq!(after, before.replace("  replicas: 2\n", "  replicas: 5\n"));
    wait_for(&mut screen, &pty.output, "frontend back in sync", |s| {
        row_ends(s, "in sync")
    });

    quit(&mut pty, &mut screen, "kdrift did not quit on q");
}

/// A Secret rotated live, looked at in `:drift` and its diff, with everything logged (trace):
/// its value is neither on the screen nor in the log file.
#[test]
fn a_secret_value_is_neither_on_screen_nor_in_the_log() {
    use base64::Engine;
    const PLANTED: &str = "planted-s3cret-Lw4";
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let state = dir.path().join("state");
    let mut pty = Pty::spawn(quiet_demo(dir.path(), true), ROWS, COLS);
    let mut screen = Screen::new();
    wait_for(&mut screen, &pty.output, "the table", |s| {
        s.text().contains("frontend")
    });
    let rotate = std::process::Command::new(live_screen::kubectl_bin::path())
        .args(["--kubeconfig", kubeconfig.to_str().unwrap()])
        .args(["-n", "payments", "patch", "secret/ledger-db", "-p"])
        .arg(format!(r#"{{"stringData":{{"password":"{PLANTED}"}}}}"#))
        .output()
        .unwrap();
    assert!(rotate.status.success(), "{rotate:?}");
    pty.send(b":drift\r");
    // (The table has a StatefulSet of the same name: the Secret's own line is waited for.)
    wait_for(&mut screen, &pty.output, "the rotated Secret listed", |s| {
        s.lines()
            .iter()
            .any(|l| l.contains("Secret") && l.contains("ledger-db"))
    });
    pty.send(b"d");
    wait_for(&mut screen, &pty.output, "the Secret's diff", |s| {
        s.text().contains("password: hmac-sha256:")
    });
    let encoded = base64::engine::general_purpose::STANDARD.encode(PLANTED);
    let shown = screen.text();
    assert!(
        !shown.contains(PLANTED) && !shown.contains(&encoded),
        "{shown}"
    );
    quit(&mut pty, &mut screen, "kdrift did not quit on q");
    let log = std::fs::read_to_string(state.join("kdrift/kdrift.log")).unwrap();
    // The diff's GET of the Secret went through the logged client.
    assert!(
        log.contains("secrets/ledger-db"),
        "the Secret's requests were not logged: {} bytes",
        log.len()
    );
    for value in [PLANTED, encoded.as_str(), "demo-only-not-a-secret"] {
        assert!(!log.contains(value), "the log shows a secret value");
    }
}

/// Issue 12's "done when" on `kdrift demo`: a `kubectl scale` of the prod overlay's Deployment
/// shows the overlay's `replicas:` entry as its source; `a` + `enter` commits that one line of
/// `overlays/prod/kustomization.yaml`; a `kubectl set env` then goes into prod's own patch file;
/// afterwards prod renders as live (the row is in sync) and staging renders exactly as before.
#[test]
fn demo_accepts_a_scale_of_the_prod_overlay_into_its_kustomization() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let repo = dir.path().join("manifests");
    let kubeconfig = dir.path().join("kubeconfig");
    let mut pty = Pty::spawn(quiet_demo(dir.path(), false), ROWS, COLS);
    let row_ends = |s: &Screen, drift: &str| row_ends(s, "inventory-prod", "inventory", drift);
    let mut screen = Screen::new();
    wait_for(&mut screen, &pty.output, "inventory-prod in sync", |s| {
        row_ends(s, "in sync")
    });
    // Select the row (the filter is the quickest way there in a test).
    pty.send(b"/inventory-prod/inventory\r");
    wait_for(&mut screen, &pty.output, "the filtered table", |s| {
        s.text().contains("</inventory-prod/inventory>")
    });
    let render = |root: &str| {
        let out = std::process::Command::new("kubectl")
            .args(["kustomize", repo.join(root).to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let staging = render("inventory/overlays/staging");
    let kubectl = |args: &[&str]| {
        let out = std::process::Command::new(live_screen::kubectl_bin::path())
            .args([
                "--kubeconfig",
                kubeconfig.to_str().unwrap(),
                "-n",
                "inventory-prod",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    kubectl(&["scale", "deployment/inventory", "--replicas=5"]);
    wait_for(&mut screen, &pty.output, "inventory-prod drifted", |s| {
        row_ends(s, "1 field")
    });

    pty.send(b"a");
    wait_for(&mut screen, &pty.output, "the accept view", |s| {
        let t = s.text();
        t.contains("[x] spec.replicas")
            && t.contains("inventory/overlays/prod/kustomization.yaml")
            && t.contains("+    count: 5")
    });
    pty.send(b"\r");
    wait_for(
        &mut screen,
        &pty.output,
        "the commit in the status bar",
        |s| s.text().contains("committed "),
    );
    let files = git_as(&home, &repo, &["show", "--format=", "--name-only", "HEAD"]);
    assert_eq!(
        files.trim(),
        "inventory/overlays/prod/kustomization.yaml",
        "{files}"
    );
    let patch = git_as(&home, &repo, &["show", "--format=", "--unified=0", "HEAD"]);
    assert_eq!(
        live_screen::changed_lines(&patch),
        ["-    count: 3", "+    count: 5"],
        "{patch}"
    );
    wait_for(
        &mut screen,
        &pty.output,
        "inventory-prod back in sync",
        |s| row_ends(s, "in sync"),
    );

    kubectl(&["set", "env", "deployment/inventory", "BULK_RESERVATIONS=on"]);
    wait_for(&mut screen, &pty.output, "the env var as drift", |s| {
        row_ends(s, "1 field")
    });
    pty.send(b"a");
    wait_for(
        &mut screen,
        &pty.output,
        "the accept view of the env var",
        |s| {
            let t = s.text();
            t.contains("inventory/overlays/prod/resources.yaml") && t.contains("BULK_RESERVATIONS")
        },
    );
    pty.send(b"\r");
    wait_for(
        &mut screen,
        &pty.output,
        "inventory-prod in sync again",
        |s| row_ends(s, "in sync"),
    );
    let files = git_as(&home, &repo, &["show", "--format=", "--name-only", "HEAD"]);
    assert_eq!(files.trim(), "inventory/overlays/prod/resources.yaml");
    assert_eq!(render("inventory/overlays/staging"), staging);
    let prod = render("inventory/overlays/prod");
    assert!(
        prod.contains("replicas: 5") && prod.contains("BULK_RESERVATIONS"),
        "{prod}"
    );

    quit(&mut pty, &mut screen, "kdrift did not quit on q");
}

/// Quitting twice while an accept's git commits (a slow pre-commit hook): git is stopped with
/// SIGTERM, so it leaves no `.git/index.lock`, the file is put back as it was, kdrift says so
/// and exits non-zero — it exited 0 and left the lock when git was killed outright.
#[test]
fn quitting_twice_during_an_accept_stops_git_cleanly_and_says_what_was_left() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let repo = dir.path().join("manifests");
    let kubeconfig = dir.path().join("kubeconfig");
    let mut pty = Pty::spawn(quiet_demo(dir.path(), false), ROWS, COLS);
    let mut screen = Screen::new();
    wait_for(&mut screen, &pty.output, "frontend in sync", |s| {
        row_ends(s, "shop", "frontend", "in sync")
    });
    let hook = repo.join(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        "#!/bin/sh\ntouch \"$(git rev-parse --git-dir)/hook-started\"\nsleep 20\ntouch \"$(git rev-parse --git-dir)/hook-finished\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = std::fs::read_to_string(repo.join("shop/frontend.yaml")).unwrap();
    let head = git_as(&home, &repo, &["rev-parse", "HEAD"]);
    let scale = std::process::Command::new(live_screen::kubectl_bin::path())
        .args(["--kubeconfig", kubeconfig.to_str().unwrap()])
        .args(["-n", "shop", "scale", "deployment/frontend", "--replicas=5"])
        .output()
        .unwrap();
    assert!(scale.status.success(), "{scale:?}");
    wait_for(&mut screen, &pty.output, "frontend drifted", |s| {
        row_ends(s, "shop", "frontend", "1 field")
    });
    pty.send(b"/shop/frontend\r");
    wait_for(&mut screen, &pty.output, "the filtered table", |s| {
        s.text().contains("</shop/frontend>")
    });
    pty.send(b"a");
    wait_for(&mut screen, &pty.output, "the accept view", |s| {
        s.text().contains("[x] spec.replicas")
    });
    pty.send(b"\r");
    let started = repo.join(".git/hook-started");
    let start = Instant::now();
    while !started.exists() {
        assert!(start.elapsed() < PATIENCE, "the hook never ran");
        if let Ok(bytes) = pty.output.recv_timeout(Duration::from_millis(100)) {
            screen.feed(&bytes);
        }
    }
    pty.send(b"q");
    wait_for(&mut screen, &pty.output, "the quitting notice", |s| {
        s.text()
            .contains("quitting once the accept or revert under way ends")
    });
    let status = quit(&mut pty, &mut screen, "kdrift did not quit on the second q");
    assert!(
        !status.success(),
        "quit with the accept unfinished: {status:?}"
    );
    let said = String::from_utf8_lossy(&screen.raw).into_owned();
    assert!(
        said.contains("stopping their git commands (SIGTERM")
            && said.contains(
                "interrupted before the commit: git was stopped and nothing was committed"
            )
            && said.contains("shop/frontend.yaml put back as it was"),
        "{said}"
    );
    assert!(!repo.join(".git/index.lock").exists());
    assert_eq!(
        std::fs::read_to_string(repo.join("shop/frontend.yaml")).unwrap(),
        before
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(!repo.join(".git/hook-finished").exists());
    assert_eq!(git_as(&home, &repo, &["rev-parse", "HEAD"]), head);
    assert_eq!(git_as(&home, &repo, &["status", "--porcelain"]), "");
}

/// `kdrift demo --clusters 3`: the live view opens on the three clusters in one table; the
/// incident plays on prod-eu alone, whose gateway scaled by hand is accepted (from its row) into
/// `clusters/prod-eu/` alone; `:ctx staging` shows staging's own gateway (1 replica), in sync.
#[test]
fn the_demo_fleet_opens_on_prod_eu_accepts_into_its_folder_and_switches_context() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let repo = dir.path().join("manifests");
    let cmd = demo_in(dir.path(), false, &["--clusters", "3"]);
    let mut pty = Pty::spawn(cmd, ROWS, COLS);
    let mut screen = Screen::new();
    wait_for(&mut screen, &pty.output, "the three clusters' rows", |s| {
        s.text().contains("CONTEXT") && s.text().contains(" prod-us connected")
    });
    pty.send(b"/payments/gateway\r");
    // CONTEXT first: the rows of one object sit together, in the order of the contexts.
    let gateway_of = |s: &Screen, context: &str| {
        s.lines().iter().find_map(|l| {
            let words: Vec<String> = l
                .split(|c: char| c.is_whitespace() || c == '│')
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect();
            (words.first().map(String::as_str) == Some(context)
                && words.iter().any(|w| w == "gateway"))
            .then(|| words.join(" "))
        })
    };
    wait_for(
        &mut screen,
        &pty.output,
        "prod-eu's gateway scaled by hand, the others in sync",
        |s| {
            s.text().contains("CONTEXT")
                && gateway_of(s, "prod-eu").is_some_and(|r| r.ends_with("1 field"))
                && gateway_of(s, "staging").is_some_and(|r| r.ends_with("in sync"))
                && gateway_of(s, "prod-us").is_some_and(|r| r.ends_with("in sync"))
        },
    );
    let first = git_as(&home, &repo, &["rev-parse", "HEAD"]);
    // The first row is staging's, the second prod-eu's.
    pty.send(b"gja");
    wait_for(&mut screen, &pty.output, "the accept view", |s| {
        let t = s.text();
        t.contains("[x] spec.replicas") && t.contains("+  replicas: 5")
    });
    pty.send(b"\r");
    wait_for(&mut screen, &pty.output, "the commit", |s| {
        s.text()
            .contains("kdrift: accept live spec.replicas of deployment/payments/gateway")
    });
    let changed = git_as(&home, &repo, &["diff", "--name-only", first.trim(), "HEAD"]);
    assert_eq!(changed, "clusters/prod-eu/gateway.yaml\n");

    pty.send(b"\x1b:ctx staging\r");
    wait_for(&mut screen, &pty.output, "staging's gateway", |s| {
        s.text().contains("staging")
            && !s.text().contains("CONTEXT")
            && desired_of(s, "gateway").as_deref() == Some("1")
            && row_ends(s, "payments", "gateway", "in sync")
    });
    quit(&mut pty, &mut screen, "kdrift did not quit on q");
}
