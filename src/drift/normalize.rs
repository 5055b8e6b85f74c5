//! Equality by meaning: quantities numerically, int-or-string values as values, numbers as
//! numbers, and which fields are never drift (server-managed metadata, `status`, annotations).
use serde_json::Value;

use super::path::DriftPath;
use super::quantity::same_quantity;
use crate::packed::{Kind, NodeRef};
use crate::schema::{Format, Schema};

/// Fields of type int-or-string where the kind has no schema: `8080` and `"8080"` are the same
/// value there. (With a schema, its `format` says.)
const INT_OR_STRING: &[&str] = &[
    "maxSurge",
    "maxUnavailable",
    "targetPort",
    "port",
    "minAvailable",
];

/// Maps whose values are resource quantities (`resources.limits`, quota `hard`, ...), where the
/// kind has no schema.
const QUANTITY_MAPS: &[&str] = &[
    "limits",
    "requests",
    "overhead",
    "hard",
    "capacity",
    "allocatable",
];

/// Fields holding one quantity.
const QUANTITY_FIELDS: &[&str] = &["sizeLimit", "storage"];

/// Metadata the server writes; never drift.
const SERVER_METADATA: &[&str] = &[
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
    "managedFields",
    "generateName",
];

/// Annotations the server or the client tools write; never drift.
const SERVER_ANNOTATIONS: &[&str] = &[
    "deployment.kubernetes.io/revision",
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/desired-replicas",
    "deployment.kubernetes.io/max-replicas",
    "deprecated.daemonset.template.generation",
];

/// Labels the server sets itself: a Namespace's name label.
const SERVER_LABELS: &[&str] = &["kubernetes.io/metadata.name"];

/// True for a field the server or the client tools keep for themselves (the metadata, the
/// annotations and the labels above: kubectl's last-applied configuration, a Namespace's name
/// label): never drift, and nothing a manifest says or could disagree with.
pub fn is_bookkeeping(path: &crate::managed_fields::FieldPath) -> bool {
    use crate::managed_fields::PathElement;
    match path.0.as_slice() {
        [PathElement::Field(meta), PathElement::Field(name)] => {
            meta == "metadata" && SERVER_METADATA.contains(&name.as_str())
        }
        [
            PathElement::Field(meta),
            PathElement::Field(map),
            PathElement::Field(name),
        ] if meta == "metadata" => match map.as_str() {
            "annotations" => SERVER_ANNOTATIONS.contains(&name.as_str()),
            "labels" => SERVER_LABELS.contains(&name.as_str()),
            _ => false,
        },
        _ => false,
    }
}

/// Labels and annotations GitOps controllers add to what they apply (Flux's owner labels, Argo
/// CD's tracking annotation, Helm's release annotations): not in git, and not drift.
const TRACKING_METADATA: &[&str] = &[
    "kustomize.toolkit.fluxcd.io/name",
    "kustomize.toolkit.fluxcd.io/namespace",
    "helm.toolkit.fluxcd.io/name",
    "helm.toolkit.fluxcd.io/namespace",
    "argocd.argoproj.io/tracking-id",
    "meta.helm.sh/release-name",
    "meta.helm.sh/release-namespace",
];

/// True for a tracking label or annotation of the object (see [`TRACKING_METADATA`]).
pub fn is_tracking_metadata(path: &crate::managed_fields::FieldPath) -> bool {
    use crate::managed_fields::PathElement;
    match path.0.as_slice() {
        [
            PathElement::Field(meta),
            PathElement::Field(map),
            PathElement::Field(name),
        ] => {
            meta == "metadata"
                && matches!(map.as_str(), "labels" | "annotations")
                && TRACKING_METADATA.contains(&name.as_str())
        }
        _ => false,
    }
}

/// The template annotation `kubectl rollout restart` writes: a restart, not a change of config.
pub const RESTARTED_AT: &str = "kubectl.kubernetes.io/restartedAt";

/// Where a field sits, as far as its meaning depends on it: its name and its parent's name, and
/// for the top of the object, the first two names of the path. Cheap to copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Place<'a> {
    pub depth: usize,
    pub first: Option<&'a str>,
    pub second: Option<&'a str>,
    pub parent: Option<&'a str>,
    pub field: Option<&'a str>,
}

impl<'a> Place<'a> {
    /// The place of `path`.
    pub fn of(path: &'a DriftPath) -> Place<'a> {
        let name = |at: usize| match path.0.get(at) {
            Some(super::path::PathStep::Field(name)) => Some(name.as_str()),
            _ => None,
        };
        Place {
            depth: path.0.len(),
            first: name(0),
            second: name(1),
            parent: path.parent_field(),
            field: path.last_field(),
        }
    }

    /// The place of field `name` below this one.
    pub fn child(self, name: &'a str) -> Place<'a> {
        Place {
            depth: self.depth + 1,
            first: if self.depth == 0 {
                Some(name)
            } else {
                self.first
            },
            second: if self.depth == 1 {
                Some(name)
            } else {
                self.second
            },
            parent: self.field,
            field: Some(name),
        }
    }

    /// The place of a list item below this one (items have no name).
    pub fn item(self) -> Place<'a> {
        Place {
            depth: self.depth + 1,
            parent: self.field,
            field: None,
            ..self
        }
    }
}

/// True for field `name` of the node at `parent` that is never drift.
pub fn never_drift(parent: Place<'_>, name: &str) -> bool {
    match (parent.depth, parent.first, parent.second) {
        (0, _, _) => matches!(name, "status" | "apiVersion" | "kind"),
        (1, Some("metadata"), _) => SERVER_METADATA.contains(&name),
        (2, Some("metadata"), Some("annotations")) => SERVER_ANNOTATIONS.contains(&name),
        _ => false,
    }
}

/// True at the restart annotation of a pod template.
pub fn is_restart_annotation(place: Place<'_>) -> bool {
    place.field == Some(RESTARTED_AT) && place.parent == Some("annotations")
}

fn is_quantity_place(place: Place<'_>) -> bool {
    place.parent.is_some_and(|p| QUANTITY_MAPS.contains(&p))
        || place.field.is_some_and(|f| QUANTITY_FIELDS.contains(&f))
}

/// Two numbers with the same value (`1` and `1.0`).
fn same_number(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    match (a.as_i64(), b.as_i64()) {
        (Some(x), Some(y)) => x == y,
        _ => a.as_f64() == b.as_f64(),
    }
}

/// How a scalar at `place` compares: as its schema says, else (a kind without a schema) as the
/// field names of the built-in kinds suggest.
fn format_at(place: Place<'_>, schema: Schema) -> Format {
    if !schema.is_unknown() {
        return schema.format();
    }
    if is_quantity_place(place) {
        Format::Quantity
    } else if place.field.is_some_and(|f| INT_OR_STRING.contains(&f)) {
        Format::IntOrString
    } else {
        Format::Plain
    }
}

/// Scalars equal by meaning at `place`, whose schema is `schema`.
pub fn same_scalar(place: Place<'_>, schema: Schema, manifest: &Value, live: &Value) -> bool {
    if manifest == live {
        return true;
    }
    let format = format_at(place, schema);
    match (manifest, live) {
        (Value::Number(a), Value::Number(b)) if same_number(a, b) => return true,
        (Value::Number(n), Value::String(s)) | (Value::String(s), Value::Number(n))
            if format == Format::IntOrString
                && s.parse::<serde_json::Number>()
                    .is_ok_and(|p| same_number(&p, n)) =>
        {
            return true;
        }
        _ => {}
    }
    format == Format::Quantity && same_quantity(manifest, live)
}

/// Whole values equal by meaning (for atomic fields): the manifest's keys must match; keys the
/// server added to an atomic object are defaults, not drift.
pub fn same_value(place: Place<'_>, schema: Schema, manifest: &Value, live: &Value) -> bool {
    match (manifest, live) {
        (Value::Object(m), Value::Object(l)) => m.iter().all(|(k, mv)| match l.get(k) {
            Some(lv) => same_value(place.child(k), schema.field(k), mv, lv),
            None => is_empty(mv),
        }),
        (Value::Array(m), Value::Array(l)) => {
            m.len() == l.len()
                && m.iter()
                    .zip(l)
                    .all(|(mv, lv)| same_value(place.item(), schema.item(), mv, lv))
        }
        _ => same_scalar(place, schema, manifest, live),
    }
}

/// Rebuilds every map and list of `value` at its exact size: a parsed value keeps the room its
/// maps and lists grew into, a third of its memory when thousands of objects are held.
pub fn compact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let mut exact: serde_json::Map<String, Value> =
                std::mem::take(map).into_iter().collect();
            exact.values_mut().for_each(compact);
            *map = exact;
        }
        Value::Array(items) => {
            items.iter_mut().for_each(compact);
            items.shrink_to_fit();
        }
        Value::String(text) => text.shrink_to_fit(),
        _ => {}
    }
}

/// The manifest as a server decodes it, when it sets a field a server drops at Go's zero
/// (`hostNetwork: false`, a probe's `timeoutSeconds: 0`, a port's `protocol: ""`: a built-in
/// kind's non-pointer `omitempty` scalar, [`Schema::omits_zero`]); `None` when it sets none.
/// Such a field then reads as one the manifest leaves out, as `kubectl diff` reads it: absent
/// live, or the server's default for it (`timeoutSeconds: 1`), is no drift; a value someone set
/// live is drift as for any field the manifest leaves out.
pub fn without_dropped_zeros(manifest: NodeRef<'_>, schema: Schema) -> Option<Value> {
    if !has_dropped_zeros(manifest, schema) {
        return None;
    }
    let mut value = manifest.to_value();
    schema.drop_go_zeros(&mut value);
    Some(value)
}

fn has_dropped_zeros(node: NodeRef<'_>, schema: Schema) -> bool {
    match node.kind() {
        Kind::Map(fields) => {
            for (name, value) in fields {
                if value.is_scalar_zero() && schema.omits_zero(name) {
                    return true;
                }
                if has_dropped_zeros(value, schema.field(name)) {
                    return true;
                }
            }
            false
        }
        Kind::List(items) => {
            let item = schema.item();
            items.into_iter().any(|i| has_dropped_zeros(i, item))
        }
        _ => false,
    }
}

/// `null`, `{}`, `[]`, `""`: what the server drops or fills with a zero value.
pub fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        Value::Array(list) => list.is_empty(),
        Value::String(text) => text.is_empty(),
        _ => false,
    }
}

/// True when `path` is, or lies under, a field that is never drift.
pub(super) fn never_drift_path(path: &crate::managed_fields::FieldPath) -> bool {
    let mut place = Place::default();
    for element in &path.0 {
        match element {
            crate::managed_fields::PathElement::Field(name) => {
                if never_drift(place, name) {
                    return true;
                }
                place = place.child(name);
            }
            _ => place = place.item(),
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn path(fields: &[&str]) -> DriftPath {
        fields.iter().fold(DriftPath::default(), |p, f| p.child(f))
    }

    #[test]
    fn normalisation_table() {
        let limits_cpu = path(&[
            "spec",
            "template",
            "spec",
            "containers",
            "resources",
            "limits",
            "cpu",
        ]);
        let max_surge = path(&["spec", "strategy", "rollingUpdate", "maxSurge"]);
        let target_port = path(&["spec", "ports", "targetPort"]);
        let replicas = path(&["spec", "replicas"]);
        let image = path(&["spec", "image"]);
        let table = [
            (&limits_cpu, json!("500m"), json!(0.5), true),
            (&limits_cpu, json!("1Gi"), json!("1024Mi"), true),
            (&limits_cpu, json!("1e3"), json!("1k"), true),
            (&limits_cpu, json!("500m"), json!("600m"), false),
            (&max_surge, json!(1), json!("1"), true),
            (&max_surge, json!("25%"), json!("25%"), true),
            (&max_surge, json!(1), json!("25%"), false),
            (&target_port, json!(8080), json!("8080"), true),
            (&target_port, json!("http"), json!(8080), false),
            (&replicas, json!(3), json!(3.0), true),
            (&replicas, json!(3), json!("3"), false),
            (&replicas, json!(3), json!(5), false),
            (&image, json!("1e3"), json!("1k"), false),
            (&image, json!("web:1"), json!("web:1"), true),
        ];
        for (at, manifest, live, same) in table {
            assert_eq!(
                same_scalar(Place::of(at), Schema::UNKNOWN, &manifest, &live),
                same,
                "{at}: {manifest} vs {live}"
            );
        }
    }

    #[test]
    fn formats_come_from_the_schema_when_the_kind_has_one() {
        let storage = path(&["data", "storage"]);
        let place = Place::of(&storage);
        // A ConfigMap value is text, whatever its key: "1Gi" is not "1024Mi" there.
        let value = crate::schema::builtin_kind("ConfigMap")
            .field("data")
            .field("storage");
        assert!(!same_scalar(place, value, &json!("1Gi"), &json!("1024Mi")));
        // Without a schema the name suggests a quantity.
        assert!(same_scalar(
            place,
            Schema::UNKNOWN,
            &json!("1Gi"),
            &json!("1024Mi")
        ));
        // A PVC's storage request is a quantity by its schema.
        let request = crate::schema::builtin_kind("PersistentVolumeClaim")
            .field("spec")
            .field("resources")
            .field("requests")
            .field("storage");
        assert!(same_scalar(place, request, &json!("1Gi"), &json!("1024Mi")));
        // A Service's targetPort is int-or-string; its port is an integer.
        let port = crate::schema::builtin_kind("Service")
            .field("spec")
            .field("ports")
            .item();
        assert!(same_scalar(
            place,
            port.field("targetPort"),
            &json!(8080),
            &json!("8080")
        ));
        assert!(!same_scalar(
            place,
            port.field("name"),
            &json!(8080),
            &json!("8080")
        ));
    }

    #[test]
    fn server_fields_are_never_drift() {
        let at = |fields: &[&str]| path(fields);
        let (root, metadata, annotations, spec) = (
            at(&[]),
            at(&["metadata"]),
            at(&["metadata", "annotations"]),
            at(&["spec"]),
        );
        assert!(never_drift(Place::of(&root), "status"));
        assert!(never_drift(Place::of(&metadata), "resourceVersion"));
        assert!(never_drift(
            Place::of(&annotations),
            "deployment.kubernetes.io/revision"
        ));
        assert!(never_drift(
            Place::of(&annotations),
            "kubectl.kubernetes.io/last-applied-configuration"
        ));
        assert!(!never_drift(Place::of(&annotations), "team"));
        assert!(!never_drift(Place::of(&spec), "status"));
        let restart = at(&["spec", "template", "metadata", "annotations", RESTARTED_AT]);
        assert!(is_restart_annotation(Place::of(&restart)));
        // A place built step by step is the place of the path.
        let built = Place::default().child("metadata").child("annotations");
        assert_eq!(built, Place::of(&annotations));
    }
}
