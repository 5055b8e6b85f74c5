//! The headless subcommands `check`, `diff` and `accept`: each connects, reads what it needs
//! once, prints, and returns kubectl diff's exit convention (0 in sync, 1 drift, 2 error).
//!
//! - [`target`]: `TYPE/NAME` as kubectl reads it.
//! - [`context`]: connect, load manifests, list or get live objects.
//! - [`check`], [`diff`], [`accept`], [`revert`]: the subcommands.
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
pub mod check;
pub mod context;
pub mod diff;
pub mod logs;
pub mod revert;
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

/// Runs a subcommand's future on a small runtime; a runtime that cannot start is exit 2.
fn block_on<F: Future<Output = u8>>(work: F) -> ExitCode {
    match crate::cluster::tokio_runtime() {
        Ok(rt) => ExitCode::from(rt.block_on(work)),
        Err(e) => {
            eprintln!("kdrift: cannot start the async runtime: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Colour on stdout: only on a terminal, and never when `NO_COLOR` is set (no-color.org).
pub fn colour_stdout() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
