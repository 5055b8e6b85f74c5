//! The real Kubernetes API server a bench runs against: the one `KDRIFT_REALK8S_KUBECONFIG`
//! names, else realk8s started from `../shared/realk8s` beside the repository (its binaries
//! from `REALK8S_BIN`, else unpacked once under `target/tmp`), stopped when the bench ends —
//! by [`Server`]'s drop, or by a watchdog if the bench is killed.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "../../tests/realk8s_unpack/mod.rs"]
mod realk8s_unpack;
use realk8s_unpack::unpacked;

/// A real API server.
pub struct Server {
    /// An admin kubeconfig.
    pub kubeconfig: PathBuf,
    /// Where it came from, for the bench's first line.
    pub origin: String,
    /// The run folder of a realk8s this process started (stopped on drop).
    run: Option<PathBuf>,
    script_dir: PathBuf,
    bin: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(run) = &self.run {
            let _ = Command::new(self.script_dir.join("stop.sh"))
                .env("REALK8S_RUN", run)
                .env("REALK8S_BIN", &self.bin)
                .stdout(Stdio::null())
                .status();
            let _ = std::fs::remove_dir_all(run);
        }
    }
}

/// The server, or why there is none.
pub fn find() -> Result<Server, String> {
    if let Some(named) = std::env::var_os("KDRIFT_REALK8S_KUBECONFIG").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(&named);
        if !path.is_file() {
            return Err(format!(
                "KDRIFT_REALK8S_KUBECONFIG={}: no such file",
                path.display()
            ));
        }
        return Ok(Server {
            origin: format!("KDRIFT_REALK8S_KUBECONFIG={}", path.display()),
            kubeconfig: path,
            run: None,
            script_dir: PathBuf::new(),
            bin: PathBuf::new(),
        });
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/realk8s");
    if !dir.join("start.sh").is_file() {
        return Err(format!(
            "no real Kubernetes server: KDRIFT_REALK8S_KUBECONFIG is unset and {} does not exist \
             (a fresh clone has no ../shared; see docs/real-server.md)",
            dir.join("start.sh").display()
        ));
    }
    let dir = dir.canonicalize().map_err(|e| e.to_string())?;
    let bin = match std::env::var_os("REALK8S_BIN") {
        Some(bin) => PathBuf::from(bin),
        None => unpacked(&dir)?,
    };
    let run = tempfile::Builder::new()
        .prefix("kdrift-bench-realk8s-")
        .tempdir()
        .map_err(|e| e.to_string())?
        .keep();
    // Stops it if this process is killed before the drop runs.
    std::os::unix::process::CommandExt::process_group(
        Command::new("sh")
            .arg("-c")
            .arg(r#"while kill -0 "$1" 2>/dev/null; do sleep 1; done; "$2/stop.sh" >/dev/null 2>&1; rm -rf "$3""#)
            .arg("realk8s-watchdog")
            .arg(std::process::id().to_string())
            .arg(&dir)
            .arg(&run)
            .env("REALK8S_RUN", &run)
            .env("REALK8S_BIN", &bin)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
        0,
    )
    .spawn()
    .map_err(|e| format!("the watchdog: {e}"))?;
    let out = Command::new(dir.join("start.sh"))
        .env("REALK8S_RUN", &run)
        .env("REALK8S_BIN", &bin)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", dir.join("start.sh").display()))?;
    let mut server = Server {
        kubeconfig: PathBuf::new(),
        origin: format!("realk8s started from {}", dir.display()),
        run: Some(run),
        script_dir: dir.clone(),
        bin,
    };
    if !out.status.success() {
        return Err(format!(
            "{} failed: {}",
            dir.join("start.sh").display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let kubeconfig = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .map(PathBuf::from)
        .ok_or("start.sh printed no kubeconfig")?;
    server.kubeconfig = kubeconfig;
    Ok(server)
}
