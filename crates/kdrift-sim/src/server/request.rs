//! What a request asks, read from its query and headers: the query map, `dryRun`, the label
//! and field selectors, the body's media type. The handlers of every verb use these, so this
//! module imports none of them.
use std::collections::HashMap;

use http::{Request, header};
use hyper::body::Incoming;
use serde_json::Value;

use super::router::ResourcePath;
use crate::error::ApiError;
use crate::store::{FieldSelector, LabelSelector};

/// The query string of a request, decoded (see `response::parse_query`).
pub type Query = HashMap<String, String>;

/// `dryRun`: absent or `All`; anything else is refused as a real server refuses it.
pub fn dry_run(query: &Query) -> Result<bool, ApiError> {
    match query.get("dryRun").map(String::as_str) {
        None | Some("") => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(ApiError::BadRequest(format!(
            "Invalid dry run value: {other} (supported values: \"All\")"
        ))),
    }
}

/// The label and field selectors of a list or watch; a watch of one object (`/watch/.../NAME`)
/// selects it by name.
pub fn selectors(
    path: &ResourcePath,
    query: &Query,
) -> Result<(LabelSelector, FieldSelector), ApiError> {
    let labels =
        LabelSelector::parse(query.get("labelSelector").map(String::as_str).unwrap_or(""))?;
    let mut field_text = query.get("fieldSelector").cloned().unwrap_or_default();
    if path.watch_prefix
        && let Some(name) = &path.name
    {
        field_text = if field_text.is_empty() {
            format!("metadata.name={name}")
        } else {
            format!("{field_text},metadata.name={name}")
        };
    }
    let fields = FieldSelector::parse(path.resource, &field_text)?;
    Ok((labels, fields))
}

/// The media type of the body, without parameters, in lower case.
pub fn media_type(req: &Request<Incoming>) -> String {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}

/// The field manager of a write: `fieldManager`, else the user agent's product name, as a real
/// server derives it (`kubectl/v1.32.0 (linux/amd64) ...` → `kubectl`).
pub fn field_manager(query: &Query, user_agent: Option<&str>) -> Result<String, ApiError> {
    if let Some(m) = query.get("fieldManager").filter(|m| !m.is_empty()) {
        if m.len() > 128 {
            return Err(ApiError::Invalid(format!(
                "fieldManager: Too long: may not be longer than 128, given {}",
                m.len()
            )));
        }
        return Ok(m.clone());
    }
    let agent = user_agent.unwrap_or("");
    Ok(agent
        .split('/')
        .next()
        .unwrap_or("")
        .chars()
        .take(128)
        .collect())
}

/// The media type of Kubernetes protobuf.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// Decode a body that holds an object of `expected` (`apiVersion`, `kind`): JSON, YAML or
/// protobuf, as the server holds it once decoded into its Go struct.
pub fn decode_body(media: &str, body: &[u8], expected: (&str, &str)) -> Result<Value, ApiError> {
    let mut value: Value = match media {
        PROTOBUF => super::protobuf::decode(expected, body)?,
        "" | "application/json" | "*/*" => serde_json::from_slice(body).map_err(|e| {
            ApiError::BadRequest(format!("couldn't get version/kind; json parse error: {e}"))
        })?,
        "application/yaml" => serde_yaml::from_slice(body).map_err(|e| {
            ApiError::BadRequest(format!("couldn't get version/kind; yaml parse error: {e}"))
        })?,
        _ => {
            return Err(ApiError::UnsupportedMediaType(
                "415: Unsupported Media Type".into(),
            ));
        }
    };
    if !value.is_object() {
        return Err(ApiError::BadRequest(
            "couldn't get version/kind; json parse error: expected an object".into(),
        ));
    }
    if media != PROTOBUF {
        super::protobuf::as_go_holds(expected, &mut value);
    }
    Ok(value)
}
