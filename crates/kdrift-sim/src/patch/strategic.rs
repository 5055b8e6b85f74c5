//! Strategic merge patch: maps merged, lists merged by their `patchMergeKey` (or as sets of
//! scalars) per [`crate::schema`], other lists replaced, `null` deletes, and the directives
//! `$patch`, `$retainKeys`, `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`.
use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::schema::{Schema, SmpList};

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

// The server's error texts (k8s.io/apimachinery/pkg/util/mergepatch).
const ERR_BAD_JSON_DOC: &str = "invalid JSON document";
const ERR_NO_LIST_OF_LISTS: &str = "lists of lists are not supported";
const ERR_PRIMITIVE_LIST: &str = "invalid patch format of primitive list";
const ERR_RETAIN_KEYS: &str = "invalid patch format of retainKeys";
const ERR_SET_ELEMENT_ORDER: &str = "invalid patch format of setElementOrder list";
const ERR_NOT_MATCH_RETAIN_KEYS: &str = "patch content doesn't match retainKeys list";

/// Apply a strategic merge `patch` to `target`, an object of the kind whose schema is `schema`.
pub fn apply(schema: Schema, target: &Value, patch: &Value) -> Result<Value, ApiError> {
    let Value::Object(patch) = patch else {
        return Err(ApiError::BadRequest(ERR_BAD_JSON_DOC.into()));
    };
    let original = target.as_object().cloned().unwrap_or_default();
    Ok(Value::Object(
        merge_map(schema, original, patch)?.unwrap_or_default(),
    ))
}

/// Merge `patch` into `original`; `None` when the patch deletes the map (`$patch: delete`).
fn merge_map(
    schema: Schema,
    mut original: Map<String, Value>,
    patch: &Map<String, Value>,
) -> Result<Option<Map<String, Value>>, ApiError> {
    match patch.get(PATCH) {
        None => {}
        Some(Value::String(d)) if d == "merge" => {}
        Some(Value::String(d)) if d == "delete" => return Ok(None),
        Some(Value::String(d)) if d == "replace" => {
            let mut rest = patch.clone();
            rest.shift_remove(PATCH);
            return merge_map(schema, Map::new(), &rest);
        }
        Some(other) => {
            return Err(ApiError::BadRequest(format!(
                "unknown patch type: {} in map: {}",
                other.as_str().unwrap_or(&other.to_string()),
                Value::Object(patch.clone())
            )));
        }
    }
    let retain = retain_keys(patch)?;
    for (key, value) in patch {
        let Some(list) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) else {
            continue;
        };
        let Value::Array(values) = value else {
            return Err(ApiError::BadRequest(ERR_PRIMITIVE_LIST.into()));
        };
        if let Some(Value::Array(items)) = original.get_mut(list) {
            let deleted: HashSet<String> = values.iter().map(identity).collect();
            items.retain(|item| !deleted.contains(&identity(item)));
        }
    }
    for (key, value) in patch {
        if key.starts_with('$') {
            continue;
        }
        if value.is_null() {
            original.shift_remove(key);
            continue;
        }
        let order = patch.get(&format!("{SET_ELEMENT_ORDER}{key}"));
        match merge_value(schema.field(key), original.get(key), value, order)? {
            Some(merged) => original.insert(key.clone(), merged),
            None => original.shift_remove(key),
        };
    }
    // A `$setElementOrder` without the list itself only reorders what the server has.
    for (key, order) in patch {
        if let Some(list) = key.strip_prefix(SET_ELEMENT_ORDER)
            && !patch.contains_key(list)
            && let Some(Value::Array(items)) = original.get_mut(list)
        {
            reorder(schema.field(list), items, order)?;
        }
    }
    if let Some(retain) = retain {
        original.retain(|key, _| retain.contains(key));
    }
    Ok(Some(original))
}

/// The `$retainKeys` list of a patch map, checked against the patch's own keys.
fn retain_keys(patch: &Map<String, Value>) -> Result<Option<Vec<String>>, ApiError> {
    let Some(keys) = patch.get(RETAIN_KEYS) else {
        return Ok(None);
    };
    let keys: Vec<String> = match keys {
        Value::Array(items) => items
            .iter()
            .map(|k| k.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| ApiError::BadRequest(ERR_RETAIN_KEYS.into()))?,
        _ => return Err(ApiError::BadRequest(ERR_RETAIN_KEYS.into())),
    };
    // Deletions (`null`) of keys left out of the list are what a switch of source sends.
    if patch
        .iter()
        .any(|(k, v)| !k.starts_with('$') && !v.is_null() && !keys.contains(k))
    {
        return Err(ApiError::Invalid(ERR_NOT_MATCH_RETAIN_KEYS.into()));
    }
    Ok(Some(keys))
}

/// Merge one patch value into the original value of a field; `None` deletes the field.
fn merge_value(
    schema: Schema,
    original: Option<&Value>,
    patch: &Value,
    order: Option<&Value>,
) -> Result<Option<Value>, ApiError> {
    match patch {
        Value::Object(p) => {
            let base = original
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            Ok(merge_map(schema, base, p)?.map(Value::Object))
        }
        Value::Array(p) => {
            if p.iter().any(Value::is_array) {
                return Err(ApiError::Invalid(ERR_NO_LIST_OF_LISTS.into()));
            }
            let base = original
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            Ok(Some(Value::Array(merge_list(schema, base, p, order)?)))
        }
        scalar => Ok(Some(scalar.clone())),
    }
}

/// Whether a list item is the `{"$patch": "replace"}` directive.
fn is_replace_directive(item: &Value) -> bool {
    item.get(PATCH).and_then(Value::as_str) == Some("replace")
}

fn merge_list(
    schema: Schema,
    original: &[Value],
    patch: &[Value],
    order: Option<&Value>,
) -> Result<Vec<Value>, ApiError> {
    let item_schema = schema.item();
    let replace = patch.iter().any(is_replace_directive);
    let mut result = match schema.smp_list() {
        SmpList::Replace => clean_items(item_schema, patch)?,
        _ if replace => {
            let rest: Vec<Value> = patch
                .iter()
                .filter(|i| !is_replace_directive(i))
                .cloned()
                .collect();
            clean_items(item_schema, &rest)?
        }
        SmpList::MergePrimitives => {
            let mut out = original.to_vec();
            let mut present: HashSet<String> = original.iter().map(identity).collect();
            for value in patch {
                if present.insert(identity(value)) {
                    out.push(value.clone());
                }
            }
            out
        }
        SmpList::MergeByKey(key) => merge_keyed(item_schema, key, original, patch)?,
    };
    if let Some(order) = order {
        reorder(schema, &mut result, order)?;
    }
    Ok(result)
}

/// Items of a replaced list, with directives and `null` fields of their maps resolved.
fn clean_items(item_schema: Schema, items: &[Value]) -> Result<Vec<Value>, ApiError> {
    let mut out = Vec::new();
    for item in items {
        match item {
            Value::Object(m) => {
                if let Some(m) = merge_map(item_schema, Map::new(), m)? {
                    out.push(Value::Object(m));
                }
            }
            other => out.push(other.clone()),
        }
    }
    Ok(out)
}

/// A value as a map key (a JSON `Value` is not `Hash`): equal values, equal texts. Lists of
/// thousands of items are merged and ordered through maps of these, not by searching the list
/// for each patch item.
fn identity(value: &Value) -> String {
    value.to_string()
}

fn merge_keyed(
    item_schema: Schema,
    key: &str,
    original: &[Value],
    patch: &[Value],
) -> Result<Vec<Value>, ApiError> {
    // The items, a removed one left as `None`, and where the items of each key value are.
    let mut result: Vec<Option<Value>> = original.iter().cloned().map(Some).collect();
    let mut positions: HashMap<String, Vec<usize>> = HashMap::new();
    for (at, item) in original.iter().enumerate() {
        if let Some(value) = item.get(key) {
            positions.entry(identity(value)).or_default().push(at);
        }
    }
    for item in patch {
        let Value::Object(p) = item else {
            return Err(ApiError::BadRequest(format!(
                "map: {item} does not contain declared merge key: {key}"
            )));
        };
        let Some(wanted) = p.get(key) else {
            return Err(ApiError::BadRequest(format!(
                "map: {item} does not contain declared merge key: {key}"
            )));
        };
        let id = identity(wanted);
        if p.get(PATCH).and_then(Value::as_str) == Some("delete") {
            for at in positions.remove(&id).unwrap_or_default() {
                result[at] = None;
            }
            continue;
        }
        let first = positions.get(&id).and_then(|list| list.first().copied());
        match first {
            Some(at) => {
                let base = result[at]
                    .as_ref()
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                match merge_map(item_schema, base, p)? {
                    Some(merged) => result[at] = Some(Value::Object(merged)),
                    None => {
                        result[at] = None;
                        if let Some(list) = positions.get_mut(&id) {
                            list.remove(0);
                        }
                    }
                }
            }
            None => {
                if let Some(added) = merge_map(item_schema, Map::new(), p)? {
                    positions.entry(id).or_default().push(result.len());
                    result.push(Some(Value::Object(added)));
                }
            }
        }
    }
    Ok(result.into_iter().flatten().collect())
}

/// Order `items` as `$setElementOrder` lists them; items it does not list (the server's own)
/// stay after the item they followed.
fn reorder(schema: Schema, items: &mut Vec<Value>, order: &Value) -> Result<(), ApiError> {
    let Value::Array(order) = order else {
        return Err(ApiError::BadRequest(ERR_SET_ELEMENT_ORDER.into()));
    };
    let key = schema.smp_merge_key();
    let identity_of = |v: &Value| -> Option<Value> {
        match key {
            Some(k) => v.get(k).cloned(),
            None => Some(v.clone()),
        }
    };
    let mut wanted = Vec::new();
    for entry in order {
        match (key, entry) {
            (Some(_), Value::Object(_)) | (None, _) => wanted.push(identity_of(entry)),
            _ => return Err(ApiError::BadRequest(ERR_SET_ELEMENT_ORDER.into())),
        }
    }
    let mut ranks: HashMap<String, usize> = HashMap::new();
    for (r, entry) in wanted.iter().enumerate() {
        if let Some(entry) = entry {
            ranks.entry(identity(entry)).or_insert(r);
        }
    }
    let rank = |v: &Value| identity_of(v).and_then(|id| ranks.get(&identity(&id)).copied());
    // Items it does not list stay right after the listed item they followed (at the start
    // before the first listed one), in their order.
    let mut leading = Vec::new();
    let mut listed: Vec<(usize, Value, Vec<Value>)> = Vec::new();
    for item in std::mem::take(items) {
        match rank(&item) {
            Some(r) => listed.push((r, item, Vec::new())),
            None => match listed.last_mut() {
                Some((_, _, run)) => run.push(item),
                None => leading.push(item),
            },
        }
    }
    listed.sort_by_key(|(r, ..)| *r);
    items.extend(leading);
    for (_, item, run) in listed {
        items.push(item);
        items.extend(run);
    }
    Ok(())
}
