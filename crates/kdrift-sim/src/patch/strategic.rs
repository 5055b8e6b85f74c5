//! Strategic merge patch: maps merged, lists merged by their `patchMergeKey` (or as sets of
//! scalars) per [`crate::schema`], other lists replaced, `null` deletes, and the directives
//! `$patch`, `$retainKeys`, `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`.
use serde_json::{Map, Value};

use crate::schema::{Schema, SmpList};
use crate::store::ApiError;

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
            items.retain(|item| !values.contains(item));
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
            for value in patch {
                if !out.contains(value) {
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

fn merge_keyed(
    item_schema: Schema,
    key: &str,
    original: &[Value],
    patch: &[Value],
) -> Result<Vec<Value>, ApiError> {
    let mut result = original.to_vec();
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
        let position = result.iter().position(|o| o.get(key) == Some(wanted));
        if p.get(PATCH).and_then(Value::as_str) == Some("delete") {
            result.retain(|o| o.get(key) != Some(wanted));
            continue;
        }
        match position {
            Some(i) => {
                let base = result[i].as_object().cloned().unwrap_or_default();
                match merge_map(item_schema, base, p)? {
                    Some(merged) => result[i] = Value::Object(merged),
                    None => {
                        result.remove(i);
                    }
                }
            }
            None => {
                if let Some(added) = merge_map(item_schema, Map::new(), p)? {
                    result.push(Value::Object(added));
                }
            }
        }
    }
    Ok(result)
}

/// Order `items` as `$setElementOrder` lists them; items it does not list (the server's own)
/// stay after the item they followed.
fn reorder(schema: Schema, items: &mut Vec<Value>, order: &Value) -> Result<(), ApiError> {
    let Value::Array(order) = order else {
        return Err(ApiError::BadRequest(ERR_SET_ELEMENT_ORDER.into()));
    };
    let key = schema.smp_merge_key();
    let identity = |v: &Value| -> Option<Value> {
        match key {
            Some(k) => v.get(k).cloned(),
            None => Some(v.clone()),
        }
    };
    let mut wanted = Vec::new();
    for entry in order {
        match (key, entry) {
            (Some(_), Value::Object(_)) | (None, _) => wanted.push(identity(entry)),
            _ => return Err(ApiError::BadRequest(ERR_SET_ELEMENT_ORDER.into())),
        }
    }
    let rank = |v: &Value| wanted.iter().position(|w| w.is_some() && *w == identity(v));
    let original = std::mem::take(items);
    let mut listed: Vec<(usize, Value)> = Vec::new();
    let mut unlisted: Vec<(Option<Value>, Value)> = Vec::new();
    let mut previous: Option<Value> = None;
    for item in original {
        match rank(&item) {
            Some(r) => {
                previous = Some(item.clone());
                listed.push((r, item));
            }
            None => {
                unlisted.push((previous.clone(), item.clone()));
                previous = Some(item);
            }
        }
    }
    listed.sort_by_key(|(r, _)| *r);
    items.extend(listed.into_iter().map(|(_, v)| v));
    for (after, item) in unlisted {
        let at = after
            .and_then(|a| items.iter().position(|i| *i == a))
            .map_or(0, |p| p + 1);
        items.insert(at, item);
    }
    Ok(())
}
