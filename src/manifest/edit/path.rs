//! [`FieldPath`]: the address of one field in a manifest object, and lookups along it in a parsed
//! value. The drift engine's paths convert into it step for step: `Field(name)` is
//! [`PathStep::Key`], `Item { key, .. }` is [`PathStep::Item`], `Value(v)` is [`PathStep::Value`].
use std::fmt;

use serde_json::{Map, Value};

/// One step into an object.
#[derive(Debug, Clone, PartialEq)]
pub enum PathStep {
    /// A key of a map (`replicas`, `app.kubernetes.io/name`).
    Key(String),
    /// An item of a keyed list, by its merge key fields (`containers[name="web"]`).
    Item(Map<String, Value>),
    /// An item of a set list, by its value (`finalizers[="a"]`).
    Value(Value),
    /// An item of a list by position, for lists with no merge key (`args[2]`).
    Index(usize),
}

/// A path from the object's root.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FieldPath(pub Vec<PathStep>);

impl FieldPath {
    /// A path of map keys only: `FieldPath::keys(&["spec", "replicas"])`.
    pub fn keys(names: &[&str]) -> FieldPath {
        FieldPath(
            names
                .iter()
                .map(|name| PathStep::Key((*name).to_owned()))
                .collect(),
        )
    }

    pub fn key(mut self, name: &str) -> FieldPath {
        self.0.push(PathStep::Key(name.to_owned()));
        self
    }

    /// Appends a list item matched by one merge key field (`name`, `containerPort`, ...).
    pub fn item(mut self, field: &str, value: impl Into<Value>) -> FieldPath {
        let mut key = Map::new();
        key.insert(field.to_owned(), value.into());
        self.0.push(PathStep::Item(key));
        self
    }

    pub fn steps(&self) -> &[PathStep] {
        &self.0
    }
}

fn is_plain_key(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl fmt::Display for FieldPath {
    /// `spec.template.spec.containers[name="web"].env[name="A"].value`,
    /// `metadata.labels["app.kubernetes.io/name"]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (at, step) in self.0.iter().enumerate() {
            match step {
                PathStep::Key(name) if is_plain_key(name) => {
                    if at > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?;
                }
                PathStep::Key(name) => write!(f, "[{}]", Value::String(name.clone()))?,
                PathStep::Item(key) => {
                    let fields: Vec<String> = key.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    write!(f, "[{}]", fields.join(","))?;
                }
                PathStep::Value(value) => write!(f, "[={value}]")?,
                PathStep::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// A `fieldsV1` path (what a field manager owns) as an edit path: the same steps.
impl From<&crate::managed_fields::FieldPath> for FieldPath {
    fn from(path: &crate::managed_fields::FieldPath) -> FieldPath {
        use crate::managed_fields::PathElement;
        FieldPath(
            path.elements()
                .iter()
                .map(|element| match element {
                    PathElement::Field(name) => PathStep::Key(name.clone()),
                    PathElement::Key(fields) => PathStep::Item(fields.iter().cloned().collect()),
                    PathElement::Value(value) => PathStep::Value(value.clone()),
                    PathElement::Index(index) => PathStep::Index(*index),
                })
                .collect(),
        )
    }
}

/// True when list item `item` has every field of the merge key `key`.
pub fn item_matches(item: &Value, key: &Map<String, Value>) -> bool {
    key.iter()
        .all(|(field, want)| item.get(field).is_some_and(|have| have == want))
}

/// The position in `list` that `step` addresses, if the list has it.
pub fn position(list: &[Value], step: &PathStep) -> Option<usize> {
    match step {
        PathStep::Item(key) => list.iter().position(|item| item_matches(item, key)),
        PathStep::Value(want) => list.iter().position(|item| item == want),
        PathStep::Index(index) => (*index < list.len()).then_some(*index),
        PathStep::Key(_) => None,
    }
}

/// `edits` with each list item they name by a key that the manifest's item spells with a key
/// field left out (`protocol: TCP` of a port, which the server fills in) named by its place:
/// a drift path keys items with the server's defaults, and an item is found by the key fields
/// it has. Each edit is resolved against `original` with the edits before it applied, as they
/// are applied; the kind's schema (built in) says which key fields have defaults.
pub fn with_key_defaults(original: &Value, edits: &[super::FieldEdit]) -> Vec<super::FieldEdit> {
    use super::FieldEdit;
    let text = |field: &str| original.get(field).and_then(Value::as_str).unwrap_or("");
    let root = crate::schema::Schemas::builtin().root(text("apiVersion"), text("kind"));
    let mut object = original.clone();
    let mut out = Vec::with_capacity(edits.len());
    for edit in edits {
        let resolve = |path: &FieldPath| FieldPath(resolved(&object, root, path.steps()));
        let edit = match edit {
            FieldEdit::Set { path, value } => FieldEdit::Set {
                path: resolve(path),
                value: value.clone(),
            },
            FieldEdit::Remove { path } => FieldEdit::Remove {
                path: resolve(path),
            },
            FieldEdit::InsertItem { path, value, after } => FieldEdit::InsertItem {
                path: resolve(path),
                value: value.clone(),
                after: after.clone(),
            },
            FieldEdit::Reorder { path, order } => FieldEdit::Reorder {
                path: resolve(path),
                order: order.clone(),
            },
        };
        object = super::intended::apply(&object, std::slice::from_ref(&edit));
        out.push(edit);
    }
    out
}

/// `steps` with each item step that matches no item as written, but one item by the server's key
/// (key defaults filled in), made the index of that item.
fn resolved(object: &Value, root: crate::schema::Schema, steps: &[PathStep]) -> Vec<PathStep> {
    let mut out = steps.to_vec();
    let mut value = Some(object);
    let mut schema = root;
    for step in out.iter_mut() {
        if let (PathStep::Item(key), Some(Value::Array(list))) = (&*step, value)
            && position(list, step).is_none()
        {
            let matching: Vec<usize> = (0..list.len())
                .filter(|at| {
                    schema
                        .item_key(&list[*at])
                        .is_some_and(|k| same_key(&k, key))
                })
                .collect();
            if let [at] = matching.as_slice() {
                *step = PathStep::Index(*at);
            }
        }
        value = value.and_then(|v| child(v, step));
        schema = match step {
            PathStep::Key(name) => schema.field(name),
            _ => schema.item(),
        };
    }
    out
}

/// Two keys with the same fields and values (a number and its text alike: a key read from a
/// path may spell `8080` as text).
fn same_key(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    a.len() == b.len()
        && a.iter()
            .all(|(field, value)| b.get(field).is_some_and(|other| text(other) == text(value)))
}

/// The child of `value` that `step` addresses.
pub fn child<'v>(value: &'v Value, step: &PathStep) -> Option<&'v Value> {
    match (value, step) {
        (Value::Object(map), PathStep::Key(name)) => map.get(name),
        (Value::Array(list), step) => position(list, step).and_then(|at| list.get(at)),
        _ => None,
    }
}

pub fn child_mut<'v>(value: &'v mut Value, step: &PathStep) -> Option<&'v mut Value> {
    match (value, step) {
        (Value::Object(map), PathStep::Key(name)) => map.get_mut(name),
        (Value::Array(list), step) => position(list, step).and_then(|at| list.get_mut(at)),
        _ => None,
    }
}

/// The value at `steps` from `root`, to change it.
pub fn lookup_mut<'v>(root: &'v mut Value, steps: &[PathStep]) -> Option<&'v mut Value> {
    steps
        .iter()
        .try_fold(root, |value, step| child_mut(value, step))
}

/// The value at `steps` from `root`.
pub fn lookup<'v>(root: &'v Value, steps: &[PathStep]) -> Option<&'v Value> {
    steps.iter().try_fold(root, child)
}

/// The value `steps` would hold if made from nothing: nested maps for keys, and for a list item
/// a map of its merge key fields merged with what follows.
pub fn build(steps: &[PathStep], leaf: &Value) -> Value {
    let Some((first, rest)) = steps.split_first() else {
        return leaf.clone();
    };
    match first {
        PathStep::Key(name) => {
            let mut map = Map::new();
            map.insert(name.clone(), build(rest, leaf));
            Value::Object(map)
        }
        PathStep::Item(_) | PathStep::Value(_) | PathStep::Index(_) => {
            Value::Array(vec![new_item(first, rest, leaf)])
        }
    }
}

/// A new list item for `step`, holding what `rest` sets.
pub fn new_item(step: &PathStep, rest: &[PathStep], leaf: &Value) -> Value {
    match step {
        PathStep::Item(key) => {
            let mut item = key.clone();
            // With nothing after the item, the leaf is the whole item: its key fields come first.
            if let Value::Object(more) = build(rest, leaf) {
                for (field, value) in more {
                    item.insert(field, value);
                }
            }
            Value::Object(item)
        }
        PathStep::Value(value) => value.clone(),
        PathStep::Index(_) | PathStep::Key(_) => build(rest, leaf),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn display_quotes_keys_with_dots_and_shows_merge_keys() {
        let path = FieldPath::keys(&["spec", "template", "spec", "containers"])
            .item("name", "web")
            .key("image");
        assert_eq!(
            path.to_string(),
            r#"spec.template.spec.containers[name="web"].image"#
        );
        let label = FieldPath::keys(&["metadata", "labels", "app.kubernetes.io/name"]);
        assert_eq!(
            label.to_string(),
            r#"metadata.labels["app.kubernetes.io/name"]"#
        );
    }

    #[test]
    fn converts_from_a_fields_v1_path() {
        use crate::managed_fields::{self, PathElement};
        let mut key = Map::new();
        key.insert("name".into(), json!("web"));
        let owned = managed_fields::FieldPath::fields(&["spec", "template", "spec", "containers"])
            .child(PathElement::key(&key))
            .child(PathElement::field("image"));
        let path = FieldPath::from(&owned);
        assert_eq!(
            path.to_string(),
            r#"spec.template.spec.containers[name="web"].image"#
        );
    }

    #[test]
    fn an_item_named_with_its_key_defaults_is_the_one_that_leaves_them_out() {
        use super::super::FieldEdit;
        let service = json!({"apiVersion": "v1", "kind": "Service", "spec": {"ports": [
            {"name": "dns-udp", "port": 53, "protocol": "UDP"},
            {"name": "dns", "port": 53},
            {"name": "http", "port": 80}
        ]}});
        let mut key = Map::new();
        key.insert("port".into(), json!(53));
        key.insert("protocol".into(), json!("TCP"));
        let tcp = FieldPath(vec![
            PathStep::Key("spec".into()),
            PathStep::Key("ports".into()),
            PathStep::Item(key),
        ]);
        let edits = [
            FieldEdit::Set {
                path: tcp.clone().key("port"),
                value: json!(5353),
            },
            FieldEdit::Remove {
                path: FieldPath::keys(&["spec", "ports"]).item("port", 80),
            },
        ];
        let resolved = with_key_defaults(&service, &edits);
        assert_eq!(resolved[0].path().to_string(), "spec.ports[1].port");
        // Found as written: unchanged.
        assert_eq!(resolved[1], edits[1]);
        let after = super::super::intended::apply(&service, &resolved);
        assert_eq!(
            after["spec"]["ports"],
            json!([{"name": "dns-udp", "port": 53, "protocol": "UDP"}, {"name": "dns", "port": 5353}])
        );
        // Without a schema (an unknown kind), items are found as written only.
        let mut unknown = service.clone();
        unknown["kind"] = json!("Widget");
        assert_eq!(with_key_defaults(&unknown, &edits[..1])[0], edits[0]);
    }

    #[test]
    fn build_makes_parents_and_items_with_their_key() {
        let steps = FieldPath::keys(&["env"]).item("name", "A").key("value");
        assert_eq!(
            build(&steps.0, &json!("1")),
            json!({"env": [{"name": "A", "value": "1"}]})
        );
    }
}
