//! `kdrift check`: every manifest against the cluster, as text or JSON; exit 0 in sync, 1 drift,
//! 2 error. A failed listing or a bad manifest is an error, yet every drift that could be
//! computed is still reported.
use std::process::ExitCode;

use crate::cli::{CheckArgs, CommonArgs, OutputFormat};
use crate::drift::DriftReport;

use super::context::{self, Context, Listing};
use super::target::{KINDS, KindInfo};
use super::{EXIT_ERROR, block_on};

pub fn run(common: &CommonArgs, args: &CheckArgs) -> ExitCode {
    block_on(async {
        let ctx = match context::open(common).await {
            Ok(ctx) => ctx,
            Err(e) => {
                eprintln!("kdrift: {e}");
                return EXIT_ERROR;
            }
        };
        let report = report(&ctx).await;
        match args.output {
            OutputFormat::Text => print!("{}", report.to_text(jiff::Timestamp::now())),
            OutputFormat::Json => match serde_json::to_string_pretty(&report.to_json()) {
                Ok(text) => println!("{text}"),
                Err(e) => {
                    eprintln!("kdrift: cannot write the report as JSON: {e}");
                    return EXIT_ERROR;
                }
            },
        }
        report.exit_code()
    })
}

/// The kinds to list: Deployments always (the live view's kind), the other workload kinds only
/// when a manifest has one, so a cluster without them costs no call.
fn kinds_to_list(ctx: &Context) -> Vec<&'static KindInfo> {
    KINDS
        .iter()
        .filter(|kind| {
            kind.kind == "Deployment"
                || ctx
                    .index
                    .objects()
                    .any(|m| m.key.group == kind.group && m.key.kind == kind.kind)
        })
        .collect()
}

/// Lists each kind once for the scope and builds the drift report.
pub async fn report(ctx: &Context) -> DriftReport {
    let mut listing = Listing::default();
    for kind in kinds_to_list(ctx) {
        context::list_kind(ctx, kind, &mut listing).await;
    }
    let Listing {
        objects,
        errors,
        covered,
    } = listing;
    let coverage = Listing {
        covered,
        ..Listing::default()
    };
    let covers = |key: &crate::manifest::ObjectKey| coverage.covers(key);
    crate::drift::check::check(&ctx.index, objects, &covers, false, errors)
}
