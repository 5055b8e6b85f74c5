//! `managedFields` lookups for attribution: which managers own a path of the object.
//!
//! Works on the `fieldsV1` tree as the server sends it (`f:<field>`, `k:<key json>`, `v:<value
//! json>`, `.`), so that a live extract keeps it as is without a conversion per watch event.
use serde_json::{Map, Value};

use super::live::{LiveObject, ManagerEntry};
use super::path::{DriftPath, PathStep};

/// The key fields of a `k:{...}` entry.
pub fn parse_item_key(entry: &str) -> Option<Map<String, Value>> {
    serde_json::from_str(entry.strip_prefix("k:")?).ok()
}

/// The `fieldsV1` node of `step` below `node`.
pub fn child<'a>(node: &'a Value, step: &PathStep) -> Option<&'a Value> {
    let map = node.as_object()?;
    match step {
        PathStep::Field(name) => map
            .iter()
            .find(|(k, _)| k.strip_prefix("f:") == Some(name))
            .map(|(_, v)| v),
        PathStep::Item { key, .. } => map
            .iter()
            .find(|(k, _)| k.starts_with("k:") && parse_item_key(k).as_ref() == Some(key))
            .map(|(_, v)| v),
        PathStep::Value(value) => map
            .iter()
            .find(|(k, _)| {
                k.strip_prefix("v:")
                    .and_then(|text| serde_json::from_str::<Value>(text).ok())
                    .as_ref()
                    == Some(value)
            })
            .map(|(_, v)| v),
    }
}

/// True when `fields` (a `fieldsV1` tree) covers `path`: the path itself, or an ancestor owned
/// as a whole (an atomic field such as `f:selector: {}`).
pub fn owns(fields: &Value, path: &DriftPath) -> bool {
    let mut node = fields;
    for (at, step) in path.0.iter().enumerate() {
        if at > 0 && node.as_object().is_some_and(Map::is_empty) {
            return true;
        }
        match child(node, step) {
            Some(next) => node = next,
            None => return false,
        }
    }
    true
}

/// The managers owning `path`, most recent write first.
pub fn owners<'a>(live: &'a LiveObject, path: &DriftPath) -> Vec<&'a ManagerEntry> {
    let mut found: Vec<&ManagerEntry> = live
        .managers
        .iter()
        .filter(|entry| owns(&entry.fields, path))
        .collect();
    // RFC 3339 times from one server sort as text.
    found.sort_by(|a, b| b.time.cmp(&a.time));
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn owns_fields_items_and_atomic_ancestors() {
        let fields = json!({
            "f:spec": {
                "f:selector": {},
                "f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:env": {"k:{\"name\":\"EXTRA\"}": {".": {}, "f:value": {}}}}}}},
                "f:ports": {"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}": {".": {}}}
            },
            "f:metadata": {"f:finalizers": {"v:\"a/b\"": {}}}
        });
        let key = |v: Value| v.as_object().cloned().unwrap_or_default();
        let spec = DriftPath::default().child("spec");
        let web = spec
            .child("template")
            .child("spec")
            .child("containers")
            .item(key(json!({"name": "web"})), Some(0));
        assert!(owns(
            &fields,
            &web.child("env")
                .item(key(json!({"name": "EXTRA"})), None)
                .child("value")
        ));
        assert!(owns(&fields, &web));
        assert!(!owns(&fields, &web.child("image")));
        assert!(owns(
            &fields,
            &spec.child("selector").child("matchLabels").child("app")
        ));
        assert!(owns(
            &fields,
            &spec
                .child("ports")
                .item(key(json!({"protocol": "TCP", "containerPort": 8080})), None)
        ));
        assert!(!owns(
            &fields,
            &spec
                .child("ports")
                .item(key(json!({"protocol": "UDP", "containerPort": 8080})), None)
        ));
        assert!(owns(
            &fields,
            &DriftPath::default()
                .child("metadata")
                .child("finalizers")
                .value(json!("a/b"))
        ));
        assert!(!owns(&fields, &spec.child("replicas")));
    }
}
