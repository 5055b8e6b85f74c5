//! `kubectl_complete-drift`: what kubectl (1.26+) runs, from PATH, to complete `kubectl drift
//! …` on TAB. It gets the words after `drift` (the last one being completed) and answers in
//! cobra's format: one candidate per line, then `:<directive>`. A small launcher of the `kdrift`
//! binary, which answers so when run under this name (see `launch`).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod launch;

fn main() -> std::process::ExitCode {
    launch::run("kubectl_complete-drift")
}
