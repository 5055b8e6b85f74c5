//! The terminal's side of the one loop: what a front end does around each frame ([`Frontend`]),
//! the one-context [`Session`] (its loop, its size and frames), and [`drive`], which steps a
//! session or the fleet's from event to frame (shared by both).
use std::time::Duration;

use jiff::Timestamp;
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::time::{Instant, sleep_until};

use super::event_loop::{Event, FRAME_INTERVAL, Flow, Loop};
use crate::app::{App, Flash, Message, update};
use crate::cli::CommonArgs;
use crate::cluster::client::Connection;
use crate::ui::{self, theme::Theme};

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
    /// Called after each frame is drawn (benchmarks time frames here).
    fn after_frame(&mut self, _app: &App) {}
    /// Called after each frame of the fleet's view (several contexts) is drawn.
    fn after_fleet_frame(
        &mut self,
        _fleet: &crate::app::fleet::Fleet,
        _members: &[crate::app::fleet::Member<'_>],
    ) {
    }
}

/// An app on a connection, its watchers and its message channel.
pub struct Session {
    pub(super) state: Loop,
    pub(super) rx: UnboundedReceiver<Event>,
    /// The loop ended on SIGTERM (the exit code says so).
    pub sigterm: bool,
    /// The shortest time between two frames under churn ([`Driven::frame_interval`]).
    frame_interval: Duration,
}

impl Session {
    /// Build the app for `conn` and start its watchers.
    pub fn start(common: &CommonArgs, conn: Connection) -> Session {
        let (tx, rx) = unbounded_channel::<Event>();
        Session {
            state: Loop::start(common, conn, tx),
            rx,
            sigterm: false,
            frame_interval: FRAME_INTERVAL,
        }
    }

    /// Sets the shortest time between two frames under churn ([`FRAME_INTERVAL`] unless set):
    /// the benches' `--frame-interval` measures other choices against it.
    pub fn set_frame_interval(&mut self, interval: Duration) {
        self.frame_interval = interval;
    }

    /// What the accepts and reverts that ended while quitting did.
    pub fn outcomes(&self) -> &[String] {
        &self.state.outcomes
    }

    /// Accepts and reverts still under way (the user quit twice without waiting).
    pub fn unfinished(&self) -> usize {
        self.state.writes
    }

    /// After a quit that left writes under way, once their git was stopped
    /// ([`crate::process::interrupt`]): waits up to `limit` for them to end (an accept then puts
    /// its file back), keeping what each did for [`Session::outcomes`].
    pub async fn finish_writes(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        self.state.quitting = true;
        while self.state.writes > 0 {
            let ev = match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(ev)) => ev,
                _ => break,
            };
            if matches!(
                ev,
                Event::App(
                    Message::Accepted { .. }
                        | Message::Reverted { .. }
                        | Message::RolledBack { .. }
                )
            ) {
                let _ = self.state.handle(ev);
            }
        }
    }

    pub fn app(&self) -> &App {
        &self.state.app
    }

    /// The context `:ctx +NAME` asked to watch beside this one: the loop ended for the
    /// runtime to carry it into a view over both ([`super::fleet::FleetSession::grown`]).
    pub fn grow(&self) -> Option<&str> {
        self.state.grow.as_deref()
    }

    /// A sender into the loop (for terminal input).
    pub fn sender(&self) -> UnboundedSender<Event> {
        self.state.tx.clone()
    }

    /// Show `notice` in the status bar.
    pub fn notice(&mut self, notice: Flash) {
        update(&mut self.state.app, Message::Notice(notice));
    }

    /// Show a problem found at start-up in the status bar.
    pub fn problem(&mut self, text: String) {
        update(
            &mut self.state.app,
            Message::Notice(Flash { text, error: true }),
        );
    }

    /// Run until the user quits, SIGTERM, or the input closes (or `:ctx +NAME` hands this
    /// loop over to a view of several contexts: [`Session::grow`]).
    pub async fn drive<B: Backend>(
        &mut self,
        term: &mut Terminal<B>,
        theme: &Theme,
        frontend: &mut dyn Frontend<B>,
    ) -> std::io::Result<()> {
        drive(self, term, theme, frontend).await
    }
}

impl<B: Backend> Driven<B> for Session {
    type Ev = Event;

    fn events(&mut self) -> &mut UnboundedReceiver<Event> {
        &mut self.rx
    }

    fn sized(&mut self, width: u16, height: u16) {
        (self.state.app.width, self.state.app.height) = (width, height);
    }

    fn next_age_change(&self) -> Option<i64> {
        ui::next_age_change(&self.state.app)
    }

    fn redraw(&mut self) {
        self.state.app.dirty = true;
    }

    fn dirty(&self) -> bool {
        self.state.app.dirty
    }

    fn handle(&mut self, ev: Event) -> Flow {
        self.state.handle(ev)
    }

    fn sigterm(&mut self) -> Flow {
        self.sigterm = true;
        self.state.quit()
    }

    fn handed_over(&self) -> bool {
        // The fleet's view takes this loop over: the events not handled yet stay in the
        // channel, which it reads next.
        self.state.grow.is_some()
    }

    fn lists_done(&self) -> u64 {
        self.state.lists_done()
    }

    fn frame_interval(&self) -> Duration {
        self.frame_interval
    }

    fn frame(
        &mut self,
        term: &mut Terminal<B>,
        theme: &Theme,
        frontend: &mut dyn Frontend<B>,
    ) -> std::io::Result<Flow> {
        let state = &mut self.state;
        state.app.now = Timestamp::now();
        let commands = state.app.prepare_frame();
        if matches!(state.run(commands), Flow::Quit) {
            return Ok(Flow::Quit);
        }
        term.draw(|f| ui::render(&state.app, theme, f))
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        state.app.dirty = false;
        frontend.after_frame(&state.app);
        Ok(Flow::Continue)
    }
}

/// What the one loop runs: the view of one context ([`Session`]) or of several
/// ([`super::fleet::FleetSession`]). Each says how it handles an event and draws a frame;
/// [`drive`] decides when.
pub(super) trait Driven<B: Backend> {
    type Ev;
    /// The channel every event of the view arrives on.
    fn events(&mut self) -> &mut UnboundedReceiver<Self::Ev>;
    /// The terminal's size at start.
    fn sized(&mut self, width: u16, height: u16);
    /// Seconds until an age on screen changes (the loop then wakes to draw it).
    fn next_age_change(&self) -> Option<i64>;
    /// Something must be drawn again (an age changed, the terminal came back).
    fn redraw(&mut self);
    /// Something changed on screen since the last frame.
    fn dirty(&self) -> bool;
    fn handle(&mut self, ev: Self::Ev) -> Flow;
    /// SIGTERM arrived.
    fn sigterm(&mut self) -> Flow;
    /// The loop ends without quitting: another loop takes the view over.
    fn handed_over(&self) -> bool {
        false
    }
    /// Lists that ended so far: after each, the pages it freed are given back.
    fn lists_done(&self) -> u64;
    /// The shortest time between two frames while events keep coming (a frame after a quiet
    /// spell longer than it is drawn at once).
    fn frame_interval(&self) -> Duration;
    /// Prepare and draw a frame.
    fn frame(
        &mut self,
        term: &mut Terminal<B>,
        theme: &Theme,
        frontend: &mut dyn Frontend<B>,
    ) -> std::io::Result<Flow>;
}

/// Whether the loop goes on after an event.
enum Step {
    Go,
    End,
}

/// Handle one event: the loop ends on a quit, or when the view is handed over.
fn step<B: Backend, D: Driven<B>>(
    view: &mut D,
    ev: D::Ev,
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
    Ok(if view.handed_over() {
        Step::End
    } else {
        Step::Go
    })
}

/// The one loop (docs/ARCHITECTURE.md, "The loop"), over one context or several: await an
/// event (or SIGTERM, or an age due to change), handle what is pending for at most a frame
/// interval, and draw at most once per [`FRAME_INTERVAL`], only when something changed (what
/// arrives while a frame is not due yet is handled meanwhile). A burst longer than an interval
/// (ten clusters' first lists, each compared with its manifests) is drawn as it is handled, not
/// once at its end.
pub(super) async fn drive<B: Backend, D: Driven<B>>(
    view: &mut D,
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
        if let Flow::Quit = view.frame(term, theme, frontend)? {
            break 'outer;
        }
        FRAMES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        last_frame = Some(Instant::now());
    }
    Ok(())
}
