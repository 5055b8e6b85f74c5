//! The posts to a pod's subresources: `eviction` (policy/v1 Eviction, what `kubectl drain`
//! sends), which deletes the pod unless a PodDisruptionBudget covering it allows no disruption
//! now (429, as a real server answers, and kubectl retries), and `binding` (a Binding naming a
//! node, what a scheduler sends).
use std::sync::Arc;

use http::{Request, StatusCode};
use hyper::body::Incoming;
use serde_json::Value;

use super::ServerState;
use super::request::{Query, dry_run, media_type};
use super::response::{Reply, error_reply, json_value, read_body, status_value};
use super::router::ResourcePath;
use crate::controller::object::str_at;
use crate::error::ApiError;

pub async fn post(
    state: Arc<ServerState>,
    req: Request<Incoming>,
    path: ResourcePath,
    query: Query,
) -> Reply {
    let media = media_type(&req);
    let body = match read_body(req.into_body()).await {
        Ok(b) => b,
        Err(reply) => return reply,
    };
    let sub = path.subresource.as_deref().unwrap_or_default();
    let decoded = match media.as_str() {
        "application/vnd.kubernetes.protobuf" => match sub {
            "eviction" => super::protobuf::decode(("policy/v1", "Eviction"), &body),
            _ => super::protobuf::decode(("v1", "Binding"), &body),
        },
        "" | "application/json" | "*/*" => serde_json::from_slice::<Value>(&body).map_err(|e| {
            ApiError::BadRequest(format!("couldn't get version/kind; json parse error: {e}"))
        }),
        _ => Err(ApiError::UnsupportedMediaType(
            "415: Unsupported Media Type".into(),
        )),
    };
    let ns = path.namespace.as_deref().unwrap_or_default();
    let name = path.name.as_deref().unwrap_or_default();
    let result = decoded.and_then(|object| {
        let named = str_at(&object, &["metadata", "name"]).unwrap_or_default();
        if !named.is_empty() && named != name {
            return Err(ApiError::BadRequest(format!(
                "name in URL does not match name in {} object",
                if sub == "eviction" {
                    "Eviction"
                } else {
                    "Binding"
                }
            )));
        }
        match sub {
            "eviction" => eviction(&state, ns, name, &object, &query),
            _ => binding(&state, ns, name, &object),
        }
    });
    match result {
        Ok(()) => {
            // A success `Status` as these endpoints write it: no message or reason.
            let mut status = status_value(201, "", "", None);
            if let Some(map) = status.as_object_mut() {
                map.remove("message");
                map.remove("reason");
            }
            json_value(StatusCode::CREATED, &status)
        }
        Err(e) => error_reply(&e),
    }
}

fn eviction(
    state: &ServerState,
    ns: &str,
    name: &str,
    request: &Value,
    query: &Query,
) -> Result<(), ApiError> {
    let dry = dry_run(query)?
        || request
            .pointer("/deleteOptions/dryRun")
            .and_then(Value::as_array)
            .is_some_and(|d| d.iter().any(|v| v == "All"));
    state.store.evict_pod(ns, name, dry)
}

fn binding(state: &ServerState, ns: &str, name: &str, request: &Value) -> Result<(), ApiError> {
    let node = str_at(request, &["target", "name"]).unwrap_or_default();
    if node.is_empty() {
        return Err(ApiError::Invalid(format!(
            "Binding.core \"{name}\" is invalid: target.name: Required value"
        )));
    }
    state.store.bind_pod(ns, name, node).map(|_| ())
}
