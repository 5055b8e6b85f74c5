//! Kubernetes list merge keys and atomic fields of the workload kinds.
//!
//! A small tree of static descriptors, walked by field name from a kind's root alongside a
//! `serde_json::Value`:
//!
//! ```
//! use kdrift::schema;
//! let containers = schema::root("Deployment").field("spec").field("template").field("spec").field("containers");
//! assert_eq!(containers.smp_merge_key(), Some("name"));
//! ```
//!
//! It records what server-side apply (list types and map keys), strategic merge patch
//! (`patchMergeKey`, `patchStrategy`, `$retainKeys`) and `managedFields` need. Unknown kinds and
//! fields behave as a server without a schema: maps are granular, lists atomic.
use serde_json::{Map, Value};

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

/// A static schema node (see the module documentation).
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
}

/// A named field of a struct node.
#[derive(Debug)]
pub struct FieldDef {
    pub name: &'static str,
    pub node: &'static Node,
    pub zero: Zero,
}

/// A position in the schema tree; cheap to copy.
#[derive(Debug, Clone, Copy)]
pub struct Schema {
    node: &'static Node,
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

    /// Whether `name` is a declared field of this struct (not a key of a map).
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

/// The schema of a top-level kind (`Deployment`, `ReplicaSet`, `Pod`, `Namespace`, `Event`);
/// unknown kinds get [`Schema::UNKNOWN`].
pub fn root(kind: &str) -> Schema {
    let node: &'static Node = match kind {
        "Deployment" => &DEPLOYMENT,
        "ReplicaSet" => &REPLICA_SET,
        "Pod" => &POD,
        "Namespace" => &NAMESPACE,
        "Event" => &EVENT,
        _ => &UNKNOWN,
    };
    Schema { node }
}

// ---- descriptors -------------------------------------------------------------------------------

const fn base(shape: Shape) -> Node {
    Node {
        shape,
        fields: &[],
        elem: None,
        atomic: false,
        retain_keys: false,
        list_type: ListType::Atomic,
        keys: &[],
        smp: SmpList::Replace,
    }
}

const fn strukt(fields: &'static [FieldDef]) -> Node {
    Node {
        fields,
        ..base(Shape::Struct)
    }
}

const fn atomic_struct(fields: &'static [FieldDef]) -> Node {
    Node {
        fields,
        atomic: true,
        ..base(Shape::Struct)
    }
}

const fn map_of(elem: &'static Node) -> Node {
    Node {
        elem: Some(elem),
        ..base(Shape::Map)
    }
}

const fn atomic_list(elem: &'static Node) -> Node {
    Node {
        elem: Some(elem),
        ..base(Shape::List)
    }
}

/// A list SSA keys by `keys` and strategic merge patch by `smp`.
const fn keyed_list(elem: &'static Node, keys: &'static [KeyField], smp: SmpList) -> Node {
    Node {
        elem: Some(elem),
        list_type: ListType::Map,
        keys,
        smp,
        ..base(Shape::List)
    }
}

const fn key(name: &'static str) -> KeyField {
    KeyField {
        name,
        default: None,
    }
}

/// A field whose zero value is absent (`omitempty` pointers, slices, maps, scalars).
const fn f(name: &'static str, node: &'static Node) -> FieldDef {
    FieldDef {
        name,
        node,
        zero: Zero::Absent,
    }
}

/// A field present in the zero value of its parent.
const fn fz(name: &'static str, node: &'static Node, zero: Zero) -> FieldDef {
    FieldDef { name, node, zero }
}

static UNKNOWN: Node = base(Shape::Unknown);
static SCALAR: Node = base(Shape::Scalar);
static STRING_MAP: Node = map_of(&SCALAR);
static ATOMIC_STRING_MAP: Node = Node {
    atomic: true,
    ..map_of(&SCALAR)
};
static SCALAR_ATOMIC_LIST: Node = atomic_list(&SCALAR);
static UNKNOWN_ATOMIC_LIST: Node = atomic_list(&UNKNOWN);
static ATOMIC_UNKNOWN: Node = Node {
    atomic: true,
    ..base(Shape::Unknown)
};
static STRING_SET: Node = Node {
    elem: Some(&SCALAR),
    list_type: ListType::Set,
    smp: SmpList::MergePrimitives,
    ..base(Shape::List)
};

// metadata

static OWNER_REFERENCE: Node = strukt(&[
    f("apiVersion", &SCALAR),
    f("kind", &SCALAR),
    f("name", &SCALAR),
    f("uid", &SCALAR),
    f("controller", &SCALAR),
    f("blockOwnerDeletion", &SCALAR),
]);
static OBJECT_META: Node = strukt(&[
    f("name", &SCALAR),
    f("generateName", &SCALAR),
    f("namespace", &SCALAR),
    f("selfLink", &SCALAR),
    f("uid", &SCALAR),
    f("resourceVersion", &SCALAR),
    f("generation", &SCALAR),
    fz("creationTimestamp", &SCALAR, Zero::Null),
    f("deletionTimestamp", &SCALAR),
    f("deletionGracePeriodSeconds", &SCALAR),
    f("labels", &STRING_MAP),
    f("annotations", &STRING_MAP),
    f(
        "ownerReferences",
        &keyed_list(&OWNER_REFERENCE, &[key("uid")], SmpList::MergeByKey("uid")),
    ),
    f("finalizers", &STRING_SET),
    f("managedFields", &UNKNOWN_ATOMIC_LIST),
]);

// pod template

static LABEL_SELECTOR: Node = atomic_struct(&[
    f("matchLabels", &STRING_MAP),
    f("matchExpressions", &UNKNOWN_ATOMIC_LIST),
]);

static OBJECT_FIELD_SELECTOR: Node =
    atomic_struct(&[f("apiVersion", &SCALAR), f("fieldPath", &SCALAR)]);
static ENV_VAR_SOURCE: Node = strukt(&[
    f("fieldRef", &OBJECT_FIELD_SELECTOR),
    f("resourceFieldRef", &ATOMIC_UNKNOWN),
    f("configMapKeyRef", &ATOMIC_UNKNOWN),
    f("secretKeyRef", &ATOMIC_UNKNOWN),
]);
static ENV_VAR: Node = strukt(&[
    f("name", &SCALAR),
    f("value", &SCALAR),
    f("valueFrom", &ENV_VAR_SOURCE),
]);
static CONTAINER_PORT: Node = strukt(&[
    f("name", &SCALAR),
    f("hostPort", &SCALAR),
    f("containerPort", &SCALAR),
    f("protocol", &SCALAR),
    f("hostIP", &SCALAR),
]);
static RESOURCE_CLAIM: Node = strukt(&[f("name", &SCALAR), f("request", &SCALAR)]);
static RESOURCES: Node = strukt(&[
    f("limits", &STRING_MAP),
    f("requests", &STRING_MAP),
    f(
        "claims",
        &keyed_list(&RESOURCE_CLAIM, &[key("name")], SmpList::Replace),
    ),
]);
static VOLUME_MOUNT: Node = strukt(&[
    f("name", &SCALAR),
    f("readOnly", &SCALAR),
    f("mountPath", &SCALAR),
    f("subPath", &SCALAR),
    f("mountPropagation", &SCALAR),
    f("subPathExpr", &SCALAR),
]);
static VOLUME_DEVICE: Node = strukt(&[f("name", &SCALAR), f("devicePath", &SCALAR)]);
static EXEC_ACTION: Node = strukt(&[f("command", &SCALAR_ATOMIC_LIST)]);
static HTTP_GET_ACTION: Node = strukt(&[
    f("path", &SCALAR),
    f("port", &SCALAR),
    f("host", &SCALAR),
    f("scheme", &SCALAR),
    f("httpHeaders", &UNKNOWN_ATOMIC_LIST),
]);
static TCP_SOCKET_ACTION: Node = strukt(&[f("port", &SCALAR), f("host", &SCALAR)]);
static GRPC_ACTION: Node = strukt(&[f("port", &SCALAR), f("service", &SCALAR)]);
static PROBE: Node = strukt(&[
    f("exec", &EXEC_ACTION),
    f("httpGet", &HTTP_GET_ACTION),
    f("tcpSocket", &TCP_SOCKET_ACTION),
    f("grpc", &GRPC_ACTION),
    f("initialDelaySeconds", &SCALAR),
    f("timeoutSeconds", &SCALAR),
    f("periodSeconds", &SCALAR),
    f("successThreshold", &SCALAR),
    f("failureThreshold", &SCALAR),
    f("terminationGracePeriodSeconds", &SCALAR),
]);
static LIFECYCLE_HANDLER: Node = strukt(&[
    f("exec", &EXEC_ACTION),
    f("httpGet", &HTTP_GET_ACTION),
    f("tcpSocket", &TCP_SOCKET_ACTION),
    f("sleep", &UNKNOWN),
]);
static LIFECYCLE: Node = strukt(&[
    f("postStart", &LIFECYCLE_HANDLER),
    f("preStop", &LIFECYCLE_HANDLER),
    f("stopSignal", &SCALAR),
]);
static CAPABILITIES: Node = strukt(&[
    f("add", &SCALAR_ATOMIC_LIST),
    f("drop", &SCALAR_ATOMIC_LIST),
]);
static CONTAINER_SECURITY_CONTEXT: Node = strukt(&[
    f("capabilities", &CAPABILITIES),
    f("privileged", &SCALAR),
    f("runAsUser", &SCALAR),
    f("runAsGroup", &SCALAR),
    f("runAsNonRoot", &SCALAR),
    f("readOnlyRootFilesystem", &SCALAR),
    f("allowPrivilegeEscalation", &SCALAR),
]);
static CONTAINER: Node = strukt(&[
    f("name", &SCALAR),
    f("image", &SCALAR),
    f("command", &SCALAR_ATOMIC_LIST),
    f("args", &SCALAR_ATOMIC_LIST),
    f("workingDir", &SCALAR),
    f(
        "ports",
        &keyed_list(
            &CONTAINER_PORT,
            &[
                key("containerPort"),
                KeyField {
                    name: "protocol",
                    default: Some("TCP"),
                },
            ],
            SmpList::MergeByKey("containerPort"),
        ),
    ),
    f("envFrom", &UNKNOWN_ATOMIC_LIST),
    f(
        "env",
        &keyed_list(&ENV_VAR, &[key("name")], SmpList::MergeByKey("name")),
    ),
    f("resources", &RESOURCES),
    f("resizePolicy", &UNKNOWN_ATOMIC_LIST),
    f("restartPolicy", &SCALAR),
    f(
        "volumeMounts",
        &keyed_list(
            &VOLUME_MOUNT,
            &[key("mountPath")],
            SmpList::MergeByKey("mountPath"),
        ),
    ),
    f(
        "volumeDevices",
        &keyed_list(
            &VOLUME_DEVICE,
            &[key("devicePath")],
            SmpList::MergeByKey("devicePath"),
        ),
    ),
    f("livenessProbe", &PROBE),
    f("readinessProbe", &PROBE),
    f("startupProbe", &PROBE),
    f("lifecycle", &LIFECYCLE),
    f("terminationMessagePath", &SCALAR),
    f("terminationMessagePolicy", &SCALAR),
    f("imagePullPolicy", &SCALAR),
    f("securityContext", &CONTAINER_SECURITY_CONTEXT),
    f("stdin", &SCALAR),
    f("stdinOnce", &SCALAR),
    f("tty", &SCALAR),
    f("targetContainerName", &SCALAR),
]);
static CONTAINER_LIST: Node = keyed_list(&CONTAINER, &[key("name")], SmpList::MergeByKey("name"));

static KEY_TO_PATH_LIST: Node = atomic_list(&UNKNOWN);
static CONFIG_MAP_VOLUME: Node = strukt(&[
    f("name", &SCALAR),
    f("items", &KEY_TO_PATH_LIST),
    f("defaultMode", &SCALAR),
    f("optional", &SCALAR),
]);
static SECRET_VOLUME: Node = strukt(&[
    f("secretName", &SCALAR),
    f("items", &KEY_TO_PATH_LIST),
    f("defaultMode", &SCALAR),
    f("optional", &SCALAR),
]);
static EMPTY_DIR_VOLUME: Node = strukt(&[f("medium", &SCALAR), f("sizeLimit", &SCALAR)]);
static PVC_VOLUME: Node = strukt(&[f("claimName", &SCALAR), f("readOnly", &SCALAR)]);
static HOST_PATH_VOLUME: Node = strukt(&[f("path", &SCALAR), f("type", &SCALAR)]);
static PROJECTED_VOLUME: Node = strukt(&[
    f("sources", &UNKNOWN_ATOMIC_LIST),
    f("defaultMode", &SCALAR),
]);
static DOWNWARD_API_VOLUME: Node =
    strukt(&[f("items", &UNKNOWN_ATOMIC_LIST), f("defaultMode", &SCALAR)]);
/// A volume: its name plus one source; `$retainKeys` clears the other sources on a switch.
static VOLUME: Node = Node {
    retain_keys: true,
    ..strukt(&[
        f("name", &SCALAR),
        f("configMap", &CONFIG_MAP_VOLUME),
        f("secret", &SECRET_VOLUME),
        f("emptyDir", &EMPTY_DIR_VOLUME),
        f("persistentVolumeClaim", &PVC_VOLUME),
        f("hostPath", &HOST_PATH_VOLUME),
        f("projected", &PROJECTED_VOLUME),
        f("downwardAPI", &DOWNWARD_API_VOLUME),
    ])
};
static LOCAL_OBJECT_REFERENCE: Node = Node {
    atomic: true,
    ..strukt(&[f("name", &SCALAR)])
};
static HOST_ALIAS: Node = strukt(&[f("ip", &SCALAR), f("hostnames", &SCALAR_ATOMIC_LIST)]);
static TOPOLOGY_SPREAD: Node = strukt(&[
    f("maxSkew", &SCALAR),
    f("topologyKey", &SCALAR),
    f("whenUnsatisfiable", &SCALAR),
    f("labelSelector", &LABEL_SELECTOR),
    f("minDomains", &SCALAR),
    f("matchLabelKeys", &SCALAR_ATOMIC_LIST),
]);
static NAME_ONLY: Node = strukt(&[f("name", &SCALAR)]);
static POD_SECURITY_CONTEXT: Node = strukt(&[
    f("runAsUser", &SCALAR),
    f("runAsGroup", &SCALAR),
    f("runAsNonRoot", &SCALAR),
    f("fsGroup", &SCALAR),
    f("supplementalGroups", &SCALAR_ATOMIC_LIST),
    f("sysctls", &UNKNOWN_ATOMIC_LIST),
    f("seccompProfile", &UNKNOWN),
]);
static POD_SPEC: Node = strukt(&[
    f(
        "volumes",
        &keyed_list(&VOLUME, &[key("name")], SmpList::MergeByKey("name")),
    ),
    f("initContainers", &CONTAINER_LIST),
    fz("containers", &CONTAINER_LIST, Zero::Null),
    f("ephemeralContainers", &CONTAINER_LIST),
    f("restartPolicy", &SCALAR),
    f("terminationGracePeriodSeconds", &SCALAR),
    f("activeDeadlineSeconds", &SCALAR),
    f("dnsPolicy", &SCALAR),
    f("nodeSelector", &ATOMIC_STRING_MAP),
    f("serviceAccountName", &SCALAR),
    f("serviceAccount", &SCALAR),
    f("automountServiceAccountToken", &SCALAR),
    f("nodeName", &SCALAR),
    f("hostNetwork", &SCALAR),
    f("hostPID", &SCALAR),
    f("hostIPC", &SCALAR),
    f("shareProcessNamespace", &SCALAR),
    f("securityContext", &POD_SECURITY_CONTEXT),
    f(
        "imagePullSecrets",
        &keyed_list(
            &LOCAL_OBJECT_REFERENCE,
            &[key("name")],
            SmpList::MergeByKey("name"),
        ),
    ),
    f("hostname", &SCALAR),
    f("subdomain", &SCALAR),
    f("affinity", &UNKNOWN),
    f("schedulerName", &SCALAR),
    f("tolerations", &UNKNOWN_ATOMIC_LIST),
    f(
        "hostAliases",
        &keyed_list(&HOST_ALIAS, &[key("ip")], SmpList::MergeByKey("ip")),
    ),
    f("priorityClassName", &SCALAR),
    f("priority", &SCALAR),
    f("dnsConfig", &UNKNOWN),
    f("readinessGates", &UNKNOWN_ATOMIC_LIST),
    f("runtimeClassName", &SCALAR),
    f("enableServiceLinks", &SCALAR),
    f("preemptionPolicy", &SCALAR),
    f("overhead", &STRING_MAP),
    f(
        "topologySpreadConstraints",
        &keyed_list(
            &TOPOLOGY_SPREAD,
            &[key("topologyKey"), key("whenUnsatisfiable")],
            SmpList::MergeByKey("topologyKey"),
        ),
    ),
    f("setHostnameAsFQDN", &SCALAR),
    f("os", &UNKNOWN),
    f("hostUsers", &SCALAR),
    f(
        "schedulingGates",
        &keyed_list(&NAME_ONLY, &[key("name")], SmpList::MergeByKey("name")),
    ),
    f(
        "resourceClaims",
        &keyed_list(&UNKNOWN, &[key("name")], SmpList::MergeByKey("name")),
    ),
]);
static POD_TEMPLATE_SPEC: Node = strukt(&[
    fz("metadata", &OBJECT_META, Zero::Struct),
    fz("spec", &POD_SPEC, Zero::Struct),
]);

// conditions: every kind keys them by `type`

static CONDITION: Node = strukt(&[
    f("type", &SCALAR),
    f("status", &SCALAR),
    f("lastUpdateTime", &SCALAR),
    f("lastTransitionTime", &SCALAR),
    f("lastProbeTime", &SCALAR),
    f("reason", &SCALAR),
    f("message", &SCALAR),
    f("observedGeneration", &SCALAR),
]);
static CONDITIONS: Node = keyed_list(&CONDITION, &[key("type")], SmpList::MergeByKey("type"));

// Deployment

static ROLLING_UPDATE_DEPLOYMENT: Node =
    strukt(&[f("maxUnavailable", &SCALAR), f("maxSurge", &SCALAR)]);
/// `patchStrategy: retainKeys`: switching to Recreate drops `rollingUpdate`.
static DEPLOYMENT_STRATEGY: Node = Node {
    retain_keys: true,
    ..strukt(&[
        f("type", &SCALAR),
        f("rollingUpdate", &ROLLING_UPDATE_DEPLOYMENT),
    ])
};
static DEPLOYMENT_SPEC: Node = strukt(&[
    f("replicas", &SCALAR),
    fz("selector", &LABEL_SELECTOR, Zero::Null),
    fz("template", &POD_TEMPLATE_SPEC, Zero::Struct),
    fz("strategy", &DEPLOYMENT_STRATEGY, Zero::Struct),
    f("minReadySeconds", &SCALAR),
    f("revisionHistoryLimit", &SCALAR),
    f("paused", &SCALAR),
    f("progressDeadlineSeconds", &SCALAR),
]);
static DEPLOYMENT_STATUS: Node = strukt(&[
    f("observedGeneration", &SCALAR),
    f("replicas", &SCALAR),
    f("updatedReplicas", &SCALAR),
    f("readyReplicas", &SCALAR),
    f("availableReplicas", &SCALAR),
    f("unavailableReplicas", &SCALAR),
    f("terminatingReplicas", &SCALAR),
    f("conditions", &CONDITIONS),
    f("collisionCount", &SCALAR),
]);
static DEPLOYMENT: Node = strukt(&[
    f("apiVersion", &SCALAR),
    f("kind", &SCALAR),
    fz("metadata", &OBJECT_META, Zero::Struct),
    fz("spec", &DEPLOYMENT_SPEC, Zero::Struct),
    fz("status", &DEPLOYMENT_STATUS, Zero::Struct),
]);

// ReplicaSet

static REPLICA_SET_SPEC: Node = strukt(&[
    f("replicas", &SCALAR),
    f("minReadySeconds", &SCALAR),
    fz("selector", &LABEL_SELECTOR, Zero::Null),
    fz("template", &POD_TEMPLATE_SPEC, Zero::Struct),
]);
static REPLICA_SET_STATUS: Node = strukt(&[
    fz("replicas", &SCALAR, Zero::Int),
    f("fullyLabeledReplicas", &SCALAR),
    f("readyReplicas", &SCALAR),
    f("availableReplicas", &SCALAR),
    f("terminatingReplicas", &SCALAR),
    f("observedGeneration", &SCALAR),
    f("conditions", &CONDITIONS),
]);
static REPLICA_SET: Node = strukt(&[
    f("apiVersion", &SCALAR),
    f("kind", &SCALAR),
    fz("metadata", &OBJECT_META, Zero::Struct),
    fz("spec", &REPLICA_SET_SPEC, Zero::Struct),
    fz("status", &REPLICA_SET_STATUS, Zero::Struct),
]);

// Pod

static POD_IP: Node = strukt(&[f("ip", &SCALAR)]);
static POD_STATUS: Node = strukt(&[
    f("phase", &SCALAR),
    f("conditions", &CONDITIONS),
    f("message", &SCALAR),
    f("reason", &SCALAR),
    f("nominatedNodeName", &SCALAR),
    f("hostIP", &SCALAR),
    f(
        "hostIPs",
        &keyed_list(&POD_IP, &[key("ip")], SmpList::MergeByKey("ip")),
    ),
    f("podIP", &SCALAR),
    f(
        "podIPs",
        &keyed_list(&POD_IP, &[key("ip")], SmpList::MergeByKey("ip")),
    ),
    f("startTime", &SCALAR),
    f("initContainerStatuses", &UNKNOWN_ATOMIC_LIST),
    f("containerStatuses", &UNKNOWN_ATOMIC_LIST),
    f("qosClass", &SCALAR),
    f("ephemeralContainerStatuses", &UNKNOWN_ATOMIC_LIST),
]);
static POD: Node = strukt(&[
    f("apiVersion", &SCALAR),
    f("kind", &SCALAR),
    fz("metadata", &OBJECT_META, Zero::Struct),
    fz("spec", &POD_SPEC, Zero::Struct),
    fz("status", &POD_STATUS, Zero::Struct),
]);

// Namespace

static NAMESPACE_SPEC: Node = strukt(&[f("finalizers", &SCALAR_ATOMIC_LIST)]);
static NAMESPACE_STATUS: Node = strukt(&[f("phase", &SCALAR), f("conditions", &CONDITIONS)]);
static NAMESPACE: Node = strukt(&[
    f("apiVersion", &SCALAR),
    f("kind", &SCALAR),
    fz("metadata", &OBJECT_META, Zero::Struct),
    fz("spec", &NAMESPACE_SPEC, Zero::Struct),
    fz("status", &NAMESPACE_STATUS, Zero::Struct),
]);

// Event (core/v1)

static OBJECT_REFERENCE: Node = atomic_struct(&[
    f("kind", &SCALAR),
    f("namespace", &SCALAR),
    f("name", &SCALAR),
    f("uid", &SCALAR),
    f("apiVersion", &SCALAR),
    f("resourceVersion", &SCALAR),
    f("fieldPath", &SCALAR),
]);
static EVENT_SOURCE: Node = strukt(&[f("component", &SCALAR), f("host", &SCALAR)]);
static EVENT: Node = strukt(&[
    f("apiVersion", &SCALAR),
    f("kind", &SCALAR),
    fz("metadata", &OBJECT_META, Zero::Struct),
    fz("involvedObject", &OBJECT_REFERENCE, Zero::Struct),
    f("reason", &SCALAR),
    f("message", &SCALAR),
    fz("source", &EVENT_SOURCE, Zero::Struct),
    fz("firstTimestamp", &SCALAR, Zero::Null),
    fz("lastTimestamp", &SCALAR, Zero::Null),
    f("count", &SCALAR),
    f("type", &SCALAR),
    fz("eventTime", &SCALAR, Zero::Null),
    f("series", &UNKNOWN),
    f("action", &SCALAR),
    f("related", &OBJECT_REFERENCE),
    fz("reportingComponent", &SCALAR, Zero::Str),
    fz("reportingInstance", &SCALAR, Zero::Str),
]);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod_spec(kind: &str) -> Schema {
        root(kind).field("spec").field("template").field("spec")
    }

    #[test]
    fn containers_env_volumes_merge_by_name() {
        let spec = pod_spec("Deployment");
        for list in [
            "containers",
            "initContainers",
            "ephemeralContainers",
            "volumes",
            "imagePullSecrets",
        ] {
            assert_eq!(spec.field(list).list_type(), ListType::Map, "{list}");
            assert_eq!(spec.field(list).smp_merge_key(), Some("name"), "{list}");
        }
        let container = spec.field("containers").item();
        assert_eq!(container.field("env").smp_merge_key(), Some("name"));
        assert_eq!(
            container.field("volumeMounts").smp_merge_key(),
            Some("mountPath")
        );
        assert_eq!(spec.field("hostAliases").smp_merge_key(), Some("ip"));
    }

    #[test]
    fn ports_key_on_container_port_and_protocol_for_ssa_but_container_port_for_smp() {
        let ports = pod_spec("ReplicaSet")
            .field("containers")
            .item()
            .field("ports");
        assert_eq!(ports.smp_merge_key(), Some("containerPort"));
        let key = ports.item_key(&json!({"containerPort": 8080}));
        assert_eq!(
            key,
            json!({"containerPort": 8080, "protocol": "TCP"})
                .as_object()
                .cloned()
        );
        let key = ports.item_key(&json!({"protocol": "UDP", "containerPort": 53, "name": "dns"}));
        assert_eq!(
            serde_json::to_string(&key).ok(),
            Some(r#"{"containerPort":53,"protocol":"UDP"}"#.to_string())
        );
    }

    #[test]
    fn atomic_lists_and_maps() {
        let spec = root("Pod").field("spec");
        assert!(spec.field("tolerations").is_atomic_for(&json!([])));
        let container = spec.field("containers").item();
        assert!(container.field("args").is_atomic_for(&json!(["a"])));
        assert!(container.field("command").is_atomic_for(&json!(["a"])));
        assert!(!container.field("env").is_atomic_for(&json!([])));
        assert!(
            root("Deployment")
                .field("spec")
                .field("selector")
                .is_atomic()
        );
        assert!(
            !root("Deployment")
                .field("spec")
                .field("strategy")
                .is_atomic()
        );
        assert_eq!(
            root("Pod")
                .field("metadata")
                .field("finalizers")
                .list_type(),
            ListType::Set
        );
        assert_eq!(
            root("Pod").field("metadata").field("finalizers").smp_list(),
            SmpList::MergePrimitives
        );
        assert_eq!(
            root("Pod")
                .field("metadata")
                .field("ownerReferences")
                .smp_merge_key(),
            Some("uid")
        );
        assert_eq!(
            root("Deployment")
                .field("status")
                .field("conditions")
                .smp_merge_key(),
            Some("type")
        );
    }

    #[test]
    fn retain_keys_on_strategy_and_volumes() {
        assert!(
            root("Deployment")
                .field("spec")
                .field("strategy")
                .retain_keys()
        );
        assert!(pod_spec("Deployment").field("volumes").item().retain_keys());
        assert!(!pod_spec("Deployment").retain_keys());
    }

    #[test]
    fn unknown_kinds_and_fields_are_granular_maps_and_atomic_lists() {
        let unknown = root("Widget").field("spec").field("things");
        assert!(unknown.is_unknown());
        assert!(unknown.is_atomic_for(&json!([1, 2])));
        assert!(!unknown.is_atomic_for(&json!({"a": 1})));
        let field = pod_spec("Deployment")
            .field("containers")
            .item()
            .field("noSuchField");
        assert!(field.is_unknown());
        // Labels are a map: any key has the scalar schema, and is not a declared field.
        let labels = root("Deployment").field("metadata").field("labels");
        assert_eq!(labels.field("app").shape(), Shape::Scalar);
        assert!(!labels.declares("app"));
    }

    #[test]
    fn zero_value_is_the_serialized_empty_go_struct() {
        assert_eq!(
            root("Deployment").zero_value(),
            json!({
                "metadata": {"creationTimestamp": null},
                "spec": {
                    "selector": null,
                    "template": {"metadata": {"creationTimestamp": null}, "spec": {"containers": null}},
                    "strategy": {}
                },
                "status": {}
            })
        );
        assert_eq!(
            root("ReplicaSet").zero_value()["status"],
            json!({"replicas": 0})
        );
    }

    #[test]
    fn find_item_by_key() {
        let env = pod_spec("Deployment")
            .field("containers")
            .item()
            .field("env");
        let list = vec![
            json!({"name": "A", "value": "1"}),
            json!({"name": "B", "value": "2"}),
        ];
        let key = env.item_key(&json!({"name": "B"}));
        assert_eq!(key.and_then(|k| env.find_item(&list, &k)), Some(1));
    }
}
