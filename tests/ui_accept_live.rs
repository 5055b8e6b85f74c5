//! Accept in the real loop (`Session::drive` on a TestBackend) against the demo cluster, its
//! manifests in a temporary git repository: a `kubectl scale` hotfix (the real kubectl) is
//! accepted with `a` and `enter`; the commit changes exactly the one line, the comments stay,
//! the status bar names the commit, and the row goes back in sync without a restart. A value
//! that moved live since it was shown, a dirty manifest file and a failing hook are refused, and
//! say so.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod live_screen;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crossterm::event::KeyCode;
use kdrift::cli::CommonArgs;
use kdrift::cluster::client::connect;
use kdrift::runtime::demo::prepare_workdir;
use kdrift::runtime::event_loop::{Event, Session};
use kdrift::sim::scenario::DEMO_MANIFESTS;
use kdrift::sim::server::{Scenario, SimConfig, SimServer, Timings};
use kdrift::ui::theme::Theme;
use live_screen::{Screen, key, keys, wait_for};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc::UnboundedSender;

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

/// The demo cluster and its manifests in a git repository with the test's own identity.
struct Demo {
    server: SimServer,
    _dir: tempfile::TempDir,
    repo: PathBuf,
    kubeconfig: PathBuf,
}

impl Demo {
    async fn start() -> Demo {
        let server = SimServer::start(SimConfig {
            port: 0,
            scenario: Scenario::None,
            seed: true,
            timings: Timings::fast(),
        })
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let repo = prepare_workdir(Some(&dir.path().join("manifests")), DEMO_MANIFESTS)
            .unwrap()
            .path;
        // The test's own identity, so that the machine's git config does not matter.
        git(&repo, &["config", "user.name", "On Call"]);
        git(&repo, &["config", "user.email", "oncall@example.com"]);
        git(&repo, &["config", "commit.gpgsign", "false"]);
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(&kubeconfig, server.kubeconfig_yaml()).unwrap();
        Demo {
            server,
            _dir: dir,
            repo,
            kubeconfig,
        }
    }

    /// The real kubectl against the demo cluster.
    async fn kubectl(&self, args: &[&str]) {
        let out = tokio::process::Command::new("/usr/bin/kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.repo.join(rel)).unwrap()
    }

    /// Runs the live view on a 150×40 screen while `script` types keys and reads the screen.
    async fn drive<F, Fut>(&self, script: F)
    where
        F: FnOnce(UnboundedSender<Event>, Arc<Mutex<String>>) -> Fut,
        Fut: Future<Output = ()>,
    {
        let common = CommonArgs {
            kubeconfig: Some(self.kubeconfig.clone()),
            all_namespaces: true,
            manifests: Some(self.repo.clone()),
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
        let (result, ()) = tokio::join!(driver, script(tx, text));
        result.unwrap();
    }

    async fn stop(self) {
        self.server.shutdown().await;
    }
}

/// The status line (the last line of the screen).
/// The message under the status bar (it may wrap onto several lines), as one line.
fn status_line(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let bar = lines
        .iter()
        .rposition(|l| l.starts_with(" ctx "))
        .map_or(lines.len().saturating_sub(1), |at| at + 1);
    let joined: Vec<&str> = lines[bar.min(lines.len())..]
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    joined.join(" ")
}

/// frontend in sync, then `kubectl scale` to 5: the row drifts; select it and press `a`.
async fn scale_and_press_a(d: &Demo, tx: &UnboundedSender<Event>, text: &Arc<Mutex<String>>) {
    wait_for(text, "frontend in sync", |s| {
        row_ends_with(s, "frontend", "in sync")
    })
    .await;
    d.kubectl(&["-n", "shop", "scale", "deployment/frontend", "--replicas=5"])
        .await;
    wait_for(text, "frontend drifted by one field", |s| {
        row_ends_with(s, "frontend", "1 field")
    })
    .await;
    keys(tx, "/shop/frontend\n");
    keys(tx, "a");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scale_hotfix_is_accepted_in_three_keys_and_the_row_goes_back_in_sync() {
    let demo = Demo::start().await;
    let repo = demo.repo.clone();
    let before = demo.read("shop/frontend.yaml");
    let first = git(&repo, &["rev-parse", "HEAD"]);
    let d = &demo;
    let script = move |tx: UnboundedSender<Event>, text: Arc<Mutex<String>>| async move {
        scale_and_press_a(d, &tx, &text).await;
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
        let after = d.read("shop/frontend.yaml");
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
    demo.drive(script).await;
    demo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moved_value_a_dirty_file_and_a_failing_hook_are_refused_and_say_so() {
    let demo = Demo::start().await;
    let repo = demo.repo.clone();
    let before = demo.read("shop/frontend.yaml");
    let first = git(&repo, &["rev-parse", "HEAD"]);
    let d = &demo;
    let script = move |tx: UnboundedSender<Event>, text: Arc<Mutex<String>>| async move {
        scale_and_press_a(d, &tx, &text).await;
        wait_for(&text, "the accept view", |s| s.contains("2 → 5")).await;

        // Scaled again while the view is open: enter refuses, nothing is written.
        d.kubectl(&["-n", "shop", "scale", "deployment/frontend", "--replicas=6"])
            .await;
        key(&tx, KeyCode::Enter);
        wait_for(&text, "the refusal", |s| {
            status_line(s) == "spec.replicas changed live since it was shown (5 → 6); press a again"
        })
        .await;
        assert_eq!(d.read("shop/frontend.yaml"), before);
        assert_eq!(git(&repo, &["rev-parse", "HEAD"]), first);

        // The user's own unfinished edit of the file: the view warns, enter refuses.
        let mine = before.replace("# Owner:", "# Owners:");
        std::fs::write(repo.join("shop/frontend.yaml"), &mine).unwrap();
        keys(&tx, "a");
        wait_for(&text, "the warning", |s| {
            s.contains("2 → 6")
                && s.contains("shop/frontend.yaml has uncommitted changes: enter will refuse")
        })
        .await;
        key(&tx, KeyCode::Enter);
        wait_for(&text, "the whole dirty-file refusal", |s| {
            let line = status_line(s);
            line.starts_with(
                "shop/frontend.yaml has uncommitted changes: commit or stash them first",
            ) && line.ends_with("nothing was written")
        })
        .await;
        assert_eq!(d.read("shop/frontend.yaml"), mine, "nothing written");
        assert_eq!(git(&repo, &["rev-parse", "HEAD"]), first);

        // A pre-commit hook that fails: the file is written, git's words are shown.
        std::fs::write(repo.join("shop/frontend.yaml"), &before).unwrap();
        let hook = repo.join(".git/hooks/pre-commit");
        std::fs::write(
            &hook,
            "#!/bin/sh\necho 'lint: replicas must be even' >&2\nexit 1\n",
        )
        .unwrap();
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        keys(&tx, "a");
        wait_for(&text, "the view without a warning", |s| {
            s.contains("2 → 6") && !s.contains("uncommitted changes")
        })
        .await;
        key(&tx, KeyCode::Enter);
        wait_for(&text, "git's message", |s| {
            let line = status_line(s);
            line.starts_with("git commit failed; the file is written but not committed:")
                && line.contains("lint: replicas must be even")
        })
        .await;
        assert_eq!(
            d.read("shop/frontend.yaml"),
            before.replace("  replicas: 2\n", "  replicas: 6\n"),
            "written, not committed"
        );
        assert_eq!(git(&repo, &["rev-parse", "HEAD"]), first);
        keys(&tx, "q");
    };
    demo.drive(script).await;
    demo.stop().await;
}
