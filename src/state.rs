//! kdrift's own state on disk, in the XDG state directory (`$XDG_STATE_HOME/kdrift`, else
//! `~/.local/state/kdrift`), readable by the user alone: the log (see [`crate::logging`]) and the
//! key of the Secret digests, made on first use.
use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The file that holds the key of the Secret digests, in [`dir`].
pub const DIGEST_KEY_FILE: &str = "secret-digest.key";

/// Bytes of the digest key (HMAC-SHA256's block is 64; 32 random bytes are its full strength).
pub const KEY_LEN: usize = 32;

/// `$XDG_STATE_HOME/kdrift`, else `~/.local/state/kdrift`; `None` without either variable.
pub fn dir() -> Option<PathBuf> {
    std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".local").join("state")))
        .map(|d| d.join("kdrift"))
}

/// Where the digest key is (or will be made).
pub fn digest_key_path() -> Option<PathBuf> {
    dir().map(|d| d.join(DIGEST_KEY_FILE))
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("no state directory: set XDG_STATE_HOME or HOME")]
    NoStateDir,
    #[error("cannot use the Secret digest key \"{}\": {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the Secret digest key \"{}\" holds {len} bytes, not {KEY_LEN}: move it away and kdrift makes a new one",
        path.display()
    )]
    BadLength { path: PathBuf, len: usize },
}

/// `N` bytes from the kernel's random source.
pub fn random_bytes<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// The installation's digest key ([`digest_key_path`]): read, or made on first use (32 random
/// bytes, mode 0600 in a 0700 folder). Two kdrifts starting at once agree: the file is created
/// whole under a temporary name and linked into place only if none is there yet.
pub fn digest_key() -> Result<[u8; KEY_LEN], KeyError> {
    let path = digest_key_path().ok_or(KeyError::NoStateDir)?;
    read_or_make_key(&path)
}

/// [`digest_key`] at `path`.
pub fn read_or_make_key(path: &Path) -> Result<[u8; KEY_LEN], KeyError> {
    let io = |source| KeyError::Io {
        path: path.to_path_buf(),
        source,
    };
    match read_key(path) {
        Err(KeyError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
        read => return read,
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io)?;
    let key: [u8; KEY_LEN] = random_bytes().map_err(io)?;
    let temporary = dir.join(format!(".{DIGEST_KEY_FILE}.{}", std::process::id()));
    let made = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temporary)?;
        file.write_all(&key)?;
        file.sync_all()?;
        // A link fails if another kdrift made the key first: then that one is the key.
        std::fs::hard_link(&temporary, path)
    })();
    let _ = std::fs::remove_file(&temporary);
    match made {
        Ok(()) => Ok(key),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_key(path),
        Err(e) => Err(io(e)),
    }
}

fn read_key(path: &Path) -> Result<[u8; KEY_LEN], KeyError> {
    let io = |source| KeyError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    // A key others can read lets them test guesses against the digests: narrowed at once.
    if file.metadata().map_err(io)?.permissions().mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(io)?;
    }
    let mut bytes = Vec::with_capacity(KEY_LEN);
    file.read_to_end(&mut bytes).map_err(io)?;
    <[u8; KEY_LEN]>::try_from(bytes.as_slice()).map_err(|_| KeyError::BadLength {
        path: path.to_path_buf(),
        len: bytes.len(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_made_once_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir
            .path()
            .join("state")
            .join("kdrift")
            .join(DIGEST_KEY_FILE);
        let made = read_or_make_key(&path).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        assert_eq!(read_or_make_key(&path).unwrap(), made);
        assert_ne!(made, [0u8; KEY_LEN]);
        // Another installation has another key.
        let other = dir.path().join("other").join(DIGEST_KEY_FILE);
        assert_ne!(read_or_make_key(&other).unwrap(), made);
        // A key opened to others is narrowed; a cut one is refused, naming the file.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(read_or_make_key(&path).unwrap(), made);
        assert_eq!(mode(&path), 0o600);
        std::fs::write(&path, b"short").unwrap();
        let error = read_or_make_key(&path).unwrap_err().to_string();
        assert!(
            error.contains("holds 5 bytes") && error.contains(DIGEST_KEY_FILE),
            "{error}"
        );
    }
}
