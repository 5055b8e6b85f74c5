//! Finding and reading the manifest files under a root: `*.yaml` / `*.yml`, recursively.
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::Problem;

/// Files larger than this are skipped: no one keeps a manifest that big, and reading one would
/// stall the load.
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

/// Reads a manifest file as text, or says why it is skipped (too big, binary, unreadable).
pub fn read_manifest(path: &Path) -> Result<String, String> {
    let unreadable = |e: std::io::Error| format!("cannot read: {e}");
    let mut file = fs::File::open(path).map_err(unreadable)?;
    let size = file.metadata().map_err(unreadable)?.len();
    if size > MAX_FILE_BYTES {
        return Err(format!("{size} bytes, over the 10 MB limit"));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.read_to_end(&mut bytes).map_err(unreadable)?;
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
