//! The verified atomic write of an edited manifest: refused when the file changed on disk since
//! it was read, or when the path leaves the manifests root; a temp file in the same folder,
//! fsync, rename over the old file with its mode kept.
use std::fs;
use std::hash::Hasher;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A hash of a file's bytes as read, to notice a change on disk before overwriting it. SipHash
/// with fixed keys (std's `DefaultHasher::new`): not for adversaries, but 64 bits leave no
/// practical chance that an edit by hand goes unnoticed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentHash(pub u64);

impl ContentHash {
    pub fn of(bytes: &[u8]) -> ContentHash {
        let mut hasher = std::hash::DefaultHasher::new();
        hasher.write(bytes);
        ContentHash(hasher.finish())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{file}: changed on disk since kdrift read it; nothing was written, look again")]
    ChangedOnDisk { file: PathBuf },
    #[error(
        "{file}: outside the manifests root {root} (or a symlink out of it); nothing was written"
    )]
    OutsideRoot { file: PathBuf, root: PathBuf },
    #[error("{file}: {action}: {source}")]
    Io {
        file: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
}

fn io<'a>(file: &'a Path, action: &'static str) -> impl FnOnce(std::io::Error) -> WriteError + 'a {
    move |source| WriteError::Io {
        file: file.to_path_buf(),
        action,
        source,
    }
}

/// Writes `new_contents` to `file` (absolute or relative to `root`) if its bytes still hash to
/// `expected_hash`. Symlinks are followed only while they stay inside `root`; the real file is
/// replaced atomically, so a reader sees the old or the new contents, never a mix.
pub fn write_verified(
    root: &Path,
    file: &Path,
    expected_hash: ContentHash,
    new_contents: &str,
) -> Result<(), WriteError> {
    let (joined, real, real_root) = verify_unchanged(root, file, expected_hash)?;
    let permissions = fs::metadata(&real)
        .map_err(io(&joined, "cannot read its mode"))?
        .permissions();
    let folder = real.parent().unwrap_or(&real_root);
    let mut temp = tempfile::Builder::new()
        .prefix(".kdrift-")
        .suffix(".tmp")
        .tempfile_in(folder)
        .map_err(io(&joined, "cannot create a temporary file next to it"))?;
    temp.write_all(new_contents.as_bytes())
        .map_err(io(&joined, "cannot write the temporary file"))?;
    fs::set_permissions(temp.path(), permissions).map_err(io(&joined, "cannot keep its mode"))?;
    temp.as_file()
        .sync_all()
        .map_err(io(&joined, "cannot flush the temporary file to disk"))?;
    temp.persist(&real)
        .map_err(|error| io(&joined, "cannot rename the temporary file over it")(error.error))?;
    // The rename itself is durable only once the folder is flushed; where a folder cannot be
    // opened for that (some file systems), the write has still happened.
    if let Ok(dir) = fs::File::open(folder) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Refuses a new file `file` (absolute or relative to `root`) that exists already or would lie
/// outside `root`; returns where it goes.
pub fn verify_new(root: &Path, file: &Path) -> Result<PathBuf, WriteError> {
    let joined = if file.is_absolute() {
        file.to_path_buf()
    } else {
        root.join(file)
    };
    if fs::symlink_metadata(&joined).is_ok() {
        return Err(WriteError::ChangedOnDisk { file: joined });
    }
    let real_root =
        fs::canonicalize(root).map_err(io(root, "cannot resolve the manifests root"))?;
    let parent = joined.parent().unwrap_or(root);
    let real_parent = fs::canonicalize(parent).map_err(io(&joined, "cannot resolve its folder"))?;
    if !real_parent.starts_with(&real_root) {
        return Err(WriteError::OutsideRoot {
            file: joined,
            root: root.to_path_buf(),
        });
    }
    Ok(joined)
}

/// Creates `file` with `contents`, refused when it exists or leaves `root`; written to a
/// temporary file first and linked into place, so no reader sees half of it.
pub fn write_new(root: &Path, file: &Path, contents: &str) -> Result<(), WriteError> {
    let joined = verify_new(root, file)?;
    let folder = joined.parent().unwrap_or(root);
    let mut temp = tempfile::Builder::new()
        .prefix(".kdrift-")
        .suffix(".tmp")
        .tempfile_in(folder)
        .map_err(io(&joined, "cannot create a temporary file next to it"))?;
    temp.write_all(contents.as_bytes())
        .map_err(io(&joined, "cannot write the temporary file"))?;
    temp.as_file()
        .sync_all()
        .map_err(io(&joined, "cannot flush the temporary file to disk"))?;
    temp.persist_noclobber(&joined).map_err(|error| {
        if error.error.kind() == std::io::ErrorKind::AlreadyExists {
            WriteError::ChangedOnDisk {
                file: joined.clone(),
            }
        } else {
            io(&joined, "cannot rename the temporary file into place")(error.error)
        }
    })?;
    Ok(())
}

/// Checks that `file` (absolute or relative to `root`) is inside `root` and its bytes still hash
/// to `expected_hash`; returns it as given, its real path and the real root.
pub fn verify_unchanged(
    root: &Path,
    file: &Path,
    expected_hash: ContentHash,
) -> Result<(PathBuf, PathBuf, PathBuf), WriteError> {
    let joined = if file.is_absolute() {
        file.to_path_buf()
    } else {
        root.join(file)
    };
    let real_root =
        fs::canonicalize(root).map_err(io(root, "cannot resolve the manifests root"))?;
    let real = fs::canonicalize(&joined).map_err(io(&joined, "cannot resolve the file"))?;
    if !real.starts_with(&real_root) {
        return Err(WriteError::OutsideRoot {
            file: joined,
            root: root.to_path_buf(),
        });
    }
    let current = fs::read(&real).map_err(io(&joined, "cannot read it again"))?;
    if ContentHash::of(&current) != expected_hash {
        return Err(WriteError::ChangedOnDisk { file: joined });
    }
    Ok((joined, real, real_root))
}
