//! `kdrift diff TYPE/NAME`: one object's drift as an annotated unified diff, coloured on a
//! terminal; exit 0 in sync, 1 drift (or missing from the cluster), 2 error.
use std::process::ExitCode;

use crate::cli::{CommonArgs, DiffArgs};
use crate::drift::check::compare_in;
use crate::drift::{LiveObject, ObjectStatus};

use super::context::Context;
use super::target::Target;
use super::{EXIT_DRIFT, EXIT_ERROR, EXIT_IN_SYNC, colour_stdout, on_target};

pub fn run(common: &CommonArgs, args: &DiffArgs) -> ExitCode {
    on_target(common, &args.target, async |ctx, target| {
        diff(ctx, target, colour_stdout()).await
    })
}

async fn diff(ctx: &mut Context, target: &Target, colour: bool) -> u8 {
    ctx.tell_schema_notices();
    let (kind, key) = match ctx.resolve(target).await {
        Ok(found) => found,
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
    for problem in ctx.index.problems() {
        if *problem.place().0 == *manifest.file {
            tell!("{}: {problem}", problem.label());
        }
    }
    let live = match crate::cluster::read::get_live(&ctx.conn, &kind, &key).await {
        Ok(Some(value)) => value,
        Ok(None) => {
            say!(
                "{key} is missing from the cluster (manifest {}:{})",
                manifest.file.display(),
                manifest.line
            );
            return EXIT_DRIFT;
        }
        Err(e) => {
            tell!("kdrift: {e}");
            return EXIT_ERROR;
        }
    };
    let live = match LiveObject::from_value(live, &ctx.schemas) {
        Ok(live) => live,
        Err(e) => {
            tell!("kdrift: live {key}: {e}");
            return EXIT_ERROR;
        }
    };
    let drift = compare_in(&ctx.index, manifest, &live);
    if let ObjectStatus::Error(message) = &drift.status {
        tell!("kdrift: {key}: {message}");
        return EXIT_ERROR;
    }
    if drift.items.is_empty() {
        tell!(
            "{key} is in sync with {}:{}",
            manifest.file.display(),
            manifest.line
        );
        return EXIT_IN_SYNC;
    }
    print!(
        "{}",
        crate::drift::diff::unified(
            Some(&ctx.index),
            manifest,
            &drift,
            jiff::Timestamp::now(),
            colour
        )
    );
    if drift.drift_count() > 0 {
        EXIT_DRIFT
    } else {
        EXIT_IN_SYNC
    }
}
