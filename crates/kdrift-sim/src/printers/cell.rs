//! The pieces every printer shares: a column definition, the template columns of the workloads,
//! and reading a cell's value out of an object.
use serde_json::{Value, json};

pub fn column(name: &str, kind: &str, format: &str, description: &str, priority: u8) -> Value {
    json!({"name": name, "type": kind, "format": format, "description": description, "priority": priority})
}

/// The template columns the workloads share (wide output): Containers, Images.
pub fn template_columns() -> [Value; 2] {
    [
        column(
            "Containers",
            "string",
            "",
            "Names of each container in the template.",
            1,
        ),
        column(
            "Images",
            "string",
            "",
            "Images referenced by each container in the template.",
            1,
        ),
    ]
}

pub fn int(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

pub fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

pub fn containers(object: &Value, key: &str) -> String {
    object
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| text(c, &format!("/{key}")))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

pub fn selector(object: &Value) -> String {
    let labels = object
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object);
    labels
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

/// `s`, or `<none>` when it is empty, as kubectl prints an absent value.
pub fn or_none(s: &str) -> String {
    if s.is_empty() {
        "<none>".into()
    } else {
        s.to_string()
    }
}
