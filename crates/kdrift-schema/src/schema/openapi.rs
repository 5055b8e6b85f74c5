//! Schemas read from the OpenAPI v3 documents an API server publishes (`/openapi/v3/apis/apps/v1`:
//! one document per group-version, custom resources included): each kind's tree of
//! [`Node`]s with the list types and keys, map types, patch strategies, int-or-string and
//! quantity formats and defaults the document declares.
//!
//! Nodes live as long as the process (`&'static`, so that a [`Schema`] stays a copyable
//! pointer on the drift engine's hot path); a document read twice is built once
//! ([`read_document`] keeps what it built by the document's content).
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::Value;

use super::{FieldDef, Format, KeyField, ListType, Node, Schema, Shape, SmpList, UNKNOWN, Zero};

/// A kind as the API names it: `apps`, `v1`, `Deployment` (`""` for the core group).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
pub struct GroupVersionKind {
    #[serde(default)]
    pub group: String,
    pub version: String,
    pub kind: String,
}

impl GroupVersionKind {
    pub fn new(group: &str, version: &str, kind: &str) -> GroupVersionKind {
        GroupVersionKind {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
        }
    }

    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// Why a document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenApiError {
    #[error("not an OpenAPI v3 document: {0}")]
    Malformed(String),
    #[error("the OpenAPI document defines no kind (no x-kubernetes-group-version-kind)")]
    NoKinds,
}

/// One JSON schema of the document (or of a CustomResourceDefinition's `openAPIV3Schema`), with
/// what drift and patches read; descriptions and validations are skipped unread.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawSchema {
    #[serde(rename = "type")]
    ty: Option<String>,
    format: Option<String>,
    pattern: Option<String>,
    #[serde(rename = "$ref")]
    reference: Option<String>,
    all_of: Option<Vec<RawSchema>>,
    one_of: Option<Vec<RawSchema>>,
    any_of: Option<Vec<RawSchema>>,
    properties: Option<BTreeMap<String, RawSchema>>,
    #[serde(default)]
    required: Vec<String>,
    items: Option<Box<RawSchema>>,
    additional_properties: Option<AdditionalProperties>,
    default: Option<Value>,
    #[serde(rename = "x-kubernetes-list-type")]
    list_type: Option<String>,
    #[serde(rename = "x-kubernetes-list-map-keys")]
    list_map_keys: Option<Vec<String>>,
    #[serde(rename = "x-kubernetes-map-type")]
    map_type: Option<String>,
    #[serde(rename = "x-kubernetes-patch-merge-key")]
    patch_merge_key: Option<String>,
    #[serde(rename = "x-kubernetes-patch-strategy")]
    patch_strategy: Option<String>,
    #[serde(rename = "x-kubernetes-preserve-unknown-fields")]
    preserve_unknown_fields: Option<bool>,
    #[serde(rename = "x-kubernetes-int-or-string")]
    int_or_string: Option<bool>,
    #[serde(rename = "x-kubernetes-group-version-kind")]
    group_version_kind: Option<Vec<GroupVersionKind>>,
}

/// `additionalProperties`: a schema, or `true`/`false`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum AdditionalProperties {
    Schema(Box<RawSchema>),
    #[allow(dead_code)]
    Allowed(bool),
}

#[derive(Deserialize)]
struct Document {
    #[serde(default)]
    components: Components,
}

#[derive(Default, Deserialize)]
struct Components {
    #[serde(default)]
    schemas: BTreeMap<String, RawSchema>,
}

/// The kinds a document defines, with their schemas.
pub type Kinds = Arc<[(GroupVersionKind, Schema)]>;

/// Reads the kinds of an OpenAPI v3 document (every definition with an
/// `x-kubernetes-group-version-kind`, less the `…List` kinds and the meta kinds every document
/// repeats: `Status`, `DeleteOptions`, `WatchEvent`).
pub fn read_document(bytes: &[u8]) -> Result<Kinds, OpenApiError> {
    static READ: Mutex<Option<HashMap<u64, Kinds>>> = Mutex::new(None);
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    let digest = hasher.finish();
    let cached = |read: &Mutex<Option<HashMap<u64, Kinds>>>| {
        read.lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|m| m.get(&digest).cloned())
    };
    if let Some(kinds) = cached(&READ) {
        return Ok(kinds);
    }
    let document: Document =
        serde_json::from_slice(bytes).map_err(|e| OpenApiError::Malformed(e.to_string()))?;
    let defs = &document.components.schemas;
    let mut builder = Builder::new(defs);
    let mut kinds = Vec::new();
    for (name, raw) in defs {
        for gvk in raw.group_version_kind.iter().flatten() {
            if gvk.kind.ends_with("List")
                || matches!(gvk.kind.as_str(), "Status" | "DeleteOptions" | "WatchEvent")
                || name.starts_with("io.k8s.apimachinery.")
            {
                continue;
            }
            kinds.push((
                gvk.clone(),
                Schema {
                    node: builder.def(name),
                },
            ));
        }
    }
    if kinds.is_empty() {
        return Err(OpenApiError::NoKinds);
    }
    let kinds: Kinds = kinds.into();
    READ.lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(digest, kinds.clone());
    Ok(kinds)
}

/// Definitions whose Go zero value serializes a field as `null` that the document cannot tell
/// from an absent one: a `metav1.Time` that is not a pointer.
const ZERO_NULL_TIMES: &[(&str, &str)] = &[
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "creationTimestamp",
    ),
    ("io.k8s.api.core.v1.Event", "firstTimestamp"),
    ("io.k8s.api.core.v1.Event", "lastTimestamp"),
    ("io.k8s.api.core.v1.Event", "eventTime"),
];

const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// The Go types behind a definition: built-in kinds are Go structs (zero values, `omitempty`);
/// custom resources are not.
fn is_go_type(def: &str) -> bool {
    def.starts_with("io.k8s.")
}

/// A default that is only the Go zero value a built-in definition marks (`0`, `""`, `{}`):
/// the server does not fill it in.
fn is_zero_marker(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(true) => false,
    }
}

fn leak<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

fn leak_str(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

/// The `$ref` target a schema stands for (`{"$ref": …}` or `{"allOf": [{"$ref": …}]}`).
fn target_of(raw: &RawSchema) -> Option<&str> {
    let reference = match (&raw.reference, &raw.all_of) {
        (Some(r), _) => r.as_str(),
        (None, Some(all)) if all.len() == 1 => all[0].reference.as_deref()?,
        _ => return None,
    };
    reference.strip_prefix("#/components/schemas/")
}

/// Builds nodes from the definitions of one document. A definition is built once and shared; a
/// definition that refers to itself (JSONSchemaProps) is cut there, as a schema-less node.
struct Builder<'d> {
    defs: &'d BTreeMap<String, RawSchema>,
    built: HashMap<&'d str, &'static Node>,
    building: HashSet<&'d str>,
}

impl<'d> Builder<'d> {
    fn new(defs: &'d BTreeMap<String, RawSchema>) -> Builder<'d> {
        Builder {
            defs,
            built: HashMap::new(),
            building: HashSet::new(),
        }
    }

    fn def(&mut self, name: &str) -> &'static Node {
        if let Some(node) = self.built.get(name) {
            return node;
        }
        let Some((name, raw)) = self.defs.get_key_value(name) else {
            return &UNKNOWN;
        };
        if !self.building.insert(name.as_str()) {
            return &UNKNOWN;
        }
        let node = self.node(raw, Some(name), is_go_type(name));
        self.building.remove(name.as_str());
        self.built.insert(name.as_str(), node);
        node
    }

    /// The node of a schema: `def` names the definition it is, if it is one; `go` tells a
    /// schema of a built-in (Go) type.
    fn node(&mut self, raw: &'d RawSchema, def: Option<&str>, go: bool) -> &'static Node {
        if let Some(target) = target_of(raw) {
            let base = self.def(target);
            return self.overlay(base, raw, go);
        }
        let mut node = Node::plain(Shape::Unknown);
        node.format = format_of(raw, def);
        node.default = raw
            .default
            .as_ref()
            .filter(|d| !go || !is_zero_marker(d))
            .map(|d| leak(d.clone()));
        node.retain_keys = raw
            .patch_strategy
            .as_deref()
            .is_some_and(|s| s.split(',').any(|s| s == "retainKeys"));
        node.preserve_unknown = raw.preserve_unknown_fields == Some(true);
        let is_array = raw.ty.as_deref() == Some("array") || raw.items.is_some();
        if let Some(properties) = raw.properties.as_ref().filter(|p| !p.is_empty()) {
            node.shape = Shape::Struct;
            node.atomic = raw.map_type.as_deref() == Some("atomic");
            let mut fields = Vec::with_capacity(properties.len());
            let message = def
                .filter(|_| go)
                .and_then(crate::gotypes::message_of_definition);
            let go_types = crate::gotypes::builtin().ok();
            for (name, property) in properties {
                let child = self.node(property, None, go);
                let zero = match def {
                    Some(def) if go => zero_of(def, name, property, &raw.required, child),
                    _ => Zero::Absent,
                };
                let omits_zero = match (go_types, message.as_deref()) {
                    (Some(types), Some(message)) => {
                        crate::gotypes::omits_zero(types, message, name).unwrap_or(false)
                    }
                    _ => false,
                };
                fields.push(FieldDef {
                    name: leak_str(name),
                    node: child,
                    zero,
                    omits_zero,
                });
            }
            node.fields = Box::leak(fields.into_boxed_slice());
        } else if is_array {
            node.shape = Shape::List;
            let mut item = raw
                .items
                .as_deref()
                .map(|items| self.node(items, None, go))
                .unwrap_or(&UNKNOWN);
            if node.retain_keys {
                // `merge,retainKeys` on a list (pod volumes): each item's patch retains its keys.
                node.retain_keys = false;
                if !item.retain_keys {
                    item = leak(Node {
                        retain_keys: true,
                        ..*item
                    });
                }
            }
            node.elem = Some(item);
            node.list_type = match raw.list_type.as_deref() {
                Some("map") => ListType::Map,
                Some("set") => ListType::Set,
                _ => ListType::Atomic,
            };
            if node.list_type == ListType::Map {
                let keys: Vec<KeyField> = raw
                    .list_map_keys
                    .iter()
                    .flatten()
                    .map(|name| KeyField {
                        name: leak_str(name),
                        default: item
                            .fields
                            .iter()
                            .find(|f| f.name == name)
                            .and_then(|f| f.node.default)
                            .and_then(Value::as_str),
                    })
                    .collect();
                node.keys = Box::leak(keys.into_boxed_slice());
            }
            let merge = raw
                .patch_strategy
                .as_deref()
                .is_some_and(|s| s.split(',').any(|s| s == "merge"));
            node.smp = match (merge, raw.patch_merge_key.as_deref()) {
                (true, Some(key)) => SmpList::MergeByKey(leak_str(key)),
                (true, None) => SmpList::MergePrimitives,
                (false, _) => SmpList::Replace,
            };
        } else if let Some(AdditionalProperties::Schema(values)) = &raw.additional_properties {
            node.shape = Shape::Map;
            node.atomic = raw.map_type.as_deref() == Some("atomic");
            node.elem = Some(self.node(values, None, go));
        } else if raw.ty.as_deref() == Some("object") {
            // An object of any fields (RawExtension, FieldsV1, preserve-unknown-fields): granular.
            node.atomic = raw.map_type.as_deref() == Some("atomic");
        } else if raw.ty.is_some()
            || raw.one_of.is_some()
            || raw.any_of.is_some()
            || node.format != Format::Plain
        {
            node.shape = Shape::Scalar;
        }
        leak(node)
    }

    /// A reference to `base` with the referring property's own extensions (Deployment
    /// `strategy` is `retainKeys` where it is used, not in its definition).
    fn overlay(&mut self, base: &'static Node, raw: &RawSchema, go: bool) -> &'static Node {
        let mut node = Node { ..*base };
        if raw
            .patch_strategy
            .as_deref()
            .is_some_and(|s| s.split(',').any(|s| s == "retainKeys"))
        {
            node.retain_keys = true;
        }
        if raw.map_type.as_deref() == Some("atomic") {
            node.atomic = true;
        }
        if let Some(default) = raw.default.as_ref().filter(|d| !go || !is_zero_marker(d)) {
            node.default = Some(leak(default.clone()));
        }
        if node.retain_keys == base.retain_keys
            && node.atomic == base.atomic
            && node.default.map(|d| d as *const Value) == base.default.map(|d| d as *const Value)
        {
            return base;
        }
        leak(node)
    }
}

fn format_of(raw: &RawSchema, def: Option<&str>) -> Format {
    if def == Some(QUANTITY) {
        return Format::Quantity;
    }
    match raw.format.as_deref() {
        Some("int-or-string") => return Format::IntOrString,
        Some("byte") => return Format::Bytes,
        Some("quantity") => return Format::Quantity,
        _ => {}
    }
    if raw.int_or_string == Some(true) {
        // What kubebuilder writes for a resource.Quantity field of a custom resource.
        if raw
            .pattern
            .as_deref()
            .is_some_and(|p| p.contains("[KMGTPE]i"))
        {
            return Format::Quantity;
        }
        return Format::IntOrString;
    }
    Format::Plain
}

/// How the Go zero value of field `name` of definition `def` serializes (see [`Zero`]).
fn zero_of(def: &str, name: &str, property: &RawSchema, required: &[String], node: &Node) -> Zero {
    if ZERO_NULL_TIMES.contains(&(def, name)) {
        return Zero::Null;
    }
    match &property.default {
        Some(Value::Object(o)) if o.is_empty() && node.shape == Shape::Struct => Zero::Struct,
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) => Zero::Int,
        Some(Value::String(s)) if s.is_empty() => Zero::Str,
        // A required pointer or slice without `omitempty` (a selector, a pod's containers).
        None if required.iter().any(|r| r == name)
            && matches!(node.shape, Shape::Struct | Shape::List | Shape::Map) =>
        {
            Zero::Null
        }
        _ => Zero::Absent,
    }
}
