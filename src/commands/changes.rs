//! `kdrift changes [--since D]`: the timeline of what changed ([`crate::drift::changes`]), from
//! the API alone: the objects of the kinds the manifests use, their ReplicaSets and the Warning
//! events of the scope; exit 0, or 2 when nothing could be read.
use std::collections::BTreeMap;
use std::process::ExitCode;

use serde_json::Value;

use crate::cli::{ChangesArgs, ChangesFormat, CommonArgs};
use crate::drift::changes::{Agrees, Change, Desired, entry_changes, template_change};
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

fn text_of(value: &Value, pointer: &str) -> Option<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The object's name as lines show it: `deployment/shop/web`.
fn object_name(value: &Value) -> String {
    ObjectKey::of_object(value, "").map_or_else(|| "(unnamed)".to_owned(), |k| k.to_string())
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
    for kind in super::check::kinds_to_list(ctx, false) {
        let items = match context::list_raw(ctx, &kind).await {
            Ok(items) => items,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        read_any = true;
        for raw in items {
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
                    manifest: &m.body,
                    drift: d,
                });
            lines.extend(
                entry_changes(&name, &entries, desired.as_ref())
                    .into_iter()
                    .filter(|c| recent(&c.time)),
            );
        }
    }
    if let Some(kind) = ctx.kinds.get("apps/v1", "ReplicaSet").cloned() {
        match context::list_raw(ctx, &kind).await {
            Ok(items) => {
                read_any = true;
                lines.extend(rollouts(&items).into_iter().filter(|c| recent(&c.time)));
            }
            Err(e) => errors.push(e),
        }
    }
    if let Some(kind) = ctx.kinds.get("v1", "Event").cloned() {
        match context::list_raw(ctx, &kind).await {
            Ok(items) => {
                read_any = true;
                lines.extend(warnings(&items).into_iter().filter(|c| recent(&c.time)));
            }
            Err(e) => errors.push(e),
        }
    }
    for e in &errors {
        tell!("kdrift: {e}");
    }
    if !read_any {
        return EXIT_ERROR;
    }
    // Newest first; RFC 3339 times of one server sort as text; undated lines last.
    lines.sort_by(|a, b| b.time.cmp(&a.time).then_with(|| a.object.cmp(&b.object)));
    print(&lines, args.output);
    EXIT_IN_SYNC
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
                say!(
                    "{:<20}  {}  {}  {}  [{}]",
                    line.time.as_deref().unwrap_or("(no time)"),
                    line.object,
                    line.who,
                    line.what,
                    line.git.name()
                );
            }
        }
    }
}

/// A rollout line per ReplicaSet: its owner (the Deployment), its creation time, and what its
/// pod template changed from the revision before it.
fn rollouts(items: &[Value]) -> Vec<Change> {
    let mut by_owner: BTreeMap<String, Vec<(u64, &Value)>> = BTreeMap::new();
    for rs in items {
        let owner = rs
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .and_then(|refs| {
                refs.iter()
                    .find(|r| r.get("controller") == Some(&Value::Bool(true)))
            })
            .map(|r| {
                format!(
                    "{}/{}/{}",
                    text_of(r, "/kind").unwrap_or_default().to_ascii_lowercase(),
                    text_of(rs, "/metadata/namespace").unwrap_or_default(),
                    text_of(r, "/name").unwrap_or_default()
                )
            })
            .unwrap_or_else(|| object_name(rs));
        let revision = rs
            .pointer("/metadata/annotations/deployment.kubernetes.io~1revision")
            .and_then(Value::as_str)
            .and_then(|r| r.parse().ok())
            .unwrap_or(0);
        by_owner.entry(owner).or_default().push((revision, rs));
    }
    let mut out = Vec::new();
    for (owner, mut revisions) in by_owner {
        revisions.sort_by_key(|(r, _)| *r);
        for (i, (revision, rs)) in revisions.iter().enumerate() {
            let template = template_of(rs);
            let what = match i.checked_sub(1).and_then(|p| revisions.get(p)) {
                Some((_, before)) => {
                    let old = template_of(before);
                    let change = template_change(&old, &template);
                    format!(
                        "rollout to revision {revision} ({}): {change}",
                        object_name(rs)
                    )
                }
                None => format!("first revision {revision} ({})", object_name(rs)),
            };
            out.push(Change {
                time: text_of(rs, "/metadata/creationTimestamp"),
                object: owner.clone(),
                who: "deployment-controller".to_owned(),
                what,
                // Whether git agrees is said on the Deployment's own lines.
                git: Agrees::NotInGit,
            });
        }
    }
    out
}

/// A ReplicaSet's pod template less the `pod-template-hash` label its controller adds (it
/// differs in every revision).
fn template_of(rs: &Value) -> Value {
    let mut template = rs.pointer("/spec/template").cloned().unwrap_or(Value::Null);
    if let Some(labels) = template
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        labels.remove("pod-template-hash");
    }
    template
}

/// A line per Warning event: its object, reason and message, at its last time.
fn warnings(items: &[Value]) -> Vec<Change> {
    items
        .iter()
        .filter(|e| e.get("type").and_then(Value::as_str) == Some("Warning"))
        .map(|e| {
            let time = text_of(e, "/lastTimestamp")
                .or_else(|| text_of(e, "/series/lastObservedTime"))
                .or_else(|| text_of(e, "/eventTime"))
                .or_else(|| text_of(e, "/metadata/creationTimestamp"));
            let object = format!(
                "{}/{}/{}",
                text_of(e, "/involvedObject/kind")
                    .unwrap_or_default()
                    .to_ascii_lowercase(),
                text_of(e, "/involvedObject/namespace").unwrap_or_default(),
                text_of(e, "/involvedObject/name").unwrap_or_default()
            );
            let who = text_of(e, "/source/component")
                .or_else(|| text_of(e, "/reportingComponent"))
                .unwrap_or_else(|| "(unknown)".to_owned());
            Change {
                time,
                object,
                who,
                what: format!(
                    "Warning {}: {}",
                    text_of(e, "/reason").unwrap_or_default(),
                    text_of(e, "/message").unwrap_or_default()
                ),
                git: Agrees::NotInGit,
            }
        })
        .collect()
}
