//! `kdrift compare TYPE/NAME --context a --context b …`: one object as several clusters have
//! it — the fields that differ ([`crate::drift::fleet`]), each cluster's value with its manager
//! and time, and which clusters' manifests agree. Each context is read on a task of its own.
//! Exit 0 when equal, 1 when different (or absent from some clusters), 2 on error.
use std::process::ExitCode;

use serde_json::{Map, Value, json};

use crate::cli::{CommonArgs, CompareArgs, CompareFormat};
use crate::drift::LiveObject;
use crate::drift::blame::GitState;
use crate::drift::fleet::{
    ColumnState, Compared, ReadObject, Reading, compare_readings, comparison_lines,
};

use super::target::{self, Target};
use super::{EXIT_DRIFT, EXIT_ERROR, EXIT_IN_SYNC, block_on, context};

/// What one context gave.
struct Column {
    context: String,
    read: Result<Reading, String>,
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
    let common = common.with_peers(&names);
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
async fn read(common: &CommonArgs, target: &Target) -> Result<Reading, String> {
    let mut ctx = context::open_for(common, Some(target))
        .await
        .map_err(|e| e.to_string())?;
    let (kind, key) = ctx.resolve(target).await.map_err(|e| e.to_string())?;
    let raw = crate::cluster::read::get_live(&ctx.conn, &kind, &key)
        .await
        .map_err(|e| e.to_string())?;
    let object = match raw {
        None => None,
        Some(raw) => {
            let live = LiveObject::from_value(raw.clone(), &ctx.schemas)
                .map_err(|e| format!("live {key}: {e}"))?;
            Some(ReadObject::new(raw, live)?)
        }
    };
    Ok(Reading {
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
fn compared(columns: &[Column]) -> Option<Compared> {
    let contexts: Vec<&str> = columns.iter().map(|c| c.context.as_str()).collect();
    let readings: Vec<Option<&Reading>> = columns.iter().map(|c| c.read.as_ref().ok()).collect();
    compare_readings(&contexts, &readings)
}

fn exit_code(columns: &[Column], compared: &Option<Compared>) -> u8 {
    let reads: Vec<&Reading> = match columns.iter().map(|c| c.read.as_ref().ok()).collect() {
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
        Some(c) if c.found.is_empty() => EXIT_IN_SYNC,
        Some(_) => EXIT_DRIFT,
        None => EXIT_ERROR,
    }
}

fn text(columns: &[Column], compared: &Option<Compared>, now: jiff::Timestamp) -> String {
    let shown: Vec<(&str, ColumnState<'_>)> = columns
        .iter()
        .map(|c| {
            let state = match &c.read {
                Ok(reading) => ColumnState::Read(reading),
                Err(e) => ColumnState::Failed(e),
            };
            (c.context.as_str(), state)
        })
        .collect();
    let mut out = String::new();
    for (_, line) in comparison_lines(&shown, compared.as_ref(), now) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn to_json(columns: &[Column], compared: &Option<Compared>, code: u8) -> Value {
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
        .flat_map(|Compared { present: at, found }| {
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
