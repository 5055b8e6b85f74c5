//! The one loop: terminal, message channel, IO tasks.
use std::process::ExitCode;

use crate::cli::{CommonArgs, DemoArgs};

pub fn run_tui(_common: &CommonArgs) -> ExitCode {
    eprintln!("kdrift: the live view is not built yet");
    ExitCode::from(2)
}

pub fn run_demo(_common: &CommonArgs, _demo: &DemoArgs) -> ExitCode {
    eprintln!("kdrift: the live view is not built yet");
    ExitCode::from(2)
}
