//! Running the user's programs (git, kustomize): no stdin, no terminal (a session of their own),
//! output read on threads, and a time limit after which they and their children are killed.
//!
//! Because each runs in a session of its own, a ctrl-c on kdrift's terminal does not reach it:
//! kdrift stops them itself when it is interrupted ([`interrupt`]), with SIGTERM first, so that
//! git removes its lock files (`.git/index.lock`) and leaves the index as it was.
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What a finished program printed.
#[derive(Debug, Clone)]
pub struct Finished {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Spawn(#[from] std::io::Error),
    #[error("did not finish within {} s", .0.as_secs())]
    TimedOut(Duration),
    /// Its output passed the cap: it was stopped, and nothing it printed is used.
    #[error("printed more than {} MiB, the most kdrift reads of it: it was stopped", .0 / (1024 * 1024))]
    TooMuchOutput(u64),
    /// kdrift was interrupted: no new program is started.
    #[error("not started: kdrift was interrupted")]
    Interrupted,
}

/// The process groups of the programs running now, so that quitting can stop them. Held while
/// a program is started, so that none starts unseen by [`interrupt`].
static RUNNING: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// How long the programs kdrift runs (git and its hooks) get to end after SIGTERM, when kdrift
/// is interrupted, before they are killed.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// Set by [`interrupt`]: from then on only [`run_to_clean_up`] starts programs.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

fn running() -> std::sync::MutexGuard<'static, Vec<i32>> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether kdrift was interrupted ([`interrupt`]): work that failed since did so because of it.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// What [`interrupt`] did to the programs that were running.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stopped {
    /// Asked to stop (SIGTERM to their process groups).
    pub asked: usize,
    /// Still running after the grace time, and killed (SIGKILL): these may leave lock files.
    pub killed: usize,
}

/// kdrift is interrupted (ctrl-c, SIGTERM, or quitting with an accept under way): no program
/// starts any more but to clean up, and every one running (with what it started: a hook, a
/// signing program) is sent SIGTERM, given `grace` to end — git removes its lock files then —
/// and killed after it. Blocking.
pub fn interrupt(grace: Duration) -> Stopped {
    let groups = {
        let running = running();
        INTERRUPTED.store(true, Ordering::SeqCst);
        running.clone()
    };
    let signal = |pid: i32, signal: i32| {
        // SAFETY: kill(2) on a process group kdrift started; no memory is involved.
        unsafe { libc::kill(-pid, signal) };
    };
    for pid in &groups {
        signal(*pid, libc::SIGTERM);
    }
    // Each ends in its runner's wait loop, which forgets it: wait until all have.
    let started = Instant::now();
    let left = || -> Vec<i32> {
        let running = running();
        groups
            .iter()
            .copied()
            .filter(|pid| running.contains(pid))
            .collect()
    };
    let mut remaining = left();
    while !remaining.is_empty() && started.elapsed() < grace {
        std::thread::sleep(Duration::from_millis(10));
        remaining = left();
    }
    for pid in &remaining {
        signal(*pid, libc::SIGKILL);
    }
    Stopped {
        asked: groups.len(),
        killed: remaining.len(),
    }
}

/// Runs `command` with no stdin, in a session of its own, for at most `limit`. The session's
/// process group is stopped as one (a hook or plugin it starts goes with it); and the program has
/// no controlling terminal, so one that would prompt on `/dev/tty` (a signing program's
/// passphrase, a hook's question) fails at once instead of being stopped by the terminal
/// (SIGTTIN: a background process group may not read it) until the time limit — or, in the
/// live view, drawing over the screen.
pub fn run_bounded(command: Command, limit: Duration) -> Result<Finished, RunError> {
    run(command, limit, false, u64::MAX)
}

/// [`run_bounded`], stopped as soon as it prints more than `max_stdout` bytes (a chart that
/// renders a 100 MB ConfigMap): what kdrift holds of a program's output is capped as the
/// manifest files it reads are.
pub fn run_capped(
    command: Command,
    limit: Duration,
    max_stdout: u64,
) -> Result<Finished, RunError> {
    run(command, limit, false, max_stdout)
}

/// [`run_bounded`], even once kdrift is interrupted: for what puts things back as they were (a
/// temporary worktree removed, a file taken out of the index again).
pub fn run_to_clean_up(command: Command, limit: Duration) -> Result<Finished, RunError> {
    run(command, limit, true, u64::MAX)
}

fn run(
    mut command: Command,
    limit: Duration,
    clean_up: bool,
    max_stdout: u64,
) -> Result<Finished, RunError> {
    use std::os::unix::process::CommandExt;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setsid(2) is async-signal-safe and touches no memory of the parent; it cannot fail
    // here (a freshly forked child is never a process group leader).
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    // Started under the lock, so that `interrupt` either sees it or refuses it.
    let mut running_now = running();
    if interrupted() && !clean_up {
        return Err(RunError::Interrupted);
    }
    let mut child = command.spawn()?;
    let pid = i32::try_from(child.id()).ok();
    if let Some(pid) = pid {
        running_now.push(pid);
    }
    drop(running_now);
    // Read the pipes on threads: a chatty child must not block on a full pipe while we wait.
    // Set by the stdout reader when the output passes `max_stdout`: the program is stopped.
    let overflow = std::sync::Arc::new(AtomicBool::new(false));
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>, cap: u64| {
        let overflow = overflow.clone();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut text = Vec::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(cap.saturating_add(1)).read_to_end(&mut text);
            }
            if text.len() as u64 > cap {
                overflow.store(true, Ordering::SeqCst);
                text.clear();
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = read(child.stdout.take().map(|p| Box::new(p) as _), max_stdout);
    let stderr = read(child.stderr.take().map(|p| Box::new(p) as _), u64::MAX);
    let started = Instant::now();
    let forget = |pid: Option<i32>| {
        if let Some(pid) = pid {
            running().retain(|p| *p != pid);
        }
    };
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(error) => {
                forget(pid);
                return Err(error.into());
            }
        }
        if overflow.load(Ordering::SeqCst) {
            if let Some(pid) = pid {
                // SAFETY: kill(2) on the process group the child leads; no memory is involved.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
            }
            let _ = child.wait();
            forget(pid);
            return Err(RunError::TooMuchOutput(max_stdout));
        }
        if started.elapsed() >= limit {
            if let Some(pid) = pid {
                // SAFETY: kill(2) on the process group the child leads; no memory is involved.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
            }
            let _ = child.wait();
            forget(pid);
            return Err(RunError::TimedOut(limit));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    forget(pid);
    let stdout = stdout.join().unwrap_or_default();
    // It may have ended before the loop saw the reader's flag.
    if overflow.load(Ordering::SeqCst) {
        return Err(RunError::TooMuchOutput(max_stdout));
    }
    Ok(Finished {
        ok: status.success(),
        stdout,
        stderr: stderr.join().unwrap_or_default(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    #[test]
    fn output_past_the_cap_stops_the_program_and_is_not_used() {
        // `yes` never ends by itself: the cap, not the time limit, stops it.
        let started = Instant::now();
        let run = run_capped(sh("yes"), Duration::from_secs(30), 1024 * 1024);
        assert!(matches!(run, Err(RunError::TooMuchOutput(_))), "{run:?}");
        assert!(started.elapsed() < Duration::from_secs(20));
        // A program that ends having printed past the cap is refused too.
        let run = run_capped(sh("head -c 2000 /dev/zero"), Duration::from_secs(30), 1000);
        assert!(matches!(run, Err(RunError::TooMuchOutput(1000))), "{run:?}");
        let run = run_capped(sh("printf hello"), Duration::from_secs(30), 5).unwrap();
        assert_eq!(run.stdout, "hello");
    }
}
