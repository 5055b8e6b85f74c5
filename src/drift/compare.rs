//! The comparison of one manifest with its live object: a walk of the manifest's fields
//! (changed, removed live), then a walk of what out-of-band managers own (added live).
use serde_json::{Map, Value};

use crate::manifest::{Config, ManifestObject, ObjectKey};
use crate::schema::{self, ListType, Schema};

use super::live::{LiveObject, ManagerEntry};
use super::normalize::{Place, is_empty, is_restart_annotation, never_drift, same_value};
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
        stack: Vec::new(),
        place: Place::default(),
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

/// The value of key field `name` of a list item, with the server's default when absent.
fn key_field<'v>(
    item: &'v Value,
    name: &str,
    default: Option<&'static str>,
) -> Option<KeyValue<'v>> {
    match item.get(name).filter(|v| !v.is_null()) {
        Some(value) => Some(KeyValue::Value(value)),
        None => default.map(KeyValue::Default),
    }
}

#[derive(PartialEq)]
enum KeyValue<'v> {
    Value(&'v Value),
    Default(&'static str),
}

impl KeyValue<'_> {
    fn same(&self, other: &KeyValue<'_>) -> bool {
        match (self, other) {
            (KeyValue::Value(a), KeyValue::Value(b)) => a == b,
            (KeyValue::Value(v), KeyValue::Default(d))
            | (KeyValue::Default(d), KeyValue::Value(v)) => v.as_str() == Some(d),
            (KeyValue::Default(a), KeyValue::Default(b)) => a == b,
        }
    }
}

/// True when two items of a keyed list have the same key (defaults such as `protocol: TCP`
/// filled in), without building the key.
fn same_key(schema: Schema, a: &Value, b: &Value) -> bool {
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

/// True when `item` has the key fields of a `k:{...}` entry of `fieldsV1`.
fn has_key(schema: Schema, item: &Value, key: &Map<String, Value>) -> bool {
    let keys = schema.list_keys();
    if keys.is_empty() {
        return !key.is_empty()
            && key
                .iter()
                .all(|(name, value)| item.get(name) == Some(value));
    }
    keys.iter().all(
        |k| match (key_field(item, k.name, k.default), key.get(k.name)) {
            (Some(x), Some(y)) => x.same(&KeyValue::Value(y)),
            _ => false,
        },
    )
}

/// A step of the path being walked, borrowed from the values walked; made into a
/// [`PathStep`] only when an item is reported.
enum Step<'a> {
    Field(&'a str),
    /// An item of a keyed list, its key read from `item` when needed.
    Item {
        item: &'a Value,
        schema: Schema,
        index: Option<usize>,
    },
    /// An item named by a `k:{...}` entry of `fieldsV1`.
    Key {
        key: Map<String, Value>,
        index: Option<usize>,
    },
    Value(&'a Value),
}

struct Walk<'a> {
    live: &'a LiveObject,
    config: &'a Config,
    items: Vec<DriftItem>,
    stack: Vec<Step<'a>>,
    place: Place<'a>,
}

impl<'a> Walk<'a> {
    fn is_applier(&self, manager: &str) -> bool {
        BUILTIN_APPLIERS.contains(&manager) || self.config.appliers.iter().any(|a| a == manager)
    }

    /// An `Update` by a manager that neither applies manifests nor runs the control plane.
    fn is_out_of_band(&self, entry: &ManagerEntry) -> bool {
        entry.operation == "Update"
            && !self.is_applier(&entry.manager)
            && !SYSTEM_MANAGERS.contains(&entry.manager.as_str())
    }

    fn path(&self) -> DriftPath {
        DriftPath(
            self.stack
                .iter()
                .map(|step| match step {
                    Step::Field(name) => PathStep::Field((*name).to_owned()),
                    Step::Item {
                        item,
                        schema,
                        index,
                    } => PathStep::Item {
                        key: schema.item_key(item).unwrap_or_default(),
                        index: *index,
                    },
                    Step::Key { key, index } => PathStep::Item {
                        key: key.clone(),
                        index: *index,
                    },
                    Step::Value(value) => PathStep::Value((*value).clone()),
                })
                .collect(),
        )
    }

    fn enter_field(&mut self, name: &'a str) -> Place<'a> {
        self.stack.push(Step::Field(name));
        let inner = self.place.child(name);
        std::mem::replace(&mut self.place, inner)
    }

    fn enter(&mut self, step: Step<'a>) -> Place<'a> {
        self.stack.push(step);
        let inner = self.place.item();
        std::mem::replace(&mut self.place, inner)
    }

    fn leave(&mut self, place: Place<'a>) {
        self.stack.pop();
        self.place = place;
    }

    fn push(
        &mut self,
        class: Class,
        path: DriftPath,
        manifest: Option<&Value>,
        live: Option<&Value>,
        attribution: Attribution,
    ) {
        self.items.push(DriftItem {
            class,
            path,
            manifest: manifest.cloned(),
            live: live.cloned(),
            attribution,
        });
    }

    /// A field the manifest sets differs live: who wrote it? An out-of-band manager if one owns
    /// it; the autoscaler for `spec.replicas`; else unknown (the applier still owns it: old
    /// servers do not record scale writes) — shown, never hidden.
    fn changed(&mut self, manifest: &Value, live: &Value) {
        let path = self.path();
        let owners = owners(self.live, &path);
        let out_of_band = owners.iter().find(|o| self.is_out_of_band(o));
        let autoscaler = owners
            .iter()
            .find(|o| AUTOSCALERS.contains(&o.manager.as_str()) && o.operation == "Update");
        let (class, attribution) = match (out_of_band, autoscaler) {
            (Some(entry), _) => (Class::Changed, Attribution::of(entry)),
            (None, Some(entry)) if path.is_fields(&["spec", "replicas"]) => {
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
        self.push(class, path, Some(manifest), Some(live), attribution);
    }

    /// Changed and removed-live fields: every field the manifest sets, compared by meaning.
    fn manifest_fields(&mut self, manifest: &'a Value, live: Option<&'a Value>, schema: Schema) {
        match (manifest, live) {
            (Value::Null, _) => {}
            (_, None | Some(Value::Null)) => {
                if !is_empty(manifest) {
                    let path = self.path();
                    self.push(
                        Class::RemovedLive,
                        path,
                        Some(manifest),
                        None,
                        Attribution::default(),
                    );
                }
            }
            (Value::Object(fields), Some(Value::Object(live_fields))) if !schema.is_atomic() => {
                for (name, value) in fields {
                    if never_drift(self.place, name) {
                        continue;
                    }
                    let outer = self.enter_field(name);
                    self.manifest_fields(value, live_fields.get(name), schema.field(name));
                    self.leave(outer);
                }
            }
            (Value::Array(items), Some(Value::Array(live_items)))
                if schema.list_type() == ListType::Map =>
            {
                let item_schema = schema.item();
                for (index, item) in items.iter().enumerate() {
                    // An item without its key fields is invalid for the server; compare by position.
                    let live_item = if schema.item_key(item).is_some() {
                        live_items.iter().find(|l| same_key(schema, item, l))
                    } else {
                        live_items.get(index)
                    };
                    let outer = self.enter(Step::Item {
                        item,
                        schema,
                        index: Some(index),
                    });
                    self.manifest_fields(item, live_item, item_schema);
                    self.leave(outer);
                }
            }
            (Value::Array(values), Some(Value::Array(live_values)))
                if schema.list_type() == ListType::Set =>
            {
                for value in values.iter().filter(|v| !live_values.contains(v)) {
                    let outer = self.enter(Step::Value(value));
                    let path = self.path();
                    self.push(
                        Class::RemovedLive,
                        path,
                        Some(value),
                        None,
                        Attribution::default(),
                    );
                    self.leave(outer);
                }
            }
            (_, Some(live)) => {
                if !same_value(self.place, manifest, live) {
                    self.changed(manifest, live);
                }
            }
        }
    }

    /// A field absent from the manifest, set live by `entry` (an out-of-band manager).
    fn added(&mut self, entry: &ManagerEntry, live: &Value) {
        let class = if is_restart_annotation(self.place) {
            Class::Restarted
        } else {
            Class::AddedLive
        };
        let path = self.path();
        self.push(class, path, None, Some(live), Attribution::of(entry));
    }

    /// Added-live fields: what `entry` owns (its `fieldsV1` node `fields`) that the manifest
    /// (`manifest`, at the same place) does not set.
    fn added_fields(
        &mut self,
        entry: &'a ManagerEntry,
        fields: &'a Map<String, Value>,
        manifest: Option<&'a Value>,
        live: &'a Value,
        schema: Schema,
    ) {
        for (owned, below) in fields {
            if let Some(name) = owned.strip_prefix("f:") {
                if never_drift(self.place, name) {
                    continue;
                }
                let Some(live_value) = live.get(name).filter(|v| !v.is_null()) else {
                    continue;
                };
                let manifest_value = manifest.and_then(|m| m.get(name)).filter(|v| !v.is_null());
                let field_schema = schema.field(name);
                let outer = self.enter_field(name);
                match (manifest_value, below.as_object()) {
                    // Into maps and lists to what the manager set (`limits.memory`, each env entry),
                    // so that it reads as `kubectl set` was typed; atomic values whole.
                    (None, Some(below))
                        if below.keys().any(|k| k != ".")
                            && !field_schema.is_atomic_for(live_value) =>
                    {
                        self.added_fields(entry, below, None, live_value, field_schema);
                    }
                    (None, _) => self.added(entry, live_value),
                    (Some(value), Some(below)) if !below.is_empty() => {
                        self.added_fields(entry, below, Some(value), live_value, field_schema);
                    }
                    _ => {}
                }
                self.leave(outer);
            } else if let Some(key) = parse_item_key(owned) {
                let Some(live_items) = live.as_array() else {
                    continue;
                };
                let Some(live_item) = live_items.iter().find(|item| has_key(schema, item, &key))
                else {
                    continue;
                };
                let manifest_items = manifest
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                let manifest_item = manifest_items
                    .iter()
                    .enumerate()
                    .find(|(_, item)| has_key(schema, item, &key));
                let outer = self.enter(Step::Key {
                    key,
                    index: manifest_item.map(|(i, _)| i),
                });
                match (manifest_item, below.as_object()) {
                    (None, _) => self.added(entry, live_item),
                    (Some((_, item)), Some(below)) => {
                        self.added_fields(entry, below, Some(item), live_item, schema.item());
                    }
                    _ => {}
                }
                self.leave(outer);
            } else if let Some(text) = owned.strip_prefix("v:") {
                let Ok(value) = serde_json::from_str::<Value>(text) else {
                    continue;
                };
                let Some(live_value) = live
                    .as_array()
                    .and_then(|l| l.iter().find(|v| **v == value))
                else {
                    continue;
                };
                let in_manifest = manifest
                    .and_then(Value::as_array)
                    .is_some_and(|m| m.contains(&value));
                if !in_manifest {
                    let outer = self.enter(Step::Value(live_value));
                    self.added(entry, live_value);
                    self.leave(outer);
                }
            }
        }
    }
}
