//! `kdrift demo --serve`: run the demo cluster until interrupted.
use std::process::ExitCode;

use crate::cli::DemoArgs;

pub fn run(_args: &DemoArgs) -> ExitCode {
    eprintln!("kdrift: the demo cluster is not built yet");
    ExitCode::from(2)
}
