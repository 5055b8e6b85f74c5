//! Records the git commit kdrift is built from, for `kdrift --version` ("unknown" outside a
//! git checkout, as in a packaged crate).
use std::process::Command;

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=KDRIFT_COMMIT={commit}");
    // A new commit or checkout changes HEAD (or the branch it points at). Git names the files:
    // in a linked worktree `.git` is a file, HEAD is the worktree's and the refs are shared.
    // Only this checkout's branch is watched, not all of `refs/heads`: a commit on another
    // worktree's branch would rebuild this one for nothing.
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    for name in ["HEAD", "packed-refs"].into_iter().chain(branch.as_deref()) {
        let path =
            git(&["rev-parse", "--git-path", name]).unwrap_or_else(|| format!(".git/{name}"));
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}

/// What `git ARGS` prints, trimmed, if it runs and prints something.
fn git(args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
}
