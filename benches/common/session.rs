//! kdrift's real loop for the benches that measure the live view: a 200x50 `TestBackend`, a
//! probe that hands each frame's app state to the bench, and `q` once the bench's script is done.

#![allow(dead_code)]

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};
use kdrift::app::fleet::{Fleet, Member};
use kdrift::app::{App, Message};
use kdrift::cli::CommonArgs;
use kdrift::cluster::client::Connection;
use kdrift::runtime::drive::Frontend;
use kdrift::runtime::event_loop::Event;
use kdrift::runtime::fleet::FleetSession;
use kdrift::ui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc::UnboundedSender;

/// What a bench records after each frame: its stats, the app, the time since `start`.
pub type OnFrame<S> = fn(&mut S, &App, Duration);

struct Probe<S> {
    start: Instant,
    stats: Arc<Mutex<S>>,
    on_frame: OnFrame<S>,
}

impl<S> Frontend<TestBackend> for Probe<S> {
    fn suspend(&mut self, _terminal: &mut Terminal<TestBackend>) -> std::io::Result<()> {
        Ok(())
    }

    fn after_frame(&mut self, _fleet: &Fleet, members: &[Member<'_>]) {
        let since = self.start.elapsed();
        if let Some(member) = members.first() {
            (self.on_frame)(&mut self.stats.lock().unwrap(), member.app, since);
        }
    }
}

/// Runs the loop on `conn` (connected with `common` at `start`), calling `on_frame` with
/// `stats` after each frame, while `script` runs; then quits the loop as `q` does.
pub async fn drive<S, F: Future<Output = ()>>(
    common: &CommonArgs,
    conn: Connection,
    start: Instant,
    stats: Arc<Mutex<S>>,
    on_frame: OnFrame<S>,
    script: F,
) {
    drive_with(common, conn, start, stats, on_frame, |_| script).await;
}

/// [`drive`] with a script that is handed the loop's sender, to type keys.
pub async fn drive_with<S, F: Future<Output = ()>>(
    common: &CommonArgs,
    conn: Connection,
    start: Instant,
    stats: Arc<Mutex<S>>,
    on_frame: OnFrame<S>,
    script: impl FnOnce(UnboundedSender<Event>) -> F,
) {
    drive_paced(common, conn, start, stats, on_frame, None, script).await;
}

/// [`drive_with`], with frames at most every `interval` under churn when given instead of the
/// app's own [`kdrift::runtime::event_loop::FRAME_INTERVAL`].
pub async fn drive_paced<S, F: Future<Output = ()>>(
    common: &CommonArgs,
    conn: Connection,
    start: Instant,
    stats: Arc<Mutex<S>>,
    on_frame: OnFrame<S>,
    interval: Option<Duration>,
    script: impl FnOnce(UnboundedSender<Event>) -> F,
) {
    let mut session = FleetSession::one(common, conn);
    if let Some(interval) = interval {
        session.set_frame_interval(interval);
    }
    let tx = session.sender();
    let script = script(tx.clone());
    let mut probe = Probe {
        start,
        stats,
        on_frame,
    };
    let mut term = Terminal::new(TestBackend::new(200, 50)).unwrap();
    let theme = Theme::default_theme();
    let driver = session.drive(&mut term, &theme, &mut probe);
    let script = async {
        script.await;
        tx.send(Event::App(Message::Key(KeyEvent::from(KeyCode::Char('q')))))
            .ok();
    };
    let (result, ()) = tokio::join!(driver, script);
    result.unwrap();
}

/// A kubeconfig for the API server at `url` (no credentials: the demo cluster needs none).
pub fn kubeconfig_for(url: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: b\n  cluster:\n    server: {url}\ncontexts:\n- name: b\n  context:\n    cluster: b\ncurrent-context: b\nusers: []\n"
    )
}
