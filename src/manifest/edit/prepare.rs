//! An accept prepared but not yet written: the file as read (and its hash), the edited text and
//! the diff to preview. Writing it later refuses if the file changed on disk in between.
use std::path::{Path, PathBuf};

use super::write::{ContentHash, WriteError, write_verified};
use super::{EditError, FieldEdit, edit_document};

/// Why an accept could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error("{file}: cannot read it: {source}")]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: {source}")]
    Edit {
        file: PathBuf,
        #[source]
        source: EditError,
    },
}

/// The edit of one file, checked, ready to preview and write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedEdit {
    pub file: PathBuf,
    pub before: String,
    pub before_hash: ContentHash,
    pub after: String,
    /// A file that does not exist yet (a new patch): written only if it still does not.
    pub creates: bool,
}

impl PreparedEdit {
    /// Reads `file` and applies `edits` to its document `document`.
    pub fn new(file: &Path, document: usize, edits: &[FieldEdit]) -> Result<Self, PrepareError> {
        let bytes = std::fs::read(file).map_err(|source| PrepareError::Read {
            file: file.to_path_buf(),
            source,
        })?;
        let before_hash = ContentHash::of(&bytes);
        let before = String::from_utf8(bytes).map_err(|error| PrepareError::Read {
            file: file.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, error),
        })?;
        Self::from_text(file, before, before_hash, document, edits)
    }

    /// Applies `edits` to document `document` of `before`, the text of `file` as read earlier
    /// (`before_hash` is the hash of its bytes then). Pure: the live view recomputes the preview
    /// with it as fields are toggled.
    pub fn from_text(
        file: &Path,
        before: String,
        before_hash: ContentHash,
        document: usize,
        edits: &[FieldEdit],
    ) -> Result<Self, PrepareError> {
        let after =
            edit_document(&before, document, edits).map_err(|source| PrepareError::Edit {
                file: file.to_path_buf(),
                source,
            })?;
        Ok(PreparedEdit {
            file: file.to_path_buf(),
            before,
            before_hash,
            after,
            creates: false,
        })
    }

    /// A new file `file` holding `contents`.
    pub fn new_file(file: &Path, contents: String) -> Self {
        PreparedEdit {
            file: file.to_path_buf(),
            before: String::new(),
            before_hash: ContentHash::of(b""),
            after: contents,
            creates: true,
        }
    }

    /// The whole of `file` (read earlier as `before`) replaced by `after`.
    pub fn replace(file: &Path, before: String, after: String) -> Self {
        PreparedEdit {
            file: file.to_path_buf(),
            before_hash: ContentHash::of(before.as_bytes()),
            before,
            after,
            creates: false,
        }
    }

    /// The unified diff of the file (3 lines of context), labelled with `name`, as `git diff`
    /// would show it.
    pub fn diff(&self, name: &str) -> String {
        let old = if self.creates {
            "/dev/null".to_owned()
        } else {
            format!("a/{name}")
        };
        similar::TextDiff::from_lines(&self.before, &self.after)
            .unified_diff()
            .context_radius(3)
            .header(&old, &format!("b/{name}"))
            .to_string()
    }

    /// True when the edit changes nothing (the manifest already says what is live).
    pub fn is_noop(&self) -> bool {
        self.before == self.after
    }

    /// Refuses, as [`PreparedEdit::write`] would, a file that changed since it was read or
    /// leaves `root`, without writing it (the edit goes elsewhere: a branch's worktree).
    pub fn check_unchanged(&self, root: &Path) -> Result<(), WriteError> {
        if self.creates {
            return super::write::verify_new(root, &self.file).map(drop);
        }
        super::write::verify_unchanged(root, &self.file, self.before_hash).map(drop)
    }

    /// Refuses, without writing it, a file [`PreparedEdit::write`] would fail on for lack of
    /// permission: read-only, another user's, on a read-only file system, in a folder not the
    /// user's (see [`super::write::check_writable`]).
    pub fn check_writable(&self, root: &Path) -> Result<(), WriteError> {
        super::write::check_writable(root, &self.file, self.creates)
    }

    /// Puts the file back as it was read, after [`PreparedEdit::write`] (a later file of the
    /// same accept could not be written): a created file is removed. Refused if it changed
    /// since it was written.
    pub fn undo(&self, root: &Path) -> Result<(), WriteError> {
        let written = ContentHash::of(self.after.as_bytes());
        if self.creates {
            let (_, real, _) = super::write::verify_unchanged(root, &self.file, written)?;
            return std::fs::remove_file(&real).map_err(|source| WriteError::Io {
                file: self.file.clone(),
                action: "cannot remove it again",
                source,
            });
        }
        write_verified(root, &self.file, written, &self.before)
    }

    /// Writes the edited text, unless the file changed since it was read or leaves `root`.
    pub fn write(&self, root: &Path) -> Result<(), WriteError> {
        if self.creates {
            return super::write::write_new(root, &self.file, &self.after);
        }
        write_verified(root, &self.file, self.before_hash, &self.after)
    }
}
