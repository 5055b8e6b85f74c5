//! The writes: create (POST), update (PUT) and patch (PATCH), on objects and their `/status`
//! and `/scale` subresources — body decoding by content type, the checks a real server makes
//! against the URL, `fieldManager`, `fieldValidation`, `dryRun` and `force`.
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use hyper::body::Incoming;
use serde_json::{Value, json};

use super::ServerState;
use super::request::{PROTOBUF, Query, decode_body, dry_run, field_manager, media_type};
use super::response::{Reply, error_reply, json_value, read_body, with_warnings};
use super::router::ResourcePath;
use crate::error::ApiError;
use crate::store::{FieldValidation, Patch, WriteOptions};

fn unsupported_media_type() -> ApiError {
    ApiError::UnsupportedMediaType("415: Unsupported Media Type".into())
}

/// Decode a create/update body (JSON, YAML, or protobuf of a built-in kind).
fn decode_object(path: &ResourcePath, media: &str, body: &[u8]) -> Result<Value, ApiError> {
    if path.resource.is_custom() && media == PROTOBUF {
        return Err(unsupported_media_type());
    }
    let (api_version, kind) = body_type(path);
    decode_body(media, body, (&api_version, kind))
}

/// The type of object a write to `path` takes: the resource's, or the subresource's own.
fn body_type(path: &ResourcePath) -> (String, &'static str) {
    match path.subresource.as_deref() {
        Some("scale") => ("autoscaling/v1".into(), "Scale"),
        _ => (path.resource.api_version(), path.resource.kind()),
    }
}

fn decode_patch(media: &str, body: &[u8], force: bool) -> Result<Patch, ApiError> {
    let parse_json = |body: &[u8]| -> Result<Value, ApiError> {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::BadRequest(format!("error decoding patch: {e}")))
    };
    match media {
        "application/json-patch+json" => Ok(Patch::Json(parse_json(body)?)),
        "application/merge-patch+json" => Ok(Patch::Merge(parse_json(body)?)),
        "application/strategic-merge-patch+json" => Ok(Patch::Strategic(parse_json(body)?)),
        "application/apply-patch+yaml" => {
            let config: Value = serde_yaml::from_slice(body)
                .map_err(|e| ApiError::BadRequest(format!("error decoding YAML: {e}")))?;
            if !config.is_object() {
                return Err(ApiError::BadRequest(
                    "error decoding YAML: the applied configuration is not an object".into(),
                ));
            }
            Ok(Patch::Apply { config, force })
        }
        _ => Err(unsupported_media_type()),
    }
}

/// Check a body's `apiVersion`/`kind` against the URL, and fill in its namespace.
fn check_body(path: &ResourcePath, object: &mut Value) -> Result<(), ApiError> {
    let r = path.resource;
    if let Some(v) = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .filter(|v| *v != r.api_version())
    {
        return Err(ApiError::BadRequest(format!(
            "the API version in the data ({v}) does not match the expected API version ({})",
            r.api_version()
        )));
    }
    if let Some(k) = object
        .get("kind")
        .and_then(Value::as_str)
        .filter(|k| *k != r.kind())
    {
        return Err(ApiError::BadRequest(format!(
            "the kind in the data ({k}) does not match the expected kind ({})",
            r.kind()
        )));
    }
    let meta = object
        .as_object_mut()
        .map(|o| o.entry("metadata").or_insert_with(|| json!({})));
    let Some(Value::Object(meta)) = meta else {
        return Err(ApiError::BadRequest("metadata must be an object".into()));
    };
    if let Some(url_ns) = &path.namespace {
        match meta.get("namespace").and_then(Value::as_str) {
            None | Some("") => {
                meta.insert("namespace".into(), json!(url_ns));
            }
            Some(ns) if ns != url_ns => {
                return Err(ApiError::BadRequest(
                    "the namespace of the provided object does not match the namespace sent on the request".into(),
                ));
            }
            Some(_) => {}
        }
    }
    if let Some(url_name) = &path.name {
        match meta.get("name").and_then(Value::as_str) {
            None | Some("") => {
                meta.insert("name".into(), json!(url_name));
            }
            Some(name) if name != url_name => {
                return Err(ApiError::BadRequest(format!(
                    "the name of the object ({name}) does not match the name on the URL ({url_name})"
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

pub async fn write(
    state: Arc<ServerState>,
    req: Request<Incoming>,
    path: ResourcePath,
    query: Query,
) -> Reply {
    let method = req.method().clone();
    let media = media_type(&req);
    let user_agent = req
        .headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    // The permit is held while the body is read and the write is done, then released.
    let Ok(_permit) = state.body_permits.clone().acquire_owned().await else {
        return error_reply(&ApiError::Internal("the server is shutting down".into()));
    };
    let body = match read_body(req.into_body()).await {
        Ok(b) => b,
        Err(reply) => return reply,
    };
    match write_inner(
        &state,
        &method,
        &media,
        user_agent.as_deref(),
        &body,
        &path,
        &query,
    ) {
        Ok((code, value, warnings)) => with_warnings(json_value(code, &value), &warnings),
        Err(e) => error_reply(&e),
    }
}

pub(super) type Written = (StatusCode, Value, Vec<String>);

pub(super) fn write_inner(
    state: &ServerState,
    method: &Method,
    media: &str,
    user_agent: Option<&str>,
    body: &Bytes,
    path: &ResourcePath,
    query: &Query,
) -> Result<Written, ApiError> {
    let store = &state.store;
    let r = path.resource;
    let validation = FieldValidation::parse(
        query
            .get("fieldValidation")
            .map(String::as_str)
            .unwrap_or(""),
    )?;
    let opts = WriteOptions {
        manager: field_manager(query, user_agent)?,
        subresource: path.subresource.clone(),
        dry_run: dry_run(query)?,
    };
    let scale = path.subresource.as_deref() == Some("scale");
    let view = |v: Value| {
        if scale { crate::store::scale_of(&v) } else { v }
    };
    let ns = path.namespace.as_deref().unwrap_or("");
    let name = path.name.as_deref().unwrap_or("");
    match *method {
        Method::POST => {
            let mut object = decode_object(path, media, body)?;
            check_body(path, &mut object)?;
            let (value, warnings) = store.create_validated(r, object, &opts, validation)?;
            Ok((StatusCode::CREATED, value, warnings))
        }
        Method::PUT if scale => {
            let object = decode_object(path, media, body)?;
            let rv = object
                .pointer("/metadata/resourceVersion")
                .cloned()
                .unwrap_or(Value::Null);
            let replicas = object
                .pointer("/spec/replicas")
                .cloned()
                .unwrap_or(json!(0));
            let patch = Patch::Merge(
                json!({"metadata": {"resourceVersion": rv}, "spec": {"replicas": replicas}}),
            );
            let (value, warnings) =
                store.patch_validated(r, ns, name, &patch, &opts, validation)?;
            Ok((StatusCode::OK, view(value), warnings))
        }
        Method::PUT => {
            let mut object = decode_object(path, media, body)?;
            check_body(path, &mut object)?;
            let (value, warnings) = store.update_validated(r, object, &opts, validation)?;
            Ok((StatusCode::OK, value, warnings))
        }
        Method::PATCH => {
            let force = matches!(query.get("force").map(String::as_str), Some("true" | "1"));
            let patch = decode_patch(media, body, force)?;
            if let Patch::Apply { config, .. } = &patch {
                if query.get("fieldManager").is_none_or(|m| m.is_empty()) {
                    return Err(ApiError::BadRequest(
                        "PATCH /apply requires fieldManager".into(),
                    ));
                }
                let mut config = config.clone();
                check_body(path, &mut config)?;
            } else if force {
                return Err(ApiError::BadRequest(
                    "Force is only allowed for apply patches".into(),
                ));
            }
            let existed = store.get_entry(r, ns, name).is_some();
            let (value, warnings) =
                store.patch_validated(r, ns, name, &patch, &opts, validation)?;
            let code = if existed {
                StatusCode::OK
            } else {
                StatusCode::CREATED
            };
            Ok((code, view(value), warnings))
        }
        _ => Err(ApiError::BadRequest(format!(
            "the server does not allow this method on the requested resource ({method})"
        ))),
    }
}
