//! How the items of keyed lists are paired across the two sides: by their merge keys, with the
//! server's default for a key field the item leaves out (`protocol: TCP` of a port), and the live
//! lists a manager's fields reach, indexed once by key.
use serde_json::Value;

use crate::managed_fields::{FieldPath, PathElement};
use crate::manifest::tree::NodeRef;
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
    item: NodeRef<'v>,
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
    Node(NodeRef<'v>),
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

/// What a manifest's list item is compared with live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Match {
    /// The live item of its key (or of its place, for an item without its key fields).
    Same(usize),
    /// A live item of another key that is this item with a key field changed live.
    Rekeyed(usize),
    None,
}

/// A manifest's list item, packed (`NodeRef`) or as a value: its key fields and its name.
pub(super) trait ManifestItem {
    fn key_value(&self, name: &str, default: Option<&'static str>) -> Option<KeyValue<'_>>;
    fn name(&self) -> Option<&str>;
}

impl ManifestItem for NodeRef<'_> {
    fn key_value(&self, name: &str, default: Option<&'static str>) -> Option<KeyValue<'_>> {
        node_key_field(*self, name, default)
    }

    fn name(&self) -> Option<&str> {
        self.get("name").and_then(NodeRef::as_str)
    }
}

impl ManifestItem for Value {
    fn key_value(&self, name: &str, default: Option<&'static str>) -> Option<KeyValue<'_>> {
        key_field(self, name, default)
    }

    fn name(&self) -> Option<&str> {
        self.get("name").and_then(Value::as_str)
    }
}

/// True when a manifest's list item and a live one have the same key (defaults filled in).
fn same_key_of(schema: Schema, manifest: &impl ManifestItem, live: &Value) -> bool {
    let keys = schema.list_keys();
    !keys.is_empty()
        && keys.iter().all(|k| {
            match (
                manifest.key_value(k.name, k.default),
                key_field(live, k.name, k.default),
            ) {
                (Some(x), Some(y)) => x.same(&y),
                _ => false,
            }
        })
}

/// For each item of a manifest's keyed list, the live item it is compared with: the one of its
/// key; else, in a list keyed by more than one field (`port` and `protocol`), a live item whose
/// key no manifest item has, taken as this item with a key field changed live (`port` 8080 →
/// 8081 is one change of one port, not a port removed and another added): the one of the same
/// `name`, else the only one left when only this manifest item is left too.
pub(super) fn live_matches(
    schema: Schema,
    manifest: &[impl ManifestItem],
    live: &[Value],
) -> Vec<Match> {
    let keys = schema.list_keys();
    let mut matches: Vec<Match> = manifest
        .iter()
        .enumerate()
        .map(|(index, item)| {
            // An item without its key fields is invalid for the server; compare by position.
            let keyed = !keys.is_empty()
                && keys
                    .iter()
                    .all(|k| item.key_value(k.name, k.default).is_some());
            let found = if keyed {
                live.iter().position(|l| same_key_of(schema, item, l))
            } else {
                (index < live.len()).then_some(index)
            };
            found.map_or(Match::None, Match::Same)
        })
        .collect();
    if keys.len() < 2 || !matches.contains(&Match::None) {
        return matches;
    }
    // Only live items whose key no manifest item has.
    let mut unmatched_live: Vec<usize> = (0..live.len())
        .filter(|l| !manifest.iter().any(|m| same_key_of(schema, m, &live[*l])))
        .collect();
    fn name_of(item: &Value) -> Option<&str> {
        item.get("name").and_then(Value::as_str)
    }
    for (at, item) in manifest.iter().enumerate() {
        if matches[at] != Match::None {
            continue;
        }
        let Some(name) = item.name() else {
            continue;
        };
        if let Some(found) = unmatched_live
            .iter()
            .position(|l| name_of(&live[*l]) == Some(name))
        {
            matches[at] = Match::Rekeyed(unmatched_live.remove(found));
        }
    }
    let left: Vec<usize> = (0..manifest.len())
        .filter(|at| matches[*at] == Match::None)
        .collect();
    if let ([at], [l]) = (left.as_slice(), unmatched_live.as_slice()) {
        // Names that differ say these are two ports, not one changed.
        let (m_name, l_name) = (manifest[*at].name(), name_of(&live[*l]));
        if m_name.is_none() || l_name.is_none() || m_name == l_name {
            matches[*at] = Match::Rekeyed(*l);
        }
    }
    matches
}

/// For each item of a live keyed list, the manifest item [`live_matches`] compares it with, and
/// whether its key was changed live.
pub(super) fn manifest_partners(
    schema: Schema,
    manifest: &[impl ManifestItem],
    live: &[Value],
) -> Vec<Option<(usize, bool)>> {
    let mut partners = vec![None; live.len()];
    for (at, found) in live_matches(schema, manifest, live).into_iter().enumerate() {
        match found {
            Match::Same(l) => partners[l] = Some((at, false)),
            Match::Rekeyed(l) => partners[l] = Some((at, true)),
            Match::None => {}
        }
    }
    partners
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ports() -> Schema {
        crate::schema::builtin_kind("Service")
            .field("spec")
            .field("ports")
    }

    fn nodes(value: serde_json::Value) -> Vec<NodeRef<'static>> {
        let packed = Box::leak(Box::new(crate::manifest::tree::Packed::from(value)));
        packed.root().items().into_iter().flatten().collect()
    }

    #[test]
    fn an_item_whose_key_changed_live_is_paired_by_name_or_as_the_one_left() {
        let manifest =
            nodes(json!([{"name": "http", "port": 80}, {"name": "metrics", "port": 9090}]));
        // `http` moved to 81: the same item; `metrics` as it was.
        let live = [
            json!({"name": "metrics", "port": 9090, "protocol": "TCP"}),
            json!({"name": "http", "port": 81, "protocol": "TCP"}),
        ];
        assert_eq!(
            live_matches(ports(), &manifest, &live),
            [Match::Rekeyed(1), Match::Same(0)]
        );
        // Unnamed, one left on each side.
        let manifest = nodes(json!([{"port": 80}]));
        let live = [json!({"port": 81, "protocol": "TCP"})];
        assert_eq!(live_matches(ports(), &manifest, &live), [Match::Rekeyed(0)]);
        // Another name is another port; two left on a side are not guessed at.
        let manifest = nodes(json!([{"name": "http", "port": 80}]));
        let live = [json!({"name": "admin", "port": 81, "protocol": "TCP"})];
        assert_eq!(live_matches(ports(), &manifest, &live), [Match::None]);
        let manifest = nodes(json!([{"port": 80}, {"port": 443}]));
        let live = [json!({"port": 81, "protocol": "TCP"})];
        assert_eq!(
            live_matches(ports(), &manifest, &live),
            [Match::None, Match::None]
        );
        // A list keyed by one field (env by name): a new name is another item.
        let env = crate::schema::builtin_kind("Deployment")
            .field("spec")
            .field("template")
            .field("spec")
            .field("containers")
            .item()
            .field("env");
        let manifest = nodes(json!([{"name": "A", "value": "1"}]));
        let live = [json!({"name": "B", "value": "1"})];
        assert_eq!(live_matches(env, &manifest, &live), [Match::None]);
    }
}
