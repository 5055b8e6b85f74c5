//! The live side of a comparison: a compact extract of a live object — the fields drift needs and
//! its `managedFields` — made from the API server's JSON.
use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use crate::managed_fields::{FieldPath, FieldSet, ManagedFieldsEntry, Operation, PathElement};
use crate::manifest::Config;
use crate::manifest::tree::{NodeRef, Packed};
use crate::schema::{self, ListType, Schema, Schemas};

use crate::manifest::ObjectKey;

use super::list_keys::manifest_partners;
use super::normalize::{Place, never_drift};

/// A live object reduced to what drift needs.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveObject {
    pub key: ObjectKey,
    /// The schema of the object's kind (list keys, formats), from the server's OpenAPI.
    pub schema: Schema,
    pub resource_version: String,
    /// The object without `status`, `managedFields` and server-managed metadata.
    pub body: Value,
    /// The `managedFields` entries that can attribute drift: out-of-band updates, every
    /// server-side apply (trusted only for what the manifest says), the control plane's, and the
    /// last client-side apply as the set of fields its annotation holds (see [`LastApplied`]).
    /// Status-only entries and the updates of other appliers are left out.
    pub managers: Vec<ManagedFieldsEntry>,
    /// What the last `kubectl apply` (client-side) applied. Its field set is made only when it
    /// says something else than the manifest (see [`LastApplied::entry`]).
    pub last_applied: Option<Box<LastApplied>>,
}

/// The last client-side apply: its configuration (the annotation) and its entry's time.
#[derive(Debug, Clone, PartialEq)]
pub struct LastApplied {
    pub config: Value,
    time: Option<String>,
    api_version: String,
}

impl LastApplied {
    /// The client-side apply as a `managedFields` entry: the fields its configuration sets, at
    /// the time of its write.
    pub fn entry(&self, root: Schema) -> Option<ManagedFieldsEntry> {
        let fields = FieldSet::from_applied(root, &self.config);
        (!fields.is_empty()).then(|| ManagedFieldsEntry {
            manager: CLIENT_SIDE_APPLY.to_owned(),
            operation: Operation::Update,
            api_version: self.api_version.clone(),
            time: self.time.clone(),
            subresource: None,
            fields,
        })
    }
}

/// The manager of `kubectl apply` (client-side). Its `managedFields` entry is replaced by the
/// fields of its `last-applied-configuration` annotation: that is exactly what was applied,
/// while the entry also holds the defaults the server filled in on create.
pub const CLIENT_SIDE_APPLY: &str = "kubectl-client-side-apply";

/// The annotation `kubectl apply` (client-side) keeps the applied configuration in.
pub(crate) const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Why a live object could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LiveError {
    #[error("live object has no apiVersion, kind or metadata.name")]
    NotAnObject,
    #[error("live object is not readable JSON: {0}")]
    Unreadable(String),
}

/// The entry, unless it cannot attribute drift: what an `Update` applier owns is the manifest's
/// (a differing value it owns is "manager unknown"), and its field set is the biggest; status
/// writes own nothing drift compares. Left out to keep the extract small. Every `Apply` is kept:
/// an applier is trusted only for what the manifest says.
fn entry_of(index: usize, raw: &mut Value) -> Option<ManagedFieldsEntry> {
    let text = |field: &str| raw.get(field).and_then(Value::as_str);
    // The last client-side apply is read from its annotation (see `LastApplied`). Another
    // applier's update (helm 3 upgrades as `helm`, operation Update) is kept: it is never drift
    // by itself, but it names who wrote a value git disagrees with.
    if text("operation") != Some("Apply") && text("manager") == Some(CLIENT_SIDE_APPLY) {
        return None;
    }
    if let Some(fields) = raw.get_mut("fieldsV1").and_then(Value::as_object_mut) {
        fields.remove("f:status");
    }
    let entry = ManagedFieldsEntry::from_value(index, raw).ok()?;
    (!entry.fields.is_empty()).then_some(entry)
}

/// The configuration of the last client-side apply, from its annotation, without what is never
/// drift (the name and namespace kubectl fills in, the empty annotations map it adds).
fn last_applied_config(metadata: &serde_json::Map<String, Value>) -> Option<Value> {
    let text = metadata.get("annotations")?.get(LAST_APPLIED)?.as_str()?;
    let mut config: Value = serde_json::from_str(text).ok()?;
    let root = config.as_object_mut()?;
    root.remove("apiVersion");
    root.remove("kind");
    root.remove("status");
    if let Some(Value::Object(meta)) = root.get_mut("metadata") {
        meta.retain(|name, value| {
            !matches!(name.as_str(), "name" | "namespace" | "creationTimestamp")
                && !value.as_object().is_some_and(serde_json::Map::is_empty)
        });
    }
    Some(config)
}

/// The last client-side apply of an object: its annotation, and the time of its entry.
fn last_applied(
    metadata: &serde_json::Map<String, Value>,
    raw_entries: &[Value],
) -> Option<LastApplied> {
    let config = last_applied_config(metadata)?;
    let raw = raw_entries.iter().find(|e| {
        e.get("manager").and_then(Value::as_str) == Some(CLIENT_SIDE_APPLY)
            && e.get("operation").and_then(Value::as_str) == Some("Update")
    });
    let text = |field: &str| {
        raw.and_then(|e| e.get(field))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    Some(LastApplied {
        config,
        time: text("time"),
        api_version: text("apiVersion").unwrap_or_default(),
    })
}

/// Removes what is never drift, so that the extract stays small.
pub(crate) fn strip_server_fields(body: &mut Value) {
    let Some(root) = body.as_object_mut() else {
        return;
    };
    root.retain(|name, _| {
        !never_drift(Place::default(), name) || name == "apiVersion" || name == "kind"
    });
    let meta_place = Place::default().child("metadata");
    if let Some(Value::Object(meta)) = root.get_mut("metadata") {
        meta.retain(|name, _| !never_drift(meta_place, name));
        let annotations_place = meta_place.child("annotations");
        if let Some(Value::Object(annotations)) = meta.get_mut("annotations") {
            annotations.retain(|name, _| !never_drift(annotations_place, name));
        }
    }
}

/// Parses a live object's JSON text without its `status` (skipped unread): the one parse that
/// both the drift extract ([`LiveObject::from_item`]) and the change timeline read.
pub fn parse_without_status(text: &str) -> Result<Value, LiveError> {
    let WithoutStatus(value) =
        serde_json::from_str(text).map_err(|e| LiveError::Unreadable(e.to_string()))?;
    Ok(value)
}

/// A live object's top level without `status`, which is skipped unread (drift never compares it
/// and it is a good part of a Deployment's text).
struct WithoutStatus(Value);

impl<'de> Deserialize<'de> for WithoutStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct TopLevel;
        impl<'de> Visitor<'de> for TopLevel {
            type Value = WithoutStatus;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a Kubernetes object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WithoutStatus, A::Error> {
                let mut fields = serde_json::Map::new();
                while let Some(name) = map.next_key::<String>()? {
                    if name == "status" {
                        map.next_value::<IgnoredAny>()?;
                    } else {
                        fields.insert(name, map.next_value()?);
                    }
                }
                Ok(WithoutStatus(Value::Object(fields)))
            }
        }
        d.deserialize_map(TopLevel)
    }
}

impl LiveObject {
    /// Reads a live Deployment (a list item may lack its type) from the JSON text the server
    /// sent.
    pub fn from_deployment_json(text: &str, schemas: &Schemas) -> Result<LiveObject, LiveError> {
        LiveObject::from_item_json(text, "apps/v1", "Deployment", schemas)
    }

    /// Reads a live object of `api_version` and `kind` from the JSON text the server sent. The
    /// items of a list response may lack `apiVersion` and `kind` (the list names them once).
    pub fn from_item_json(
        text: &str,
        api_version: &str,
        kind: &str,
        schemas: &Schemas,
    ) -> Result<LiveObject, LiveError> {
        LiveObject::from_item(parse_without_status(text)?, api_version, kind, schemas)
    }

    /// Reads a live object of `api_version` and `kind` (see [`LiveObject::from_item_json`]).
    pub fn from_item(
        mut value: Value,
        api_version: &str,
        kind: &str,
        schemas: &Schemas,
    ) -> Result<LiveObject, LiveError> {
        if let Some(fields) = value.as_object_mut() {
            for (name, known) in [("apiVersion", api_version), ("kind", kind)] {
                if fields
                    .get(name)
                    .is_none_or(|v| v.as_str().is_none_or(str::is_empty))
                {
                    fields.insert(name.to_owned(), Value::String(known.to_owned()));
                }
            }
        }
        LiveObject::from_value(value, schemas)
    }

    /// Reads a live Deployment (see [`LiveObject::from_item`]).
    pub fn from_deployment(value: Value, schemas: &Schemas) -> Result<LiveObject, LiveError> {
        LiveObject::from_item(value, "apps/v1", "Deployment", schemas)
    }

    /// Reads a live object as the API server returns it (JSON), keeping the spec and metadata
    /// drift compares and the `managedFields` entries that attribute it; `schemas` give its
    /// kind's schema.
    pub fn from_value(mut value: Value, schemas: &Schemas) -> Result<LiveObject, LiveError> {
        let schema = schemas.root(
            value
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or(""),
            value.get("kind").and_then(Value::as_str).unwrap_or(""),
        );
        let key = ObjectKey::of_object(&value, "").ok_or(LiveError::NotAnObject)?;
        let metadata = value
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
            .ok_or(LiveError::NotAnObject)?;
        let resource_version = metadata
            .get("resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let mut raw_entries = match metadata.remove("managedFields") {
            Some(Value::Array(entries)) => entries,
            _ => Vec::new(),
        };
        let last_applied = last_applied(metadata, &raw_entries);
        let managers: Vec<ManagedFieldsEntry> = raw_entries
            .iter_mut()
            .enumerate()
            .filter_map(|(index, raw)| entry_of(index, raw))
            .collect();
        strip_server_fields(&mut value);
        Ok(LiveObject {
            key,
            schema,
            resource_version,
            body: value,
            managers,
            last_applied: last_applied.map(Box::new),
        })
    }
}

/// Keeps in `live` what `manifest` has and what lies on or under an `owned` path; `path` is
/// where `live` sits.
fn prune(
    live: &mut Value,
    manifest: Option<&Value>,
    schema: Schema,
    path: &mut FieldPath,
    owned: &[FieldPath],
) {
    if owned.iter().any(|o| path.starts_with(o)) {
        return;
    }
    let wanted = |path: &FieldPath, in_manifest: bool| {
        in_manifest || owned.iter().any(|o| o.starts_with(path))
    };
    match live {
        Value::Object(fields) => fields.retain(|name, value| {
            let below = manifest.and_then(|m| m.get(name));
            path.0.push(PathElement::field(name));
            let keep = wanted(path, below.is_some());
            if keep {
                prune(value, below, schema.field(name), path, owned);
            }
            path.0.pop();
            keep
        }),
        Value::Array(items) if schema.list_type() != ListType::Atomic => {
            // A keyed item whose key was changed live is compared whole with the manifest's.
            let partners = match manifest {
                Some(Value::Array(wanted)) if schema.list_type() == ListType::Map => {
                    manifest_partners(schema, wanted, items)
                }
                _ => Vec::new(),
            };
            let mut index = 0;
            items.retain_mut(|item| {
                let element = PathElement::for_item(schema, item, index);
                let rekeyed = matches!(partners.get(index), Some(Some((_, true))));
                index += 1;
                if rekeyed {
                    return true;
                }
                let below = manifest
                    .and_then(|m| element.lookup(schema, m))
                    .map(|(v, _)| v);
                path.0.push(element);
                let keep = wanted(path, below.is_some());
                if keep {
                    prune(item, below, schema.item(), path, owned);
                }
                path.0.pop();
                keep
            });
        }
        _ => {}
    }
}

/// Keeps in `live` only what `manifest` has (no out-of-band fields to keep): the common case,
/// without building paths.
fn prune_to_manifest(live: &mut Value, manifest: &Value, schema: Schema) {
    match (live, manifest) {
        (Value::Object(fields), Value::Object(wanted)) => {
            fields.retain(|name, _| wanted.contains_key(name));
            for (name, value) in fields.iter_mut() {
                if let Some(below) = wanted.get(name) {
                    prune_to_manifest(value, below, schema.field(name));
                }
            }
        }
        (Value::Array(items), Value::Array(wanted)) if schema.list_type() == ListType::Map => {
            // Each item the manifest's is compared with; one whose key was changed live is
            // compared whole.
            let partners = manifest_partners(schema, wanted, items);
            let mut index = 0;
            items.retain_mut(|item| {
                let partner = partners.get(index).copied().flatten();
                index += 1;
                match partner {
                    Some((at, false)) => {
                        prune_to_manifest(item, &wanted[at], schema.item());
                        true
                    }
                    Some((_, true)) => true,
                    None => false,
                }
            });
        }
        _ => {}
    }
}

impl LiveObject {
    /// Reduces the extract to what the drift against `manifest` reads: the manifest's fields and
    /// those of out-of-band managers (everything else is in the applier's or the control plane's
    /// hands). The result is valid for this manifest only: when the manifest changes, extract
    /// again from the full object.
    pub fn reduce_to(&mut self, manifest: &Value, config: &Config) {
        let (group, kind) = (self.key.group.clone(), self.key.kind.clone());
        let root = self.schema;
        // The last client-side apply: nothing to keep when it applied the manifest; else its set,
        // cut below to where it leaves the manifest.
        if let Some(applied) = self.last_applied.take()
            && !self.managers.iter().any(|e| e.manager == CLIENT_SIDE_APPLY)
            && !applied_is_manifest(&applied.config, Packed::from(manifest).root())
        {
            if let Some(entry) = applied.entry(root) {
                self.managers.push(entry);
            }
            self.last_applied = Some(applied);
        }
        // An applier's set matters only where it leaves the manifest: fields the manifest lacks
        // (and the server does not default to that value) or values it sets otherwise. Keep
        // that part: an apply's set is the whole object.
        let mut defaulted: Option<Value> = None;
        self.managers.retain_mut(|e| {
            // An applier's own update (helm 3's) only names who wrote a value: cut the same way.
            let applier_update = e.operation != Operation::Apply
                && super::BUILTIN_APPLIERS.contains(&e.manager.as_str());
            if !is_applied_set(e) && !applier_update {
                return true;
            }
            let defaulted = defaulted.get_or_insert_with(|| {
                let mut value = manifest.clone();
                schema::defaults::apply_defaults(&group, &kind, root, &mut value);
                value
            });
            e.fields = beyond_manifest(root, &e.fields, &self.body, manifest, defaulted);
            !e.fields.is_empty()
        });
        if !self.managers.iter().any(|e| e.manager == CLIENT_SIDE_APPLY) {
            self.last_applied = None;
        }
        let owned: Vec<FieldPath> = self
            .managers
            .iter()
            .filter(|e| {
                e.operation == Operation::Apply
                    || e.manager == CLIENT_SIDE_APPLY
                    || !config.appliers.contains(&e.manager)
            })
            .filter(|e| !super::SYSTEM_MANAGERS.contains(&e.manager.as_str()))
            .flat_map(|e| e.fields.paths())
            .collect();
        if owned.is_empty() {
            prune_to_manifest(&mut self.body, manifest, root);
        } else {
            prune(
                &mut self.body,
                Some(manifest),
                root,
                &mut FieldPath::default(),
                &owned,
            );
        }
        // Held for every object of the cluster: no spare room in its maps.
        super::normalize::compact(&mut self.body);
    }
}

/// True when the last client-side apply applied what the manifest says (the common case: the
/// manifest in git was applied), so that its set needs no walk: compared as written, less what
/// kubectl adds (the name and namespace, an empty annotations map).
pub(super) fn applied_is_manifest(config: &Value, manifest: NodeRef<'_>) -> bool {
    let (Value::Object(config), Some(fields)) = (config, manifest.fields()) else {
        return false;
    };
    let kept_meta = |name: &str, node: NodeRef<'_>| {
        let empty_map = node.is_map() && node.is_empty();
        !matches!(name, "name" | "namespace" | "creationTimestamp") && !empty_map
    };
    let mut compared = 0;
    for (name, node) in fields {
        match name {
            "apiVersion" | "kind" | "status" => {}
            "metadata" => {
                let Some(meta) = node.fields() else {
                    return false;
                };
                let mine: Vec<(&str, NodeRef<'_>)> =
                    meta.filter(|(k, v)| kept_meta(k, *v)).collect();
                let theirs = config.get("metadata").and_then(Value::as_object);
                let same = match theirs {
                    None => mine.is_empty(),
                    Some(theirs) => {
                        theirs.len() == mine.len()
                            && mine
                                .iter()
                                .all(|(k, v)| theirs.get(*k).is_some_and(|t| v.eq_value(t)))
                    }
                };
                if !same {
                    return false;
                }
                compared += usize::from(theirs.is_some());
            }
            other => match config.get(other) {
                Some(value) if node.eq_value(value) => compared += 1,
                _ => return false,
            },
        }
    }
    compared == config.len()
}

/// An applier's whole set: a server-side apply, or the last client-side apply's configuration.
pub(super) fn is_applied_set(entry: &ManagedFieldsEntry) -> bool {
    entry.operation == Operation::Apply || entry.manager == CLIENT_SIDE_APPLY
}

/// The paths of `fields` where `live` leaves `manifest`: absent from it (and not the server's
/// default, nor an empty map the server serializes anyway), or another value.
fn beyond_manifest(
    root: Schema,
    fields: &FieldSet,
    live: &Value,
    manifest: &Value,
    defaulted: &Value,
) -> FieldSet {
    let mut out = FieldSet::new();
    let manifest_node = std::cell::OnceCell::new();
    for path in fields.paths() {
        if super::normalize::never_drift_path(&path) {
            continue;
        }
        let Some(found) = path.lookup(root, live) else {
            continue;
        };
        let beyond = match path.lookup(root, manifest) {
            None => {
                !found.as_object().is_some_and(serde_json::Map::is_empty)
                    && path.lookup(root, defaulted) != Some(found)
            }
            Some(wanted) => {
                !found.is_object()
                    && !found.is_array()
                    && found != wanted
                    && !super::normalize::same_value(
                        super::normalize::Place::of(&super::owners::drift_path(
                            root,
                            &path,
                            manifest_node.get_or_init(|| Packed::from(manifest)).root(),
                        )),
                        path.schema(root),
                        wanted,
                        found,
                    )
            }
        };
        if beyond {
            out.insert(&path);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_list_item_without_type_fields_is_read_as_a_deployment_without_its_status() {
        let text = r#"{"metadata": {"name": "web", "namespace": "shop", "resourceVersion": "7"},
            "spec": {"replicas": 2}, "status": {"replicas": 2, "conditions": [{"type": "Available"}]}}"#;
        let object = LiveObject::from_deployment_json(text, Schemas::builtin());
        let Ok(object) = object else {
            unreachable!("{object:?}")
        };
        assert_eq!(object.key.to_string(), "deployment/shop/web");
        assert_eq!(object.resource_version, "7");
        assert_eq!(object.body["spec"], json!({"replicas": 2}));
        assert!(object.body.get("status").is_none());
        assert!(matches!(
            LiveObject::from_deployment_json("{\"metadata\": ", Schemas::builtin()),
            Err(LiveError::Unreadable(_))
        ));
    }

    #[test]
    fn extract_drops_status_and_server_metadata_and_keeps_attribution() {
        let live = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "42", "uid": "u",
                "annotations": {"deployment.kubernetes.io/revision": "3", "team": "a"},
                "managedFields": [
                    {"manager": "kubectl-set", "operation": "Update", "time": "2026-11-22T02:59:15Z",
                     "fieldsV1": {"f:spec": {"f:paused": {}}}},
                    {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
                     "fieldsV1": {"f:status": {"f:replicas": {}}}}
                ]},
            "spec": {"replicas": 2},
            "status": {"replicas": 2}
        });
        let object = LiveObject::from_value(live, Schemas::builtin());
        let Ok(object) = object else {
            unreachable!("{object:?}")
        };
        assert_eq!(object.key.to_string(), "deployment/shop/web");
        assert_eq!(object.resource_version, "42");
        assert_eq!(
            object.body,
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop", "annotations": {"team": "a"}}, "spec": {"replicas": 2}})
        );
        let managers: Vec<_> = object
            .managers
            .iter()
            .map(|m| (m.manager.as_str(), m.time.as_deref()))
            .collect();
        assert_eq!(managers, [("kubectl-set", Some("2026-11-22T02:59:15Z"))]);
    }
}
