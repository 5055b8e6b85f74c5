//! Format-preserving edits of a manifest file: live values written into one YAML document so that
//! only the lines of the edited nodes change, checked by re-parsing, then written atomically.
//!
//! - [`path`]: [`FieldPath`], the address of one field (map keys, list items by merge key).
//! - [`intended`]: the edits applied to the parsed object — what the file must say afterwards.
//! - [`documents`]: a file split into its documents, the same way the manifest loader splits it.
//! - [`style`], [`render`]: the file's indentation habits and YAML text for new values.
//! - [`tree`]: one edit applied to the text through `yaml-edit`'s lossless syntax tree.
//! - [`prepare`]: [`PreparedEdit`], read + edit + preview diff, written later.
//! - [`write`]: the verified atomic write ([`write_verified`]) and [`ContentHash`].
pub mod documents;
pub mod intended;
pub mod path;
pub mod prepare;
pub mod render;
pub mod style;
pub mod tree;
pub mod write;

use serde_json::Value;

pub use path::{FieldPath, PathStep};
pub use prepare::{PrepareError, PreparedEdit};
pub use write::{ContentHash, WriteError, write_verified};

/// One field edit. `Set` replaces a value or inserts it (creating missing parent maps and list
/// items); `Remove` deletes a map key or a list item, and the map or list it leaves empty.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldEdit {
    Set {
        path: FieldPath,
        value: Value,
    },
    Remove {
        path: FieldPath,
    },
    /// A new list item (`path` ends with it), put after the first of `after` (the items before
    /// it in the live list, nearest first) that the list has, else first; as `Set` when the
    /// list is missing.
    InsertItem {
        path: FieldPath,
        value: Value,
        after: Vec<PathStep>,
    },
    /// The items of the list at `path` that `order` names, put in that relative order (each
    /// moves with its comments; other items stay).
    Reorder {
        path: FieldPath,
        order: Vec<PathStep>,
    },
}

impl FieldEdit {
    pub fn path(&self) -> &FieldPath {
        match self {
            FieldEdit::Set { path, .. }
            | FieldEdit::Remove { path }
            | FieldEdit::InsertItem { path, .. }
            | FieldEdit::Reorder { path, .. } => path,
        }
    }
}

/// Why an edit was refused. The file is never written when one of these is returned.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("the file has no document {index} (it has {count})")]
    NoSuchDocument { index: usize, count: usize },
    #[error("document {index} is not valid YAML (line {line} of the file): {message}")]
    Parse {
        index: usize,
        line: usize,
        message: String,
    },
    #[error("document {index} is not a YAML mapping")]
    NotAnObject { index: usize },
    #[error("cannot edit {path}: {reason}")]
    Unsupported { path: String, reason: String },
    #[error(
        "the edit of document {index} does not give the intended object (first difference at {at}); nothing was written"
    )]
    NotIntended { index: usize, at: String },
    #[error("the edit changed document {other}, which it must not touch; nothing was written")]
    OtherDocumentChanged { other: usize },
}

/// Applies `edits` to document `document_index` (0-based, counted as the manifest loader counts:
/// pieces between `---` marker lines) of `source` and returns the whole new file text.
///
/// Only the lines of the edited nodes change. Before returning, the result is re-parsed: the
/// edited document must equal the original object with the edits applied, and every other
/// document must be byte-for-byte unchanged.
pub fn edit_document(
    source: &str,
    document_index: usize,
    edits: &[FieldEdit],
) -> Result<String, EditError> {
    // A byte-order mark stays where it is, outside what is edited.
    if let Some(rest) = source.strip_prefix('\u{feff}') {
        return edit_document(rest, document_index, edits).map(|text| format!("\u{feff}{text}"));
    }
    let pieces = documents::split(source);
    let count = pieces.len();
    let piece = pieces
        .get(document_index)
        .ok_or(EditError::NoSuchDocument {
            index: document_index,
            count,
        })?;
    let original_text = &source[piece.clone()];
    // yaml-edit writes `\n` into the lines it makes: a CRLF file is edited as LF and converted back.
    let crlf = documents::uses_crlf(source);
    let working = if crlf {
        original_text.replace("\r\n", "\n")
    } else {
        original_text.to_owned()
    };
    // Parse errors name the line in the file, not in the document.
    let first_line = source[..piece.start].matches('\n').count();
    let in_file = |error: EditError| match error {
        EditError::Parse {
            index,
            line,
            message,
        } => EditError::Parse {
            index,
            line: line + first_line,
            message,
        },
        other => other,
    };
    let original = parse_object(&working, document_index).map_err(in_file)?;
    let edits = path::with_key_defaults(&original, edits);
    let intended = intended::apply(&original, &edits);

    let mut text = working.clone();
    for edit in &edits {
        text = tree::apply(&text, edit, document_index)?;
    }
    text = documents::keep_final_newline(&working, text);
    let actual = parse_object(&text, document_index)?;
    if actual != intended {
        return Err(EditError::NotIntended {
            index: document_index,
            at: intended::first_difference(&intended, &actual),
        });
    }
    if crlf {
        text = text.replace('\n', "\r\n");
    }

    let mut out = String::with_capacity(source.len() + text.len());
    out.push_str(&source[..piece.start]);
    out.push_str(&text);
    out.push_str(&source[piece.end..]);
    verify_other_documents(source, &out, document_index)?;
    Ok(out)
}

/// Every document but `edited` must be the same bytes in the same place of the split.
fn verify_other_documents(before: &str, after: &str, edited: usize) -> Result<(), EditError> {
    let old = documents::split(before);
    let new = documents::split(after);
    if old.len() != new.len() {
        return Err(EditError::OtherDocumentChanged {
            other: edited.saturating_add(1),
        });
    }
    for (index, (a, b)) in old.iter().zip(&new).enumerate() {
        if index != edited && before[a.clone()] != after[b.clone()] {
            return Err(EditError::OtherDocumentChanged { other: index });
        }
    }
    Ok(())
}

/// The document as a value, the way the drift engine reads it.
pub(crate) fn parse_object(text: &str, index: usize) -> Result<Value, EditError> {
    let value: Value = serde_yaml::from_str(text).map_err(|error| EditError::Parse {
        index,
        line: error.location().map_or(0, |at| at.line()),
        message: error.to_string(),
    })?;
    if value.is_object() {
        Ok(value)
    } else {
        Err(EditError::NotAnObject { index })
    }
}
