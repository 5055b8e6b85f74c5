//! The `kdrift` binary: parse the command line and hand over to the library. It is also what
//! the `kubectl-drift` and `kubectl_complete-drift` launchers run, under their names.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::ExitCode;

use kdrift::dispatch::Invoked;

fn main() -> ExitCode {
    match kdrift::dispatch::invoked_as(std::env::args_os().next()) {
        Invoked::KubectlPlugin => kdrift::dispatch::main("kubectl drift"),
        Invoked::KubectlCompletion => {
            let words = std::env::args_os().skip(1).collect();
            match kdrift::complete::kubectl_plugin(words, &mut std::io::stdout()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::FAILURE,
            }
        }
        Invoked::Kdrift => {
            // A TAB in a shell that loaded `kdrift completions SHELL` calls back with COMPLETE set.
            kdrift::complete::complete_from_env("kdrift");
            kdrift::dispatch::main("kdrift")
        }
    }
}
