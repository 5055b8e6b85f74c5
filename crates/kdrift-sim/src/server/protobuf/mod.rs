//! Request bodies in Kubernetes protobuf (`application/vnd.kubernetes.protobuf`), which
//! client-go's typed clients send — kubectl's `create` generators, `autoscale`, `create token`,
//! `auth can-i`, `drain`, and any controller built on client-go — decoded to the JSON the real
//! server would hold: the `k8s\0` envelope (`runtime.Unknown`), then the object by the upstream
//! `.proto` definitions of v1.36 (`proto/`; their descriptor set `proto/kubernetes.fds`, which a
//! test holds to the `.proto` text) with `prost-reflect`, written as Go writes the struct it
//! decodes into ([`json`], by the struct tags of [`kdrift_schema::gotypes`]). Fields the definitions do not know are skipped, as a server skips them.
use std::sync::LazyLock;

use kdrift_schema::gotypes::{self, GoTypes};
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, Value as Pb};
use serde_json::{Map, Value};

use crate::error::ApiError;

mod json;
mod trim;

/// The compiled descriptors and the Go types, read once.
struct Schema {
    pool: DescriptorPool,
    types: &'static GoTypes,
}

static SCHEMA: LazyLock<Result<Schema, String>> = LazyLock::new(|| {
    let pool = DescriptorPool::decode(include_bytes!("../../../proto/kubernetes.fds").as_slice())
        .map_err(|e| format!("the compiled Kubernetes descriptors do not load: {e}"))?;
    let types = gotypes::builtin()?;
    Ok(Schema { pool, types })
});

const UNKNOWN: &str = "k8s.io.apimachinery.pkg.runtime.Unknown";

fn bad(what: impl std::fmt::Display) -> ApiError {
    ApiError::BadRequest(format!("unable to decode the protobuf body: {what}"))
}

fn unsupported() -> ApiError {
    ApiError::UnsupportedMediaType("415: Unsupported Media Type".into())
}

/// The protobuf package of an API group's version, as go-to-protobuf names it.
fn package(api_version: &str) -> String {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    match group {
        "" => format!("k8s.io.api.core.{version}"),
        "apiextensions.k8s.io" => {
            format!("k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.{version}")
        }
        "meta.k8s.io" => format!("k8s.io.apimachinery.pkg.apis.meta.{version}"),
        group => {
            let short = group.split('.').next().unwrap_or(group);
            format!("k8s.io.api.{short}.{version}")
        }
    }
}

fn descriptor(schema: &Schema, api_version: &str, kind: &str) -> Option<MessageDescriptor> {
    schema
        .pool
        .get_message_by_name(&format!("{}.{kind}", package(api_version)))
}

/// Decode a protobuf body that should hold an object of `expected` (`apiVersion`, `kind`), as
/// the endpoint takes it; the envelope's own type comes first when it names one (a mismatch is
/// then refused by the write's checks, as on a real server).
pub fn decode(expected: (&str, &str), body: &[u8]) -> Result<Value, ApiError> {
    let schema = SCHEMA.as_ref().map_err(|e| ApiError::Internal(e.clone()))?;
    let envelope = body
        .strip_prefix(b"k8s\0")
        .ok_or_else(|| bad("missing the k8s envelope"))?;
    let unknown_desc = schema
        .pool
        .get_message_by_name(UNKNOWN)
        .ok_or_else(|| ApiError::Internal(format!("no {UNKNOWN} in the descriptors")))?;
    let unknown = DynamicMessage::decode(unknown_desc, envelope).map_err(bad)?;
    let text = |message: &DynamicMessage, name: &str| -> String {
        match message.get_field_by_name(name).as_deref() {
            Some(Pb::String(s)) => s.clone(),
            _ => String::new(),
        }
    };
    let encoding = text(&unknown, "contentEncoding");
    if !encoding.is_empty() {
        return Err(bad(format!(
            "content encoding {encoding:?} is not supported"
        )));
    }
    let content_type = text(&unknown, "contentType");
    if !content_type.is_empty() && content_type != "application/vnd.kubernetes.protobuf" {
        return Err(bad(format!(
            "content type {content_type:?} in the envelope"
        )));
    }
    let (api_version, kind) = match unknown.get_field_by_name("typeMeta").as_deref() {
        Some(Pb::Message(type_meta)) => (text(type_meta, "apiVersion"), text(type_meta, "kind")),
        _ => (String::new(), String::new()),
    };
    let raw = match unknown.get_field_by_name("raw").as_deref() {
        Some(Pb::Bytes(raw)) => raw.clone(),
        _ => return Err(bad("no object in the envelope")),
    };
    let (want_version, want_kind) = if api_version.is_empty() || kind.is_empty() {
        expected
    } else {
        (api_version.as_str(), kind.as_str())
    };
    // A kind without a protobuf definition (a custom resource): the server takes no protobuf.
    let desc = descriptor(schema, want_version, want_kind).ok_or_else(unsupported)?;
    let message = DynamicMessage::decode(desc, raw).map_err(bad)?;
    let walked = json::Walker {
        types: schema.types,
    }
    .message(&message)
    .map_err(bad)?;
    // TypeMeta is inlined first in Go's struct: kind, then apiVersion.
    let mut object = Map::new();
    if !kind.is_empty() {
        object.insert("kind".into(), Value::String(kind));
    }
    if !api_version.is_empty() {
        object.insert("apiVersion".into(), Value::String(api_version));
    }
    if let Value::Object(fields) = walked {
        object.extend(fields);
    }
    Ok(Value::Object(object))
}

/// A JSON or YAML body of `expected` (`apiVersion`, `kind`) as the server holds it once decoded
/// into its Go struct ([`trim::trim`]); a kind without a Go type (a custom resource) is left as
/// it is.
pub fn as_go_holds(expected: (&str, &str), object: &mut Value) {
    let Ok(schema) = SCHEMA.as_ref() else {
        return;
    };
    if let (Some(desc), Value::Object(object)) =
        (descriptor(schema, expected.0, expected.1), object)
    {
        trim::trim(schema.types, &desc, object);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
