//! `kubectl drift`: kdrift as a kubectl plugin (kubectl runs `kubectl-drift` found on PATH, with
//! the words after `drift`). The same command line: its flags are kubectl's where they meet
//! (`--kubeconfig`, `--context`, `-n`, `-A`). A small launcher of the `kdrift` binary, which
//! answers as `kubectl drift` when run under this name (see `launch`).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod launch;

fn main() -> std::process::ExitCode {
    launch::run("kubectl-drift")
}
