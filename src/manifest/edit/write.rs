//! The verified atomic write of an edited manifest: refused when the file changed on disk since
//! it was read, when the path leaves the manifests root, or when the file is not kdrift's to
//! replace (read-only, another user's); a temp file in the same folder, fsync, rename over the
//! old file with its mode (and owner) kept. Every failure leaves the old file as it was.
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
    /// No write permission for anyone: its owner made it read-only. Refused even as root, where
    /// the mode would not stop the write (an editor warns the same way).
    #[error(
        "{file} is read-only (mode {mode:04o}): kdrift does not overwrite a file made read-only; if the change is meant to be, make it writable (chmod u+w {file}) and accept again; nothing was written"
    )]
    ReadOnly { file: PathBuf, mode: u32 },
    /// Another user's file: replacing it would leave a file of kdrift's user in its place.
    #[error(
        "{file} belongs to another user (uid {owner}; you are uid {me}): replacing it would make the file yours; accept as its owner, or take it over (chown), then accept again; nothing was written"
    )]
    OtherOwner { file: PathBuf, owner: u32, me: u32 },
    /// EROFS: the checkout is mounted read-only.
    #[error(
        "{file} is on a read-only file system: nothing was written; accept in a writable checkout (a clone of the repository), or remount it read-write"
    )]
    ReadOnlyFileSystem { file: PathBuf },
    /// The folder does not let kdrift's user create the temporary file the write goes through.
    #[error(
        "{file}: cannot write in its folder {folder} (permission denied): nothing was written; make the folder writable for you (or accept as its owner)"
    )]
    FolderNotWritable { file: PathBuf, folder: PathBuf },
    #[error("{file}: {action}: {source}; nothing was written")]
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

/// Creating the temporary file in `folder` failed: a read-only mount and a folder that is not
/// the user's are said with what to do, anything else as it is.
fn cannot_create(file: &Path, folder: &Path, source: std::io::Error) -> WriteError {
    match source.kind() {
        std::io::ErrorKind::ReadOnlyFilesystem => WriteError::ReadOnlyFileSystem {
            file: file.to_path_buf(),
        },
        std::io::ErrorKind::PermissionDenied => WriteError::FolderNotWritable {
            file: file.to_path_buf(),
            folder: folder.to_path_buf(),
        },
        _ => io(file, "cannot create a temporary file next to it")(source),
    }
}

/// Why a file of `mode` owned by `owner` is not kdrift's to replace, when run as user `me`:
/// no write bit at all (read-only by intent, refused even as root), or another user's file
/// while kdrift is not root (root keeps the owner, see [`write_verified`]). `None`: it may be
/// replaced.
pub fn replace_refusal(file: &Path, mode: u32, owner: u32, me: u32) -> Option<WriteError> {
    if mode & 0o222 == 0 {
        return Some(WriteError::ReadOnly {
            file: file.to_path_buf(),
            mode: mode & 0o7777,
        });
    }
    if owner != me && me != 0 {
        return Some(WriteError::OtherOwner {
            file: file.to_path_buf(),
            owner,
            me,
        });
    }
    None
}

/// The effective user id of this process.
fn my_uid() -> u32 {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

/// A temporary file in `folder`, where the new contents of `file` are written first.
fn temp_in(file: &Path, folder: &Path) -> Result<tempfile::NamedTempFile, WriteError> {
    tempfile::Builder::new()
        .prefix(".kdrift-")
        .suffix(".tmp")
        .tempfile_in(folder)
        .map_err(|source| cannot_create(file, folder, source))
}

/// Refuses, without writing anything, what [`write_verified`] (or [`write_new`], when
/// `creates`) would fail on for lack of permission: a file not kdrift's to replace
/// ([`replace_refusal`]), a folder where no file can be created (read-only mount, another
/// user's folder), found by creating and removing a temporary file there. Called for every file
/// of an accept before the first is written, so that none is written when one would fail.
pub fn check_writable(root: &Path, file: &Path, creates: bool) -> Result<(), WriteError> {
    use std::os::unix::fs::MetadataExt;
    let joined = if file.is_absolute() {
        file.to_path_buf()
    } else {
        root.join(file)
    };
    let real = if creates {
        joined.clone()
    } else {
        let real = fs::canonicalize(&joined).map_err(io(&joined, "cannot resolve the file"))?;
        let meta = fs::metadata(&real).map_err(io(&joined, "cannot read its mode"))?;
        if let Some(refusal) = replace_refusal(&joined, meta.mode(), meta.uid(), my_uid()) {
            return Err(refusal);
        }
        real
    };
    let folder = real.parent().unwrap_or(root);
    drop(temp_in(&joined, folder)?);
    Ok(())
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
    use std::os::unix::fs::MetadataExt;
    let (joined, real, real_root) = verify_unchanged(root, file, expected_hash)?;
    let meta = fs::metadata(&real).map_err(io(&joined, "cannot read its mode"))?;
    if let Some(refusal) = replace_refusal(&joined, meta.mode(), meta.uid(), my_uid()) {
        return Err(refusal);
    }
    let folder = real.parent().unwrap_or(&real_root);
    let mut temp = temp_in(&joined, folder)?;
    temp.write_all(new_contents.as_bytes())
        .map_err(io(&joined, "cannot write the temporary file"))?;
    keep_owner(temp.as_file(), &meta).map_err(io(&joined, "cannot keep its owner"))?;
    fs::set_permissions(temp.path(), meta.permissions())
        .map_err(io(&joined, "cannot keep its mode"))?;
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

/// Gives the new file the old one's owner and group: as root (the only user
/// [`replace_refusal`] lets replace another's file) both must be kept, or the file would become
/// root's; otherwise the group is kept where the user may set it (they belong to it).
fn keep_owner(temp: &fs::File, old: &fs::Metadata) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let new = temp.metadata()?;
    if new.uid() != old.uid() {
        return std::os::unix::fs::fchown(temp, Some(old.uid()), Some(old.gid()));
    }
    if new.gid() != old.gid() {
        let _ = std::os::unix::fs::fchown(temp, None, Some(old.gid()));
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
    let mut temp = temp_in(&joined, folder)?;
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_read_only_file_system_is_said_with_what_to_do() {
        // The failure a read-only mount gives (EROFS), injected where the write meets it: the
        // temporary file that every write goes through cannot be created.
        let erofs = std::io::Error::from_raw_os_error(libc::EROFS);
        let error = cannot_create(Path::new("shop/cart.yaml"), Path::new("shop"), erofs);
        assert!(
            matches!(error, WriteError::ReadOnlyFileSystem { .. }),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "shop/cart.yaml is on a read-only file system: nothing was written; accept in a writable checkout (a clone of the repository), or remount it read-write"
        );
        let denied = std::io::Error::from_raw_os_error(libc::EACCES);
        let error = cannot_create(Path::new("shop/cart.yaml"), Path::new("shop"), denied);
        assert!(
            error
                .to_string()
                .contains("cannot write in its folder shop (permission denied)"),
            "{error}"
        );
    }

    #[test]
    fn only_a_writable_file_of_ones_own_is_replaced() {
        let file = Path::new("web.yaml");
        assert!(replace_refusal(file, 0o100644, 1000, 1000).is_none());
        // Read-only by intent: refused for everyone, root included.
        for me in [1000, 0] {
            let refused = replace_refusal(file, 0o100444, 1000, me).unwrap();
            assert!(
                refused
                    .to_string()
                    .starts_with("web.yaml is read-only (mode 0444)"),
                "{refused}"
            );
        }
        // Another user's: refused, unless root (who keeps the owner when writing).
        assert!(matches!(
            replace_refusal(file, 0o100664, 1001, 1000),
            Some(WriteError::OtherOwner { .. })
        ));
        assert!(replace_refusal(file, 0o100644, 1001, 0).is_none());
    }
}
