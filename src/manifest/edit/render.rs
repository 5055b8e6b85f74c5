//! YAML text for values written into a manifest: scalars in the quoting style of the value they
//! replace, new strings quoted only when YAML (1.1 as Kubernetes reads it, or 1.2) would read them
//! as something else, and new blocks laid out in the document's [`Style`].
use serde_json::Value;

use super::style::Style;

/// Words that YAML 1.1 or 1.2 reads as booleans or null.
const RESERVED: &[&str] = &[
    "", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "yes",
    "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "Y", "n", "N",
];

/// True when `text` could be read as a number by YAML 1.1 or 1.2 (`1.10`, `0x1F`, `1_000`,
/// `1:30`, `.5`, `1e3`, `.inf`). Conservative: anything made of number characters with a digit.
fn looks_numeric(text: &str) -> bool {
    let body = text.trim_start_matches(['+', '-']);
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), ".inf" | ".nan") {
        return true;
    }
    if let Some(hex) = lower
        .strip_prefix("0x")
        .or_else(|| lower.strip_prefix("0o"))
    {
        return !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit() || c == '_');
    }
    body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && body.chars().any(|c| c.is_ascii_digit())
        && body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '_' | ':' | 'e' | 'E' | '+' | '-'))
}

/// True when `text` reads back as this same string when written without quotes.
pub fn plain_is_safe(text: &str, flow: bool) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    if RESERVED.contains(&text) || looks_numeric(text) {
        return false;
    }
    if text.trim() != text || !text.chars().all(is_printable) {
        return false;
    }
    if "?:,[]{}#&*!|>'\"%@`".contains(first) {
        return false;
    }
    if first == '-' && (text.len() == 1 || text[1..].starts_with(' ')) {
        return false;
    }
    if text.contains(": ") || text.ends_with(':') || text.contains(" #") {
        return false;
    }
    // libyaml is stricter about `:` inside flow collections than YAML itself.
    if flow && text.contains([',', '[', ']', '{', '}', ':']) {
        return false;
    }
    // The rules above are the known cases; the parser has the last word, in the context used.
    let (probe, want) = if flow {
        (
            format!("k: [{text}]\n"),
            Value::Array(vec![Value::String(text.to_owned())]),
        )
    } else {
        (format!("k: {text}\n"), Value::String(text.to_owned()))
    };
    serde_yaml::from_str::<serde_json::Map<String, Value>>(&probe)
        .ok()
        .and_then(|map| map.get("k").cloned())
        == Some(want)
}

/// True for the characters YAML lets stand for themselves inside quotes: printable, and not
/// one of the line breaks YAML 1.1 knows besides `\n` (NEL, LS, PS) nor a byte order mark.
fn is_printable(c: char) -> bool {
    matches!(c, ' '..='~' | '\u{a0}'..='\u{2027}' | '\u{202a}'..='\u{d7ff}' | '\u{e000}'..='\u{fefe}' | '\u{ff00}'..='\u{fffd}' | '\u{10000}'..)
}

/// `text` in double quotes. JSON's escapes are all valid in YAML; what JSON leaves raw but
/// YAML would read as a line break or reject is escaped too.
pub fn double_quoted(text: &str) -> String {
    let json = Value::String(text.to_owned()).to_string();
    if json.chars().all(|c| c == '\t' || is_printable(c)) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if c == '\t' || is_printable(c) {
            out.push(c);
        } else if u32::from(c) <= 0xffff {
            out.push_str(&format!("\\u{:04X}", u32::from(c)));
        } else {
            out.push_str(&format!("\\U{:08X}", u32::from(c)));
        }
    }
    out
}

fn single_quoted(text: &str) -> Option<String> {
    text.chars()
        .all(is_printable)
        .then(|| format!("'{}'", text.replace('\'', "''")))
}

/// A scalar value (or an empty map or list) on one line; `None` for a non-empty map or list.
pub fn inline(value: &Value, flow: bool) -> Option<String> {
    match value {
        Value::Null => Some("null".to_owned()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(text) if plain_is_safe(text, flow) => Some(text.clone()),
        Value::String(text) => Some(double_quoted(text)),
        Value::Object(map) if map.is_empty() => Some("{}".to_owned()),
        Value::Array(list) if list.is_empty() => Some("[]".to_owned()),
        Value::Object(_) | Value::Array(_) => None,
    }
}

/// A map key, quoted only if it must be.
pub fn key(name: &str) -> String {
    if plain_is_safe(name, false) {
        name.to_owned()
    } else {
        double_quoted(name)
    }
}

/// The text that replaces the scalar written `old` (as it appears in the file) by `value`: a
/// string keeps the old quoting style where that style can hold it.
pub fn replacement(old: &str, value: &Value, flow: bool) -> String {
    let Value::String(text) = value else {
        return flow_text(value);
    };
    match old.chars().next() {
        Some('"') => double_quoted(text),
        Some('\'') => single_quoted(text).unwrap_or_else(|| double_quoted(text)),
        Some('|') => literal_block(old, text).unwrap_or_else(|| double_quoted(text)),
        // A folded scalar (`>`) becomes a quoted one: its folding rules are not worth the risk
        // for a one-field edit, and the re-parse check still holds.
        _ if plain_is_safe(text, flow) => text.clone(),
        _ => double_quoted(text),
    }
}

/// `text` as a literal block scalar indented as `old` (one) is: `|` or `|-` by whether it ends
/// in a line break. `None` when a literal block cannot hold it as simply (a first line that
/// starts with a space, trailing spaces, control characters, several final line breaks).
fn literal_block(old: &str, text: &str) -> Option<String> {
    let indent = old
        .lines()
        .skip(1)
        .find(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .filter(|&n| n > 0)?;
    let body = text.strip_suffix('\n').unwrap_or(text);
    let simple = !body.is_empty()
        && !body.starts_with([' ', '\n'])
        && !body.ends_with('\n')
        && body
            .lines()
            .all(|l| l == l.trim_end() && l.chars().all(|c| c == '\t' || !c.is_control()));
    if !simple {
        return None;
    }
    let mut out = String::from(if text.ends_with('\n') { "|" } else { "|-" });
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.extend(std::iter::repeat_n(' ', indent));
            out.push_str(line);
        }
    }
    Some(out)
}

/// Any value in flow style (`{limits: {cpu: 1}}`), for flow collections and one-line values.
pub fn flow_text(value: &Value) -> String {
    match value {
        Value::Object(map) if !map.is_empty() => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", key(k), flow_text(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        Value::Array(list) if !list.is_empty() => {
            let items: Vec<String> = list.iter().map(flow_text).collect();
            format!("[{}]", items.join(", "))
        }
        other => inline(other, true).unwrap_or_default(),
    }
}

/// How the strings of a flow collection are written: all double-quoted, all single-quoted, or
/// (mixed, plain, none) as [`inline`] chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowQuotes {
    Double,
    Single,
    AsNeeded,
}

impl FlowQuotes {
    /// The quoting of the string items and map values of the flow collection written `old`
    /// (`["get", "list"]`: double): one style when every string scalar has it. Numbers,
    /// booleans and null written bare are no strings and do not count.
    pub fn of(old: &str) -> FlowQuotes {
        let mut seen: Option<char> = None;
        let mut stack: Vec<char> = Vec::new();
        let mut expect_value = false;
        let mut chars = old.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '[' => {
                    stack.push('[');
                    expect_value = true;
                }
                '{' => {
                    stack.push('{');
                    expect_value = false;
                }
                ']' | '}' => {
                    stack.pop();
                    expect_value = false;
                }
                ',' => expect_value = stack.last() == Some(&'['),
                ':' if stack.last() == Some(&'{') => expect_value = true,
                c if c.is_whitespace() => {}
                '#' => {
                    // A comment runs to the end of its line.
                    for c in chars.by_ref() {
                        if c == '\n' {
                            break;
                        }
                    }
                }
                '"' | '\'' => {
                    let mut escaped = false;
                    while let Some(next) = chars.next() {
                        if c == '"' && !escaped && next == '\\' {
                            escaped = true;
                            continue;
                        }
                        if next == c && !escaped {
                            // `''` inside single quotes is a quote, not the end.
                            if c == '\'' && chars.peek() == Some(&'\'') {
                                chars.next();
                                continue;
                            }
                            break;
                        }
                        escaped = false;
                    }
                    if expect_value {
                        match seen {
                            None => seen = Some(c),
                            Some(style) if style != c => return FlowQuotes::AsNeeded,
                            Some(_) => {}
                        }
                    }
                    expect_value = false;
                }
                first => {
                    let mut plain = String::from(first);
                    while let Some(&next) = chars.peek() {
                        if matches!(next, ',' | ']' | '}')
                            || (next == ':' && stack.last() == Some(&'{'))
                        {
                            break;
                        }
                        plain.push(next);
                        chars.next();
                    }
                    let plain = plain.trim();
                    let string = !(RESERVED.contains(&plain) || looks_numeric(plain));
                    if expect_value && string {
                        return FlowQuotes::AsNeeded;
                    }
                    expect_value = false;
                }
            }
        }
        match seen {
            Some('"') => FlowQuotes::Double,
            Some('\'') => FlowQuotes::Single,
            _ => FlowQuotes::AsNeeded,
        }
    }
}

/// [`flow_text`] with the strings quoted as `quotes` says (keys as [`key`] writes them): a flow
/// list written `["get", "list"]` keeps its quotes when an item is added.
pub fn flow_text_quoted(value: &Value, quotes: FlowQuotes) -> String {
    match (value, quotes) {
        (_, FlowQuotes::AsNeeded) => flow_text(value),
        (Value::Object(map), _) if !map.is_empty() => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", key(k), flow_text_quoted(v, quotes)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        (Value::Array(list), _) if !list.is_empty() => {
            let items: Vec<String> = list.iter().map(|v| flow_text_quoted(v, quotes)).collect();
            format!("[{}]", items.join(", "))
        }
        (Value::String(text), FlowQuotes::Double) => double_quoted(text),
        (Value::String(text), FlowQuotes::Single) => {
            single_quoted(text).unwrap_or_else(|| double_quoted(text))
        }
        (other, _) => flow_text(other),
    }
}

fn push_line(out: &mut String, column: usize, text: &str) {
    out.extend(std::iter::repeat_n(' ', column));
    out.push_str(text);
    out.push('\n');
}

/// The lines of the map entry `name: value` with its key at `column`, each ending in `\n`.
pub fn entry_lines(name: &str, value: &Value, column: usize, style: &Style) -> String {
    let mut out = String::new();
    push_entry(&mut out, name, value, column, style);
    out
}

/// The lines of a list item `- value` with its dash at `column`, each ending in `\n`.
pub fn item_lines(value: &Value, column: usize, style: &Style) -> String {
    let mut out = String::new();
    push_item(&mut out, value, column, style);
    out
}

/// The lines of a non-empty map or list that is the value of a key at `column` (what follows
/// `key:`); `None` when the value fits on the key's line.
pub fn block_value(value: &Value, column: usize, style: &Style) -> Option<String> {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                push_entry(&mut out, k, v, column + style.indent, style);
            }
        }
        Value::Array(list) if !list.is_empty() => {
            let dash = column
                + if style.indent_sequences {
                    style.indent
                } else {
                    0
                };
            for item in list {
                push_item(&mut out, item, dash, style);
            }
        }
        _ => return None,
    }
    Some(out)
}

fn push_entry(out: &mut String, name: &str, value: &Value, column: usize, style: &Style) {
    match block_value(value, column, style) {
        Some(block) => {
            push_line(out, column, &format!("{}:", key(name)));
            out.push_str(&block);
        }
        None => {
            let text = inline(value, false).unwrap_or_default();
            push_line(out, column, &format!("{}: {text}", key(name)));
        }
    }
}

fn push_item(out: &mut String, value: &Value, column: usize, style: &Style) {
    let content = column + style.dash_width;
    let mut body = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                push_entry(&mut body, k, v, content, style);
            }
        }
        Value::Array(list) if !list.is_empty() => {
            for item in list {
                push_item(&mut body, item, content, style);
            }
        }
        other => push_line(
            &mut body,
            content,
            &inline(other, false).unwrap_or_default(),
        ),
    }
    // The first line's indentation becomes the dash and its padding, same width.
    let dash = format!(
        "{}-{}",
        " ".repeat(column),
        " ".repeat(style.dash_width.saturating_sub(1))
    );
    out.push_str(&dash);
    out.push_str(body.get(content..).unwrap_or_default());
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_yaml_would_read_as_other_types_are_quoted() {
        for text in [
            "1.10", "on", "Off", "yes", "~", "", "0x1F", "1e3", "12:30", "- a", "a: b",
        ] {
            assert!(!plain_is_safe(text, false), "{text:?} must be quoted");
        }
        for text in [
            "nginx:1.25",
            "128Mi",
            "app.kubernetes.io/name",
            "-Xmx1g",
            "web",
        ] {
            assert!(plain_is_safe(text, false), "{text:?} can stay plain");
        }
    }

    #[test]
    fn replacement_keeps_the_quoting_style() {
        assert_eq!(replacement("\"1.10\"", &json!("1.11"), false), "\"1.11\"");
        assert_eq!(replacement("'on'", &json!("it's"), false), "'it''s'");
        assert_eq!(replacement("web", &json!("on"), false), "\"on\"");
        assert_eq!(replacement("\"2\"", &json!(3), false), "3");
    }

    #[test]
    fn items_follow_the_style() {
        let style = Style {
            indent: 4,
            indent_sequences: true,
            dash_width: 4,
        };
        let item = json!({"name": "A", "value": "1.10"});
        assert_eq!(
            item_lines(&item, 8, &style),
            "        -   name: A\n            value: \"1.10\"\n"
        );
        let entry = json!({"limits": {"memory": "128Mi"}});
        assert_eq!(
            entry_lines("resources", &entry, 2, &style),
            "  resources:\n      limits:\n          memory: 128Mi\n"
        );
    }

    #[test]
    fn an_inline_patch_written_as_a_literal_block_stays_one() {
        use crate::manifest::edit::{FieldEdit, FieldPath, PathStep, edit_document};
        let source = "patches:\n- patch: |-\n    kind: Deployment\n    metadata:\n      name: web\n    spec:\n      replicas: 2\n- path: other.yaml\n";
        let path = FieldPath(vec![
            PathStep::Key("patches".into()),
            PathStep::Index(0),
            PathStep::Key("patch".into()),
        ]);
        let edit = FieldEdit::Set {
            path,
            value: "kind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 5".into(),
        };
        let edited = edit_document(source, 0, &[edit]).unwrap();
        assert_eq!(edited, source.replace("replicas: 2", "replicas: 5"));
    }
}
