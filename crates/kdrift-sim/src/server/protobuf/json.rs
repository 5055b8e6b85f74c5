//! A decoded message walked into the JSON the Go API server would write for it: the Go struct
//! the protobuf decodes into, marshalled by `encoding/json`. gogo-protobuf writes a non-pointer
//! field always and a pointer only when set, so the wire says what is set; the struct tags
//! ([`kdrift_schema::gotypes`]) say what JSON keeps: a set pointer even when zero, a non-pointer zero
//! only without `omitempty`, a nil list or map as `null` without it, structs always (or not at
//! all with `omitzero` when zero). Map keys come sorted, as Go writes them. The types with their
//! own JSON form (times, durations, quantities, int-or-string, raw JSON) are written as theirs.
use base64::Engine;
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MapKey, ReflectMessage, Value as Pb};
use serde_json::{Map, Value, json};

use kdrift_schema::gotypes::{GoField, GoType, GoTypes, JsonName};

const META: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.";
const EXTENSIONS: &str = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.";

/// Why a body cannot be written as JSON.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    #[error("{field}: the raw JSON does not parse: {source}")]
    RawJson {
        field: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("{message}: field {number} is in the Go types but not in the descriptor")]
    NoSuchField { message: String, number: u32 },
}

/// Writes messages as JSON by the Go types of `types`.
pub struct Walker<'a> {
    pub types: &'a GoTypes,
}

impl Walker<'_> {
    /// The JSON of `message`.
    pub fn message(&self, message: &DynamicMessage) -> Result<Value, WalkError> {
        let desc = message.descriptor();
        let name = desc.full_name();
        if let Some(special) = self.special(name, message)? {
            return Ok(special);
        }
        match self.types.get(name) {
            Some(GoType::Slice) => {
                let items = desc
                    .get_field(1)
                    .map(|f| self.field_value(&f, &message.get_field(&f)))
                    .transpose()?;
                Ok(match items {
                    Some(Value::Array(items)) if !items.is_empty() => Value::Array(items),
                    _ => Value::Null,
                })
            }
            Some(GoType::Struct(fields)) => {
                let mut out = Map::new();
                self.struct_fields(message, fields, &mut out)?;
                Ok(Value::Object(out))
            }
            // Not a Go struct of the table (the table test keeps every message in it): the
            // fields that are set, by their proto names.
            None => {
                let mut out = Map::new();
                for (field, value) in message.fields() {
                    out.insert(field.name().to_string(), self.field_value(&field, value)?);
                }
                Ok(Value::Object(out))
            }
        }
    }

    fn struct_fields(
        &self,
        message: &DynamicMessage,
        fields: &[GoField],
        out: &mut Map<String, Value>,
    ) -> Result<(), WalkError> {
        let desc = message.descriptor();
        for go in fields {
            let field = desc
                .get_field(go.number)
                .ok_or_else(|| WalkError::NoSuchField {
                    message: desc.full_name().to_string(),
                    number: go.number,
                })?;
            let json_name = match &go.json {
                JsonName::Named(name) => name,
                JsonName::Skipped => continue,
                // An embedded struct: its fields at this level.
                JsonName::Inline(_) => {
                    let value = message.get_field(&field);
                    if let Value::Object(inner) = self.field_value(&field, &value)? {
                        out.extend(inner);
                    }
                    continue;
                }
            };
            if let Some(value) = self.go_field(message, &field, go)? {
                out.insert(json_name.to_string(), value);
            }
        }
        Ok(())
    }

    /// The JSON of one field as `encoding/json` writes the Go field, `None` when it leaves it out.
    fn go_field(
        &self,
        message: &DynamicMessage,
        field: &FieldDescriptor,
        go: &GoField,
    ) -> Result<Option<Value>, WalkError> {
        let value = message.get_field(field);
        let omit = go.omitempty || go.omitzero;
        if field.is_list() || field.is_map() {
            let empty = match value.as_ref() {
                Pb::List(items) => items.is_empty(),
                Pb::Map(entries) => entries.is_empty(),
                _ => true,
            };
            // Decoding never makes an empty list or map: nothing on the wire is a nil one.
            return Ok(match (empty, omit) {
                (true, true) => None,
                (true, false) => Some(Value::Null),
                (false, _) => Some(self.field_value(field, &value)?),
            });
        }
        let set = message.has_field(field);
        if go.pointer {
            return Ok(match (set, go.omitempty) {
                (false, true) => None,
                (false, false) => Some(Value::Null),
                (true, _) => Some(self.field_value(field, &value)?),
            });
        }
        if let Pb::Message(inner) = value.as_ref() {
            // A struct: never empty for omitempty; zero for omitzero.
            if go.omitzero && self.is_zero(inner) {
                return Ok(None);
            }
            return Ok(Some(self.message(inner)?));
        }
        if go.omitempty && scalar_is_zero(&value) {
            return Ok(None);
        }
        Ok(Some(self.field_value(field, &value)?))
    }

    fn field_value(&self, field: &FieldDescriptor, value: &Pb) -> Result<Value, WalkError> {
        Ok(match value {
            Pb::List(items) => Value::Array(
                items
                    .iter()
                    .map(|v| self.field_value(field, v))
                    .collect::<Result<_, _>>()?,
            ),
            Pb::Map(entries) => {
                let value_field = match field.kind() {
                    Kind::Message(entry) => entry.map_entry_value_field(),
                    _ => return Ok(Value::Null),
                };
                let mut sorted: Vec<(String, &Pb)> =
                    entries.iter().map(|(k, v)| (map_key(k), v)).collect();
                sorted.sort_by(|a, b| a.0.cmp(&b.0));
                let mut out = Map::new();
                for (key, v) in sorted {
                    out.insert(key, self.field_value(&value_field, v)?);
                }
                Value::Object(out)
            }
            Pb::Message(inner) => self.message(inner)?,
            scalar => scalar_json(scalar),
        })
    }

    /// Go's zero test for a struct (`omitzero`): `IsZero` for the time types (nothing on the
    /// wire), else no pointer set and every other field zero.
    fn is_zero(&self, message: &DynamicMessage) -> bool {
        let desc = message.descriptor();
        if desc
            .full_name()
            .strip_prefix(META)
            .is_some_and(|n| n == "Time" || n == "MicroTime")
        {
            return message.fields().next().is_none();
        }
        message.fields().all(|(field, value)| {
            !self.is_pointer(message, &field)
                && match value {
                    Pb::Message(inner) => self.is_zero(inner),
                    scalar => scalar_is_zero(scalar),
                }
        })
    }

    fn is_pointer(&self, message: &DynamicMessage, field: &FieldDescriptor) -> bool {
        match self.types.get(message.descriptor().full_name()) {
            Some(GoType::Struct(fields)) => fields
                .iter()
                .any(|f| f.number == field.number() && f.pointer),
            _ => false,
        }
    }

    /// The types that write their own JSON (their `MarshalJSON`).
    fn special(&self, name: &str, message: &DynamicMessage) -> Result<Option<Value>, WalkError> {
        let int = |number: u32| -> i64 {
            match message.get_field_by_number(number).as_deref() {
                Some(Pb::I64(v)) => *v,
                Some(Pb::I32(v)) => i64::from(*v),
                _ => 0,
            }
        };
        let text = |number: u32| -> String {
            match message.get_field_by_number(number).as_deref() {
                Some(Pb::String(s)) => s.clone(),
                _ => String::new(),
            }
        };
        let raw = |number: u32| -> Result<Value, WalkError> {
            match message.get_field_by_number(number).as_deref() {
                Some(Pb::Bytes(b)) if !b.is_empty() => {
                    serde_json::from_slice(b).map_err(|source| WalkError::RawJson {
                        field: name.to_string(),
                        source,
                    })
                }
                _ => Ok(Value::Null),
            }
        };
        let Some(short) = name
            .strip_prefix(META)
            .or_else(|| name.strip_prefix(EXTENSIONS))
            .or_else(|| name.strip_prefix("k8s.io.apimachinery.pkg."))
        else {
            return Ok(None);
        };
        Ok(Some(match short {
            // A zero time (nothing on the wire) is `null`; seconds, UTC.
            "Time" | "MicroTime" if message.fields().next().is_none() => Value::Null,
            "Time" => json!(time(int(1), 0, false)),
            "MicroTime" => json!(time(int(1), int(2), true)),
            "Duration" => json!(go_duration(int(1))),
            "FieldsV1" | "JSON" | "runtime.RawExtension" => raw(1)?,
            "api.resource.Quantity" => {
                // A zero Quantity (no string) is written as "0".
                let s = text(1);
                json!(if s.is_empty() { "0".to_string() } else { s })
            }
            "util.intstr.IntOrString" => {
                if int(1) == 1 {
                    json!(text(3))
                } else {
                    json!(int(2))
                }
            }
            // One of a schema or (when it has any) the other form.
            "JSONSchemaPropsOrBool" => match message.get_field_by_number(2).as_deref() {
                Some(Pb::Message(schema)) if message.has_field_by_number(2) => {
                    self.message(schema)?
                }
                _ => json!(matches!(
                    message.get_field_by_number(1).as_deref(),
                    Some(Pb::Bool(true))
                )),
            },
            "JSONSchemaPropsOrArray" | "JSONSchemaPropsOrStringArray" => {
                match message.get_field_by_number(2).as_deref() {
                    Some(Pb::List(items)) if !items.is_empty() => {
                        let field = message.descriptor().get_field(2);
                        match field {
                            Some(f) => self.field_value(&f, &Pb::List(items.clone()))?,
                            None => Value::Null,
                        }
                    }
                    _ => match message.get_field_by_number(1).as_deref() {
                        Some(Pb::Message(schema)) if message.has_field_by_number(1) => {
                            self.message(schema)?
                        }
                        _ => Value::Null,
                    },
                }
            }
            _ => return Ok(None),
        }))
    }
}

/// True for the messages with a JSON form of their own (times, durations, quantities,
/// int-or-string, raw JSON, the schema unions), which [`Walker::special`] writes.
pub fn is_special(name: &str) -> bool {
    let Some(short) = name
        .strip_prefix(META)
        .or_else(|| name.strip_prefix(EXTENSIONS))
        .or_else(|| name.strip_prefix("k8s.io.apimachinery.pkg."))
    else {
        return false;
    };
    matches!(
        short,
        "Time"
            | "MicroTime"
            | "Duration"
            | "FieldsV1"
            | "JSON"
            | "runtime.RawExtension"
            | "api.resource.Quantity"
            | "util.intstr.IntOrString"
            | "JSONSchemaPropsOrBool"
            | "JSONSchemaPropsOrArray"
            | "JSONSchemaPropsOrStringArray"
    )
}

fn map_key(key: &MapKey) -> String {
    match key {
        MapKey::Bool(b) => b.to_string(),
        MapKey::I32(v) => v.to_string(),
        MapKey::I64(v) => v.to_string(),
        MapKey::U32(v) => v.to_string(),
        MapKey::U64(v) => v.to_string(),
        MapKey::String(s) => s.clone(),
    }
}

fn scalar_is_zero(value: &Pb) -> bool {
    match value {
        Pb::Bool(b) => !b,
        Pb::I32(v) | Pb::EnumNumber(v) => *v == 0,
        Pb::I64(v) => *v == 0,
        Pb::U32(v) => *v == 0,
        Pb::U64(v) => *v == 0,
        Pb::F32(v) => *v == 0.0,
        Pb::F64(v) => *v == 0.0,
        Pb::String(s) => s.is_empty(),
        Pb::Bytes(b) => b.is_empty(),
        Pb::List(items) => items.is_empty(),
        Pb::Map(entries) => entries.is_empty(),
        Pb::Message(_) => false,
    }
}

fn scalar_json(value: &Pb) -> Value {
    match value {
        Pb::Bool(b) => json!(b),
        Pb::I32(v) | Pb::EnumNumber(v) => json!(v),
        Pb::I64(v) => json!(v),
        Pb::U32(v) => json!(v),
        Pb::U64(v) => json!(v),
        Pb::F32(v) => json!(v),
        Pb::F64(v) => json!(v),
        Pb::String(s) => json!(s),
        // `[]byte` is base64 in JSON (a Secret's data).
        Pb::Bytes(b) => json!(base64::engine::general_purpose::STANDARD.encode(b)),
        Pb::List(_) | Pb::Map(_) | Pb::Message(_) => Value::Null,
    }
}

/// `metav1.Time` (RFC 3339, seconds) or `metav1.MicroTime` (microseconds), in UTC.
fn time(seconds: i64, nanos: i64, micro: bool) -> String {
    let nanos = i32::try_from(nanos).unwrap_or(0);
    let Ok(at) = jiff::Timestamp::new(seconds, if micro { nanos } else { 0 }) else {
        return String::new();
    };
    if micro {
        at.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()
    } else {
        at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }
}

/// Go's `time.Duration.String()`: `1h2m3.5s`, `1.5ms`, `0s`.
fn go_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    if n < 1_000_000_000 {
        // Under a second: the largest unit that keeps an integer part.
        let (unit, div) = if n < 1_000 {
            ("ns", 1)
        } else if n < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        return format!("{sign}{}{unit}", fraction(n, div));
    }
    let hours = n / 3_600_000_000_000;
    let minutes = n / 60_000_000_000 % 60;
    let seconds = fraction(n % 60_000_000_000, 1_000_000_000);
    let mut out = sign.to_string();
    if hours > 0 {
        out.push_str(&format!("{hours}h"));
    }
    if hours > 0 || minutes > 0 {
        out.push_str(&format!("{minutes}m"));
    }
    out.push_str(&format!("{seconds}s"));
    out
}

/// `n / div` with its fraction, trailing zeros dropped (`1500, 1000` → `1.5`).
fn fraction(n: u64, div: u64) -> String {
    let whole = n / div;
    let rest = n % div;
    if rest == 0 {
        return whole.to_string();
    }
    let width = div.ilog10() as usize;
    let digits = format!("{rest:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_go_prints_them() {
        assert_eq!(go_duration(0), "0s");
        assert_eq!(go_duration(1_500_000), "1.5ms");
        assert_eq!(go_duration(3_600_000_000_000), "1h0m0s");
        assert_eq!(go_duration(90_500_000_000), "1m30.5s");
        assert_eq!(go_duration(-2_000_000_000), "-2s");
        assert_eq!(go_duration(999), "999ns");
    }

    #[test]
    fn times_print_in_utc() {
        assert_eq!(time(1_700_000_000, 0, false), "2023-11-14T22:13:20Z");
        assert_eq!(
            time(1_700_000_000, 123_456_789, true),
            "2023-11-14T22:13:20.123456Z"
        );
    }
}
