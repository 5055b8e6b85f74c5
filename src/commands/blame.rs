//! `kdrift blame TYPE/NAME`: the live object with each field's managers and git state
//! ([`crate::drift::blame`]); exit 0, or 2 with the reason.
use std::process::ExitCode;

use crate::cli::{BlameArgs, BlameFormat, CommonArgs};
use crate::drift::blame::{self, Desired};
use crate::drift::check::compare_in;
use crate::drift::{LiveObject, ObjectStatus};
use crate::managed_fields::ManagedFieldsEntry;

use super::context::Context;
use super::target::Target;
use super::{EXIT_ERROR, EXIT_IN_SYNC, on_target};

pub fn run(common: &CommonArgs, args: &BlameArgs) -> ExitCode {
    on_target(common, &args.target, async |ctx, target| {
        run_blame(ctx, target, args.output).await
    })
}

async fn run_blame(ctx: &mut Context, target: &Target, output: BlameFormat) -> u8 {
    ctx.tell_schema_notices();
    let (kind, key) = match ctx.resolve(target).await {
        Ok(found) => found,
        Err(e) => {
            tell!("kdrift: {e}");
            return EXIT_ERROR;
        }
    };
    let ctx = &*ctx;
    let raw = match crate::cluster::read::get_live(&ctx.conn, &kind, &key).await {
        Ok(Some(value)) => value,
        Ok(None) => {
            tell!("kdrift: {key} is not in the cluster");
            return EXIT_ERROR;
        }
        Err(e) => {
            tell!("kdrift: {e}");
            return EXIT_ERROR;
        }
    };
    let entries = match ManagedFieldsEntry::read(&raw) {
        Ok(entries) => entries,
        Err(e) => {
            tell!("kdrift: {key}: its managedFields cannot be read: {e}");
            return EXIT_ERROR;
        }
    };
    let live = match LiveObject::from_value(raw.clone(), &ctx.schemas) {
        Ok(live) => live,
        Err(e) => {
            tell!("kdrift: live {key}: {e}");
            return EXIT_ERROR;
        }
    };
    let manifest = ctx.index.get(&key);
    let drift = manifest.map(|m| compare_in(&ctx.index, m, &live));
    if let Some(d) = &drift
        && let ObjectStatus::Error(message) = &d.status
    {
        tell!("kdrift: {key}: cannot compare with git: {message}");
    }
    let desired = match (manifest, &drift) {
        (Some(m), Some(d)) if !matches!(d.status, ObjectStatus::Error(_)) => Some(Desired {
            manifest: m.body.root(),
            drift: d,
        }),
        _ => None,
    };
    match manifest {
        Some(m) => tell!(
            "kdrift: {key}: git state from {}:{}",
            m.file.display(),
            m.line
        ),
        None => tell!("kdrift: {key}: no manifest found, so no git state"),
    }
    let found = blame::blame(live.schema, &blame::shown(raw), &entries, desired.as_ref());
    // kdrift's reverts of it, which its managedFields credit to the manager applied as.
    let traces = match crate::cluster::revert::traces(&ctx.conn.client, &key).await {
        Ok(traces) => traces,
        Err(e) => {
            tell!("kdrift: {key}: its reverts by kdrift could not be read: {e}");
            Vec::new()
        }
    };
    match output {
        BlameFormat::Text => {
            print!("{}", crate::text::printable(&blame::text(&found)));
            for trace in &traces {
                say!(
                    "# reverted {}: {}",
                    trace.time,
                    crate::text::one_line(&trace.message)
                );
            }
        }
        BlameFormat::Json => {
            let mut value = blame::json(&found);
            value["object"] = serde_json::json!(key.to_string());
            value["reverts"] = traces
                .iter()
                .map(|t| serde_json::json!({"time": t.time, "message": t.message}))
                .collect();
            say!(
                "{}",
                serde_json::to_string_pretty(&value).unwrap_or_default()
            );
        }
    }
    EXIT_IN_SYNC
}
