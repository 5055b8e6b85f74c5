//! What the edited document must say: the edits applied to the parsed original object. The text
//! edit is checked against this before anything is written.
use serde_json::Value;

use super::FieldEdit;
use super::path::{self, PathStep};

/// `original` with `edits` applied in order.
pub fn apply(original: &Value, edits: &[FieldEdit]) -> Value {
    let mut object = original.clone();
    for edit in edits {
        match edit {
            FieldEdit::Set { path, value } => set(&mut object, path.steps(), value),
            FieldEdit::Remove { path } => {
                remove(&mut object, path.steps(), true);
            }
            FieldEdit::InsertItem { path, value, after } => {
                insert_item(&mut object, path.steps(), value, after)
            }
            FieldEdit::Reorder { path, order } => {
                if let Some(Value::Array(list)) = path::lookup_mut(&mut object, path.steps()) {
                    reorder(list, order);
                }
            }
        }
    }
    object
}

/// Puts the items of `list` that `order` names in that relative order: each takes one of the
/// places those items had, and every other item stays where it is.
pub fn reorder(list: &mut [Value], order: &[PathStep]) {
    let wanted: Vec<usize> = order
        .iter()
        .filter_map(|step| path::position(list, step))
        .collect();
    let mut slots = wanted.clone();
    slots.sort_unstable();
    slots.dedup();
    if slots.len() != wanted.len() {
        return;
    }
    let moved: Vec<Value> = wanted.iter().map(|&at| list[at].clone()).collect();
    for (slot, item) in slots.into_iter().zip(moved) {
        list[slot] = item;
    }
}

/// Where a new item goes: after the first of `after` (the items before it live, nearest first)
/// that `list` has, else first.
pub fn insert_position(list: &[Value], after: &[PathStep]) -> usize {
    after
        .iter()
        .find_map(|step| path::position(list, step))
        .map_or(0, |at| at + 1)
}

/// Sets `steps` to `value`, making missing parents; a value that is not a map or list where a
/// key or item must go is replaced by one.
pub fn set(root: &mut Value, steps: &[PathStep], value: &Value) {
    let Some((first, rest)) = steps.split_first() else {
        *root = value.clone();
        return;
    };
    match (root, first) {
        (Value::Object(map), PathStep::Key(name)) => match map.get_mut(name) {
            Some(child) => set(child, rest, value),
            None => {
                map.insert(name.clone(), path::build(rest, value));
            }
        },
        (Value::Array(list), step) if !matches!(step, PathStep::Key(_)) => {
            match path::position(list, step) {
                Some(at) => {
                    if let Some(child) = list.get_mut(at) {
                        set(child, rest, value);
                    }
                }
                None => list.push(path::new_item(step, rest, value)),
            }
        }
        (other, _) => *other = path::build(steps, value),
    }
}

/// Inserts the list item `steps` addresses at its live place (see [`insert_position`]); as
/// [`set`] when the list is not there or already has the item.
pub fn insert_item(root: &mut Value, steps: &[PathStep], value: &Value, after: &[PathStep]) {
    if let Some((last, parent)) = steps.split_last()
        && let Some(Value::Array(list)) = path::lookup_mut(root, parent)
        && path::position(list, last).is_none()
    {
        let at = insert_position(list, after);
        list.insert(at, path::new_item(last, &[], value));
        return;
    }
    set(root, steps, value);
}

/// Removes what `steps` address, if present. With `prune`, a map or list the removal leaves
/// empty goes too (the live object has no empty `limits: {}` either), up to the top-level field.
pub fn remove(root: &mut Value, steps: &[PathStep], prune: bool) -> bool {
    let Some((last, parent_steps)) = steps.split_last() else {
        return false;
    };
    let Some(parent) = parent_steps
        .iter()
        .try_fold(&mut *root, |value, step| path::child_mut(value, step))
    else {
        return false;
    };
    let removed = match (parent, last) {
        (Value::Object(map), PathStep::Key(name)) => map.shift_remove(name).is_some(),
        (Value::Array(list), step) => match path::position(list, step) {
            Some(at) => {
                list.remove(at);
                true
            }
            None => false,
        },
        _ => false,
    };
    if removed && prune && should_prune(root, parent_steps) {
        remove(root, parent_steps, true);
    }
    removed
}

/// A map or list left empty is removed when it is the value of a key below the top level.
pub fn should_prune(root: &Value, parent_steps: &[PathStep]) -> bool {
    parent_steps.len() >= 2
        && matches!(parent_steps.last(), Some(PathStep::Key(_)))
        && path::lookup(root, parent_steps).is_some_and(|value| match value {
            Value::Object(map) => map.is_empty(),
            Value::Array(list) => list.is_empty(),
            _ => false,
        })
}

/// A readable location of the first difference between two values (`spec.replicas`), for errors.
pub fn first_difference(want: &Value, have: &Value) -> String {
    fn walk(want: &Value, have: &Value, at: &mut Vec<String>) -> bool {
        match (want, have) {
            (Value::Object(a), Value::Object(b)) => {
                for (key, value) in a {
                    at.push(key.clone());
                    match b.get(key) {
                        Some(other) if walk(value, other, at) => return true,
                        None => return true,
                        Some(_) => {}
                    }
                    at.pop();
                }
                if let Some(extra) = b.keys().find(|key| !a.contains_key(*key)) {
                    at.push(extra.clone());
                    return true;
                }
                false
            }
            (Value::Array(a), Value::Array(b)) => {
                for (index, (x, y)) in a.iter().zip(b).enumerate() {
                    at.push(format!("[{index}]"));
                    if walk(x, y, at) {
                        return true;
                    }
                    at.pop();
                }
                a.len() != b.len()
            }
            (a, b) => a != b,
        }
    }
    let mut at = Vec::new();
    walk(want, have, &mut at);
    if at.is_empty() {
        "the document root".to_owned()
    } else {
        at.join(".")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::edit::FieldPath;
    use serde_json::json;

    #[test]
    fn removing_the_last_limit_removes_the_empty_parents() {
        let object =
            json!({"spec": {"c": [{"name": "web", "resources": {"limits": {"memory": "1Gi"}}}]}});
        let path = FieldPath::keys(&["spec", "c"])
            .item("name", "web")
            .key("resources")
            .key("limits")
            .key("memory");
        let edited = apply(&object, &[FieldEdit::Remove { path }]);
        assert_eq!(edited, json!({"spec": {"c": [{"name": "web"}]}}));
    }

    #[test]
    fn setting_under_a_missing_item_appends_it_with_its_key() {
        let object = json!({"env": [{"name": "A", "value": "1"}]});
        let path = FieldPath::keys(&["env"]).item("name", "B").key("value");
        let edited = apply(
            &object,
            &[FieldEdit::Set {
                path,
                value: json!("2"),
            }],
        );
        assert_eq!(
            edited,
            json!({"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]})
        );
    }
}
