//! The static schema descriptors of the workload kinds: fields, list keys, patch strategies and
//! Go zero values, as in the Kubernetes API types (k8s.io/api) of current servers.
use super::{FieldDef, KeyField, ListType, Node, Shape, SmpList, Zero};

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

pub(super) static UNKNOWN: Node = base(Shape::Unknown);
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
pub(super) static DEPLOYMENT: Node = strukt(&[
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
pub(super) static REPLICA_SET: Node = strukt(&[
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
pub(super) static POD: Node = strukt(&[
    f("apiVersion", &SCALAR),
    f("kind", &SCALAR),
    fz("metadata", &OBJECT_META, Zero::Struct),
    fz("spec", &POD_SPEC, Zero::Struct),
    fz("status", &POD_STATUS, Zero::Struct),
]);

// Namespace

static NAMESPACE_SPEC: Node = strukt(&[f("finalizers", &SCALAR_ATOMIC_LIST)]);
static NAMESPACE_STATUS: Node = strukt(&[f("phase", &SCALAR), f("conditions", &CONDITIONS)]);
pub(super) static NAMESPACE: Node = strukt(&[
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
pub(super) static EVENT: Node = strukt(&[
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
