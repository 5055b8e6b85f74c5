//! The headless subcommands `check`, `diff` and `accept`: each connects, reads what it needs
//! once, prints, and returns kubectl diff's exit convention (0 in sync, 1 drift, 2 error).
//!
//! - [`target`]: `TYPE/NAME` as kubectl reads it.
//! - [`context`]: connect, load manifests, list or get live objects.
//! - [`check`], [`diff`], [`accept`], [`revert`]: the subcommands.
//! - [`blame`]: a live object with each field's managers and git state.
//! - [`changes`]: the timeline of what changed, from the API alone.
//! - [`compare`]: one object across several contexts.
//! - [`fleet`]: `check` over several contexts, a section each.
//! - [`logs`]: a workload's newest unready pod's log (exit 0, or 2 with the reason).
/// `println!` with control characters from the cluster escaped ([`crate::text::printable`]).
macro_rules! say {
    ($($arg:tt)*) => {
        println!("{}", $crate::text::printable(&format!($($arg)*)))
    };
}

/// `eprintln!` with control characters from the cluster escaped ([`crate::text::printable`]).
macro_rules! tell {
    ($($arg:tt)*) => {
        eprintln!("{}", $crate::text::printable(&format!($($arg)*)))
    };
}

pub mod accept;
pub mod blame;
pub mod changes;
pub mod check;
pub mod compare;
pub mod context;
pub mod diff;
pub mod fleet;
pub mod logs;
pub mod revert;
pub mod rollback;
pub mod target;

use std::future::Future;
use std::io::IsTerminal;
use std::process::ExitCode;

/// Exit code: nothing drifted.
pub const EXIT_IN_SYNC: u8 = 0;
/// Exit code: drift found.
pub const EXIT_DRIFT: u8 = 1;
/// Exit code: an error (possibly with drift reported as well).
pub const EXIT_ERROR: u8 = 2;

/// Runs `work` (blocking: an accept's write and commit) on a thread of its own. A ctrl-c or a
/// SIGTERM meanwhile does not kill kdrift and leave git committing in its own session: git is
/// stopped with SIGTERM (then killed after [`crate::process::STOP_GRACE`]; see [`crate::process::interrupt`]),
/// and `work` ends, seeing it was interrupted. Returns its result, and the exit code of the
/// signal (130, 143) when one came; `Err` when the thread failed.
pub(crate) async fn interruptible<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<(T, Option<u8>), String> {
    use tokio::signal::unix::{SignalKind, signal};
    async fn next(signal: &mut Option<tokio::signal::unix::Signal>) {
        match signal {
            Some(signal) => {
                signal.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    }
    // Installed before the work starts: from here a signal is ours to handle.
    let mut interrupt = signal(SignalKind::interrupt()).ok();
    let mut terminate = signal(SignalKind::terminate()).ok();
    let mut task = tokio::task::spawn_blocking(work);
    let code = tokio::select! {
        done = &mut task => return done.map(|t| (t, None)).map_err(|e| e.to_string()),
        () = next(&mut interrupt) => 130,
        () = next(&mut terminate) => 143,
    };
    tell!(
        "kdrift: interrupted: stopping git (SIGTERM, killed after {} s) and putting the files back as they were",
        crate::process::STOP_GRACE.as_secs()
    );
    let _ =
        tokio::task::spawn_blocking(|| crate::process::interrupt(crate::process::STOP_GRACE)).await;
    let done = task.await.map_err(|e| e.to_string())?;
    Ok((done, Some(code)))
}

/// [`block_on`] for a command that renders charts into temporary folders (accept's proof holds
/// live values there): a ctrl-c or SIGTERM stops the programs it runs (helm, kustomize, git)
/// instead of killing kdrift, so the command ends by its own paths and every temporary folder
/// goes as it unwinds; exit 130 or 143. (Its own handling of an interrupted commit, in
/// [`interruptible`], runs inside as before.)
fn block_on_cleaning<F: Future<Output = u8>>(work: F) -> ExitCode {
    block_on(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let mut work = std::pin::pin!(work);
        let (Ok(mut interrupt), Ok(mut terminate)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return work.await;
        };
        let code = tokio::select! {
            done = &mut work => return done,
            _ = interrupt.recv() => 130,
            _ = terminate.recv() => 143,
        };
        let _ =
            tokio::task::spawn_blocking(|| crate::process::interrupt(crate::process::STOP_GRACE))
                .await;
        // The work fails fast now that its programs are stopped; a bound all the same.
        let grace = crate::process::STOP_GRACE + std::time::Duration::from_secs(2);
        match tokio::time::timeout(grace, work).await {
            Ok(done @ (130 | 143)) => done,
            _ => code,
        }
    })
}

/// Runs a subcommand's future on a small runtime; a runtime that cannot start is exit 2.
fn block_on<F: Future<Output = u8>>(work: F) -> ExitCode {
    // One thread: a command's work is waiting on the server and reading its answers, and with
    // two workers the hand-offs between them cost more than they share (on a 2-core machine a
    // check of 1,002 objects took a quarter more time and CPU); blocking work (loading the
    // manifests, renders, git) has its own threads still.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    match rt {
        Ok(rt) => ExitCode::from(rt.block_on(work)),
        Err(e) => {
            eprintln!("kdrift: cannot start the async runtime: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// The one-object commands' start: `text` read as `TYPE/NAME`, the connection and manifests
/// opened for it, then `work`; a target that does not parse or a context that cannot open is
/// said, exit 2.
fn on_target(
    common: &crate::cli::CommonArgs,
    text: &str,
    work: impl AsyncFnOnce(&mut context::Context, &target::Target) -> u8,
) -> ExitCode {
    let target = match target::parse(text) {
        Ok(t) => t,
        Err(e) => {
            tell!("kdrift: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    block_on(async {
        match context::open_for(common, Some(&target)).await {
            Ok(mut ctx) => work(&mut ctx, &target).await,
            Err(e) => {
                tell!("kdrift: {e}");
                EXIT_ERROR
            }
        }
    })
}

/// Colour on stdout: only on a terminal, and never when `NO_COLOR` is set (no-color.org).
pub fn colour_stdout() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
