//! The schema of Kubernetes kinds: list types and merge keys, atomic and granular maps, patch
//! strategies, int-or-string and quantity formats, defaults — read from the API server's OpenAPI
//! v3 documents ([`openapi`]), kept per kind in [`Schemas`] ([`registry`]), with the documents
//! of a current server built in as the fallback.
//!
//! A tree of descriptors, walked by field name from a kind's root alongside a
//! `serde_json::Value`:
//!
//! ```
//! use kdrift_schema::schema::Schemas;
//! let deployment = Schemas::builtin().root("apps/v1", "Deployment");
//! let containers = deployment.field("spec").field("template").field("spec").field("containers");
//! assert_eq!(containers.smp_merge_key(), Some("name"));
//! ```
//!
//! It records what server-side apply (list types and map keys), strategic merge patch
//! (`patchMergeKey`, `patchStrategy`, `$retainKeys`), `managedFields` and drift need. Unknown kinds
//! and fields behave as a server without a schema: maps are granular, lists atomic.
use serde_json::{Map, Value};

pub mod defaults;
pub mod openapi;
pub mod registry;

pub use openapi::{GroupVersionKind, OpenApiError};
pub use registry::{BUILTIN_DOCUMENTS, BuiltinDocument, Schemas};

static UNKNOWN: Node = Node::plain(Shape::Unknown);

/// Go's zero of a scalar, as JSON: `false`, `0`, `""`, `null`.
pub fn is_go_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(_) | Value::Object(_) => false,
    }
}
/// How a scalar's values compare (from the OpenAPI `format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Plain,
    /// `int-or-string` (`x-kubernetes-int-or-string`): `8080` and `"8080"` are one value.
    IntOrString,
    /// A resource quantity: `0.5` and `500m`, `1Gi` and `1024Mi` are one value.
    Quantity,
    /// Base64 bytes (Secret `data`).
    Bytes,
}

/// How a list is merged by server-side apply and recorded in `fieldsV1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListType {
    /// Replaced as a whole (`x-kubernetes-list-type: atomic`, the default).
    Atomic,
    /// A set of scalars, items recorded as `v:<value>` (`x-kubernetes-list-type: set`).
    Set,
    /// Items identified by key fields, recorded as `k:{...}` (`x-kubernetes-list-type: map`).
    Map,
}

/// How strategic merge patch treats a list (`patchStrategy` / `patchMergeKey`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmpList {
    /// No strategy: the patch's list replaces the live one.
    Replace,
    /// `patchStrategy: merge` with `patchMergeKey`: items merged by that field.
    MergeByKey(&'static str),
    /// `patchStrategy: merge` on a list of scalars: union of values.
    MergePrimitives,
}

/// One key field of an associative list, with the value the server defaults it to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyField {
    pub name: &'static str,
    /// The default applied when an item omits this key (`protocol: TCP` for ports).
    pub default: Option<&'static str>,
}

/// The shape of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A string, number or boolean (also int-or-string and quantities).
    Scalar,
    /// A struct with named fields (unknown fields fall back to [`Schema::UNKNOWN`]).
    Struct,
    /// A map from arbitrary string keys to values of one type (labels, resource limits).
    Map,
    /// A list.
    List,
    /// No schema: maps granular, lists atomic.
    Unknown,
}

/// What the Go zero value of a field looks like when its parent struct is serialized: this is
/// the "old" object a create is compared with, which decides where `fieldsV1` records `.`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zero {
    /// `omitempty` pointer, slice, map or scalar: absent.
    Absent,
    /// A non-omitempty pointer, slice or map, or a time: `null`.
    Null,
    /// A non-pointer struct: `{}` with its own zero fields.
    Struct,
    /// A non-omitempty number: `0`.
    Int,
    /// A non-omitempty string: `""`.
    Str,
}

/// A schema node (see the module documentation).
#[derive(Debug)]
pub struct Node {
    pub shape: Shape,
    /// Struct fields.
    pub fields: &'static [FieldDef],
    /// Map values or list items.
    pub elem: Option<&'static Node>,
    /// Whether the node is replaced as a whole (`x-kubernetes-map-type: atomic`,
    /// `x-kubernetes-list-type: atomic`).
    pub atomic: bool,
    /// `patchStrategy: retainKeys` (Deployment strategy, volume sources).
    pub retain_keys: bool,
    /// List type for server-side apply.
    pub list_type: ListType,
    /// Key fields of a `ListType::Map` list.
    pub keys: &'static [KeyField],
    /// Strategic merge patch strategy of a list.
    pub smp: SmpList,
    /// How a scalar compares.
    pub format: Format,
    /// The default the schema declares (a custom resource's; a built-in kind's only where it is
    /// not merely the Go zero value).
    pub default: Option<&'static Value>,
    /// `x-kubernetes-preserve-unknown-fields: true`: a struct that keeps the fields it does not
    /// declare (a custom resource whose schema is only that, beside `apiVersion`/`metadata`).
    pub preserve_unknown: bool,
}

impl Node {
    /// A node of `shape` with nothing else: no fields, granular, lists atomic.
    pub const fn plain(shape: Shape) -> Node {
        Node {
            shape,
            fields: &[],
            elem: None,
            atomic: false,
            retain_keys: false,
            list_type: ListType::Atomic,
            keys: &[],
            smp: SmpList::Replace,
            format: Format::Plain,
            default: None,
            preserve_unknown: false,
        }
    }
}

/// A named field of a struct node.
#[derive(Debug)]
pub struct FieldDef {
    pub name: &'static str,
    pub node: &'static Node,
    pub zero: Zero,
    /// A built-in kind's non-pointer `omitempty` scalar ([`crate::gotypes::omits_zero`]): a
    /// server drops it at `false`, `0` or `""`, so a manifest's zero is what "absent" says.
    pub omits_zero: bool,
}

/// A position in the schema tree; cheap to copy.
#[derive(Clone, Copy)]
pub struct Schema {
    node: &'static Node,
}

/// The shape only: a kind's whole tree is thousands of lines.
impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Schema({:?}", self.node.shape)?;
        if self.node.shape == Shape::Struct {
            write!(f, ", {} fields", self.node.fields.len())?;
        }
        f.write_str(")")
    }
}

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.node, other.node)
    }
}

impl Schema {
    /// The schema of anything unknown: maps granular, lists atomic.
    pub const UNKNOWN: Schema = Schema { node: &UNKNOWN };

    pub fn node(self) -> &'static Node {
        self.node
    }

    pub fn shape(self) -> Shape {
        self.node.shape
    }

    /// How a scalar at this node compares.
    pub fn format(self) -> Format {
        self.node.format
    }

    /// The default the schema declares here, if any.
    pub fn default_value(self) -> Option<&'static Value> {
        self.node.default
    }

    pub fn is_unknown(self) -> bool {
        self.node.shape == Shape::Unknown
    }

    /// The schema of field `name` of a struct (or of a value in a map); unknown otherwise.
    pub fn field(self, name: &str) -> Schema {
        match self.node.shape {
            Shape::Struct => self
                .node
                .fields
                .iter()
                .find(|f| f.name == name)
                .map(|f| Schema { node: f.node })
                .unwrap_or(Schema::UNKNOWN),
            Shape::Map => self.item(),
            _ => Schema::UNKNOWN,
        }
    }

    /// Whether a server drops field `name` of this struct when it holds Go's zero (`false`,
    /// `0`, `""`): a built-in kind's non-pointer `omitempty` scalar ([`FieldDef::omits_zero`]).
    pub fn omits_zero(self, name: &str) -> bool {
        self.node.shape == Shape::Struct
            && self
                .node
                .fields
                .iter()
                .any(|f| f.name == name && f.omits_zero)
    }

    /// `value` as a server holds it once decoded into its Go struct: every field that
    /// [`Schema::omits_zero`] at Go's zero (`false`, `0`, `""`, `null`) taken out, at any depth
    /// (a probe's `initialDelaySeconds: 0`, a port's `protocol: ""`). What the server defaults
    /// is defaulted after this, as a server defaults after decoding.
    pub fn drop_go_zeros(self, value: &mut Value) {
        match value {
            Value::Object(fields) => {
                fields.retain(|name, value| !(is_go_zero(value) && self.omits_zero(name)));
                for (name, value) in fields.iter_mut() {
                    self.field(name).drop_go_zeros(value);
                }
            }
            Value::Array(items) => {
                let item = self.item();
                items.iter_mut().for_each(|i| item.drop_go_zeros(i));
            }
            _ => {}
        }
    }

    /// Whether `name` is a declared field of this struct (not a key of a map).
    /// Whether fields this struct does not declare are kept (`x-kubernetes-preserve-unknown-fields`).
    pub fn preserves_unknown(self) -> bool {
        self.node.preserve_unknown
    }

    pub fn declares(self, name: &str) -> bool {
        self.node.shape == Shape::Struct && self.node.fields.iter().any(|f| f.name == name)
    }

    /// The schema of the items of a list or the values of a map.
    pub fn item(self) -> Schema {
        self.node
            .elem
            .map(|node| Schema { node })
            .unwrap_or(Schema::UNKNOWN)
    }

    /// Whether the value at this node is replaced and owned as a whole, for a value of this
    /// JSON type: scalars, atomic maps and structs, atomic lists, and lists without a schema.
    pub fn is_atomic_for(self, value: &Value) -> bool {
        match value {
            Value::Object(_) => self.node.atomic,
            Value::Array(_) => self.node.atomic || self.list_type() == ListType::Atomic,
            _ => true,
        }
    }

    /// Whether this map or struct is atomic (`f:selector: {}`).
    pub fn is_atomic(self) -> bool {
        self.node.atomic
    }

    pub fn retain_keys(self) -> bool {
        self.node.retain_keys
    }

    /// The server-side apply list type (`Atomic` for anything that is not a known list).
    pub fn list_type(self) -> ListType {
        if self.node.shape == Shape::List && !self.node.atomic {
            self.node.list_type
        } else {
            ListType::Atomic
        }
    }

    /// Key fields of an associative list (`containerPort`, `protocol` for ports).
    pub fn list_keys(self) -> &'static [KeyField] {
        if self.list_type() == ListType::Map {
            self.node.keys
        } else {
            &[]
        }
    }

    /// Strategic merge patch strategy of a list.
    pub fn smp_list(self) -> SmpList {
        if self.node.shape == Shape::List {
            self.node.smp
        } else {
            SmpList::Replace
        }
    }

    /// The strategic merge patch `patchMergeKey` of a list, if items are merged by key.
    pub fn smp_merge_key(self) -> Option<&'static str> {
        match self.smp_list() {
            SmpList::MergeByKey(key) => Some(key),
            _ => None,
        }
    }

    /// The server-side apply key of a list item (`{"containerPort":8080,"protocol":"TCP"}`),
    /// with key fields in name order and defaults filled in. `None` if this is not an
    /// associative list, the item is not an object, or it lacks a key without default.
    pub fn item_key(self, item: &Value) -> Option<Map<String, Value>> {
        let keys = self.list_keys();
        let object = item.as_object()?;
        if keys.is_empty() {
            return None;
        }
        let mut sorted: Vec<&KeyField> = keys.iter().collect();
        sorted.sort_by_key(|k| k.name);
        let mut out = Map::new();
        for key in sorted {
            match (object.get(key.name), key.default) {
                (Some(v), _) if !v.is_null() => {
                    out.insert(key.name.to_string(), v.clone());
                }
                (_, Some(default)) => {
                    out.insert(key.name.to_string(), Value::String(default.to_string()));
                }
                _ => return None,
            }
        }
        Some(out)
    }

    /// Index of the item of `list` whose server-side apply key equals `key`.
    pub fn find_item(self, list: &[Value], key: &Map<String, Value>) -> Option<usize> {
        list.iter()
            .position(|item| self.item_key(item).as_ref() == Some(key))
    }

    /// The Go zero value of this struct, as the API server serializes an empty object: the
    /// baseline against which a create is compared when recording `managedFields`.
    pub fn zero_value(self) -> Value {
        let mut out = Map::new();
        if self.node.shape == Shape::Struct {
            for f in self.node.fields {
                let zero = match f.zero {
                    Zero::Absent => continue,
                    Zero::Null => Value::Null,
                    Zero::Int => Value::from(0),
                    Zero::Str => Value::String(String::new()),
                    Zero::Struct => Schema { node: f.node }.zero_value(),
                };
                out.insert(f.name.to_string(), zero);
            }
        }
        Value::Object(out)
    }
}

/// The schema of a built-in kind named alone (`Deployment`, `Pod`), from [`Schemas::builtin`]: for
/// tests and for code that knows the kind is a built-in one. Unknown names get
/// [`Schema::UNKNOWN`].
pub fn builtin_kind(kind: &str) -> Schema {
    let schemas = Schemas::builtin();
    [
        "v1",
        "apps/v1",
        "batch/v1",
        "autoscaling/v2",
        "networking.k8s.io/v1",
        "policy/v1",
    ]
    .iter()
    .chain(&[
        "rbac.authorization.k8s.io/v1",
        "storage.k8s.io/v1",
        "apiextensions.k8s.io/v1",
    ])
    .find_map(|version| schemas.get(version, kind))
    .unwrap_or(Schema::UNKNOWN)
}

#[cfg(test)]
mod tests;
