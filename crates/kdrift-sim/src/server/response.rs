//! Replies as a real API server shapes them: `Status` objects for errors, JSON bodies, content
//! negotiation (`as=Table`, protobuf with a JSON fallback), bounded request bodies, query strings.
use std::collections::HashMap;
use std::convert::Infallible;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use serde_json::{Value, json};

use crate::error::ApiError;

pub type Body = BoxBody<Bytes, Infallible>;
pub type Reply = Response<Body>;

/// A real server refuses request bodies above 3 MiB.
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

/// A JSON reply with `code`.
pub fn json_bytes(code: StatusCode, body: impl Into<Bytes>) -> Reply {
    let mut reply = Response::new(full(body));
    *reply.status_mut() = code;
    reply.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    reply
}

pub fn json_value(code: StatusCode, body: &Value) -> Reply {
    json_bytes(code, serde_json::to_vec(body).unwrap_or_default())
}

/// A `Status` object as a real server writes it.
pub fn status_value(code: u16, reason: &str, message: &str, details: Option<Value>) -> Value {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": if code < 400 { "Success" } else { "Failure" },
        "message": message,
        "reason": reason,
    });
    if let (Some(d), Some(map)) = (details, status.as_object_mut()) {
        map.insert("details".into(), d);
    }
    if let Some(map) = status.as_object_mut() {
        map.insert("code".into(), json!(code));
    }
    status
}

/// `details` from a message that starts as a real server's do: `deployments.apps "web" ...`
/// or `Deployment.apps "web" is invalid`.
fn details_from_message(message: &str) -> Option<Value> {
    let (what, rest) = message.split_once(" \"")?;
    let name = rest.split('"').next()?;
    // "Operation cannot be fulfilled on deployments.apps": the resource is the last word.
    let what = what.rsplit(' ').next().unwrap_or(what);
    if what.is_empty() {
        return None;
    }
    let (kind, group) = what.split_once('.').unwrap_or((what, ""));
    let mut details = serde_json::Map::new();
    details.insert("name".into(), json!(name));
    if !group.is_empty() {
        details.insert("group".into(), json!(group));
    }
    details.insert("kind".into(), json!(kind));
    Some(Value::Object(details))
}

/// The code, reason and `Status` body of an error.
pub fn error_status(err: &ApiError) -> (u16, Value) {
    let message = err.to_string();
    let (code, reason) = match err {
        ApiError::NotFound(_) => (404, "NotFound"),
        ApiError::AlreadyExists(_) => (409, "AlreadyExists"),
        ApiError::Conflict { .. } => (409, "Conflict"),
        ApiError::TooManyRequests { .. } => (429, "TooManyRequests"),
        ApiError::Invalid(_) => (422, "Invalid"),
        ApiError::BadRequest(_) => (400, "BadRequest"),
        ApiError::Forbidden(_) => (403, "Forbidden"),
        ApiError::Gone(m)
            if m.starts_with("too old resource version")
                || m.starts_with("The provided continue parameter is too old") =>
        {
            (410, "Expired")
        }
        ApiError::Gone(_) => (410, "Gone"),
        ApiError::UnsupportedMediaType(_) => (415, "UnsupportedMediaType"),
        ApiError::MethodNotAllowed(_) => (405, "MethodNotAllowed"),
        ApiError::Internal(_) => (500, "InternalError"),
    };
    let details = match err {
        ApiError::Conflict { causes, .. } if !causes.is_empty() => Some(json!({
            "causes": causes
                .iter()
                .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                .collect::<Vec<_>>()
        })),
        ApiError::TooManyRequests { causes, .. } => Some(json!({
            "causes": causes
                .iter()
                .map(|c| json!({"reason": c.reason, "message": c.message}))
                .collect::<Vec<_>>()
        })),
        ApiError::UnsupportedMediaType(_) | ApiError::MethodNotAllowed(_) => Some(json!({})),
        ApiError::Forbidden(m) => forbidden_details(m),
        ApiError::Invalid(m) => invalid_details(m),
        ApiError::BadRequest(_) | ApiError::Gone(_) | ApiError::Internal(_) => None,
        _ => details_from_message(&message),
    };
    (code, status_value(code, reason, &message, details))
}

/// `Deployment.apps "web" is invalid: spec.replicas: Invalid value: ...` → {name, group, kind,
/// causes: [{reason, message, field}]}, as kubectl prints them.
fn invalid_details(message: &str) -> Option<Value> {
    let (_, rest) = message.split_once(" is invalid: ")?;
    let mut details = details_from_message(message).unwrap_or_else(|| json!({}));
    let (field, cause) = rest.split_once(": ").unwrap_or(("", rest));
    let reason = if cause.starts_with("Required value") {
        "FieldValueRequired"
    } else if cause.starts_with("Forbidden") {
        "FieldValueForbidden"
    } else {
        "FieldValueInvalid"
    };
    details["causes"] = json!([{"reason": reason, "message": cause, "field": field}]);
    Some(details)
}

/// `deployments.apps is forbidden: ...` → {group, kind}; `pods "web-1" is forbidden: ...` →
/// {name, kind}.
fn forbidden_details(message: &str) -> Option<Value> {
    let what = message.split_once(" is forbidden")?.0;
    let (what, name) = match what.split_once(" \"") {
        Some((what, name)) => (what, Some(name.trim_end_matches('"'))),
        None => (what, None),
    };
    let (kind, group) = what.split_once('.').unwrap_or((what, ""));
    let mut details = json!({"kind": kind});
    if !group.is_empty() {
        details["group"] = json!(group);
    }
    if let Some(name) = name {
        details["name"] = json!(name);
    }
    Some(details)
}

pub fn error_reply(err: &ApiError) -> Reply {
    let (code, body) = error_status(err);
    json_value(
        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        &body,
    )
}

/// Add a `Warning` header per message, as a real server does for unknown fields.
pub fn with_warnings(mut reply: Reply, warnings: &[String]) -> Reply {
    for w in warnings {
        let text = format!("299 - \"{}\"", w.replace('\\', "\\\\").replace('"', "\\\""));
        if let Ok(value) = HeaderValue::from_str(&text) {
            reply.headers_mut().append(header::WARNING, value);
        }
    }
    reply
}

/// What the client asked the body to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    /// The object(s) as they are.
    Object,
    /// A `meta.k8s.io/v1` Table.
    Table,
    /// `PartialObjectMetadata(List)`: metadata only.
    Metadata,
}

/// Pick from an `Accept` header. Protobuf is never served; `None` when nothing acceptable is
/// left (a real server says 406).
pub fn negotiate(accept: Option<&str>) -> Option<Wanted> {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return Some(Wanted::Object);
    };
    for media in accept.split(',') {
        let mut parts = media.split(';').map(str::trim);
        let mime = parts.next().unwrap_or("");
        let params: HashMap<&str, &str> = parts.filter_map(|p| p.split_once('=')).collect();
        if !matches!(
            mime,
            "application/json" | "application/*" | "*/*" | "application/yaml"
        ) {
            continue;
        }
        match params.get("as").copied() {
            None => return Some(Wanted::Object),
            Some("Table") if params.get("g").copied() == Some("meta.k8s.io") => {
                return Some(Wanted::Table);
            }
            Some("PartialObjectMetadata" | "PartialObjectMetadataList")
                if params.get("g").copied() == Some("meta.k8s.io")
                    && params.get("v").copied() == Some("v1") =>
            {
                return Some(Wanted::Metadata);
            }
            Some(_) => continue,
        }
    }
    None
}

pub fn not_acceptable() -> Reply {
    json_value(
        StatusCode::NOT_ACCEPTABLE,
        &status_value(
            406,
            "NotAcceptable",
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            Some(json!({})),
        ),
    )
}

/// Read a request body of at most [`MAX_BODY_BYTES`].
pub async fn read_body(body: hyper::body::Incoming) -> Result<Bytes, Reply> {
    match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(json_value(
            StatusCode::PAYLOAD_TOO_LARGE,
            &status_value(
                413,
                "RequestEntityTooLarge",
                &format!("Request entity too large: limit is {MAX_BODY_BYTES}"),
                Some(json!({})),
            ),
        )),
        Err(e) => Err(error_reply(&ApiError::BadRequest(format!(
            "cannot read the request body: {e}"
        )))),
    }
}

/// Percent-decode a query component (`+` is a space).
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The query string as a map (the last value of a repeated key wins).
pub fn parse_query(query: Option<&str>) -> HashMap<String, String> {
    query
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// Percent-decode a path segment.
pub fn decode_path(segment: &str) -> String {
    decode(&segment.replace('+', "%2B"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_decode_as_kubectl_encodes_them() {
        let q = parse_query(Some(
            "labelSelector=app%3Dweb%2Ctier+in+%28a%2Cb%29&limit=500",
        ));
        assert_eq!(
            q.get("labelSelector").map(String::as_str),
            Some("app=web,tier in (a,b)")
        );
        assert_eq!(q.get("limit").map(String::as_str), Some("500"));
    }

    #[test]
    fn kubectl_table_accept_header_asks_for_a_table() {
        let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(negotiate(Some(accept)), Some(Wanted::Table));
        assert_eq!(
            negotiate(Some(
                "application/vnd.kubernetes.protobuf, application/json"
            )),
            Some(Wanted::Object)
        );
        assert_eq!(negotiate(Some("application/vnd.kubernetes.protobuf")), None);
    }

    #[test]
    fn a_not_found_status_has_the_details_a_real_server_gives() {
        let (code, body) = error_status(&ApiError::NotFound(
            "deployments.apps \"nope\" not found".into(),
        ));
        assert_eq!(code, 404);
        let expected = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps \"nope\" not found","reason":"NotFound","details":{"name":"nope","group":"apps","kind":"deployments"},"code":404}"#;
        assert_eq!(serde_json::to_string(&body).unwrap_or_default(), expected);
    }
}
