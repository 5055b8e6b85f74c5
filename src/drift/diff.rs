//! One object's drift as a unified diff (`similar`) of the manifest's fields against their live
//! values, in the manifest's YAML shape, each drifted line annotated with manager and age: what
//! `kdrift diff` prints and the TUI's `d` view draws.
use serde_json::{Map, Value};
use similar::{ChangeTag, TextDiff};

use crate::manifest::ObjectKey;
use crate::schema::Schema;

use super::path::{DriftPath, PathStep};
use super::report::attribution_text;
use super::{Class, DriftItem, ObjectDrift};

/// What a diff line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Header,
    Hunk,
    Context,
    Removed,
    Added,
}

/// One line of the diff; `item` is the index of the drift item it shows (for "next drifted
/// field" keys), `note` its attribution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: LineKind,
    pub text: String,
    pub note: Option<String>,
    pub item: Option<usize>,
}

/// Two paths address the same node (list items by key, whatever their manifest position).
fn same_node(a: &DriftPath, b: &DriftPath) -> bool {
    a.0.len() == b.0.len()
        && a.0.iter().zip(&b.0).all(|(x, y)| match (x, y) {
            (PathStep::Item { key: k1, .. }, PathStep::Item { key: k2, .. }) => k1 == k2,
            _ => x == y,
        })
}

fn item_matches(schema: Schema, item: &Value, key: &Map<String, Value>) -> bool {
    match schema.item_key(item) {
        Some(item_key) => item_key == *key,
        None => !key.is_empty() && key.iter().all(|(k, v)| item.get(k) == Some(v)),
    }
}

/// Applies one drift item to `target` (the manifest's value), so that it shows the live value.
fn apply(target: &mut Value, schema: Schema, steps: &[PathStep], item: &DriftItem) {
    let Some((step, rest)) = steps.split_first() else {
        return;
    };
    let live = item.live.clone();
    match (step, target) {
        (PathStep::Field(name), Value::Object(map)) if rest.is_empty() => {
            match (item.class, live) {
                (Class::Reordered, Some(Value::Array(names))) => {
                    if let Some(Value::Array(list)) = map.get_mut(name) {
                        crate::manifest::edit::intended::reorder(list, &name_steps(&names));
                    }
                }
                (Class::RemovedLive, _) | (_, None) => {
                    map.shift_remove(name);
                }
                (_, Some(value)) => {
                    map.insert(name.clone(), value);
                }
            }
        }
        (PathStep::Field(name), Value::Object(map)) => {
            // A field added live below a map the manifest does not have: make the map.
            if item.class != Class::RemovedLive && !map.contains_key(name) {
                map.insert(name.clone(), Value::Object(Map::new()));
            }
            if let Some(next) = map.get_mut(name) {
                apply(next, schema.field(name), rest, item);
            }
        }
        (PathStep::Item { key, index }, Value::Array(list)) => {
            let item_schema = schema.item();
            let found = list
                .iter()
                .position(|v| item_matches(schema, v, key))
                .or(if key.is_empty() { *index } else { None });
            match (found, rest.is_empty(), live) {
                (Some(at), true, _) if item.class == Class::RemovedLive => {
                    list.remove(at);
                }
                (Some(at), true, Some(value)) => list[at] = value,
                (None, true, Some(value)) => list.push(value),
                (Some(at), false, _) => apply(&mut list[at], item_schema, rest, item),
                _ => {}
            }
        }
        (PathStep::Value(value), Value::Array(list)) if rest.is_empty() => {
            if item.class == Class::RemovedLive {
                list.retain(|v| v != value);
            } else if !list.contains(value) {
                list.push(value.clone());
            }
        }
        _ => {}
    }
}

/// The steps to the items of a keyed list named `names` (a reordered `env`'s order).
pub fn name_steps(names: &[Value]) -> Vec<crate::manifest::edit::PathStep> {
    names
        .iter()
        .map(|name| {
            let mut key = Map::new();
            key.insert("name".to_owned(), name.clone());
            crate::manifest::edit::PathStep::Item(key)
        })
        .collect()
}

/// A YAML line and the path of the node it starts.
struct Emitted {
    text: String,
    /// The node the line starts, and for `- key: value` also the list item.
    paths: Vec<DriftPath>,
}

/// A scalar as the manifest's writer would put it: quoted where YAML 1.1 (as Kubernetes and
/// kubectl read it) would read another type (`"on"`, `"yes"`, `"0755"`), as an edit writes it.
fn scalar_yaml(value: &Value) -> String {
    match value {
        Value::String(text) if text.contains('\n') => {
            serde_json::to_string(text).unwrap_or_default()
        }
        _ => crate::manifest::edit::render::inline(value, false).unwrap_or_else(|| {
            serde_yaml::to_string(value)
                .map(|s| s.trim_end().to_owned())
                .unwrap_or_default()
        }),
    }
}

fn key_yaml(key: &str) -> String {
    crate::manifest::edit::render::key(key)
}

/// Block-style YAML of `map`, one [`Emitted`] per line, in the manifest's key order.
fn emit_map(
    map: &Map<String, Value>,
    schema: Schema,
    indent: usize,
    path: &mut DriftPath,
    out: &mut Vec<Emitted>,
) {
    let pad = " ".repeat(indent);
    for (name, value) in map {
        path.0.push(PathStep::Field(name.clone()));
        let key = key_yaml(name);
        match value {
            Value::Object(inner) if !inner.is_empty() => {
                out.push(Emitted {
                    text: format!("{pad}{key}:"),
                    paths: vec![path.clone()],
                });
                emit_map(inner, schema.field(name), indent + 2, path, out);
            }
            Value::Array(items) if !items.is_empty() => {
                out.push(Emitted {
                    text: format!("{pad}{key}:"),
                    paths: vec![path.clone()],
                });
                emit_list(items, schema.field(name), indent, path, out);
            }
            scalar => out.push(Emitted {
                text: format!("{pad}{key}: {}", scalar_yaml(scalar)),
                paths: vec![path.clone()],
            }),
        }
        path.0.pop();
    }
}

fn emit_list(
    items: &[Value],
    schema: Schema,
    indent: usize,
    path: &mut DriftPath,
    out: &mut Vec<Emitted>,
) {
    let pad = " ".repeat(indent);
    for (index, item) in items.iter().enumerate() {
        let step = match (schema.item_key(item), item) {
            (Some(key), _) => PathStep::Item {
                key,
                index: Some(index),
            },
            (None, Value::Object(_) | Value::Array(_)) => PathStep::Item {
                key: Map::new(),
                index: Some(index),
            },
            (None, scalar) => PathStep::Value(scalar.clone()),
        };
        path.0.push(step);
        match item {
            Value::Object(map) if !map.is_empty() => {
                let first = out.len();
                emit_map(map, schema.item(), indent + 2, path, out);
                if let Some(line) = out.get_mut(first) {
                    line.text.replace_range(..indent + 2, &format!("{pad}- "));
                    line.paths.push(path.clone());
                }
            }
            other => out.push(Emitted {
                text: format!("{pad}- {}", scalar_yaml(other)),
                paths: vec![path.clone()],
            }),
        }
        path.0.pop();
    }
}

fn emit(value: &Value, schema: Schema) -> Vec<Emitted> {
    let mut out = Vec::new();
    if let Value::Object(map) = value {
        emit_map(map, schema, 0, &mut DriftPath::default(), &mut out);
    }
    out
}

/// The diff of `manifest` (the object's manifest value) against the same fields live, with
/// `context` lines around each change. `old_name` names the manifest side (its file).
pub fn diff_lines(
    manifest: &Value,
    drift: &ObjectDrift,
    old_name: &str,
    now: jiff::Timestamp,
    context: usize,
) -> Vec<DiffLine> {
    let root = drift.schema;
    // A Secret is shown as the server stores it, every value a digest.
    let masked;
    let manifest = if super::secret::is_secret(&drift.key) {
        let mut folded = super::secret::fold_string_data(manifest);
        super::secret::mask_object(&mut folded);
        masked = folded;
        &masked
    } else {
        manifest
    };
    let mut live = manifest.clone();
    for item in &drift.items {
        apply(&mut live, root, &item.path.0, item);
    }
    let (old, new) = (emit(manifest, root), emit(&live, root));
    let old_text: Vec<&str> = old.iter().map(|l| l.text.as_str()).collect();
    let new_text: Vec<&str> = new.iter().map(|l| l.text.as_str()).collect();
    let diff = TextDiff::from_slices(&old_text, &new_text);
    let item_at = |emitted: &Emitted, removed: bool| {
        drift.items.iter().position(|item| {
            (item.class == Class::RemovedLive) == removed
                && emitted.paths.iter().any(|p| same_node(&item.path, p))
        })
    };
    // A release's object is compared with the release in the cluster, not with git.
    let side = if old_name.starts_with("helm:") {
        "release"
    } else {
        "git"
    };
    let mut lines = vec![
        DiffLine {
            kind: LineKind::Header,
            text: format!("--- {old_name} ({side})"),
            note: None,
            item: None,
        },
        DiffLine {
            kind: LineKind::Header,
            text: format!("+++ {} (live)", key_label(&drift.key)),
            note: None,
            item: None,
        },
    ];
    for group in diff.grouped_ops(context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (old_start, new_start) = (first.old_range().start, first.new_range().start);
        let (old_len, new_len) = (
            last.old_range().end - old_start,
            last.new_range().end - new_start,
        );
        lines.push(DiffLine {
            kind: LineKind::Hunk,
            text: format!(
                "@@ -{},{old_len} +{},{new_len} @@",
                old_start + 1,
                new_start + 1
            ),
            note: None,
            item: None,
        });
        for op in &group {
            for change in diff.iter_changes(op) {
                let (kind, emitted) = match change.tag() {
                    ChangeTag::Equal => (LineKind::Context, None),
                    ChangeTag::Delete => (
                        LineKind::Removed,
                        change.old_index().and_then(|i| old.get(i)),
                    ),
                    ChangeTag::Insert => {
                        (LineKind::Added, change.new_index().and_then(|i| new.get(i)))
                    }
                };
                let item = emitted.and_then(|e| item_at(e, kind == LineKind::Removed));
                let note = item
                    .and_then(|i| drift.items.get(i))
                    .map(|i| attribution_text(i, now));
                lines.push(DiffLine {
                    kind,
                    text: change.value().to_owned(),
                    note,
                    item,
                });
            }
        }
    }
    lines
}

/// Puts where each item's value is written (`sources`, by item) before the note of the item's
/// first line: `overlays/prod/kustomization.yaml:12 (replicas) · kubectl (scale) · 3m ago`.
pub fn name_sources(lines: &mut [DiffLine], sources: &[Option<String>]) {
    let mut named = vec![false; sources.len()];
    for line in lines {
        let Some(item) = line.item else { continue };
        let Some(Some(source)) = sources.get(item) else {
            continue;
        };
        if std::mem::replace(&mut named[item], true) {
            continue;
        }
        line.note = Some(match line.note.take() {
            Some(note) => format!("{source} · {note}"),
            None => source.clone(),
        });
    }
}

/// For a kustomize root's object, where each drifted field's value is written (the overlay
/// entry, patch or generator that sets it, else the resource document); `None` for another.
/// The live view draws from memory and does not read the resource file again, so a field of
/// the resource document is named by its file alone (`base/hpa.yaml (resource)`): a line there
/// would be the document's, not the field's that `kdrift diff` and `check` name.
pub fn sources_of(
    index: &crate::manifest::ManifestIndex,
    manifest: &crate::manifest::ManifestObject,
    drift: &ObjectDrift,
) -> Option<Vec<Option<String>>> {
    manifest.rendered.as_ref()?;
    let root = &index.root;
    Some(
        drift
            .items
            .iter()
            .map(|item| {
                Some(
                    match index.kustomize.source_of(manifest, &item.path.edit_path()) {
                        Some(source) => source.place().shown(root),
                        None => format!(
                            "{} (resource)",
                            manifest
                                .file
                                .strip_prefix(root)
                                .unwrap_or(&manifest.file)
                                .display()
                        ),
                    },
                )
            })
            .collect(),
    )
}

/// [`sources_of`] with each field's own line, read from its file: the place `kdrift check`
/// and the diff's hunk header name.
fn field_sources(
    index: &crate::manifest::ManifestIndex,
    manifest: &crate::manifest::ManifestObject,
    drift: &ObjectDrift,
) -> Option<Vec<Option<String>>> {
    manifest.rendered.as_ref()?;
    Some(
        drift
            .items
            .iter()
            .map(|item| {
                let place =
                    index.place_of(manifest, &item.path.edit_path(), &item.path.line_steps());
                Some(place.shown_here())
            })
            .collect(),
    )
}

fn key_label(key: &ObjectKey) -> String {
    key.to_string()
}

/// `kdrift diff`: the whole diff of one object with 3 lines of context, as text. Hunk numbers
/// count the lines of the manifest as drawn; each hunk also names the file line of its first
/// drifted field.
pub fn unified(
    index: Option<&crate::manifest::ManifestIndex>,
    manifest: &crate::manifest::ManifestObject,
    drift: &ObjectDrift,
    now: jiff::Timestamp,
    colour: bool,
) -> String {
    let name = format!(
        "{}:{}",
        crate::manifest::shown_path(&manifest.file),
        manifest.line
    );
    let mut lines = diff_lines(&manifest.body.to_value(), drift, &name, now, 3);
    if let Some(sources) = index.and_then(|index| field_sources(index, manifest, drift)) {
        name_sources(&mut lines, &sources);
    }
    place_hunks(index, manifest, drift, &mut lines);
    render(&lines, colour)
}

/// Names after each hunk header the file line of the hunk's first drifted field (hunk numbers
/// count the lines of the manifest as drawn, not the file's): `kdrift diff` and the live diff.
pub fn place_hunks(
    index: Option<&crate::manifest::ManifestIndex>,
    manifest: &crate::manifest::ManifestObject,
    drift: &ObjectDrift,
    lines: &mut [DiffLine],
) {
    for at in 0..lines.len() {
        if lines[at].kind != LineKind::Hunk {
            continue;
        }
        let first_item = lines[at + 1..]
            .iter()
            .take_while(|l| l.kind != LineKind::Hunk)
            .find_map(|l| l.item);
        if let Some(item) = first_item.and_then(|i| drift.items.get(i)) {
            // A kustomize root's field names the overlay entry or patch that sets it.
            let steps = item.path.line_steps();
            let place = match index {
                Some(index) => index.place_of(manifest, &item.path.edit_path(), &steps),
                None => manifest.place(&steps),
            };
            lines[at].text.push_str(&format!(" {}", place.shown_here()));
        }
    }
}

/// The diff as text: plain, or coloured with ANSI escapes for a terminal.
pub fn render(lines: &[DiffLine], colour: bool) -> String {
    let mut out = String::new();
    for line in lines {
        let (prefix, paint) = match line.kind {
            LineKind::Header => ("", "\x1b[1m"),
            LineKind::Hunk => ("", "\x1b[36m"),
            LineKind::Context => (" ", ""),
            LineKind::Removed => ("-", "\x1b[31m"),
            LineKind::Added => ("+", "\x1b[32m"),
        };
        let note = line
            .note
            .as_ref()
            .map(|n| format!("  # {}", crate::text::printable(n)))
            .unwrap_or_default();
        let text = crate::text::printable(&line.text);
        if colour && !paint.is_empty() {
            out.push_str(&format!(
                "{paint}{prefix}{text}\x1b[0m\x1b[2m{note}\x1b[0m\n"
            ));
        } else {
            out.push_str(&format!("{prefix}{text}{note}\n"));
        }
    }
    out
}
