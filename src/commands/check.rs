//! `kdrift check`: every manifest against the cluster, as text or JSON; exit 0 in sync, 1 drift,
//! 2 error. A failed listing or a bad manifest is an error, yet every drift that could be
//! computed is still reported.
use std::collections::BTreeMap;
use std::process::ExitCode;

use crate::cli::{CheckArgs, CommonArgs, OutputFormat};
use crate::drift::DriftReport;

use crate::cluster::kinds::ServedKind;

use super::context::{self, Context};
use super::{EXIT_ERROR, block_on_cleaning};
use crate::cluster::read::{self, Listing};

pub fn run(common: &CommonArgs, args: &CheckArgs) -> ExitCode {
    if common.several_contexts() {
        return super::fleet::check(common, args);
    }
    block_on_cleaning(async {
        let checked = match check_one(common, args).await {
            Ok(checked) => checked,
            Err(e) => {
                tell!("kdrift: {e}");
                // A script reading the JSON gets its shape, with the reason, whatever failed.
                if args.output != OutputFormat::Text {
                    let report = DriftReport {
                        errors: vec![e.to_string()],
                        ..DriftReport::default()
                    };
                    let _ = print_report(&report, args.output);
                }
                return EXIT_ERROR;
            }
        };
        for note in &checked.notes {
            tell!("{note}");
        }
        if let Err(e) = print_report(&checked.report, args.output) {
            tell!("kdrift: cannot write the report: {e}");
            return EXIT_ERROR;
        }
        checked.report.exit_code()
    })
}

/// One context checked: the report, the lines for stderr, and where the manifests came from.
pub(crate) struct Checked {
    pub report: DriftReport,
    /// Notes for stderr, in the order they were met.
    pub notes: Vec<String>,
    /// The API server's URL.
    pub cluster_url: String,
    /// Which manifests describe this context, and why ([`crate::manifest::ManifestIndex::source`]).
    pub source: String,
}

/// Connects with `common` (one context), loads the manifests and builds the report.
pub(crate) async fn check_one(
    common: &CommonArgs,
    args: &CheckArgs,
) -> Result<Checked, context::ContextError> {
    let ctx = context::open(common).await?;
    let mut notes: Vec<String> = ctx
        .schema_notices
        .iter()
        .map(|notice| format!("note: {notice}"))
        .collect();
    notes.extend(crate::manifest::sparse::note(&ctx.index.root));
    let (mut report, skipped) = report(&ctx, args.unmanaged).await;
    notes.extend(skipped_note(&skipped));
    if !args.allow_empty
        && let Some(reason) = nothing_checked(&ctx, &report, &skipped)
    {
        // The text report says it (`error: …`); said on stderr too, it read twice on a
        // terminal. A machine-read report says it in its `errors`, and stderr tells the person.
        if args.output != OutputFormat::Text {
            notes.push(format!("kdrift: {reason}"));
        }
        report.errors.push(reason);
    }
    Ok(Checked {
        report,
        notes,
        cluster_url: ctx.conn.cluster_url.clone(),
        source: ctx.index.source(&ctx.conn.context),
    })
}

/// Writes `report` to standard output in `format`.
pub(crate) fn print_report(report: &DriftReport, format: OutputFormat) -> Result<(), String> {
    let now = jiff::Timestamp::now();
    match format {
        OutputFormat::Text => print!("{}", crate::text::printable(&report.to_text(now))),
        OutputFormat::Github => print!("{}", crate::text::printable(&report.to_github(now))),
        OutputFormat::Json => {
            let text =
                serde_json::to_string_pretty(&report.to_json()).map_err(|e| e.to_string())?;
            say!("{text}");
        }
        OutputFormat::Yaml => {
            let text = serde_yaml::to_string(&report.to_json()).map_err(|e| e.to_string())?;
            print!("{text}");
        }
    }
    Ok(())
}

/// The kinds to list: every served kind of the manifests, in the version most of them use (the
/// others are fetched one by one in theirs, see [`other_versions`]); with `--unmanaged`,
/// Deployments too (the live view's kind), so that those without a manifest are listed. In one
/// namespace (`-n`), cluster-scoped kinds are left out: they are in no namespace, and a user
/// whose access ends at the namespace may not list them.
pub(crate) fn kinds_to_list(ctx: &Context, unmanaged: bool) -> Vec<ServedKind> {
    let one_namespace = ctx.conn.scope.as_namespace().is_some();
    let mut counts: BTreeMap<(String, String), BTreeMap<String, usize>> = BTreeMap::new();
    for manifest in ctx.index.objects().filter(|m| ctx.index.is_served(m)) {
        *counts
            .entry((
                manifest.key.group.to_string(),
                manifest.key.kind.to_string(),
            ))
            .or_default()
            .entry(manifest.api_version.to_string())
            .or_default() += 1;
    }
    if unmanaged {
        counts
            .entry(("apps".into(), "Deployment".into()))
            .or_default()
            .entry("apps/v1".into())
            .or_default();
    }
    counts
        .iter()
        .filter_map(|((_, kind), versions)| {
            // The version most manifests use (the first in order on a tie).
            let (api_version, _) = versions
                .iter()
                .max_by_key(|(version, n)| (**n, std::cmp::Reverse(*version)))?;
            ctx.kind_of(api_version, kind)
                .filter(|k| k.namespaced || !one_namespace)
                .cloned()
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
    let names: Vec<&str> = skipped
        .keys()
        .filter(|n| !n.is_empty())
        .map(String::as_str)
        .collect();
    // `-n` never checks a cluster-scoped object: only `-A` does.
    let cluster_scoped = skipped.get("").copied().unwrap_or(0);
    let (place, how) = match (names.is_empty(), cluster_scoped) {
        (true, _) => ("of cluster-scoped kinds".to_owned(), "pass -A".to_owned()),
        (false, 0) => (
            format!("in namespace(s) {}", names.join(", ")),
            format!("pass -A, or -n {} for one of them", names[0]),
        ),
        (false, n) => (
            format!(
                "in namespace(s) {} and {n} of cluster-scoped kinds",
                names.join(", ")
            ),
            format!("pass -A (-n {} checks that namespace alone)", names[0]),
        ),
    };
    Some(format!(
        "note: {count} manifest(s) {place} were not checked (outside the namespace in use): {how}"
    ))
}

/// Kinds read at once by `check`.
const KINDS_AT_ONCE: usize = 4;

/// Lists each kind once for the scope and builds the drift report (with the live objects no
/// manifest describes when `show_unmanaged`); also returns, per namespace,
/// how many manifests of the listed kinds the scope left out (a forbidden namespace's are
/// reported as errors instead).
pub async fn report(ctx: &Context, show_unmanaged: bool) -> (DriftReport, BTreeMap<String, usize>) {
    use futures::StreamExt;
    let kinds = kinds_to_list(ctx, show_unmanaged);
    // The kinds are read together (a few at once): one kind's reads wait on the server while
    // another's answers are read. Their reads by name share one limit.
    let reads = std::sync::Arc::new(tokio::sync::Semaphore::new(read::gets_in_flight(&ctx.conn)));
    // (Boxed, each with its type said: the check of several contexts runs on spawned tasks,
    // where a closure's future would not be seen as `Send` for every lifetime.)
    let mut reading: Vec<futures::future::BoxFuture<'_, Listing>> = Vec::new();
    for kind in &kinds {
        let reads = &reads;
        reading.push(Box::pin(async move {
            let mut listing = Listing::default();
            read::list_kind(ctx.reads(), kind, !show_unmanaged, reads, &mut listing).await;
            listing
        }));
    }
    let listings: Vec<Listing> = futures::stream::iter(reading)
        .buffered(KINDS_AT_ONCE)
        .collect()
        .await;
    let mut listing = Listing::default();
    for one in listings {
        listing.extend(one);
    }
    other_versions(ctx, &kinds, &mut listing).await;
    let Listing {
        objects,
        errors,
        covered,
        named,
    } = listing;
    let coverage = Listing {
        covered,
        named,
        ..Listing::default()
    };
    let covers = |key: &crate::manifest::ObjectKey| coverage.covers(key);
    let mut skipped = BTreeMap::new();
    if let Some(scope) = ctx.conn.scope.as_namespace() {
        for manifest in ctx.index.objects() {
            let key = &manifest.key;
            let served = ctx.index.is_served(manifest);
            if served && key.namespace != scope {
                *skipped.entry(key.namespace.to_string()).or_insert(0) += 1;
            }
        }
    }
    let mut report =
        crate::drift::check::check(&ctx.index, objects, &covers, show_unmanaged, errors);
    if let Some(scope) = ctx.conn.scope.as_namespace() {
        report.problems = std::mem::take(&mut report.problems)
            .into_iter()
            .map(|p| p.in_scope(scope))
            .collect();
    }
    read_reconcilers(ctx, &mut report).await;
    (report, skipped)
}

/// Who will act on each drifted object: its owners' Applications, Kustomizations and
/// HelmReleases, each read once.
async fn read_reconcilers(ctx: &Context, report: &mut crate::drift::report::DriftReport) {
    use crate::drift::ObjectStatus;
    let drifted = |o: &crate::drift::report::ReportedObject| {
        matches!(o.drift.status, ObjectStatus::Drifted) && o.drift.drift_count() > 0
    };
    let owners: Vec<crate::gitops::Owner> = report
        .objects
        .iter()
        .filter(|o| drifted(o))
        .flat_map(|o| o.owners.iter().cloned())
        .collect();
    if owners.is_empty() {
        return;
    }
    let here = crate::gitops::source::Here {
        cluster_url: &ctx.conn.cluster_url,
        context: &ctx.conn.context,
    };
    let hubs = ctx.peers.as_ref().map(|peers| (peers, here));
    let read = crate::cluster::gitops::read_all(&ctx.conn.client, owners, hubs).await;
    for object in report.objects.iter_mut().filter(|o| drifted(o)) {
        object.reconcilers = object
            .owners
            .iter()
            .filter_map(|owner| read.get(owner).filter(|r| r.claims()).cloned())
            .collect();
    }
}

/// Manifests of a kind whose listing was in another version than theirs (an HPA in
/// `autoscaling/v1` beside others in `autoscaling/v2`): each is read in its own version, so that
/// it is compared with fields of its own schema.
async fn other_versions(ctx: &Context, listed: &[ServedKind], listing: &mut Listing) {
    for manifest in ctx.index.objects().filter(|m| ctx.index.is_served(m)) {
        let listed_version = listed
            .iter()
            .find(|k| k.group == manifest.key.group && k.kind == manifest.key.kind);
        let Some(listed_version) = listed_version else {
            continue;
        };
        if listed_version.api_version() == manifest.api_version || !listing.covers(&manifest.key) {
            continue;
        }
        let Some(kind) = ctx.kind_of(&manifest.api_version, &manifest.key.kind) else {
            continue;
        };
        match read::get_live(&ctx.conn, kind, &manifest.key).await {
            Ok(Some(value)) => match crate::drift::LiveObject::from_value(value, &ctx.schemas) {
                Ok(object) => {
                    listing.objects.retain(|o| o.key != manifest.key);
                    listing.objects.push(object);
                }
                Err(e) => listing
                    .errors
                    .push(format!("live {} was not readable: {e}", manifest.key)),
            },
            Ok(None) => listing.objects.retain(|o| o.key != manifest.key),
            Err(e) => listing.errors.push(e.to_string()),
        }
    }
}
