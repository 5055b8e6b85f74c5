//! `kubectl drift`: kdrift as a kubectl plugin (kubectl runs `kubectl-drift` found on PATH, with
//! the words after `drift`). The same command line: its flags are kubectl's where they meet
//! (`--kubeconfig`, `--context`, `-n`, `-A`).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::ExitCode;

fn main() -> ExitCode {
    kdrift::dispatch::main("kubectl drift")
}
