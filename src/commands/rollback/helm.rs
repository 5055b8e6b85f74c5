//! A Helm release's object rolled back: the release through the user's `helm rollback`, and,
//! when a chart of the checkout renders the release and its values file held the values rolled
//! back, one commit of that file that makes git render the revision gone back to — found and
//! proved as accept finds and proves a chart's values (`accept::helm::plan_and_prove`).
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use super::{Action, Inputs, Plan, changed_lines, trace};
use crate::accept::CommitPlan;
use crate::drift::{DriftItem, LiveObject};
use crate::manifest::ObjectKey;
use crate::manifest::edit::PreparedEdit;

/// The git half of a release's rollback: the values file's edit and its commit.
#[derive(Debug, Clone)]
pub struct GitHalf {
    pub edits: Vec<PreparedEdit>,
    pub commit: CommitPlan,
}

/// What the plan of the git half found.
enum Git {
    /// No chart of the checkout renders the release.
    NoChart,
    /// Git's values already render the target revision's object.
    InStep(u64),
    /// The edit, and the plan's lines for it.
    Edit(GitHalf, Vec<String>),
}

/// Plans the rollback of `release`, whose object `key` is, to revision `to` (its previous when
/// `None`, as `helm rollback` goes): the `helm rollback` command, and the values file's commit
/// when git held the values rolled back (when that cannot be planned, why, and that git still
/// holds them).
pub(super) async fn plan(
    inputs: &Inputs<'_>,
    key: &ObjectKey,
    release: &crate::helm::Release,
    to: Option<u64>,
) -> Plan {
    let args = crate::helm::rollback::args(
        &release.name,
        &release.namespace,
        to,
        inputs.kubeconfig,
        inputs.context,
    );
    let target = to.map_or_else(
        || "its previous revision".to_owned(),
        |n| format!("revision {n}"),
    );
    let mut lines = vec![format!(
        "{key} comes from {}: the release is rolled back to {target} through helm: helm {}",
        release.source(),
        args.join(" ")
    )];
    let question = format!("Roll back release {}? [y/N] ", release.name);
    let git = match git_half(inputs, key, release, to).await {
        Ok(Git::NoChart) => {
            lines.push("no chart of the checkout renders the release: git is not touched".into());
            None
        }
        Ok(Git::InStep(revision)) => {
            lines.push(format!(
                "git's values already render revision {revision}'s {key}: git is not touched"
            ));
            None
        }
        Ok(Git::Edit(half, said)) => {
            lines.extend(said);
            Some(half)
        }
        Err(why) => {
            lines.push(format!(
                "git still holds the values rolled back ({why}): after the rollback check shows them as a pending upgrade; put the release's values (helm get values {} -n {}) into the values file so that the next helm upgrade does not bring them back",
                release.name, release.namespace
            ));
            None
        }
    };
    let question = match &git {
        Some(half) => format!(
            "Roll back release {} and commit {}? [y/N] ",
            release.name,
            shown_files(inputs, &half.edits).join(", ")
        ),
        None => question,
    };
    Plan {
        key: key.clone(),
        lines,
        action: Action::Helm { args, git },
        question,
    }
}

fn shown_files(inputs: &Inputs<'_>, edits: &[PreparedEdit]) -> Vec<String> {
    edits
        .iter()
        .map(|e| crate::accept::shown_path(&inputs.index.root, &e.file))
        .collect()
}

/// The values file's edit that makes the checkout's chart render `key` as revision `to` of the
/// release has it, proved by rendering; the commits that brought the values it changes.
async fn git_half(
    inputs: &Inputs<'_>,
    key: &ObjectKey,
    release: &crate::helm::Release,
    to: Option<u64>,
) -> Result<Git, String> {
    let Some(chart) = inputs.index.chart_object(key) else {
        return Ok(Git::NoChart);
    };
    let revision = match to {
        Some(n) => n,
        None if release.revision > 1 => release.revision - 1,
        None => return Err(format!("release {} has no earlier revision", release.name)),
    };
    let target = crate::cluster::helm::read_revision(
        inputs.client,
        &release.name,
        &release.namespace,
        revision,
    )
    .await?;
    // Read as the index reads a release (its namespace where an object names none, with the
    // label and annotations helm adds as it applies), then the object picked out.
    let mut names = crate::manifest::tree::Names::default();
    let object = crate::manifest::helm::release_objects(&Arc::new(target), &mut names)
        .objects
        .into_iter()
        .find(|o| o.key == *key)
        .map(|o| o.body.to_value())
        .ok_or_else(|| {
            format!(
                "revision {revision} of release {} has no {key}",
                release.name
            )
        })?;
    let live = LiveObject::from_value(object, inputs.schemas)
        .map_err(|e| format!("revision {revision}'s {key} cannot be read: {e}"))?;
    let drift = crate::drift::check::compare_in(inputs.index, chart, &live);
    let chosen: Vec<&DriftItem> = drift.items.iter().filter(|i| i.class.is_drift()).collect();
    if chosen.is_empty() {
        return Ok(Git::InStep(revision));
    }
    let (edit, notes) = crate::accept::helm::plan_and_prove(inputs.index, chart, &chosen, &live)
        .map_err(|e| e.to_string())?;
    let root = &inputs.index.root;
    crate::accept::ensure_clean(root, &edit.file).map_err(|e| e.to_string())?;
    let lines_changed = changed_lines(&edit.before, &edit.after);
    let bad = crate::git::blame_lines(root, &edit.file, &lines_changed).unwrap_or_default();
    let mut edit = edit;
    let reverts = super::as_revert(root, &mut edit, &bad);
    let shown = crate::accept::shown_path(root, &edit.file);
    let mut said = vec![format!(
        "git brought the values rolled back: {shown} holds them; the commit makes the chart render revision {revision}'s"
    )];
    said.extend(
        bad.iter()
            .map(|(hash, subject)| format!("  from commit {hash} {subject}")),
    );
    if reverts.is_some() {
        said.push(format!(
            "the commit reverts it (as git revert {} would: it changed {shown} alone)",
            bad.first().map_or("", |(hash, _)| hash.as_str())
        ));
    }
    said.extend(notes);
    said.extend(edit.diff(&shown).lines().map(str::to_owned));
    let mut commit = CommitPlan::new(key, &[], None, &inputs.index.config);
    let body = crate::revert::rollback::commit_message(key, revision, &drift, &bad);
    let rest = body.split_once("\n\n").map_or("", |(_, rest)| rest);
    commit.message = format!(
        "kdrift: roll back helm release {} to revision {revision}\n\n{rest}",
        release.name
    );
    if let Some(head) = reverts {
        commit.message = format!("{head}\n\n{}", commit.message);
    }
    Ok(Git::Edit(
        GitHalf {
            edits: vec![edit],
            commit,
        },
        said,
    ))
}

/// Carries out a release's rollback: `helm ARGS`, its trace, then the values file's commit
/// (after helm, so that a rollback helm refused commits nothing).
pub(super) async fn execute(
    inputs: &Inputs<'_>,
    key: &ObjectKey,
    args: &[String],
    git: Option<&GitHalf>,
    interruptible: bool,
) -> Result<Vec<String>, String> {
    let owned = args.to_vec();
    let command = format!("helm {}", args.join(" "));
    let said = tokio::task::spawn_blocking(move || crate::helm::rollback::run(&owned))
        .await
        .map_err(|e| format!("the rollback stopped: {e}"))??;
    let mut lines = vec![said];
    let message = format!(
        "kdrift rollback by {}: {command}",
        crate::cluster::revert::who(inputs.context)
    );
    lines.extend(trace(inputs, key, &Value::Null, &message).await);
    let Some(git) = git else {
        return Ok(lines);
    };
    let root: PathBuf = inputs.index.root.clone();
    let shown = shown_files(inputs, &git.edits).join(", ");
    let (edits, commit) = (git.edits.clone(), git.commit.clone());
    let work = move || crate::accept::write_and_commit(&root, &edits, Some(&commit));
    let done = if interruptible {
        crate::commands::interruptible(work)
            .await
            .map(|(done, _)| done)
    } else {
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| e.to_string())
    };
    let committed = done.and_then(|done| done.map_err(|e| e.to_string()));
    match committed {
        Ok(outcome) => {
            lines.push(outcome.describe(&shown));
            Ok(lines)
        }
        Err(e) => Err(format!(
            "helm rolled the release back, but {shown} was not committed: {e}"
        )),
    }
}
