//! `kdrift rollback TYPE/NAME [--to-revision N] [--dry-run] [--yes] [--wait]`: a Deployment back
//! on an earlier revision, in git and in the cluster. The plan ([`plan`], shared with the live
//! view's `u`) says the template fields that change and what is done, by where the bad values
//! came from (see [`crate::revert::rollback::Origin`]):
//! - git brought them (the manifest holds the current revision's values): a commit that writes
//!   the target revision's values where git sets them (accept's comment-keeping edit of the
//!   file, or of a kustomize root's overlay, patch or base, proved by rendering; the bad commit's
//!   revert when it changed that file alone, `as_revert`) and names the commits that brought
//!   the bad ones (`git blame` of the lines), then the cluster as a revert of those fields
//!   applies it — unless the commit was pushed to a GitOps owner that syncs by itself: then the
//!   cluster is the owner's, asked to sync and followed (`follow.rs`);
//! - out of band (the manifest holds the target's values): the cluster alone, a revert of those
//!   fields; git untouched;
//! - no manifest: the cluster alone, the pod template put back as `kubectl rollout undo` does;
//! - a Helm release's object: the release through the user's `helm rollback`, and the values
//!   file's commit when a chart of the checkout renders it (`helm.rs`).
//!
//! [`execute`] carries a plan out. Exit codes as revert's: 0 rolled back (or a dry run shown, or
//! nothing to do), 1 not rolled back by the operator's choice, or a followed rollout that stuck
//! or did not end in time, 2 an error or a refusal.
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::Value;

use crate::accept::CommitPlan;
use crate::cli::{CommonArgs, RollbackArgs};
use crate::cluster::client::Client;
use crate::cluster::revert::{Reverter, Scope};
use crate::drift::{LiveObject, ObjectDrift};
use crate::gitops::Reconciler;
use crate::manifest::edit::PreparedEdit;
use crate::manifest::{ManifestIndex, ManifestObject, ObjectKey};
use crate::revert::rollback::{self as decide, Origin};
use crate::schema::Schemas;

mod follow;
mod helm;

use super::revert::ask;
use super::{EXIT_DRIFT, EXIT_ERROR, EXIT_IN_SYNC, colour_stdout, on_target};
pub use follow::SyncToFollow;

/// What a rollback reads and writes with: the connection, the checkout, the schemas.
pub struct Inputs<'a> {
    pub client: &'a Client,
    pub index: &'a ManifestIndex,
    pub schemas: &'a Schemas,
    /// The kubeconfig context, for `helm rollback`'s `--kube-context`.
    pub context: &'a str,
    /// `--kubeconfig`, for `helm rollback`.
    pub kubeconfig: Option<&'a Path>,
}

/// A rollback planned: what is said before it is confirmed, and what is done.
#[derive(Debug, Clone)]
pub struct Plan {
    pub key: ObjectKey,
    /// What the rollback changes and how, one line each (diff lines start with `+`, `-`, `@@`).
    pub lines: Vec<String>,
    pub action: Action,
    /// The question asked before it is done.
    pub question: String,
}

/// What a confirmed rollback does.
#[derive(Debug, Clone)]
pub enum Action {
    /// Nothing to roll back (the target's template is the one live).
    Nothing,
    /// No manifest: the pod template put back, as `kubectl rollout undo` does.
    Undo { template: Value, revision: u64 },
    /// Out of band: the template fields reverted to `manifest`, as the server's dry run showed.
    Revert {
        manifest: Box<ManifestObject>,
        checked: Checked,
        revision: u64,
    },
    /// From git: the edits committed, then the fields reverted to the manifest as edited.
    Git {
        edits: Vec<PreparedEdit>,
        commit: CommitPlan,
        edited: Box<ManifestObject>,
        checked: Checked,
        revision: u64,
        /// The GitOps owners that apply a new commit of that path by themselves: once the commit
        /// is pushed, the cluster is theirs (asked to look at git now, followed with `--wait`).
        owners: Vec<Reconciler>,
    },
    /// A Helm release: `helm ARGS`, then the values file's commit when git held the values rolled
    /// back.
    Helm {
        args: Vec<String>,
        git: Option<helm::GitHalf>,
    },
}

/// The cluster half as its dry run showed it: carried out as shown, and refused if the object
/// changed meanwhile (as a revert is).
#[derive(Clone)]
pub struct Checked(Reverter, crate::cluster::revert::Preview);

impl std::fmt::Debug for Checked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Checked({})", self.1.object)
    }
}

pub fn run(common: &CommonArgs, args: &RollbackArgs) -> ExitCode {
    if let Some(from) = common.readonly_from() {
        tell!("kdrift: {}", from.refusal("rollback"));
        return ExitCode::from(EXIT_ERROR);
    }
    let ask_first = !(args.yes || args.dry_run);
    if ask_first && !std::io::stdin().is_terminal() {
        tell!(
            "kdrift: refusing to roll back without confirmation: stdin is not a terminal to ask on; pass --yes to roll back, or --dry-run to only see the plan"
        );
        return ExitCode::from(EXIT_ERROR);
    }
    let wait = match args
        .wait
        .then(|| crate::drift::changes::parse_since(&args.timeout))
        .transpose()
    {
        Ok(wait) => wait,
        Err(e) => {
            tell!("kdrift: --timeout: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    on_target(common, &args.target, async |ctx, target| {
        let key = match ctx.resolve(target).await {
            Ok((_, key)) => key,
            Err(e) => {
                tell!("kdrift: {e}");
                return EXIT_ERROR;
            }
        };
        ctx.tell_schema_notices();
        let inputs = Inputs {
            client: &ctx.conn.client,
            index: &ctx.index,
            schemas: &ctx.schemas,
            context: &ctx.conn.context,
            kubeconfig: common.kubeconfig.as_deref(),
        };
        let plan = match plan(&inputs, &key, args.to_revision).await {
            Ok(plan) => plan,
            Err(e) => {
                tell!("kdrift: {e}");
                return EXIT_ERROR;
            }
        };
        let colour = colour_stdout();
        for line in &plan.lines {
            say!("{}", paint(line, colour));
        }
        if matches!(plan.action, Action::Nothing) {
            return EXIT_IN_SYNC;
        }
        if args.dry_run {
            say!("dry run: nothing was changed");
            return EXIT_IN_SYNC;
        }
        if ask_first
            && !ask(
                &plan.question,
                &mut std::io::stdin().lock(),
                &mut std::io::stderr(),
            )
        {
            tell!("not rolled back");
            return EXIT_DRIFT;
        }
        let (code, sync) = match execute(&inputs, &plan, true).await {
            Ok(done) => {
                for line in done.lines {
                    say!("{line}");
                }
                (EXIT_IN_SYNC, done.sync)
            }
            Err((e, code)) => {
                tell!("kdrift: {e}");
                (code, None)
            }
        };
        let Some(limit) = wait.filter(|_| code == EXIT_IN_SYNC) else {
            return code;
        };
        // The owners' sync first (the rollout starts when they apply the commit), then it.
        let started = std::time::Instant::now();
        if let Some(sync) = sync {
            let synced = follow::follow_sync(&ctx.conn.client, &sync, limit).await;
            if synced != EXIT_IN_SYNC {
                return synced;
            }
        }
        let left = limit.saturating_sub(started.elapsed());
        follow::follow(ctx.conn.client.clone(), &key, left).await
    })
}

/// A plan's line, coloured as a diff on a terminal.
fn paint(line: &str, colour: bool) -> String {
    super::accept::paint_diff(line, colour)
        .trim_end_matches('\n')
        .to_owned()
}

/// Plans the rollback of `key` to revision `to` (the previous when `None`): reads the workload
/// and its revisions, decides where the bad values came from, and previews every write (the
/// commit's diff, the server's dry run). Refusals and errors are the `Err` line.
pub async fn plan(inputs: &Inputs<'_>, key: &ObjectKey, to: Option<u64>) -> Result<Plan, String> {
    let object = key.to_string();
    if let Some(release) = inputs.index.get(key).and_then(|m| m.helm.clone()) {
        return Ok(helm::plan(inputs, key, &release, to).await);
    }
    if key.group != "apps"
        || !["Deployment", "StatefulSet", "DaemonSet"].contains(&key.kind.as_ref())
    {
        return Err(format!(
            "{object}: rollback knows Deployments, StatefulSets and DaemonSets (their revisions); it has nothing to roll back here"
        ));
    }
    let (workload, sets) = crate::cluster::rollback::read(inputs.client, key).await?;
    let revisions = decide::revisions_of(&workload, &sets);
    let target = decide::target(&object, &workload, &revisions, to).map_err(|e| e.to_string())?;
    let current = decide::current(&workload, &revisions).unwrap_or_default();
    let on_target = decide::on_revision(&workload, target);
    let read = |value: Value| {
        LiveObject::from_value(value, inputs.schemas)
            .map_err(|e| format!("{object} cannot be read: {e}"))
    };
    let (live, target_live) = (read(workload.clone())?, read(on_target.clone())?);
    let config = &inputs.index.config;
    let changed = decide::changes(key, &on_target, &live, config);
    let mut plan = Plan {
        key: key.clone(),
        lines: Vec::new(),
        action: Action::Nothing,
        question: format!("Roll back {object}? [y/N] "),
    };
    if changed.is_empty() {
        plan.lines.push(format!(
            "{object}: revision {}'s pod template is the one live: nothing to roll back",
            target.number
        ));
        return Ok(plan);
    }
    plan.lines.push(format!(
        "Roll back {object} from revision {current} to revision {} ({}):",
        target.number, target.name
    ));
    let fields = crate::drift::compare_values(key, &on_target, &live, config);
    for item in fields.items.iter().filter(|i| decide::in_template(i)) {
        plan.lines.push(format!(
            "  {}  {} → {}",
            item.path,
            crate::drift::report::short_value(item.live.as_ref()),
            crate::drift::report::short_value(item.manifest.as_ref())
        ));
    }
    let revision = target.number;
    let Some(manifest) = inputs.index.get(key) else {
        plan.lines.push(format!(
            "no manifest describes {object}: the cluster alone is rolled back, as kubectl rollout undo does it"
        ));
        crate::cluster::rollback::undo(inputs.client, key, &target.template, true).await?;
        plan.action = Action::Undo {
            template: target.template.clone(),
            revision,
        };
        return Ok(plan);
    };
    if manifest.chart.is_some() {
        return Err(format!(
            "{object} is rendered from a chart of the checkout whose release is not in the cluster: nothing to roll back through helm"
        ));
    }
    let place = crate::app::revert::place(manifest);
    match decide::origin(manifest, &live, &target_live, &changed, config) {
        Origin::OutOfBand(paths) => {
            plan.lines.push(format!(
                "the change was out of band: git already holds revision {revision}'s values ({place}); the cluster alone is rolled back, git is not touched"
            ));
            let (lines, checked) = cluster_preview(inputs, manifest, &paths).await?;
            plan.lines.extend(lines);
            plan.action = Action::Revert {
                manifest: Box::new(manifest.clone()),
                checked,
                revision,
            };
        }
        Origin::Git(drift) => {
            git_plan(
                inputs,
                &mut plan,
                manifest,
                &target_live,
                drift,
                changed,
                revision,
            )
            .await?;
            let owners = crate::gitops::owners_of_json(workload.get("metadata"));
            let (lines, syncing) = follow::gitops_lines(inputs, owners).await;
            plan.lines.extend(lines);
            if let Action::Git { owners, .. } = &mut plan.action {
                *owners = syncing;
            }
        }
        Origin::Neither(paths) => {
            return Err(format!(
                "git holds neither revision {current}'s nor revision {revision}'s value of {} ({place}): edit the manifest to the value wanted, then kdrift revert {object}",
                paths.join(", ")
            ));
        }
    }
    Ok(plan)
}

/// The server's dry run of reverting `paths` of the workload to `manifest`: its diff lines,
/// and the dry run kept to be carried out.
async fn cluster_preview(
    inputs: &Inputs<'_>,
    manifest: &ManifestObject,
    paths: &[String],
) -> Result<(Vec<String>, Checked), String> {
    let reverter = reverter(inputs, manifest, paths).await?;
    let preview = reverter.preview().await.map_err(|e| e.to_string())?;
    let lines = preview
        .diff_of_rollback()
        .lines()
        .map(str::to_owned)
        .collect();
    Ok((lines, Checked(reverter, preview)))
}

async fn reverter(
    inputs: &Inputs<'_>,
    manifest: &ManifestObject,
    paths: &[String],
) -> Result<Reverter, String> {
    Reverter::new(
        inputs.client,
        manifest,
        &inputs.index.config,
        inputs.schemas,
    )
    .await
    .map(|r| {
        r.scoped(Scope {
            fields: paths.to_vec(),
            ..Scope::default()
        })
    })
    .map_err(|e| e.to_string())
}

/// The git half planned: the edits that write the target's values where git sets them, the
/// commits that brought the bad values, the commit, and the cluster half's dry run from the
/// manifest as the commit leaves it.
async fn git_plan(
    inputs: &Inputs<'_>,
    plan: &mut Plan,
    manifest: &ManifestObject,
    target: &LiveObject,
    drift: ObjectDrift,
    changed: Vec<String>,
    revision: u64,
) -> Result<(), String> {
    let root = &inputs.index.root;
    let key = &manifest.key;
    let (edits, notes) = edits_of(inputs.index, manifest, &drift, target)?;
    let mut bad: Vec<(String, String)> = Vec::new();
    for edit in &edits {
        crate::accept::ensure_clean(root, &edit.file).map_err(|e| e.to_string())?;
        let lines = changed_lines(&edit.before, &edit.after);
        for found in crate::git::blame_lines(root, &edit.file, &lines).unwrap_or_default() {
            if !bad.contains(&found) {
                bad.push(found);
            }
        }
    }
    let mut edits = edits;
    let reverts = match edits.as_mut_slice() {
        [edit] => as_revert(root, edit, &bad),
        _ => None,
    };
    let shown: Vec<String> = edits
        .iter()
        .map(|e| crate::accept::shown_path(root, &e.file))
        .collect();
    plan.lines.push(format!(
        "git brought the values rolled back: {} holds them",
        shown.join(", ")
    ));
    for (hash, subject) in &bad {
        plan.lines.push(format!("  from commit {hash} {subject}"));
    }
    if reverts.is_some() {
        plan.lines.push(format!(
            "the commit reverts it (as git revert {} would: it changed {} alone)",
            bad.first().map_or("", |(hash, _)| hash.as_str()),
            shown.join(", ")
        ));
    }
    plan.lines.extend(notes);
    for (edit, shown) in edits.iter().zip(&shown) {
        plan.lines
            .extend(edit.diff(shown).lines().map(str::to_owned));
    }
    let edited = decide::edited(manifest, &drift);
    let (lines, checked) = cluster_preview(inputs, &edited, &changed).await?;
    plan.lines.extend(lines);
    let mut commit = CommitPlan::new(key, &[], None, &inputs.index.config);
    commit.message = decide::commit_message(key, revision, &drift, &bad);
    if let Some(head) = reverts {
        commit.message = format!("{head}\n\n{}", commit.message);
    }
    plan.question = format!(
        "Commit the rollback of {} and roll back {key}? [y/N] ",
        shown.join(", ")
    );
    plan.action = Action::Git {
        edits,
        commit,
        edited: Box::new(edited),
        checked,
        revision,
        owners: Vec::new(),
    };
    Ok(())
}

/// When the one commit that brought the values rolled back changed this file alone, nothing
/// changed the file since, and the file before that commit means what `edit` writes (the same
/// YAML): `edit` becomes that revert — the file's bytes before the commit, its comments and
/// quoting as they were — and the commit message's head says so as `git revert` says it.
pub(super) fn as_revert(
    root: &Path,
    edit: &mut PreparedEdit,
    bad: &[(String, String)],
) -> Option<String> {
    let [(sha, subject)] = bad else {
        return None;
    };
    let (before, full) = crate::git::revert_of(root, sha, &edit.file)
        .ok()
        .flatten()?;
    // The same documents, whatever the comments, quoting and layout.
    let documents = |text: &str| -> Vec<Value> {
        crate::manifest::kustomize::source::documents_of(text)
            .into_iter()
            .map(|d| d.value)
            .collect()
    };
    if documents(&before) != documents(&edit.after) {
        return None;
    }
    edit.after = before;
    Some(format!(
        "Revert \"{subject}\"\n\nThis reverts commit {full}."
    ))
}

/// The edits that write `drift`'s target values (each item's `live`) where git sets them: the
/// manifest's own file, or a kustomize root's overlay, patch or base — proved by rendering the
/// root, as accept proves its edits (the proof's notes beside them).
fn edits_of(
    index: &ManifestIndex,
    manifest: &ManifestObject,
    drift: &ObjectDrift,
    target: &LiveObject,
) -> Result<(Vec<PreparedEdit>, Vec<String>), String> {
    let items: Vec<&crate::drift::DriftItem> = drift.items.iter().collect();
    if manifest.rendered.is_none() {
        let file = manifest.file.to_path_buf();
        let bytes =
            std::fs::read(&file).map_err(|e| format!("{}: cannot read it: {e}", file.display()))?;
        let hash = crate::manifest::edit::ContentHash::of(&bytes);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        return crate::accept::prepare(&file, &text, hash, manifest.document(), &items)
            .map(|edit| (vec![edit], Vec::new()))
            .map_err(|e| e.to_string());
    }
    let read = |file: &Path| std::fs::read_to_string(file).ok();
    let edits: Vec<_> = crate::accept::kustomize::plan(index, manifest, &items, &read)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|e| !e.is_noop())
        .collect();
    let notes = crate::accept::kustomize::prove(index, manifest, &edits, &drift.items, target)
        .map_err(|e| e.to_string())?;
    Ok((edits, notes))
}

/// Carries out a confirmed plan: what it said, one line each, or why it stopped and the exit
/// code. `interruptible`: a signal during the commit puts the files back (the headless
/// command's ctrl-c; the live view has none).
pub async fn execute(
    inputs: &Inputs<'_>,
    plan: &Plan,
    interruptible: bool,
) -> Result<Done, (String, u8)> {
    let key = &plan.key;
    let failed = |e: String| (e, EXIT_ERROR);
    let lines: Vec<String> = match &plan.action {
        Action::Nothing => Ok(Vec::new()),
        Action::Helm { args, git } => helm::execute(inputs, key, args, git.as_ref(), interruptible)
            .await
            .map_err(failed),
        Action::Undo { template, revision } => {
            let after = crate::cluster::rollback::undo(inputs.client, key, template, false)
                .await
                .map_err(failed)?;
            let mut lines = vec![format!("rolled back {key} to revision {revision}")];
            let message = format!(
                "kdrift rollback to revision {revision} by {}: put back its pod template (no manifest describes the workload: as kubectl rollout undo)",
                crate::cluster::revert::who(inputs.context)
            );
            lines.extend(trace(inputs, key, &after, &message).await);
            Ok(lines)
        }
        Action::Revert {
            manifest,
            checked,
            revision,
        } => cluster_half(inputs, manifest, checked, *revision)
            .await
            .map_err(failed),
        Action::Git {
            edits,
            commit,
            edited,
            checked,
            revision,
            owners,
        } => {
            let root: PathBuf = inputs.index.root.clone();
            let shown: Vec<String> = edits
                .iter()
                .map(|e| crate::accept::shown_path(&root, &e.file))
                .collect();
            let (edits, commit) = (edits.clone(), commit.clone());
            let work = move || crate::accept::write_and_commit(&root, &edits, Some(&commit));
            let done = if interruptible {
                super::interruptible(work).await
            } else {
                tokio::task::spawn_blocking(work)
                    .await
                    .map(|done| (done, None))
                    .map_err(|e| e.to_string())
            };
            let outcome = match done {
                Ok((Ok(outcome), _)) => outcome,
                Ok((Err(e), signal)) => {
                    return Err((e.to_string(), signal.unwrap_or(EXIT_ERROR)));
                }
                Err(e) => return Err(failed(format!("the rollback stopped: {e}"))),
            };
            let mut said = vec![outcome.describe(&shown.join(", "))];
            // Pushed to the branch owners watch that apply new commits by themselves: the
            // cluster is theirs to change (asked to look at git now), and followed with --wait.
            let pushed = match outcome {
                crate::accept::Outcome::Committed {
                    short_hash,
                    pushed: Some(Ok(_)),
                    ..
                } if !owners.is_empty() => short_hash,
                _ => {
                    said.extend(
                        cluster_half(inputs, edited, checked, *revision)
                            .await
                            .map_err(failed)?,
                    );
                    return Ok(Done::said(said));
                }
            };
            said.extend(follow::ask_to_sync(inputs.client, owners).await);
            let names: Vec<String> = owners.iter().map(|o| o.owner.to_string()).collect();
            said.push(format!(
                "the cluster is left to {}: it applies commit {pushed} (kdrift did not write it)",
                names.join(" and ")
            ));
            let message = format!(
                "kdrift rollback to revision {revision} by {}: commit {pushed}, applied by {}",
                crate::cluster::revert::who(inputs.context),
                names.join(" and ")
            );
            said.extend(trace(inputs, key, &Value::Null, &message).await);
            return Ok(Done {
                lines: said,
                sync: Some(SyncToFollow {
                    commit: pushed,
                    owners: owners.clone(),
                }),
            });
        }
    }?;
    Ok(Done::said(lines))
}

/// What a rollback did: its lines, and the commit its GitOps owners are to sync.
#[derive(Debug, Clone)]
pub struct Done {
    pub lines: Vec<String>,
    pub sync: Option<SyncToFollow>,
}

impl Done {
    fn said(lines: Vec<String>) -> Done {
        Done { lines, sync: None }
    }
}

/// A rollback's trace on `key`'s object (an event `kdrift changes` lists); a note when it could
/// not be recorded.
pub(super) async fn trace(
    inputs: &Inputs<'_>,
    key: &ObjectKey,
    after: &Value,
    message: &str,
) -> Option<String> {
    let api_version = inputs.index.get(key).map_or_else(
        || match key.group.as_str() {
            "" => "v1".to_owned(),
            group => format!("{group}/v1"),
        },
        |m| m.api_version.to_string(),
    );
    let who = crate::cluster::revert::who(inputs.context);
    crate::cluster::revert::record_event(inputs.client, (&api_version, key), after, &who, message)
        .await
        .err()
        .map(|e| format!("note: the rollback's trace (an event on {key}) was not recorded: {e}"))
}

/// The cluster half: the revert of the template fields to `manifest` its dry run showed (not
/// made again: an object changed since is refused), and its trace.
async fn cluster_half(
    inputs: &Inputs<'_>,
    manifest: &ManifestObject,
    Checked(reverter, preview): &Checked,
    revision: u64,
) -> Result<Vec<String>, String> {
    let outcome = reverter.execute(preview).await.map_err(|e| e.to_string())?;
    let mut said = vec![format!(
        "rolled back {}: applied {} as field manager \"{}\"",
        preview.object,
        crate::app::revert::place(manifest),
        crate::cluster::revert::field_manager_for(manifest)
    )];
    let who = crate::cluster::revert::who(inputs.context);
    let action = format!("rollback to revision {revision}");
    if let Err(e) = reverter.record(preview, &outcome, &who, &action).await {
        said.push(format!(
            "note: the rollback's trace (an event on {}) was not recorded: {e}",
            preview.object
        ));
    }
    Ok(said)
}

/// The 1-based lines of `before` that `after` changes or removes.
pub(super) fn changed_lines(before: &str, after: &str) -> Vec<usize> {
    let diff = similar::TextDiff::from_lines(before, after);
    diff.ops()
        .iter()
        .flat_map(|op| match op {
            similar::DiffOp::Delete {
                old_index, old_len, ..
            }
            | similar::DiffOp::Replace {
                old_index, old_len, ..
            } => (*old_index..old_index + old_len).map(|i| i + 1).collect(),
            _ => Vec::new(),
        })
        .collect()
}
