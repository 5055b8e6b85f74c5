//! `autoscaling/v1` HorizontalPodAutoscalers (what `kubectl autoscale` of kubectl 1.32 and
//! older creates) as a view of the stored `autoscaling/v2` objects, converted as a server
//! converts them: `targetCPUUtilizationPercentage` is the v2 CPU utilization metric; the v2
//! status's conditions and current metrics travel in the annotations a server uses for them.
//!
//! Served: create, replace, get and list as objects (tables, metadata and delete are the v2
//! objects', alike in both versions). Not served: patch and watch in v1, which answer so.
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, StatusCode, header};
use hyper::body::Incoming;
use serde_json::{Map, Value, json};

use super::ServerState;
use super::request::{Query, decode_body, media_type};
use super::response::{Reply, error_reply, json_value, read_body, with_warnings};
use super::router::ResourcePath;
use crate::error::{ApiError, not_found};
use crate::resources::ResourceType;

const V1: &str = "autoscaling/v1";
const V2: &str = "autoscaling/v2";
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";

/// Whether `resource` is the v1 view.
pub fn is_v1(resource: ResourceType) -> bool {
    resource == ResourceType::HORIZONTAL_POD_AUTOSCALER && resource.version() == "v1"
}

/// What v1 does not serve here.
pub fn unserved(verb: &str) -> ApiError {
    ApiError::MethodNotAllowed(format!(
        "the demo cluster does not {verb} autoscaling/v1 horizontalpodautoscalers: use autoscaling/v2"
    ))
}

fn cpu_target(metric: &Value) -> Option<&Value> {
    (metric["type"] == "Resource"
        && metric["resource"]["name"] == "cpu"
        && metric["resource"]["target"]["type"] == "Utilization")
        .then(|| &metric["resource"]["target"]["averageUtilization"])
}

/// A v1 object as the v2 one it is stored as.
pub fn to_v2(v1: &Value) -> Value {
    let mut out = Map::new();
    out.insert("kind".into(), json!("HorizontalPodAutoscaler"));
    out.insert("apiVersion".into(), json!(V2));
    if let Some(meta) = v1.get("metadata") {
        out.insert("metadata".into(), meta.clone());
    }
    let mut spec = Map::new();
    let given = &v1["spec"];
    for key in ["scaleTargetRef", "minReplicas", "maxReplicas"] {
        if let Some(v) = given.get(key).filter(|v| !v.is_null()) {
            spec.insert(key.into(), v.clone());
        }
    }
    if let Some(cpu) = given
        .get("targetCPUUtilizationPercentage")
        .filter(|v| !v.is_null())
    {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": cpu}}}]),
        );
    }
    out.insert("spec".into(), Value::Object(spec));
    Value::Object(out)
}

/// A stored v2 object as v1 shows it.
pub fn to_v1(v2: &Value) -> Value {
    let mut meta = v2.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let status = &v2["status"];
    let mut annotations = Map::new();
    if let Some(conditions) = status.get("conditions").filter(|c| !c.is_null()) {
        annotations.insert(CONDITIONS.into(), json!(conditions.to_string()));
    }
    if let Some(current) = status.get("currentMetrics").filter(|c| !c.is_null()) {
        annotations.insert(CURRENT_METRICS.into(), json!(current.to_string()));
    }
    if !annotations.is_empty()
        && let Some(meta) = meta.as_object_mut()
    {
        let existing = meta.entry("annotations").or_insert_with(|| json!({}));
        if let Some(existing) = existing.as_object_mut() {
            existing.extend(annotations);
        }
    }
    let given = &v2["spec"];
    let mut spec = Map::new();
    for key in ["scaleTargetRef", "minReplicas", "maxReplicas"] {
        if let Some(v) = given.get(key) {
            spec.insert(key.into(), v.clone());
        }
    }
    if let Some(cpu) = given["metrics"]
        .as_array()
        .and_then(|m| m.iter().find_map(cpu_target))
    {
        spec.insert("targetCPUUtilizationPercentage".into(), cpu.clone());
    }
    let mut v1_status = Map::new();
    for key in [
        "observedGeneration",
        "lastScaleTime",
        "currentReplicas",
        "desiredReplicas",
    ] {
        if let Some(v) = status.get(key) {
            v1_status.insert(key.into(), v.clone());
        }
    }
    if !v1_status.contains_key("currentReplicas") {
        v1_status.insert("currentReplicas".into(), json!(0));
    }
    if !v1_status.contains_key("desiredReplicas") {
        v1_status.insert("desiredReplicas".into(), json!(0));
    }
    if let Some(cpu) = status["currentMetrics"].as_array().and_then(|m| {
        m.iter().find_map(|metric| {
            (metric["type"] == "Resource" && metric["resource"]["name"] == "cpu")
                .then(|| metric["resource"]["current"]["averageUtilization"].clone())
                .filter(|v| !v.is_null())
        })
    }) {
        v1_status.insert("currentCPUUtilizationPercentage".into(), cpu);
    }
    json!({
        "kind": "HorizontalPodAutoscaler",
        "apiVersion": V1,
        "metadata": meta,
        "spec": spec,
        "status": v1_status,
    })
}

/// GET of one object or a list, as objects.
pub fn get(state: &ServerState, path: &ResourcePath) -> Reply {
    let ns = path.namespace.as_deref();
    match &path.name {
        Some(name) => match state.store.get(path.resource, ns.unwrap_or(""), name) {
            Some(object) => json_value(StatusCode::OK, &to_v1(&object)),
            None => error_reply(&not_found(path.resource, name)),
        },
        None => {
            let page = state
                .store
                .list_page(path.resource, ns, None, None, &|_| true);
            let items: Vec<Value> = page.items.iter().map(|e| to_v1(&e.value())).collect();
            json_value(
                StatusCode::OK,
                &json!({
                    "kind": "HorizontalPodAutoscalerList",
                    "apiVersion": V1,
                    "metadata": {"resourceVersion": page.resource_version.to_string()},
                    "items": items,
                }),
            )
        }
    }
}

/// POST or PUT of a v1 object: stored as v2, answered as v1.
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
    let body = match read_body(req.into_body()).await {
        Ok(b) => b,
        Err(reply) => return reply,
    };
    let v1 = match decode_body(&media, &body, (V1, "HorizontalPodAutoscaler")) {
        Ok(v) => v,
        Err(e) => return error_reply(&e),
    };
    if let Some(given) = v1.get("apiVersion").and_then(Value::as_str)
        && given != V1
    {
        return error_reply(&ApiError::BadRequest(format!(
            "the API version in the data ({given}) does not match the expected API version ({V1})"
        )));
    }
    let v2 = Bytes::from(to_v2(&v1).to_string());
    let mut v2_path = path.clone();
    v2_path.resource = ResourceType::HORIZONTAL_POD_AUTOSCALER;
    match super::writes::write_inner(
        &state,
        &method,
        "application/json",
        user_agent.as_deref(),
        &v2,
        &v2_path,
        &query,
    ) {
        Ok((code, value, warnings)) => with_warnings(json_value(code, &to_v1(&value)), &warnings),
        Err(e) => error_reply(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_target_is_the_v2_cpu_metric_and_back() {
        let v1 = json!({"apiVersion": V1, "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 80}});
        let v2 = to_v2(&v1);
        assert_eq!(
            v2["spec"]["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}])
        );
        let back = to_v1(&v2);
        assert_eq!(back["spec"], v1["spec"]);
        assert_eq!(back["apiVersion"], V1);
    }
}
