//! The posts to a pod's subresources: `eviction` (policy/v1 Eviction, what `kubectl drain`
//! sends), which deletes the pod unless a PodDisruptionBudget covering it allows no disruption
//! now (429, as a real server answers, and kubectl retries), and `binding` (a Binding naming a
//! node, what a scheduler sends).
use std::sync::Arc;

use http::{Request, StatusCode};
use hyper::body::Incoming;
use jiff::Timestamp;
use serde_json::{Value, json};

use super::ServerState;
use super::handlers::{Query, dry_run};
use super::response::{Reply, error_reply, json_value, read_body, status_value};
use super::router::ResourcePath;
use super::writes::media_type;
use crate::controller::disruption::{covers, evict};
use crate::controller::object::str_at;
use crate::resources::ResourceType;
use crate::store::{ApiError, Patch, StatusCause, WriteOptions, set_condition};

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
        "application/vnd.kubernetes.protobuf" => super::protobuf::decode_pod_post(sub, &body),
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

/// Whether an eviction may skip the budgets: a pod that is not running yet or any more.
fn budget_free(pod: &Value) -> bool {
    matches!(
        str_at(pod, &["status", "phase"]),
        Some("Succeeded" | "Failed" | "Pending")
    )
}

fn eviction(
    state: &ServerState,
    ns: &str,
    name: &str,
    request: &Value,
    query: &Query,
) -> Result<(), ApiError> {
    let store = &state.store;
    let pod = store
        .get(ResourceType::POD, ns, name)
        .ok_or_else(|| crate::store::not_found(ResourceType::POD, name))?;
    let dry = dry_run(query)?
        || request
            .pointer("/deleteOptions/dryRun")
            .and_then(Value::as_array)
            .is_some_and(|d| d.iter().any(|v| v == "All"));
    if !budget_free(&pod) {
        let budgets: Vec<Value> = store
            .list(ResourceType::POD_DISRUPTION_BUDGET, Some(ns))
            .into_iter()
            .filter(|pdb| covers(pdb, &pod))
            .collect();
        if budgets.len() > 1 {
            return Err(ApiError::Internal(
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.".into(),
            ));
        }
        if let Some(pdb) = budgets.first() {
            let status = evict(pdb, name, Timestamp::now()).map_err(|refusal| {
                ApiError::TooManyRequests {
                    message: refusal.message,
                    causes: vec![StatusCause {
                        reason: "DisruptionBudget".into(),
                        message: refusal.cause,
                        field: String::new(),
                    }],
                }
            })?;
            if !dry {
                store.patch(
                    ResourceType::POD_DISRUPTION_BUDGET,
                    ns,
                    str_at(pdb, &["metadata", "name"]).unwrap_or_default(),
                    &Patch::Merge(json!({"status": status})),
                    &WriteOptions::status("kube-apiserver"),
                )?;
            }
        }
    }
    if dry {
        return Ok(());
    }
    let now = store.now_rfc3339();
    store.update_unmanaged(ResourceType::POD, ns, name, |p| {
        set_condition(
            p,
            json!({"lastProbeTime": null, "lastTransitionTime": now, "message": "Eviction API: evicting",
                   "reason": "EvictionByEvictionAPI", "status": "True", "type": "DisruptionTarget"}),
        );
        Ok(())
    })?;
    store.delete(ResourceType::POD, ns, name, false).map(|_| ())
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
