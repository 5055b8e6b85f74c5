//! Path elements and field paths of `fieldsV1`: `f:<name>`, `k:{json}`, `v:<json>`, `i:<n>`, their
//! total order (the order a server writes them in) and the conflict-message form
//! (`.spec.template.spec.containers[name="web"].image`).
use std::cmp::Ordering;
use std::fmt;

use serde_json::{Map, Value};

use crate::schema::{ListType, Schema};

use super::FieldsError;

/// One step of a path through an object.
#[derive(Debug, Clone)]
pub enum PathElement {
    /// A field of a map or struct: `f:<name>`.
    Field(String),
    /// An item of an associative list, by its key fields in name order: `k:{"name":"web"}`.
    Key(Vec<(String, Value)>),
    /// A member of a set list: `v:"value"`.
    Value(Value),
    /// An item of a list without keys, by position: `i:0`.
    Index(usize),
}

impl PathElement {
    pub fn field(name: &str) -> PathElement {
        PathElement::Field(name.to_string())
    }

    /// A key element from a key object (fields are sorted by name, as the server writes them).
    pub fn key(key: &Map<String, Value>) -> PathElement {
        let mut fields: Vec<(String, Value)> =
            key.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        PathElement::Key(fields)
    }

    /// The element naming `item` (at `index`) of a list with schema `list`: by key for an
    /// associative list, by value for a set, by index otherwise.
    pub fn for_item(list: Schema, item: &Value, index: usize) -> PathElement {
        match list.list_type() {
            ListType::Map => match list.item_key(item) {
                Some(key) => PathElement::key(&key),
                None => PathElement::Index(index),
            },
            ListType::Set => PathElement::Value(item.clone()),
            ListType::Atomic => PathElement::Index(index),
        }
    }

    /// Parse one `fieldsV1` key (`f:spec`, `k:{"name":"web"}`, `v:"x"`, `i:0`).
    pub fn parse(text: &str) -> Result<PathElement, FieldsError> {
        let bad = |reason: &str| FieldsError::BadElement {
            element: text.to_string(),
            reason: reason.to_string(),
        };
        let (prefix, rest) = text.split_at_checked(2).ok_or_else(|| bad("too short"))?;
        match prefix {
            "f:" => Ok(PathElement::Field(rest.to_string())),
            "k:" => match serde_json::from_str::<Value>(rest) {
                Ok(Value::Object(key)) if !key.is_empty() => Ok(PathElement::key(&key)),
                Ok(_) => Err(bad("a key must be a non-empty JSON object")),
                Err(e) => Err(bad(&e.to_string())),
            },
            "v:" => serde_json::from_str(rest)
                .map(PathElement::Value)
                .map_err(|e| bad(&e.to_string())),
            "i:" => rest
                .parse()
                .map(PathElement::Index)
                .map_err(|e| bad(&e.to_string())),
            _ => Err(bad("expected f:, k:, v: or i:")),
        }
    }

    /// The `fieldsV1` key of this element, with JSON escaped as Go's encoder does.
    pub fn to_fields_key(&self) -> String {
        match self {
            PathElement::Field(name) => format!("f:{name}"),
            PathElement::Key(fields) => {
                let object: Map<String, Value> = fields.iter().cloned().collect();
                format!("k:{}", go_json(&Value::Object(object)))
            }
            PathElement::Value(value) => format!("v:{}", go_json(value)),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// The child of `value` this element names, and the child's schema.
    pub fn lookup<'a>(&self, schema: Schema, value: &'a Value) -> Option<(&'a Value, Schema)> {
        match (self, value) {
            (PathElement::Field(name), Value::Object(map)) => {
                map.get(name).map(|v| (v, schema.field(name)))
            }
            (PathElement::Key(fields), Value::Array(items)) => {
                let key: Map<String, Value> = fields.iter().cloned().collect();
                let matches = |item: &Value| match schema.item_key(item) {
                    Some(k) => k == key,
                    // Without a schema, compare the key fields as written.
                    None => fields.iter().all(|(name, v)| item.get(name) == Some(v)),
                };
                items
                    .iter()
                    .find(|item| matches(item))
                    .map(|v| (v, schema.item()))
            }
            (PathElement::Value(member), Value::Array(items)) => items
                .iter()
                .find(|item| *item == member)
                .map(|v| (v, schema.item())),
            (PathElement::Index(i), Value::Array(items)) => {
                items.get(*i).map(|v| (v, schema.item()))
            }
            _ => None,
        }
    }
}

/// Compact JSON as Go's `encoding/json` writes it (HTML characters escaped).
fn go_json(value: &Value) -> String {
    let text = value.to_string();
    if !text.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return text;
    }
    // These characters can only occur inside JSON strings, so replacing them everywhere is safe.
    text.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// The total order of values used by structured-merge-diff: numbers, strings, booleans, lists,
/// maps, null.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => x
                .as_f64()
                .unwrap_or(0.0)
                .total_cmp(&y.as_f64().unwrap_or(0.0)),
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (l, r) in x.iter().zip(y) {
                let c = compare_values(l, r);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut xs: Vec<_> = x.iter().collect();
            let mut ys: Vec<_> = y.iter().collect();
            xs.sort_by(|a, b| a.0.cmp(b.0));
            ys.sort_by(|a, b| a.0.cmp(b.0));
            for ((kl, vl), (kr, vr)) in xs.iter().zip(&ys) {
                let c = kl.cmp(kr).then_with(|| compare_values(vl, vr));
                if c != Ordering::Equal {
                    return c;
                }
            }
            xs.len().cmp(&ys.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

impl Ord for PathElement {
    /// Fields, then keys, then values, then indices, as the server sorts them.
    fn cmp(&self, other: &Self) -> Ordering {
        fn rank(e: &PathElement) -> u8 {
            match e {
                PathElement::Field(_) => 0,
                PathElement::Key(_) => 1,
                PathElement::Value(_) => 2,
                PathElement::Index(_) => 3,
            }
        }
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => a.len().cmp(&b.len()).then_with(|| {
                for ((na, va), (nb, vb)) in a.iter().zip(b) {
                    let c = na.cmp(nb).then_with(|| compare_values(va, vb));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                Ordering::Equal
            }),
            (PathElement::Value(a), PathElement::Value(b)) => compare_values(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => rank(self).cmp(&rank(other)),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

/// A value as the server prints it in a path: strings quoted, everything else as JSON.
fn path_value(value: &Value) -> String {
    value.to_string()
}

impl fmt::Display for PathElement {
    /// The form of conflict messages: `.image`, `[name="web"]`, `[="x"]`, `[0]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(n, v)| format!("{n}={}", path_value(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", path_value(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path from an object's root to one field, list item or set member.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct FieldPath(pub Vec<PathElement>);

impl FieldPath {
    /// A path of field names only: `FieldPath::fields(&["spec", "replicas"])`.
    pub fn fields(names: &[&str]) -> FieldPath {
        FieldPath(names.iter().map(|n| PathElement::field(n)).collect())
    }

    pub fn elements(&self) -> &[PathElement] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// This path extended by one element.
    pub fn child(&self, element: PathElement) -> FieldPath {
        let mut out = self.clone();
        out.0.push(element);
        out
    }

    /// Whether `self` is `other` or lies under it.
    pub fn starts_with(&self, other: &FieldPath) -> bool {
        self.0.len() >= other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a == b)
    }

    /// The value at this path in an object whose kind's schema is `root` (list items matched by
    /// key, with the key defaults of the schema, e.g. `protocol: TCP` for ports).
    pub fn lookup<'a>(&self, root: Schema, object: &'a Value) -> Option<&'a Value> {
        let mut schema = root;
        let mut value = object;
        for element in &self.0 {
            let (next, next_schema) = element.lookup(schema, value)?;
            value = next;
            schema = next_schema;
        }
        Some(value)
    }

    /// The schema at this path from a kind's `root`.
    pub fn schema(&self, root: Schema) -> Schema {
        self.0.iter().fold(root, |s, e| match e {
            PathElement::Field(name) => s.field(name),
            _ => s.item(),
        })
    }
}

impl fmt::Display for FieldPath {
    /// `.spec.template.spec.containers[name="web"].image`, as in a server's conflict message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for element in &self.0 {
            write!(f, "{element}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn container_image() -> FieldPath {
        let mut key = Map::new();
        key.insert("name".into(), json!("web"));
        FieldPath::fields(&["spec", "template", "spec", "containers"])
            .child(PathElement::key(&key))
            .child(PathElement::field("image"))
    }

    #[test]
    fn display_is_the_conflict_message_form() {
        assert_eq!(
            FieldPath::fields(&["spec", "replicas"]).to_string(),
            ".spec.replicas"
        );
        assert_eq!(
            container_image().to_string(),
            r#".spec.template.spec.containers[name="web"].image"#
        );
        let port = PathElement::parse(r#"k:{"protocol":"TCP","containerPort":8080}"#).ok();
        assert_eq!(
            port.map(|p| p.to_string()),
            Some(r#"[containerPort=8080,protocol="TCP"]"#.into())
        );
        assert_eq!(PathElement::Value(json!("x")).to_string(), r#"[="x"]"#);
        assert_eq!(PathElement::Index(3).to_string(), "[3]");
    }

    #[test]
    fn keys_are_written_with_sorted_fields_and_go_escaping() {
        let e = PathElement::parse(r#"k:{"protocol":"TCP","containerPort":8080}"#).ok();
        assert_eq!(
            e.map(|e| e.to_fields_key()),
            Some(r#"k:{"containerPort":8080,"protocol":"TCP"}"#.to_string())
        );
        assert_eq!(
            PathElement::Value(json!("a<b")).to_fields_key(),
            r#"v:"a\u003cb""#
        );
    }

    #[test]
    fn bad_elements_are_errors_naming_the_element() {
        for bad in ["x:y", "k:[1]", "k:{", "i:-1", "v:", "f"] {
            let err = PathElement::parse(bad)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(err.contains(&format!("\"{bad}\"")), "{bad}: {err}");
        }
    }

    #[test]
    fn order_is_fields_keys_values_indices() {
        let mut elements = [
            PathElement::Index(0),
            PathElement::Value(json!("a")),
            PathElement::Value(json!(1)),
            PathElement::parse(r#"k:{"name":"b"}"#).unwrap(),
            PathElement::parse(r#"k:{"name":"a"}"#).unwrap(),
            PathElement::field("b"),
            PathElement::field("a"),
        ];
        elements.sort();
        let keys: Vec<String> = elements.iter().map(|e| e.to_fields_key()).collect();
        assert_eq!(
            keys,
            [
                "f:a",
                "f:b",
                r#"k:{"name":"a"}"#,
                r#"k:{"name":"b"}"#,
                "v:1",
                r#"v:"a""#,
                "i:0"
            ]
        );
    }

    #[test]
    fn lookup_matches_items_by_key_with_defaults() {
        let object = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "side", "image": "side:1"},
            {"name": "web", "image": "web:2", "ports": [{"containerPort": 8080}]}
        ]}}}});
        assert_eq!(
            container_image().lookup(crate::schema::builtin_kind("Deployment"), &object),
            Some(&json!("web:2"))
        );
        let port = FieldPath(
            container_image().0[..5]
                .iter()
                .cloned()
                .chain([
                    PathElement::field("ports"),
                    PathElement::parse(r#"k:{"containerPort":8080,"protocol":"TCP"}"#).unwrap(),
                    PathElement::field("containerPort"),
                ])
                .collect(),
        );
        assert_eq!(
            port.lookup(crate::schema::builtin_kind("Deployment"), &object),
            Some(&json!(8080))
        );
        assert_eq!(
            FieldPath::fields(&["spec", "replicas"])
                .lookup(crate::schema::builtin_kind("Deployment"), &object),
            None
        );
    }
}
