//! What `kubectl-drift` and `kubectl_complete-drift` share: they are small launchers of the
//! `kdrift` binary (one program, linked once), which they run with their own name as `argv[0]`
//! so that it answers as the plugin (`kdrift::dispatch::invoked_as`). They use nothing of the
//! kdrift library, so each links in a second or two and weighs a few hundred kilobytes.
//!
//! `kdrift` is looked for beside the launcher first (`cargo install`, a release archive and
//! krew's plugin folder put them together; a symlink onto PATH is followed to the real file),
//! then on PATH.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Runs `kdrift` as `name`, with the arguments this process got; on Unix the launcher's process
/// becomes kdrift (`exec`), so signals, the terminal and the exit code are kdrift's own.
pub fn run(name: &str) -> ExitCode {
    let Some(kdrift) = find_kdrift() else {
        eprintln!(
            "{name}: the kdrift binary is neither beside this one ({}) nor on PATH; \
             install both (`cargo install kdrift` installs all three binaries)",
            beside().map_or_else(|| "unknown folder".to_string(), |p| p.display().to_string())
        );
        return ExitCode::from(2);
    };
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let mut command = Command::new(&kdrift);
    command.args(&args);
    exec(command, name, &kdrift)
}

#[cfg(unix)]
fn exec(mut command: Command, name: &str, kdrift: &Path) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let error = command.arg0(name).exec();
    eprintln!("{name}: could not run {}: {error}", kdrift.display());
    ExitCode::from(2)
}

#[cfg(not(unix))]
fn exec(mut command: Command, name: &str, kdrift: &Path) -> ExitCode {
    // No exec and no argv[0] of one's choosing: kdrift runs as a child (and calls itself
    // kdrift in its help); its exit code is passed on.
    match command.status() {
        Ok(status) => ExitCode::from(status.code().map_or(1, |c| u8::try_from(c).unwrap_or(1))),
        Err(error) => {
            eprintln!("{name}: could not run {}: {error}", kdrift.display());
            ExitCode::from(2)
        }
    }
}

/// The folder of this launcher's real file (symlinks followed).
fn beside() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    exe.parent().map(Path::to_path_buf)
}

fn find_kdrift() -> Option<PathBuf> {
    let file = format!("kdrift{}", std::env::consts::EXE_SUFFIX);
    if let Some(dir) = beside() {
        let candidate = dir.join(&file);
        if candidate.is_file() {
            return Some(candidate);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(&file))
        .find(|candidate| candidate.is_file())
}
