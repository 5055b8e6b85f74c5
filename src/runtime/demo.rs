//! `kdrift demo`: the simulated cluster in-process, the demo manifests in a fresh git repository,
//! then the live view on it.
use std::process::ExitCode;

use crate::cli::{CommonArgs, DemoArgs};

pub fn run(_common: &CommonArgs, _demo: &DemoArgs) -> ExitCode {
    eprintln!("kdrift: the demo cluster is not available in this build yet");
    ExitCode::from(super::EXIT_ERROR)
}
