//! The object side of server-side apply: merging an applied configuration into the live object
//! per schema, and pruning the fields a manager stopped applying.
use serde_json::{Map, Value};

use crate::managed_fields::{FieldPath, FieldSet, PathElement};
use crate::schema::{ListType, Schema};

/// Merge `config` into `live`: maps field by field, associative lists and sets item by item
/// (applied items in the applied order, live-only items where they were), everything else
/// replaced. A `null` in the configuration removes the field.
pub fn merge(schema: Schema, live: Option<&Value>, config: &Value) -> Value {
    match (live, config) {
        (Some(Value::Object(l)), Value::Object(c)) if !schema.is_atomic() => {
            Value::Object(merge_maps(schema, l, c))
        }
        (_, Value::Object(c)) if !schema.is_atomic() => {
            Value::Object(merge_maps(schema, &Map::new(), c))
        }
        (Some(Value::Array(l)), Value::Array(c)) if schema.list_type() != ListType::Atomic => {
            Value::Array(merge_lists(schema, l, c))
        }
        (_, Value::Array(c)) if schema.list_type() != ListType::Atomic => {
            Value::Array(merge_lists(schema, &[], c))
        }
        (_, other) => other.clone(),
    }
}

fn merge_maps(
    schema: Schema,
    live: &Map<String, Value>,
    config: &Map<String, Value>,
) -> Map<String, Value> {
    let mut out = live.clone();
    for (key, value) in config {
        if value.is_null() {
            out.shift_remove(key);
            continue;
        }
        let merged = merge(schema.field(key), live.get(key), value);
        out.insert(key.clone(), merged);
    }
    out
}

/// Merge list items by their path element: shared items in the applied order, live-only items
/// where they were relative to them, applied-only items where the configuration puts them.
fn merge_lists(schema: Schema, live: &[Value], config: &[Value]) -> Vec<Value> {
    let element = |v: &Value, i: usize| PathElement::for_item(schema, v, i);
    let lives: Vec<PathElement> = live
        .iter()
        .enumerate()
        .map(|(i, v)| element(v, i))
        .collect();
    let applied: Vec<PathElement> = config
        .iter()
        .enumerate()
        .map(|(i, v)| element(v, i))
        .collect();
    let live_item = |e: &PathElement| lives.iter().position(|l| l == e).map(|i| &live[i]);
    let item_schema = schema.item();
    let mut shared = applied.iter().filter(|e| lives.contains(e));
    let mut next_shared = shared.next();
    let mut done: Vec<&PathElement> = Vec::new();
    let mut out = Vec::with_capacity(live.len().max(config.len()));
    let (mut l, mut r) = (0, 0);
    while l < live.len() || r < config.len() {
        if l < live.len() && r < config.len() {
            if lives[l] == applied[r] {
                out.push(merge(item_schema, Some(&live[l]), &config[r]));
                done.push(&applied[r]);
                (l, r) = (l + 1, r + 1);
                next_shared = shared.next();
                continue;
            }
            // A shared item that comes later in the applied order waits for its turn.
            if applied.contains(&lives[l]) && next_shared.is_some_and(|n| *n != lives[l]) {
                l += 1;
                continue;
            }
        }
        if l < live.len()
            && (!applied.contains(&lives[l]) || done.contains(&&lives[l]) || r >= config.len())
        {
            if !applied.contains(&lives[l]) {
                out.push(live[l].clone());
            }
            l += 1;
            continue;
        }
        if r < config.len() {
            let e = &applied[r];
            out.push(merge(item_schema, live_item(e), &config[r]));
            done.push(e);
            r += 1;
            if next_shared == Some(e) {
                next_shared = shared.next();
            }
        }
    }
    out
}

/// Remove `path` from `object`; containers left empty by the removal go too, unless `keep`
/// (the fields someone still owns) touches them.
pub fn remove_path(root: Schema, object: &mut Value, path: &FieldPath, keep: &FieldSet) {
    let elements = path.elements();
    remove_at(root, object, elements);
    for depth in (1..elements.len()).rev() {
        let parent = FieldPath(elements[..depth].to_vec());
        if keep.touches(&parent) || !is_empty_at(root, object, parent.elements()) {
            break;
        }
        remove_at(root, object, parent.elements());
    }
}

/// The index of the item of `items` that `element` names.
fn find_item(list: Schema, items: &[Value], element: &PathElement) -> Option<usize> {
    items
        .iter()
        .enumerate()
        .position(|(i, item)| PathElement::for_item(list, item, i) == *element)
}

fn is_empty_at(schema: Schema, value: &Value, elements: &[PathElement]) -> bool {
    match (elements.split_first(), value) {
        (None, Value::Object(m)) => m.is_empty(),
        (None, Value::Array(a)) => a.is_empty(),
        (None, _) => false,
        (Some((PathElement::Field(name), rest)), Value::Object(map)) => map
            .get(name)
            .is_some_and(|child| is_empty_at(schema.field(name), child, rest)),
        (Some((element, rest)), Value::Array(items)) => find_item(schema, items, element)
            .is_some_and(|i| is_empty_at(schema.item(), &items[i], rest)),
        _ => false,
    }
}

/// Remove the value `elements` lead to from `value`, whose schema is `schema`.
fn remove_at(schema: Schema, value: &mut Value, elements: &[PathElement]) {
    let Some((first, rest)) = elements.split_first() else {
        return;
    };
    match (first, value) {
        (PathElement::Field(name), Value::Object(map)) => {
            if rest.is_empty() {
                map.shift_remove(name);
            } else if let Some(child) = map.get_mut(name) {
                remove_at(schema.field(name), child, rest);
            }
        }
        (element, Value::Array(items)) => {
            if let Some(i) = find_item(schema, items, element) {
                if rest.is_empty() {
                    items.remove(i);
                } else {
                    remove_at(schema.item(), &mut items[i], rest);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(names: &[&str]) -> Value {
        Value::Array(
            names
                .iter()
                .map(|n| json!({"name": n, "value": "1"}))
                .collect(),
        )
    }

    fn names(list: &Value) -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn list_merge_keeps_applied_order_and_live_only_items_in_place() {
        let schema = crate::schema::builtin_kind("Pod")
            .field("spec")
            .field("containers")
            .item()
            .field("env");
        let merged = merge(schema, Some(&env(&["a", "x", "b"])), &env(&["b", "a", "c"]));
        assert_eq!(names(&merged), ["x", "b", "a", "c"]);
        let merged = merge(schema, Some(&env(&["EXTRA"])), &env(&["MODE"]));
        assert_eq!(names(&merged), ["EXTRA", "MODE"]);
        let merged = merge(schema, Some(&env(&["a", "b"])), &env(&["a", "n", "b"]));
        assert_eq!(names(&merged), ["a", "n", "b"]);
    }

    #[test]
    fn merge_replaces_atomic_values_and_null_removes() {
        let spec = crate::schema::builtin_kind("Deployment").field("spec");
        let live = json!({"selector": {"matchLabels": {"a": "1", "b": "2"}}, "paused": true, "replicas": 1});
        let config = json!({"selector": {"matchLabels": {"a": "1"}}, "paused": null});
        assert_eq!(
            merge(spec, Some(&live), &config),
            json!({"selector": {"matchLabels": {"a": "1"}}, "replicas": 1})
        );
    }
}
