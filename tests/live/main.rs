//! The live view as an operator meets it, against the demo cluster: the real loop
//! (`FleetSession::drive`) on a TestBackend for each view, the user config file, and the binary in a
//! pseudo-terminal (`pty_e2e`, `pty_revert`).
//!
//! One test binary per theme (each links the whole crate); each file a module.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../common/mod.rs"]
mod common;
#[path = "../kubectl_bin/mod.rs"]
pub mod kubectl_bin;
#[path = "../live_screen/mod.rs"]
mod live_screen;
#[path = "../pty/mod.rs"]
mod pty;

mod accept;
mod changes;
mod drift;
mod fleet;
mod kinds;
mod logs;
mod namespace;
mod picker;
mod pty_e2e;
mod pty_revert;
mod recovery;
mod revert;
mod user_config;
