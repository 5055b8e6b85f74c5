//! [`Node`]: a manifest's body in compact form. Thousands of manifests are held at once, and a
//! `serde_json::Value` spends about 110 bytes and a hash table per map entry (an `IndexMap` with
//! its own index); a `Node` map is one slice of (name, value) pairs in the file's order — a
//! third of the memory, and as fast to walk (manifest maps are small: a linear search wins).
//! Convert to a `Value` with [`Node::to_value`] where a whole value is needed (the diff view,
//! a revert, a drift item's manifest value).
use serde_json::{Map, Number, Value};

/// One YAML/JSON node of a manifest.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Number(Number),
    String(Box<str>),
    List(Box<[Node]>),
    /// Fields in the manifest's order.
    Map(Box<[(Box<str>, Node)]>),
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

impl From<Value> for Node {
    fn from(value: Value) -> Node {
        match value {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(b),
            Value::Number(n) => Node::Number(n),
            Value::String(text) => Node::String(text.into_boxed_str()),
            Value::Array(items) => Node::List(items.into_iter().map(Node::from).collect()),
            Value::Object(map) => Node::Map(
                map.into_iter()
                    .map(|(name, value)| (name.into_boxed_str(), Node::from(value)))
                    .collect(),
            ),
        }
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
    fn numbers_compare_as_written_like_values() {
        assert!(Node::from(json!(1)).eq_value(&json!(1)));
        assert!(!Node::from(json!(1)).eq_value(&json!(1.0)));
        assert!(!Node::from(json!("1")).eq_value(&json!(1)));
    }
}
