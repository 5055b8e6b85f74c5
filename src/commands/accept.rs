//! `kdrift accept TYPE/NAME`: write an object's live values into its manifest file (only the
//! lines of the drifted fields change) and commit that file alone.
//!
//! The live object is read again here, so the value accepted is the one the cluster has now.
//! When the manifest file already has uncommitted changes of the user's, accept refuses before
//! writing anything: committing the file would put the user's unfinished edits into a commit
//! named after the hotfix, and writing without committing would mix the two in the working tree.
//! The user commits or stashes their changes first, or passes `--no-commit` to only write the
//! file (their changes stay, the accepted lines are added to them).
use std::path::Path;
use std::process::ExitCode;

use crate::cli::{AcceptArgs, CommonArgs};
use crate::drift::report::short_value;
use crate::drift::{self, Class, DriftItem, LiveObject, ObjectDrift, ObjectStatus};
use crate::git::{self, AcceptedField, CommitOutcome};
use crate::manifest::ManifestObject;
use crate::manifest::edit::{FieldEdit, FieldPath, PathStep, PreparedEdit};

use super::context::{self, Context};
use super::target::{self, Target};
use super::{EXIT_ERROR, EXIT_IN_SYNC, block_on, colour_stdout};

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
pub fn message(
    key: &crate::manifest::ObjectKey,
    fields: &[AcceptedField],
    subject: Option<&str>,
) -> String {
    let generated = git::commit_message(&key.kind, &key.namespace, &key.name, fields);
    match subject {
        Some(subject) => {
            let body = generated.split_once('\n').map_or("", |(_, body)| body);
            format!("{}\n{body}", subject.trim_end())
        }
        None => generated,
    }
}

pub fn run(common: &CommonArgs, args: &AcceptArgs) -> ExitCode {
    if let Some(from) = crate::user_config::ReadOnlyFrom::of(common) {
        eprintln!("kdrift: {}", from.refusal("accept"));
        return ExitCode::from(EXIT_ERROR);
    }
    let target = match target::parse(&args.target) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("kdrift: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    block_on(async {
        let ctx = match context::open(common).await {
            Ok(ctx) => ctx,
            Err(e) => {
                eprintln!("kdrift: {e}");
                return EXIT_ERROR;
            }
        };
        match live_drift(&ctx, &target).await {
            Ok((manifest, drift)) => accept(&ctx, manifest, &drift, args),
            Err(e) => {
                eprintln!("kdrift: {e}");
                EXIT_ERROR
            }
        }
    })
}

/// The object's manifest and its drift against the live object as it is now.
async fn live_drift<'c>(
    ctx: &'c Context,
    target: &Target,
) -> Result<(&'c ManifestObject, ObjectDrift), Box<dyn std::error::Error>> {
    let key = target.key(&ctx.default_namespace);
    let manifest = ctx.index.get(&key).ok_or_else(|| AcceptError::NoManifest {
        key: key.to_string(),
        root: ctx.index.root.display().to_string(),
    })?;
    let live = context::get_live(ctx, target.kind, &key)
        .await?
        .ok_or_else(|| AcceptError::NotLive {
            key: key.to_string(),
        })?;
    let live = LiveObject::from_value(live).map_err(|e| AcceptError::NotComparable {
        key: key.to_string(),
        message: e.to_string(),
    })?;
    let drift = drift::compare(manifest, &live, &ctx.index.config);
    if let ObjectStatus::Error(message) = &drift.status {
        return Err(AcceptError::NotComparable {
            key: key.to_string(),
            message: message.clone(),
        }
        .into());
    }
    Ok((manifest, drift))
}

/// `+` green and `-` red on a terminal, as git colours a diff.
fn paint_diff(diff: &str, colour: bool) -> String {
    if !colour {
        return diff.to_owned();
    }
    diff.lines()
        .map(|line| {
            if line.starts_with("+++") || line.starts_with("---") {
                format!("\x1b[1m{line}\x1b[0m\n")
            } else if line.starts_with('+') {
                format!("\x1b[32m{line}\x1b[0m\n")
            } else if line.starts_with('-') {
                format!("\x1b[31m{line}\x1b[0m\n")
            } else if line.starts_with("@@") {
                format!("\x1b[36m{line}\x1b[0m\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect()
}

fn accept(ctx: &Context, manifest: &ManifestObject, drift: &ObjectDrift, args: &AcceptArgs) -> u8 {
    let key = &drift.key;
    let items = match select(drift, &args.fields) {
        Ok(items) => items,
        Err(e) => {
            eprintln!("kdrift: {e}");
            return EXIT_ERROR;
        }
    };
    if args.fields.is_empty() {
        for item in drift.items.iter().filter(|i| i.class == Class::Restarted) {
            eprintln!(
                "left out {} (a `kubectl rollout restart`): name it with --field to accept it",
                item.path
            );
        }
    }
    if items.is_empty() {
        println!(
            "{key} is in sync with {}:{}: nothing to accept",
            manifest.file.display(),
            manifest.line
        );
        return EXIT_IN_SYNC;
    }
    let root = &ctx.index.root;
    let file: &Path = &manifest.file;
    let shown = file
        .strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string();
    if !args.no_commit {
        match git::has_uncommitted_changes(root, file) {
            Ok(false) => {}
            Ok(true) => {
                eprintln!("kdrift: {}", AcceptError::DirtyFile { file: shown });
                return EXIT_ERROR;
            }
            Err(e) => {
                eprintln!("kdrift: {e}; nothing was written");
                return EXIT_ERROR;
            }
        }
    }
    let edits: Vec<FieldEdit> = items.iter().map(|item| field_edit(item)).collect();
    let prepared = match PreparedEdit::new(file, manifest.document, &edits) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("kdrift: {e}; nothing was written");
            return EXIT_ERROR;
        }
    };
    if prepared.is_noop() {
        println!("{shown} already says what is live: nothing to write");
        return EXIT_IN_SYNC;
    }
    print!("{}", paint_diff(&prepared.diff(&shown), colour_stdout()));
    if let Err(e) = prepared.write(root) {
        eprintln!("kdrift: {e}; nothing was written");
        return EXIT_ERROR;
    }
    let fields: Vec<AcceptedField> = items.iter().map(|item| accepted_field(item)).collect();
    if args.no_commit {
        println!("wrote {shown} (--no-commit: not committed)");
        return EXIT_IN_SYNC;
    }
    let message = message(key, &fields, args.message.as_deref());
    let branch = ctx
        .index
        .config
        .accept_branch
        .as_deref()
        .map(|template| git::branch_name(template, &key.kind, &key.namespace, &key.name));
    match git::commit_file(root, file, &message, branch.as_deref()) {
        Ok(CommitOutcome::Committed { short_hash, branch }) => {
            let subject = message.lines().next().unwrap_or_default();
            match branch {
                Some(branch) => println!("committed {short_hash} on {branch}: {subject}"),
                None => println!("committed {short_hash} (detached HEAD): {subject}"),
            }
            EXIT_IN_SYNC
        }
        Ok(CommitOutcome::NotARepository) => {
            println!("wrote {shown}; not in a git repository, so nothing was committed");
            EXIT_IN_SYNC
        }
        Err(e) => {
            eprintln!("kdrift: {e}");
            EXIT_ERROR
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;
    use crate::drift::{Attribution, DriftPath};
    use crate::manifest::ObjectKey;

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
}
