//! Running the user's programs (git, kustomize): no stdin, no terminal (a session of their own),
//! output read on threads, and a time limit after which they and their children are killed.
use std::process::{Command, Stdio};
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
}

/// The process groups of the programs running now, so that quitting can stop them.
static RUNNING: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

fn running() -> std::sync::MutexGuard<'static, Vec<i32>> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Stops every program still running (and what it started): kdrift is quitting. Returns how
/// many there were.
pub fn stop_running() -> usize {
    let groups = std::mem::take(&mut *running());
    for pid in &groups {
        // SAFETY: kill(2) on a process group kdrift started; no memory is involved.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    groups.len()
}

/// Runs `command` with no stdin, in a session of its own, for at most `limit`. The session's
/// process group is stopped as one (a hook or plugin it starts goes with it); and the program has
/// no controlling terminal, so one that would prompt on `/dev/tty` (a signing program's
/// passphrase, a hook's question) fails at once instead of being stopped by the terminal
/// (SIGTTIN: a background process group may not read it) until the time limit — or, in the
/// live view, drawing over the screen.
pub fn run_bounded(mut command: Command, limit: Duration) -> Result<Finished, RunError> {
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
    let mut child = command.spawn()?;
    // Read the pipes on threads: a chatty child must not block on a full pipe while we wait.
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = read(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = read(child.stderr.take().map(|p| Box::new(p) as _));
    let started = Instant::now();
    let pid = i32::try_from(child.id()).ok();
    if let Some(pid) = pid {
        running().push(pid);
    }
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
    Ok(Finished {
        ok: status.success(),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}
