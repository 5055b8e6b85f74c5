//! Logging to a file (tracing-appender, non-blocking), never to the screen: the terminal belongs
//! to the UI. The file lives in the XDG state directory and is created mode 0600 (it may hold
//! object names and server URLs).
use std::fs::OpenOptions;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// Environment variable for the log level (a tracing filter such as `debug` or `kdrift=trace`).
pub const LOG_ENV: &str = "KDRIFT_LOG";

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("no state directory: set XDG_STATE_HOME or HOME")]
    NoStateDir,
    #[error("cannot create log directory \"{}\": {source}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot open log file \"{}\": {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("bad log level \"{level}\": {message}")]
    Level { level: String, message: String },
    #[error("a logger is already installed")]
    AlreadySet,
}

/// `$XDG_STATE_HOME/kdrift/kdrift.log`, else `~/.local/state/kdrift/kdrift.log`.
pub fn log_path() -> Option<PathBuf> {
    crate::state::dir().map(|d| d.join("kdrift.log"))
}

/// The text under `--help`, naming the log file.
pub fn after_help() -> String {
    let path = log_path().map_or_else(
        || "$XDG_STATE_HOME/kdrift/kdrift.log".to_string(),
        |p| p.display().to_string(),
    );
    format!("Logs: {path} (level: --log-level or {LOG_ENV}; never written to the screen)")
}

/// Lines the log's writer thread queues (see [`init`]).
const LOG_QUEUE_LINES: usize = 16_384;

/// Keeps the log writer alive; drop it last so the log is flushed.
pub struct LogGuard {
    _guard: WorkerGuard,
    pub path: PathBuf,
}

/// Start logging to the file. `level` (from `--log-level`) wins over `KDRIFT_LOG`; default `info`.
pub fn init(level: Option<&str>) -> Result<LogGuard, LogError> {
    let path = log_path().ok_or(LogError::NoStateDir)?;
    let filter = filter(level)?;
    let file = open_private(&path)?;
    // The writer thread's queue is allocated and touched whole at start: its default of 128,000
    // lines is 4 MB of resident memory for a log that writes a few lines a minute at `info`.
    // When the writer falls behind by more than 16,384 lines, lines are dropped rather than the
    // UI waiting on the disk.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .finish(file);
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .try_init()
        .map_err(|_| LogError::AlreadySet)?;
    Ok(LogGuard {
        _guard: guard,
        path,
    })
}

fn filter(level: Option<&str>) -> Result<EnvFilter, LogError> {
    let text = level
        .map(str::to_string)
        .or_else(|| std::env::var(LOG_ENV).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "info".to_string());
    EnvFilter::try_new(&text).map_err(|e| LogError::Level {
        level: text.clone(),
        message: e.to_string(),
    })
}

/// Open for append, creating the file (and its folder) readable by the user alone.
pub fn open_private(path: &std::path::Path) -> Result<std::fs::File, LogError> {
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| LogError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
    }
    let open_err = |source| LogError::Open {
        path: path.to_path_buf(),
        source,
    };
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(open_err)?;
    // A file made by an older version or by hand may be wider open.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(open_err)?;
    Ok(file)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn log_file_is_created_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state").join("kdrift").join("kdrift.log");
        open_private(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // An existing wider file is narrowed.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        open_private(&path).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn bad_level_is_reported_with_its_value() {
        let err = filter(Some("kdrift=loud")).unwrap_err().to_string();
        assert!(err.contains("\"kdrift=loud\""), "{err}");
        assert!(filter(Some("debug")).is_ok());
    }
}
