//! The live loop's test frontend, shared by the tests that drive `FleetSession::drive` on a
//! TestBackend: the demo cluster and its manifests, the text of the last frame, waiting for it to
//! show something, and typing keys; also what the pty tests share with them (starting the
//! cluster, the lines a commit changes).
#![allow(dead_code)]

/// Declared by each test binary beside this module (a file is loaded as one module only).
pub use crate::kubectl_bin;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};
use kdrift::app::Message;
use kdrift::runtime::drive::Frontend;
use kdrift::runtime::event_loop::Event;
use kdrift::ui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// How long a test waits for the screen (generous: the machine is shared).
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Keeps the text of the last frame drawn.
pub struct Screen(pub Arc<Mutex<String>>);

impl Frontend<TestBackend> for Screen {
    fn suspend(&mut self, _terminal: &mut Terminal<TestBackend>) -> std::io::Result<()> {
        Ok(())
    }

    fn after_frame(
        &mut self,
        fleet: &kdrift::app::fleet::Fleet,
        members: &[kdrift::app::fleet::Member<'_>],
    ) {
        let Some(first) = members.first() else {
            return;
        };
        let (width, height) = (first.app.width, first.app.height);
        let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
        term.draw(|f| kdrift::ui::fleet::render_fleet(fleet, members, &Theme::default_theme(), f))
            .unwrap();
        *self.0.lock().unwrap() = buffer_text(term.backend().buffer());
    }
}

/// The text of a drawn buffer, a line per row.
fn buffer_text(buf: &ratatui::buffer::Buffer) -> String {
    let mut text = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            text.push_str(buf[(x, y)].symbol());
        }
        text.push('\n');
    }
    text
}

/// Runs the live view over `contexts` (of the kubeconfig's `all`) on a `width`×`height`
/// TestBackend while `script` types and watches the screen; `script` must quit it.
pub async fn run_fleet<F, Fut>(
    common: &kdrift::cli::CommonArgs,
    contexts: &[String],
    width: u16,
    height: u16,
    script: F,
) where
    F: FnOnce(tokio::sync::mpsc::UnboundedSender<Event>, Arc<Mutex<String>>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let all = kdrift::cluster::client::kubeconfig_contexts(&common.connection()).unwrap();
    let mut session = kdrift::runtime::fleet::FleetSession::start(common, contexts, all);
    let tx = session.sender();
    let text = Arc::new(Mutex::new(String::new()));
    let mut frontend = Screen(text.clone());
    let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
    let theme = Theme::default_theme();
    let driver = session.drive(&mut term, &theme, &mut frontend);
    let (result, ()) = tokio::join!(driver, script(tx, text));
    result.unwrap();
}

/// Waits until the last frame satisfies `cond`; fails with the screen after [`PATIENCE`].
pub async fn wait_for(screen: &Arc<Mutex<String>>, what: &str, cond: impl Fn(&str) -> bool) {
    let start = Instant::now();
    loop {
        if cond(&screen.lock().unwrap()) {
            return;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "waited for {what}; screen:\n{}",
            screen.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Types `text` until the last frame satisfies `cond` (for a key that a reload still under way
/// may refuse: a row whose drift is being computed again); fails after [`PATIENCE`].
pub async fn keys_until(
    tx: &tokio::sync::mpsc::UnboundedSender<Event>,
    screen: &Arc<Mutex<String>>,
    text: &str,
    what: &str,
    cond: impl Fn(&str) -> bool,
) {
    let start = Instant::now();
    loop {
        keys(tx, text);
        let pressed = Instant::now();
        while pressed.elapsed() < Duration::from_secs(2) {
            if cond(&screen.lock().unwrap()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "typed {text:?} for {what}; screen:\n{}",
            screen.lock().unwrap()
        );
    }
}

pub fn key(tx: &tokio::sync::mpsc::UnboundedSender<Event>, code: KeyCode) {
    tx.send(Event::App(Message::Key(KeyEvent::from(code))))
        .unwrap();
}

/// Types `text`; `\n` is Enter.
pub fn keys(tx: &tokio::sync::mpsc::UnboundedSender<Event>, text: &str) {
    for c in text.chars() {
        key(
            tx,
            if c == '\n' {
                KeyCode::Enter
            } else {
                KeyCode::Char(c)
            },
        );
    }
}

/// The demo cluster (seeded, no scenario, fast timings), its manifests copied to a git workdir
/// with the test's own identity, and the flags of a live view on all its namespaces.
pub struct Demo {
    pub server: kdrift::sim::server::SimServer,
    pub dir: tempfile::TempDir,
    pub kubeconfig: std::path::PathBuf,
    pub manifests: std::path::PathBuf,
    pub common: kdrift::cli::CommonArgs,
}

/// Starts the demo cluster (seeded, no scenario, fast timings) and writes a kubeconfig for it in
/// `dir`.
pub async fn start_cluster(
    dir: &std::path::Path,
) -> (kdrift::sim::server::SimServer, std::path::PathBuf) {
    start_cluster_with(dir, Default::default()).await
}

/// [`start_cluster`], its GitOps controllers reading `gitops_repos` (repoURL → local repository).
pub async fn start_cluster_with(
    dir: &std::path::Path,
    gitops_repos: std::collections::BTreeMap<String, std::path::PathBuf>,
) -> (kdrift::sim::server::SimServer, std::path::PathBuf) {
    use kdrift::sim::server::{Scenario, SimConfig, SimServer, Timings};
    let server = SimServer::start(SimConfig {
        port: 0,
        scenario: Scenario::None,
        seed: true,
        timings: Timings::fast(),
        gitops_repos,
        fleet_cluster: None,
    })
    .await
    .unwrap();
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig_yaml()).unwrap();
    (server, kubeconfig)
}

pub async fn demo() -> Demo {
    let dir = tempfile::tempdir().unwrap();
    let workdir = kdrift::runtime::demo::prepare_workdir(
        Some(&dir.path().join("manifests")),
        kdrift::sim::scenario::DEMO_MANIFESTS,
    )
    .unwrap();
    // The test's own identity, so that an accept commits whatever the machine's git config says.
    git_in(&workdir.path, &["config", "user.name", "On Call"]);
    git_in(
        &workdir.path,
        &["config", "user.email", "oncall@example.com"],
    );
    git_in(&workdir.path, &["config", "commit.gpgsign", "false"]);
    // The cluster last, so that the live view starts as soon after it as before this harness:
    // a watch resumed after a 403 shows "connected" only at its next event, and ui_live's
    // recovery from one sees an event only while the seeded rollouts are still finishing.
    // The demo's Argo CD and Flux read the workdir, as in `kdrift demo`.
    let repos = [(
        kdrift::sim::scenario::DEMO_REPO_URL.to_string(),
        workdir.path.clone(),
    )];
    let (server, kubeconfig) = start_cluster_with(dir.path(), repos.into_iter().collect()).await;
    let common = kdrift::cli::CommonArgs {
        kubeconfig: Some(kubeconfig.clone()),
        all_namespaces: true,
        manifests: Some(workdir.path.clone()),
        ..kdrift::cli::CommonArgs::default()
    };
    Demo {
        server,
        dir,
        kubeconfig,
        manifests: workdir.path,
        common,
    }
}

/// The stdout of a command that must have succeeded; else fails with its stderr.
fn succeeded(what: &str, out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// git in `dir`; it must succeed. Returns stdout.
fn git_in(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    succeeded(&format!("git {args:?}"), out)
}

impl Demo {
    /// The real kubectl against the demo cluster; it must succeed. Returns stdout.
    pub async fn kubectl(&self, args: &[&str]) -> String {
        let out = tokio::process::Command::new(kubectl_bin::path())
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .env("HOME", self.dir.path())
            .output()
            .await
            .unwrap();
        succeeded(&format!("kubectl {args:?}"), out)
    }

    /// git in the manifests' repository; it must succeed. Returns stdout.
    pub fn git(&self, args: &[&str]) -> String {
        git_in(&self.manifests, args)
    }

    /// The text of the manifest file `rel` (relative to the manifests' folder).
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.manifests.join(rel)).unwrap()
    }

    /// The flags of a live view that only watches: an empty manifests folder (not the default,
    /// the current directory: that is the crate, whose target/ a fresh clone keeps inside it).
    pub fn watching_only(&self) -> kdrift::cli::CommonArgs {
        let empty = self.dir.path().join("no-manifests");
        std::fs::create_dir_all(&empty).unwrap();
        kdrift::cli::CommonArgs {
            manifests: Some(empty),
            ..self.common.clone()
        }
    }

    /// Runs the live view of the demo on a 150×40 TestBackend while `script` types and watches
    /// the screen; `script` must quit it.
    pub async fn drive<F, Fut>(&self, script: F)
    where
        F: FnOnce(tokio::sync::mpsc::UnboundedSender<Event>, Arc<Mutex<String>>) -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        run(&self.common, 150, 40, script).await;
    }
}

/// Runs the live view with `common` on a `width`×`height` TestBackend while `script` types and
/// watches the screen; `script` must quit it. Returns what the accepts and reverts the quit
/// waited for did.
pub async fn run<F, Fut>(
    common: &kdrift::cli::CommonArgs,
    width: u16,
    height: u16,
    script: F,
) -> Vec<String>
where
    F: FnOnce(tokio::sync::mpsc::UnboundedSender<Event>, Arc<Mutex<String>>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let conn = kdrift::cluster::client::connect(&common.connection())
        .await
        .unwrap();
    run_on(conn, common, width, height, script).await
}

/// [`run`] on a connection made by the test (which may keep a clone of its client).
pub async fn run_on<F, Fut>(
    conn: kdrift::cluster::client::Connection,
    common: &kdrift::cli::CommonArgs,
    width: u16,
    height: u16,
    script: F,
) -> Vec<String>
where
    F: FnOnce(tokio::sync::mpsc::UnboundedSender<Event>, Arc<Mutex<String>>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut session = kdrift::runtime::fleet::FleetSession::one(common, conn);
    let tx = session.sender();
    let text = Arc::new(Mutex::new(String::new()));
    let mut frontend = Screen(text.clone());
    let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
    let theme = Theme::default_theme();
    let driver = session.drive(&mut term, &theme, &mut frontend);
    let (result, ()) = tokio::join!(driver, script(tx, text));
    result.unwrap();
    session.outcomes()
}

/// The lines a commit's patch (`git show --format= --unified=0`) removes and adds, in order.
pub fn changed_lines(patch: &str) -> Vec<&str> {
    patch
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .collect()
}

/// The words of a table line, the KIND column's (`deploy`, `sts`, `ds`, between the namespace
/// and the name in the `:workloads` view) left out.
pub fn row_words(line: &str) -> Vec<&str> {
    let mut words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c == '│')
        .filter(|w| !w.is_empty())
        .collect();
    if matches!(words.get(1), Some(&("deploy" | "sts" | "ds"))) {
        words.remove(1);
    }
    words
}
