//! `metadata.managedFields` entries: who owns which fields, how (Apply or Update), since when.
use std::fmt;

use serde_json::{Map, Value};

use super::{FieldPath, FieldSet, FieldsError};

/// How a manager wrote its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Create, update or patch.
    Update,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `metadata.managedFields` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagedFieldsEntry {
    pub manager: String,
    pub operation: Operation,
    pub api_version: String,
    /// RFC 3339, as the server wrote it.
    pub time: Option<String>,
    /// `status` or `scale` for writes through a subresource.
    pub subresource: Option<String>,
    pub fields: FieldSet,
}

impl ManagedFieldsEntry {
    /// Whether `self` is the entry a write by (manager, operation, subresource) updates.
    pub fn is_for(&self, manager: &str, operation: Operation, subresource: Option<&str>) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource.as_deref() == subresource
    }

    /// Read one entry (`index` is its position, for error messages).
    pub fn from_value(index: usize, value: &Value) -> Result<ManagedFieldsEntry, FieldsError> {
        let bad = |reason: String| FieldsError::BadEntry { index, reason };
        let object = value
            .as_object()
            .ok_or_else(|| bad(format!("expected an object, found {value}")))?;
        let text = |name: &str| -> Result<Option<String>, FieldsError> {
            match object.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(bad(format!("\"{name}\" must be a string, found {other}"))),
            }
        };
        let operation = match text("operation")?.as_deref() {
            Some("Apply") => Operation::Apply,
            Some("Update") => Operation::Update,
            Some(other) => {
                return Err(bad(format!(
                    "operation \"{other}\" is neither \"Apply\" nor \"Update\""
                )));
            }
            None => return Err(bad("no \"operation\"".into())),
        };
        if let Some(kind) = text("fieldsType")?
            && kind != "FieldsV1"
        {
            return Err(bad(format!("fieldsType \"{kind}\" is not \"FieldsV1\"")));
        }
        let fields = match object.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::new(),
            Some(v) => FieldSet::from_fields_v1(v).map_err(|e| bad(e.to_string()))?,
        };
        Ok(ManagedFieldsEntry {
            manager: text("manager")?.unwrap_or_default(),
            operation,
            api_version: text("apiVersion")?.unwrap_or_default(),
            time: text("time")?,
            subresource: text("subresource")?.filter(|s| !s.is_empty()),
            fields,
        })
    }

    /// The entry as a server writes it (fields in the order of the Go struct).
    pub fn to_value(&self) -> Value {
        let mut out = Map::new();
        out.insert("manager".into(), Value::String(self.manager.clone()));
        out.insert(
            "operation".into(),
            Value::String(self.operation.as_str().into()),
        );
        out.insert("apiVersion".into(), Value::String(self.api_version.clone()));
        if let Some(time) = &self.time {
            out.insert("time".into(), Value::String(time.clone()));
        }
        out.insert("fieldsType".into(), Value::String("FieldsV1".into()));
        out.insert("fieldsV1".into(), self.fields.to_fields_v1());
        if let Some(sub) = &self.subresource {
            out.insert("subresource".into(), Value::String(sub.clone()));
        }
        Value::Object(out)
    }

    /// Read a `managedFields` list.
    pub fn parse_list(list: &Value) -> Result<Vec<ManagedFieldsEntry>, FieldsError> {
        match list {
            Value::Null => Ok(Vec::new()),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| Self::from_value(i, v))
                .collect(),
            other => Err(FieldsError::BadEntry {
                index: 0,
                reason: format!("managedFields is not a list: {other}"),
            }),
        }
    }

    /// The entries of an object's `metadata.managedFields` (none when absent).
    pub fn read(object: &Value) -> Result<Vec<ManagedFieldsEntry>, FieldsError> {
        match object.pointer("/metadata/managedFields") {
            None => Ok(Vec::new()),
            Some(list) => Self::parse_list(list),
        }
    }

    /// Write `entries` to `object`'s `metadata.managedFields` (removed when there are none).
    pub fn write(object: &mut Value, entries: &[ManagedFieldsEntry]) {
        let Some(root) = object.as_object_mut() else {
            return;
        };
        let metadata = root
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        let Some(metadata) = metadata.as_object_mut() else {
            return;
        };
        if entries.is_empty() {
            metadata.shift_remove("managedFields");
        } else {
            let list = entries.iter().map(ManagedFieldsEntry::to_value).collect();
            metadata.insert("managedFields".into(), Value::Array(list));
        }
    }
}

/// The entries whose field set holds `path` itself, in their order.
pub fn owners<'a>(
    entries: &'a [ManagedFieldsEntry],
    path: &FieldPath,
) -> Vec<&'a ManagedFieldsEntry> {
    entries.iter().filter(|e| e.fields.contains(path)).collect()
}

/// The entries that own `path` in an object whose kind's schema is `root`: the field itself, or
/// an atomic field above it (`spec.selector` for `spec.selector.matchLabels.app`).
pub fn owners_in<'a>(
    root: crate::schema::Schema,
    entries: &'a [ManagedFieldsEntry],
    path: &FieldPath,
) -> Vec<&'a ManagedFieldsEntry> {
    entries
        .iter()
        .filter(|e| e.fields.owns(root, path))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::managed_fields::PathElement;
    use serde_json::json;

    fn reference(file: &str) -> Value {
        let text = std::fs::read_to_string(format!(
            "{}/../../testdata/kubernetes-1.20/{file}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn owners_attribute_each_field_of_the_reference() {
        let object = reference("deploy-after-set-env-and-resources.json");
        let entries = ManagedFieldsEntry::read(&object).unwrap();
        let names = |path: &FieldPath| -> Vec<String> {
            owners_in(crate::schema::builtin_kind("Deployment"), &entries, path)
                .iter()
                .map(|e| format!("{} {}", e.manager, e.operation))
                .collect()
        };
        let web = FieldPath::fields(&["spec", "template", "spec", "containers"])
            .child(PathElement::parse(r#"k:{"name":"web"}"#).unwrap());
        let extra = web
            .child(PathElement::field("env"))
            .child(PathElement::parse(r#"k:{"name":"EXTRA"}"#).unwrap());
        assert_eq!(
            names(&extra.child(PathElement::field("value"))),
            ["kubectl-set Update"]
        );
        assert_eq!(
            names(&web.child(PathElement::field("image"))),
            ["kubectl-client-side-apply Update"]
        );
        assert_eq!(
            names(&FieldPath::fields(&["status", "replicas"])),
            ["kube-controller-manager Update"]
        );
        assert_eq!(
            names(&FieldPath::fields(&[
                "spec",
                "selector",
                "matchLabels",
                "app"
            ])),
            ["kubectl-client-side-apply Update"]
        );
        assert!(names(&FieldPath::fields(&["spec", "paused"])).is_empty());
        let time = owners(&entries, &extra)
            .first()
            .and_then(|e| e.time.clone());
        assert_eq!(time.as_deref(), Some("2026-11-22T02:59:15Z"));
    }

    #[test]
    fn entries_are_written_in_server_field_order() {
        let object = reference("deploy-after-client-apply.json");
        let entries = ManagedFieldsEntry::read(&object).unwrap();
        let written = entries[0].to_value();
        let keys: Vec<&String> = written.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "manager",
                "operation",
                "apiVersion",
                "time",
                "fieldsType",
                "fieldsV1"
            ]
        );
        assert_eq!(
            written["fieldsV1"],
            object["metadata"]["managedFields"][0]["fieldsV1"]
        );
        let mut scale = entries[0].clone();
        scale.subresource = Some("scale".into());
        let back = ManagedFieldsEntry::from_value(0, &scale.to_value()).unwrap();
        assert_eq!(back, scale);
    }

    #[test]
    fn write_then_read_and_empty_removes() {
        let mut object = json!({"metadata": {"name": "web"}});
        let entry = ManagedFieldsEntry {
            manager: "kubectl-scale".into(),
            operation: Operation::Update,
            api_version: "apps/v1".into(),
            time: Some("2026-11-22T03:00:00Z".into()),
            subresource: Some("scale".into()),
            fields: FieldSet::from_fields_v1(&json!({"f:spec": {"f:replicas": {}}})).unwrap(),
        };
        ManagedFieldsEntry::write(&mut object, std::slice::from_ref(&entry));
        assert_eq!(ManagedFieldsEntry::read(&object).unwrap(), vec![entry]);
        ManagedFieldsEntry::write(&mut object, &[]);
        assert_eq!(object, json!({"metadata": {"name": "web"}}));
    }

    #[test]
    fn bad_entries_say_which_and_why() {
        let err = ManagedFieldsEntry::parse_list(&json!([{"manager": "x", "operation": "Patch"}]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "managedFields[0]: operation \"Patch\" is neither \"Apply\" nor \"Update\""
        );
        let err = ManagedFieldsEntry::parse_list(&json!([
            {"manager": "x", "operation": "Apply"},
            {"manager": "y", "operation": "Update", "fieldsV1": {"f:spec": 1}}
        ]))
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "managedFields[1]: fieldsV1 at \".spec\": expected an object, found 1"
        );
    }
}
