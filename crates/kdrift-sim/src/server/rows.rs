//! Table bodies written straight from the stored entries: each entry's cells are printed once
//! per write and its metadata is a slice of its JSON; only the ages are filled in per request,
//! so `kubectl get -A` over 10,000 objects costs a copy, not 10,000 parses.
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::Value;

use serde_json::json;

use crate::printers::{self, AGE_MARK, human_duration};
use crate::resources::ResourceType;
use crate::store::Entry;

/// What each row carries besides its cells (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    None,
    #[default]
    Metadata,
    Object,
}

impl IncludeObject {
    pub fn parse(text: Option<&str>) -> IncludeObject {
        match text {
            Some("None") => IncludeObject::None,
            Some("Object") => IncludeObject::Object,
            _ => IncludeObject::Metadata,
        }
    }
}

/// `PartialObjectMetadata` of a parsed object: its metadata only.
pub fn partial_metadata_value(object: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": object.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

fn put_json(out: &mut BytesMut, value: &impl serde::Serialize) {
    let _ = serde_json::to_writer(out.writer(), value);
}

/// One row: `{"cells":[...],"object":...}`.
pub fn write_row(out: &mut BytesMut, entry: &Entry, include: IncludeObject, now: i64) {
    out.put_slice(b"{\"cells\":[");
    for (i, cell) in entry.cells.iter().enumerate() {
        if i > 0 {
            out.put_u8(b',');
        }
        match cell
            .as_str()
            .and_then(|s| s.strip_prefix(AGE_MARK))
            .and_then(|s| s.parse::<i64>().ok())
        {
            Some(since) => put_json(out, &human_duration(now - since)),
            None => put_json(out, cell),
        }
    }
    out.put_u8(b']');
    match include {
        IncludeObject::None => {}
        IncludeObject::Metadata => {
            out.put_slice(b",\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":");
            out.put_slice(&entry.metadata_json());
            out.put_u8(b'}');
        }
        IncludeObject::Object => {
            out.put_slice(b",\"object\":");
            out.put_slice(&entry.json);
        }
    }
    out.put_u8(b'}');
}

/// A whole Table of `entries`; `headers`: with the column definitions.
pub fn table_body(
    resource: ResourceType,
    entries: &[Arc<Entry>],
    include: IncludeObject,
    metadata: &Value,
    headers: bool,
) -> Bytes {
    let now = jiff::Timestamp::now().as_second();
    let mut out = BytesMut::with_capacity(512 + entries.len() * 512);
    out.put_slice(b"{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":");
    put_json(&mut out, metadata);
    out.put_slice(b",\"columnDefinitions\":");
    if headers {
        put_json(&mut out, &printers::columns(resource));
    } else {
        out.put_slice(b"null");
    }
    out.put_slice(b",\"rows\":[");
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            out.put_u8(b',');
        }
        write_row(&mut out, entry, include, now);
    }
    out.put_slice(b"]}");
    out.freeze()
}

/// `PartialObjectMetadata` of an entry, from its cached metadata.
pub fn partial_metadata(entry: &Entry) -> Bytes {
    let mut out = BytesMut::new();
    out.put_slice(
        b"{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":",
    );
    out.put_slice(&entry.metadata_json());
    out.put_u8(b'}');
    out.freeze()
}
