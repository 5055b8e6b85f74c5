//! Attribution on the shared `managedFields` field sets ([`crate::managed_fields`]): drift paths
//! to and from field paths, and the managers owning a path.
use serde_json::{Map, Value};

use crate::managed_fields::{FieldPath, ManagedFieldsEntry, PathElement, owners_in};
use crate::schema;

use super::live::LiveObject;
use super::path::{DriftPath, PathStep};

/// The field path of a drift path (list items by key, by position when they have no key).
pub fn field_path(path: &DriftPath) -> FieldPath {
    FieldPath(
        path.0
            .iter()
            .map(|step| match step {
                PathStep::Field(name) => PathElement::field(name),
                PathStep::Item { key, index } if key.is_empty() => {
                    PathElement::Index(index.unwrap_or(0))
                }
                PathStep::Item { key, .. } => PathElement::key(key),
                PathStep::Value(value) => PathElement::Value(value.clone()),
            })
            .collect(),
    )
}

/// The drift path of a field path, each list item with its position in `manifest` when the
/// manifest has it (for the manifest line of the field).
pub fn drift_path(kind: &str, path: &FieldPath, manifest: &Value) -> DriftPath {
    let mut schema = schema::root(kind);
    let mut at = Some(manifest);
    let mut steps = Vec::with_capacity(path.0.len());
    for element in &path.0 {
        let index = match (element, at) {
            (PathElement::Key(_) | PathElement::Index(_), Some(Value::Array(items))) => element
                .lookup(schema, at.unwrap_or(&Value::Null))
                .and_then(|(found, _)| items.iter().position(|i| std::ptr::eq(i, found))),
            _ => None,
        };
        steps.push(match element {
            PathElement::Field(name) => PathStep::Field(name.clone()),
            PathElement::Key(fields) => PathStep::Item {
                key: fields.iter().cloned().collect::<Map<_, _>>(),
                index,
            },
            PathElement::Index(i) => PathStep::Item {
                key: Map::new(),
                index: Some(*i),
            },
            PathElement::Value(value) => PathStep::Value(value.clone()),
        });
        let next = at.and_then(|value| element.lookup(schema, value));
        at = next.map(|(value, _)| value);
        schema = match element {
            PathElement::Field(name) => schema.field(name),
            _ => schema.item(),
        };
    }
    DriftPath(steps)
}

/// The managers owning `path` (the field itself or an atomic field above it), most recent
/// write first.
pub fn owners<'a>(live: &'a LiveObject, path: &DriftPath) -> Vec<&'a ManagedFieldsEntry> {
    let mut found = owners_in(&live.key.kind, &live.managers, &field_path(path));
    // RFC 3339 times from one server sort as text.
    found.sort_by(|a, b| b.time.cmp(&a.time));
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn drift_paths_and_field_paths_convert_both_ways() {
        let manifest = json!({"spec": {"template": {"spec": {"containers": [{"name": "side"}, {"name": "web", "ports": [{"containerPort": 80}]}]}}}});
        let key = |v: Value| v.as_object().cloned().unwrap_or_default();
        let web = DriftPath::default()
            .child("spec")
            .child("template")
            .child("spec")
            .child("containers")
            .item(key(json!({"name": "web"})), Some(1));
        let port = web.child("ports").item(
            key(json!({"containerPort": 80, "protocol": "TCP"})),
            Some(0),
        );
        assert_eq!(
            drift_path("Deployment", &field_path(&port), &manifest),
            port
        );
        assert_eq!(
            field_path(&port).to_string(),
            ".spec.template.spec.containers[name=\"web\"].ports[containerPort=80,protocol=\"TCP\"]"
        );
        let absent = web.child("env").item(key(json!({"name": "EXTRA"})), None);
        assert_eq!(
            drift_path("Deployment", &field_path(&absent), &manifest),
            absent
        );
    }
}
