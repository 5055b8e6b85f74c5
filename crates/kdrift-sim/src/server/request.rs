//! What a request asks, read from its query and headers: the query map, `dryRun`, the label
//! and field selectors, the body's media type. The handlers of every verb use these, so this
//! module imports none of them.
use std::collections::HashMap;

use http::{Request, header};
use hyper::body::Incoming;

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
