//! One [`FieldEdit`] applied to a document's text through `yaml-edit`'s lossless syntax tree.
//!
//! yaml-edit finds the nodes and does scalar replacement and removal in place. Block insertions
//! are spliced here instead, using the node positions yaml-edit reports: yaml-edit lays a new
//! nested block out with two spaces and always indents a new list under its key, where a manifest
//! may use four spaces or kubectl's unindented lists ([`Style`]).
use std::str::FromStr;

use serde_json::Value;
use yaml_edit::{Mapping, Sequence, YamlFile, YamlNode};

use super::path::{self, FieldPath, PathStep};
use super::style::Style;
use super::{EditError, FieldEdit, intended, parse_object, render};

/// A node of the tree at some path, with the parsed value it holds.
enum Node {
    Map(Mapping),
    Seq(Sequence),
    Other(YamlNode),
}

/// `text` with `edit` applied; `index` only names the document in errors.
pub fn apply(text: &str, edit: &FieldEdit, index: usize) -> Result<String, EditError> {
    match edit {
        FieldEdit::Set { path, value } => set(text, path.steps(), value, index),
        FieldEdit::Remove { path } => remove(text, path.steps(), true, index),
        FieldEdit::InsertItem { path, value, after } => {
            insert_item(text, path.steps(), value, after, index)
        }
        FieldEdit::Reorder { path, order } => reorder(text, path.steps(), order, index),
    }
}

/// The byte ranges of the items of a block sequence, each from the start of its first line
/// (the comment lines right above its `-` go with it) to the start of the next item's.
fn item_spans(text: &str, seq: &Sequence) -> Vec<std::ops::Range<usize>> {
    let mut starts = Vec::new();
    let mut at = 0;
    while let Some(item) = seq.get(at) {
        let start = item.byte_range().start as usize;
        let dash = text[..start].rfind('-').unwrap_or(start);
        let mut line_start = text[..dash].rfind('\n').map_or(0, |nl| nl + 1);
        // Take in the comment lines just above, down to the previous item's last line.
        while line_start > 0 {
            let previous = text[..line_start - 1].rfind('\n').map_or(0, |nl| nl + 1);
            if !text[previous..line_start].trim_start().starts_with('#') {
                break;
            }
            line_start = previous;
        }
        starts.push(line_start);
        at += 1;
    }
    let end = line_end(text, seq.byte_range().end as usize);
    starts
        .iter()
        .enumerate()
        .map(|(i, start)| *start..starts.get(i + 1).copied().unwrap_or(end))
        .collect()
}

/// A new list item at its live place; appended (or the list made) as [`set`] does otherwise.
fn insert_item(
    text: &str,
    steps: &[PathStep],
    value: &Value,
    after: &[PathStep],
    index: usize,
) -> Result<String, EditError> {
    let object = parse_object(text, index)?;
    let Some((last, parent_steps)) = steps.split_last() else {
        return set(text, steps, value, index);
    };
    let Some(Value::Array(list)) = path::lookup(&object, parent_steps) else {
        return set(text, steps, value, index);
    };
    let at = intended::insert_position(list, after);
    if path::position(list, last).is_some() || at >= list.len() {
        return set(text, steps, value, index);
    }
    let file = parse_tree(text, index)?;
    let Node::Seq(seq) = node_at(&file, &object, parent_steps)? else {
        return Err(unsupported(
            parent_steps,
            "it is not a list in the YAML tree",
        ));
    };
    if seq.is_flow_style() {
        let mut new_list = list.clone();
        new_list.insert(at, path::new_item(last, &[], value));
        return replace(text, &object, parent_steps, &Value::Array(new_list), index);
    }
    let spans = item_spans(text, &seq);
    let Some(before) = spans.get(at) else {
        return set(text, steps, value, index);
    };
    let first = seq
        .get(0)
        .map_or(0, |node| node.byte_range().start as usize);
    let dash = text[..first].rfind('-').unwrap_or(first);
    let item = path::new_item(last, &[], value);
    let lines = render::item_lines(&item, column_of(text, dash), &Style::of(text));
    Ok(splice(text, before.start, before.start, &lines))
}

/// The list at `steps` with the items `order` names in that relative order, each moved with
/// its lines and the comments above it.
fn reorder(
    text: &str,
    steps: &[PathStep],
    order: &[PathStep],
    index: usize,
) -> Result<String, EditError> {
    let object = parse_object(text, index)?;
    let Some(Value::Array(list)) = path::lookup(&object, steps) else {
        return Err(unsupported(steps, "the manifest has no such list"));
    };
    // Where each place's item comes from.
    let mut from: Vec<Value> = (0..list.len()).map(|i| Value::from(i as u64)).collect();
    let wanted: Vec<PathStep> = order
        .iter()
        .filter_map(|step| path::position(list, step))
        .map(|at| PathStep::Value(Value::from(at as u64)))
        .collect();
    intended::reorder(&mut from, &wanted);
    let from: Vec<usize> = from
        .iter()
        .filter_map(Value::as_u64)
        .map(|i| i as usize)
        .collect();
    if from.iter().enumerate().all(|(i, f)| i == *f) {
        return Ok(text.to_owned());
    }
    let file = parse_tree(text, index)?;
    let Node::Seq(seq) = node_at(&file, &object, steps)? else {
        return Err(unsupported(steps, "it is not a list in the YAML tree"));
    };
    if seq.is_flow_style() {
        let mut new_list = list.clone();
        intended::reorder(&mut new_list, order);
        return replace(text, &object, steps, &Value::Array(new_list), index);
    }
    let spans = item_spans(text, &seq);
    let (Some(first), Some(last)) = (spans.first(), spans.last()) else {
        return Ok(text.to_owned());
    };
    if spans.len() != from.len() {
        return Err(unsupported(
            steps,
            "its items could not be told apart in the text",
        ));
    }
    let mut out = String::with_capacity(text.len() + 1);
    out.push_str(&text[..first.start]);
    for &i in &from {
        out.push_str(&text[spans[i].clone()]);
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    if !text[..last.end].ends_with('\n') {
        out.pop();
    }
    out.push_str(&text[last.end..]);
    Ok(out)
}

fn unsupported(steps: &[PathStep], reason: &str) -> EditError {
    EditError::Unsupported {
        path: FieldPath(steps.to_vec()).to_string(),
        reason: reason.to_owned(),
    }
}

fn parse_tree(text: &str, index: usize) -> Result<YamlFile, EditError> {
    YamlFile::from_str(text).map_err(|error| EditError::Parse {
        index,
        line: 0,
        message: error.to_string(),
    })
}

/// The node at `steps`, which `object` (the parsed document) must have.
fn node_at(file: &YamlFile, object: &Value, steps: &[PathStep]) -> Result<Node, EditError> {
    let root = file
        .document()
        .and_then(|doc| doc.as_mapping())
        .ok_or_else(|| unsupported(steps, "the document is not a block or flow map"))?;
    let mut node = Node::Map(root);
    let mut value = object;
    for (depth, step) in steps.iter().enumerate() {
        let here = &steps[..=depth];
        let next = match (&node, step, value) {
            (Node::Map(map), PathStep::Key(name), _) => map.get(name.as_str()),
            (Node::Seq(seq), step, Value::Array(list)) => {
                path::position(list, step).and_then(|at| seq.get(at))
            }
            _ => None,
        };
        value = path::child(value, step)
            .ok_or_else(|| unsupported(here, "the document does not have it"))?;
        node = match next {
            Some(YamlNode::Mapping(map)) => Node::Map(map),
            Some(YamlNode::Sequence(seq)) => Node::Seq(seq),
            Some(YamlNode::Alias(_)) => {
                return Err(unsupported(
                    here,
                    "it is an alias (*name): the value lives at its anchor (&name), edit it there by hand",
                ));
            }
            Some(other) => Node::Other(other),
            None => return Err(unsupported(here, "the YAML tree does not have it")),
        };
    }
    Ok(node)
}

fn set(text: &str, steps: &[PathStep], value: &Value, index: usize) -> Result<String, EditError> {
    let object = parse_object(text, index)?;
    let existing = (0..=steps.len())
        .rev()
        .find(|depth| path::lookup(&object, &steps[..*depth]).is_some())
        .unwrap_or(0);
    if existing < steps.len() {
        return insert(text, &object, steps, existing, value, index);
    }
    let Some(old) = path::lookup(&object, steps) else {
        return Ok(text.to_owned());
    };
    if old == value {
        return Ok(text.to_owned());
    }
    // Two non-empty maps or two lists of one length: edit only the fields that differ, so that
    // unchanged lines (and their comments) stay.
    match (old, value) {
        (Value::Object(a), Value::Object(b)) if !a.is_empty() && !b.is_empty() => {
            let mut text = text.to_owned();
            for (key, child) in b {
                text = set(
                    &text,
                    &extend(steps, PathStep::Key(key.clone())),
                    child,
                    index,
                )?;
            }
            for key in a.keys().filter(|key| !b.contains_key(*key)) {
                text = remove(
                    &text,
                    &extend(steps, PathStep::Key(key.clone())),
                    false,
                    index,
                )?;
            }
            Ok(text)
        }
        (Value::Array(a), Value::Array(b)) if !a.is_empty() && a.len() == b.len() => {
            let mut text = text.to_owned();
            for (at, child) in b.iter().enumerate() {
                text = set(&text, &extend(steps, PathStep::Index(at)), child, index)?;
            }
            Ok(text)
        }
        _ => replace(text, &object, steps, value, index),
    }
}

fn extend(steps: &[PathStep], step: PathStep) -> Vec<PathStep> {
    let mut longer = steps.to_vec();
    longer.push(step);
    longer
}

/// Replaces the value at `steps` (present) by `value`.
fn replace(
    text: &str,
    object: &Value,
    steps: &[PathStep],
    value: &Value,
    index: usize,
) -> Result<String, EditError> {
    let Some((last, parent_steps)) = steps.split_last() else {
        return Err(unsupported(steps, "the whole document cannot be replaced"));
    };
    let file = parse_tree(text, index)?;
    let parent = node_at(&file, object, parent_steps)?;
    let target = node_at(&file, object, steps)?;
    let flow = match &parent {
        Node::Map(map) => map.is_flow_style(),
        Node::Seq(seq) => seq.is_flow_style(),
        Node::Other(_) => true,
    };
    // A scalar replaced by a scalar: in place, in the old quoting style, comments untouched.
    if let Node::Other(YamlNode::Scalar(scalar)) = &target
        && !(value.is_object() || value.is_array())
    {
        let range = scalar.byte_range();
        let old = text
            .get(range.start as usize..range.end as usize)
            .unwrap_or("");
        let new = render::replacement(old, value, flow);
        // `key:` with no value has an empty scalar right after the colon.
        let new = if old.is_empty() && !flow {
            format!(" {new}")
        } else {
            new
        };
        scalar.set_value(&new);
        return Ok(file.to_string());
    }
    let (range, target_flow) = match &target {
        Node::Map(map) => (map.byte_range(), map.is_flow_style()),
        Node::Seq(seq) => (seq.byte_range(), seq.is_flow_style()),
        Node::Other(node) => (node.byte_range(), false),
    };
    let start = range.start as usize;
    // A block node's range ends after its last line break, which stays.
    let mut end = range.end as usize;
    if end > start && text[..end].ends_with('\n') {
        end -= 1;
    }
    // A flow collection, or any value inside one, stays on its line in flow style, its
    // strings quoted as they were (`["get", "list"]` stays quoted).
    if flow || target_flow {
        let quotes = if target_flow {
            render::FlowQuotes::of(&text[start..end])
        } else {
            render::FlowQuotes::AsNeeded
        };
        return Ok(splice(
            text,
            start,
            end,
            &render::flow_text_quoted(value, quotes),
        ));
    }
    let style = Style::of(text);
    match (&parent, last) {
        (Node::Map(map), PathStep::Key(name)) => {
            let key_column = map
                .find_entry_by_key(name.as_str())
                .map_or(column_of(text, start), |entry| {
                    column_of(text, entry.byte_range().start as usize)
                });
            // From the colon of `key:`: a block starts on the next line, a scalar after a space.
            let colon = text[..start].trim_end_matches([' ', '\n']).len();
            let new = match render::block_value(value, key_column, &style) {
                Some(block) => format!("\n{}", trim_newline(&block)),
                None if text[..colon].ends_with(':') => format!(" {}", render::flow_text(value)),
                None => {
                    return Err(unsupported(
                        steps,
                        "a comment sits between the key and its value",
                    ));
                }
            };
            Ok(splice(text, colon, end, &new))
        }
        (Node::Seq(_), _) => {
            let dash = text[..start].rfind('-').unwrap_or(start);
            let item = render::item_lines(value, column_of(text, dash), &style);
            let line_start = text[..dash].rfind('\n').map_or(0, |at| at + 1);
            Ok(splice(text, line_start, end, trim_newline(&item)))
        }
        _ => Ok(splice(text, start, end, &render::flow_text(value))),
    }
}

/// Inserts what `steps` sets, of which the first `existing` steps are present.
fn insert(
    text: &str,
    object: &Value,
    steps: &[PathStep],
    existing: usize,
    value: &Value,
    index: usize,
) -> Result<String, EditError> {
    let parent_steps = &steps[..existing];
    let (step, rest) = match steps.get(existing) {
        Some(step) => (step, &steps[existing + 1..]),
        None => return Ok(text.to_owned()),
    };
    let file = parse_tree(text, index)?;
    let parent = node_at(&file, object, parent_steps)?;
    let style = Style::of(text);
    match (&parent, step) {
        (Node::Map(map), PathStep::Key(name)) => {
            let new = path::build(rest, value);
            if map.is_flow_style() || map.is_empty() {
                let node = flow_node(&new, render::FlowQuotes::AsNeeded, steps)?;
                map.set(name.as_str(), &node);
                return Ok(file.to_string());
            }
            let column = map.entries().next().map_or(0, |entry| {
                column_of(text, entry.byte_range().start as usize)
            });
            let at = line_end(text, map.byte_range().end as usize);
            Ok(insert_lines(
                text,
                at,
                &render::entry_lines(name, &new, column, &style),
            ))
        }
        (Node::Seq(seq), step) if !matches!(step, PathStep::Key(_)) => {
            let item = path::new_item(step, rest, value);
            if seq.is_flow_style() || seq.is_empty() {
                let range = seq.byte_range();
                let quotes = text
                    .get(range.start as usize..range.end as usize)
                    .map_or(render::FlowQuotes::AsNeeded, render::FlowQuotes::of);
                let node = flow_node(&item, quotes, steps)?;
                seq.push(&node);
                return Ok(file.to_string());
            }
            let first = seq
                .get(0)
                .map_or(0, |node| node.byte_range().start as usize);
            let dash = text[..first].rfind('-').unwrap_or(first);
            let at = line_end(text, seq.byte_range().end as usize);
            let lines = render::item_lines(&item, column_of(text, dash), &style);
            Ok(insert_lines(text, at, &lines))
        }
        // A null or scalar where a map or list must go: the parent's whole value is replaced.
        _ => {
            let mut new_parent = path::lookup(object, parent_steps)
                .cloned()
                .unwrap_or(Value::Null);
            intended::set(&mut new_parent, &steps[existing..], value);
            replace(text, object, parent_steps, &new_parent, index)
        }
    }
}

/// A yaml-edit node for `value` in flow style, for yaml-edit to put into a flow collection.
fn flow_node(
    value: &Value,
    quotes: render::FlowQuotes,
    steps: &[PathStep],
) -> Result<YamlNode, EditError> {
    let text = format!("k: {}\n", render::flow_text_quoted(value, quotes));
    YamlFile::from_str(&text)
        .ok()
        .and_then(|file| file.document())
        .and_then(|doc| doc.as_mapping())
        .and_then(|map| map.get("k"))
        .ok_or_else(|| unsupported(steps, "its value cannot be written in flow style"))
}

fn remove(text: &str, steps: &[PathStep], prune: bool, index: usize) -> Result<String, EditError> {
    let mut object = parse_object(text, index)?;
    if path::lookup(&object, steps).is_none() {
        return Ok(text.to_owned());
    }
    let Some((last, parent_steps)) = steps.split_last() else {
        return Err(unsupported(steps, "the whole document cannot be removed"));
    };
    let file = parse_tree(text, index)?;
    let mut spliced = None;
    match (node_at(&file, &object, parent_steps)?, last) {
        (Node::Map(map), PathStep::Key(name)) => {
            match block_entry_lines(text, &map, name) {
                // The document's last key: yaml-edit writes `{}` over the whole document, the
                // blank lines and comments after the entry too. Only the entry becomes `{}`.
                Some(lines) if parent_steps.is_empty() && map.entries().count() == 1 => {
                    let end = lines.start + text[lines.clone()].trim_end().len();
                    return Ok(splice(text, lines.start, end, "{}"));
                }
                // yaml-edit may take a blank line next to the entry with it: the entry's own
                // lines go, and nothing else. (A map it empties is left to yaml-edit, which
                // writes `{}`.)
                Some(lines) if map.entries().count() > 1 => {
                    spliced = Some(splice(text, lines.start, lines.end, ""));
                }
                _ => {
                    map.remove(name.as_str());
                }
            }
        }
        (Node::Seq(seq), step) => {
            let at = path::lookup(&object, parent_steps)
                .and_then(Value::as_array)
                .and_then(|list| path::position(list, step));
            if let Some(at) = at {
                seq.remove(at);
            }
        }
        _ => return Err(unsupported(steps, "its parent is not a map or list")),
    }
    let mut edited = spliced.unwrap_or_else(|| file.to_string());
    // The same pruning as the intended object: an emptied map or list under a key goes too.
    intended::remove(&mut object, steps, false);
    if prune && intended::should_prune(&object, parent_steps) {
        edited = remove(&edited, parent_steps, true, index)?;
    }
    Ok(edited)
}

/// The lines of the entry `name` of the block map `map`: from the start of its key's line, which
/// holds nothing before the key but indentation, through the end of its last non-blank line and
/// the comment lines indented deeper than it that follow.
fn block_entry_lines(text: &str, map: &Mapping, name: &str) -> Option<std::ops::Range<usize>> {
    if map.is_flow_style() {
        return None;
    }
    let range = map.find_entry_by_key(name)?.byte_range();
    let start = range.start as usize;
    let end = start + text.get(start..range.end as usize)?.trim_end().len();
    let line_start = text[..start].rfind('\n').map_or(0, |at| at + 1);
    if !text[line_start..start].bytes().all(|byte| byte == b' ') {
        return None;
    }
    // Comment lines indented deeper than the key are the entry's own.
    let column = start - line_start;
    let mut end = line_end(text, end);
    while let Some(line) = text[end..].split_inclusive('\n').next() {
        let content = line.trim_start_matches(' ');
        if !content.starts_with('#') || line.len() - content.len() <= column {
            break;
        }
        end += line.len();
    }
    Some(line_start..end)
}

/// 0-based column of byte `offset`.
fn column_of(text: &str, offset: usize) -> usize {
    let line_start = text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |at| at + 1);
    offset.saturating_sub(line_start)
}

/// The start of the line after the one holding byte `offset` (a node's end); `offset` itself
/// when it already starts a line.
fn line_end(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    if offset == 0 || text[..offset].ends_with('\n') {
        return offset;
    }
    text[offset..]
        .find('\n')
        .map_or(text.len(), |at| offset + at + 1)
}

/// `lines` (each ending in `\n`) inserted at line start `at`; at the end of a file with no final
/// line break, the break goes before them instead.
fn insert_lines(text: &str, at: usize, lines: &str) -> String {
    if at >= text.len() && !text.is_empty() && !text.ends_with('\n') {
        return format!("{text}\n{}", trim_newline(lines));
    }
    splice(text, at, at, lines)
}

fn trim_newline(text: &str) -> &str {
    text.strip_suffix('\n').unwrap_or(text)
}

fn splice(text: &str, start: usize, end: usize, new: &str) -> String {
    let mut out = String::with_capacity(text.len() + new.len());
    out.push_str(&text[..start]);
    out.push_str(new);
    out.push_str(&text[end..]);
    out
}
