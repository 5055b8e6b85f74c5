//! `kdrift check`: every manifest against the cluster, as text or JSON; exit 0 in sync, 1 drift,
//! 2 error. A failed listing or a bad manifest is an error, yet every drift that could be
//! computed is still reported.
use std::collections::BTreeMap;
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
                tell!("kdrift: {e}");
                // A script reading the JSON gets its shape, with the reason, whatever failed.
                if args.output == OutputFormat::Json {
                    let report = DriftReport {
                        errors: vec![e.to_string()],
                        ..DriftReport::default()
                    };
                    if let Ok(text) = serde_json::to_string_pretty(&report.to_json()) {
                        say!("{text}");
                    }
                }
                return EXIT_ERROR;
            }
        };
        let (mut report, skipped) = report(&ctx, args.unmanaged).await;
        if let Some(note) = skipped_note(&skipped) {
            tell!("{note}");
        }
        if !args.allow_empty
            && let Some(reason) = nothing_checked(&ctx, &report, &skipped)
        {
            tell!("kdrift: {reason}");
            report.errors.push(reason);
        }
        match args.output {
            OutputFormat::Text => print!(
                "{}",
                crate::text::printable(&report.to_text(jiff::Timestamp::now()))
            ),
            OutputFormat::Json => match serde_json::to_string_pretty(&report.to_json()) {
                Ok(text) => say!("{text}"),
                Err(e) => {
                    tell!("kdrift: cannot write the report as JSON: {e}");
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

/// Why a check that compared no manifest is not a green one: none was found, or none is in the
/// namespace scope (`--allow-empty` accepts either).
fn nothing_checked(
    ctx: &Context,
    report: &DriftReport,
    skipped: &BTreeMap<String, usize>,
) -> Option<String> {
    if report.objects.iter().any(|o| o.file.is_some()) {
        return None;
    }
    let root = ctx.index.root.display();
    if ctx.index.is_empty() {
        return Some(format!(
            "no Kubernetes manifest found under \"{root}\": nothing was checked (pass --manifests DIR, or --allow-empty)"
        ));
    }
    let scope = ctx.conn.scope.label();
    let outside: usize = skipped.values().sum();
    Some(format!(
        "none of the {} manifests under \"{root}\" is in the namespace in use (\"{scope}\"; {outside} are outside it): nothing was checked (pass -A or -n NS, or --allow-empty)",
        ctx.index.len()
    ))
}

/// The namespaces of manifests that were not checked because the scope left them out, so that
/// `kdrift check` in a context whose namespace has no manifests does not look like "all clear".
fn skipped_note(skipped: &BTreeMap<String, usize>) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let count: usize = skipped.values().sum();
    let names: Vec<&str> = skipped.keys().map(String::as_str).collect();
    Some(format!(
        "note: {count} manifest(s) in namespace(s) {} were not checked (outside the namespace in use): pass -A or -n NS",
        names.join(", ")
    ))
}

/// Lists each kind once for the scope and builds the drift report (with the live objects no
/// manifest describes when `show_unmanaged`); also returns, per namespace,
/// how many manifests of the listed kinds the scope left out (a forbidden namespace's are
/// reported as errors instead).
pub async fn report(ctx: &Context, show_unmanaged: bool) -> (DriftReport, BTreeMap<String, usize>) {
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
    let mut skipped = BTreeMap::new();
    if let Some(scope) = ctx.conn.scope.as_namespace() {
        let kinds = kinds_to_list(ctx);
        for manifest in ctx.index.objects() {
            let key = &manifest.key;
            let listed = kinds
                .iter()
                .any(|k| k.group == key.group && k.kind == key.kind);
            if listed && !key.namespace.is_empty() && key.namespace != scope {
                *skipped.entry(key.namespace.clone()).or_insert(0) += 1;
            }
        }
    }
    let report = crate::drift::check::check(&ctx.index, objects, &covers, show_unmanaged, errors);
    (report, skipped)
}
