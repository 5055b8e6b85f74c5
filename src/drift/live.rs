//! The live side of a comparison: a compact extract of a live object — the fields drift needs and
//! its `managedFields` — made from the API server's JSON.
use serde_json::{Map, Value};

use crate::manifest::ObjectKey;

use super::normalize::{Place, never_drift};

/// One `managedFields` entry: who wrote which fields, how and when.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagerEntry {
    pub manager: String,
    /// `Update` or `Apply`.
    pub operation: String,
    /// RFC 3339, as the server wrote it.
    pub time: Option<String>,
    /// `scale`, `status`, or `None` for the main resource.
    pub subresource: Option<String>,
    /// The `fieldsV1` tree (`f:`/`k:`/`v:`/`.` keys), `status` left out.
    pub fields: Value,
}

/// A live object reduced to what drift needs.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveObject {
    pub key: ObjectKey,
    pub resource_version: String,
    /// The object without `status`, `managedFields` and server-managed metadata.
    pub body: Value,
    pub managers: Vec<ManagerEntry>,
}

/// Why a live object could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LiveError {
    #[error("live object has no apiVersion, kind or metadata.name")]
    NotAnObject,
}

fn entry_of(raw: &Value) -> Option<ManagerEntry> {
    let text = |field: &str| raw.get(field).and_then(Value::as_str).map(str::to_owned);
    let manager = text("manager").unwrap_or_default();
    let operation = text("operation").unwrap_or_default();
    // What an applier owns is the manifest's: it attributes nothing (a differing value it owns
    // is "manager unknown"), and its field set is the biggest. Not kept, to keep the extract small.
    if operation == "Apply" || super::BUILTIN_APPLIERS.contains(&manager.as_str()) {
        return None;
    }
    let mut fields = raw
        .get("fieldsV1")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    if let Some(map) = fields.as_object_mut() {
        map.remove("f:status");
    }
    let subresource = text("subresource").filter(|s| !s.is_empty());
    // Entries that own nothing but status (the controller's status writes) cannot attribute drift.
    if fields.as_object().is_some_and(Map::is_empty) && subresource.as_deref() == Some("status") {
        return None;
    }
    Some(ManagerEntry {
        manager,
        operation,
        time: text("time"),
        subresource,
        fields,
    })
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
            Some(Value::Array(entries)) => entries.iter().filter_map(entry_of).collect(),
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
