//! The live side of a comparison: a compact extract of a live object — the fields drift needs and
//! its `managedFields` — made from the API server's JSON.
use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use crate::managed_fields::{FieldPath, ManagedFieldsEntry, Operation, PathElement};
use crate::manifest::Config;
use crate::schema::{self, ListType, Schema};

use crate::manifest::ObjectKey;

use super::compare::same_key;
use super::normalize::{Place, never_drift};

/// A live object reduced to what drift needs.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveObject {
    pub key: ObjectKey,
    pub resource_version: String,
    /// The object without `status`, `managedFields` and server-managed metadata.
    pub body: Value,
    /// The `managedFields` entries that can attribute drift (appliers' and status-only ones
    /// are left out).
    pub managers: Vec<ManagedFieldsEntry>,
}

/// Why a live object could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LiveError {
    #[error("live object has no apiVersion, kind or metadata.name")]
    NotAnObject,
    #[error("live object is not readable JSON: {0}")]
    Unreadable(String),
}

/// The entry, unless it cannot attribute drift: what an applier owns is the manifest's (a
/// differing value it owns is "manager unknown"), and its field set is the biggest; status writes
/// own nothing drift compares. Left out to keep the extract small.
fn entry_of(index: usize, raw: &mut Value) -> Option<ManagedFieldsEntry> {
    let text = |field: &str| raw.get(field).and_then(Value::as_str);
    if text("operation") == Some("Apply")
        || text("manager").is_some_and(|m| super::BUILTIN_APPLIERS.contains(&m))
    {
        return None;
    }
    if let Some(fields) = raw.get_mut("fieldsV1").and_then(Value::as_object_mut) {
        fields.remove("f:status");
    }
    let entry = ManagedFieldsEntry::from_value(index, raw).ok()?;
    (!entry.fields.is_empty()).then_some(entry)
}

/// Removes what is never drift, so that the extract stays small.
fn strip_server_fields(body: &mut Value) {
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
    /// Reads a live Deployment from the JSON text the server sent.
    pub fn from_deployment_json(text: &str) -> Result<LiveObject, LiveError> {
        let WithoutStatus(value) =
            serde_json::from_str(text).map_err(|e| LiveError::Unreadable(e.to_string()))?;
        LiveObject::from_deployment(value)
    }

    /// Reads a live Deployment. The items of a list response may lack `apiVersion` and `kind`
    /// (the list names them once): a Deployment's are known.
    pub fn from_deployment(mut value: Value) -> Result<LiveObject, LiveError> {
        if let Some(fields) = value.as_object_mut() {
            for (name, known) in [("apiVersion", "apps/v1"), ("kind", "Deployment")] {
                if fields
                    .get(name)
                    .is_none_or(|v| v.as_str().is_none_or(str::is_empty))
                {
                    fields.insert(name.to_owned(), Value::String(known.to_owned()));
                }
            }
        }
        LiveObject::from_value(value)
    }

    /// Reads a live object as the API server returns it (JSON), keeping the spec and metadata
    /// drift compares and the `managedFields` entries that attribute it.
    pub fn from_value(mut value: Value) -> Result<LiveObject, LiveError> {
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
        let managers = match metadata.remove("managedFields") {
            Some(Value::Array(mut entries)) => entries
                .iter_mut()
                .enumerate()
                .filter_map(|(index, raw)| entry_of(index, raw))
                .collect(),
            _ => Vec::new(),
        };
        strip_server_fields(&mut value);
        Ok(LiveObject {
            key,
            resource_version,
            body: value,
            managers,
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
            let mut index = 0;
            items.retain_mut(|item| {
                let element = PathElement::for_item(schema, item, index);
                index += 1;
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
            items.retain_mut(
                |item| match wanted.iter().find(|w| same_key(schema, item, w)) {
                    Some(below) => {
                        prune_to_manifest(item, below, schema.item());
                        true
                    }
                    None => false,
                },
            );
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
        let owned: Vec<FieldPath> = self
            .managers
            .iter()
            .filter(|e| e.operation == Operation::Update && !config.appliers.contains(&e.manager))
            .flat_map(|e| e.fields.paths())
            .collect();
        let root = schema::root(&self.key.kind);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_list_item_without_type_fields_is_read_as_a_deployment_without_its_status() {
        let text = r#"{"metadata": {"name": "web", "namespace": "shop", "resourceVersion": "7"},
            "spec": {"replicas": 2}, "status": {"replicas": 2, "conditions": [{"type": "Available"}]}}"#;
        let object = LiveObject::from_deployment_json(text);
        let Ok(object) = object else {
            unreachable!("{object:?}")
        };
        assert_eq!(object.key.to_string(), "deployment/shop/web");
        assert_eq!(object.resource_version, "7");
        assert_eq!(object.body["spec"], json!({"replicas": 2}));
        assert!(object.body.get("status").is_none());
        assert!(matches!(
            LiveObject::from_deployment_json("{\"metadata\": "),
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
        let object = LiveObject::from_value(live);
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
