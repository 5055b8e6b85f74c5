//! What the operator should know about the manifests, as loading met it: problems (a file or
//! object not read, with why) and notes (what is read otherwise than one might expect).
use std::fmt;
use std::path::{Path, PathBuf};

use super::{ObjectKey, kustomize};

/// Something the operator should know about the manifests; the rest still loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A document is not valid YAML.
    Malformed {
        file: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// The same object is defined twice; the first (in path order) is the one compared.
    Duplicate {
        key: ObjectKey,
        first: (PathBuf, usize),
        second: (PathBuf, usize),
    },
    /// A file or folder that was not read, with the reason.
    Skipped { file: PathBuf, reason: String },
    /// A chart of the checkout that did not render (no helm, or helm failed): git's desired
    /// state for the release in `namespace` is unread.
    Unrendered {
        file: PathBuf,
        reason: String,
        namespace: String,
    },
    /// A bad entry of `.kdrift.yaml`.
    BadConfig {
        file: PathBuf,
        line: usize,
        message: String,
    },
    /// A template (Helm's `{{ }}`): not a manifest until rendered, so not read. A note, not an
    /// error: it hides no object that the manifests hold.
    Template { file: PathBuf },
    /// Something worth knowing that hides no object (which kustomize roots were rendered, files
    /// no kustomization reads).
    Note { file: PathBuf, message: String },
    /// An object the server would refuse as it is written (a Secret's `data` that is not
    /// base64); the message names the field, never its value.
    Invalid {
        file: PathBuf,
        line: usize,
        key: ObjectKey,
        message: String,
    },
    /// A manifest of a kind the cluster does not serve (a CustomResourceDefinition not
    /// installed, a version no longer served): it cannot be compared.
    Unserved {
        file: PathBuf,
        line: usize,
        key: ObjectKey,
        message: String,
    },
}

impl Problem {
    /// A note hides no object: it does not make a check incomplete, and is not called a
    /// problem where it is shown.
    pub fn is_note(&self) -> bool {
        matches!(self, Problem::Template { .. } | Problem::Note { .. })
    }

    /// The problem as a check of namespace `scope` alone sees it: a chart whose release is in
    /// another namespace hides nothing of this one, so its render failing is a note there.
    pub fn in_scope(self, scope: &str) -> Problem {
        match self {
            Problem::Unrendered {
                file,
                reason,
                namespace,
            } if namespace != scope => Problem::Note {
                file,
                message: format!(
                    "{reason} (its release is in namespace \"{namespace}\", outside the one in use)"
                ),
            },
            other => other,
        }
    }

    /// `note` or `problem`: the word a line showing it starts with.
    pub fn label(&self) -> &'static str {
        if self.is_note() { "note" } else { "problem" }
    }

    /// The file the problem is about, and its 1-based line when known.
    pub fn place(&self) -> (&Path, Option<usize>) {
        match self {
            Problem::Malformed { file, line, .. }
            | Problem::BadConfig { file, line, .. }
            | Problem::Unserved { file, line, .. }
            | Problem::Invalid { file, line, .. } => (file, Some(*line)),
            Problem::Duplicate { second, .. } => (&second.0, Some(second.1)),
            Problem::Skipped { file, .. }
            | Problem::Unrendered { file, .. }
            | Problem::Template { file }
            | Problem::Note { file, .. } => (file, None),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Malformed {
                file,
                line,
                message,
                ..
            } => {
                write!(f, "{}:{line}: malformed YAML: {message}", file.display())
            }
            Problem::Duplicate { key, first, second } => {
                write!(
                    f,
                    "{}:{}: {key} is also defined at {}:{} (that one is used)",
                    second.0.display(),
                    second.1,
                    first.0.display(),
                    first.1
                )?;
                if kustomize::is_kustomization_name(&first.0)
                    && kustomize::is_kustomization_name(&second.0)
                {
                    write!(
                        f,
                        "; two kustomize roots render it: pick one with --overlay DIR, or kustomize.roots / kustomize.contexts in .kdrift.yaml"
                    )?;
                }
                Ok(())
            }
            Problem::Skipped { file, reason } | Problem::Unrendered { file, reason, .. } => {
                write!(f, "{}: skipped: {reason}", file.display())
            }
            Problem::Note { file, message } => write!(f, "{}: {message}", file.display()),
            Problem::BadConfig {
                file,
                line,
                message,
            } => write!(f, "{}:{line}: {message}", file.display()),
            Problem::Unserved {
                file,
                line,
                key,
                message,
            }
            | Problem::Invalid {
                file,
                line,
                key,
                message,
            } => write!(f, "{}:{line}: {key}: {message}", file.display()),
            Problem::Template { file } => write!(
                f,
                "{}: a template ({{{{ }}}}), not read: kdrift compares manifests as they are written",
                file.display()
            ),
        }
    }
}
