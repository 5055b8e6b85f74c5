//! Request bodies in Kubernetes protobuf (`application/vnd.kubernetes.protobuf`), which kubectl's
//! typed commands send (`kubectl create namespace`, `kubectl create deployment`): the `k8s\0`
//! envelope and the fields of Namespaces and Deployments those commands set, decoded to JSON.
//! Fields outside this schema are skipped, as an older server skips fields it does not know.
use serde_json::{Map, Value, json};

use crate::error::ApiError;
use crate::resources::ResourceType;

#[derive(Clone, Copy)]
enum Kind {
    Str,
    /// An int Go keeps as a value (0 means unset, as `omitempty` drops it from JSON).
    Int,
    /// An int Go keeps behind a pointer (0 is a value).
    IntPtr,
    Bool,
    /// A nested message.
    Msg(&'static [Field]),
    /// `map<string, string>`
    MapStr,
    /// `map<string, Quantity>`
    MapQuantity,
    IntOrString,
}

#[derive(Clone, Copy)]
struct Field {
    number: u64,
    name: &'static str,
    kind: Kind,
    repeated: bool,
}

const fn f(number: u64, name: &'static str, kind: Kind) -> Field {
    Field {
        number,
        name,
        kind,
        repeated: false,
    }
}

const fn list(number: u64, name: &'static str, kind: Kind) -> Field {
    Field {
        number,
        name,
        kind,
        repeated: true,
    }
}

const OBJECT_META: &[Field] = &[
    f(1, "name", Kind::Str),
    f(2, "generateName", Kind::Str),
    f(3, "namespace", Kind::Str),
    f(6, "resourceVersion", Kind::Str),
    f(11, "labels", Kind::MapStr),
    f(12, "annotations", Kind::MapStr),
    list(14, "finalizers", Kind::Str),
];
const NAMESPACE_SPEC: &[Field] = &[list(1, "finalizers", Kind::Str)];
const NAMESPACE: &[Field] = &[
    f(1, "metadata", Kind::Msg(OBJECT_META)),
    f(2, "spec", Kind::Msg(NAMESPACE_SPEC)),
];
const LABEL_SELECTOR: &[Field] = &[f(1, "matchLabels", Kind::MapStr)];
const CONTAINER_PORT: &[Field] = &[
    f(1, "name", Kind::Str),
    f(2, "hostPort", Kind::Int),
    f(3, "containerPort", Kind::Int),
    f(4, "protocol", Kind::Str),
];
const ENV_VAR: &[Field] = &[f(1, "name", Kind::Str), f(2, "value", Kind::Str)];
const RESOURCES: &[Field] = &[
    f(1, "limits", Kind::MapQuantity),
    f(2, "requests", Kind::MapQuantity),
];
const CONTAINER: &[Field] = &[
    f(1, "name", Kind::Str),
    f(2, "image", Kind::Str),
    list(3, "command", Kind::Str),
    list(4, "args", Kind::Str),
    f(5, "workingDir", Kind::Str),
    list(6, "ports", Kind::Msg(CONTAINER_PORT)),
    list(7, "env", Kind::Msg(ENV_VAR)),
    f(8, "resources", Kind::Msg(RESOURCES)),
    f(13, "terminationMessagePath", Kind::Str),
    f(14, "imagePullPolicy", Kind::Str),
    f(20, "terminationMessagePolicy", Kind::Str),
];
const POD_SPEC: &[Field] = &[
    list(2, "containers", Kind::Msg(CONTAINER)),
    f(3, "restartPolicy", Kind::Str),
    f(4, "terminationGracePeriodSeconds", Kind::IntPtr),
    f(6, "dnsPolicy", Kind::Str),
    f(7, "nodeSelector", Kind::MapStr),
    f(8, "serviceAccountName", Kind::Str),
    f(19, "schedulerName", Kind::Str),
];
const POD_TEMPLATE: &[Field] = &[
    f(1, "metadata", Kind::Msg(OBJECT_META)),
    f(2, "spec", Kind::Msg(POD_SPEC)),
];
const ROLLING_UPDATE: &[Field] = &[
    f(1, "maxUnavailable", Kind::IntOrString),
    f(2, "maxSurge", Kind::IntOrString),
];
const STRATEGY: &[Field] = &[
    f(1, "type", Kind::Str),
    f(2, "rollingUpdate", Kind::Msg(ROLLING_UPDATE)),
];
const DEPLOYMENT_SPEC: &[Field] = &[
    f(1, "replicas", Kind::IntPtr),
    f(2, "selector", Kind::Msg(LABEL_SELECTOR)),
    f(3, "template", Kind::Msg(POD_TEMPLATE)),
    f(4, "strategy", Kind::Msg(STRATEGY)),
    f(5, "minReadySeconds", Kind::Int),
    f(6, "revisionHistoryLimit", Kind::IntPtr),
    f(7, "paused", Kind::Bool),
    f(9, "progressDeadlineSeconds", Kind::IntPtr),
];
const DEPLOYMENT: &[Field] = &[
    f(1, "metadata", Kind::Msg(OBJECT_META)),
    f(2, "spec", Kind::Msg(DEPLOYMENT_SPEC)),
];

fn bad(what: &str) -> ApiError {
    ApiError::BadRequest(format!("unable to decode the protobuf body: {what}"))
}

/// A protobuf reader over one message's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, ApiError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self
                .bytes
                .split_first()
                .ok_or_else(|| bad("truncated varint"))?;
            self.bytes = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(bad("varint too long"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ApiError> {
        if n > self.bytes.len() {
            return Err(bad("truncated field"));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    /// The next field: (number, wire type, varint value or bytes).
    fn field(&mut self) -> Result<Option<(u64, Wire<'a>)>, ApiError> {
        if self.bytes.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let wire = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Wire::Skipped
            }
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| bad("length"))?;
                Wire::Bytes(self.take(len)?)
            }
            5 => {
                self.take(4)?;
                Wire::Skipped
            }
            other => return Err(bad(&format!("wire type {other}"))),
        };
        Ok(Some((key >> 3, wire)))
    }
}

enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    /// Fixed-size fields no schema here uses.
    Skipped,
}

fn text(bytes: &[u8]) -> Result<Value, ApiError> {
    std::str::from_utf8(bytes)
        .map(|s| json!(s))
        .map_err(|_| bad("a string is not UTF-8"))
}

/// The (key, value) of a map entry message; the value decoded by `value`.
fn map_entry(
    bytes: &[u8],
    value: impl Fn(&[u8]) -> Result<Value, ApiError>,
) -> Result<(String, Value), ApiError> {
    let mut r = Reader { bytes };
    let (mut key, mut val) = (String::new(), json!(""));
    while let Some((number, wire)) = r.field()? {
        match (number, wire) {
            (1, Wire::Bytes(b)) => key = String::from_utf8_lossy(b).into_owned(),
            (2, Wire::Bytes(b)) => val = value(b)?,
            _ => {}
        }
    }
    Ok((key, val))
}

fn int_or_string(bytes: &[u8]) -> Result<Value, ApiError> {
    let mut r = Reader { bytes };
    let (mut is_string, mut int, mut string) = (false, 0i64, String::new());
    while let Some((number, wire)) = r.field()? {
        match (number, wire) {
            (1, Wire::Varint(t)) => is_string = t == 1,
            (2, Wire::Varint(v)) => int = i64::from(v as i32),
            (3, Wire::Bytes(b)) => string = String::from_utf8_lossy(b).into_owned(),
            _ => {}
        }
    }
    Ok(if is_string { json!(string) } else { json!(int) })
}

fn message(bytes: &[u8], schema: &[Field]) -> Result<Value, ApiError> {
    let mut out = Map::new();
    let mut r = Reader { bytes };
    while let Some((number, wire)) = r.field()? {
        let Some(field) = schema.iter().find(|f| f.number == number) else {
            continue;
        };
        let value = match (field.kind, wire) {
            // Protobuf carries Go's zero values; JSON (omitempty) does not: drop them.
            (Kind::Str, Wire::Bytes([])) | (Kind::Int | Kind::Bool, Wire::Varint(0)) => continue,
            (Kind::Str, Wire::Bytes(b)) => text(b)?,
            (Kind::Int | Kind::IntPtr, Wire::Varint(v)) => json!(v as i64),
            (Kind::Bool, Wire::Varint(v)) => json!(v != 0),
            (Kind::Msg(inner), Wire::Bytes(b)) => message(b, inner)?,
            (Kind::IntOrString, Wire::Bytes(b)) => int_or_string(b)?,
            (Kind::MapStr, Wire::Bytes(b)) => {
                let (k, v) = map_entry(b, text)?;
                let map = out.entry(field.name).or_insert_with(|| json!({}));
                map[k] = v;
                continue;
            }
            (Kind::MapQuantity, Wire::Bytes(b)) => {
                // Quantity is a message with its string in field 1.
                let (k, v) = map_entry(b, |q| {
                    Ok(message(q, &[f(1, "string", Kind::Str)])?["string"].clone())
                })?;
                let map = out.entry(field.name).or_insert_with(|| json!({}));
                map[k] = v;
                continue;
            }
            _ => {
                return Err(bad(&format!(
                    "field {} has the wrong wire type",
                    field.name
                )));
            }
        };
        if field.repeated {
            if let Value::Array(items) = out.entry(field.name).or_insert_with(|| json!([])) {
                items.push(value);
            }
        } else {
            out.insert(field.name.to_string(), value);
        }
    }
    Ok(Value::Object(out))
}

/// `DeleteOptions`, as an eviction carries them.
const DELETE_OPTIONS: &[Field] = &[
    f(1, "gracePeriodSeconds", Kind::IntPtr),
    f(4, "propagationPolicy", Kind::Str),
    list(5, "dryRun", Kind::Str),
];

/// `policy/v1` Eviction, what `kubectl drain` posts to `pods/{name}/eviction`.
const EVICTION: &[Field] = &[
    f(1, "metadata", Kind::Msg(OBJECT_META)),
    f(2, "deleteOptions", Kind::Msg(DELETE_OPTIONS)),
];

/// `v1` Binding, what a scheduler posts to `pods/{name}/binding`.
const BINDING: &[Field] = &[
    f(1, "metadata", Kind::Msg(OBJECT_META)),
    f(
        2,
        "target",
        Kind::Msg(&[
            f(1, "kind", Kind::Str),
            f(3, "name", Kind::Str),
            f(5, "apiVersion", Kind::Str),
        ]),
    ),
];

/// Decode a protobuf request body for `resource` into its JSON form.
pub fn decode(resource: ResourceType, body: &[u8]) -> Result<Value, ApiError> {
    let schema = if resource == ResourceType::NAMESPACE {
        NAMESPACE
    } else if resource == ResourceType::DEPLOYMENT {
        DEPLOYMENT
    } else {
        return Err(ApiError::UnsupportedMediaType(
            "415: Unsupported Media Type".into(),
        ));
    };
    decode_with(schema, body)
}

/// Decode the protobuf body of a post to a pod's `eviction` or `binding`.
pub fn decode_pod_post(subresource: &str, body: &[u8]) -> Result<Value, ApiError> {
    match subresource {
        "eviction" => decode_with(EVICTION, body),
        "binding" => decode_with(BINDING, body),
        _ => Err(ApiError::UnsupportedMediaType(
            "415: Unsupported Media Type".into(),
        )),
    }
}

fn decode_with(schema: &[Field], body: &[u8]) -> Result<Value, ApiError> {
    let envelope = body
        .strip_prefix(b"k8s\0")
        .ok_or_else(|| bad("missing the k8s envelope"))?;
    let mut r = Reader { bytes: envelope };
    let mut raw = None;
    let mut type_meta = Value::Null;
    while let Some((number, wire)) = r.field()? {
        match (number, wire) {
            (1, Wire::Bytes(b)) => {
                type_meta = message(b, &[f(1, "apiVersion", Kind::Str), f(2, "kind", Kind::Str)])?
            }
            (2, Wire::Bytes(b)) => raw = Some(b),
            _ => {}
        }
    }
    let mut object = message(raw.ok_or_else(|| bad("no object in the envelope"))?, schema)?;
    if let Some(map) = object.as_object_mut() {
        for key in ["kind", "apiVersion"] {
            if let Some(v) = type_meta
                .get(key)
                .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
            {
                map.insert(key.to_string(), v.clone());
            }
        }
    }
    Ok(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![
            u8::try_from((number << 3) | 2).unwrap_or(0),
            u8::try_from(payload.len()).unwrap_or(0),
        ];
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn a_namespace_as_kubectl_create_namespace_sends_it() {
        let meta = field(1, b"team-a");
        let ns = field(1, &meta);
        let mut type_meta = field(1, b"v1");
        type_meta.extend(field(2, b"Namespace"));
        let mut body = b"k8s\0".to_vec();
        body.extend(field(1, &type_meta));
        body.extend(field(2, &ns));
        let object = decode(ResourceType::NAMESPACE, &body).unwrap_or(Value::Null);
        assert_eq!(
            object,
            json!({"metadata": {"name": "team-a"}, "kind": "Namespace", "apiVersion": "v1"})
        );
    }

    #[test]
    fn a_truncated_body_is_a_bad_request() {
        let err = decode(ResourceType::DEPLOYMENT, b"k8s\0\x12\x40abc").err();
        assert!(matches!(err, Some(ApiError::BadRequest(_))));
    }
}
