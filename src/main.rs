//! The `kdrift` binary: parse the command line and hand over to the library.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::ExitCode;

fn main() -> ExitCode {
    kdrift::cli::main("kdrift")
}
