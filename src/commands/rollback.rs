//! `kdrift rollback TYPE/NAME [--to-revision N] [--dry-run] [--yes] [--wait]`: a Deployment back
//! on an earlier revision, in git and in the cluster. The plan says the template fields that
//! change and what is done, by where the bad values came from (see
//! [`crate::revert::rollback::Origin`]):
//! - git brought them (the manifest holds the current revision's values): a commit that writes
//!   the target revision's values where git sets them (accept's comment-keeping edit of the
//!   file, or of a kustomize root's overlay, patch or base, proved by rendering) and names
//!   the commits that brought the bad ones (`git blame` of the lines), then the cluster as a
//!   revert of those fields applies it;
//! - out of band (the manifest holds the target's values): the cluster alone, a revert of those
//!   fields; git untouched;
//! - no manifest: the cluster alone, the pod template put back as `kubectl rollout undo` does;
//! - a Helm release's object: the release through the user's `helm rollback`.
//!
//! Exit codes as revert's: 0 rolled back (or a dry run shown, or nothing to do), 1 not rolled
//! back by the operator's choice, or a followed rollout that stuck or did not end in time, 2 an
//! error or a refusal.
use std::io::IsTerminal;
use std::process::ExitCode;

use crate::cli::{CommonArgs, RollbackArgs};
use crate::cluster::revert::{Reverter, Scope};
use crate::cluster::rollback::Followed;
use crate::drift::LiveObject;
use crate::manifest::{ManifestObject, ObjectKey};
use crate::revert::rollback::{self as plan, Origin, Revision};

use super::context::Context;
use super::revert::ask;
use super::{EXIT_DRIFT, EXIT_ERROR, EXIT_IN_SYNC, colour_stdout, on_target};

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
        let how = How {
            to: args.to_revision,
            revision: 0,
            dry_run: args.dry_run,
            ask_first,
        };
        let code = match ctx.index.get(&key).and_then(|m| m.helm.clone()) {
            Some(release) => {
                with_helm(ctx, &key, &release, &how, common.kubeconfig.as_deref()).await
            }
            None => rollback(ctx, &key, how).await,
        };
        match wait {
            Some(limit) if code == EXIT_IN_SYNC && !args.dry_run => follow(ctx, &key, limit).await,
            _ => code,
        }
    })
}

/// How the rollback was asked for.
struct How {
    to: Option<u64>,
    /// The revision rolled back to, once known.
    revision: u64,
    dry_run: bool,
    ask_first: bool,
}

async fn rollback(ctx: &mut Context, key: &ObjectKey, mut how: How) -> u8 {
    ctx.tell_schema_notices();
    let object = key.to_string();
    if key.group != "apps" || key.kind != "Deployment" {
        tell!(
            "kdrift: {object}: rollback knows Deployments (their ReplicaSets are the revisions); for a StatefulSet or DaemonSet use kubectl rollout undo"
        );
        return EXIT_ERROR;
    }
    let ctx = &*ctx;
    let (workload, sets) = match crate::cluster::rollback::read(&ctx.conn.client, key).await {
        Ok(read) => read,
        Err(e) => {
            tell!("kdrift: {e}");
            return EXIT_ERROR;
        }
    };
    let revisions = plan::revisions_of(&workload, &sets);
    let target = match plan::target(&object, &workload, &revisions, how.to) {
        Ok(target) => target,
        Err(e) => {
            tell!("kdrift: {e}");
            return EXIT_ERROR;
        }
    };
    let current = plan::revision_number(&workload).unwrap_or_default();
    how.revision = target.number;
    let how = &how;
    let on_target = plan::on_revision(&workload, target);
    let (live, target_live) = match (
        LiveObject::from_value(workload.clone(), &ctx.schemas),
        LiveObject::from_value(on_target.clone(), &ctx.schemas),
    ) {
        (Ok(live), Ok(target_live)) => (live, target_live),
        (Err(e), _) | (_, Err(e)) => {
            tell!("kdrift: {object} cannot be read: {e}");
            return EXIT_ERROR;
        }
    };
    let config = &ctx.index.config;
    let changed = plan::changes(key, &on_target, &live, config);
    if changed.is_empty() {
        say!(
            "{object}: revision {}'s pod template is the one live: nothing to roll back",
            target.number
        );
        return EXIT_IN_SYNC;
    }
    say!(
        "Roll back {object} from revision {current} to revision {} ({}):",
        target.number,
        target.name
    );
    let target_drift = crate::drift::compare_values(key, &on_target, &live, config);
    for item in target_drift.items.iter().filter(|i| plan::in_template(i)) {
        say!(
            "  {}  {} → {}",
            item.path,
            crate::drift::report::short_value(item.live.as_ref()),
            crate::drift::report::short_value(item.manifest.as_ref())
        );
    }
    let Some(manifest) = ctx.index.get(key) else {
        return without_manifest(ctx, key, target, how).await;
    };
    if manifest.chart.is_some() {
        tell!(
            "kdrift: {object} is rendered from a chart of the checkout whose release is not in the cluster: nothing to roll back through helm"
        );
        return EXIT_ERROR;
    }
    match plan::origin(manifest, &live, &target_live, &changed, config) {
        Origin::OutOfBand(paths) => {
            say!(
                "the change was out of band: git already holds revision {}'s values ({}); the cluster alone is rolled back, git is not touched",
                target.number,
                crate::app::revert::place(manifest)
            );
            cluster_half(ctx, manifest, paths, how).await
        }
        Origin::Git(drift) => git_half(ctx, manifest, &target_live, drift, changed, how).await,
        Origin::Neither(paths) => {
            tell!(
                "kdrift: git holds neither revision {current}'s nor revision {}'s value of {} ({}): edit the manifest to the value wanted, then kdrift revert {object}",
                target.number,
                paths.join(", "),
                crate::app::revert::place(manifest)
            );
            EXIT_ERROR
        }
    }
}

/// A Helm release's object: the release back on its previous revision (or `--to-revision`, as
/// `helm history` numbers them) through the user's `helm rollback`, after confirmation. Git is
/// not edited: where a chart of the checkout renders the release, its values still say the
/// rolled-back ones, and that is said.
async fn with_helm(
    ctx: &Context,
    key: &ObjectKey,
    release: &crate::helm::Release,
    how: &How,
    kubeconfig: Option<&std::path::Path>,
) -> u8 {
    let args = crate::helm::rollback::args(
        &release.name,
        &release.namespace,
        how.to,
        kubeconfig,
        &ctx.conn.context,
    );
    let to = how.to.map_or_else(
        || "its previous revision".to_owned(),
        |n| format!("revision {n}"),
    );
    say!(
        "{key} comes from {}: the release is rolled back to {to} through helm: helm {}",
        release.source(),
        args.join(" ")
    );
    match ctx.index.chart_object(key) {
        Some(chart) => {
            let values = chart
                .chart
                .as_ref()
                .and_then(|spec| spec.values_target())
                .map_or_else(
                    || "its values".to_owned(),
                    |file| crate::accept::shown_path(&ctx.index.root, &file),
                );
            say!(
                "git still holds the values rolled back: {} renders revision {}'s; after the rollback check shows them as a pending upgrade: put the release's values (helm get values {} -n {}) into {values} so that the next helm upgrade does not bring them back",
                chart.file.display(),
                release.revision,
                release.name,
                release.namespace
            );
        }
        None => say!("no chart of the checkout renders the release: git is not touched"),
    }
    if how.dry_run {
        say!("dry run: nothing was changed");
        return EXIT_IN_SYNC;
    }
    if how.ask_first && !confirmed(&format!("Roll back release {}? [y/N] ", release.name)) {
        tell!("not rolled back");
        return EXIT_DRIFT;
    }
    match tokio::task::spawn_blocking(move || crate::helm::rollback::run(&args)).await {
        Ok(Ok(said)) => {
            say!("{said}");
            EXIT_IN_SYNC
        }
        Ok(Err(e)) => {
            tell!("kdrift: {e}");
            EXIT_ERROR
        }
        Err(e) => {
            tell!("kdrift: the rollback stopped: {e}");
            EXIT_ERROR
        }
    }
}

/// No manifest describes the workload: its pod template put back as `kubectl rollout undo`
/// does (said as such), after the server's dry run.
async fn without_manifest(ctx: &Context, key: &ObjectKey, target: &Revision, how: &How) -> u8 {
    let client = &ctx.conn.client;
    say!(
        "no manifest describes {key}: the cluster alone is rolled back, as kubectl rollout undo does it"
    );
    if let Err(e) = crate::cluster::rollback::undo(client, key, &target.template, true).await {
        tell!("kdrift: {e}");
        return EXIT_ERROR;
    }
    if how.dry_run {
        say!("dry run: nothing was changed");
        return EXIT_IN_SYNC;
    }
    if how.ask_first && !confirmed(&format!("Roll back {key}? [y/N] ")) {
        tell!("not rolled back");
        return EXIT_DRIFT;
    }
    match crate::cluster::rollback::undo(client, key, &target.template, false).await {
        Ok(()) => {
            say!("rolled back {key} to revision {}", target.number);
            EXIT_IN_SYNC
        }
        Err(e) => {
            tell!("kdrift: {e}");
            EXIT_ERROR
        }
    }
}

fn confirmed(question: &str) -> bool {
    ask(
        question,
        &mut std::io::stdin().lock(),
        &mut std::io::stderr(),
    )
}

/// The cluster half: a revert of the template fields `paths` to `manifest` (as it is in the
/// checkout, after the git half when there is one), previewed by the server.
async fn cluster_half(
    ctx: &Context,
    manifest: &ManifestObject,
    paths: Vec<String>,
    how: &How,
) -> u8 {
    let reverter =
        match Reverter::new(&ctx.conn.client, manifest, &ctx.index.config, &ctx.schemas).await {
            Ok(r) => r.scoped(Scope {
                fields: paths,
                ..Scope::default()
            }),
            Err(e) => {
                tell!("kdrift: {e}");
                return EXIT_ERROR;
            }
        };
    let preview = match reverter.preview().await {
        Ok(p) => p,
        Err(e) => {
            tell!("kdrift: {e}");
            return EXIT_ERROR;
        }
    };
    print!("{}", preview.diff(colour_stdout()));
    if how.dry_run {
        say!("dry run: nothing was changed");
        return EXIT_IN_SYNC;
    }
    if how.ask_first && !confirmed(&format!("Roll back {}? [y/N] ", preview.object)) {
        tell!("not rolled back");
        return EXIT_DRIFT;
    }
    match reverter.execute(&preview).await {
        Ok(outcome) => {
            say!(
                "rolled back {}: applied {} as field manager \"{}\"",
                preview.object,
                crate::app::revert::place(manifest),
                crate::cluster::revert::field_manager_for(manifest)
            );
            let who = crate::cluster::revert::who(&ctx.conn.context);
            if let Err(e) = reverter
                .record(
                    &preview,
                    &outcome,
                    &who,
                    &format!("rollback to revision {}", how.revision),
                )
                .await
            {
                tell!(
                    "note: the rollback's trace (an event on {}) was not recorded: {e}",
                    preview.object
                );
            }
            EXIT_IN_SYNC
        }
        Err(e) => {
            tell!("kdrift: {e}");
            EXIT_ERROR
        }
    }
}

/// The git half: the manifest's values of the changed fields written back to the target
/// revision's in one commit naming the commits that brought the bad values (a plain file, or
/// where a kustomize root sets them, proved by rendering), then the cluster half from the
/// manifest as edited. A dry run shows the commit's diff and the server's dry run of the cluster
/// half and changes nothing.
async fn git_half(
    ctx: &Context,
    manifest: &ManifestObject,
    target: &LiveObject,
    drift: crate::drift::ObjectDrift,
    changed: Vec<String>,
    how: &How,
) -> u8 {
    let root = &ctx.index.root;
    let key = &manifest.key;
    let edits = match edits_of(ctx, manifest, &drift, target) {
        Ok(edits) => edits,
        Err(e) => {
            tell!("kdrift: {e}");
            return EXIT_ERROR;
        }
    };
    let mut bad: Vec<(String, String)> = Vec::new();
    for edit in &edits {
        if let Err(e) = crate::accept::ensure_clean(root, &edit.file) {
            tell!("kdrift: {e}");
            return EXIT_ERROR;
        }
        let lines = changed_lines(&edit.before, &edit.after);
        for found in crate::git::blame_lines(root, &edit.file, &lines).unwrap_or_default() {
            if !bad.contains(&found) {
                bad.push(found);
            }
        }
    }
    let shown: Vec<String> = edits
        .iter()
        .map(|e| crate::accept::shown_path(root, &e.file))
        .collect();
    say!(
        "git brought the values rolled back: {} holds them",
        shown.join(", ")
    );
    for (hash, subject) in &bad {
        say!("  from commit {hash} {subject}");
    }
    for (edit, shown) in edits.iter().zip(&shown) {
        print!(
            "{}",
            super::accept::paint_diff(&edit.diff(shown), colour_stdout())
        );
    }
    let edited = plan::edited(manifest, &drift);
    if how.dry_run {
        // The cluster half's dry run, from the manifest as the commit would leave it.
        let how = How {
            dry_run: true,
            ask_first: false,
            ..*how
        };
        return cluster_half(ctx, &edited, changed, &how).await;
    }
    if how.ask_first
        && !confirmed(&format!(
            "Commit the rollback of {} and roll back {key}? [y/N] ",
            shown.join(", ")
        ))
    {
        tell!("not rolled back");
        return EXIT_DRIFT;
    }
    let mut commit = crate::accept::CommitPlan::new(key, &[], None, &ctx.index.config);
    commit.message = plan::commit_message(key, how.revision, &drift, &bad);
    let code =
        super::accept::write_and_commit_interruptible(root, edits, Some(commit), shown.join(", "))
            .await;
    if code != EXIT_IN_SYNC {
        return code;
    }
    let how = How {
        dry_run: false,
        ask_first: false,
        ..*how
    };
    cluster_half(ctx, &edited, changed, &how).await
}

/// The edits that write `drift`'s target values (each item's `live`) where git sets them: the
/// manifest's own file, or a kustomize root's overlay, patch or base — proved by rendering the
/// root, as accept proves its edits.
fn edits_of(
    ctx: &Context,
    manifest: &ManifestObject,
    drift: &crate::drift::ObjectDrift,
    target: &LiveObject,
) -> Result<Vec<crate::manifest::edit::PreparedEdit>, String> {
    let items: Vec<&crate::drift::DriftItem> = drift.items.iter().collect();
    if manifest.rendered.is_none() {
        let file = manifest.file.to_path_buf();
        let bytes =
            std::fs::read(&file).map_err(|e| format!("{}: cannot read it: {e}", file.display()))?;
        let hash = crate::manifest::edit::ContentHash::of(&bytes);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        return crate::accept::prepare(&file, &text, hash, manifest.document(), &items)
            .map(|edit| vec![edit])
            .map_err(|e| e.to_string());
    }
    let read = |file: &std::path::Path| std::fs::read_to_string(file).ok();
    let edits: Vec<_> = crate::accept::kustomize::plan(&ctx.index, manifest, &items, &read)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|e| !e.is_noop())
        .collect();
    let owned: Vec<crate::drift::DriftItem> = drift.items.clone();
    let notes = crate::accept::kustomize::prove(&ctx.index, manifest, &edits, &owned, target)
        .map_err(|e| e.to_string())?;
    for note in notes {
        say!("{note}");
    }
    Ok(edits)
}

/// The 1-based lines of `before` that `after` changes or removes.
fn changed_lines(before: &str, after: &str) -> Vec<usize> {
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

/// `--wait`: the rollback's rollout followed until it completes or sticks, or the wait ends.
async fn follow(ctx: &Context, key: &ObjectKey, limit: std::time::Duration) -> u8 {
    say!("following the rollout of {key}…");
    match crate::cluster::rollback::follow(&ctx.conn.client, key, limit).await {
        Ok(Followed::Complete) => {
            say!("{key}: rollout complete");
            EXIT_IN_SYNC
        }
        Ok(Followed::Stuck(why)) => {
            tell!("{key}: the rollout is stuck: {why}");
            EXIT_DRIFT
        }
        Ok(Followed::TimedOut(progress)) => {
            tell!("{key}: still rolling out after the wait ({progress})");
            EXIT_DRIFT
        }
        Err(e) => {
            tell!("kdrift: {e}");
            EXIT_ERROR
        }
    }
}
