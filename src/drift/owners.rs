//! Attribution on the shared `managedFields` field sets ([`crate::managed_fields`]): drift paths
//! to and from field paths, and the managers owning a path.
use serde_json::{Map, Value};

use crate::managed_fields::{FieldPath, ManagedFieldsEntry, PathElement, owners_in};
use crate::manifest::tree::NodeRef;
use crate::schema::Schema;

use super::list_keys::{KeyValue, node_key_field};

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

/// One step of `element` into a manifest node, as `PathElement::lookup` steps into a value: the
/// node found and, for a list item, its position.
fn node_step<'n>(
    element: &PathElement,
    schema: Schema,
    node: NodeRef<'n>,
) -> Option<(NodeRef<'n>, Option<usize>)> {
    let Some(mut items) = node.items() else {
        return match element {
            PathElement::Field(name) => node.get(name).map(|found| (found, None)),
            _ => None,
        };
    };
    let at = match element {
        PathElement::Field(_) => return None,
        PathElement::Key(fields) => items.position(|item| has_key(schema, item, fields)),
        PathElement::Value(member) => items.position(|item| item.eq_value(member)),
        PathElement::Index(i) => Some(*i),
    }?;
    node.items()?.nth(at).map(|found| (found, Some(at)))
}

/// Is `item` the list item of key `fields` (the server-side apply key, defaults filled in; as
/// written when the list has no keys in the schema)?
fn has_key(schema: Schema, item: NodeRef<'_>, fields: &[(String, Value)]) -> bool {
    let keys = schema.list_keys();
    let field = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    let own: Option<Vec<(&str, KeyValue<'_>)>> = match item.is_map() {
        true if !keys.is_empty() => keys
            .iter()
            .map(|k| node_key_field(item, k.name, k.default).map(|v| (k.name, v)))
            .collect(),
        _ => None,
    };
    match own {
        Some(own) => {
            own.len() == fields.len()
                && own
                    .iter()
                    .all(|(name, v)| field(name).is_some_and(|f| v.same(&KeyValue::Value(f))))
        }
        None => fields
            .iter()
            .all(|(name, v)| item.get(name).is_some_and(|n| n.eq_value(v))),
    }
}

/// The node at `path` in a manifest whose kind's schema is `root`.
pub fn lookup<'n>(root: Schema, path: &FieldPath, manifest: NodeRef<'n>) -> Option<NodeRef<'n>> {
    let mut schema = root;
    let mut at = manifest;
    for element in &path.0 {
        at = node_step(element, schema, at)?.0;
        schema = match element {
            PathElement::Field(name) => schema.field(name),
            _ => schema.item(),
        };
    }
    Some(at)
}

/// Whether the manifest sets `path`. A Secret's `data.K` is set when the manifest writes it as
/// `stringData.K` (the server keeps stringData as data).
pub fn in_git(root: Schema, path: &FieldPath, manifest: NodeRef<'_>) -> bool {
    if lookup(root, path, manifest).is_some() {
        return true;
    }
    match &path.0[..] {
        [PathElement::Field(data), rest @ ..] if data == "data" => {
            let mut string_data = vec![PathElement::Field("stringData".to_owned())];
            string_data.extend_from_slice(rest);
            lookup(root, &FieldPath(string_data), manifest).is_some()
        }
        _ => false,
    }
}

/// The drift path of a field path, each list item with its position in `manifest` when the
/// manifest has it (for the manifest line of the field).
pub fn drift_path(root: Schema, path: &FieldPath, manifest: NodeRef<'_>) -> DriftPath {
    let mut schema = root;
    let mut at = Some(manifest);
    let mut steps = Vec::with_capacity(path.0.len());
    for element in &path.0 {
        let found = at.and_then(|node| node_step(element, schema, node));
        let index = match element {
            PathElement::Key(_) | PathElement::Index(_) => found.and_then(|(_, index)| index),
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
        at = found.map(|(node, _)| node);
        schema = match element {
            PathElement::Field(name) => schema.field(name),
            _ => schema.item(),
        };
    }
    DriftPath(steps)
}

/// The managers among `managers` (of an object whose kind's schema is `root`) owning `path` (the
/// field itself or an atomic field above it), most recent write first.
pub fn owners<'a>(
    root: Schema,
    managers: &'a [ManagedFieldsEntry],
    path: &DriftPath,
) -> Vec<&'a ManagedFieldsEntry> {
    let mut found = owners_in(root, managers, &field_path(path));
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
        let manifest = crate::manifest::tree::Packed::from(
            json!({"spec": {"template": {"spec": {"containers": [{"name": "side"}, {"name": "web", "ports": [{"containerPort": 80}]}]}}}}),
        );
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
            drift_path(
                crate::schema::builtin_kind("Deployment"),
                &field_path(&port),
                manifest.root()
            ),
            port
        );
        assert_eq!(
            field_path(&port).to_string(),
            ".spec.template.spec.containers[name=\"web\"].ports[containerPort=80,protocol=\"TCP\"]"
        );
        let absent = web.child("env").item(key(json!({"name": "EXTRA"})), None);
        assert_eq!(
            drift_path(
                crate::schema::builtin_kind("Deployment"),
                &field_path(&absent),
                manifest.root()
            ),
            absent
        );
        // The port's key has its default protocol filled in; the manifest's item has none.
        let found = lookup(
            crate::schema::builtin_kind("Deployment"),
            &field_path(&port),
            manifest.root(),
        );
        assert_eq!(
            found.map(NodeRef::to_value),
            Some(json!({"containerPort": 80}))
        );
        assert_eq!(
            lookup(
                crate::schema::builtin_kind("Deployment"),
                &field_path(&web.child("name")),
                manifest.root()
            )
            .map(NodeRef::to_value),
            Some(json!("web"))
        );
        assert_eq!(
            lookup(
                crate::schema::builtin_kind("Deployment"),
                &field_path(&absent),
                manifest.root()
            ),
            None
        );
    }
}
