//! `kdrift revert TYPE/NAME [--field PATH]… [--dry-run] [--yes]`: show what a revert changes
//! (server-side dry run, live now → live after), ask on a terminal, then put the object back as
//! its manifest says — every drifted field, or those `--field` names; a Helm release object's
//! fields that git already holds are left as they are live unless named.
//!
//! Exit codes: 0 reverted (or a dry run shown, or nothing to revert), 1 not reverted by the
//! operator's choice or fields kept because someone else changed them (drift remains), 2 an error
//! or a refusal (read-only, no terminal to ask on).
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use crate::app::revert::{nothing_to_revert, place};
use crate::cli::{CommonArgs, RevertArgs};
use crate::cluster::revert::{Outcome, Preview, RevertError, Reverter, Scope};
use crate::manifest::ManifestObject;
use crate::user_config::ReadOnlyFrom;

use super::context::Context;
use super::target::Target;
use super::{EXIT_DRIFT, EXIT_ERROR, EXIT_IN_SYNC, colour_stdout, on_target};

/// How the operator confirms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirmation {
    /// `--yes`.
    Given,
    /// Ask on the terminal.
    Ask,
}

/// Why the command refuses before touching the cluster.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("{}", .0.refusal("revert"))]
    ReadOnly(ReadOnlyFrom),
    #[error(
        "refusing to revert without confirmation: stdin is not a terminal to ask on; pass --yes to revert, or --dry-run to only see the preview"
    )]
    NoTerminal,
}

/// The refusals that come before any request: read-only, or nobody to ask and no `--yes`.
pub fn check_allowed(
    readonly: Option<ReadOnlyFrom>,
    args: &RevertArgs,
    terminal: bool,
) -> Result<Confirmation, Refusal> {
    if let Some(from) = readonly {
        return Err(Refusal::ReadOnly(from));
    }
    if args.yes || args.dry_run {
        return Ok(Confirmation::Given);
    }
    if terminal {
        Ok(Confirmation::Ask)
    } else {
        Err(Refusal::NoTerminal)
    }
}

pub fn run(common: &CommonArgs, args: &RevertArgs) -> ExitCode {
    let terminal = std::io::stdin().is_terminal();
    let confirmation = match check_allowed(common.readonly_from(), args, terminal) {
        Ok(c) => c,
        Err(e) => {
            tell!("kdrift: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    on_target(common, &args.target, async |ctx, target| {
        revert(ctx, target, args, confirmation, colour_stdout()).await
    })
}

async fn revert(
    ctx: &mut Context,
    target: &Target,
    args: &RevertArgs,
    confirmation: Confirmation,
    colour: bool,
) -> u8 {
    ctx.tell_schema_notices();
    let key = match ctx.resolve(target).await {
        Ok((_, key)) => key,
        Err(e) => {
            tell!("kdrift: {e}");
            return EXIT_ERROR;
        }
    };
    let ctx = &*ctx;
    let Some(manifest) = ctx.index.get(&key) else {
        tell!("kdrift: {}", ctx.no_manifest(&key));
        return EXIT_ERROR;
    };
    let scope = Scope::of(&ctx.index, manifest, args.fields.clone());
    let reverter =
        match Reverter::new(&ctx.conn.client, manifest, &ctx.index.config, &ctx.schemas).await {
            Ok(r) => r.scoped(scope),
            Err(e) => return fail(&e),
        };
    let mut preview = match reverter.preview().await {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    if preview.changes_nothing() {
        for kept in &preview.kept {
            say!("{}", kept.preview_text());
        }
        match &preview.replicas_note {
            Some(note) => say!(
                "{}",
                crate::app::revert::only_replicas_left(&preview.object, &place(manifest), note)
            ),
            None => say!("{}", nothing_to_revert(&preview.object, &place(manifest))),
        }
        return EXIT_IN_SYNC;
    }
    show(&preview, manifest, colour);
    if args.dry_run {
        say!("dry run: nothing was changed");
        return EXIT_IN_SYNC;
    }
    if confirmation == Confirmation::Ask {
        let stdin = std::io::stdin();
        let question = format!("Revert {} to {}? [y/N] ", preview.object, place(manifest));
        if !ask(&question, &mut stdin.lock(), &mut std::io::stderr()) {
            tell!("not reverted");
            return EXIT_DRIFT;
        }
    }
    let mut outcome = match until_done(reverter.execute(&preview), &preview.object).await {
        Some(outcome) => outcome,
        None => return EXIT_ERROR,
    };
    if let Err(RevertError::ChangedSincePreview { .. }) = &outcome
        && args.yes
    {
        // Nobody looked at the preview before `--yes` confirmed it: re-read and retry once.
        tell!("{} changed meanwhile; previewing again", preview.object);
        preview = match reverter.preview().await {
            Ok(p) => p,
            Err(e) => return fail(&e),
        };
        show(&preview, manifest, colour);
        let again = match until_done(reverter.execute(&preview), &preview.object).await {
            Some(outcome) => outcome,
            None => return EXIT_ERROR,
        };
        outcome = match again {
            Err(RevertError::ChangedSincePreview { object }) => Err(RevertError::Conflict {
                object,
                what: "it changed again between the preview and the apply; nothing was applied"
                    .into(),
            }),
            other => other,
        };
    }
    match outcome {
        Ok(outcome) => {
            let code = report(&preview, manifest, &outcome);
            let who = crate::cluster::revert::who(&ctx.conn.context);
            match reverter.record(&preview, &outcome, &who, "revert").await {
                Ok(()) => say!(
                    "recorded: event Reverted on {} by {who} (kdrift changes shows it)",
                    preview.object
                ),
                Err(e) => tell!(
                    "note: the revert's trace (an event on {}) was not recorded: {e}",
                    preview.object
                ),
            }
            code
        }
        Err(e) => fail(&e),
    }
}

fn show(preview: &Preview, manifest: &ManifestObject, colour: bool) {
    say!("Revert {} to {}:", preview.object, place(manifest));
    print!("{}", preview.diff(colour));
    for removal in &preview.removals {
        say!("{}", removal.preview_text());
    }
    for kept in &preview.kept {
        say!("{}", kept.preview_text());
    }
    if let Some(note) = &preview.replicas_note {
        say!("{note}");
    }
}

/// Runs a revert to its end: a first ctrl-c waits for the step under way (an apply without its
/// removals would be a half-done revert nobody hears of), a second one stops at once and says
/// what may be left (`None`).
async fn until_done<T>(revert: impl std::future::Future<Output = T>, object: &str) -> Option<T> {
    tokio::pin!(revert);
    let mut asked = false;
    loop {
        tokio::select! {
            done = &mut revert => return Some(done),
            interrupted = tokio::signal::ctrl_c() => {
                if interrupted.is_err() {
                    // No signal handling here: just wait for the revert.
                    return Some(revert.await);
                }
                if asked {
                    tell!(
                        "kdrift: stopped during the revert of {object}: it may be half done (the manifest applied, fields added live not removed); run kdrift check or kdrift revert again"
                    );
                    return None;
                }
                asked = true;
                tell!(
                    "kdrift: waiting for the revert of {object} to finish its step, so that it is not left half done (ctrl-c again stops now)"
                );
            }
        }
    }
}

/// Asks `question` on `out`; only `y` or `yes` (any case) confirms.
pub fn ask(question: &str, input: &mut dyn BufRead, out: &mut dyn Write) -> bool {
    let _ = write!(out, "{question}");
    let _ = out.flush();
    let mut answer = String::new();
    if input.read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

fn report(preview: &Preview, manifest: &ManifestObject, outcome: &Outcome) -> u8 {
    say!(
        "reverted {}: applied {} as field manager \"{}\"",
        preview.object,
        place(manifest),
        crate::cluster::revert::field_manager_for(manifest)
    );
    if let Some(release) = &manifest.helm {
        say!("{}", release.revert_note());
    }
    for removal in &outcome.removed {
        say!("{}", removal.done_text());
    }
    if outcome.kept.is_empty() {
        return EXIT_IN_SYNC;
    }
    for removal in &outcome.kept {
        tell!(
            "kept {}: someone else changed it after the preview (run kdrift revert again to see it)",
            removal.label()
        );
    }
    EXIT_DRIFT
}

fn fail(error: &RevertError) -> u8 {
    tell!("kdrift: {error}");
    EXIT_ERROR
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn args(dry_run: bool, yes: bool) -> RevertArgs {
        RevertArgs {
            target: "deploy/web".into(),
            dry_run,
            yes,
            fields: Vec::new(),
        }
    }

    #[test]
    fn refusals_come_before_any_request() {
        let flag = ReadOnlyFrom {
            flag: true,
            file: None,
            bad_file: None,
        };
        assert_eq!(
            check_allowed(Some(flag.clone()), &args(false, true), true),
            Err(Refusal::ReadOnly(flag))
        );
        assert_eq!(
            check_allowed(None, &args(false, false), false),
            Err(Refusal::NoTerminal)
        );
        assert_eq!(
            check_allowed(None, &args(false, false), true),
            Ok(Confirmation::Ask)
        );
        assert_eq!(
            check_allowed(None, &args(false, true), false),
            Ok(Confirmation::Given)
        );
        assert_eq!(
            check_allowed(None, &args(true, false), false),
            Ok(Confirmation::Given)
        );
    }

    #[test]
    fn only_yes_confirms() {
        for (answer, confirmed) in [
            ("y\n", true),
            ("YES\n", true),
            ("\n", false),
            ("n\n", false),
            ("", false),
        ] {
            let mut out = Vec::new();
            let got = ask("Revert? [y/N] ", &mut answer.as_bytes(), &mut out);
            assert_eq!(got, confirmed, "{answer:?}");
            assert_eq!(String::from_utf8(out).unwrap(), "Revert? [y/N] ");
        }
    }
}
