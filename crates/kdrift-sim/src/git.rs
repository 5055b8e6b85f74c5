//! The `git` command, as the demo cluster runs it on the repositories its GitOps controllers
//! read and its scenario commits into: never a prompt, no optional locks (a read does not take
//! the index lock a user's git may want), stdin closed.
use std::path::Path;
use std::process::{Command, Stdio};

/// `git -C repo args…` with `env` set: its output when it succeeds, else `git ARGS` and what
/// it said.
pub(crate) fn run(repo: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .envs(env.iter().copied())
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("`git {}` failed: {e}", args.join(" ")))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    Err(format!(
        "`git {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    ))
}
