//! `kubectl_complete-drift`: what kubectl (1.26+) runs, from PATH, to complete `kubectl drift
//! …` on TAB. It gets the words after `drift` (the last one being completed) and answers in
//! cobra's format: one candidate per line, then `:<directive>`.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::ExitCode;

fn main() -> ExitCode {
    let words = std::env::args_os().skip(1).collect();
    match kdrift::complete::kubectl_plugin(words, &mut std::io::stdout()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}
