//! The write path of the store: create, update and patch, with the metadata a real API server
//! keeps (uid, creationTimestamp, generation, resourceVersion), defaults, `managedFields`,
//! subresource rules (`status`, `scale`) and `dryRun`.
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::select::entry_fields;
use super::validate::{
    FieldValidation, check_typed, validate_name, validate_service, validate_workload,
};
use super::{Entry, EventType, Inner, Patch, Store, WriteOptions, allocate};
use crate::error::{ApiError, kind_group, not_found, qualified};
use crate::resources::ResourceType;
use crate::schema::defaults;
use crate::{patch, ssa};

fn conflict(resource: ResourceType, name: &str) -> ApiError {
    ApiError::Conflict {
        message: format!(
            "Operation cannot be fulfilled on {}: the object has been modified; please apply your changes to the latest version and try again",
            qualified(resource, name)
        ),
        causes: Vec::new(),
    }
}

/// A time as the API writes it, to the second.
pub fn rfc3339(at: jiff::Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn meta_str<'a>(object: &'a Value, field: &str) -> &'a str {
    object
        .pointer(&format!("/metadata/{field}"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `value` as an object, made one if it is not.
fn as_map(value: &mut Value) -> &mut Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => {
            *other = Value::Object(Map::new());
            as_map(other)
        }
    }
}

fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    as_map(
        as_map(object)
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new())),
    )
}

pub fn set_resource_version(object: &mut Value, rv: u64) {
    metadata_mut(object).insert("resourceVersion".into(), Value::String(rv.to_string()));
}

/// Serialize `object` once and index what selectors need.
pub fn make_entry(resource: ResourceType, object: &Value, rv: u64) -> Arc<Entry> {
    let labels = object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.as_str().into(), v.as_str().unwrap_or("").into()))
                .collect::<Vec<_>>()
                .into_boxed_slice()
        })
        .unwrap_or_default();
    let (json, metadata_range) = serialize(object);
    Arc::new(Entry {
        resource,
        namespace: meta_str(object, "namespace").into(),
        name: meta_str(object, "name").into(),
        resource_version: rv,
        json: bytes::Bytes::from(json),
        labels,
        fields: entry_fields(resource, object),
        cells: crate::printers::deferred_cells(resource, object).into_boxed_slice(),
        metadata_range,
    })
}

/// Serialize an object as `serde_json::to_vec` does, noting where its `metadata` value is.
fn serialize(object: &Value) -> (Vec<u8>, std::ops::Range<usize>) {
    let Value::Object(map) = object else {
        return (serde_json::to_vec(object).unwrap_or_default(), 0..0);
    };
    let mut out = Vec::with_capacity(4096);
    let mut range = 0..0;
    out.push(b'{');
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let _ = serde_json::to_writer(&mut out, key);
        out.push(b':');
        let start = out.len();
        let _ = serde_json::to_writer(&mut out, value);
        if key == "metadata" {
            range = start..out.len();
        }
    }
    out.push(b'}');
    (out, range)
}

/// The `autoscaling/v1` Scale view of a Deployment or ReplicaSet.
pub fn scale_of(object: &Value) -> Value {
    let meta = object.get("metadata").cloned().unwrap_or(Value::Null);
    let selector = object
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
            "creationTimestamp": meta.get("creationTimestamp"),
        },
        "spec": {"replicas": object.pointer("/spec/replicas").cloned().unwrap_or(json!(1))},
        "status": {
            "replicas": object.pointer("/status/replicas").cloned().unwrap_or(json!(0)),
            "selector": selector,
        },
    })
}

/// A pod's QoS class from its containers' requests and limits, as the server computes it.
fn qos_class(pod: &Value) -> &'static str {
    let containers = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut any = false;
    let mut guaranteed = !containers.is_empty();
    for c in &containers {
        let requests = c.pointer("/resources/requests").and_then(Value::as_object);
        let limits = c.pointer("/resources/limits").and_then(Value::as_object);
        any |= requests.is_some_and(|r| !r.is_empty()) || limits.is_some_and(|l| !l.is_empty());
        for res in ["cpu", "memory"] {
            let limit = limits.and_then(|l| l.get(res));
            let request = requests.and_then(|r| r.get(res)).or(limit);
            if limit.is_none() || request != limit {
                guaranteed = false;
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

/// Compare two versions of an object for "nothing changed": managedFields timestamps and the
/// resourceVersion do not count.
fn same_object(a: &Value, b: &Value) -> bool {
    /// Equal maps, ignoring the keys in `skip`; `nested` compares the values of some keys.
    fn maps_equal(
        a: &Map<String, Value>,
        b: &Map<String, Value>,
        skip: &[&str],
        nested: &dyn Fn(&str, &Value, &Value) -> bool,
    ) -> bool {
        let keys =
            |m: &Map<String, Value>| m.keys().filter(|k| !skip.contains(&k.as_str())).count();
        keys(a) == keys(b)
            && a.iter()
                .filter(|(k, _)| !skip.contains(&k.as_str()))
                .all(|(k, va)| b.get(k).is_some_and(|vb| nested(k, va, vb)))
    }
    let entries_equal = |x: &Value, y: &Value| match (x.as_array(), y.as_array()) {
        (Some(xs), Some(ys)) => {
            xs.len() == ys.len()
                && xs
                    .iter()
                    .zip(ys)
                    .all(|(e, f)| match (e.as_object(), f.as_object()) {
                        (Some(e), Some(f)) => maps_equal(e, f, &["time"], &|_, p, q| p == q),
                        _ => e == f,
                    })
        }
        _ => x == y,
    };
    let meta_equal = |x: &Value, y: &Value| match (x.as_object(), y.as_object()) {
        (Some(x), Some(y)) => maps_equal(x, y, &["resourceVersion"], &|k, p, q| {
            if k == "managedFields" {
                entries_equal(p, q)
            } else {
                p == q
            }
        }),
        _ => x == y,
    };
    match (a.as_object(), b.as_object()) {
        (Some(a), Some(b)) => maps_equal(a, b, &[], &|k, p, q| {
            if k == "metadata" {
                meta_equal(p, q)
            } else {
                p == q
            }
        }),
        _ => a == b,
    }
}

fn random_suffix() -> String {
    // Names in generateName use the consonant-and-digit alphabet of a real server.
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let bytes = uuid::Uuid::new_v4().into_bytes();
    bytes[..5]
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

impl Store {
    /// Create with field validation; returns the object and the warnings to send.
    pub fn create_validated(
        &self,
        resource: ResourceType,
        mut object: Value,
        opts: &WriteOptions,
        validation: FieldValidation,
    ) -> Result<(Value, Vec<String>), ApiError> {
        set_type_meta(resource, &mut object);
        let warnings = check_typed(resource, &mut object, validation, false)?;
        allocate::fold_string_data(resource, &mut object);
        if resource.namespaced() && meta_str(&object, "namespace").is_empty() {
            return Err(ApiError::BadRequest(
                "the server could not find the requested resource".into(),
            ));
        }
        if meta_str(&object, "name").is_empty() {
            let prefix = meta_str(&object, "generateName").to_string();
            if prefix.is_empty() {
                return Err(ApiError::Invalid(format!(
                    "{} \"\" is invalid: metadata.name: Required value: name or generateName is required",
                    kind_group(resource)
                )));
            }
            let name = format!("{prefix}{}", random_suffix());
            metadata_mut(&mut object).insert("name".into(), Value::String(name));
        }
        validate_name(resource, meta_str(&object, "name"))?;
        let now = self.now_rfc3339();
        fill_create_metadata(resource, &mut object, &now);
        metadata_mut(&mut object).remove("managedFields");
        defaults::apply_defaults(
            resource.group(),
            resource.kind(),
            resource.schema(),
            &mut object,
        );
        omit_empty(&mut object);
        // What the registry sets after the field manager recorded the write: not the writer's.
        let finalizers = prepared_finalizers(resource, &mut object);
        ssa::record_update(
            resource,
            None,
            &mut object,
            &opts.manager,
            opts.subresource.as_deref(),
            &now,
        );
        prepare_for_create(resource, &mut object, finalizers);
        let mut inner = self.lock();
        self.insert_locked(&mut inner, resource, object, opts.dry_run)
            .map(|v| (v, warnings))
    }

    fn insert_locked(
        &self,
        inner: &mut Inner,
        resource: ResourceType,
        mut object: Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let namespace = meta_str(&object, "namespace").to_string();
        let name = meta_str(&object, "name").to_string();
        self.check_namespace(inner, resource, &namespace)?;
        validate_workload(resource, &object)?;
        validate_service(resource, &object)?;
        allocate::allocate(resource, None, &mut object, &mut inner.allocations);
        if inner
            .objects
            .get(&resource)
            .is_some_and(|m| m.contains_key(&(namespace, name.clone())))
        {
            return Err(ApiError::AlreadyExists(format!(
                "{} already exists",
                qualified(resource, &name)
            )));
        }
        if dry_run {
            return Ok(object);
        }
        inner.resource_version += 1;
        set_resource_version(&mut object, inner.resource_version);
        self.commit_locked(inner, resource, object.clone(), EventType::Added);
        Ok(object)
    }

    /// Update (PUT) with field validation.
    pub fn update_validated(
        &self,
        resource: ResourceType,
        mut object: Value,
        opts: &WriteOptions,
        validation: FieldValidation,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let warnings = check_typed(resource, &mut object, validation, false)?;
        allocate::fold_string_data(resource, &mut object);
        let namespace = if resource.namespaced() {
            meta_str(&object, "namespace").to_string()
        } else {
            String::new()
        };
        let name = meta_str(&object, "name").to_string();
        let sent_rv = meta_str(&object, "resourceVersion").to_string();
        let mut inner = self.lock();
        let old = inner
            .objects
            .get(&resource)
            .and_then(|m| m.get(&(namespace.clone(), name.clone())))
            .cloned()
            .ok_or_else(|| not_found(resource, &name))?;
        if !sent_rv.is_empty() && sent_rv != old.resource_version.to_string() {
            return Err(conflict(resource, &name));
        }
        if opts.subresource.as_deref() == Some("scale") {
            let replicas = object
                .pointer("/spec/replicas")
                .cloned()
                .unwrap_or(json!(1));
            let mut new = old.value();
            if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("replicas".into(), replicas);
            }
            object = new;
        }
        let value = self.finish_update(&mut inner, resource, &old.value(), object, opts, None)?;
        Ok((value, warnings))
    }

    /// Patch with field validation (unknown fields of the patched result).
    pub fn patch_validated(
        &self,
        resource: ResourceType,
        namespace: &str,
        name: &str,
        patch: &Patch,
        opts: &WriteOptions,
        validation: FieldValidation,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let namespace = if resource.namespaced() { namespace } else { "" };
        let mut inner = self.lock();
        let old = inner
            .objects
            .get(&resource)
            .and_then(|m| m.get(&(namespace.to_string(), name.to_string())))
            .cloned();
        let now = self.now_rfc3339();
        let Some(old) = old else {
            let Patch::Apply { config, force } = patch else {
                return Err(not_found(resource, name));
            };
            if opts.subresource.is_some() {
                return Err(not_found(resource, name));
            }
            // Server-side apply of a missing object creates it.
            let mut config = config.clone();
            let meta = metadata_mut(&mut config);
            meta.insert("name".into(), Value::String(name.to_string()));
            if resource.namespaced() {
                meta.insert("namespace".into(), Value::String(namespace.to_string()));
            }
            let warnings = check_typed(resource, &mut config, validation, false)?;
            allocate::fold_string_data(resource, &mut config);
            validate_name(resource, name)?;
            let mut object = ssa::apply(resource, None, &config, &opts.manager, *force, &now)?;
            set_type_meta(resource, &mut object);
            fill_create_metadata(resource, &mut object, &now);
            // As the server decodes the result into its Go struct: the zeros it drops go
            // (`hostNetwork: false`), though the applier's field set keeps them.
            resource.schema().drop_go_zeros(&mut object);
            defaults::apply_defaults(
                resource.group(),
                resource.kind(),
                resource.schema(),
                &mut object,
            );
            omit_empty(&mut object);
            prepare_for_create(resource, &mut object, None);
            return self
                .insert_locked(&mut inner, resource, object, opts.dry_run)
                .map(|v| (v, warnings));
        };
        let old_value = old.value();
        let target = if opts.subresource.as_deref() == Some("scale") {
            scale_of(&old_value)
        } else {
            old_value.clone()
        };
        let patched = match patch {
            Patch::Json(p) => patch::json_patch(&target, p)?,
            Patch::Merge(p) => patch::merge_patch(&target, p)?,
            Patch::Strategic(p) if opts.subresource.as_deref() == Some("scale") => {
                patch::merge_patch(&target, p)?
            }
            Patch::Strategic(p) => patch::strategic_merge_patch(resource, &target, p)?,
            Patch::Apply { config, force } => {
                let mut checked = config.clone();
                check_typed(resource, &mut checked, validation, false)?;
                allocate::fold_string_data(resource, &mut checked);
                ssa::apply(
                    resource,
                    Some(&old_value),
                    &checked,
                    &opts.manager,
                    *force,
                    &now,
                )?
            }
        };
        let sent_rv = meta_str(&patched, "resourceVersion");
        if !sent_rv.is_empty() && sent_rv != old.resource_version.to_string() {
            return Err(conflict(resource, name));
        }
        let mut new = if opts.subresource.as_deref() == Some("scale") {
            let replicas = patched
                .pointer("/spec/replicas")
                .cloned()
                .unwrap_or(json!(1));
            if !replicas.is_i64() {
                return Err(ApiError::BadRequest(format!(
                    "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal {} into Go struct field ScaleSpec.spec.replicas of type int32",
                    json_type(&replicas)
                )));
            }
            let mut new = old_value.clone();
            if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("replicas".into(), replicas);
            }
            new
        } else {
            patched
        };
        let warnings = check_typed(resource, &mut new, validation, true)?;
        allocate::fold_string_data(resource, &mut new);
        let applied = matches!(patch, Patch::Apply { .. }).then_some(());
        let value = self.finish_update(&mut inner, resource, &old_value, new, opts, applied)?;
        Ok((value, warnings))
    }

    fn check_namespace(
        &self,
        inner: &Inner,
        resource: ResourceType,
        namespace: &str,
    ) -> Result<(), ApiError> {
        if !resource.namespaced() {
            return Ok(());
        }
        let exists = inner
            .objects
            .get(&ResourceType::NAMESPACE)
            .is_some_and(|m| m.contains_key(&(String::new(), namespace.to_string())));
        if exists {
            Ok(())
        } else {
            Err(not_found(ResourceType::NAMESPACE, namespace))
        }
    }

    /// The common end of update and patch: keep what the client may not change, default, record
    /// managedFields, bump generation, and store unless nothing changed.
    fn finish_update(
        &self,
        inner: &mut Inner,
        resource: ResourceType,
        old: &Value,
        mut new: Value,
        opts: &WriteOptions,
        applied: Option<()>,
    ) -> Result<Value, ApiError> {
        let name = meta_str(old, "name").to_string();
        let now = self.now_rfc3339();
        let sub = opts.subresource.as_deref();
        set_type_meta(resource, &mut new);
        if sub == Some("status") {
            // A status write changes status only (and may carry managedFields from apply).
            let status = new.get("status").cloned();
            let managed = new.pointer("/metadata/managedFields").cloned();
            new = old.clone();
            match (status, new.as_object_mut()) {
                (Some(s), Some(map)) => {
                    map.insert("status".into(), s);
                }
                (None, Some(map)) => {
                    map.remove("status");
                }
                _ => {}
            }
            if let (Some(m), true) = (managed, applied.is_some()) {
                metadata_mut(&mut new).insert("managedFields".into(), m);
            }
        } else if resource.has_status_subresource() {
            match (old.get("status").cloned(), new.as_object_mut()) {
                (Some(s), Some(map)) => {
                    map.insert("status".into(), s);
                }
                (None, Some(map)) => {
                    map.remove("status");
                }
                _ => {}
            }
        }
        {
            let old_meta = old
                .get("metadata")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let meta = metadata_mut(&mut new);
            for field in [
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "generation",
                "deletionTimestamp",
            ] {
                match old_meta.get(field) {
                    Some(v) => meta.insert(field.into(), v.clone()),
                    None => meta.remove(field),
                };
            }
            if meta
                .get("managedFields")
                .is_none_or(|m| m.as_array().is_none_or(|a| a.is_empty()))
            {
                match old_meta.get("managedFields") {
                    Some(v) => meta.insert("managedFields".into(), v.clone()),
                    None => meta.remove("managedFields"),
                };
            }
            meta.insert(
                "resourceVersion".into(),
                old_meta
                    .get("resourceVersion")
                    .cloned()
                    .unwrap_or(Value::Null),
            );
        }
        // A patch or an apply may set a zero a server drops as it decodes the result.
        resource.schema().drop_go_zeros(&mut new);
        defaults::apply_defaults(
            resource.group(),
            resource.kind(),
            resource.schema(),
            &mut new,
        );
        omit_empty(&mut new);
        template_generation(resource, Some(old), &mut new);
        if applied.is_none() {
            ssa::record_update(resource, Some(old), &mut new, &opts.manager, sub, &now);
        }
        if resource.has_generation() && old.get("spec") != new.get("spec") {
            let generation = old
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0)
                + 1;
            metadata_mut(&mut new).insert("generation".into(), json!(generation));
        }
        allocate::allocate(resource, Some(old), &mut new, &mut inner.allocations);
        if same_object(old, &new) {
            return Ok(old.clone());
        }
        if sub.is_none() {
            validate_workload(resource, &new)?;
            validate_service(resource, &new)?;
        }
        if name.is_empty() {
            return Err(ApiError::Internal("stored object without a name".into()));
        }
        if opts.dry_run {
            return Ok(new);
        }
        inner.resource_version += 1;
        set_resource_version(&mut new, inner.resource_version);
        self.commit_locked(inner, resource, new.clone(), EventType::Modified);
        Ok(new)
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
        Value::Number(_) => "number",
    }
}

/// What a real server does to `status` on create: the workloads and most types with a status
/// start with an empty one (their controller writes it), Services and Ingresses with an empty
/// load balancer, claims Pending, Pods Pending with their QoS class, Namespaces Active; a custom
/// resource's status (with the subresource) is dropped.
fn prepare_create_status(resource: ResourceType, object: &mut Value, name: &str) {
    let name = name.to_string();
    let Some(map) = object.as_object_mut() else {
        return;
    };
    match (resource.group(), resource.kind()) {
        ("", "Service") | ("networking.k8s.io", "Ingress") => {
            map.insert("status".into(), json!({"loadBalancer": {}}));
        }
        ("", "PersistentVolumeClaim") => {
            map.insert("status".into(), json!({"phase": "Pending"}));
        }
        ("", "Pod") => {
            // A status sent on create is dropped: the kubelet (here, the controller) writes it.
            let qos = qos_class(&Value::Object(map.clone()));
            map.insert(
                "status".into(),
                json!({"phase": "Pending", "qosClass": qos}),
            );
        }
        ("", "Namespace") => {
            map.insert("spec".into(), json!({"finalizers": ["kubernetes"]}));
            map.insert("status".into(), json!({"phase": "Active"}));
            let meta = metadata_mut(object);
            let labels = meta.entry("labels").or_insert_with(|| json!({}));
            if let Some(labels) = labels.as_object_mut() {
                labels.insert("kubernetes.io/metadata.name".into(), Value::String(name));
            }
        }
        _ if resource.is_custom() && resource.has_status_subresource() => {
            map.remove("status");
        }
        _ if resource.is_custom() => {}
        _ if resource.has_status_subresource() => {
            map.insert("status".into(), json!({}));
        }
        _ => {}
    }
}

/// `Deployment.apps`, `Pod`: the kind as a real server names it in validation messages.
/// Lists and string maps of the API types are `omitempty`: a server never stores an empty one
/// (a JSON patch that removes the last env var leaves no `env: []`). `containers` is the one
/// list of these kinds that is not. Empty structs (`securityContext: {}`) stay.
fn omit_empty(value: &mut Value) {
    const STRING_MAPS: [&str; 6] = [
        "labels",
        "annotations",
        "matchLabels",
        "nodeSelector",
        "limits",
        "requests",
    ];
    match value {
        Value::Object(map) => {
            for child in map.values_mut() {
                omit_empty(child);
            }
            map.retain(|name, child| match child {
                Value::Array(items) => !items.is_empty() || name == "containers",
                Value::Object(fields) => {
                    !fields.is_empty() || !STRING_MAPS.contains(&name.as_str())
                }
                _ => true,
            });
        }
        Value::Array(items) => items.iter_mut().for_each(omit_empty),
        _ => {}
    }
}

/// uid, creationTimestamp, generation and the create-time status of a new object.
fn fill_create_metadata(resource: ResourceType, object: &mut Value, now: &str) {
    let name = meta_str(object, "name").to_string();
    let meta = metadata_mut(object);
    if !resource.namespaced() {
        meta.remove("namespace");
    }
    meta.insert(
        "uid".into(),
        Value::String(uuid::Uuid::new_v4().to_string()),
    );
    meta.insert("creationTimestamp".into(), Value::String(now.to_string()));
    meta.remove("resourceVersion");
    meta.remove("deletionTimestamp");
    if resource.has_generation() {
        meta.insert("generation".into(), json!(1));
    } else {
        meta.remove("generation");
    }
    prepare_create_status(resource, object, &name);
    template_generation(resource, None, object);
}

/// A Namespace's `spec.finalizers` that the defaults filled in (the registry's, not the
/// writer's), taken out until the write is recorded.
fn prepared_finalizers(resource: ResourceType, object: &mut Value) -> Option<Value> {
    if resource != ResourceType::NAMESPACE {
        return None;
    }
    let spec = object.get_mut("spec")?.as_object_mut()?;
    if spec.get("finalizers") != Some(&json!(["kubernetes"])) {
        return None;
    }
    spec.remove("finalizers")
}

/// What a real server's registry sets on a new object after its field manager has recorded the
/// write (`PrepareForCreate`), so owned by no one: a Namespace's finalizers; a Job's generated
/// selector and the labels it selects (by the Job's uid), unless `manualSelector`.
fn prepare_for_create(resource: ResourceType, object: &mut Value, finalizers: Option<Value>) {
    if let Some(finalizers) = finalizers
        && let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut)
    {
        spec.insert("finalizers".into(), finalizers);
    }
    if resource != ResourceType::JOB || object.pointer("/spec/manualSelector") == Some(&json!(true))
    {
        return;
    }
    let uid = meta_str(object, "uid").to_string();
    let name = meta_str(object, "name").to_string();
    let generated = [
        ("batch.kubernetes.io/controller-uid", uid.as_str()),
        ("batch.kubernetes.io/job-name", name.as_str()),
        ("controller-uid", uid.as_str()),
        ("job-name", name.as_str()),
    ];
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    spec.insert(
        "selector".into(),
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}),
    );
    let template = as_map(spec.entry("template").or_insert_with(|| json!({})));
    let template_meta = as_map(template.entry("metadata").or_insert_with(|| json!({})));
    let labels = as_map(template_meta.entry("labels").or_insert_with(|| json!({})));
    for (key, value) in generated {
        labels.insert(key.into(), json!(value));
    }
    let labels = Value::Object(labels.clone());
    let meta = metadata_mut(object);
    if meta
        .get("labels")
        .and_then(Value::as_object)
        .is_none_or(|l| l.is_empty())
    {
        meta.insert("labels".into(), labels);
    }
}

/// A DaemonSet's `deprecated.daemonset.template.generation` annotation: 1 on create, one more
/// each time its pod template changes (the registry writes it, so the writer owns it).
fn template_generation(resource: ResourceType, old: Option<&Value>, new: &mut Value) {
    const ANNOTATION: &str = "deprecated.daemonset.template.generation";
    if resource != ResourceType::DAEMON_SET {
        return;
    }
    let previous = old
        .and_then(|o| o.pointer("/metadata/annotations"))
        .and_then(|a| a.get(ANNOTATION))
        .and_then(Value::as_str)
        .and_then(|g| g.parse::<u64>().ok());
    let generation = match (old, previous) {
        (Some(old), Some(g)) if old.pointer("/spec/template") == new.pointer("/spec/template") => g,
        (_, g) => g.unwrap_or(0) + 1,
    };
    let meta = metadata_mut(new);
    let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
    if let Some(annotations) = annotations.as_object_mut() {
        annotations.insert(ANNOTATION.into(), json!(generation.to_string()));
    }
}

/// `apiVersion` and `kind` first, as a real server serializes them.
fn set_type_meta(resource: ResourceType, object: &mut Value) {
    let Value::Object(map) = object else { return };
    if map.get("apiVersion").and_then(Value::as_str) == Some(resource.api_version().as_str())
        && map.get("kind").and_then(Value::as_str) == Some(resource.kind())
        && map.keys().take(2).eq(["apiVersion", "kind"])
    {
        return;
    }
    let mut ordered = Map::new();
    ordered.insert("apiVersion".into(), json!(resource.api_version()));
    ordered.insert("kind".into(), json!(resource.kind()));
    for (k, v) in std::mem::take(map) {
        if k != "apiVersion" && k != "kind" {
            ordered.insert(k, v);
        }
    }
    *map = ordered;
}
