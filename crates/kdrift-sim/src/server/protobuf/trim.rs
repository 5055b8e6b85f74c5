//! A JSON or YAML body of a built-in kind as the server holds it once decoded into its Go struct
//! and written again: a non-pointer field tagged `omitempty` whose value is Go's zero (`""`, `0`,
//! `false`, `null`, an empty list or map) is gone, and so is a nil pointer's `null`. kubectl 1.20
//! sends a RoleBinding's ServiceAccount subject with `"apiGroup": ""`; a real server stores the
//! subject without it. Fields the Go types do not know are left as they are.
use kdrift_schema::schema::is_go_zero;
use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor};
use serde_json::{Map, Value};

use super::json::is_special;
use kdrift_schema::gotypes::{GoType, GoTypes, JsonName};

/// Trims `object`, a JSON object of the message `desc`, as described above.
pub fn trim(types: &GoTypes, desc: &MessageDescriptor, object: &mut Map<String, Value>) {
    let Some(GoType::Struct(fields)) = types.get(desc.full_name()) else {
        return;
    };
    for go in fields {
        let Some(field) = desc.get_field(go.number) else {
            continue;
        };
        let name = match &go.json {
            JsonName::Named(name) => name,
            JsonName::Skipped => continue,
            // An embedded struct: its fields are at this level.
            JsonName::Inline(_) => {
                if let Kind::Message(inner) = field.kind() {
                    trim(types, &inner, object);
                }
                continue;
            }
        };
        let Some(value) = object.get_mut(&**name) else {
            continue;
        };
        let omit = go.omitempty || go.omitzero;
        let remove = if field.is_list() || field.is_map() {
            match value {
                Value::Null => omit,
                Value::Array(items) => {
                    for item in items.iter_mut() {
                        inner(types, &field, item);
                    }
                    omit && items.is_empty()
                }
                Value::Object(entries) if field.is_map() => {
                    let value_field = match field.kind() {
                        Kind::Message(entry) => Some(entry.map_entry_value_field()),
                        _ => None,
                    };
                    if let Some(value_field) = value_field {
                        for entry in entries.values_mut() {
                            inner(types, &value_field, entry);
                        }
                    }
                    omit && entries.is_empty()
                }
                _ => false,
            }
        } else if let Kind::Message(message) = field.kind() {
            if is_special(message.full_name()) {
                value.is_null() && go.pointer && go.omitempty
            } else {
                match value {
                    Value::Null => go.pointer && go.omitempty,
                    Value::Object(inner_object) => {
                        trim(types, &message, inner_object);
                        go.omitzero && !go.pointer && inner_object.is_empty()
                    }
                    _ => false,
                }
            }
        } else if go.pointer {
            value.is_null() && go.omitempty
        } else {
            go.omitempty && is_go_zero(value)
        };
        if remove {
            object.remove(&**name);
        }
    }
}

/// An item of a list, or a value of a map, of messages.
fn inner(types: &GoTypes, field: &FieldDescriptor, value: &mut Value) {
    if let (Kind::Message(message), Value::Object(object)) = (field.kind(), value)
        && !is_special(message.full_name())
    {
        trim(types, &message, object);
    }
}
