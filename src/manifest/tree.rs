//! [`Node`]: a manifest's body in compact form. Thousands of manifests are held at once, and a
//! `serde_json::Value` spends about 110 bytes and a hash table per map entry (an `IndexMap` with
//! its own index) and an allocation per field name; a `Node` map is one slice of (name, value)
//! pairs in the file's order, its names shared between documents ([`Names`]) — a fifth of the
//! memory, and as fast to walk (manifest maps are small: a linear search wins). Convert to a
//! `Value` with [`Node::to_value`] where a whole value is needed (the diff view, a revert, a
//! drift item's manifest value).
use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Number, Value};

/// Field names and short values met so far, shared: the same few dozen names recur in every
/// manifest, and values too (`apps/v1`, a namespace, an application's name in its labels,
/// selector and template, `TCP`, `100m`).
#[derive(Debug, Default)]
pub struct Names(HashSet<Arc<str>>);

/// Longer values are seldom repeated: they are not looked up.
const SHARED_VALUE_LEN: usize = 64;

impl Names {
    fn get(&mut self, name: String) -> Arc<str> {
        if let Some(known) = self.0.get(name.as_str()) {
            return Arc::clone(known);
        }
        let name: Arc<str> = Arc::from(name);
        self.0.insert(Arc::clone(&name));
        name
    }

    /// `text`, shared with the equal names and values met before.
    pub fn share(&mut self, text: &str) -> super::SharedStr {
        match self.0.get(text) {
            Some(known) => Arc::clone(known).into(),
            None => self.get(text.to_owned()).into(),
        }
    }

    fn value(&mut self, text: String) -> Arc<str> {
        if text.len() > SHARED_VALUE_LEN {
            return Arc::from(text);
        }
        self.get(text)
    }
}

/// One YAML/JSON node of a manifest.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Number(Number),
    /// Shared with equal short strings of the manifests read together ([`Names`]).
    String(Arc<str>),
    List(Box<[Node]>),
    /// Fields in the manifest's order.
    Map(Box<[(Arc<str>, Node)]>),
}

impl Node {
    /// The field `name` of a map.
    pub fn get(&self, name: &str) -> Option<&Node> {
        match self {
            Node::Map(fields) => fields.iter().find(|(k, _)| **k == *name).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::String(text) => Some(text),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }

    /// `null`, `{}`, `[]`, `""`: what the server drops or fills with a zero value.
    pub fn is_empty(&self) -> bool {
        match self {
            Node::Null => true,
            Node::Map(fields) => fields.is_empty(),
            Node::List(items) => items.is_empty(),
            Node::String(text) => text.is_empty(),
            _ => false,
        }
    }

    /// The same value as `Value`'s `==` would say (numbers as written: `1` is not `1.0`).
    pub fn eq_value(&self, value: &Value) -> bool {
        match (self, value) {
            (Node::Null, Value::Null) => true,
            (Node::Bool(a), Value::Bool(b)) => a == b,
            (Node::Number(a), Value::Number(b)) => a == b,
            (Node::String(a), Value::String(b)) => **a == **b,
            (Node::List(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.eq_value(y))
            }
            (Node::Map(a), Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, x)| b.get(k.as_ref()).is_some_and(|y| x.eq_value(y)))
            }
            _ => false,
        }
    }

    /// Removes the field `name` of a map, returning it.
    pub fn remove(&mut self, name: &str) -> Option<Node> {
        let Node::Map(fields) = self else {
            return None;
        };
        let at = fields.iter().position(|(k, _)| **k == *name)?;
        let mut kept = std::mem::take(fields).into_vec();
        let (_, removed) = kept.remove(at);
        *fields = kept.into_boxed_slice();
        Some(removed)
    }

    /// The field `name` of a map, to change in place.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Node> {
        match self {
            Node::Map(fields) => fields
                .iter_mut()
                .find(|(k, _)| **k == *name)
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// Removes `metadata.annotations[name]` (and `annotations` when it is left empty).
    pub fn remove_annotation(&mut self, name: &str) -> Option<Node> {
        let metadata = self.get_mut("metadata")?;
        let annotations = metadata.get_mut("annotations")?;
        let removed = annotations.remove(name)?;
        if annotations.is_empty() {
            metadata.remove("annotations");
        }
        Some(removed)
    }

    /// The node as a `serde_json::Value`, in the same order.
    pub fn to_value(&self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.clone()),
            Node::String(text) => Value::String(text.to_string()),
            Node::List(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Node::Map(fields) => {
                let mut map = Map::with_capacity(fields.len());
                for (name, value) in fields.iter() {
                    map.insert(name.to_string(), value.to_value());
                }
                Value::Object(map)
            }
        }
    }
}

impl Node {
    /// The node of `value`, its field names taken from (and added to) `names`.
    pub fn from_value(value: Value, names: &mut Names) -> Node {
        match value {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(b),
            Value::Number(n) => Node::Number(n),
            Value::String(text) => Node::String(names.value(text)),
            Value::Array(items) => Node::List(
                items
                    .into_iter()
                    .map(|item| Node::from_value(item, names))
                    .collect(),
            ),
            Value::Object(map) => Node::Map(
                map.into_iter()
                    .map(|(name, value)| (names.get(name), Node::from_value(value, names)))
                    .collect(),
            ),
        }
    }
}

impl From<Value> for Node {
    fn from(value: Value) -> Node {
        Node::from_value(value, &mut Names::default())
    }
}

impl From<&Node> for Value {
    fn from(node: &Node) -> Value {
        node.to_value()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_value_goes_through_a_node_unchanged_in_content_and_order() {
        let value = json!({"z": 1, "a": [true, null, 1.5, "x"], "m": {"b": {}, "a": []}, "n": -3});
        let node = Node::from(value.clone());
        let back = node.to_value();
        assert_eq!(back, value);
        let keys: Vec<_> = back.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["z", "a", "m", "n"]);
        assert!(node.eq_value(&value));
        assert!(!node.eq_value(&json!({"z": 1})));
        assert_eq!(
            node.get("m").and_then(|m| m.get("b")),
            Some(&Node::Map(Box::new([])))
        );
        assert!(node.get("m").unwrap().get("a").unwrap().is_empty());
    }

    #[test]
    fn names_are_shared_between_documents() {
        let mut names = Names::default();
        let a = Node::from_value(json!({"metadata": {"name": "a"}}), &mut names);
        let b = Node::from_value(json!({"metadata": {"name": "b"}, "x": "a"}), &mut names);
        let long = "v".repeat(SHARED_VALUE_LEN + 1);
        let c = Node::from_value(json!({"y": long}), &mut names);
        let (Node::Map(a), Node::Map(b), Node::Map(_)) = (&a, &b, c) else {
            unreachable!()
        };
        assert!(Arc::ptr_eq(&a[0].0, &b[0].0));
        // Short values are shared with equal names and values; long ones are not kept.
        let (Some(Node::String(in_a)), Some(Node::String(in_b))) = (
            a[0].1.get("name"),
            b.iter().find(|(k, _)| &**k == "x").map(|(_, v)| v),
        ) else {
            unreachable!()
        };
        assert!(Arc::ptr_eq(in_a, in_b));
        // metadata, name, a, b, x, y — not the long value.
        assert_eq!(names.0.len(), 6);
    }

    #[test]
    fn numbers_compare_as_written_like_values() {
        assert!(Node::from(json!(1)).eq_value(&json!(1)));
        assert!(!Node::from(json!(1)).eq_value(&json!(1.0)));
        assert!(!Node::from(json!("1")).eq_value(&json!(1)));
    }
}
