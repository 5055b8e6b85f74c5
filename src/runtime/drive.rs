//! The terminal's side of the one loop: what a front end does around each frame ([`Frontend`]),
//! and [`drive`], which steps the live view ([`FleetSession`], of one context or several) from
//! event to frame.
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::time::{Instant, sleep_until};

use super::event_loop::{FRAME_INTERVAL, Flow};
use super::fleet::{FleetEvent, FleetSession};
use crate::ui::theme::Theme;

/// How many times the loop has woken since the process started (a message, a signal, an age due
/// to change), and how many frames it has drawn: what `benches/real_idle.rs` counts per minute
/// while nothing changes.
static WAKEUPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static FRAMES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Wake-ups of the loop and frames drawn so far, by every loop of this process.
pub fn wakeups_and_frames() -> (u64, u64) {
    use std::sync::atomic::Ordering::Relaxed;
    (WAKEUPS.load(Relaxed), FRAMES.load(Relaxed))
}

/// What differs between the real terminal and a test or benchmark backend.
pub trait Frontend<B: Backend> {
    /// ctrl-z: give the terminal back and stop until resumed.
    fn suspend(&mut self, terminal: &mut Terminal<B>) -> std::io::Result<()>;
    /// Called after each frame is drawn, with the fleet's table and the contexts watched (one
    /// for a view of one context): tests read the screen here, benchmarks time frames.
    fn after_frame(
        &mut self,
        _fleet: &crate::app::fleet::Fleet,
        _members: &[crate::app::fleet::Member<'_>],
    ) {
    }
}

impl FleetSession {
    /// Run until the user quits, SIGTERM, or the input closes.
    pub async fn drive<B: Backend>(
        &mut self,
        term: &mut Terminal<B>,
        theme: &Theme,
        frontend: &mut dyn Frontend<B>,
    ) -> std::io::Result<()> {
        drive(self, term, theme, frontend).await
    }
}

/// Whether the loop goes on after an event.
enum Step {
    Go,
    End,
}

/// Handle one event: the loop ends on a quit.
fn step<B: Backend>(
    view: &mut FleetSession,
    ev: FleetEvent,
    term: &mut Terminal<B>,
    frontend: &mut dyn Frontend<B>,
) -> std::io::Result<Step> {
    match view.handle(ev) {
        Flow::Continue => {}
        Flow::Quit => return Ok(Step::End),
        Flow::Suspend => {
            frontend.suspend(term)?;
            view.redraw();
        }
    }
    Ok(Step::Go)
}

/// The one loop (docs/ARCHITECTURE.md, "The loop"), over one context or several: await an
/// event (or SIGTERM, or an age due to change), handle what is pending for at most a frame
/// interval, and draw at most once per [`FRAME_INTERVAL`], only when something changed (what
/// arrives while a frame is not due yet is handled meanwhile). A burst longer than an interval
/// (ten clusters' first lists, each compared with its manifests) is drawn as it is handled, not
/// once at its end.
async fn drive<B: Backend>(
    view: &mut FleetSession,
    term: &mut Terminal<B>,
    theme: &Theme,
    frontend: &mut dyn Frontend<B>,
) -> std::io::Result<()> {
    if let Ok(size) = term.size() {
        view.sized(size.width, size.height);
    }
    let mut sigterm =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let mut last_frame: Option<Instant> = None;
    let mut lists_seen = 0;
    'outer: loop {
        let wake = view
            .next_age_change()
            .map(|s| Instant::now() + Duration::from_secs(s.max(1) as u64));
        let first = tokio::select! {
            _ = async { match sigterm.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending::<()>().await } } => {
                tracing::info!("SIGTERM: quitting");
                match view.sigterm() {
                    Flow::Quit => break 'outer,
                    _ => None,
                }
            }
            ev = view.events().recv() => ev,
            _ = async { match wake { Some(w) => sleep_until(w).await, None => std::future::pending::<()>().await } } => {
                view.redraw();
                None
            }
        };
        WAKEUPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut next = first;
        // What is pending, for at most a frame interval of work.
        let began = Instant::now();
        while let Some(ev) = next.take().or_else(|| view.events().try_recv().ok()) {
            if let Step::End = step(view, ev, term, frontend)? {
                break 'outer;
            }
            if began.elapsed() >= FRAME_INTERVAL {
                break;
            }
        }
        if !view.dirty() {
            continue;
        }
        // Pace frames: until the frame is due, handle what arrives, so that the frame
        // shows it then without a backlog to handle first.
        if let Some(due) = last_frame.map(|t| t + view.frame_interval()) {
            while due > Instant::now() {
                let ev = tokio::select! {
                    _ = sleep_until(due) => break,
                    ev = view.events().recv() => ev,
                };
                match ev {
                    Some(ev) => {
                        if let Step::End = step(view, ev, term, frontend)? {
                            break 'outer;
                        }
                    }
                    None => sleep_until(due).await,
                }
            }
        }
        let lists = view.lists_done();
        if lists != lists_seen {
            lists_seen = lists;
            super::event_loop::release_freed_memory();
        }
        if let Flow::Quit = view.frame(term, theme)? {
            break 'outer;
        }
        frontend.after_frame(view.fleet(), &view.members());
        FRAMES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        last_frame = Some(Instant::now());
    }
    Ok(())
}
