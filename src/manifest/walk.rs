//! Finding and reading the manifest files under a root: `*.yaml` / `*.yml`, recursively.
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::Problem;

/// Files larger than this (10 MiB) are skipped with a problem naming the file and its size: no
/// one keeps a manifest that big, and parsing one takes memory in proportion (see
/// docs/limits.md). A 9 MB `kubectl get -o yaml` dump still loads.
pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// True for the names kdrift reads as manifests: what `kubectl apply -f DIR` reads.
pub fn is_manifest_name(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    ) && !path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.'))
}

/// True when a change to `path` (from a file watcher) concerns the manifests under `root`: a
/// manifest name, not inside `.git` or a hidden folder, not a symlink leading out of the root.
pub fn is_watched(root: &Path, path: &Path) -> bool {
    let Ok(relative) = path.strip_prefix(root) else {
        return false;
    };
    let hidden = relative
        .components()
        .any(|c| c.as_os_str().to_str().is_some_and(|n| n.starts_with('.')));
    if hidden || !(is_manifest_name(path) || super::kustomize::is_kustomization_name(path)) {
        return false;
    }
    match (fs::symlink_metadata(path), fs::canonicalize(root)) {
        (Ok(meta), Ok(canonical_root)) if meta.file_type().is_symlink() => {
            fs::canonicalize(path).is_ok_and(|target| target.starts_with(canonical_root))
        }
        _ => true,
    }
}

/// Every manifest file below `root` in path order, skipping `.git` and hidden folders. Symlinks
/// are followed only while they stay inside the root; the others are skipped with a problem.
pub fn manifest_files(root: &Path, problems: &mut Vec<Problem>) -> Vec<PathBuf> {
    let canonical_root = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut files = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    // Folders already listed, by real path: a symlink back up the tree must not loop.
    let mut seen = std::collections::HashSet::new();
    while let Some(dir) = pending.pop() {
        if !seen.insert(fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone())) {
            continue;
        }
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) => {
                problems.push(Problem::Skipped {
                    file: dir,
                    reason: format!("cannot list the folder: {error}"),
                });
                continue;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let hidden = entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with('.'));
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let (is_dir, is_file) = if file_type.is_symlink() {
                match fs::canonicalize(&path) {
                    Ok(target) if target.starts_with(&canonical_root) => {
                        (target.is_dir(), target.is_file())
                    }
                    Ok(target) => {
                        if target.is_dir() || is_manifest_name(&path) {
                            problems.push(Problem::Skipped {
                                file: path,
                                reason: format!(
                                    "symlink leaves the manifests folder (to {})",
                                    target.display()
                                ),
                            });
                        }
                        continue;
                    }
                    Err(error) => {
                        if is_manifest_name(&path) {
                            problems.push(Problem::Skipped {
                                file: path,
                                reason: format!("broken symlink: {error}"),
                            });
                        }
                        continue;
                    }
                }
            } else {
                (file_type.is_dir(), file_type.is_file())
            };
            if is_dir && !hidden {
                pending.push(path);
            } else if is_file
                && (is_manifest_name(&path) || super::kustomize::is_kustomization_name(&path))
            {
                files.push(path);
            }
        }
    }
    files.sort();
    // A symlink to a file the walk also reaches directly is the same file, not a duplicate of
    // its objects: keep one path per real file, the file's own rather than a link's (an accept
    // edits and commits the file itself).
    let is_link = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    let mut chosen: std::collections::HashMap<PathBuf, PathBuf> = std::collections::HashMap::new();
    for file in &files {
        let real = fs::canonicalize(file).unwrap_or_else(|_| file.clone());
        match chosen.get(&real) {
            Some(kept) if !is_link(kept) || is_link(file) => {}
            _ => {
                chosen.insert(real, file.clone());
            }
        }
    }
    let kept: std::collections::HashSet<&PathBuf> = chosen.values().collect();
    let mut files: Vec<PathBuf> = files.iter().filter(|f| kept.contains(f)).cloned().collect();
    files.dedup();
    files
}

/// Reads a manifest file as text, or says why it is skipped (too big, binary, not a regular
/// file, unreadable). At most [`MAX_FILE_BYTES`] are read, whatever the file's size said.
pub fn read_manifest(path: &Path) -> Result<String, String> {
    let unreadable = |e: std::io::Error| format!("cannot read: {e}");
    // Before opening: opening a named pipe waits for a writer, and a device never ends.
    if !fs::metadata(path).map_err(unreadable)?.is_file() {
        return Err("not a regular file (a pipe, socket or device)".to_owned());
    }
    let file = fs::File::open(path).map_err(unreadable)?;
    let too_big = |size: u64| {
        format!(
            "{size} bytes ({:.1} MiB), over the {} MiB limit on a manifest file",
            size as f64 / (1024.0 * 1024.0),
            MAX_FILE_BYTES / (1024 * 1024)
        )
    };
    let size = file.metadata().map_err(unreadable)?.len();
    if size > MAX_FILE_BYTES {
        return Err(too_big(size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // A file that grew since its size was read is still read no further than the limit.
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    manifest_text(bytes)
}

/// A manifest file's bytes as text, or why they are skipped (binary: NUL bytes or not UTF-8).
pub fn manifest_text(bytes: Vec<u8>) -> Result<String, String> {
    if bytes.contains(&0) {
        return Err("binary file (contains NUL bytes)".to_owned());
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "binary file (not UTF-8 at byte {})",
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_named_pipe_with_a_manifest_name_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("web.yaml");
        let name = std::ffi::CString::new(pipe.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        // On a thread: opening the pipe for reading would block until a writer came.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(read_manifest(&pipe)));
        let answer = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("read_manifest waited on a named pipe");
        assert_eq!(
            answer,
            Err("not a regular file (a pipe, socket or device)".to_owned())
        );
    }

    #[test]
    fn a_file_over_the_limit_is_refused_with_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("huge.yaml");
        std::fs::write(&file, vec![b'#'; MAX_FILE_BYTES as usize + 1]).unwrap();
        assert_eq!(
            read_manifest(&file),
            Err("10485761 bytes (10.0 MiB), over the 10 MiB limit on a manifest file".to_owned())
        );
        std::fs::write(&file, vec![b'#'; MAX_FILE_BYTES as usize]).unwrap();
        assert_eq!(
            read_manifest(&file).map(|t| t.len()),
            Ok(MAX_FILE_BYTES as usize)
        );
    }
}
