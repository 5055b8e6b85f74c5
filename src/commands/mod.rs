//! The headless subcommands `check`, `diff` and `accept`: each connects, reads what it needs
//! once, prints, and returns kubectl diff's exit convention (0 in sync, 1 drift, 2 error).
//!
//! - [`target`]: `TYPE/NAME` as kubectl reads it.
//! - [`context`]: connect, load manifests, list or get live objects.
pub mod context;
pub mod target;

/// Exit code: nothing drifted.
pub const EXIT_IN_SYNC: u8 = 0;
/// Exit code: drift found.
pub const EXIT_DRIFT: u8 = 1;
/// Exit code: an error (possibly with drift reported as well).
pub const EXIT_ERROR: u8 = 2;
