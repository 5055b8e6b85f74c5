//! A manifest's list item whose key was changed live (a Service port's `port` 8080 → 8081, the
//! manifest leaving `protocol: TCP` out): the revert puts the manifest's item in the live item's
//! place with a guarded JSON patch before it applies, so that no object in between has both.
use serde_json::{Map, Value, json};

use super::plan::{live_pointer, same};
use crate::drift::owners::field_path;
use crate::drift::{Class, DriftPath, LiveObject, PathStep, compare};
use crate::manifest::{Config, ManifestObject};
use crate::schema::Schemas;

/// A manifest's list item whose key was changed live: the revert first puts the manifest's item
/// in the live item's place with a JSON patch, then applies. Applied first, the manifest's item would be added
/// beside the live one (another key): a Service with two ports of one name, which a server
/// refuses.
#[derive(Debug, Clone, PartialEq)]
pub struct Rekey {
    /// The manifest's item, as drift names it (`spec.ports[port=8080,protocol=TCP]`).
    pub path: DriftPath,
    /// The live item it replaces (`spec.ports[port=8081,protocol=TCP]`) and its value now.
    pub live_path: DriftPath,
    pub live: Value,
    /// What the live item becomes: the manifest's item with its key fields' defaults, and what
    /// no manager owns of the live item (a node port the server allocated).
    pub item: Value,
}

impl Rekey {
    /// `spec.ports[port=8081,protocol=TCP] → spec.ports[port=8080,protocol=TCP]`.
    pub fn label(&self) -> String {
        format!("{} → {}", self.live_path, self.path)
    }
}

/// The manifest's list items whose key was changed live in `object`, each with what replaces
/// the live item (see [`Rekey`]).
pub fn rekeys(
    manifest: &ManifestObject,
    object: &Value,
    config: &Config,
    schemas: &Schemas,
) -> Vec<Rekey> {
    let Ok(live) = LiveObject::from_value(object.clone(), schemas) else {
        return Vec::new();
    };
    let root = live.schema;
    compare(manifest, &live, config)
        .items
        .into_iter()
        .filter(|item| item.class == Class::Changed)
        .filter_map(|item| {
            let (Some(PathStep::Item { key, .. }), Some(Value::Object(wanted))) =
                (item.path.0.last(), &item.manifest)
            else {
                return None;
            };
            let parent = DriftPath(item.path.0[..item.path.0.len() - 1].to_vec());
            let list = field_path(&parent).schema(root);
            let live_key = list.item_key(item.live.as_ref()?)?;
            if live_key == *key {
                return None;
            }
            let live_path = parent.item(live_key, None);
            let pointer = live_pointer(object, &live_path)?;
            let now = object.pointer(&pointer)?.clone();
            let mut replacement = wanted.clone();
            for (name, value) in list.item_key(&Value::Object(wanted.clone()))? {
                replacement.entry(name).or_insert(value);
            }
            for (name, value) in now.as_object()? {
                let owned =
                    !crate::drift::owners::owners(root, &live.managers, &live_path.child(name))
                        .is_empty();
                if !owned && !replacement.contains_key(name) {
                    replacement.insert(name.clone(), value.clone());
                }
            }
            Some(Rekey {
                path: item.path,
                live_path,
                live: now,
                item: Value::Object(replacement),
            })
        })
        .collect()
}

/// The JSON patch putting each manifest item in its live item's place, each guarded by a
/// `test` of the live item; `None` when a live item is no longer as planned.
pub fn rekey_patch(object: &Value, rekeys: &[Rekey]) -> Option<Value> {
    let mut operations = Vec::with_capacity(rekeys.len() * 2);
    for rekey in rekeys {
        let pointer = live_pointer(object, &rekey.live_path)?;
        if object.pointer(&pointer) != Some(&rekey.live) {
            return None;
        }
        operations.push(json!({"op": "test", "path": pointer, "value": rekey.live}));
        operations.push(json!({"op": "replace", "path": pointer, "value": rekey.item}));
    }
    Some(Value::Array(operations))
}

/// `object` with each rekeyed live item replaced by the manifest's item as `replaced` (the
/// object after the first step) has it.
pub fn with_items_of(object: &Value, replaced: &Value, rekeys: &[Rekey]) -> Value {
    let mut out = object.clone();
    for rekey in rekeys {
        let item = live_pointer(replaced, &rekey.path).and_then(|p| replaced.pointer(&p));
        let place = live_pointer(&out, &rekey.live_path);
        if let (Some(item), Some(place)) = (item, place)
            && let Some(slot) = out.pointer_mut(&place)
        {
            *slot = item.clone();
        }
    }
    out
}

/// The apply configuration of a preview made before the rekeys are done: each rekeyed manifest
/// item keyed as its live item (so that the server's dry run merges it into that item and
/// refuses nothing), the rest as [`apply_config`] makes it.
pub fn rekeyed_config(config: &Value, rekeys: &[Rekey]) -> Value {
    let mut config = config.clone();
    for rekey in rekeys {
        let (Some(PathStep::Item { key, .. }), Some(PathStep::Item { key: live_key, .. })) =
            (rekey.path.0.last(), rekey.live_path.0.last())
        else {
            continue;
        };
        let Some(pointer) = manifest_pointer(&config, &rekey.path, key) else {
            continue;
        };
        if let Some(Value::Object(item)) = config.pointer_mut(&pointer) {
            for (name, value) in live_key {
                item.insert(name.clone(), value.clone());
            }
        }
    }
    config
}

/// The pointer of the manifest's item `path` (whose key is `key`, defaults filled in) in an
/// apply configuration, the item found by the key fields it has.
fn manifest_pointer(config: &Value, path: &DriftPath, key: &Map<String, Value>) -> Option<String> {
    let parent = DriftPath(path.0[..path.0.len().checked_sub(1)?].to_vec());
    let list_pointer = live_pointer(config, &parent)?;
    let Value::Array(items) = config.pointer(&list_pointer)? else {
        return None;
    };
    let at = items.iter().position(|item| {
        key.iter()
            .all(|(field, want)| item.get(field).is_none_or(|v| same(v, want)))
    })?;
    Some(format!("{list_pointer}/{at}"))
}
