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

fn merge_lists(schema: Schema, live: &[Value], config: &[Value]) -> Vec<Value> {
    let element = |v: &Value, i: usize| PathElement::for_item(schema, v, i);
    let live_elements: Vec<PathElement> = live
        .iter()
        .enumerate()
        .map(|(i, v)| element(v, i))
        .collect();
    let config_elements: Vec<PathElement> = config
        .iter()
        .enumerate()
        .map(|(i, v)| element(v, i))
        .collect();
    let live_item = |e: &PathElement| live_elements.iter().position(|l| l == e).map(|i| &live[i]);
    let item_schema = schema.item();
    let mut out = Vec::with_capacity(live.len().max(config.len()));
    let mut emitted: Vec<&PathElement> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < live.len() || j < config.len() {
        if i < live.len() && emitted.contains(&&live_elements[i]) {
            i += 1;
            continue;
        }
        let take_live =
            i < live.len() && (j >= config.len() || !config_elements.contains(&live_elements[i]));
        if take_live {
            out.push(live[i].clone());
            emitted.push(&live_elements[i]);
            i += 1;
        } else {
            let e = &config_elements[j];
            out.push(merge(item_schema, live_item(e), &config[j]));
            emitted.push(e);
            if i < live.len() && live_elements[i] == *e {
                i += 1;
            }
            j += 1;
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
