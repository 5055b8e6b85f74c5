//! The repository after kdrift was interrupted during an accept: was the file committed, did
//! git leave its index lock, and taking a new file out of the index again. These run git even
//! once kdrift is interrupted (see [`crate::process::interrupt`]).
use std::path::{Path, PathBuf};

use super::{GitError, folder_of, run_cleanup};

/// After an interrupt: whether `file` is as HEAD has it (committed, or never changed), and its
/// repository's index lock if git left one (a git killed before it could remove it).
pub fn after_interrupt(repo_dir: &Path, file: &Path) -> Result<AfterInterrupt, GitError> {
    let folder = folder_of(repo_dir, file);
    let top = run_cleanup(&folder, &["rev-parse", "--show-toplevel"])?;
    if !top.ok {
        return Ok(AfterInterrupt::default());
    }
    let top = PathBuf::from(top.stdout.trim());
    let absolute = if file.is_absolute() {
        file.to_path_buf()
    } else {
        repo_dir.join(file)
    };
    let lock = run_cleanup(&top, &["rev-parse", "--git-path", "index.lock"])?;
    let lock = lock
        .ok
        .then(|| top.join(lock.stdout.trim()))
        .filter(|path| path.exists());
    if lock.is_some() {
        // With the lock there, git answers nothing about the index.
        return Ok(AfterInterrupt { clean: None, lock });
    }
    let path = absolute.to_string_lossy().into_owned();
    let status = run_cleanup(&top, &["status", "--porcelain", "--", &path])?;
    Ok(AfterInterrupt {
        clean: status.ok.then(|| status.stdout.trim().is_empty()),
        lock,
    })
}

/// What [`after_interrupt`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AfterInterrupt {
    /// The file is as HEAD has it; `None` when git could not say.
    pub clean: Option<bool>,
    /// The index lock git left behind.
    pub lock: Option<PathBuf>,
}

/// Takes `file` out of the index again (a new file `git add`ed before an interrupted commit),
/// even once kdrift is interrupted.
pub fn unstage(repo_dir: &Path, file: &Path) -> Result<(), GitError> {
    let folder = folder_of(repo_dir, file);
    let absolute = if file.is_absolute() {
        file.to_path_buf()
    } else {
        repo_dir.join(file)
    };
    let path = absolute.to_string_lossy().into_owned();
    let out = run_cleanup(
        &folder,
        &["rm", "--cached", "--quiet", "--ignore-unmatch", "--", &path],
    )?;
    if out.ok {
        Ok(())
    } else {
        Err(GitError::Refused {
            action: "rm --cached",
            message: out.message(),
        })
    }
}
