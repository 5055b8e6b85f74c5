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
    },
    /// Committed on a new branch (`accept.branch`); the user's checkout is as it was.
    OnBranch {
        short_hash: String,
        branch: String,
        subject: String,
        pushed: Option<Result<String, String>>,
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
        match self {
            Outcome::Committed {
                short_hash,
                branch: Some(branch),
                subject,
                pushed: p,
            } => format!("committed {short_hash} on {branch}: {subject}{}", pushed(p)),
            Outcome::Committed {
                short_hash,
                branch: None,
                subject,
                pushed: p,
            } => format!(
                "committed {short_hash} (detached HEAD): {subject}{}",
                pushed(p)
            ),
            Outcome::OnBranch {
                short_hash,
                branch,
                subject,
                pushed: p,
            } => format!(
                "committed {short_hash} on the new branch {branch} (your checkout is unchanged: git switch {branch} to see it): {subject}{}",
                pushed(p)
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
    match git::operation_in_progress(root) {
        Ok(Some(operation)) => {
            let repo = git::repository_root(root)
                .ok()
                .flatten()
                .unwrap_or_else(|| root.to_path_buf());
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
    // Branch mode: the edit goes to the new branch only, the user's checkout is not touched.
    let on_branch = commit.and_then(|plan| {
        let branch = plan.branch.as_deref()?;
        let current = git::repository_root(root)
            .ok()
            .flatten()
            .and_then(|top| git::current_branch(&top).ok().flatten());
        (current.as_deref() != Some(branch)).then_some((plan, branch))
    });
    if let Some((plan, branch)) = on_branch {
        let files: Vec<(&Path, &str)> = edits
            .iter()
            .map(|e| (e.file.as_path(), e.after.as_str()))
            .collect();
        return match git::commit_files_on_new_branch(root, &files, &plan.message, branch) {
            Ok(CommitOutcome::Committed { short_hash, .. }) => Ok(Outcome::OnBranch {
                short_hash,
                branch: branch.to_owned(),
                subject: plan.subject().to_owned(),
                pushed: push_if_asked(root, plan, Some(branch)),
            }),
            Ok(CommitOutcome::NotARepository) => {
                for edit in edits {
                    edit.write(root)?;
                }
                Ok(Outcome::NotARepository)
            }
            Err(e) => Err(AcceptError::BranchCommit(e)),
        };
    }
    for edit in edits {
        edit.write(root)?;
    }
    let Some(plan) = commit else {
        return Ok(Outcome::Written);
    };
    let files: Vec<&Path> = edits.iter().map(|e| e.file.as_path()).collect();
    match git::commit_files(root, &files, &plan.message) {
        Ok(CommitOutcome::Committed { short_hash, branch }) => Ok(Outcome::Committed {
            pushed: push_if_asked(root, plan, branch.as_deref()),
            short_hash,
            branch,
            subject: plan.subject().to_owned(),
        }),
        Ok(CommitOutcome::NotARepository) => Ok(Outcome::NotARepository),
        Err(e) => Err(AcceptError::Commit(e)),
    }
}
