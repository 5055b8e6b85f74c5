//! The live view on the real terminal: its input read into the loop, the terminal as the loop's
//! [`Frontend`], and [`run`] (one context) and [`run_fleet`] (several), which drive the live
//! view ([`FleetSession`]) until the user quits and then settle what the quit left under way.
use std::process::ExitCode;

use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use futures::StreamExt;
use tokio::sync::mpsc::UnboundedSender;

use super::drive::Frontend;
use super::event_loop::Event;
use super::fleet::FleetSession;
use super::terminal;
use crate::app::{Flash, Message};
use crate::cli::CommonArgs;
use crate::cluster::client::Connection;
use crate::ui::theme::{Theme, no_color_from_env};

/// Terminal keys and resizes, sent into the loop until the input ends.
async fn read_input(tx: UnboundedSender<Event>) {
    let mut events = EventStream::new();
    while let Some(ev) = events.next().await {
        let msg = match ev {
            Ok(TermEvent::Key(k)) if k.kind != KeyEventKind::Release => Message::Key(k),
            Ok(TermEvent::Resize(width, height)) => Message::Resize { width, height },
            Ok(_) => continue,
            Err(e) => {
                tracing::error!(error = %e, "terminal input failed");
                break;
            }
        };
        if tx.send(Event::App(msg)).is_err() {
            return;
        }
    }
    let _ = tx.send(Event::InputClosed);
}

/// The real terminal.
struct Tty;

impl Frontend<ratatui::backend::CrosstermBackend<std::io::Stdout>> for Tty {
    fn suspend(&mut self, terminal: &mut ratatui::DefaultTerminal) -> std::io::Result<()> {
        terminal::suspend(terminal)
    }
}

/// The live view over several contexts (each connecting on its own) until the user quits.
/// `notice` is shown in the status bar.
pub async fn run_fleet(
    common: &CommonArgs,
    contexts: &[String],
    all: Vec<String>,
    notice: Option<Flash>,
) -> ExitCode {
    run_view(common, FleetSession::start(common, contexts, all), notice).await
}

/// The live view on a connection (one context) until the user quits. `notice` is shown in the
/// status bar.
pub async fn run(common: &CommonArgs, conn: Connection, notice: Option<Flash>) -> ExitCode {
    run_view(common, FleetSession::one(common, conn), notice).await
}

/// Drives `session` on the terminal until the user quits, then settles what the quit left under
/// way.
async fn run_view(
    common: &CommonArgs,
    mut session: FleetSession,
    notice: Option<Flash>,
) -> ExitCode {
    let (theme, theme_error) = Theme::load(common.theme.as_deref(), no_color_from_env());
    if let Some(e) = theme_error {
        tracing::warn!(error = %e, "theme not loaded; using the default");
        session.notice(Flash {
            text: format!("{e} — using the default theme"),
            error: true,
        });
    }
    if let Some(problem) = &common.config_problem {
        tracing::warn!(%problem, "user config not used");
        session.notice(Flash {
            text: problem.clone(),
            error: true,
        });
    }
    if let Some(n) = notice {
        session.notice(n);
    }
    let mut term = match enter() {
        Ok(t) => t,
        Err(code) => return code,
    };
    let input = tokio::spawn(read_input(session.sender()));
    let result = session.drive(&mut term, &theme, &mut Tty).await;
    input.abort();
    terminal::leave();
    settle(&mut session, result).await
}

/// After the loop: the writes a quit left under way are stopped and waited for, what they did
/// is said, and the exit code tells how the view ended.
async fn settle(session: &mut FleetSession, result: std::io::Result<()>) -> ExitCode {
    let unfinished = session.unfinished();
    if unfinished > 0 {
        // Quit again while an accept ran: its git (in a session of its own, out of reach of
        // the terminal) is stopped with SIGTERM, so that it removes its index lock, and the
        // accept puts its file back; a revert's requests cannot be called back.
        let grace = crate::process::STOP_GRACE;
        eprintln!(
            "kdrift: quitting with {unfinished} accept(s) or revert(s) under way: stopping their git commands (SIGTERM, killed after {} s) and waiting for them to end",
            grace.as_secs()
        );
        let stopped = tokio::task::spawn_blocking(move || crate::process::interrupt(grace))
            .await
            .unwrap_or_default();
        if stopped.killed > 0 {
            tracing::warn!(killed = stopped.killed, "git killed after SIGTERM");
        }
        session.finish_writes(grace * 3).await;
    }
    let (outcomes, sigterm) = (session.outcomes(), session.sigterm);
    let left = session.unfinished();
    // The accepts and reverts the quit waited for: said where the user is looking now.
    for outcome in &outcomes {
        eprintln!("kdrift: {}", crate::text::printable(outcome));
    }
    if left > 0 {
        eprintln!(
            "kdrift: {left} accept(s) or revert(s) did not end: a file may be written but not committed, a revert half done; see git status and kdrift check"
        );
    }
    match result {
        // As a process killed by SIGTERM would (128 + 15), for whoever sent it.
        Ok(()) if sigterm => ExitCode::from(143),
        // Work was left unfinished by the quit: not a clean exit.
        Ok(()) if unfinished > 0 => ExitCode::from(super::EXIT_ERROR),
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "terminal failed");
            eprintln!("kdrift: terminal failed: {e}");
            ExitCode::from(super::EXIT_ERROR)
        }
    }
}

/// The terminal in the live view's mode, or (having put it back) the exit code after saying why
/// it cannot be used.
fn enter() -> Result<ratatui::DefaultTerminal, ExitCode> {
    terminal::enter().map_err(|e| {
        terminal::leave();
        eprintln!("kdrift: cannot use the terminal: {e}");
        ExitCode::from(super::EXIT_ERROR)
    })
}
