//! The `kdrift` binary: parse the command line and hand over to the library.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::ExitCode;

fn main() -> ExitCode {
    // A TAB in a shell that loaded `kdrift completions SHELL` calls back with COMPLETE set.
    kdrift::complete::complete_from_env("kdrift");
    kdrift::dispatch::main("kdrift")
}
