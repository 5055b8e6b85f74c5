//! Field sets built from objects the way an API server records them: a create or update is the
//! comparison of the old and new object (a create compares with the kind's Go zero value, which
//! is why `f:spec` never carries `.` but `f:labels` does), an apply is the set of fields the
//! applied configuration holds.
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::schema::{ListType, Schema};

use super::{FieldPath, FieldSet, PathElement};

/// What changed between two versions of an object, as leaf and node paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Fields, list items and maps present only in the new object.
    pub added: FieldSet,
    /// Leaves whose value changed.
    pub modified: FieldSet,
    /// Fields, list items and maps present only in the old object.
    pub removed: FieldSet,
}

impl Comparison {
    /// Compare `old` (`None` on create: the kind's zero value) with `new`, per the kind's schema
    /// `root`. Server-owned metadata is left out (see [`FieldSet::without_server_fields`]).
    pub fn of(root: Schema, old: Option<&Value>, new: &Value) -> Comparison {
        // A server compares typed objects: fields of the Go zero value are always there.
        let zero = root.zero_value();
        let mut out = Comparison::default();
        compare(root, old, Some(new), Some(&zero), &mut Vec::new(), &mut out);
        Comparison {
            added: out.added.without_server_fields(),
            modified: out.modified.without_server_fields(),
            removed: out.removed.without_server_fields(),
        }
    }

    /// Added or modified: what the writer of `new` takes ownership of.
    pub fn changed(&self) -> FieldSet {
        self.added.union(&self.modified)
    }
}

/// One side of a node, for walking two versions side by side.
enum Side<'a> {
    Map(&'a Map<String, Value>),
    List(&'a Vec<Value>),
    Leaf,
}

/// The two sides of a node being compared.
enum Pair<'a> {
    Maps(
        Option<&'a Map<String, Value>>,
        Option<&'a Map<String, Value>>,
    ),
    Lists(Option<&'a Vec<Value>>, Option<&'a Vec<Value>>),
    Leaf,
}

/// How to walk `value` at `schema`: as a granular map or list, or as a leaf (`None`: absent or
/// `null`, which take the shape of the other side).
fn side<'a>(schema: Schema, value: Option<&'a Value>) -> Option<Side<'a>> {
    match value {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) if !schema.is_atomic() => Some(Side::Map(m)),
        Some(Value::Array(l)) if schema.list_type() != ListType::Atomic => Some(Side::List(l)),
        Some(_) => Some(Side::Leaf),
    }
}

fn pair<'a>(schema: Schema, lhs: Option<&'a Value>, rhs: Option<&'a Value>) -> Pair<'a> {
    match (side(schema, lhs), side(schema, rhs)) {
        (Some(Side::Map(l)), Some(Side::Map(r))) => Pair::Maps(Some(l), Some(r)),
        (Some(Side::Map(l)), None) => Pair::Maps(Some(l), None),
        (None, Some(Side::Map(r))) => Pair::Maps(None, Some(r)),
        (Some(Side::List(l)), Some(Side::List(r))) => Pair::Lists(Some(l), Some(r)),
        (Some(Side::List(l)), None) => Pair::Lists(Some(l), None),
        (None, Some(Side::List(r))) => Pair::Lists(None, Some(r)),
        _ => Pair::Leaf,
    }
}

/// Compare two versions of the node at `path`; `zero` is the Go zero value there, which
/// stands in for a side that lacks the node.
fn compare(
    schema: Schema,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    zero: Option<&Value>,
    path: &mut Vec<PathElement>,
    out: &mut Comparison,
) {
    let (lhs, rhs) = (lhs.or(zero), rhs.or(zero));
    match pair(schema, lhs, rhs) {
        // Both sides empty (or null) maps or lists are leaves, keeping `{}` apart from absent.
        Pair::Maps(l, r) if l.is_none_or(|m| m.is_empty()) && r.is_none_or(|m| m.is_empty()) => {
            leaf(lhs, rhs, path, out)
        }
        Pair::Lists(l, r) if l.is_none_or(|v| v.is_empty()) && r.is_none_or(|v| v.is_empty()) => {
            leaf(lhs, rhs, path, out)
        }
        Pair::Leaf => leaf(lhs, rhs, path, out),
        Pair::Maps(l, r) => {
            let old_keys = l.into_iter().flat_map(|m| m.keys());
            let new_keys = r
                .into_iter()
                .flat_map(|m| m.keys())
                .filter(|k| !l.is_some_and(|m| m.contains_key(*k)));
            let in_metadata = matches!(path.as_slice(), [PathElement::Field(f)] if f == "metadata");
            for key in old_keys.chain(new_keys) {
                // Never owned, and the largest part of an object: not worth comparing.
                if in_metadata && key == "managedFields" {
                    continue;
                }
                path.push(PathElement::Field(key.clone()));
                compare(
                    schema.field(key),
                    l.and_then(|m| m.get(key)),
                    r.and_then(|m| m.get(key)),
                    zero.and_then(|z| z.get(key)),
                    path,
                    out,
                );
                path.pop();
            }
            node_presence(lhs, rhs, path, out);
        }
        Pair::Lists(l, r) => {
            let item = schema.item();
            let (left, right) = (keyed_items(schema, l), keyed_items(schema, r));
            // Each side's first item of each element, looked up in a map: a search of the
            // list per item made a list of 50,000 env vars take minutes.
            let (old_items, new_items) = (first_of(&left), first_of(&right));
            let mut seen: BTreeSet<&PathElement> = BTreeSet::new();
            for (element, _) in left.iter().chain(&right) {
                if !seen.insert(element) {
                    continue;
                }
                let old = old_items.get(element).copied();
                let new = new_items.get(element).copied();
                path.push(element.clone());
                compare(item, old, new, None, path, out);
                path.pop();
            }
            node_presence(lhs, rhs, path, out);
        }
    }
}

/// The first item of each path element of `items`.
fn first_of<'e, 'v>(items: &'e [(PathElement, &'v Value)]) -> BTreeMap<&'e PathElement, &'v Value> {
    let mut map = BTreeMap::new();
    for (element, value) in items {
        map.entry(element).or_insert(*value);
    }
    map
}

/// The items of a list with the path element naming each.
fn keyed_items(list: Schema, items: Option<&Vec<Value>>) -> Vec<(PathElement, &Value)> {
    items
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, v)| (PathElement::for_item(list, v, i), v))
        .collect()
}

/// A leaf: added, removed or modified.
fn leaf(lhs: Option<&Value>, rhs: Option<&Value>, path: &[PathElement], out: &mut Comparison) {
    let path = FieldPath(path.to_vec());
    match (lhs, rhs) {
        (None, Some(_)) => out.added.insert(&path),
        (Some(_), None) => out.removed.insert(&path),
        (Some(l), Some(r)) if l != r => out.modified.insert(&path),
        _ => {}
    }
}

/// A map or list node itself: recorded when it appears or disappears (a `null` counts as there).
fn node_presence(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    path: &[PathElement],
    out: &mut Comparison,
) {
    let path = FieldPath(path.to_vec());
    match (lhs, rhs) {
        (None, Some(_)) => out.added.insert(&path),
        (Some(_), None) => out.removed.insert(&path),
        _ => {}
    }
}

impl FieldSet {
    /// The fields a create of `object` by one manager records (operation `Update`): every field
    /// of the object compared with the kind's zero value, without server-owned metadata. Status
    /// is included; a main-resource write leaves it out (see `sim::ssa`).
    pub fn from_object(root: Schema, object: &Value) -> FieldSet {
        Comparison::of(root, None, object).changed()
    }

    /// The fields an applied configuration sets (server-side apply): every leaf, list item,
    /// atomic field and map entry, with `.` only on list items and map entries.
    pub fn from_applied(root: Schema, config: &Value) -> FieldSet {
        let mut out = FieldSet::new();
        applied(root, config, &mut Vec::new(), &mut out);
        out.without_server_fields()
    }

    /// Without the fields no manager ever owns: `apiVersion`, `kind` and the server-managed
    /// metadata (name, namespace, uid, resourceVersion, generation, creationTimestamp,
    /// managedFields, selfLink).
    pub fn without_server_fields(&self) -> FieldSet {
        let mut out = self.clone();
        out.remove_subtree(&[PathElement::field("apiVersion")]);
        out.remove_subtree(&[PathElement::field("kind")]);
        out.members.remove(&PathElement::field("metadata"));
        for name in [
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "managedFields",
            "selfLink",
            "clusterName",
        ] {
            out.remove_subtree(&[PathElement::field("metadata"), PathElement::field(name)]);
        }
        out
    }
}

fn applied(schema: Schema, value: &Value, path: &mut Vec<PathElement>, out: &mut FieldSet) {
    match value {
        Value::Object(map) if !schema.is_atomic() => {
            for (key, child) in map {
                path.push(PathElement::Field(key.clone()));
                applied(schema.field(key), child, path, out);
                let empty = child.is_null() || child.as_object().is_some_and(|m| m.is_empty());
                // Map entries (labels, limits, unknown fields) are owned themselves; struct
                // fields only through what they hold.
                if empty || !schema.declares(key) {
                    out.insert(&FieldPath(path.clone()));
                }
                path.pop();
            }
        }
        Value::Array(items) if schema.list_type() != ListType::Atomic => {
            for (i, item) in items.iter().enumerate() {
                path.push(PathElement::for_item(schema, item, i));
                applied(schema.item(), item, path, out);
                out.insert(&FieldPath(path.clone()));
                path.pop();
            }
        }
        _ => out.insert(&FieldPath(path.clone())),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reference(file: &str) -> Value {
        let text = std::fs::read_to_string(format!(
            "{}/../../testdata/kubernetes-1.20/{file}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn create_records_the_client_side_apply_entry_of_the_reference() {
        let mut live = reference("deploy-after-client-apply.json");
        let expected = live["metadata"]["managedFields"][0]["fieldsV1"].clone();
        // The revision annotation and status were written later by kube-controller-manager.
        live["metadata"]["annotations"]
            .as_object_mut()
            .unwrap()
            .remove("deployment.kubernetes.io/revision");
        live.as_object_mut().unwrap().remove("status");
        let fields = FieldSet::from_object(crate::schema::builtin_kind("Deployment"), &live);
        assert_eq!(fields.to_fields_v1(), expected);
    }

    #[test]
    fn update_records_what_kubectl_set_changed() {
        let before = reference("deploy-after-client-apply.json");
        let mut after = reference("deploy-after-set-env-and-resources.json");
        // The controller bumped the revision annotation after the write; kubectl-set did not.
        after["metadata"]["annotations"]["deployment.kubernetes.io/revision"] =
            before["metadata"]["annotations"]["deployment.kubernetes.io/revision"].clone();
        let c = Comparison::of(
            crate::schema::builtin_kind("Deployment"),
            Some(&before),
            &after,
        );
        let expected = after["metadata"]["managedFields"][2]["fieldsV1"].clone();
        let changed = c.changed().without_subtree(&FieldPath::fields(&["status"]));
        assert_eq!(changed.to_fields_v1(), expected);
    }

    #[test]
    fn removed_fields_are_reported() {
        let old = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "web", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}
        ]}}}});
        let new = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "web", "env": [{"name": "A", "value": "1"}]}
        ]}}}});
        let c = Comparison::of(crate::schema::builtin_kind("Deployment"), Some(&old), &new);
        assert!(c.added.is_empty() && c.modified.is_empty());
        let removed: Vec<String> = c.removed.paths().iter().map(|p| p.to_string()).collect();
        assert_eq!(
            removed,
            [
                r#".spec.template.spec.containers[name="web"].env[name="B"]"#,
                r#".spec.template.spec.containers[name="web"].env[name="B"].name"#,
                r#".spec.template.spec.containers[name="web"].env[name="B"].value"#,
            ]
        );
    }

    #[test]
    fn applied_config_owns_leaves_items_and_map_entries() {
        let config = serde_yaml::from_str::<Value>(
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../testdata/kubernetes-1.20/web.yaml"
            ))
            .unwrap(),
        )
        .unwrap();
        let fields = FieldSet::from_applied(crate::schema::builtin_kind("Deployment"), &config);
        assert_eq!(
            fields.to_fields_v1(),
            json!({
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:replicas": {},
                    "f:selector": {},
                    "f:template": {
                        "f:metadata": {"f:labels": {"f:app": {}}},
                        "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {
                            ".": {},
                            "f:env": {"k:{\"name\":\"MODE\"}": {".": {}, "f:name": {}, "f:value": {}}},
                            "f:image": {},
                            "f:name": {},
                            "f:ports": {"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}": {
                                ".": {}, "f:containerPort": {}
                            }},
                            "f:resources": {"f:requests": {"f:cpu": {}, "f:memory": {}}}
                        }}}
                    }
                }
            })
        );
    }

    #[test]
    fn empty_maps_and_nulls_are_leaves() {
        let fields = FieldSet::from_applied(
            crate::schema::builtin_kind("Pod"),
            &json!({"spec": {"securityContext": {}, "nodeName": null}}),
        );
        assert_eq!(
            fields.to_fields_v1(),
            json!({"f:spec": {"f:nodeName": {}, "f:securityContext": {}}})
        );
        let c = Comparison::of(
            crate::schema::builtin_kind("Pod"),
            Some(&json!({"spec": {"securityContext": {}}})),
            &json!({"spec": {}}),
        );
        assert!(
            c.removed
                .contains(&FieldPath::fields(&["spec", "securityContext"]))
        );
    }
}
