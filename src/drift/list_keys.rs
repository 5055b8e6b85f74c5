//! How the items of keyed lists are paired across the two sides: by their merge keys, with the
//! server's default for a key field the item leaves out (`protocol: TCP` of a port), and the live
//! lists a manager's fields reach, indexed once by key.
use serde_json::Value;

use crate::managed_fields::{FieldPath, PathElement};
use crate::manifest::tree::Node;
use crate::schema::{ListType, Schema};

use super::path::PathStep;

/// The value of key field `name` of a list item, with the server's default when absent.
pub(super) fn key_field<'v>(
    item: &'v Value,
    name: &str,
    default: Option<&'static str>,
) -> Option<KeyValue<'v>> {
    match item.get(name).filter(|v| !v.is_null()) {
        Some(value) => Some(KeyValue::Value(value)),
        None => default.map(KeyValue::Default),
    }
}

/// The value of key field `name` of a manifest's list item, with the server's default when
/// absent.
pub(super) fn node_key_field<'v>(
    item: &'v Node,
    name: &str,
    default: Option<&'static str>,
) -> Option<KeyValue<'v>> {
    match item.get(name).filter(|v| !v.is_null()) {
        Some(value) => Some(KeyValue::Node(value)),
        None => default.map(KeyValue::Default),
    }
}

#[derive(PartialEq)]
pub(super) enum KeyValue<'v> {
    Value(&'v Value),
    Node(&'v Node),
    Default(&'static str),
}

impl KeyValue<'_> {
    pub(super) fn same(&self, other: &KeyValue<'_>) -> bool {
        match (self, other) {
            (KeyValue::Value(a), KeyValue::Value(b)) => a == b,
            (KeyValue::Node(a), KeyValue::Node(b)) => a == b,
            (KeyValue::Node(n), KeyValue::Value(v)) | (KeyValue::Value(v), KeyValue::Node(n)) => {
                n.eq_value(v)
            }
            (KeyValue::Value(v), KeyValue::Default(d))
            | (KeyValue::Default(d), KeyValue::Value(v)) => v.as_str() == Some(d),
            (KeyValue::Node(n), KeyValue::Default(d))
            | (KeyValue::Default(d), KeyValue::Node(n)) => n.as_str() == Some(d),
            (KeyValue::Default(a), KeyValue::Default(b)) => a == b,
        }
    }
}

/// True when two items of a keyed list have the same key (defaults such as `protocol: TCP`
/// filled in), without building the key.
pub(crate) fn same_key(schema: Schema, a: &Value, b: &Value) -> bool {
    let keys = schema.list_keys();
    !keys.is_empty()
        && keys.iter().all(|k| {
            match (
                key_field(a, k.name, k.default),
                key_field(b, k.name, k.default),
            ) {
                (Some(x), Some(y)) => x.same(&y),
                _ => false,
            }
        })
}

/// True when a manifest's list item and a live one have the same key.
pub(super) fn same_key_node(schema: Schema, manifest: &Node, live: &Value) -> bool {
    let keys = schema.list_keys();
    !keys.is_empty()
        && keys.iter().all(|k| {
            match (
                node_key_field(manifest, k.name, k.default),
                key_field(live, k.name, k.default),
            ) {
                (Some(x), Some(y)) => x.same(&y),
                _ => false,
            }
        })
}

/// The live lists a manager's added fields reach, each read once: its items' places by key and
/// their keys as steps. A list that gained thousands of items live is otherwise searched once
/// per item, and each item would keep a copy of the ones before it.
#[derive(Default)]
pub(super) struct ListIndex {
    /// By the path of the list: its items' elements and places, and their keys as steps.
    lists: std::collections::BTreeMap<Vec<PathElement>, ListItems>,
}

/// A live list's items: their places by element, and their keys as steps.
type ListItems = (
    std::collections::BTreeMap<PathElement, usize>,
    std::sync::Arc<[Option<PathStep>]>,
);

impl ListIndex {
    /// The list at `parent` (its items' places and keys), read on first use.
    pub(super) fn list(
        &mut self,
        root: Schema,
        parent: &[PathElement],
        items: &[Value],
    ) -> &ListItems {
        self.lists.entry(parent.to_vec()).or_insert_with(|| {
            let schema = FieldPath(parent.to_vec()).schema(root);
            let places = items
                .iter()
                .enumerate()
                .map(|(i, item)| (PathElement::for_item(schema, item, i), i))
                .rev()
                .collect();
            let steps = items
                .iter()
                .map(|item| match item {
                    Value::Object(_) => schema
                        .item_key(item)
                        .map(|key| PathStep::Item { key, index: None }),
                    other => Some(PathStep::Value(other.clone())),
                })
                .collect();
            (places, steps)
        })
    }

    /// The live value at `path`, as [`FieldPath::lookup`] finds it, with keyed list items found
    /// through the index.
    pub(super) fn lookup<'v>(
        &mut self,
        root: Schema,
        path: &FieldPath,
        live: &'v Value,
    ) -> Option<&'v Value> {
        let mut value = live;
        for (depth, element) in path.0.iter().enumerate() {
            let schema = FieldPath(path.0[..depth].to_vec()).schema(root);
            value = match (element, value, schema.list_type()) {
                (PathElement::Key(_), Value::Array(items), ListType::Map)
                | (PathElement::Value(_), Value::Array(items), ListType::Set) => {
                    let (places, _) = self.list(root, &path.0[..depth], items);
                    items.get(*places.get(element)?)?
                }
                _ => element.lookup(schema, value)?.0,
            };
        }
        Some(value)
    }

    /// The items before the list item at `path` in the live list (none for a field).
    pub(super) fn preceding(
        &mut self,
        root: Schema,
        path: &FieldPath,
        live: &Value,
    ) -> super::Preceding {
        let Some((last, parent)) = path.0.split_last() else {
            return super::Preceding::default();
        };
        if matches!(last, PathElement::Field(_)) {
            return super::Preceding::default();
        }
        let Some(Value::Array(items)) = FieldPath(parent.to_vec()).lookup(root, live) else {
            return super::Preceding::default();
        };
        let (places, steps) = self.list(root, parent, items);
        match places.get(last) {
            Some(at) => super::Preceding::new(steps.clone(), *at),
            None => super::Preceding::default(),
        }
    }
}
