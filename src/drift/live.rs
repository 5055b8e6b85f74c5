//! The live side of a comparison: a compact extract of a live object — the fields drift needs and
//! its `managedFields` — made from the API server's JSON.
use serde_json::Value;

use crate::managed_fields::ManagedFieldsEntry;

use crate::manifest::ObjectKey;

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

impl LiveObject {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
