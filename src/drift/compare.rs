//! The comparison of one manifest with its live object: a walk of the manifest's fields
//! (changed, removed live), then a walk of what out-of-band managers own (added live).
use serde_json::{Map, Value};

use crate::manifest::{Config, ManifestObject, ObjectKey};
use crate::schema::{self, ListType, Schema};

use super::live::{LiveObject, ManagerEntry};
use super::normalize::{is_empty, is_restart_annotation, never_drift, same_value};
use super::owners::{owners, parse_item_key};
use super::path::{DriftPath, PathStep};
use super::{
    AUTOSCALERS, Attribution, BUILTIN_APPLIERS, Class, DriftItem, ObjectDrift, ObjectStatus,
    SYSTEM_MANAGERS,
};

/// The drift of an object in git and in the cluster.
pub fn compare(manifest: &ManifestObject, live: &LiveObject, config: &Config) -> ObjectDrift {
    compare_values(&manifest.key, &manifest.body, live, config)
}

/// [`compare`] on a bare manifest value (tests, benches, callers without a file).
pub fn compare_values(
    key: &ObjectKey,
    manifest: &Value,
    live: &LiveObject,
    config: &Config,
) -> ObjectDrift {
    let mut walk = Walk {
        live,
        config,
        items: Vec::new(),
        path: DriftPath::default(),
    };
    let root = schema::root(&key.kind);
    walk.manifest_fields(manifest, Some(&live.body), root);
    for entry in &live.managers {
        if !walk.is_out_of_band(entry) {
            continue;
        }
        if let Some(fields) = entry.fields.as_object() {
            walk.added_fields(entry, fields, Some(manifest), &live.body, root);
        }
    }
    let mut items = walk.items;
    dedupe_added(&mut items);
    items.retain(|item| {
        !config
            .ignore
            .iter()
            .any(|rule| rule.selects(key) && rule.paths.iter().any(|p| item.path.is_under(p)))
    });
    let status = if items.iter().any(|item| item.class.is_drift()) {
        ObjectStatus::Drifted
    } else {
        ObjectStatus::InSync
    };
    ObjectDrift {
        key: key.clone(),
        status,
        items,
    }
}

/// An object in git that the cluster does not have.
pub fn missing(key: &ObjectKey) -> ObjectDrift {
    ObjectDrift {
        key: key.clone(),
        status: ObjectStatus::Missing,
        items: Vec::new(),
    }
}

/// An object in the cluster that no manifest describes.
pub fn unmanaged(key: &ObjectKey) -> ObjectDrift {
    ObjectDrift {
        key: key.clone(),
        status: ObjectStatus::Unmanaged,
        items: Vec::new(),
    }
}

/// Two managers may share an added field; keep the most recent writer only.
fn dedupe_added(items: &mut Vec<DriftItem>) {
    let mut at = 0;
    while at < items.len() {
        let duplicate = items[..at]
            .iter()
            .position(|seen| seen.path == items[at].path);
        match duplicate {
            Some(first) => {
                if items[at].attribution.time > items[first].attribution.time {
                    items.swap(first, at);
                }
                items.remove(at);
            }
            None => at += 1,
        }
    }
}

/// The index and value of the item of `list` with these key fields: by the schema's keys (with
/// defaults such as `protocol: TCP`), else by the key fields themselves.
fn find_by_key<'a>(
    schema: Schema,
    list: &'a [Value],
    key: &Map<String, Value>,
) -> Option<(usize, &'a Value)> {
    list.iter()
        .enumerate()
        .find(|(_, item)| match schema.item_key(item) {
            Some(item_key) => item_key == *key,
            None => key
                .iter()
                .all(|(name, value)| item.get(name) == Some(value)),
        })
}

struct Walk<'a> {
    live: &'a LiveObject,
    config: &'a Config,
    items: Vec<DriftItem>,
    /// The path being walked: steps pushed and popped, cloned only into items.
    path: DriftPath,
}

impl Walk<'_> {
    fn is_applier(&self, manager: &str) -> bool {
        BUILTIN_APPLIERS.contains(&manager) || self.config.appliers.iter().any(|a| a == manager)
    }

    /// An `Update` by a manager that neither applies manifests nor runs the control plane.
    fn is_out_of_band(&self, entry: &ManagerEntry) -> bool {
        entry.operation == "Update"
            && !self.is_applier(&entry.manager)
            && !SYSTEM_MANAGERS.contains(&entry.manager.as_str())
    }

    fn push(
        &mut self,
        class: Class,
        manifest: Option<&Value>,
        live: Option<&Value>,
        attribution: Attribution,
    ) {
        self.items.push(DriftItem {
            class,
            path: self.path.clone(),
            manifest: manifest.cloned(),
            live: live.cloned(),
            attribution,
        });
    }

    /// A field the manifest sets differs live: who wrote it? An out-of-band manager if one owns
    /// it; the autoscaler for `spec.replicas`; else unknown (the applier still owns it: old
    /// servers do not record scale writes) — shown, never hidden.
    fn changed(&mut self, manifest: &Value, live: &Value) {
        let owners = owners(self.live, &self.path);
        let out_of_band = owners.iter().find(|o| self.is_out_of_band(o));
        let autoscaler = owners
            .iter()
            .find(|o| AUTOSCALERS.contains(&o.manager.as_str()) && o.operation == "Update");
        let (class, attribution) = match (out_of_band, autoscaler) {
            (Some(entry), _) => (Class::Changed, Attribution::of(entry)),
            (None, Some(entry)) if self.path.is_fields(&["spec", "replicas"]) => {
                (Class::Autoscaled, Attribution::of(entry))
            }
            (None, _) => match owners
                .iter()
                .find(|o| SYSTEM_MANAGERS.contains(&o.manager.as_str()))
            {
                Some(entry) => (Class::Changed, Attribution::of(entry)),
                None => (Class::Changed, Attribution::default()),
            },
        };
        self.push(class, Some(manifest), Some(live), attribution);
    }

    /// Changed and removed-live fields: every field the manifest sets, compared by meaning.
    fn manifest_fields(&mut self, manifest: &Value, live: Option<&Value>, schema: Schema) {
        match (manifest, live) {
            (Value::Null, _) => {}
            (_, None | Some(Value::Null)) => {
                if !is_empty(manifest) {
                    self.push(
                        Class::RemovedLive,
                        Some(manifest),
                        None,
                        Attribution::default(),
                    );
                }
            }
            (Value::Object(fields), Some(Value::Object(live_fields))) if !schema.is_atomic() => {
                for (name, value) in fields {
                    if never_drift(&self.path, name) {
                        continue;
                    }
                    self.path.0.push(PathStep::Field(name.clone()));
                    self.manifest_fields(value, live_fields.get(name), schema.field(name));
                    self.path.0.pop();
                }
            }
            (Value::Array(items), Some(Value::Array(live_items)))
                if schema.list_type() == ListType::Map =>
            {
                let item_schema = schema.item();
                for (index, item) in items.iter().enumerate() {
                    // An item without its key fields is invalid for the server; compare by position.
                    let (key, live_item) = match schema.item_key(item) {
                        Some(key) => {
                            let found = find_by_key(schema, live_items, &key).map(|(_, v)| v);
                            (key, found)
                        }
                        None => (Map::new(), live_items.get(index)),
                    };
                    self.path.0.push(PathStep::Item {
                        key,
                        index: Some(index),
                    });
                    self.manifest_fields(item, live_item, item_schema);
                    self.path.0.pop();
                }
            }
            (Value::Array(values), Some(Value::Array(live_values)))
                if schema.list_type() == ListType::Set =>
            {
                for value in values.iter().filter(|v| !live_values.contains(v)) {
                    self.path.0.push(PathStep::Value(value.clone()));
                    self.push(
                        Class::RemovedLive,
                        Some(value),
                        None,
                        Attribution::default(),
                    );
                    self.path.0.pop();
                }
            }
            (_, Some(live)) => {
                if !same_value(&self.path, manifest, live) {
                    self.changed(manifest, live);
                }
            }
        }
    }

    /// A field absent from the manifest, set live by `entry` (an out-of-band manager).
    fn added(&mut self, entry: &ManagerEntry, live: &Value) {
        let class = if is_restart_annotation(&self.path) {
            Class::Restarted
        } else {
            Class::AddedLive
        };
        self.push(class, None, Some(live), Attribution::of(entry));
    }

    /// Added-live fields: what `entry` owns (its `fieldsV1` node `fields`) that the manifest
    /// (`manifest`, at the same place) does not set.
    fn added_fields(
        &mut self,
        entry: &ManagerEntry,
        fields: &Map<String, Value>,
        manifest: Option<&Value>,
        live: &Value,
        schema: Schema,
    ) {
        for (owned, below) in fields {
            if let Some(name) = owned.strip_prefix("f:") {
                if never_drift(&self.path, name) {
                    continue;
                }
                let Some(live_value) = live.get(name).filter(|v| !v.is_null()) else {
                    continue;
                };
                let manifest_value = manifest.and_then(|m| m.get(name)).filter(|v| !v.is_null());
                self.path.0.push(PathStep::Field(name.to_owned()));
                match (manifest_value, below.as_object()) {
                    // Into maps and lists to what the manager set (`limits.memory`, each env entry),
                    // so that it reads as `kubectl set` was typed; atomic values whole.
                    (None, Some(below))
                        if below.keys().any(|k| k != ".")
                            && !schema.field(name).is_atomic_for(live_value) =>
                    {
                        self.added_fields(entry, below, None, live_value, schema.field(name));
                    }
                    (None, _) => self.added(entry, live_value),
                    (Some(value), Some(below)) if !below.is_empty() => {
                        self.added_fields(
                            entry,
                            below,
                            Some(value),
                            live_value,
                            schema.field(name),
                        );
                    }
                    _ => {}
                }
                self.path.0.pop();
            } else if let Some(key) = parse_item_key(owned) {
                let Some(live_items) = live.as_array() else {
                    continue;
                };
                let Some((_, live_item)) = find_by_key(schema, live_items, &key) else {
                    continue;
                };
                let manifest_items = manifest
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                let manifest_item = find_by_key(schema, manifest_items, &key);
                self.path.0.push(PathStep::Item {
                    key,
                    index: manifest_item.map(|(i, _)| i),
                });
                match (manifest_item, below.as_object()) {
                    (None, _) => self.added(entry, live_item),
                    (Some((_, item)), Some(below)) => {
                        self.added_fields(entry, below, Some(item), live_item, schema.item())
                    }
                    _ => {}
                }
                self.path.0.pop();
            } else if let Some(text) = owned.strip_prefix("v:") {
                let Ok(value) = serde_json::from_str::<Value>(text) else {
                    continue;
                };
                let in_live = live.as_array().is_some_and(|l| l.contains(&value));
                let in_manifest = manifest
                    .and_then(Value::as_array)
                    .is_some_and(|m| m.contains(&value));
                if in_live && !in_manifest {
                    self.path.0.push(PathStep::Value(value.clone()));
                    self.added(entry, &value);
                    self.path.0.pop();
                }
            }
        }
    }
}
