//! `kdrift accept TYPE/NAME`: the arguments and the printing around [`crate::accept`], which
//! writes an object's live values into its manifest file (only the lines of the drifted fields
//! change) and commits that file alone.
//!
//! The live object is read here, so the value accepted is the one the cluster has now. A manifest
//! file with uncommitted changes is refused (see [`crate::accept`]); `--no-commit` only writes
//! the file (the user's changes stay, the accepted lines are added to them).
use std::path::Path;
use std::process::ExitCode;

use crate::accept::{AcceptError, CommitPlan, select, shown_path, write_and_commit};
use crate::cli::{AcceptArgs, CommonArgs};
use crate::drift::{self, Class, LiveObject, ObjectDrift, ObjectStatus};
use crate::manifest::ManifestObject;
use crate::manifest::edit::{FieldEdit, PreparedEdit};

use super::context::{self, Context};
use super::target;
use super::{EXIT_ERROR, EXIT_IN_SYNC, block_on_cleaning, colour_stdout};

pub fn run(common: &CommonArgs, args: &AcceptArgs) -> ExitCode {
    if let Some(from) = common.readonly_from() {
        tell!("kdrift: {}", from.refusal("accept"));
        return ExitCode::from(EXIT_ERROR);
    }
    let target = match target::parse(&args.target) {
        Ok(t) => t,
        Err(e) => {
            tell!("kdrift: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    block_on_cleaning(async {
        let mut ctx = match context::open_for(common, Some(&target)).await {
            Ok(ctx) => ctx,
            Err(e) => {
                tell!("kdrift: {e}");
                return EXIT_ERROR;
            }
        };
        ctx.tell_schema_notices();
        let (kind, key) = match ctx.resolve(&target).await {
            Ok(found) => found,
            Err(e) => {
                tell!("kdrift: {e}");
                return EXIT_ERROR;
            }
        };
        match live_drift(&ctx, &kind, &key).await {
            Ok((manifest, drift, live)) if manifest.helm.is_some() || manifest.chart.is_some() => {
                accept_into_values(&ctx, manifest, &drift, &live, args).await
            }
            Ok((manifest, drift, live)) if manifest.rendered.is_some() => {
                accept_rendered(&ctx, manifest, &drift, &live, args).await
            }
            Ok((manifest, drift, _)) => accept(&ctx, manifest, &drift, args).await,
            Err(e) => {
                tell!("kdrift: {e}");
                EXIT_ERROR
            }
        }
    })
}

/// The object's manifest and its drift against the live object as it is now.
async fn live_drift<'c>(
    ctx: &'c Context,
    kind: &crate::cluster::kinds::ServedKind,
    key: &crate::manifest::ObjectKey,
) -> Result<(&'c ManifestObject, ObjectDrift, LiveObject), Box<dyn std::error::Error>> {
    let manifest = ctx
        .index
        .get(key)
        .ok_or_else(|| AcceptError::NoManifest(ctx.no_manifest(key)))?;
    let live = crate::cluster::read::get_live(&ctx.conn, kind, key)
        .await?
        .ok_or_else(|| AcceptError::NotLive {
            key: key.to_string(),
        })?;
    let live =
        LiveObject::from_value(live, &ctx.schemas).map_err(|e| AcceptError::NotComparable {
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
    Ok((manifest, drift, live))
}

/// `+` green and `-` red on a terminal, as git colours a diff.
pub(super) fn paint_diff(diff: &str, colour: bool) -> String {
    let diff = crate::text::printable(diff);
    if !colour {
        return diff.into_owned();
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

/// The fields to accept, with what is left out said; `None` when the selection is refused.
fn chosen<'d>(
    drift: &'d ObjectDrift,
    args: &AcceptArgs,
) -> Option<Vec<&'d crate::drift::DriftItem>> {
    let key = &drift.key;
    let items = match select(drift, &args.fields) {
        Ok(items) => items,
        Err(e) => {
            tell!("kdrift: {e}");
            return None;
        }
    };
    if args.fields.is_empty() {
        let secret = crate::drift::secret::is_secret(key);
        for item in drift.items.iter().filter(|i| {
            secret && i.class.is_drift() && crate::drift::secret::is_secret_path(&i.path)
        }) {
            tell!(
                "left out {} (a Secret's value: it is never written to git)",
                item.path
            );
        }
        for item in drift.items.iter().filter(|i| i.class == Class::Restarted) {
            tell!(
                "left out {} (a `kubectl rollout restart`): name it with --field to accept it",
                item.path
            );
        }
    }
    Some(items)
}

/// Writes `edits` and commits them as `plan` says, on a thread of its own, said as `shown`
/// (the files): a ctrl-c or SIGTERM meanwhile stops git and puts the files back (see
/// [`super::interruptible`]), exit 130 or 143.
pub(super) async fn write_and_commit_interruptible(
    root: &Path,
    edits: Vec<PreparedEdit>,
    plan: Option<CommitPlan>,
    shown: String,
) -> u8 {
    let root = root.to_path_buf();
    let done = super::interruptible(move || write_and_commit(&root, &edits, plan.as_ref())).await;
    match done {
        Ok((Ok(outcome), signal)) => {
            say!("{}", outcome.describe(&shown));
            if signal.is_some() {
                tell!("kdrift: the interrupt came once the accept was done: nothing was undone");
            }
            EXIT_IN_SYNC
        }
        // Interrupted, whatever step it stopped at: the signal's exit code.
        Ok((Err(e), signal)) => {
            tell!("kdrift: {e}");
            signal.unwrap_or(EXIT_ERROR)
        }
        Err(e) => {
            tell!("kdrift: the accept stopped: {e}");
            EXIT_ERROR
        }
    }
}

/// Accept into a Helm chart's values file (see [`crate::accept::helm`]): the value that makes the
/// chart render the live value is found and proved by rendering, then written and committed.
async fn accept_into_values(
    ctx: &Context,
    manifest: &ManifestObject,
    drift: &ObjectDrift,
    live: &LiveObject,
    args: &AcceptArgs,
) -> u8 {
    let key = &drift.key;
    // What git does not say yet: the live object against git's render of the chart (the drift
    // from the release that git already holds is a pending upgrade, nothing to accept).
    let git = crate::accept::helm::chart_object(&ctx.index, manifest)
        .ok()
        .filter(|object| !std::ptr::eq(*object, manifest));
    let against_git = git.map(|object| drift::compare(object, live, &ctx.index.config));
    let drift = against_git.as_ref().unwrap_or(drift);
    let Some(items) = chosen(drift, args) else {
        return EXIT_ERROR;
    };
    if items.is_empty() {
        let what = git.map_or_else(
            || manifest.file.display().to_string(),
            |o| format!("git's chart ({})", o.file.display()),
        );
        say!("{key} is in sync with {what}: nothing to accept");
        return EXIT_IN_SYNC;
    }
    let root = &ctx.index.root;
    let (edit, notes) =
        match crate::accept::helm::plan_and_prove(&ctx.index, manifest, &items, live) {
            Ok(planned) => planned,
            Err(e) => {
                tell!("kdrift: {e}");
                return EXIT_ERROR;
            }
        };
    if edit.is_noop() {
        say!("the values file already says what is live: nothing to write");
        return EXIT_IN_SYNC;
    }
    if !args.no_commit
        && let Err(e) = crate::accept::ensure_clean(root, &edit.file)
    {
        tell!("kdrift: {e}");
        return EXIT_ERROR;
    }
    let shown = shown_path(root, &edit.file);
    print!("{}", paint_diff(&edit.diff(&shown), colour_stdout()));
    for note in notes {
        say!("{note}");
    }
    let plan = (!args.no_commit)
        .then(|| CommitPlan::new(key, &items, args.message.as_deref(), &ctx.index.config));
    let code = write_and_commit_interruptible(root, vec![edit], plan, shown.clone()).await;
    if code == EXIT_IN_SYNC
        && let Some(release) = &manifest.helm
    {
        say!(
            "{} still holds the old value: the next `helm upgrade` with {shown} takes the live one into the release (check shows it as a pending upgrade until then)",
            release.source()
        );
    }
    code
}

/// Accept into a kustomize tree: the edits go where each value is set (see
/// [`crate::accept::kustomize`]), are proved by rendering, then written and committed at once.
async fn accept_rendered(
    ctx: &Context,
    manifest: &ManifestObject,
    drift: &ObjectDrift,
    live: &LiveObject,
    args: &AcceptArgs,
) -> u8 {
    let key = &drift.key;
    let Some(items) = chosen(drift, args) else {
        return EXIT_ERROR;
    };
    if items.is_empty() {
        say!("{key} is in sync with its kustomize root: nothing to accept");
        return EXIT_IN_SYNC;
    }
    if let Err(e) = crate::accept::not_duplicated(&ctx.index, key) {
        tell!("kdrift: {e}");
        return EXIT_ERROR;
    }
    let root = &ctx.index.root;
    let read = |file: &Path| std::fs::read_to_string(file).ok();
    let edits = match crate::accept::kustomize::plan(&ctx.index, manifest, &items, &read) {
        Ok(edits) => edits,
        Err(e) => {
            tell!("kdrift: {e}");
            return EXIT_ERROR;
        }
    };
    let edits: Vec<PreparedEdit> = edits.into_iter().filter(|e| !e.is_noop()).collect();
    if edits.is_empty() {
        say!("the kustomize tree already says what is live: nothing to write");
        return EXIT_IN_SYNC;
    }
    if !args.no_commit {
        for edit in &edits {
            if let Err(e) = crate::accept::ensure_clean(root, &edit.file) {
                tell!("kdrift: {e}");
                return EXIT_ERROR;
            }
        }
    }
    let colour = colour_stdout();
    for edit in &edits {
        print!(
            "{}",
            paint_diff(&edit.diff(&shown_path(root, &edit.file)), colour)
        );
    }
    let owned: Vec<crate::drift::DriftItem> = items.iter().map(|i| (*i).clone()).collect();
    match crate::accept::kustomize::prove(&ctx.index, manifest, &edits, &owned, live) {
        Ok(notes) => {
            for note in notes {
                say!("{note}");
            }
        }
        Err(e) => {
            tell!("kdrift: {e}");
            return EXIT_ERROR;
        }
    }
    let plan = (!args.no_commit)
        .then(|| CommitPlan::new(key, &items, args.message.as_deref(), &ctx.index.config));
    if let Some(first) = edits.first()
        && let Some(warning) = crate::accept::detached_head(root, &first.file, plan.as_ref())
    {
        tell!("kdrift: warning: {warning}");
    }
    let shown: Vec<String> = edits.iter().map(|e| shown_path(root, &e.file)).collect();
    write_and_commit_interruptible(root, edits, plan, shown.join(", ")).await
}

async fn accept(
    ctx: &Context,
    manifest: &ManifestObject,
    drift: &ObjectDrift,
    args: &AcceptArgs,
) -> u8 {
    let key = &drift.key;
    let Some(items) = chosen(drift, args) else {
        return EXIT_ERROR;
    };
    if items.is_empty() {
        say!(
            "{key} is in sync with {}:{}: nothing to accept",
            manifest.file.display(),
            manifest.line
        );
        return EXIT_IN_SYNC;
    }
    if let Err(e) = crate::accept::not_duplicated(&ctx.index, key)
        .and_then(|()| crate::accept::editable(manifest))
    {
        tell!("kdrift: {e}");
        return EXIT_ERROR;
    }
    let root = &ctx.index.root;
    let file: &Path = &manifest.file;
    let shown = shown_path(root, file);
    if !args.no_commit {
        // Refuse before showing a diff that will not be written.
        if let Err(e) = crate::accept::ensure_clean(root, file) {
            tell!("kdrift: {e}");
            if matches!(e, AcceptError::DirtyFile { .. }) {
                tell!("(--no-commit writes the file without committing it)");
            }
            return EXIT_ERROR;
        }
    }
    let edits: Vec<FieldEdit> = items
        .iter()
        .map(|item| crate::accept::field_edit(item))
        .collect();
    let prepared = match PreparedEdit::new(file, manifest.document(), &edits) {
        Ok(p) => p,
        Err(e) => {
            tell!("kdrift: {}", AcceptError::from(e));
            return EXIT_ERROR;
        }
    };
    if prepared.is_noop() {
        say!("{shown} already says what is live: nothing to write");
        return EXIT_IN_SYNC;
    }
    if crate::drift::secret::is_secret(key) {
        say!("(the diff of {shown} is not shown: the file holds a Secret's values)");
    } else {
        print!("{}", paint_diff(&prepared.diff(&shown), colour_stdout()));
    }
    let plan = (!args.no_commit)
        .then(|| CommitPlan::new(key, &items, args.message.as_deref(), &ctx.index.config));
    if let Some(warning) = crate::accept::detached_head(root, file, plan.as_ref()) {
        tell!("kdrift: warning: {warning}");
    }
    write_and_commit_interruptible(root, vec![prepared], plan, shown).await
}
