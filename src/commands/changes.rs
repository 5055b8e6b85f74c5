//! `kdrift changes [--since D]`: the timeline of what changed ([`crate::drift::changes`],
//! [`crate::drift::history`]), from the API alone: the objects of the kinds the manifests use,
//! the ReplicaSets and ControllerRevisions of the workloads, the Warning events of the scope, and
//! the syncs of Argo CD Applications and Flux Kustomizations; exit 0, or 2 when nothing could be
//! read.
use std::collections::HashMap;
use std::process::ExitCode;

use serde_json::Value;

use crate::cli::{ChangesArgs, ChangesFormat, CommonArgs};
use crate::drift::changes::{Agrees, Change, Desired, entry_changes};
use crate::drift::history::{
    Revisions, ScaledUp, is_sync_kind, object_name, rollouts, sync_line, warnings,
};
use crate::drift::{LiveObject, ObjectStatus, compare};
use crate::managed_fields::ManagedFieldsEntry;
use crate::manifest::ObjectKey;

use super::context::{self, Context};
use super::{EXIT_ERROR, EXIT_IN_SYNC, block_on};

pub fn run(common: &CommonArgs, args: &ChangesArgs) -> ExitCode {
    block_on(async {
        match context::open(common).await {
            Ok(ctx) => changes(&ctx, args).await,
            Err(e) => {
                tell!("kdrift: {e}");
                EXIT_ERROR
            }
        }
    })
}

async fn changes(ctx: &Context, args: &ChangesArgs) -> u8 {
    ctx.tell_schema_notices();
    let cutoff = args.since.map(|since| {
        let now = jiff::Timestamp::now();
        let since = jiff::SignedDuration::try_from(since).unwrap_or(jiff::SignedDuration::MAX);
        now.checked_sub(since).unwrap_or(jiff::Timestamp::MIN)
    });
    // A line without a time (a /scale write on v1.36) is kept: the API cannot say it is older.
    let recent = |time: &Option<String>| match (cutoff, time) {
        (Some(cutoff), Some(t)) => t.parse::<jiff::Timestamp>().is_ok_and(|t| t >= cutoff),
        _ => true,
    };
    let mut lines: Vec<Change> = Vec::new();
    let mut errors = Vec::new();
    let mut read_any = false;
    let mut syncs_read = false;
    // The writers of the workloads git describes, for their rollouts' verdicts (who set a
    // template's fields).
    let mut writers: HashMap<ObjectKey, Writers> = HashMap::new();
    for kind in super::check::kinds_to_list(ctx, false) {
        let syncs = is_sync_kind(&kind.group, &kind.kind);
        syncs_read |= syncs;
        let items = match crate::cluster::read::list_raw(&ctx.conn, &kind).await {
            Ok(items) => items,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        read_any = true;
        if syncs {
            lines.extend(
                items
                    .iter()
                    .filter_map(sync_line)
                    .filter(|c| recent(&c.time)),
            );
        }
        for raw in items {
            if !args.bookkeeping && crate::helm::is_release_record(&raw) {
                continue;
            }
            let name = object_name(&raw);
            let entries = match ManagedFieldsEntry::read(&raw) {
                Ok(entries) => entries,
                Err(e) => {
                    errors.push(format!("{name}: its managedFields cannot be read: {e}"));
                    continue;
                }
            };
            let live = LiveObject::from_value(raw, &ctx.schemas).ok();
            let manifest = live.as_ref().and_then(|l| ctx.index.get(&l.key));
            if let (Some(live), Some(_)) = (&live, manifest)
                && kind.group == "apps"
                && matches!(
                    kind.kind.as_str(),
                    "Deployment" | "StatefulSet" | "DaemonSet"
                )
            {
                writers.insert(
                    live.key.clone(),
                    (live.managers.clone(), live.last_applied.clone()),
                );
            }
            let drift = live
                .as_ref()
                .zip(manifest)
                .map(|(l, m)| compare(m, l, &ctx.index.config))
                .filter(|d| !matches!(d.status, ObjectStatus::Error(_)));
            let desired = live
                .as_ref()
                .zip(manifest)
                .zip(drift.as_ref())
                .map(|((l, m), d)| Desired {
                    schema: l.schema,
                    manifest: m.body.root(),
                    drift: d,
                });
            lines.extend(
                entry_changes(&name, &entries, desired.as_ref())
                    .into_iter()
                    .filter(|c| recent(&c.time)),
            );
        }
    }
    // The events: Warnings are lines, and a Deployment's scale-ups date its rollbacks.
    let events = match ctx.kinds.get("v1", "Event").cloned() {
        Some(kind) => match crate::cluster::read::list_raw(&ctx.conn, &kind).await {
            Ok(items) => {
                read_any = true;
                items
            }
            Err(e) => {
                errors.push(e);
                Vec::new()
            }
        },
        None => Vec::new(),
    };
    let scaled_up = ScaledUp::from_events(&events);
    for (api_version, kind, revisions) in [
        ("apps/v1", "ReplicaSet", Revisions::ReplicaSets),
        (
            "apps/v1",
            "ControllerRevision",
            Revisions::ControllerRevisions,
        ),
    ] {
        let Some(kind) = ctx.kinds.get(api_version, kind).cloned() else {
            continue;
        };
        match crate::cluster::read::list_raw(&ctx.conn, &kind).await {
            Ok(items) => {
                read_any = true;
                let agrees = |key: &ObjectKey, template: &Value| {
                    template_agrees(ctx, key, template, writers.get(key))
                };
                // Newest first, as the lines are shown: a rollback dated at the rollout that
                // followed it (the latest it can have been) stays after it below.
                lines.extend(
                    rollouts(&items, revisions, &agrees, &scaled_up)
                        .into_iter()
                        .rev()
                        .filter(|c| recent(&c.time)),
                );
            }
            Err(e) => errors.push(e),
        }
    }
    // The GitOps owners' syncs, when the manifests do not hold them (the Applications of
    // another repository): one list of each kind the cluster serves.
    if !syncs_read {
        for (api_version, kind) in [
            ("argoproj.io/v1alpha1", "Application"),
            ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"),
        ] {
            let Some(kind) = ctx.kinds.get(api_version, kind).cloned() else {
                continue;
            };
            match crate::cluster::read::list_raw(&ctx.conn, &kind).await {
                Ok(items) => {
                    lines.extend(
                        items
                            .iter()
                            .filter_map(sync_line)
                            .filter(|c| recent(&c.time)),
                    );
                }
                Err(e) => errors.push(e),
            }
        }
    }
    lines.extend(warnings(&events).into_iter().filter(|c| recent(&c.time)));
    for e in &errors {
        tell!("kdrift: {e}");
    }
    if !read_any {
        return EXIT_ERROR;
    }
    if !args.bookkeeping {
        lines.retain(|line| !is_status_bookkeeping(line));
    }
    // Newest first; RFC 3339 times of one server sort as text; undated lines last.
    lines.sort_by(|a, b| b.time.cmp(&a.time).then_with(|| a.object.cmp(&b.object)));
    print(&lines, args.output);
    EXIT_IN_SYNC
}

/// A control-plane manager's write of status alone (`kube-controller-manager (status) Update`):
/// a rollout's progress, written again and again, not a change anyone made.
fn is_status_bookkeeping(line: &Change) -> bool {
    line.writer.as_ref().is_some_and(|w| {
        w.subresource.as_deref() == Some("status")
            && crate::drift::SYSTEM_MANAGERS.contains(&w.manager.as_str())
    })
}

/// A live object's writers, as [`LiveObject`] keeps them: its managers and its last client-side
/// apply.
type Writers = (
    Vec<ManagedFieldsEntry>,
    Option<Box<crate::drift::live::LastApplied>>,
);

/// Whether git agrees with the pod template a rollout put live: the workload's manifest compared,
/// by the drift engine, with itself carrying that template and the live workload's writers
/// (`writers`): a field the manifest leaves out is the server's default unless a writer owns it,
/// as `check` judges it — an env var `kubectl set env` added is drift in the rollout that brought
/// it, as in the live object.
fn template_agrees(
    ctx: &Context,
    key: &ObjectKey,
    template: &Value,
    writers: Option<&Writers>,
) -> Agrees {
    let Some(manifest) = ctx.index.get(key) else {
        return Agrees::NotInGit;
    };
    let mut raw = manifest.body.root().to_value();
    let Some(spec) = raw.get_mut("spec").and_then(Value::as_object_mut) else {
        return Agrees::NotInGit;
    };
    spec.insert("template".into(), template.clone());
    let Ok(mut live) = LiveObject::from_value(raw, &ctx.schemas) else {
        return Agrees::NotInGit;
    };
    if let Some((managers, last_applied)) = writers {
        live.managers.clone_from(managers);
        live.last_applied.clone_from(last_applied);
    }
    let drift = compare(manifest, &live, &ctx.index.config);
    let under_template = |item: &crate::drift::DriftItem| {
        item.class.is_drift()
            && matches!(&item.path.0[..], [
                crate::drift::path::PathStep::Field(spec),
                crate::drift::path::PathStep::Field(template),
                ..
            ] if spec == "spec" && template == "template")
    };
    if drift.items.iter().any(under_template) {
        Agrees::Drifted
    } else {
        Agrees::InSync
    }
}

fn print(lines: &[Change], output: ChangesFormat) {
    let data = || Value::Array(lines.iter().map(Change::to_json).collect());
    match output {
        ChangesFormat::Json => say!(
            "{}",
            serde_json::to_string_pretty(&data()).unwrap_or_default()
        ),
        ChangesFormat::Yaml => say!("{}", serde_yaml::to_string(&data()).unwrap_or_default()),
        ChangesFormat::Text => {
            if lines.is_empty() {
                tell!("kdrift: no changes in that time");
            }
            for line in lines {
                // An event or a sync names no field: no word of git beside it.
                let git = match line.git {
                    Agrees::NoField => String::new(),
                    git => format!("  [{}]", git.name()),
                };
                say!(
                    "{:<20}  {}  {}  {}{git}",
                    line.time.as_deref().unwrap_or("(no time)"),
                    line.object,
                    line.who,
                    line.what,
                );
            }
        }
    }
}
