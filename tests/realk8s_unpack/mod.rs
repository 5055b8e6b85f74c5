//! The realk8s binaries unpacked once from the tarball beside `start.sh`: shared by the
//! real-server tier (tests/real/server.rs) and the benches that start realk8s
//! (benches/common/realk8s.rs).
use std::path::{Path, PathBuf};
use std::process::Command;

/// The realk8s binaries, unpacked once from the tarball beside `start.sh` into `target/tmp`.
pub fn unpacked(dir: &Path) -> Result<PathBuf, String> {
    let tarball = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("realk8s-") && n.ends_with(".tar.xz"))
        })
        .ok_or_else(|| format!("no realk8s-*.tar.xz in {}", dir.display()))?;
    let stem = tarball
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("realk8s")
        .trim_end_matches(".tar.xz")
        .to_owned();
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join(&stem);
    let bin = target.join("bin");
    if bin.join("kube-apiserver").is_file() {
        return Ok(bin);
    }
    // Unpacked beside, then renamed: another test process may be unpacking the same tarball.
    std::fs::create_dir_all(env!("CARGO_TARGET_TMPDIR")).map_err(|e| e.to_string())?;
    let partial = tempfile::Builder::new()
        .prefix(&format!("{stem}-unpacking-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .map_err(|e| e.to_string())?;
    let out = Command::new("tar")
        .arg("-xJf")
        .arg(&tarball)
        .arg("-C")
        .arg(partial.path())
        .output()
        .map_err(|e| format!("tar: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "tar -xJf {}: {}",
            tarball.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    if std::fs::rename(partial.path(), &target).is_err() && !bin.join("kube-apiserver").is_file() {
        return Err(format!(
            "could not move the unpacked binaries to {}",
            target.display()
        ));
    }
    Ok(bin)
}
