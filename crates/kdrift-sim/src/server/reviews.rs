//! The requests a server answers and never stores: a ServiceAccount's `token` (a TokenRequest,
//! what `kubectl create token` posts), and the reviews of who the caller is and what it may do
//! (`kubectl auth can-i` posts a SelfSubjectAccessReview, `auth can-i --list` a
//! SelfSubjectRulesReview, `auth whoami` a SelfSubjectReview).
//!
//! The demo cluster has no authentication and no RBAC: everyone is the admin a kubeadm
//! kubeconfig names (`kubernetes-admin`, in `system:masters`), so every review is answered as
//! for that admin — allowed — and a token is made up but never checked.
use std::sync::Arc;

use base64::Engine;
use http::{Request, StatusCode, header};
use hyper::body::Incoming;
use serde_json::{Value, json};

use super::ServerState;
use super::request::{Query, decode_body, dry_run, field_manager, media_type};
use super::response::{Reply, error_reply, json_value, read_body};
use super::router::ResourcePath;
use crate::error::{ApiError, not_found};
use crate::resources::ResourceType;
use crate::schema::Schemas;

/// The user every request of the demo cluster is.
const ADMIN: &str = "kubernetes-admin";
const ADMIN_GROUPS: [&str; 2] = ["kubeadm:cluster-admins", "system:authenticated"];
/// How long a token lives when the request names no `expirationSeconds` (a server's default).
const DEFAULT_EXPIRATION: i64 = 3600;

/// Whether `path` is one of these: then [`post`] answers it.
pub fn answers(path: &ResourcePath) -> bool {
    let r = path.resource;
    r == ResourceType::SELF_SUBJECT_ACCESS_REVIEW
        || r == ResourceType::SELF_SUBJECT_RULES_REVIEW
        || r == ResourceType::SELF_SUBJECT_REVIEW
        || (r == ResourceType::SERVICE_ACCOUNT && path.subresource.as_deref() == Some("token"))
}

pub async fn post(
    state: Arc<ServerState>,
    req: Request<Incoming>,
    path: ResourcePath,
    query: Query,
) -> Reply {
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
    match answer(&state, &path, &query, &media, user_agent.as_deref(), &body) {
        Ok(value) => json_value(StatusCode::CREATED, &value),
        Err(e) => error_reply(&e),
    }
}

fn answer(
    state: &ServerState,
    path: &ResourcePath,
    query: &Query,
    media: &str,
    user_agent: Option<&str>,
    body: &[u8],
) -> Result<Value, ApiError> {
    let (api_version, kind) = if path.resource == ResourceType::SERVICE_ACCOUNT {
        ("authentication.k8s.io/v1".to_string(), "TokenRequest")
    } else {
        (path.resource.api_version(), path.resource.kind())
    };
    let mut object = decode_body(media, body, (&api_version, kind))?;
    for (key, want) in [("apiVersion", api_version.as_str()), ("kind", kind)] {
        match object.get(key).and_then(Value::as_str) {
            None | Some("") => {}
            Some(given) if given == want => {}
            Some(given) => {
                return Err(ApiError::BadRequest(format!(
                    "the {} in the data ({given}) does not match the expected {} ({want})",
                    if key == "kind" { "kind" } else { "API version" },
                    if key == "kind" { "kind" } else { "API version" },
                )));
            }
        }
    }
    dry_run(query)?;
    let manager = field_manager(query, user_agent)?;
    let now = state.store.now_rfc3339();
    let status = if path.resource == ResourceType::SERVICE_ACCOUNT {
        token(state, path, &mut object, &now)?
    } else if path.resource == ResourceType::SELF_SUBJECT_ACCESS_REVIEW {
        json!({"allowed": true})
    } else if path.resource == ResourceType::SELF_SUBJECT_RULES_REVIEW {
        // What the admin's `cluster-admin` binding gives, as a server lists it.
        json!({
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": false
        })
    } else {
        json!({"userInfo": {"username": ADMIN, "groups": ADMIN_GROUPS}})
    };
    let subresource = path.subresource.as_deref();
    let schema = Schemas::builtin()
        .get(&api_version, kind)
        .unwrap_or(crate::schema::Schema::UNKNOWN);
    crate::ssa::record_request(
        schema,
        &api_version,
        &mut object,
        &manager,
        subresource,
        &now,
    );
    // In the order Go writes the type's fields.
    let field = |name: &str| object.get(name).cloned().unwrap_or_else(|| json!({}));
    Ok(json!({
        "kind": kind,
        "apiVersion": api_version,
        "metadata": field("metadata"),
        "spec": field("spec"),
        "status": status,
    }))
}

/// A TokenRequest answered: the ServiceAccount must exist; the token is a JWT shaped as a
/// server's (issuer, audiences, the account's name and uid, expiry), signed by no key.
fn token(
    state: &ServerState,
    path: &ResourcePath,
    request: &mut Value,
    now: &str,
) -> Result<Value, ApiError> {
    let namespace = path.namespace.as_deref().unwrap_or("");
    let name = path.name.as_deref().unwrap_or("");
    let account = state
        .store
        .get(ResourceType::SERVICE_ACCOUNT, namespace, name)
        .ok_or_else(|| not_found(ResourceType::SERVICE_ACCOUNT, name))?;
    let expiration = request
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(DEFAULT_EXPIRATION);
    if expiration < 600 {
        return Err(ApiError::Invalid(format!(
            "TokenRequest.authentication.k8s.io \"{name}\" is invalid: spec.expirationSeconds: Invalid value: {expiration}: may not specify a duration less than 10 minutes"
        )));
    }
    let issued = now
        .parse::<jiff::Timestamp>()
        .map_err(|e| ApiError::Internal(format!("the store's clock: {e}")))?;
    let expires = issued
        .checked_add(jiff::SignedDuration::from_secs(expiration))
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let audiences = match request.pointer("/spec/audiences") {
        Some(Value::Array(list)) if !list.is_empty() => Value::Array(list.clone()),
        _ => json!(["https://kubernetes.default.svc.cluster.local"]),
    };
    let uid = account
        .pointer("/metadata/uid")
        .cloned()
        .unwrap_or(Value::Null);
    let claims = json!({
        "aud": audiences,
        "exp": expires.as_second(),
        "iat": issued.as_second(),
        "iss": "https://kubernetes.default.svc.cluster.local",
        "jti": uuid::Uuid::new_v4().to_string(),
        "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}},
        "nbf": issued.as_second(),
        "sub": format!("system:serviceaccount:{namespace}:{name}"),
    });
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let header = b64(br#"{"alg":"RS256","kid":"kdrift-demo"}"#);
    let signature = b64(uuid::Uuid::new_v4().as_bytes());
    let token = format!(
        "{header}.{}.{signature}",
        b64(claims.to_string().as_bytes())
    );
    // The answer is the request, named as the account, with the defaults a server fills in.
    if let Some(spec) = request.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("audiences".into(), audiences);
        spec.insert("expirationSeconds".into(), json!(expiration));
        spec.entry("boundObjectRef").or_insert(Value::Null);
    }
    if let Some(map) = request.as_object_mut() {
        let meta = map.entry("metadata").or_insert_with(|| json!({}));
        meta["name"] = json!(name);
        meta["namespace"] = json!(namespace);
        meta["uid"] = json!(uuid::Uuid::new_v4().to_string());
        meta["creationTimestamp"] = json!(now);
    }
    Ok(json!({
        "token": token,
        "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    }))
}
