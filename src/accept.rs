//! Accepting live values into a manifest, shared by `kdrift accept` and the live view's accept
//! view: which drifted fields are offered and chosen, the edit and commit-message line of each,
//! the check that a live value has not moved since it was shown, and the sequence dirty check →
//! verified write → commit of that file alone, whose outcome is returned (never printed).
//!
//! When the manifest file already has uncommitted changes of the user's, the sequence refuses
//! before writing anything: committing the file would put the user's unfinished edits into a
//! commit named after the hotfix, and writing without committing would mix the two in the
//! working tree.
use std::path::Path;
use std::sync::Arc;

use crate::drift::report::short_value;
use crate::drift::{self, Class, DriftItem, ObjectDrift};
use crate::git::{self, AcceptedField, CommitOutcome, GitError};
use crate::manifest::edit::{
    FieldEdit, FieldPath, PathStep, PrepareError, PreparedEdit, WriteError,
};
use crate::manifest::{Config, ManifestObject, ObjectKey};

/// Why nothing (or not everything) was accepted; each message says how to proceed.
#[derive(Debug, thiserror::Error)]
pub enum AcceptError {
    #[error(
        "no manifest for {key} under \"{root}\" (pass --manifests DIR, or -n NS for another namespace)"
    )]
    NoManifest { key: String, root: String },
    #[error("{key} is not in the cluster: there is no live value to accept")]
    NotLive { key: String },
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
        "{file} has uncommitted changes: commit or stash them first (so the accept commit holds only the live values), or pass --no-commit to write the file without committing; nothing was written"
    )]
    DirtyFile { file: String },
    #[error("{field} changed live since it was shown ({shown} → {now}); press a again")]
    ChangedLive {
        field: String,
        shown: String,
        now: String,
    },
    #[error("{file} no longer defines {key}; nothing was written")]
    ManifestGone { file: String, key: String },
    #[error("{0}; nothing was written")]
    Prepare(#[from] PrepareError),
    #[error("{0}")]
    Write(#[from] WriteError),
    /// `git status` failed before anything was written.
    #[error("{0}; nothing was written")]
    Status(#[source] GitError),
    /// The file is written; git could not commit it (a hook, no identity): git's own words.
    #[error("{0}")]
    Commit(#[source] GitError),
}

impl AcceptError {
    /// True when the file was written although the accept did not finish (the commit failed).
    pub fn file_written(&self) -> bool {
        matches!(self, AcceptError::Commit(_))
    }
}

/// The drifted fields to accept: all of them, or those named by `--field` (as `kdrift check`
/// prints a path, or as its JSON pointer). A restart annotation is accepted only when named.
pub fn select<'d>(
    drift: &'d ObjectDrift,
    fields: &[String],
) -> Result<Vec<&'d DriftItem>, AcceptError> {
    if fields.is_empty() {
        return Ok(drift
            .items
            .iter()
            .filter(|item| item.class.is_drift())
            .collect());
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
            Some(item) => {
                if !chosen.iter().any(|c| std::ptr::eq(*c, item)) {
                    chosen.push(item);
                }
            }
            None => {
                let drifted: Vec<String> = drift
                    .items
                    .iter()
                    .filter(|item| item.class.is_drift() || item.class == Class::Restarted)
                    .map(|item| item.path.to_string())
                    .collect();
                return Err(AcceptError::UnknownField {
                    key: drift.key.to_string(),
                    field: field.clone(),
                    drifted: if drifted.is_empty() {
                        "none".to_owned()
                    } else {
                        drifted.join(", ")
                    },
                });
            }
        }
    }
    Ok(chosen)
}

/// The edit path of a drifted field: the same steps.
fn edit_path(path: &drift::DriftPath) -> FieldPath {
    FieldPath(
        path.0
            .iter()
            .map(|step| match step {
                drift::PathStep::Field(name) => PathStep::Key(name.clone()),
                drift::PathStep::Item { key, .. } => PathStep::Item(key.clone()),
                drift::PathStep::Value(value) => PathStep::Value(value.clone()),
            })
            .collect(),
    )
}

/// Changed and added live → set the live value; removed live → remove it from the manifest.
pub fn field_edit(item: &DriftItem) -> FieldEdit {
    let path = edit_path(&item.path);
    match &item.live {
        Some(value) if item.class != Class::RemovedLive => FieldEdit::Set {
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
    drift
        .items
        .iter()
        .filter(|item| item.class.is_drift() || item.class == Class::Restarted)
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

/// The object `key` as `text` (the contents of `file`) defines it now.
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

/// What to commit: the message and the branch (from `.kdrift.yaml`'s template), or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitPlan {
    pub message: String,
    pub branch: Option<String>,
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
        match self {
            Outcome::Committed {
                short_hash,
                branch: Some(branch),
                subject,
            } => format!("committed {short_hash} on {branch}: {subject}"),
            Outcome::Committed {
                short_hash,
                branch: None,
                subject,
            } => format!("committed {short_hash} (detached HEAD): {subject}"),
            Outcome::NotARepository => {
                format!("wrote {file}; not in a git repository, so nothing was committed")
            }
            Outcome::Written => format!("wrote {file} (--no-commit: not committed)"),
        }
    }
}

/// `file` as the user knows it: relative to the manifests root.
pub fn shown_path(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// The dirty-file rule: refuse before writing when `file` has uncommitted changes.
pub fn ensure_clean(root: &Path, file: &Path) -> Result<(), AcceptError> {
    match git::has_uncommitted_changes(root, file) {
        Ok(false) => Ok(()),
        Ok(true) => Err(AcceptError::DirtyFile {
            file: shown_path(root, file),
        }),
        Err(e) => Err(AcceptError::Status(e)),
    }
}

/// Writes `prepared` (refused if the file changed on disk since it was read, or leaves `root`)
/// and commits that file alone as `commit` says (`None`: only write). With a commit, the
/// dirty-file rule is checked first. Blocking (git runs as a process).
pub fn write_and_commit(
    root: &Path,
    prepared: &PreparedEdit,
    commit: Option<&CommitPlan>,
) -> Result<Outcome, AcceptError> {
    if commit.is_some() {
        ensure_clean(root, &prepared.file)?;
    }
    prepared.write(root)?;
    let Some(plan) = commit else {
        return Ok(Outcome::Written);
    };
    match git::commit_file(root, &prepared.file, &plan.message, plan.branch.as_deref()) {
        Ok(CommitOutcome::Committed { short_hash, branch }) => Ok(Outcome::Committed {
            short_hash,
            branch,
            subject: plan.subject().to_owned(),
        }),
        Ok(CommitOutcome::NotARepository) => Ok(Outcome::NotARepository),
        Err(e) => Err(AcceptError::Commit(e)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;
    use crate::drift::{Attribution, DriftPath, ObjectStatus};

    fn item(
        class: Class,
        path: DriftPath,
        manifest: Option<serde_json::Value>,
        live: Option<serde_json::Value>,
    ) -> DriftItem {
        DriftItem {
            class,
            path,
            manifest,
            live,
            attribution: Attribution {
                manager: Some("kubectl".into()),
                operation: Some("Update".into()),
                time: Some("2026-11-22T03:00:00Z".into()),
                subresource: Some("scale".into()),
            },
        }
    }

    fn drift() -> ObjectDrift {
        let spec = DriftPath::default().child("spec");
        let container = spec
            .child("template")
            .child("spec")
            .child("containers")
            .item(json!({"name": "web"}).as_object().unwrap().clone(), Some(0));
        ObjectDrift {
            key: ObjectKey::new("apps", "Deployment", "shop", "web"),
            status: ObjectStatus::Drifted,
            items: vec![
                item(
                    Class::Changed,
                    spec.child("replicas"),
                    Some(json!(2)),
                    Some(json!(5)),
                ),
                item(
                    Class::AddedLive,
                    container
                        .child("env")
                        .item(json!({"name": "EXTRA"}).as_object().unwrap().clone(), None),
                    None,
                    Some(json!({"name": "EXTRA", "value": "1"})),
                ),
                item(
                    Class::RemovedLive,
                    container.child("args"),
                    Some(json!(["-v"])),
                    None,
                ),
                item(
                    Class::Restarted,
                    spec.child("template")
                        .child("metadata")
                        .child("annotations")
                        .child("kubectl.kubernetes.io/restartedAt"),
                    None,
                    Some(json!("2026-11-22T03:00:00Z")),
                ),
            ],
        }
    }

    fn paths(items: &[&DriftItem]) -> Vec<String> {
        items.iter().map(|i| i.path.to_string()).collect()
    }

    #[test]
    fn all_drifted_fields_by_default_without_the_restart() {
        let d = drift();
        assert_eq!(
            paths(&select(&d, &[]).unwrap()),
            [
                "spec.replicas",
                "spec.template.spec.containers[name=web].env[name=EXTRA]",
                "spec.template.spec.containers[name=web].args",
            ]
        );
    }

    #[test]
    fn named_fields_as_check_prints_them_or_as_pointers() {
        let d = drift();
        let fields = vec![
            "spec.template.spec.containers[name=web].env[name=EXTRA]".to_owned(),
            "/spec/replicas".to_owned(),
            "spec.template.metadata.annotations[\"kubectl.kubernetes.io/restartedAt\"]".to_owned(),
        ];
        let chosen = select(&d, &fields).unwrap();
        assert_eq!(chosen.len(), 3, "{:?}", paths(&chosen));
        assert_eq!(chosen[1].path.to_string(), "spec.replicas");
        assert_eq!(chosen[2].class, Class::Restarted);
    }

    #[test]
    fn an_unknown_field_lists_the_drifted_ones() {
        let d = drift();
        let err = select(&d, &["spec.paused".to_owned()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("no drifted field \"spec.paused\""), "{err}");
        assert!(
            err.contains("spec.replicas, spec.template.spec.containers[name=web].env[name=EXTRA]"),
            "{err}"
        );
    }

    #[test]
    fn autoscaled_replicas_are_never_accepted() {
        let mut d = drift();
        d.items[0].class = Class::Autoscaled;
        let all = select(&d, &[]).unwrap();
        assert!(!paths(&all).contains(&"spec.replicas".to_owned()));
        let err = select(&d, &["spec.replicas".to_owned()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("set by the autoscaler, not drift"), "{err}");
    }

    #[test]
    fn edits_set_live_values_and_remove_what_is_gone_live() {
        let d = drift();
        let edits: Vec<FieldEdit> = d.items.iter().map(field_edit).collect();
        assert_eq!(
            edits[0],
            FieldEdit::Set {
                path: FieldPath::keys(&["spec", "replicas"]),
                value: json!(5)
            }
        );
        assert_eq!(
            edits[1],
            FieldEdit::Set {
                path: FieldPath::keys(&["spec", "template", "spec", "containers"])
                    .item("name", "web")
                    .key("env")
                    .item("name", "EXTRA"),
                value: json!({"name": "EXTRA", "value": "1"})
            }
        );
        assert_eq!(
            edits[2],
            FieldEdit::Remove {
                path: FieldPath::keys(&["spec", "template", "spec", "containers"])
                    .item("name", "web")
                    .key("args"),
            }
        );
    }

    #[test]
    fn message_names_the_scale_subresource_and_m_replaces_the_subject() {
        let d = drift();
        let fields = vec![accepted_field(&d.items[0])];
        let generated = message(&d.key, &fields, None);
        assert!(
            generated.starts_with("kdrift: accept live spec.replicas of deployment/shop/web\n"),
            "{generated}"
        );
        assert!(
            generated
                .contains("spec.replicas: 2 → 5 (by kubectl via /scale at 2026-11-22T03:00:00Z)"),
            "{generated}"
        );
        let custom = message(&d.key, &fields, Some("Keep web at 5 replicas"));
        let mut lines = custom.lines();
        assert_eq!(lines.next(), Some("Keep web at 5 replicas"));
        assert!(custom.contains("spec.replicas: 2 → 5"), "{custom}");
    }

    #[test]
    fn the_view_offers_drift_checked_and_a_restart_unchecked_never_autoscaled() {
        let mut d = drift();
        d.items[0].class = Class::Autoscaled;
        let offered: Vec<(String, bool)> = offered(&d)
            .into_iter()
            .map(|(item, checked)| (item.path.to_string(), checked))
            .collect();
        assert_eq!(
            offered,
            [
                (
                    "spec.template.spec.containers[name=web].env[name=EXTRA]".to_owned(),
                    true
                ),
                (
                    "spec.template.spec.containers[name=web].args".to_owned(),
                    true
                ),
                (
                    "spec.template.metadata.annotations[\"kubectl.kubernetes.io/restartedAt\"]"
                        .to_owned(),
                    false
                ),
            ]
        );
    }

    #[test]
    fn a_live_value_that_moved_since_it_was_shown_is_refused() {
        let shown = drift();
        let chosen = vec![shown.items[0].clone(), shown.items[2].clone()];
        assert!(check_still_live(&chosen, &shown).is_ok());

        let mut now = drift();
        now.items[0].live = Some(json!(6));
        let err = check_still_live(&chosen, &now).unwrap_err().to_string();
        assert_eq!(
            err,
            "spec.replicas changed live since it was shown (5 → 6); press a again"
        );

        // Scaled back to the manifest's value: no longer drift at all.
        let mut now = drift();
        now.items.remove(0);
        let err = check_still_live(&chosen, &now).unwrap_err().to_string();
        assert!(err.contains("(5 → 2 again)"), "{err}");
        // A field not chosen may move freely.
        let mut now = drift();
        now.items[1].live = Some(json!({"name": "EXTRA", "value": "2"}));
        assert!(check_still_live(&chosen, &now).is_ok());
    }

    #[test]
    fn outcomes_read_as_one_line() {
        let committed = Outcome::Committed {
            short_hash: "1a2b3c4".into(),
            branch: Some("main".into()),
            subject: "kdrift: accept live spec.replicas of deployment/shop/web".into(),
        };
        assert_eq!(
            committed.describe("shop/web.yaml"),
            "committed 1a2b3c4 on main: kdrift: accept live spec.replicas of deployment/shop/web"
        );
        assert_eq!(
            Outcome::NotARepository.describe("shop/web.yaml"),
            "wrote shop/web.yaml; not in a git repository, so nothing was committed"
        );
    }

    #[test]
    fn the_commit_plan_takes_the_branch_from_the_template() {
        let d = drift();
        let chosen = vec![&d.items[0]];
        let config = Config {
            accept_branch: Some("hotfix/{namespace}-{name}".into()),
            ..Config::default()
        };
        let plan = CommitPlan::new(&d.key, &chosen, None, &config);
        assert_eq!(plan.branch.as_deref(), Some("hotfix/shop-web"));
        assert_eq!(
            plan.subject(),
            "kdrift: accept live spec.replicas of deployment/shop/web"
        );
        assert_eq!(
            CommitPlan::new(&d.key, &chosen, None, &Config::default()).branch,
            None
        );
    }
}
