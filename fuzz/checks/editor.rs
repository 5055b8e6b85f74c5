//! The format-preserving editor: for any file and any edit, `edit_document` either refuses, or
//! returns a file whose edited document re-parses to exactly the intended object (the original
//! object with the edits applied), whose other documents are byte for byte the same, and in
//! which every byte outside the edited nodes is unchanged.
//!
//! The input is the file's text, then optionally a NUL byte and the bytes the edit is drawn from
//! (with `arbitrary`): a seed that is a plain YAML file gets the edit of empty choices. Paths are
//! drawn along the parsed document, so that most address nodes it has.
use std::ops::Range;

use arbitrary::{Result, Unstructured};
use kdrift::manifest::edit::{self, FieldEdit, FieldPath, PathStep, documents, intended, path};
use kdrift::manifest::lines::{Step, line_of};
use serde_json::{Map, Value};

const BOM: char = '\u{feff}';

pub fn editor(data: &[u8]) {
    let (text, choices) = match data.iter().position(|byte| *byte == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let Ok(source) = std::str::from_utf8(text) else {
        return;
    };
    let mut u = Unstructured::new(choices);
    if let Ok((index, edits)) = draw_edits(&mut u, source) {
        check_edit(source, index, &edits);
    }
}

/// The document's text as the checker reads it: line breaks as `\n`.
fn lf(text: &str) -> String {
    text.replace("\r\n", "\n")
}

fn parse(text: &str) -> Option<Value> {
    serde_yaml::from_str(text).ok()
}

/// The property, for one file, document and list of edits.
pub fn check_edit(source: &str, index: usize, edits: &[FieldEdit]) {
    let Ok(out) = edit::edit_document(source, index, edits) else {
        return;
    };
    let context = || format!("edits {edits:?} of document {index} of\n{source:?}\ngave\n{out:?}");
    assert_eq!(
        source.starts_with(BOM),
        out.starts_with(BOM),
        "the byte-order mark moved: {}",
        context()
    );
    let before = source.strip_prefix(BOM).unwrap_or(source);
    let after = out.strip_prefix(BOM).unwrap_or(&out);
    if documents::uses_crlf(before) {
        assert_eq!(
            after.matches('\n').count(),
            after.matches("\r\n").count(),
            "a CRLF file got LF line breaks: {}",
            context()
        );
    }

    // Other documents and the markers between them: the same bytes.
    let old = documents::split(before);
    let new = documents::split(after);
    assert_eq!(
        old.len(),
        new.len(),
        "the number of documents changed: {}",
        context()
    );
    let Some(edited) = old.get(index).cloned() else {
        panic!(
            "the editor edited document {index}, which the file does not have: {}",
            context()
        );
    };
    for (at, (a, b)) in old.iter().zip(&new).enumerate() {
        if at != index {
            assert_eq!(
                &before[a.clone()],
                &after[b.clone()],
                "document {at} changed: {}",
                context()
            );
        }
    }
    let gaps = |pieces: &[Range<usize>], text: &str| -> Vec<String> {
        let mut ends = vec![0];
        ends.extend(pieces.iter().flat_map(|piece| [piece.start, piece.end]));
        ends.push(text.len());
        ends.chunks(2)
            .map(|pair| text[pair[0]..pair[1]].to_owned())
            .collect()
    };
    assert_eq!(
        gaps(&old, before),
        gaps(&new, after),
        "a document marker changed: {}",
        context()
    );

    // The edited document re-parses to the intended object.
    let old_doc = lf(&before[edited]);
    let new_doc = lf(&after[new[index].clone()]);
    let Some(original) = parse(&old_doc).filter(Value::is_object) else {
        panic!(
            "the editor edited a document that is not a YAML mapping: {}",
            context()
        );
    };
    let Some(actual) = parse(&new_doc) else {
        panic!("the edited document is not valid YAML: {}", context());
    };
    let wanted = intended::apply(&original, edits);
    assert_eq!(
        actual,
        wanted,
        "the edited document is not the intended object: {}",
        context()
    );
    // Independently of `intended`: a value set at a path of map keys is there.
    if let [FieldEdit::Set { path, value }] = edits
        && !path.steps().is_empty()
        && path
            .steps()
            .iter()
            .all(|step| matches!(step, PathStep::Key(_)))
    {
        assert_eq!(
            path::lookup(&actual, path.steps()),
            Some(value),
            "the value set is not at its path: {}",
            context()
        );
    }

    // Every byte outside the edited nodes is unchanged.
    let mut before = original.clone();
    let mut regions: Vec<Range<usize>> = Vec::new();
    for (at, edit) in edits.iter().enumerate() {
        regions.extend(
            edited_region(&old_doc, &original, &before, at == 0, edit)
                .map(|region| without_final_break(&old_doc, region)),
        );
        before = intended::apply(&before, std::slice::from_ref(edit));
    }
    let changed = [
        changed_range(&old_doc, &new_doc, true),
        changed_range(&old_doc, &new_doc, false),
    ];
    if old_doc == new_doc {
        return;
    }
    // Nodes that together end the document (one removal may leave another last): the break
    // before the first of them goes too.
    let hull = regions
        .iter()
        .cloned()
        .reduce(|a, b| a.start.min(b.start)..a.end.max(b.end))
        .map(|hull| without_final_break(&old_doc, hull));
    // The change may sit anywhere between its two readings (text equal to what was removed or
    // added lies on both sides of it): one of those places must be inside the edited nodes.
    let (lo, hi) = (changed[1].start, changed[0].start);
    let inside = hull.as_ref().is_some_and(|hull| {
        changed.iter().any(|change| {
            let length = change.len();
            let first = lo.max(hull.start);
            let last = hi.min(hull.end.saturating_sub(length));
            hull.end >= length && first <= last
        })
    });
    assert!(
        inside,
        "bytes outside the edited nodes changed: old bytes {:?} (or {:?}) changed, the edited nodes are at {regions:?}\n{}",
        changed[0],
        changed[1],
        context()
    );
}

/// A node that ends a document without a final line break: the break before it is the
/// document's last one once the node is gone or rewritten, and goes (a missing final line break
/// stays missing).
fn without_final_break(doc: &str, region: Range<usize>) -> Range<usize> {
    if region.end == doc.len() && !doc.ends_with('\n') && doc[..region.start].ends_with('\n') {
        region.start - 1..region.end
    } else {
        region
    }
}

/// The bytes of `old` that differ from `new`: after the longest common prefix and before the
/// longest common suffix (prefix first, or suffix first: a change next to text equal to it can
/// be read at each place from one to the other).
fn changed_range(old: &str, new: &str, prefix_first: bool) -> Range<usize> {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let most = a.len().min(b.len());
    let prefix = |limit: usize| {
        a.iter()
            .zip(b)
            .take(limit)
            .take_while(|(x, y)| x == y)
            .count()
    };
    let suffix = |limit: usize| {
        a.iter()
            .rev()
            .zip(b.iter().rev())
            .take(limit)
            .take_while(|(x, y)| x == y)
            .count()
    };
    let (p, s) = if prefix_first {
        let p = prefix(most);
        (p, suffix(most - p))
    } else {
        let s = suffix(most);
        (prefix(most - s), s)
    };
    p..a.len() - s
}

/// The bytes of the document `doc` (whose value is `original`) that `edit` may change: the node
/// it sets, removes (with the parents its removal empties, and a map or list it empties but keeps,
/// which is written anew as `{}` or `[]`) or reorders, or for a new node the map or list that
/// receives it. `before` is the object the edit applies to (after the edits before it): the
/// region is found there, then taken back to the nearest ancestor `original` has — by map keys
/// only for a later edit, as an earlier one may have moved list items. `None`: the edit changes
/// nothing (a removal of what is absent).
fn edited_region(
    doc: &str,
    original: &Value,
    before: &Value,
    first: bool,
    edit: &FieldEdit,
) -> Option<Range<usize>> {
    let steps = edit.path().steps();
    let existing = (0..=steps.len())
        .rev()
        .find(|depth| path::lookup(before, &steps[..*depth]).is_some())
        .unwrap_or(0);
    let depth = match edit {
        FieldEdit::Set { .. } => existing,
        FieldEdit::Remove { .. } => {
            if existing < steps.len() || steps.is_empty() {
                return None;
            }
            let holds_one = |depth: usize| {
                path::lookup(before, &steps[..depth]).is_some_and(|parent| match parent {
                    Value::Object(map) => map.len() == 1,
                    Value::Array(list) => list.len() == 1,
                    _ => false,
                })
            };
            // A map or list left empty below a top-level field goes too.
            let mut depth = steps.len();
            while depth >= 3 && matches!(steps[depth - 2], PathStep::Key(_)) && holds_one(depth - 1)
            {
                depth -= 1;
            }
            // One left empty and kept is written anew.
            if depth >= 2 && holds_one(depth - 1) {
                depth -= 1;
            }
            depth
        }
        FieldEdit::InsertItem { .. } => existing.min(steps.len().saturating_sub(1)),
        FieldEdit::Reorder { .. } => existing,
    };
    let known = (0..=depth)
        .rev()
        .find(|known| {
            (first
                || steps[..*known]
                    .iter()
                    .all(|step| matches!(step, PathStep::Key(_))))
                && path::lookup(original, &steps[..*known]).is_some()
        })
        .unwrap_or(0);
    Some(node_span(doc, original, &steps[..known]))
}

/// The bytes of the node at `steps` (present in `object`): from the start of its line through
/// its last line (lines indented deeper than it, or an unindented list under its key). Where
/// the text does not show the node plainly (flow style, odd keys), its parent's span: wider,
/// never narrower.
fn node_span(doc: &str, object: &Value, steps: &[PathStep]) -> Range<usize> {
    let Some((last, parent)) = steps.split_last() else {
        return 0..doc.len();
    };
    let outer = node_span(doc, object, parent);
    // YAML also breaks lines at a lone carriage return; these lines are split at `\n` only, so
    // such a text gets the parent's span (the document's, in the end).
    if doc.replace("\r\n", "").contains('\r') {
        return outer;
    }
    let Some(line_steps) = line_steps(object, steps) else {
        return outer;
    };
    let number = line_of(doc, &line_steps);
    let lines: Vec<(usize, &str)> = doc
        .split_inclusive('\n')
        .scan(0, |offset, line| {
            let start = *offset;
            *offset += line.len();
            Some((start, line))
        })
        .collect();
    let Some(&(start, first)) = lines.get(number) else {
        return outer;
    };
    if !outer.contains(&start) && start != outer.start {
        return outer;
    }
    // The column of the node: of its key, or of its item's dash.
    let indent = first.len() - first.trim_start_matches(' ').len();
    let column = match last {
        PathStep::Key(name) => {
            let mut column = indent;
            let mut rest = &first[indent..];
            while let Some(after) = rest.strip_prefix("- ") {
                let spaces = after.len() - after.trim_start_matches(' ').len();
                column += 2 + spaces;
                rest = &after[spaces..];
            }
            let bare = rest.trim_start_matches(['"', '\'']);
            if !bare.starts_with(name.as_str()) || name.is_empty() {
                return outer;
            }
            column
        }
        _ => {
            if !first[indent..].starts_with('-') {
                return outer;
            }
            indent
        }
    };
    let mut end = start + first.len();
    // A block scalar takes the blank lines after it (the scanner reads them for its chomping):
    // they belong to its node.
    let block_indicator = |text: &str| {
        text.trim_end()
            .rsplit(' ')
            .next()
            .is_some_and(|token| token.starts_with(['|', '>']))
    };
    let mut block = block_indicator(first);
    for &(line_start, line) in &lines[number + 1..] {
        let content = line.trim_start_matches(' ');
        let line_indent = line.len() - content.len();
        let blank = content.trim().is_empty();
        let comment = content.starts_with('#');
        let deeper = line_indent > column;
        // A key's value may start at the key's column: an unindented list, or (libyaml allows
        // it) a block scalar.
        let list_under_key = matches!(last, PathStep::Key(_))
            && line_indent <= column
            && (content.starts_with(['|', '>'])
                || line_indent == column && content.starts_with('-'));
        if blank && block {
            end = line_start + line.len();
            continue;
        }
        if blank || (comment && !deeper) {
            continue;
        }
        if deeper || list_under_key {
            if list_under_key {
                block = content.starts_with(['|', '>']);
            }
            end = line_start + line.len();
        } else {
            break;
        }
    }
    start..end.min(outer.end.max(start))
}

/// The line-finder's steps for `steps` (list items by their position), if `object` has them.
fn line_steps<'s>(object: &Value, steps: &'s [PathStep]) -> Option<Vec<Step<'s>>> {
    let mut at = object;
    let mut out = Vec::with_capacity(steps.len());
    for step in steps {
        match step {
            PathStep::Key(name) => {
                out.push(Step::Field(name));
                at = at.get(name)?;
            }
            other => {
                let list = at.as_array()?;
                let position = path::position(list, other)?;
                out.push(Step::Item(position));
                at = list.get(position)?;
            }
        }
    }
    Some(out)
}

/// The document to edit (by the loader's count, sometimes one the file lacks) and 1–3 edits.
fn draw_edits(u: &mut Unstructured<'_>, source: &str) -> Result<(usize, Vec<FieldEdit>)> {
    let body = source.strip_prefix(BOM).unwrap_or(source);
    let pieces = documents::split(body);
    let index = if u.ratio(1, 32)? {
        pieces.len() + u.int_in_range(0..=1)?
    } else {
        u.choose_index(pieces.len())?
    };
    let mut object = pieces
        .get(index)
        .and_then(|piece| parse(&lf(&body[piece.clone()])))
        .unwrap_or(Value::Null);
    let count = u.int_in_range(1..=3)?;
    let mut edits = Vec::with_capacity(count);
    for _ in 0..count {
        let edit = draw_edit(u, &object)?;
        object = intended::apply(&object, std::slice::from_ref(&edit));
        edits.push(edit);
    }
    Ok((index, edits))
}

fn draw_edit(u: &mut Unstructured<'_>, object: &Value) -> Result<FieldEdit> {
    Ok(match u.int_in_range(0..=9)? {
        0..=4 => FieldEdit::Set {
            path: draw_path(u, object)?,
            value: draw_value(u, 3)?,
        },
        5 | 6 => FieldEdit::Remove {
            path: draw_path(u, object)?,
        },
        7 | 8 => {
            let mut path = draw_path(u, object)?;
            if matches!(path.0.last(), None | Some(PathStep::Key(_))) {
                let list = path::lookup(object, &path.0);
                path.0.push(new_step(u, list, true)?);
            }
            let (_, parent) = path.0.split_last().unwrap_or((&PathStep::Index(0), &[]));
            let after = match path::lookup(object, parent) {
                Some(Value::Array(list)) => {
                    let mut after = Vec::new();
                    for _ in 0..u.int_in_range(0..=2)? {
                        after.push(address(u, list)?);
                    }
                    after
                }
                _ => Vec::new(),
            };
            FieldEdit::InsertItem {
                path,
                value: draw_value(u, 2)?,
                after,
            }
        }
        _ => {
            let path = draw_path(u, object)?;
            let order = match path::lookup(object, &path.0) {
                Some(Value::Array(list)) => {
                    let mut order = Vec::new();
                    for _ in 0..u.int_in_range(0..=list.len().min(5))? {
                        order.push(address(u, list)?);
                    }
                    order
                }
                _ => vec![PathStep::Index(u.int_in_range(0..=3)?)],
            };
            FieldEdit::Reorder { path, order }
        }
    })
}

/// A path along `root`: mostly through nodes it has, sometimes on into new ones.
fn draw_path(u: &mut Unstructured<'_>, root: &Value) -> Result<FieldPath> {
    let mut steps = Vec::new();
    let mut node = Some(root);
    while steps.len() < 7 {
        if !steps.is_empty() && u.ratio(1, 3)? {
            break;
        }
        let into_existing = !u.ratio(1, 6)?;
        match node {
            Some(Value::Object(map)) if into_existing && !map.is_empty() => {
                let at = u.choose_index(map.len())?;
                let Some((key, child)) = map.iter().nth(at) else {
                    break;
                };
                steps.push(PathStep::Key(key.clone()));
                node = Some(child);
            }
            Some(Value::Array(list)) if into_existing && !list.is_empty() => {
                let step = address(u, list)?;
                node = path::position(list, &step).and_then(|at| list.get(at));
                steps.push(step);
            }
            _ => {
                steps.push(new_step(u, node, false)?);
                node = None;
            }
        }
    }
    Ok(FieldPath(steps))
}

/// A step to one item of `list`: its position, a merge-key field of a map item, or its value.
fn address(u: &mut Unstructured<'_>, list: &[Value]) -> Result<PathStep> {
    let at = u.choose_index(list.len().max(1))?;
    let Some(item) = list.get(at) else {
        return Ok(PathStep::Index(at));
    };
    if u.ratio(1, 4)? {
        return Ok(PathStep::Index(at));
    }
    Ok(match item {
        Value::Object(map) => {
            let fields: Vec<(&String, &Value)> = map
                .iter()
                .filter(|(_, value)| !value.is_object() && !value.is_array())
                .collect();
            if fields.is_empty() {
                PathStep::Index(at)
            } else {
                let (field, value) = fields[u.choose_index(fields.len())?];
                let mut key = Map::new();
                key.insert(field.clone(), value.clone());
                PathStep::Item(key)
            }
        }
        Value::Array(_) => PathStep::Index(at),
        scalar => PathStep::Value(scalar.clone()),
    })
}

/// A step to something `node` does not have (yet).
fn new_step(u: &mut Unstructured<'_>, node: Option<&Value>, item: bool) -> Result<PathStep> {
    let list = item || matches!(node, Some(Value::Array(_)));
    Ok(match (list, u.int_in_range(0..=5)?) {
        (true, 0..=2) => {
            let mut key = Map::new();
            key.insert(draw_key(u)?, draw_scalar(u)?);
            PathStep::Item(key)
        }
        (true, 3) => PathStep::Value(draw_scalar(u)?),
        (true, _) | (false, 5) => PathStep::Index(u.int_in_range(0..=4)?),
        (false, 4) => {
            let mut key = Map::new();
            key.insert("name".to_owned(), draw_scalar(u)?);
            PathStep::Item(key)
        }
        (false, _) => PathStep::Key(draw_key(u)?),
    })
}

/// Strings that YAML reads in more than one way, or that need quoting.
const TRICKY: &[&str] = &[
    "",
    " ",
    "a",
    "web",
    "name",
    "value",
    "image",
    "replicas",
    "yes",
    "no",
    "on",
    "null",
    "~",
    "true",
    "1",
    "0x1F",
    "0o17",
    "1e3",
    ".inf",
    "-.nan",
    "1_000",
    "12:30",
    "2024-01-01",
    "a: b",
    "a:b",
    "- x",
    "-",
    "#c",
    "a #b",
    "'q'",
    "\"d\"",
    "x\ny",
    "x\n\ny\n",
    " lead",
    "trail ",
    "{a: 1}",
    "[1, 2]",
    "*a",
    "&a",
    "!t",
    "%x",
    "@x",
    "`x",
    "|",
    ">-",
    "?",
    "? x",
    ",",
    "é",
    "\t",
    "tab\there",
    "\\",
    "---",
    "...",
    "--- x",
    "\u{feff}",
    "\r",
    "a\r\nb",
    "\u{85}",
    "app.kubernetes.io/name",
    "$(VAR)",
    "{{ .Values.x }}",
];

fn draw_str(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(3, 4)? {
        Ok((*u.choose(TRICKY)?).to_owned())
    } else {
        let text: String = u.arbitrary()?;
        Ok(text.chars().take(24).collect())
    }
}

fn draw_key(u: &mut Unstructured<'_>) -> Result<String> {
    draw_str(u)
}

fn draw_scalar(u: &mut Unstructured<'_>) -> Result<Value> {
    Ok(match u.int_in_range(0..=9)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::from(u.arbitrary::<i64>()?),
        3 => Value::from(u.int_in_range(0..=10)?),
        4 => {
            let float: f64 = *u.choose(&[0.5, -0.0, 1.0, 1e3, 3.25, 1e300, -2.5e-8, 100.0])?;
            Value::from(float)
        }
        5 => Value::from(u.arbitrary::<u64>()?),
        _ => Value::String(draw_str(u)?),
    })
}

fn draw_value(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    if depth == 0 {
        return draw_scalar(u);
    }
    Ok(match u.int_in_range(0..=5)? {
        0 => {
            let mut list = Vec::new();
            for _ in 0..u.int_in_range(0..=3)? {
                list.push(draw_value(u, depth - 1)?);
            }
            Value::Array(list)
        }
        1 => {
            let mut map = Map::new();
            for _ in 0..u.int_in_range(0..=3)? {
                map.insert(draw_key(u)?, draw_value(u, depth - 1)?);
            }
            Value::Object(map)
        }
        _ => draw_scalar(u)?,
    })
}
