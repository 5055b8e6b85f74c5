//! The end of an accept: the commit plan (message, branch), the dirty-file rule, and the
//! sequence verified write → commit of that file alone, whose outcome is returned.
use std::path::Path;

use super::{AcceptError, accepted_field, message};
use crate::drift::DriftItem;
use crate::git::{self, AcceptedField, CommitOutcome};
use crate::manifest::edit::PreparedEdit;
use crate::manifest::{Config, ObjectKey};

/// What to commit: the message and the branch (from `.kdrift.yaml`'s template), or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitPlan {
    pub message: String,
    pub branch: Option<String>,
    /// `accept.push`: push the commit's branch after it.
    pub push: bool,
}

impl CommitPlan {
    /// The commit of `chosen` fields of `key`; `subject` replaces the generated subject line.
    pub fn new(
        key: &ObjectKey,
        chosen: &[&DriftItem],
        subject: Option<&str>,
        config: &Config,
    ) -> CommitPlan {
        let fields: Vec<AcceptedField> = chosen.iter().map(|item| accepted_field(item)).collect();
        CommitPlan {
            message: message(key, &fields, subject),
            branch: config
                .accept_branch
                .as_deref()
                .map(|template| git::branch_name(template, &key.kind, &key.namespace, &key.name)),
            push: config.accept_push,
        }
    }

    pub fn subject(&self) -> &str {
        self.message.lines().next().unwrap_or_default()
    }
}

/// How an accept ended when it did not fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Committed {
        short_hash: String,
        /// `None` on a detached HEAD.
        branch: Option<String>,
        subject: String,
        /// `accept.push`: where it was pushed, or why not.
        pushed: Option<Result<String, String>>,
        /// The file is in a submodule: the commit is the submodule's.
        submodule: Option<git::Submodule>,
    },
    /// Committed on a new branch (`accept.branch`); the user's checkout is as it was.
    OnBranch {
        short_hash: String,
        branch: String,
        subject: String,
        pushed: Option<Result<String, String>>,
        submodule: Option<git::Submodule>,
    },
    /// Written; the folder is not in a git repository.
    NotARepository,
    /// Written and, as asked, not committed.
    Written,
}

impl Outcome {
    /// One line for the user: `committed 1a2b3c4 on main: kdrift: accept live …`. `file` is the
    /// file as shown (relative to the manifests root).
    pub fn describe(&self, file: &str) -> String {
        let pushed = |pushed: &Option<Result<String, String>>| match pushed {
            None => String::new(),
            Some(Ok(to)) => format!("; pushed to {to}"),
            Some(Err(why)) => format!("; NOT pushed: {why}"),
        };
        // The superproject is left alone: its pointer to the submodule is the user's to move
        // (with their other submodule changes, or not at all), so it is said, not committed.
        let within = |submodule: &Option<git::Submodule>| match submodule {
            None => String::new(),
            Some(sub) => format!(" in the submodule {}", sub.path),
        };
        let pointer = |submodule: &Option<git::Submodule>| match submodule {
            None => String::new(),
            Some(sub) => format!(
                "; the superproject {super_} still records the submodule's previous commit: to record this one, git -C {super_} add {path} and commit there",
                super_ = sub.superproject.display(),
                path = sub.path,
            ),
        };
        match self {
            Outcome::Committed {
                short_hash,
                branch: Some(branch),
                subject,
                pushed: p,
                submodule,
            } => format!(
                "committed {short_hash} on {branch}{}: {subject}{}{}",
                within(submodule),
                pushed(p),
                pointer(submodule)
            ),
            Outcome::Committed {
                short_hash,
                branch: None,
                subject,
                pushed: p,
                submodule,
            } => format!(
                "committed {short_hash} (detached HEAD{}): {subject}{}{}",
                within(submodule),
                pushed(p),
                pointer(submodule)
            ),
            Outcome::OnBranch {
                short_hash,
                branch,
                subject,
                pushed: p,
                submodule,
            } => format!(
                "committed {short_hash} on the new branch {branch}{} (your checkout is unchanged: git switch {branch} to see it): {subject}{}{}",
                within(submodule),
                pushed(p),
                pointer(submodule)
            ),
            Outcome::NotARepository => {
                format!("wrote {file}; not in a git repository, so nothing was committed")
            }
            Outcome::Written => format!("wrote {file} (--no-commit: not committed)"),
        }
    }
}

/// `accept.push`: the commit is pushed; a failed push leaves the commit (said, not undone).
fn push_if_asked(
    root: &Path,
    plan: &CommitPlan,
    branch: Option<&str>,
) -> Option<Result<String, String>> {
    if !plan.push {
        return None;
    }
    Some(match branch {
        Some(branch) => git::push(root, branch).map_err(|e| e.to_string()),
        None => Err("a detached HEAD has no branch to push".to_owned()),
    })
}

/// The warning before a commit on a detached HEAD: the commit is made, but on no branch.
pub const DETACHED_HEAD: &str = "HEAD is detached: the commit will be on no branch, and checking out a branch leaves it behind (after it, git switch -c NAME keeps it; or check out a branch first)";

/// [`DETACHED_HEAD`] when the commit `plan` makes of `file` goes to a detached HEAD (not to a
/// new branch of `accept.branch`); `None` otherwise, or when git cannot say.
pub fn detached_head(root: &Path, file: &Path, plan: Option<&CommitPlan>) -> Option<&'static str> {
    let plan = plan?;
    let top = git::repository_of(root, file).ok().flatten()?;
    let branch = git::current_branch(&top).ok()?;
    let to_new_branch = plan
        .branch
        .as_ref()
        .is_some_and(|b| Some(b) != branch.as_ref());
    (branch.is_none() && !to_new_branch).then_some(DETACHED_HEAD)
}

/// `file` as the user knows it: relative to the manifests root.
pub fn shown_path(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// Before writing anything that will be committed: no rebase, merge, cherry-pick, revert or
/// bisect in progress (its temporary HEAD would get the commit), and the dirty-file rule:
/// `file` has no uncommitted changes.
pub fn ensure_clean(root: &Path, file: &Path) -> Result<(), AcceptError> {
    // The repository that holds the file: a submodule's, for a file in one.
    let folder = git::folder_of(root, file);
    match git::operation_in_progress(&folder) {
        Ok(Some(operation)) => {
            let repo = git::repository_root(&folder)
                .ok()
                .flatten()
                .unwrap_or_else(|| folder.clone());
            return Err(AcceptError::GitBusy {
                repo: repo.display().to_string(),
                operation,
            });
        }
        Ok(None) => {}
        Err(e) => return Err(AcceptError::Status(e)),
    }
    match git::has_uncommitted_changes(root, file) {
        Ok(false) => Ok(()),
        Ok(true) => Err(AcceptError::DirtyFile {
            file: shown_path(root, file),
        }),
        Err(e) => Err(AcceptError::Status(e)),
    }
}

/// Writes `edits` (refused if a file changed on disk since it was read, or leaves `root`; a new
/// file if it exists) and commits those files alone, in one commit, as `commit` says (`None`:
/// only write). With a commit, the dirty-file rule is checked first. Every file is checked
/// before the first is written. Blocking (git runs as a process).
pub fn write_and_commit(
    root: &Path,
    edits: &[PreparedEdit],
    commit: Option<&CommitPlan>,
) -> Result<Outcome, AcceptError> {
    if commit.is_some() {
        for edit in edits {
            ensure_clean(root, &edit.file)?;
        }
    }
    for edit in edits {
        edit.check_unchanged(root)?;
    }
    let first = edits.first().map_or(root, |edit| edit.file.as_path());
    // Branch mode: the edit goes to the new branch only, the user's checkout is not touched.
    let on_branch = commit.and_then(|plan| {
        let branch = plan.branch.as_deref()?;
        let current = git::repository_of(root, first)
            .ok()
            .flatten()
            .and_then(|top| git::current_branch(&top).ok().flatten());
        (current.as_deref() != Some(branch)).then_some((plan, branch))
    });
    let submodule = |top: &Path| git::submodule_of(top).ok().flatten();
    if let Some((plan, branch)) = on_branch {
        let files: Vec<(&Path, &str)> = edits
            .iter()
            .map(|e| (e.file.as_path(), e.after.as_str()))
            .collect();
        let committed = git::commit_files_on_new_branch(root, &files, &plan.message, branch);
        if committed.is_err() && crate::process::interrupted() {
            // Nothing was written in the checkout; the new branch was removed.
            return Err(AcceptError::Interrupted {
                restored: Vec::new(),
                left: Vec::new(),
                lock: None,
                committed: Vec::new(),
            });
        }
        return match committed {
            Ok(CommitOutcome::Committed {
                short_hash,
                repository,
                ..
            }) => Ok(Outcome::OnBranch {
                short_hash,
                branch: branch.to_owned(),
                subject: plan.subject().to_owned(),
                pushed: push_if_asked(&repository, plan, Some(branch)),
                submodule: submodule(&repository),
            }),
            Ok(CommitOutcome::NotARepository) => {
                write_all(root, edits)?;
                Ok(Outcome::NotARepository)
            }
            Err(e) => Err(AcceptError::BranchCommit(e)),
        };
    }
    write_all(root, edits)?;
    let Some(plan) = commit else {
        return Ok(Outcome::Written);
    };
    let files: Vec<&Path> = edits.iter().map(|e| e.file.as_path()).collect();
    let committed = git::commit_files(root, &files, &plan.message);
    if committed.is_err() && crate::process::interrupted() {
        return Err(put_back(root, edits));
    }
    match committed {
        Ok(CommitOutcome::Committed {
            short_hash,
            branch,
            repository,
        }) => Ok(Outcome::Committed {
            pushed: push_if_asked(&repository, plan, branch.as_deref()),
            short_hash,
            branch,
            subject: plan.subject().to_owned(),
            submodule: submodule(&repository),
        }),
        Ok(CommitOutcome::NotARepository) => Ok(Outcome::NotARepository),
        Err(e) => Err(AcceptError::Commit(e)),
    }
}

/// After an interrupt stopped the commit: each file the accept wrote that git does not have
/// committed is put back as it was read (a new one removed and taken out of the index), so an
/// interrupted accept leaves the checkout as it found it. A file git has as written was committed
/// before the interrupt took effect: the commit stands, and so does the file.
fn put_back(root: &Path, edits: &[PreparedEdit]) -> AcceptError {
    let (mut restored, mut left, mut lock, mut committed) =
        (Vec::new(), Vec::new(), None, Vec::new());
    let written = |edit: &PreparedEdit| {
        std::fs::read(&edit.file).ok().as_deref() == Some(edit.after.as_bytes())
    };
    for edit in edits {
        let shown = shown_path(root, &edit.file);
        let after = git::after_interrupt(root, &edit.file).unwrap_or_default();
        lock = lock.or(after.lock);
        if after.clean == Some(true) {
            if written(edit) {
                committed.push(shown);
            }
            continue;
        }
        match edit.undo(root) {
            Ok(()) => {
                if edit.creates {
                    let _ = git::unstage(root, &edit.file);
                }
                restored.push(shown);
            }
            // Not as the accept wrote it: not written at all, or changed since by someone else.
            Err(_) if !written(edit) => {}
            Err(error) => left.push(format!("{shown} ({error})")),
        }
    }
    AcceptError::Interrupted {
        restored,
        left,
        lock,
        committed,
    }
}

/// Writes every edit in place, each checked first (permissions, a read-only file system) so
/// that none is written when one would be refused; if one still fails (the disk filled up), the
/// files written before it are put back as they were read, so an accept never leaves some of
/// its files written and others not.
pub(super) fn write_all(root: &Path, edits: &[PreparedEdit]) -> Result<(), AcceptError> {
    for edit in edits {
        edit.check_writable(root)?;
    }
    for (done, edit) in edits.iter().enumerate() {
        if let Err(error) = edit.write(root) {
            let left: Vec<String> = edits[..done]
                .iter()
                .filter(|written| written.undo(root).is_err())
                .map(|written| shown_path(root, &written.file))
                .collect();
            if left.is_empty() {
                return Err(error.into());
            }
            return Err(AcceptError::PartlyWritten {
                error,
                left: left.join(", "),
            });
        }
    }
    Ok(())
}
