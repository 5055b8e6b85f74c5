//! The verbs on resources: get, list, create, update, patch, delete (and the `/status` and
//! `/scale` subresources), with the query parameters and error replies of a real server.
use std::convert::Infallible;
use std::sync::Arc;

use bytes::{BufMut, BytesMut};
use http::{Method, Request, StatusCode, header};
use hyper::body::Incoming;
use serde_json::{Value, json};

use super::ServerState;
use super::request::{Query, dry_run, selectors};
use super::response::{
    Reply, Wanted, error_reply, full, json_bytes, json_value, negotiate, not_acceptable,
    parse_query, status_value,
};
use super::router::{ResourcePath, Route, route};
use super::rows::{self, IncludeObject};
use super::watch_stream;
use super::writes;
use crate::discovery;
use crate::error::{ApiError, not_found};
use crate::faults::{OpenApiFault, Read};
use crate::resources::ResourceType;
use crate::store::Entry;

/// Every request enters here.
pub async fn handle(state: Arc<ServerState>, req: Request<Incoming>) -> Result<Reply, Infallible> {
    let latency = state.faults.latency();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let query = parse_query(req.uri().query());
    let types = state.store.resource_types();
    let reply = match route(req.uri().path(), &types) {
        Route::Version => json_value(StatusCode::OK, &discovery::version()),
        Route::Health => json_bytes(StatusCode::OK, "ok"),
        Route::CoreVersions => json_value(StatusCode::OK, &discovery::core_versions(state.addr)),
        Route::Groups => json_value(StatusCode::OK, &discovery::groups(&types)),
        Route::Group(g) => match discovery::group(&types, &g) {
            Some(v) => json_value(StatusCode::OK, &v),
            None => page_not_found(),
        },
        Route::OpenApiV2 => openapi_v2(&req),
        Route::OpenApiV3Index | Route::OpenApiV3(_)
            if state.faults.openapi() != OpenApiFault::Served =>
        {
            openapi_fault(state.faults.openapi(), req.uri().path())
        }
        Route::OpenApiV3Index => json_value(
            StatusCode::OK,
            &crate::openapi_v3::index(state.store.openapi_documents().iter()),
        ),
        Route::OpenApiV3(path) => match state
            .store
            .openapi_documents()
            .into_iter()
            .find(|d| d.path == path)
        {
            Some(d) => json_bytes(StatusCode::OK, d.json.clone()),
            None => page_not_found(),
        },
        Route::Resources { group, version }
            if types
                .iter()
                .any(|r| r.group() == group && r.version() == version) =>
        {
            json_value(
                StatusCode::OK,
                &discovery::resources(&types, &group, &version),
            )
        }
        Route::Resource(path) => resource_request(state, req, path, query).await,
        Route::Resources { .. } | Route::Unknown => unknown_path(req.uri().path(), &types),
    };
    Ok(reply)
}

/// `/openapi/v2`: protobuf when the client asks for it (kubectl), else JSON.
fn openapi_v2(req: &Request<Incoming>) -> Reply {
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let (body, content_type) = if crate::openapi_v2::wants_protobuf(accept) {
        (
            bytes::Bytes::from_static(crate::openapi_v2::protobuf()),
            "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
        )
    } else {
        (
            bytes::Bytes::from_static(crate::openapi_v2::json().as_bytes()),
            "application/json",
        )
    };
    let mut reply = hyper::Response::new(full(body));
    reply.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    reply
}

/// `/openapi/v3` under a fault: forbidden as RBAC words it, missing, or broken (the index
/// answers, its documents are not JSON).
fn openapi_fault(fault: OpenApiFault, path: &str) -> Reply {
    match fault {
        OpenApiFault::Forbidden => error_reply(&ApiError::Forbidden(format!(
            "forbidden: User \"kdrift-demo\" cannot get path \"{path}\""
        ))),
        OpenApiFault::Broken if path == "/openapi/v3" => json_bytes(
            StatusCode::OK,
            r#"{"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=BROKEN"},"apis/apps/v1":{"serverRelativeURL":"/openapi/v3/apis/apps/v1?hash=BROKEN"}}}"#,
        ),
        OpenApiFault::Broken => {
            let mut reply = hyper::Response::new(full("<html>502 Bad Gateway</html>"));
            reply.headers_mut().insert(
                header::CONTENT_TYPE,
                http::HeaderValue::from_static("text/html"),
            );
            reply
        }
        OpenApiFault::Missing | OpenApiFault::Served => page_not_found(),
    }
}

/// What a real server answers for a path it does not serve.
/// A path no route takes: below a group the server serves (another version, another resource),
/// a `Status` NotFound, as a real server's group handler answers; elsewhere its mux's text 404.
fn unknown_path(path: &str, types: &[ResourceType]) -> Reply {
    let group = match path.strip_prefix("/apis/") {
        Some(rest) => rest.split('/').next(),
        None => path.strip_prefix("/api/").map(|_| ""),
    };
    match group {
        Some(group) if types.iter().any(|r| r.group() == group) => error_reply(
            &ApiError::NotFound("the server could not find the requested resource".into()),
        ),
        _ => page_not_found(),
    }
}

fn page_not_found() -> Reply {
    let mut reply = hyper::Response::new(full("404 page not found\n"));
    *reply.status_mut() = StatusCode::NOT_FOUND;
    reply.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    reply
}

fn method_not_allowed(method: &Method) -> Reply {
    json_value(
        StatusCode::METHOD_NOT_ALLOWED,
        &status_value(
            405,
            "MethodNotAllowed",
            &format!("the server does not allow this method on the requested resource ({method})"),
            Some(json!({})),
        ),
    )
}

fn verb(method: &Method, path: &ResourcePath, watch: bool) -> &'static str {
    match *method {
        Method::GET if watch => "watch",
        Method::GET if path.name.is_none() => "list",
        Method::GET => "get",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if path.name.is_none() => "deletecollection",
        Method::DELETE => "delete",
        _ => "get",
    }
}

/// 403 as RBAC words it, when a fault forbids the namespace.
fn forbidden(
    state: &ServerState,
    method: &Method,
    path: &ResourcePath,
    watch: bool,
) -> Option<ApiError> {
    let r = path.resource;
    let ns = if r == ResourceType::NAMESPACE {
        path.name.as_deref()
    } else {
        path.namespace.as_deref()
    };
    let scoped = r.namespaced() || ns.is_some();
    let namespace_list = r == ResourceType::NAMESPACE
        && path.name.is_none()
        && state.faults.namespace_list_forbidden();
    // RBAC grants a subresource apart: `pods` may be readable while `pods/log` is not.
    let resource = state.faults.is_resource_forbidden(r.group(), r.plural())
        || path.subresource.as_deref().is_some_and(|sub| {
            state
                .faults
                .is_resource_forbidden(r.group(), &format!("{}/{sub}", r.plural()))
        });
    if !namespace_list && !resource && (!scoped || !state.faults.is_forbidden(ns)) {
        return None;
    }
    let what = if r.group().is_empty() {
        r.plural().to_string()
    } else {
        format!("{}.{}", r.plural(), r.group())
    };
    let scope = match ns {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_string(),
    };
    // RBAC names the subresource (`pods/log`), and a request for one object names it.
    let (resource, verb) = match path.subresource.as_deref() {
        Some(sub @ "log") => (format!("{}/{sub}", r.plural()), "get"),
        Some(sub @ ("binding" | "eviction")) => (format!("{}/{sub}", r.plural()), "create"),
        Some(sub) => (format!("{}/{sub}", r.plural()), verb(method, path, watch)),
        None => (r.plural().to_string(), verb(method, path, watch)),
    };
    let subject = match path.name.as_deref() {
        Some(name) => format!("{what} \"{name}\""),
        None => what,
    };
    Some(ApiError::Forbidden(format!(
        "{subject} is forbidden: User \"kdrift-demo\" cannot {verb} resource \"{resource}\" in API group \"{}\" {scope}",
        r.group()
    )))
}

async fn resource_request(
    state: Arc<ServerState>,
    req: Request<Incoming>,
    path: ResourcePath,
    query: Query,
) -> Reply {
    let watch =
        path.watch_prefix || matches!(query.get("watch").map(String::as_str), Some("true" | "1"));
    let method = req.method().clone();
    if let Some(err) = forbidden(&state, &method, &path, watch) {
        return error_reply(&err);
    }
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let Some(wanted) = negotiate(accept.as_deref()) else {
        return not_acceptable();
    };
    if path.resource.namespaced() && path.namespace.is_none() && path.name.is_some() {
        return error_reply(&ApiError::NotFound(
            "the server could not find the requested resource".into(),
        ));
    }
    if super::autoscaling_v1::is_v1(path.resource) {
        match method {
            Method::POST | Method::PUT => {
                return super::autoscaling_v1::write(state, req, path, query).await;
            }
            Method::GET if watch => {
                return error_reply(&super::autoscaling_v1::unserved("watch"));
            }
            Method::GET if wanted == Wanted::Object => {
                return super::autoscaling_v1::get(&state, &path);
            }
            Method::PATCH => return error_reply(&super::autoscaling_v1::unserved("patch")),
            // Tables, metadata and deletes: the v2 objects', alike in both versions.
            _ => {}
        }
    }
    if super::reviews::answers(&path) {
        return match method {
            Method::POST => super::reviews::post(state, req, path, query).await,
            _ => method_not_allowed(&method),
        };
    }
    match (path.subresource.as_deref(), &method) {
        (Some("log"), &Method::GET) => return super::logs::serve(state, &path, &query).await,
        (Some("eviction" | "binding"), &Method::POST) => {
            return super::pod_posts::post(state, req, path, query).await;
        }
        (Some("log" | "eviction" | "binding"), _) => return method_not_allowed(&method),
        _ => {}
    }
    match method {
        Method::GET if watch => watch_stream::serve(state, path, &query, wanted).await,
        Method::GET if path.name.is_none() => list(&state, &path, &query, wanted),
        Method::GET => get(&state, &path, &query, wanted),
        Method::DELETE if path.name.is_none() => delete_collection(&state, &path, &query),
        Method::DELETE => delete(&state, &path, &query),
        Method::POST if path.name.is_none() => writes::write(state, req, path, query).await,
        Method::PUT | Method::PATCH if path.name.is_some() => {
            writes::write(state, req, path, query).await
        }
        _ => method_not_allowed(&method),
    }
}

/// `kind` and `apiVersion` of a list of `resource`.
fn list_type(resource: ResourceType) -> (String, String) {
    (format!("{}List", resource.kind()), resource.api_version())
}

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<String> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

/// The `continue` token: the list's resourceVersion and the key to continue after.
fn encode_continue(rv: u64, key: &(String, String)) -> String {
    format!("{rv}.{}.{}", hex(&key.0), hex(&key.1))
}

fn decode_continue(token: &str) -> Result<(u64, (String, String)), ApiError> {
    let bad = || ApiError::BadRequest(format!("continue key is not valid: \"{token}\""));
    let mut parts = token.split('.');
    let rv = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
    let ns = parts.next().and_then(unhex).ok_or_else(bad)?;
    let name = parts.next().and_then(unhex).ok_or_else(bad)?;
    Ok((rv, (ns, name)))
}

fn list(state: &ServerState, path: &ResourcePath, query: &Query, wanted: Wanted) -> Reply {
    let (labels, fields) = match selectors(path, query) {
        Ok(s) => s,
        Err(e) => return error_reply(&e),
    };
    let limit = match query.get("limit").map(|l| l.parse::<usize>()) {
        None | Some(Ok(0)) => None,
        Some(Ok(n)) => Some(n),
        Some(Err(_)) => {
            return error_reply(&ApiError::BadRequest(format!(
                "invalid limit: \"{}\"",
                query.get("limit").map(String::as_str).unwrap_or("")
            )));
        }
    };
    if let Some(selector) = query.get("labelSelector").filter(|s| !s.is_empty()) {
        state.faults.note_selected(path.resource.plural(), selector);
    } else if limit != Some(1) && fields.is_empty() {
        state.faults.note_read(path.resource.plural(), Read::Listed);
    }
    let cont = match query
        .get("continue")
        .filter(|c| !c.is_empty())
        .map(|c| decode_continue(c))
    {
        None => None,
        Some(Ok(c)) => Some(c),
        Some(Err(e)) => return error_reply(&e),
    };
    // A list no older than a resourceVersion the server has not reached: 504, as a real server
    // answers once its wait for that version times out (captured from 1.36).
    let current = state.store.resource_version();
    let not_older_than = query
        .get("resourceVersion")
        .and_then(|rv| rv.parse::<u64>().ok());
    if let Some(rv) = not_older_than.filter(|rv| *rv > current)
        && cont.is_none()
        && query.get("resourceVersionMatch").map(String::as_str) != Some("Exact")
    {
        return too_large_resource_version(rv, current);
    }
    let filter = |e: &Entry| labels.matches(&e.labels) && fields.matches(e);
    let ns = path.namespace.as_deref();
    // Every page after the first is served as of the first one's resourceVersion.
    let page = match &cont {
        None => state
            .store
            .list_page(path.resource, ns, None, limit, &filter),
        Some((rv, after)) => {
            match state
                .store
                .list_page_at(path.resource, ns, Some(after), limit, &filter, *rv)
            {
                Ok(page) => page,
                Err(e) => return error_reply(&e),
            }
        }
    };
    let rv = page.resource_version;
    let mut meta = serde_json::Map::new();
    meta.insert("resourceVersion".into(), json!(rv.to_string()));
    if let Some(after) = &page.continue_after {
        meta.insert("continue".into(), json!(encode_continue(rv, after)));
        meta.insert("remainingItemCount".into(), json!(page.remaining));
    }
    let (kind, api_version) = list_type(path.resource);
    match wanted {
        Wanted::Table => {
            let include = IncludeObject::parse(query.get("includeObject").map(String::as_str));
            let meta = Value::Object(meta);
            json_bytes(
                StatusCode::OK,
                rows::table_body(path.resource, &page.items, include, &meta, true),
            )
        }
        Wanted::Metadata => {
            let items: Vec<Value> = page
                .items
                .iter()
                .map(|e| rows::partial_metadata_value(&e.value()))
                .collect();
            json_value(
                StatusCode::OK,
                &json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "items": items}),
            )
        }
        Wanted::Object => {
            // Concatenate the stored serializations: no object is parsed to serve a list.
            let head = serde_json::to_string(
                &json!({"kind": kind, "apiVersion": api_version, "metadata": meta}),
            )
            .unwrap_or_default();
            let size: usize =
                page.items.iter().map(|e| e.json.len() + 1).sum::<usize>() + head.len() + 16;
            let mut body = BytesMut::with_capacity(size);
            body.put_slice(&head.as_bytes()[..head.len().saturating_sub(1)]);
            body.put_slice(b",\"items\":[");
            for (i, e) in page.items.iter().enumerate() {
                if i > 0 {
                    body.put_u8(b',');
                }
                body.put_slice(&e.json);
            }
            body.put_slice(b"]}");
            json_bytes(StatusCode::OK, body.freeze())
        }
    }
}

fn get(state: &ServerState, path: &ResourcePath, query: &Query, wanted: Wanted) -> Reply {
    let name = path.name.as_deref().unwrap_or("");
    let ns = path.namespace.as_deref().unwrap_or("");
    if path.subresource.is_none() {
        state.faults.note_read(path.resource.plural(), Read::ByName);
    }
    let Some(entry) = state.store.get_entry(path.resource, ns, name) else {
        return error_reply(&not_found(path.resource, name));
    };
    if path.subresource.as_deref() == Some("scale") {
        return json_value(StatusCode::OK, &crate::store::scale_of(&entry.value()));
    }
    match wanted {
        Wanted::Object => json_bytes(StatusCode::OK, entry.json.clone()),
        Wanted::Metadata => json_bytes(StatusCode::OK, rows::partial_metadata(&entry)),
        Wanted::Table => {
            let include = IncludeObject::parse(query.get("includeObject").map(String::as_str));
            let meta = json!({"resourceVersion": entry.resource_version.to_string()});
            json_bytes(
                StatusCode::OK,
                rows::table_body(path.resource, &[entry], include, &meta, true),
            )
        }
    }
}

fn deleted_status(resource: ResourceType, object: &Value) -> Value {
    let mut details = json!({
        "name": object.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
        "kind": resource.plural(),
        "uid": object.pointer("/metadata/uid").cloned().unwrap_or(Value::Null),
    });
    if !resource.group().is_empty() {
        details["group"] = json!(resource.group());
    }
    status_value(200, "", "", Some(details))
}

fn delete(state: &ServerState, path: &ResourcePath, query: &Query) -> Reply {
    if path.subresource.is_some() {
        return method_not_allowed(&Method::DELETE);
    }
    let dry = match dry_run(query) {
        Ok(d) => d,
        Err(e) => return error_reply(&e),
    };
    let ns = path.namespace.as_deref().unwrap_or("");
    match state
        .store
        .delete(path.resource, ns, path.name.as_deref().unwrap_or(""), dry)
    {
        Ok(object) => {
            let mut status = deleted_status(path.resource, &object);
            if let Some(map) = status.as_object_mut() {
                map.remove("message");
                map.remove("reason");
            }
            json_value(StatusCode::OK, &status)
        }
        Err(e) => error_reply(&e),
    }
}

fn delete_collection(state: &ServerState, path: &ResourcePath, query: &Query) -> Reply {
    let (dry, (labels, fields)) =
        match dry_run(query).and_then(|d| Ok((d, selectors(path, query)?))) {
            Ok(x) => x,
            Err(e) => return error_reply(&e),
        };
    if path.resource == ResourceType::NAMESPACE {
        return method_not_allowed(&Method::DELETE);
    }
    let filter = |e: &Entry| labels.matches(&e.labels) && fields.matches(e);
    let page = state.store.list_page(
        path.resource,
        path.namespace.as_deref(),
        None,
        None,
        &filter,
    );
    let mut items = Vec::new();
    for e in &page.items {
        if let Ok(object) = state
            .store
            .delete(path.resource, &e.namespace, &e.name, dry)
        {
            items.push(object);
        }
    }
    let (kind, api_version) = list_type(path.resource);
    json_value(
        StatusCode::OK,
        &json!({"kind": kind, "apiVersion": api_version, "metadata": {"resourceVersion": state.store.resource_version().to_string()}, "items": items}),
    )
}

/// `504 Timeout` with cause `ResourceVersionTooLarge`, as a 1.36 server words it (and a
/// `Retry-After` header for its `retryAfterSeconds`, which clients such as kube-rs honour).
fn too_large_resource_version(asked: u64, current: u64) -> Reply {
    let mut reply = json_value(
        StatusCode::GATEWAY_TIMEOUT,
        &json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": format!("Timeout: Too large resource version: {asked}, current: {current}"),
            "reason": "Timeout",
            "details": {
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1
            },
            "code": 504
        }),
    );
    reply
        .headers_mut()
        .insert(header::RETRY_AFTER, http::HeaderValue::from_static("1"));
    reply
}
