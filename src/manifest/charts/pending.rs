//! What a `helm upgrade` with the checkout's values would change in a release: the paths where
//! git's render of an object and the release's differ, list items named by their keys as drift
//! names them.
use serde_json::Value;

/// `spec.containers[0].env`: keys joined with dots, list positions after their list.
fn shown_path(path: &[String]) -> String {
    let mut out = String::new();
    for step in path {
        if !out.is_empty() && !step.starts_with('[') {
            out.push('.');
        }
        out.push_str(step);
    }
    out
}

/// The paths where `a` and `b` differ (maps key by key, lists item by item), with both values.
/// A list whose items the kind's `schema` keys (containers by `name`, ports by `containerPort`
/// and `protocol`) is compared item by item by key and its items named as drift names them
/// (`containers[name=web].env[name=LOG_LEVEL].value`); another list position by position.
pub(super) fn differences(
    schema: crate::schema::Schema,
    a: &Value,
    b: &Value,
    path: &mut Vec<String>,
    out: &mut Vec<(String, Option<Value>, Option<Value>)>,
) {
    const MAX: usize = 50;
    if out.len() >= MAX {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (key, left) in x {
                path.push(key.clone());
                match y.get(key) {
                    Some(right) => differences(schema.field(key), left, right, path, out),
                    None => out.push((shown_path(path), Some(left.clone()), None)),
                }
                path.pop();
            }
            for (key, right) in y.iter().filter(|(k, _)| !x.contains_key(*k)) {
                path.push(key.clone());
                out.push((shown_path(path), None, Some(right.clone())));
                path.pop();
            }
        }
        (Value::Array(x), Value::Array(y)) if x != y => {
            if let (Some(left), Some(right)) = (keyed(schema, x), keyed(schema, y)) {
                for (key, item) in &left {
                    path.push(key.clone());
                    match right.iter().find(|(k, _)| k == key) {
                        Some((_, other)) => differences(schema.item(), item, other, path, out),
                        None => out.push((shown_path(path), Some((*item).clone()), None)),
                    }
                    path.pop();
                }
                for (key, item) in right
                    .iter()
                    .filter(|(k, _)| !left.iter().any(|(l, _)| l == k))
                {
                    path.push(key.clone());
                    out.push((shown_path(path), None, Some((*item).clone())));
                    path.pop();
                }
            } else if x.len() == y.len() {
                for (at, (left, right)) in x.iter().zip(y).enumerate() {
                    path.push(format!("[{at}]"));
                    differences(schema.item(), left, right, path, out);
                    path.pop();
                }
            } else {
                out.push((shown_path(path), Some(a.clone()), Some(b.clone())));
            }
        }
        _ if a == b => {}
        _ => out.push((shown_path(path), Some(a.clone()), Some(b.clone()))),
    }
}

/// Each item of a list `schema` keys, with its key as drift writes it; `None` when one has none.
fn keyed(schema: crate::schema::Schema, items: &[Value]) -> Option<Vec<(String, &Value)>> {
    items
        .iter()
        .map(|item| Some((key_text(&schema.item_key(item)?), item)))
        .collect()
}

/// A list item's key as drift writes it in a path: `[name=web]`, `[containerPort=8080,protocol=TCP]`.
fn key_text(key: &serde_json::Map<String, Value>) -> String {
    let fields: Vec<String> = key
        .iter()
        .map(|(name, value)| match value {
            Value::String(text) => format!("{name}={text}"),
            other => format!("{name}={other}"),
        })
        .collect();
    format!("[{}]", fields.join(","))
}
