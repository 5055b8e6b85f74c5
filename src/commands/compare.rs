//! `kdrift compare TYPE/NAME --context a --context b …`: one object as several clusters have
//! it — the fields that differ ([`crate::drift::fleet`]), each cluster's value with its manager
//! and time, and which clusters' manifests agree. Each context is read on a task of its own.
//! Exit 0 when equal, 1 when different (or absent from some clusters), 2 on error.
use std::process::ExitCode;

use serde_json::{Map, Value, json};

use crate::cli::{CommonArgs, CompareArgs, CompareFormat};
use crate::drift::blame::GitState;
use crate::drift::fleet::{FieldDifference, Side, differences};
use crate::drift::report::{age, short_value};
use crate::drift::{Attribution, LiveObject};
use crate::managed_fields::ManagedFieldsEntry;
use crate::manifest::{Config, ManifestObject, ObjectKey};

use super::target::{self, Target};
use super::{EXIT_DRIFT, EXIT_ERROR, EXIT_IN_SYNC, block_on, context};

/// One context's object, read.
struct Read {
    cluster: String,
    source: String,
    key: ObjectKey,
    /// `None`: the cluster has no such object.
    object: Option<(Value, LiveObject, Vec<ManagedFieldsEntry>)>,
    manifest: Option<ManifestObject>,
    config: Config,
}

/// What one context gave.
struct Column {
    context: String,
    read: Result<Read, String>,
}

pub fn run(common: &CommonArgs, args: &CompareArgs) -> ExitCode {
    let target = match target::parse(&args.target) {
        Ok(t) => t,
        Err(e) => {
            tell!("kdrift: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    let names = match super::fleet::contexts(common) {
        Ok(names) if names.len() >= 2 => names,
        Ok(names) => {
            tell!(
                "kdrift: compare needs two contexts or more (got {}): pass --context A --context B, or --all-contexts",
                names.len()
            );
            return ExitCode::from(EXIT_ERROR);
        }
        Err(e) => {
            tell!("kdrift: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    block_on(async {
        let tasks: Vec<_> = names
            .into_iter()
            .map(|name| {
                let common = common.for_context(&name);
                let target = target.clone();
                let task = tokio::spawn(async move { read(&common, &target).await });
                (name, task)
            })
            .collect();
        let mut columns = Vec::new();
        for (context, task) in tasks {
            let read = match task.await {
                Ok(read) => read,
                Err(e) => Err(format!("reading context \"{context}\" failed: {e}")),
            };
            columns.push(Column { context, read });
        }
        for column in &columns {
            if let Err(e) = &column.read {
                tell!("kdrift: [{}] {e}", column.context);
            }
        }
        let compared = compared(&columns);
        let code = exit_code(&columns, &compared);
        let now = jiff::Timestamp::now();
        match args.output {
            CompareFormat::Text => print!(
                "{}",
                crate::text::printable(&text(&columns, &compared, now))
            ),
            CompareFormat::Json => say!(
                "{}",
                serde_json::to_string_pretty(&to_json(&columns, &compared, code))
                    .unwrap_or_default()
            ),
        }
        code
    })
}

/// Connects to one context, resolves the target there and reads the object and its manifest.
async fn read(common: &CommonArgs, target: &Target) -> Result<Read, String> {
    let mut ctx = context::open_for(common, Some(target))
        .await
        .map_err(|e| e.to_string())?;
    let (kind, key) = ctx.resolve(target).await.map_err(|e| e.to_string())?;
    let raw = context::get_live(&ctx, &kind, &key)
        .await
        .map_err(|e| e.to_string())?;
    let object = match raw {
        None => None,
        Some(raw) => {
            let entries = ManagedFieldsEntry::read(&raw)
                .map_err(|e| format!("{key}: its managedFields cannot be read: {e}"))?;
            let live = LiveObject::from_value(raw.clone(), &ctx.schemas)
                .map_err(|e| format!("live {key}: {e}"))?;
            Some((raw, live, entries))
        }
    };
    Ok(Read {
        cluster: ctx.conn.cluster_url.clone(),
        source: ctx.index.source(&ctx.conn.context),
        manifest: ctx.index.get(&key).cloned(),
        config: ctx.index.config.clone(),
        key,
        object,
    })
}

/// The differences between the contexts that have the object (`None` when fewer than two do,
/// or one could not be read).
fn compared(columns: &[Column]) -> Option<(Vec<usize>, Vec<FieldDifference>)> {
    let mut at = Vec::new();
    let mut sides = Vec::new();
    for (index, column) in columns.iter().enumerate() {
        let read = column.read.as_ref().ok()?;
        if let Some((raw, live, entries)) = &read.object {
            at.push(index);
            sides.push(Side {
                context: &column.context,
                raw,
                live,
                entries,
                manifest: read.manifest.as_ref(),
            });
        }
    }
    if sides.len() < 2 {
        return None;
    }
    let first = columns[at[0]].read.as_ref().ok()?;
    Some((at, differences(&first.key, &sides, &first.config)))
}

fn exit_code(columns: &[Column], compared: &Option<(Vec<usize>, Vec<FieldDifference>)>) -> u8 {
    let reads: Vec<&Read> = match columns.iter().map(|c| c.read.as_ref().ok()).collect() {
        Some(reads) => reads,
        None => return EXIT_ERROR,
    };
    let present = reads.iter().filter(|r| r.object.is_some()).count();
    if present == 0 {
        return EXIT_ERROR;
    }
    if present < reads.len() {
        return EXIT_DRIFT;
    }
    match compared {
        Some((_, found)) if found.is_empty() => EXIT_IN_SYNC,
        Some(_) => EXIT_DRIFT,
        None => EXIT_ERROR,
    }
}

fn owner_text(owner: Option<&Attribution>, now: jiff::Timestamp) -> String {
    let Some(owner) = owner else {
        return "no manager".to_owned();
    };
    let manager = owner.manager.as_deref().unwrap_or("manager unknown");
    let how = match (&owner.operation, &owner.subresource) {
        (Some(op), Some(sub)) => format!(" ({op} via /{sub})"),
        (Some(op), None) => format!(" ({op})"),
        _ => String::new(),
    };
    let when = age(owner.time.as_deref(), now)
        .map(|a| format!(" {a}"))
        .unwrap_or_default();
    format!("{manager}{how}{when}")
}

fn git_text(git: Option<GitState>) -> &'static str {
    match git {
        None => "no manifest",
        Some(state) => state.name(),
    }
}

fn text(
    columns: &[Column],
    compared: &Option<(Vec<usize>, Vec<FieldDifference>)>,
    now: jiff::Timestamp,
) -> String {
    let mut out = String::new();
    let width = columns.iter().map(|c| c.context.len()).max().unwrap_or(0);
    let key = columns
        .iter()
        .find_map(|c| c.read.as_ref().ok().map(|r| r.key.to_string()))
        .unwrap_or_default();
    for column in columns {
        let name = &column.context;
        match &column.read {
            Err(e) => out.push_str(&format!("{name:width$}  error: {e}\n")),
            Ok(read) => {
                let manifest = match &read.manifest {
                    Some(m) => format!("{}:{}", crate::manifest::shown_path(&m.file), m.line),
                    None => "none found".to_owned(),
                };
                let here = if read.object.is_some() {
                    String::new()
                } else {
                    format!("  {} is not in this cluster", read.key)
                };
                out.push_str(&format!(
                    "{name:width$}  {}  manifest: {manifest}{here}\n",
                    read.cluster
                ));
            }
        }
    }
    let Some((at, found)) = compared else {
        if columns
            .iter()
            .all(|c| c.read.as_ref().is_ok_and(|r| r.object.is_none()))
        {
            out.push_str(&format!("{key} is in none of these clusters\n"));
        }
        return out;
    };
    out.push('\n');
    if found.is_empty() {
        out.push_str(&format!("{key}: the same in every cluster that has it\n"));
        return out;
    }
    for difference in found {
        out.push_str(&format!("{}\n", difference.path));
        let values: Vec<String> = difference
            .sides
            .iter()
            .map(|side| short_value(side.value.as_ref()))
            .collect();
        let value_width = values.iter().map(|v| v.chars().count()).max().unwrap_or(0);
        for ((side, index), value) in difference.sides.iter().zip(at).zip(&values) {
            out.push_str(&format!(
                "  {:width$}  {value:value_width$}  {}  git: {}\n",
                columns[*index].context,
                owner_text(side.owner.as_ref(), now),
                git_text(side.git)
            ));
        }
        let agrees: Vec<&str> = difference
            .git_agrees()
            .into_iter()
            .map(|s| columns[at[s]].context.as_str())
            .collect();
        if agrees.is_empty() {
            out.push_str("  git agrees with none of them\n");
        } else {
            out.push_str(&format!("  git agrees with {}\n", agrees.join(", ")));
        }
    }
    out.push_str(&format!("{key}: {} field(s) differ\n", found.len()));
    out
}

fn to_json(
    columns: &[Column],
    compared: &Option<(Vec<usize>, Vec<FieldDifference>)>,
    code: u8,
) -> Value {
    let mut contexts = Map::new();
    let mut object = Value::Null;
    for column in columns {
        let entry = match &column.read {
            Err(e) => json!({"error": e}),
            Ok(read) => {
                if object.is_null() {
                    object = Value::String(read.key.to_string());
                }
                json!({
                    "cluster": read.cluster,
                    "source": read.source,
                    "found": read.object.is_some(),
                    "manifest": read.manifest.as_ref().map(|m| json!({
                        "file": m.file.display().to_string(),
                        "line": m.line,
                    })),
                    "error": null,
                })
            }
        };
        contexts.insert(column.context.clone(), entry);
    }
    let fields: Vec<Value> = compared
        .iter()
        .flat_map(|(at, found)| {
            found.iter().map(move |difference| {
                let mut values = Map::new();
                for (side, index) in difference.sides.iter().zip(at) {
                    let owner = side.owner.clone().unwrap_or_default();
                    values.insert(
                        columns[*index].context.clone(),
                        json!({
                            "value": side.value,
                            "manager": owner.manager,
                            "operation": owner.operation,
                            "subresource": owner.subresource,
                            "time": owner.time,
                            "git": side.git.map(GitState::name),
                        }),
                    );
                }
                let agrees: Vec<&str> = difference
                    .git_agrees()
                    .into_iter()
                    .map(|s| columns[at[s]].context.as_str())
                    .collect();
                json!({
                    "path": difference.path.to_string(),
                    "values": values,
                    "git_agrees_with": agrees,
                })
            })
        })
        .collect();
    json!({
        "object": object,
        "contexts": contexts,
        "fields": fields,
        "exit_code": code,
    })
}
