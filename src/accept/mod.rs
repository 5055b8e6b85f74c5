//! Accepting live values into a manifest, shared by `kdrift accept` and the live view's accept
//! view: which drifted fields are offered and chosen, the edit and commit-message line of each,
//! the check that a live value has not moved since it was shown, and the sequence dirty check →
//! verified write → commit of that file alone, whose outcome is returned (never printed).
//!
//! When the manifest file already has uncommitted changes of the user's, the sequence refuses
//! before writing anything: committing the file would put the user's unfinished edits into a
//! commit named after the hotfix, and writing without committing would mix the two in the
//! working tree.
//!
//! - [`commit`]: the commit plan, the dirty-file rule and the write + commit sequence.
use std::path::Path;
use std::sync::Arc;

pub mod commit;
pub mod helm;
pub mod kustomize;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

pub use commit::{
    CommitPlan, DETACHED_HEAD, Outcome, detached_head, ensure_clean, shown_path, write_and_commit,
};

use serde_json::Value;

use crate::drift::report::short_value;
use crate::drift::{self, Class, DriftItem, ObjectDrift};
use crate::git::{self, AcceptedField, GitError};
use crate::manifest::edit::{FieldEdit, PrepareError, PreparedEdit, WriteError};
use crate::manifest::{ManifestObject, ObjectKey};

/// Why nothing (or not everything) was accepted; each message says how to proceed.
#[derive(Debug, thiserror::Error)]
pub enum AcceptError {
    /// No manifest on disk defines the object: where kdrift looked, or the file a sparse
    /// checkout leaves out.
    #[error("{0}")]
    NoManifest(String),
    #[error(
        "{key} is rendered by kustomize from {root} (defined at {defined_at}): it is accepted through its root, into the file that sets each value, not into {defined_at} alone; nothing was written"
    )]
    Rendered {
        key: String,
        root: String,
        defined_at: String,
    },
    #[error("{key}: {reason}")]
    Kustomize { key: String, reason: String },
    #[error("{key} is not in the cluster: there is no live value to accept")]
    NotLive { key: String },
    #[error(
        "{field} of {key} is a Secret's value: accepting it would write the secret into git in plain text; nothing was written (change it where the Secret comes from — a sealed or external secret — or revert the cluster to the manifest)"
    )]
    SecretValue { key: String, field: String },
    #[error("{key} cannot be compared: {message}")]
    NotComparable { key: String, message: String },
    #[error("{key} has no drifted field \"{field}\"; drifted fields: {drifted}")]
    UnknownField {
        key: String,
        field: String,
        drifted: String,
    },
    #[error(
        "\"{field}\" of {key} is {what}, not drift: there is nothing to accept (the manifest keeps its value)"
    )]
    NotDrift {
        key: String,
        field: String,
        what: &'static str,
    },
    #[error(
        "{file} has uncommitted changes: commit or stash them first, so that the accept commit holds only the live values; nothing was written"
    )]
    DirtyFile { file: String },
    #[error(
        "{what} is in progress in {repo}: a commit now would land on its temporary HEAD; {advice}, then accept again (nothing was written)",
        what = .operation.name(),
        advice = .operation.advice()
    )]
    GitBusy {
        repo: String,
        operation: git::InProgress,
    },
    #[error(
        "{key} is item {item} of a kind: List at {place}: accept edits objects that stand at the top of a document; edit it by hand"
    )]
    InList {
        key: String,
        item: usize,
        place: String,
    },
    #[error(
        "{key} is defined twice, at {first} and at {second}: accept would change one and leave the other saying the old value; keep one of them, then accept again (nothing was written)"
    )]
    Duplicated {
        key: String,
        first: String,
        second: String,
    },
    #[error(
        "{key} is defined in {file}, a JSON file: accept keeps YAML files' layout and comments, and writes no JSON; edit it by hand"
    )]
    JsonFile { key: String, file: String },
    #[error("{field} changed live since it was shown ({shown} → {now}); press a again")]
    ChangedLive {
        field: String,
        shown: String,
        now: String,
    },
    #[error("{file} no longer defines {key}; nothing was written")]
    ManifestGone { file: String, key: String },
    #[error("{}", nothing_written(.0))]
    Prepare(#[from] PrepareError),
    #[error("{0}")]
    Write(#[from] WriteError),
    /// A later file of the accept could not be written, and the earlier ones could not be put
    /// back: they hold the accepted values, uncommitted.
    #[error(
        "{error}; but {left}, written before it, could not be put back and hold the accepted values, not committed: see git diff, and git restore them to undo"
    )]
    PartlyWritten {
        #[source]
        error: WriteError,
        left: String,
    },
    /// `git status` failed before anything was written.
    #[error("{}", nothing_written(.0))]
    Status(#[source] GitError),
    /// The file is written; git could not commit it (a hook, no identity): git's own words.
    #[error("{}", written_not_committed(.0))]
    Commit(#[source] GitError),
    /// Branch mode: the commit on the new branch failed; the branch is gone, nothing written.
    #[error("{0}; the new branch was removed and nothing was written")]
    BranchCommit(#[source] GitError),
    /// kdrift was interrupted before the commit was made: git was stopped and the files are
    /// as they were (or, said, could not all be put back).
    #[error("{}", interrupted(.restored, .left, .lock, .committed))]
    Interrupted {
        /// Files written by the accept and put back as they were.
        restored: Vec<String>,
        /// Files written by the accept that could not be put back (with why).
        left: Vec<String>,
        /// The index lock a killed git left behind.
        lock: Option<std::path::PathBuf>,
        /// Files git has as the accept wrote them: the commit was made before the interrupt
        /// took effect (its last steps were not).
        committed: Vec<String>,
    },
}

/// What an interrupted accept left: nothing, or what to do about it.
fn interrupted(
    restored: &[String],
    left: &[String],
    lock: &Option<std::path::PathBuf>,
    committed: &[String],
) -> String {
    let mut text = if committed.is_empty() {
        String::from("interrupted before the commit: git was stopped and nothing was committed")
    } else {
        format!(
            "interrupted, but the commit of {} was made before git could be stopped: see git log -1",
            committed.join(", ")
        )
    };
    if restored.is_empty() && left.is_empty() && committed.is_empty() {
        text.push_str("; nothing was written");
    }
    if !restored.is_empty() {
        text.push_str(&format!("; {} put back as it was", restored.join(", ")));
    }
    if !left.is_empty() {
        text.push_str(&format!(
            "; {} could not be put back and holds the accepted values, not committed: see git diff, and git restore it to undo",
            left.join(", ")
        ));
    }
    if let Some(lock) = lock {
        text.push_str(&format!(
            "; git was killed before it could remove its lock {}: once no git command runs in the repository, remove it (rm {})",
            lock.display(),
            lock.display()
        ));
    }
    text
}

/// A failed commit after the file was written, said with git's own words last.
fn written_not_committed(error: &GitError) -> String {
    match error {
        GitError::Refused { action, message } => {
            format!("git {action} failed; the file is written but not committed:\n{message}")
        }
        // Kept, not rolled back: committing it from a terminal (where the prompt can be answered)
        // finishes the accept with nothing lost.
        GitError::Signing { message } => format!(
            "{}; the file is written but not committed (kept, so that nothing is lost: commit it yourself from a terminal, where the prompt can be answered); git said:\n{message}",
            git::SIGNING
        ),
        other => format!("{other}; the file is written but not committed"),
    }
}

/// `error`, saying that nothing was written unless it says so already.
fn nothing_written(error: &dyn std::fmt::Display) -> String {
    let text = error.to_string();
    if text.contains("nothing was written") {
        text
    } else {
        format!("{text}; nothing was written")
    }
}

impl AcceptError {
    /// True when the file was written although the accept did not finish (the commit failed).
    pub fn file_written(&self) -> bool {
        matches!(
            self,
            AcceptError::Commit(_) | AcceptError::PartlyWritten { .. }
        )
    }
}

/// The drifted fields to accept: all of them, or those named by `--field` (as `kdrift check`
/// prints a path, or as its JSON pointer). A restart annotation is accepted only when named.
pub fn select<'d>(
    drift: &'d ObjectDrift,
    fields: &[String],
) -> Result<Vec<&'d DriftItem>, AcceptError> {
    let secret_value = |item: &DriftItem| {
        crate::drift::secret::is_secret(&drift.key)
            && crate::drift::secret::is_secret_path(&item.path)
    };
    let refuse = |item: &DriftItem| AcceptError::SecretValue {
        key: drift.key.to_string(),
        field: item.path.to_string(),
    };
    if fields.is_empty() {
        let drifted: Vec<&DriftItem> = drift
            .items
            .iter()
            .filter(|item| item.class.is_drift())
            .collect();
        let chosen: Vec<&DriftItem> = drifted
            .iter()
            .copied()
            .filter(|i| !secret_value(i))
            .collect();
        return match drifted.iter().find(|i| secret_value(i)) {
            Some(secret) if chosen.is_empty() => Err(refuse(secret)),
            _ => Ok(chosen),
        };
    }
    let mut chosen: Vec<&DriftItem> = Vec::new();
    for field in fields {
        let found = drift
            .items
            .iter()
            .find(|item| item.path.to_string() == *field || item.path.pointer() == *field);
        match found {
            Some(item) if item.class == Class::Autoscaled => {
                return Err(AcceptError::NotDrift {
                    key: drift.key.to_string(),
                    field: field.clone(),
                    what: "set by the autoscaler",
                });
            }
            Some(item) if secret_value(item) => return Err(refuse(item)),
            Some(item) => {
                if !chosen.iter().any(|c| std::ptr::eq(*c, item)) {
                    chosen.push(item);
                }
            }
            None => {
                return Err(AcceptError::UnknownField {
                    key: drift.key.to_string(),
                    field: field.clone(),
                    drifted: drift
                        .paths_of(|item| item.class.is_drift() || item.class == Class::Restarted),
                });
            }
        }
    }
    Ok(chosen)
}

/// Changed and added live → set the live value (a list item added live goes where it is live,
/// after the item that precedes it); removed live → remove it from the manifest; reordered →
/// the live order.
pub fn field_edit(item: &DriftItem) -> FieldEdit {
    let path = item.path.edit_path();
    match (&item.live, item.class) {
        (Some(Value::Array(names)), Class::Reordered) => FieldEdit::Reorder {
            path,
            order: drift::diff::name_steps(names),
        },
        (Some(value), Class::AddedLive)
            if matches!(
                item.path.0.last(),
                Some(drift::PathStep::Item { .. } | drift::PathStep::Value(_))
            ) =>
        {
            FieldEdit::InsertItem {
                path,
                value: value.clone(),
                after: drift::DriftPath(item.preceding.nearest_first().cloned().collect())
                    .edit_path()
                    .0,
            }
        }
        (Some(value), class) if class != Class::RemovedLive => FieldEdit::Set {
            path,
            value: value.clone(),
        },
        _ => FieldEdit::Remove { path },
    }
}

/// The field as the commit message lists it.
pub fn accepted_field(item: &DriftItem) -> AcceptedField {
    AcceptedField {
        path: item.path.to_string(),
        old: item.manifest.as_ref().map(|v| short_value(Some(v))),
        new: item.live.as_ref().map(|v| short_value(Some(v))),
        manager: item.attribution.manager.as_ref().map(|m| {
            match item.attribution.subresource.as_deref() {
                Some(sub) if !sub.is_empty() => format!("{m} via /{sub}"),
                _ => m.clone(),
            }
        }),
        time: item.attribution.time.clone(),
    }
}

/// The commit message: git's own, with `-m` replacing the subject line.
pub fn message(key: &ObjectKey, fields: &[AcceptedField], subject: Option<&str>) -> String {
    let generated = git::commit_message(&key.kind, &key.namespace, &key.name, fields);
    match subject {
        Some(subject) => {
            let body = generated.split_once('\n').map_or("", |(_, body)| body);
            format!("{}\n{body}", subject.trim_end())
        }
        None => generated,
    }
}

/// The fields an accept view lists, each with whether it starts checked: every drifted field
/// (checked) and a restart annotation (unchecked: a restart, not configuration). Autoscaled
/// replicas are never offered.
pub fn offered(drift: &ObjectDrift) -> Vec<(DriftItem, bool)> {
    let secret = crate::drift::secret::is_secret(&drift.key);
    drift
        .items
        .iter()
        .filter(|item| item.class.is_drift() || item.class == Class::Restarted)
        // A Secret's values are never written to git (see `select`).
        .filter(|item| !(secret && crate::drift::secret::is_secret_path(&item.path)))
        .map(|item| (item.clone(), item.class.is_drift()))
        .collect()
}

/// The edit of `chosen` fields, prepared from the file text read earlier (pure).
pub fn prepare(
    file: &Path,
    text: &str,
    hash: crate::manifest::edit::ContentHash,
    document: usize,
    chosen: &[&DriftItem],
) -> Result<PreparedEdit, PrepareError> {
    let edits: Vec<FieldEdit> = chosen.iter().map(|item| field_edit(item)).collect();
    PreparedEdit::from_text(file, text.to_owned(), hash, document, &edits)
}

/// Refuses an object defined in two places (a symlink to a shared file is one place).
pub fn not_duplicated(
    index: &crate::manifest::ManifestIndex,
    key: &ObjectKey,
) -> Result<(), AcceptError> {
    for problem in index.problems() {
        if let crate::manifest::Problem::Duplicate {
            key: duplicated,
            first,
            second,
        } = problem
            && duplicated == key
        {
            let place = |(file, line): &(std::path::PathBuf, usize)| {
                format!("{}:{line}", shown_path(&index.root, file))
            };
            return Err(AcceptError::Duplicated {
                key: key.to_string(),
                first: place(first),
                second: place(second),
            });
        }
    }
    Ok(())
}

/// Refuses what the format-preserving editor cannot write: an item of a `kind: List` (its paths
/// are below `items`) and a JSON file.
pub fn editable(manifest: &ManifestObject) -> Result<(), AcceptError> {
    if let Some(kustomization) = &manifest.rendered {
        return Err(AcceptError::Rendered {
            key: manifest.key.to_string(),
            root: kustomization.display().to_string(),
            defined_at: format!("{}:{}", manifest.file.display(), manifest.line),
        });
    }
    if let Some(item) = manifest.list_item() {
        return Err(AcceptError::InList {
            key: manifest.key.to_string(),
            item,
            place: format!("{}:{}", manifest.file.display(), manifest.line),
        });
    }
    if manifest
        .file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        return Err(AcceptError::JsonFile {
            key: manifest.key.to_string(),
            file: manifest.file.display().to_string(),
        });
    }
    Ok(())
}

/// The object `key` as `text` (the contents of `file`) defines it now, if accept can edit it.
pub fn manifest_in(
    file: &Arc<Path>,
    text: &Arc<str>,
    key: &ObjectKey,
    default_namespace: &str,
) -> Result<ManifestObject, AcceptError> {
    crate::manifest::parse::parse_file(file, text, default_namespace)
        .objects
        .into_iter()
        .find(|object| object.key == *key)
        .ok_or_else(|| AcceptError::ManifestGone {
            file: file.display().to_string(),
            key: key.to_string(),
        })
        .and_then(|object| editable(&object).map(|()| object))
}

/// Refuses when a chosen field's live value is not the one shown (`now` is the drift against
/// the live object as read again just before writing).
pub fn check_still_live(chosen: &[DriftItem], now: &ObjectDrift) -> Result<(), AcceptError> {
    for shown in chosen {
        let current = now.items.iter().find(|item| item.path == shown.path);
        let same = current.is_some_and(|item| item.class == shown.class && item.live == shown.live);
        if !same {
            let now_text = match current {
                Some(item) => short_value(item.live.as_ref()),
                // No longer drift: the live value is the manifest's again.
                None => format!("{} again", short_value(shown.manifest.as_ref())),
            };
            return Err(AcceptError::ChangedLive {
                field: shown.path.to_string(),
                shown: short_value(shown.live.as_ref()),
                now: now_text,
            });
        }
    }
    Ok(())
}
