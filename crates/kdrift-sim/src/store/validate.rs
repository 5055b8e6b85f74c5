//! Validation a real server does before storing: the object must decode into its Kubernetes
//! type (type errors are 400/422), unknown fields are dropped, warned about or refused
//! (`fieldValidation`), and names are RFC 1123.
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{ApiError, kind_group};
use crate::resources::ResourceType;
use crate::schema::{Schema, Shape};

/// The `fieldValidation` query parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Drop unknown fields silently.
    Ignore,
    /// Drop them and send a `Warning` header for each (a real server's default).
    #[default]
    Warn,
    /// Refuse the request with 400.
    Strict,
}

impl FieldValidation {
    pub fn parse(text: &str) -> Result<FieldValidation, ApiError> {
        match text {
            "" | "Warn" => Ok(FieldValidation::Warn),
            "Ignore" => Ok(FieldValidation::Ignore),
            "Strict" => Ok(FieldValidation::Strict),
            other => Err(ApiError::BadRequest(format!(
                "fieldValidation parameter unsupported: {other} (supported values: Ignore, Warn, Strict)"
            ))),
        }
    }
}

fn round_trip<T: DeserializeOwned + Serialize>(object: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(object.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(&typed).map_err(|e| e.to_string())
}

/// The object as its Go type would serialize it (what the type does not know is gone), for the
/// built-in kinds; `None` for a custom resource (see [`prune_to_schema`]).
fn typed_form(resource: ResourceType, object: &Value) -> Option<Result<Value, String>> {
    use k8s_openapi::api::{
        apps::v1 as apps, autoscaling::v2 as autoscaling, batch::v1 as batch, core::v1 as core,
        networking::v1 as networking, policy::v1 as policy, rbac::v1 as rbac,
        storage::v1 as storage,
    };
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
    if resource.is_custom() {
        return None;
    }
    Some(match (resource.group(), resource.kind()) {
        ("apps", "Deployment") => round_trip::<apps::Deployment>(object),
        ("apps", "ReplicaSet") => round_trip::<apps::ReplicaSet>(object),
        ("apps", "StatefulSet") => round_trip::<apps::StatefulSet>(object),
        ("apps", "DaemonSet") => round_trip::<apps::DaemonSet>(object),
        ("apps", "ControllerRevision") => round_trip::<apps::ControllerRevision>(object),
        ("", "Pod") => round_trip::<core::Pod>(object),
        ("", "Namespace") => round_trip::<core::Namespace>(object),
        ("", "Event") => round_trip::<core::Event>(object),
        ("", "ConfigMap") => round_trip::<core::ConfigMap>(object),
        ("", "Secret") => round_trip::<core::Secret>(object),
        ("", "Service") => round_trip::<core::Service>(object),
        ("", "ServiceAccount") => round_trip::<core::ServiceAccount>(object),
        ("", "PersistentVolumeClaim") => round_trip::<core::PersistentVolumeClaim>(object),
        ("", "PersistentVolume") => round_trip::<core::PersistentVolume>(object),
        ("", "ResourceQuota") => round_trip::<core::ResourceQuota>(object),
        ("", "LimitRange") => round_trip::<core::LimitRange>(object),
        ("", "Endpoints") => round_trip::<core::Endpoints>(object),
        ("", "Node") => round_trip::<core::Node>(object),
        ("", "PodTemplate") => round_trip::<core::PodTemplate>(object),
        ("", "ReplicationController") => round_trip::<core::ReplicationController>(object),
        ("batch", "Job") => round_trip::<batch::Job>(object),
        ("batch", "CronJob") => round_trip::<batch::CronJob>(object),
        ("autoscaling", "HorizontalPodAutoscaler") => {
            round_trip::<autoscaling::HorizontalPodAutoscaler>(object)
        }
        ("networking.k8s.io", "Ingress") => round_trip::<networking::Ingress>(object),
        ("networking.k8s.io", "IngressClass") => round_trip::<networking::IngressClass>(object),
        ("networking.k8s.io", "NetworkPolicy") => round_trip::<networking::NetworkPolicy>(object),
        ("policy", "PodDisruptionBudget") => round_trip::<policy::PodDisruptionBudget>(object),
        ("rbac.authorization.k8s.io", "Role") => round_trip::<rbac::Role>(object),
        ("rbac.authorization.k8s.io", "RoleBinding") => round_trip::<rbac::RoleBinding>(object),
        ("rbac.authorization.k8s.io", "ClusterRole") => round_trip::<rbac::ClusterRole>(object),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
            round_trip::<rbac::ClusterRoleBinding>(object)
        }
        ("storage.k8s.io", "StorageClass") => round_trip::<storage::StorageClass>(object),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            round_trip::<apiextensions::CustomResourceDefinition>(object)
        }
        // Types the typed library does not know in this version: taken as they are.
        _ => Ok(object.clone()),
    })
}

/// A custom resource pruned to its structural schema, as the apiextensions server prunes it:
/// fields the schema does not declare go (below `x-kubernetes-preserve-unknown-fields` and in
/// schema-less parts, anything goes); a value of the wrong JSON type is an error.
fn prune_to_schema(
    schema: Schema,
    object: &mut Value,
    path: &str,
    unknown: &mut Vec<String>,
) -> Result<(), String> {
    let child = |name: &str| {
        if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        }
    };
    match (schema.shape(), object) {
        (Shape::Struct, Value::Object(map)) => {
            map.retain(|name, value| {
                let keep = schema.declares(name)
                    || schema.preserves_unknown()
                    || (path.is_empty() && matches!(name.as_str(), "apiVersion" | "kind"));
                if !keep && !value.is_null() {
                    unknown.push(child(name));
                }
                keep
            });
            for (name, value) in map.iter_mut() {
                prune_to_schema(schema.field(name), value, &child(name), unknown)?;
            }
            Ok(())
        }
        (Shape::Map, Value::Object(map)) => map.iter_mut().try_for_each(|(name, value)| {
            prune_to_schema(schema.item(), value, &child(name), unknown)
        }),
        (Shape::List, Value::Array(items)) => {
            items.iter_mut().enumerate().try_for_each(|(i, item)| {
                prune_to_schema(schema.item(), item, &format!("{path}[{i}]"), unknown)
            })
        }
        (Shape::Struct | Shape::Map, other) if !other.is_null() => Err(format!(
            "{path}: Invalid value: \"{}\": {path} in body must be of type object: \"{}\"",
            json_kind(other),
            json_kind(other)
        )),
        (Shape::List, other) if !other.is_null() => Err(format!(
            "{path}: Invalid value: \"{}\": {path} in body must be of type array: \"{}\"",
            json_kind(other),
            json_kind(other)
        )),
        _ => Ok(()),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Remove from `object` what its typed form lacks; collect the paths of non-null ones.
fn prune_unknown(object: &mut Value, typed: &Value, path: &str, unknown: &mut Vec<String>) {
    match (object, typed) {
        (Value::Object(map), Value::Object(known)) => {
            map.retain(|key, value| {
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                if known.contains_key(key) {
                    return true;
                }
                if !value.is_null() {
                    unknown.push(child);
                }
                false
            });
            for (key, value) in map.iter_mut() {
                if let Some(known_value) = known.get(key) {
                    let child = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    prune_unknown(value, known_value, &child, unknown);
                }
            }
        }
        (Value::Array(items), Value::Array(known)) => {
            for (i, (item, known_item)) in items.iter_mut().zip(known).enumerate() {
                prune_unknown(item, known_item, &format!("{path}[{i}]"), unknown);
            }
        }
        _ => {}
    }
}

/// Check that `object` decodes as its type and apply `validation` to its unknown fields
/// (removed from `object`). Returns the warnings to send. `patch`: the object is the result
/// of a patch, so a type error is a 422 about the patch, as a real server words it.
pub fn check_typed(
    resource: ResourceType,
    object: &mut Value,
    validation: FieldValidation,
    patch: bool,
) -> Result<Vec<String>, ApiError> {
    if !object.is_object() {
        return Err(ApiError::BadRequest(format!(
            "{} in version \"v1\" cannot be handled as a {}: expected an object",
            resource.kind(),
            resource.kind()
        )));
    }
    let mut unknown = Vec::new();
    match typed_form(resource, object) {
        Some(typed) => {
            let typed = typed.map_err(|e| {
                if patch {
                    // As a real server words it: the whole patched object, quoted, then the
                    // decode error.
                    let quoted =
                        serde_json::to_string(&serde_json::to_string(object).unwrap_or_default())
                            .unwrap_or_default();
                    ApiError::Invalid(format!(
                        " \"\" is invalid: patch: Invalid value: {quoted}: {e}"
                    ))
                } else {
                    ApiError::BadRequest(format!(
                        "{} in version \"{}\" cannot be handled as a {}: {e}",
                        resource.kind(),
                        resource.version(),
                        resource.kind()
                    ))
                }
            })?;
            prune_unknown(object, &typed, "", &mut unknown);
        }
        None => {
            let name = object
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            prune_to_schema(resource.schema(), object, "", &mut unknown).map_err(|cause| {
                ApiError::Invalid(format!(
                    "{} \"{name}\" is invalid: {cause}",
                    kind_group(resource)
                ))
            })?;
        }
    }
    let messages: Vec<String> = unknown
        .iter()
        .map(|p| format!("unknown field \"{p}\""))
        .collect();
    match validation {
        FieldValidation::Ignore => Ok(Vec::new()),
        FieldValidation::Warn => Ok(messages),
        FieldValidation::Strict if messages.is_empty() => Ok(Vec::new()),
        FieldValidation::Strict if patch => Err(ApiError::BadRequest(format!(
            "strict decoding error: {}",
            messages.join(", ")
        ))),
        FieldValidation::Strict => Err(ApiError::BadRequest(format!(
            "{} in version \"v1\" cannot be handled as a {}: strict decoding error: {}",
            resource.kind(),
            resource.kind(),
            messages.join(", ")
        ))),
    }
}

fn is_label(part: &str) -> bool {
    let bytes = part.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.first().is_some_and(|b| *b != b'-')
        && bytes.last().is_some_and(|b| *b != b'-')
}

/// RFC 1123 names as a real server checks them: a label for namespaces, a subdomain otherwise.
pub fn validate_name(resource: ResourceType, name: &str) -> Result<(), ApiError> {
    let (ok, rule) = if resource == ResourceType::NAMESPACE {
        (
            is_label(name),
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        )
    } else {
        (
            name.len() <= 253 && name.split('.').all(is_label),
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        )
    };
    if ok {
        return Ok(());
    }
    Err(ApiError::Invalid(format!(
        "{} \"{name}\" is invalid: metadata.name: Invalid value: \"{name}\": {rule}",
        kind_group(resource)
    )))
}

/// A label map as Go's `%#v` prints it in a validation message: `map[string]string{"app":"web"}`.
fn go_string_map(labels: Option<&serde_json::Map<String, Value>>) -> String {
    let mut pairs: Vec<(&String, &Value)> = labels.into_iter().flatten().collect();
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| {
            let text = v
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| v.to_string());
            format!("{:?}:{:?}", k, text)
        })
        .collect();
    format!("map[string]string{{{}}}", inner.join(", "))
}

/// The rules of a real server's `ValidateService` on ports that clients run into: with more
/// than one port each has a name, names are unique, and so are port and protocol (a Service
/// with two ports named `http` is refused, as a server-side apply adding a port beside one of
/// the same name is).
pub fn validate_service(resource: ResourceType, object: &Value) -> Result<(), ApiError> {
    if resource != ResourceType::SERVICE {
        return Ok(());
    }
    let ports: &[Value] = object
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let mut causes = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    let mut keys: Vec<(String, &str)> = Vec::new();
    for (at, port) in ports.iter().enumerate() {
        let name = port.get("name").and_then(Value::as_str).unwrap_or_default();
        if ports.len() > 1 && name.is_empty() {
            causes.push(format!("spec.ports[{at}].name: Required value"));
        } else if !name.is_empty() && names.contains(&name) {
            causes.push(format!(
                "spec.ports[{at}].name: Duplicate value: \"{name}\""
            ));
        }
        names.push(name);
        let key = (
            port.get("port").map(Value::to_string).unwrap_or_default(),
            port.get("protocol")
                .and_then(Value::as_str)
                .unwrap_or("TCP"),
        );
        if keys.contains(&key) {
            causes.push(format!(
                "spec.ports[{at}]: Duplicate value: core.ServicePort{{Name:\"{name}\", Protocol:\"{}\", Port:{}}}",
                key.1, key.0
            ));
        }
        keys.push(key);
    }
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match causes.as_slice() {
        [] => Ok(()),
        [cause] => Err(ApiError::Invalid(format!(
            "Service \"{name}\" is invalid: {cause}"
        ))),
        many => Err(ApiError::Invalid(format!(
            "Service \"{name}\" is invalid: [{}]",
            many.join(", ")
        ))),
    }
}

/// The workload rules of a real server's `ValidateDeploymentSpec`/`ValidateReplicaSetSpec` that
/// clients run into: a selector is required, not empty, and matches the template's labels.
/// (A server-side apply that drops the selector is refused with these, as on a real server.)
pub fn validate_workload(resource: ResourceType, object: &Value) -> Result<(), ApiError> {
    let workloads = [
        ResourceType::DEPLOYMENT,
        ResourceType::REPLICA_SET,
        ResourceType::STATEFUL_SET,
        ResourceType::DAEMON_SET,
    ];
    if !workloads.contains(&resource) {
        return Ok(());
    }
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let invalid = |cause: String| {
        ApiError::Invalid(format!(
            "{} \"{name}\" is invalid: {cause}",
            kind_group(resource)
        ))
    };
    let selector = match object.pointer("/spec/selector") {
        None | Some(Value::Null) => return Err(invalid("spec.selector: Required value".into())),
        Some(selector) => selector,
    };
    let match_labels = selector.get("matchLabels").and_then(Value::as_object);
    let expressions = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .filter(|e| !e.is_empty());
    if match_labels.is_none_or(serde_json::Map::is_empty) && expressions.is_none() {
        return Err(invalid(format!(
            "spec.selector: Invalid value: v1.LabelSelector{{MatchLabels:{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}}: empty selector is invalid for {}",
            go_string_map(match_labels),
            resource.kind().to_ascii_lowercase()
        )));
    }
    let labels = object
        .pointer("/spec/template/metadata/labels")
        .and_then(Value::as_object);
    let matches = match_labels
        .into_iter()
        .flatten()
        .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v));
    if !matches {
        return Err(invalid(format!(
            "spec.template.metadata.labels: Invalid value: {}: `selector` does not match template `labels`",
            go_string_map(labels)
        )));
    }
    Ok(())
}
