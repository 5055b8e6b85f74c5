//! The resource types the demo cluster serves: every built-in type of the group-versions whose
//! OpenAPI documents it serves (as a 1.36 server lists them in discovery), and the custom
//! resources of the CustomResourceDefinitions created in it.
use std::fmt;

use crate::schema::{Schema, Schemas};

/// What discovery says of a resource type, and what routing and the store need.
#[derive(Debug)]
pub struct ResourceDef {
    /// API group (`""` for the core group).
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    /// The plural used in URLs.
    pub plural: &'static str,
    pub singular: &'static str,
    pub namespaced: bool,
    pub short_names: &'static [&'static str],
    pub categories: &'static [&'static str],
    /// Subresources served under `{plural}/{name}/{sub}`.
    pub subresources: &'static [&'static str],
    pub verbs: &'static [&'static str],
    pub storage_version_hash: &'static str,
    /// A custom resource's schema (from its definition); `None`: the built-in document's.
    pub schema: Option<Schema>,
    /// A custom resource's `additionalPrinterColumns` (empty: Name and Age, as a server prints
    /// a definition without them; built-in types have their own columns).
    pub printer_columns: &'static [PrinterColumn],
}

/// One of a CustomResourceDefinition version's `additionalPrinterColumns`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrinterColumn {
    pub name: String,
    /// `string`, `integer`, `number`, `boolean` or `date` (printed as an age).
    pub type_: String,
    pub format: String,
    pub description: String,
    pub priority: i64,
    /// A simple JSONPath (`.status.sync.status`, `.spec.items[0].name`).
    pub json_path: String,
}

/// A resource type served by the demo cluster: a built-in one ([`ResourceType::BUILTIN`]) or a
/// custom resource. Cheap to copy; equal when group and plural are.
#[derive(Clone, Copy)]
pub struct ResourceType(&'static ResourceDef);

impl PartialEq for ResourceType {
    fn eq(&self, other: &ResourceType) -> bool {
        std::ptr::eq(self.0, other.0)
            || (self.0.group == other.0.group && self.0.plural == other.0.plural)
    }
}

impl Eq for ResourceType {}

impl std::hash::Hash for ResourceType {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.group.hash(state);
        self.0.plural.hash(state);
    }
}

impl PartialOrd for ResourceType {
    fn partial_cmp(&self, other: &ResourceType) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ResourceType {
    fn cmp(&self, other: &ResourceType) -> std::cmp::Ordering {
        (self.0.group, self.0.plural).cmp(&(other.0.group, other.0.plural))
    }
}

impl fmt::Debug for ResourceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.qualified_plural())
    }
}

const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

impl ResourceType {
    /// A type of its own definition (a custom resource's, leaked: a cluster creates few).
    pub fn define(def: ResourceDef) -> ResourceType {
        ResourceType(Box::leak(Box::new(def)))
    }

    pub fn def(self) -> &'static ResourceDef {
        self.0
    }

    /// API group (`""` for the core group).
    pub fn group(self) -> &'static str {
        self.0.group
    }

    pub fn version(self) -> &'static str {
        self.0.version
    }

    /// `apiVersion` as written in objects: `v1` or `apps/v1`.
    pub fn api_version(self) -> String {
        if self.0.group.is_empty() {
            self.0.version.to_owned()
        } else {
            format!("{}/{}", self.0.group, self.0.version)
        }
    }

    /// The kind's schema: a custom resource's own, else the built-in OpenAPI document's.
    pub fn schema(self) -> Schema {
        self.0
            .schema
            .unwrap_or_else(|| Schemas::builtin().root(&self.api_version(), self.0.kind))
    }

    pub fn kind(self) -> &'static str {
        self.0.kind
    }

    /// A custom resource's `additionalPrinterColumns` (empty for built-in types).
    pub fn printer_columns(self) -> &'static [PrinterColumn] {
        self.0.printer_columns
    }

    /// The plural used in URLs.
    pub fn plural(self) -> &'static str {
        self.0.plural
    }

    /// `deployments.apps`, `pods`: how a real server names the resource in messages.
    pub fn qualified_plural(self) -> String {
        if self.0.group.is_empty() {
            self.0.plural.to_owned()
        } else {
            format!("{}.{}", self.0.plural, self.0.group)
        }
    }

    pub fn singular(self) -> &'static str {
        self.0.singular
    }

    pub fn short_names(self) -> &'static [&'static str] {
        self.0.short_names
    }

    pub fn categories(self) -> &'static [&'static str] {
        self.0.categories
    }

    pub fn namespaced(self) -> bool {
        self.0.namespaced
    }

    /// Subresources served under `{plural}/{name}/{sub}`.
    pub fn subresources(self) -> &'static [&'static str] {
        self.0.subresources
    }

    pub fn verbs(self) -> &'static [&'static str] {
        self.0.verbs
    }

    /// Whether objects of this type are custom resources (of a CustomResourceDefinition).
    pub fn is_custom(self) -> bool {
        self.0.schema.is_some()
    }

    /// Whether `metadata.generation` counts spec changes (every type with a spec a controller
    /// acts on; not the core group's, not RBAC's, not the autoscaler's).
    pub fn has_generation(self) -> bool {
        self.is_custom()
            || matches!(
                self.0.group,
                "apps"
                    | "batch"
                    | "networking.k8s.io"
                    | "policy"
                    | "apiextensions.k8s.io"
                    | "scheduling.k8s.io"
            )
    }

    /// Whether `status` is written only through the `/status` subresource.
    pub fn has_status_subresource(self) -> bool {
        self.0.subresources.contains(&"status")
    }

    /// A built-in type by group and URL plural.
    pub fn builtin_by_plural(group: &str, plural: &str) -> Option<ResourceType> {
        Self::BUILTIN
            .iter()
            .copied()
            .find(|r| r.group() == group && r.plural() == plural)
    }

    /// A built-in type by `apiVersion` and `kind`, as written in an object.
    pub fn builtin_by_kind(api_version: &str, kind: &str) -> Option<ResourceType> {
        Self::BUILTIN
            .iter()
            .copied()
            .find(|r| r.kind() == kind && r.api_version() == api_version)
    }
}

static CONFIG_MAP_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "ConfigMap",
    plural: "configmaps",
    singular: "configmap",
    namespaced: true,
    short_names: &["cm"],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "qFsyl6wFWjQ=",
    printer_columns: &[],
    schema: None,
};
static ENDPOINTS_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "Endpoints",
    plural: "endpoints",
    singular: "endpoints",
    namespaced: true,
    short_names: &["ep"],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "fWeeMqaN/OA=",
    printer_columns: &[],
    schema: None,
};
static EVENT_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "Event",
    plural: "events",
    singular: "event",
    namespaced: true,
    short_names: &["ev"],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "r2yiGXH7wu8=",
    printer_columns: &[],
    schema: None,
};
static LIMIT_RANGE_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "LimitRange",
    plural: "limitranges",
    singular: "limitrange",
    namespaced: true,
    short_names: &["limits"],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "EBKMFVe6cwo=",
    printer_columns: &[],
    schema: None,
};
static NAMESPACE_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "Namespace",
    plural: "namespaces",
    singular: "namespace",
    namespaced: false,
    short_names: &["ns"],
    categories: &[],
    subresources: &["status"],
    verbs: &[
        "create", "delete", "get", "list", "patch", "update", "watch",
    ],
    storage_version_hash: "Q3oi5N2YM8M=",
    printer_columns: &[],
    schema: None,
};
static NODE_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "Node",
    plural: "nodes",
    singular: "node",
    namespaced: false,
    short_names: &["no"],
    categories: &[],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "XwShjMxG9Fs=",
    printer_columns: &[],
    schema: None,
};
static PERSISTENT_VOLUME_CLAIM_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "PersistentVolumeClaim",
    plural: "persistentvolumeclaims",
    singular: "persistentvolumeclaim",
    namespaced: true,
    short_names: &["pvc"],
    categories: &[],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "QWTyNDq0dC4=",
    printer_columns: &[],
    schema: None,
};
static PERSISTENT_VOLUME_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "PersistentVolume",
    plural: "persistentvolumes",
    singular: "persistentvolume",
    namespaced: false,
    short_names: &["pv"],
    categories: &[],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "HN/zwEC+JgM=",
    printer_columns: &[],
    schema: None,
};
static POD_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "Pod",
    plural: "pods",
    singular: "pod",
    namespaced: true,
    short_names: &["po"],
    categories: &["all"],
    subresources: &["binding", "eviction", "log", "status"],
    verbs: ALL_VERBS,
    storage_version_hash: "xPOwRZ+Yhw8=",
    printer_columns: &[],
    schema: None,
};
static POD_TEMPLATE_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "PodTemplate",
    plural: "podtemplates",
    singular: "podtemplate",
    namespaced: true,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "LIXB2x4IFpk=",
    printer_columns: &[],
    schema: None,
};
static REPLICATION_CONTROLLER_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "ReplicationController",
    plural: "replicationcontrollers",
    singular: "replicationcontroller",
    namespaced: true,
    short_names: &["rc"],
    categories: &["all"],
    subresources: &["scale", "status"],
    verbs: ALL_VERBS,
    storage_version_hash: "Jond2If31h0=",
    printer_columns: &[],
    schema: None,
};
static RESOURCE_QUOTA_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "ResourceQuota",
    plural: "resourcequotas",
    singular: "resourcequota",
    namespaced: true,
    short_names: &["quota"],
    categories: &[],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "8uhSgffRX6w=",
    printer_columns: &[],
    schema: None,
};
static SECRET_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "Secret",
    plural: "secrets",
    singular: "secret",
    namespaced: true,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "S6u1pOWzb84=",
    printer_columns: &[],
    schema: None,
};
static SERVICE_ACCOUNT_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "ServiceAccount",
    plural: "serviceaccounts",
    singular: "serviceaccount",
    namespaced: true,
    short_names: &["sa"],
    categories: &[],
    subresources: &["token"],
    verbs: ALL_VERBS,
    storage_version_hash: "pbx9ZvyFpBE=",
    printer_columns: &[],
    schema: None,
};
static SERVICE_DEF: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    kind: "Service",
    plural: "services",
    singular: "service",
    namespaced: true,
    short_names: &["svc"],
    categories: &["all"],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "0/CO1lhkEBI=",
    printer_columns: &[],
    schema: None,
};
static CONTROLLER_REVISION_DEF: ResourceDef = ResourceDef {
    group: "apps",
    version: "v1",
    kind: "ControllerRevision",
    plural: "controllerrevisions",
    singular: "controllerrevision",
    namespaced: true,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "85nkx63pcBU=",
    printer_columns: &[],
    schema: None,
};
static DAEMON_SET_DEF: ResourceDef = ResourceDef {
    group: "apps",
    version: "v1",
    kind: "DaemonSet",
    plural: "daemonsets",
    singular: "daemonset",
    namespaced: true,
    short_names: &["ds"],
    categories: &["all"],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "dd7pWHUlMKQ=",
    printer_columns: &[],
    schema: None,
};
static DEPLOYMENT_DEF: ResourceDef = ResourceDef {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    plural: "deployments",
    singular: "deployment",
    namespaced: true,
    short_names: &["deploy"],
    categories: &["all"],
    subresources: &["scale", "status"],
    verbs: ALL_VERBS,
    storage_version_hash: "8aSe+NMegvE=",
    printer_columns: &[],
    schema: None,
};
static REPLICA_SET_DEF: ResourceDef = ResourceDef {
    group: "apps",
    version: "v1",
    kind: "ReplicaSet",
    plural: "replicasets",
    singular: "replicaset",
    namespaced: true,
    short_names: &["rs"],
    categories: &["all"],
    subresources: &["scale", "status"],
    verbs: ALL_VERBS,
    storage_version_hash: "P1RzHs8/mWQ=",
    printer_columns: &[],
    schema: None,
};
static STATEFUL_SET_DEF: ResourceDef = ResourceDef {
    group: "apps",
    version: "v1",
    kind: "StatefulSet",
    plural: "statefulsets",
    singular: "statefulset",
    namespaced: true,
    short_names: &["sts"],
    categories: &["all"],
    subresources: &["scale", "status"],
    verbs: ALL_VERBS,
    storage_version_hash: "H+vl74LkKdo=",
    printer_columns: &[],
    schema: None,
};
static CRON_JOB_DEF: ResourceDef = ResourceDef {
    group: "batch",
    version: "v1",
    kind: "CronJob",
    plural: "cronjobs",
    singular: "cronjob",
    namespaced: true,
    short_names: &["cj"],
    categories: &["all"],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "sd5LIXh4Fjs=",
    printer_columns: &[],
    schema: None,
};
static JOB_DEF: ResourceDef = ResourceDef {
    group: "batch",
    version: "v1",
    kind: "Job",
    plural: "jobs",
    singular: "job",
    namespaced: true,
    short_names: &[],
    categories: &["all"],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "mudhfqk/qZY=",
    printer_columns: &[],
    schema: None,
};
static HORIZONTAL_POD_AUTOSCALER_DEF: ResourceDef = ResourceDef {
    group: "autoscaling",
    version: "v2",
    kind: "HorizontalPodAutoscaler",
    plural: "horizontalpodautoscalers",
    singular: "horizontalpodautoscaler",
    namespaced: true,
    short_names: &["hpa"],
    categories: &["all"],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "qwQve8ut294=",
    printer_columns: &[],
    schema: None,
};
static PRIORITY_CLASS_DEF: ResourceDef = ResourceDef {
    group: "scheduling.k8s.io",
    version: "v1",
    kind: "PriorityClass",
    plural: "priorityclasses",
    singular: "priorityclass",
    namespaced: false,
    short_names: &["pc"],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "1QwjyaZjj3Y=",
    printer_columns: &[],
    schema: None,
};
/// The reviews a client posts and gets back answered, never stored (`create` only).
const CREATE_ONLY: &[&str] = &["create"];
static SELF_SUBJECT_ACCESS_REVIEW_DEF: ResourceDef = ResourceDef {
    group: "authorization.k8s.io",
    version: "v1",
    kind: "SelfSubjectAccessReview",
    plural: "selfsubjectaccessreviews",
    singular: "selfsubjectaccessreview",
    namespaced: false,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: CREATE_ONLY,
    storage_version_hash: "",
    printer_columns: &[],
    schema: None,
};
static SELF_SUBJECT_RULES_REVIEW_DEF: ResourceDef = ResourceDef {
    group: "authorization.k8s.io",
    version: "v1",
    kind: "SelfSubjectRulesReview",
    plural: "selfsubjectrulesreviews",
    singular: "selfsubjectrulesreview",
    namespaced: false,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: CREATE_ONLY,
    storage_version_hash: "",
    printer_columns: &[],
    schema: None,
};
static SELF_SUBJECT_REVIEW_DEF: ResourceDef = ResourceDef {
    group: "authentication.k8s.io",
    version: "v1",
    kind: "SelfSubjectReview",
    plural: "selfsubjectreviews",
    singular: "selfsubjectreview",
    namespaced: false,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: CREATE_ONLY,
    storage_version_hash: "",
    printer_columns: &[],
    schema: None,
};
/// The same objects as [`HORIZONTAL_POD_AUTOSCALER_DEF`], served in `autoscaling/v1` (see
/// `server::autoscaling_v1`): equal to it as a type (same group and plural), so stored once.
static HORIZONTAL_POD_AUTOSCALER_V1_DEF: ResourceDef = ResourceDef {
    group: "autoscaling",
    version: "v1",
    kind: "HorizontalPodAutoscaler",
    plural: "horizontalpodautoscalers",
    singular: "horizontalpodautoscaler",
    namespaced: true,
    short_names: &["hpa"],
    categories: &["all"],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "qwQve8ut294=",
    printer_columns: &[],
    schema: None,
};
static INGRESS_CLASS_DEF: ResourceDef = ResourceDef {
    group: "networking.k8s.io",
    version: "v1",
    kind: "IngressClass",
    plural: "ingressclasses",
    singular: "ingressclass",
    namespaced: false,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "l/iqIbDgFyQ=",
    printer_columns: &[],
    schema: None,
};
static INGRESS_DEF: ResourceDef = ResourceDef {
    group: "networking.k8s.io",
    version: "v1",
    kind: "Ingress",
    plural: "ingresses",
    singular: "ingress",
    namespaced: true,
    short_names: &["ing"],
    categories: &[],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "39NQlfNR+bo=",
    printer_columns: &[],
    schema: None,
};
static IP_ADDRESS_DEF: ResourceDef = ResourceDef {
    group: "networking.k8s.io",
    version: "v1",
    kind: "IPAddress",
    plural: "ipaddresses",
    singular: "ipaddress",
    namespaced: false,
    short_names: &["ip"],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "3f/plJFChNE=",
    printer_columns: &[],
    schema: None,
};
static NETWORK_POLICY_DEF: ResourceDef = ResourceDef {
    group: "networking.k8s.io",
    version: "v1",
    kind: "NetworkPolicy",
    plural: "networkpolicies",
    singular: "networkpolicy",
    namespaced: true,
    short_names: &["netpol"],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "YpfwF18m1G8=",
    printer_columns: &[],
    schema: None,
};
static SERVICE_CIDR_DEF: ResourceDef = ResourceDef {
    group: "networking.k8s.io",
    version: "v1",
    kind: "ServiceCIDR",
    plural: "servicecidrs",
    singular: "servicecidr",
    namespaced: false,
    short_names: &[],
    categories: &[],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "gNLvruQhW2g=",
    printer_columns: &[],
    schema: None,
};
static POD_DISRUPTION_BUDGET_DEF: ResourceDef = ResourceDef {
    group: "policy",
    version: "v1",
    kind: "PodDisruptionBudget",
    plural: "poddisruptionbudgets",
    singular: "poddisruptionbudget",
    namespaced: true,
    short_names: &["pdb"],
    categories: &[],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "EVWiDmWqyJw=",
    printer_columns: &[],
    schema: None,
};
static CLUSTER_ROLE_BINDING_DEF: ResourceDef = ResourceDef {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRoleBinding",
    plural: "clusterrolebindings",
    singular: "clusterrolebinding",
    namespaced: false,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "48tpQ8gZHFc=",
    printer_columns: &[],
    schema: None,
};
static CLUSTER_ROLE_DEF: ResourceDef = ResourceDef {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRole",
    plural: "clusterroles",
    singular: "clusterrole",
    namespaced: false,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "bYE5ZWDrJ44=",
    printer_columns: &[],
    schema: None,
};
static ROLE_BINDING_DEF: ResourceDef = ResourceDef {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "RoleBinding",
    plural: "rolebindings",
    singular: "rolebinding",
    namespaced: true,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "eGsCzGH6b1g=",
    printer_columns: &[],
    schema: None,
};
static ROLE_DEF: ResourceDef = ResourceDef {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "Role",
    plural: "roles",
    singular: "role",
    namespaced: true,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "7FuwZcIIItM=",
    printer_columns: &[],
    schema: None,
};
static CSI_DRIVER_DEF: ResourceDef = ResourceDef {
    group: "storage.k8s.io",
    version: "v1",
    kind: "CSIDriver",
    plural: "csidrivers",
    singular: "csidriver",
    namespaced: false,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "hL6j/rwBV5w=",
    printer_columns: &[],
    schema: None,
};
static CSI_NODE_DEF: ResourceDef = ResourceDef {
    group: "storage.k8s.io",
    version: "v1",
    kind: "CSINode",
    plural: "csinodes",
    singular: "csinode",
    namespaced: false,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "Pe62DkZtjuo=",
    printer_columns: &[],
    schema: None,
};
static CSI_STORAGE_CAPACITY_DEF: ResourceDef = ResourceDef {
    group: "storage.k8s.io",
    version: "v1",
    kind: "CSIStorageCapacity",
    plural: "csistoragecapacities",
    singular: "csistoragecapacity",
    namespaced: true,
    short_names: &[],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "xeVl+2Ly1kE=",
    printer_columns: &[],
    schema: None,
};
static STORAGE_CLASS_DEF: ResourceDef = ResourceDef {
    group: "storage.k8s.io",
    version: "v1",
    kind: "StorageClass",
    plural: "storageclasses",
    singular: "storageclass",
    namespaced: false,
    short_names: &["sc"],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "K+m6uJwbjGY=",
    printer_columns: &[],
    schema: None,
};
static VOLUME_ATTACHMENT_DEF: ResourceDef = ResourceDef {
    group: "storage.k8s.io",
    version: "v1",
    kind: "VolumeAttachment",
    plural: "volumeattachments",
    singular: "volumeattachment",
    namespaced: false,
    short_names: &[],
    categories: &[],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "tJx/ezt6UDU=",
    printer_columns: &[],
    schema: None,
};
static VOLUME_ATTRIBUTES_CLASS_DEF: ResourceDef = ResourceDef {
    group: "storage.k8s.io",
    version: "v1",
    kind: "VolumeAttributesClass",
    plural: "volumeattributesclasses",
    singular: "volumeattributesclass",
    namespaced: false,
    short_names: &["vac"],
    categories: &[],
    subresources: &[],
    verbs: ALL_VERBS,
    storage_version_hash: "tIjydgKBC5w=",
    printer_columns: &[],
    schema: None,
};
static CUSTOM_RESOURCE_DEFINITION_DEF: ResourceDef = ResourceDef {
    group: "apiextensions.k8s.io",
    version: "v1",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    singular: "customresourcedefinition",
    namespaced: false,
    short_names: &["crd", "crds"],
    categories: &["api-extensions"],
    subresources: &["status"],
    verbs: ALL_VERBS,
    storage_version_hash: "jfWCUB31mvA=",
    printer_columns: &[],
    schema: None,
};
impl ResourceType {
    pub const CONFIG_MAP: ResourceType = ResourceType(&CONFIG_MAP_DEF);
    pub const ENDPOINTS: ResourceType = ResourceType(&ENDPOINTS_DEF);
    pub const EVENT: ResourceType = ResourceType(&EVENT_DEF);
    pub const LIMIT_RANGE: ResourceType = ResourceType(&LIMIT_RANGE_DEF);
    pub const NAMESPACE: ResourceType = ResourceType(&NAMESPACE_DEF);
    pub const NODE: ResourceType = ResourceType(&NODE_DEF);
    pub const PERSISTENT_VOLUME_CLAIM: ResourceType = ResourceType(&PERSISTENT_VOLUME_CLAIM_DEF);
    pub const PERSISTENT_VOLUME: ResourceType = ResourceType(&PERSISTENT_VOLUME_DEF);
    pub const POD: ResourceType = ResourceType(&POD_DEF);
    pub const POD_TEMPLATE: ResourceType = ResourceType(&POD_TEMPLATE_DEF);
    pub const REPLICATION_CONTROLLER: ResourceType = ResourceType(&REPLICATION_CONTROLLER_DEF);
    pub const RESOURCE_QUOTA: ResourceType = ResourceType(&RESOURCE_QUOTA_DEF);
    pub const SECRET: ResourceType = ResourceType(&SECRET_DEF);
    pub const SERVICE_ACCOUNT: ResourceType = ResourceType(&SERVICE_ACCOUNT_DEF);
    pub const SERVICE: ResourceType = ResourceType(&SERVICE_DEF);
    pub const CONTROLLER_REVISION: ResourceType = ResourceType(&CONTROLLER_REVISION_DEF);
    pub const DAEMON_SET: ResourceType = ResourceType(&DAEMON_SET_DEF);
    pub const DEPLOYMENT: ResourceType = ResourceType(&DEPLOYMENT_DEF);
    pub const REPLICA_SET: ResourceType = ResourceType(&REPLICA_SET_DEF);
    pub const STATEFUL_SET: ResourceType = ResourceType(&STATEFUL_SET_DEF);
    pub const CRON_JOB: ResourceType = ResourceType(&CRON_JOB_DEF);
    pub const JOB: ResourceType = ResourceType(&JOB_DEF);
    pub const HORIZONTAL_POD_AUTOSCALER: ResourceType =
        ResourceType(&HORIZONTAL_POD_AUTOSCALER_DEF);
    pub const HORIZONTAL_POD_AUTOSCALER_V1: ResourceType =
        ResourceType(&HORIZONTAL_POD_AUTOSCALER_V1_DEF);
    pub const INGRESS_CLASS: ResourceType = ResourceType(&INGRESS_CLASS_DEF);
    pub const PRIORITY_CLASS: ResourceType = ResourceType(&PRIORITY_CLASS_DEF);
    pub const SELF_SUBJECT_ACCESS_REVIEW: ResourceType =
        ResourceType(&SELF_SUBJECT_ACCESS_REVIEW_DEF);
    pub const SELF_SUBJECT_RULES_REVIEW: ResourceType =
        ResourceType(&SELF_SUBJECT_RULES_REVIEW_DEF);
    pub const SELF_SUBJECT_REVIEW: ResourceType = ResourceType(&SELF_SUBJECT_REVIEW_DEF);
    pub const INGRESS: ResourceType = ResourceType(&INGRESS_DEF);
    pub const IP_ADDRESS: ResourceType = ResourceType(&IP_ADDRESS_DEF);
    pub const NETWORK_POLICY: ResourceType = ResourceType(&NETWORK_POLICY_DEF);
    pub const SERVICE_CIDR: ResourceType = ResourceType(&SERVICE_CIDR_DEF);
    pub const POD_DISRUPTION_BUDGET: ResourceType = ResourceType(&POD_DISRUPTION_BUDGET_DEF);
    pub const CLUSTER_ROLE_BINDING: ResourceType = ResourceType(&CLUSTER_ROLE_BINDING_DEF);
    pub const CLUSTER_ROLE: ResourceType = ResourceType(&CLUSTER_ROLE_DEF);
    pub const ROLE_BINDING: ResourceType = ResourceType(&ROLE_BINDING_DEF);
    pub const ROLE: ResourceType = ResourceType(&ROLE_DEF);
    pub const CSI_DRIVER: ResourceType = ResourceType(&CSI_DRIVER_DEF);
    pub const CSI_NODE: ResourceType = ResourceType(&CSI_NODE_DEF);
    pub const CSI_STORAGE_CAPACITY: ResourceType = ResourceType(&CSI_STORAGE_CAPACITY_DEF);
    pub const STORAGE_CLASS: ResourceType = ResourceType(&STORAGE_CLASS_DEF);
    pub const VOLUME_ATTACHMENT: ResourceType = ResourceType(&VOLUME_ATTACHMENT_DEF);
    pub const VOLUME_ATTRIBUTES_CLASS: ResourceType = ResourceType(&VOLUME_ATTRIBUTES_CLASS_DEF);
    pub const CUSTOM_RESOURCE_DEFINITION: ResourceType =
        ResourceType(&CUSTOM_RESOURCE_DEFINITION_DEF);

    /// Every built-in resource type, as a 1.36 server lists it in discovery.
    pub const BUILTIN: &'static [ResourceType] = &[
        ResourceType::CONFIG_MAP,
        ResourceType::ENDPOINTS,
        ResourceType::EVENT,
        ResourceType::LIMIT_RANGE,
        ResourceType::NAMESPACE,
        ResourceType::NODE,
        ResourceType::PERSISTENT_VOLUME_CLAIM,
        ResourceType::PERSISTENT_VOLUME,
        ResourceType::POD,
        ResourceType::POD_TEMPLATE,
        ResourceType::REPLICATION_CONTROLLER,
        ResourceType::RESOURCE_QUOTA,
        ResourceType::SECRET,
        ResourceType::SERVICE_ACCOUNT,
        ResourceType::SERVICE,
        ResourceType::CONTROLLER_REVISION,
        ResourceType::DAEMON_SET,
        ResourceType::DEPLOYMENT,
        ResourceType::REPLICA_SET,
        ResourceType::STATEFUL_SET,
        ResourceType::SELF_SUBJECT_REVIEW,
        ResourceType::SELF_SUBJECT_ACCESS_REVIEW,
        ResourceType::SELF_SUBJECT_RULES_REVIEW,
        ResourceType::CRON_JOB,
        ResourceType::JOB,
        ResourceType::HORIZONTAL_POD_AUTOSCALER,
        ResourceType::HORIZONTAL_POD_AUTOSCALER_V1,
        ResourceType::INGRESS_CLASS,
        ResourceType::INGRESS,
        ResourceType::IP_ADDRESS,
        ResourceType::NETWORK_POLICY,
        ResourceType::SERVICE_CIDR,
        ResourceType::POD_DISRUPTION_BUDGET,
        ResourceType::CLUSTER_ROLE_BINDING,
        ResourceType::CLUSTER_ROLE,
        ResourceType::ROLE_BINDING,
        ResourceType::ROLE,
        ResourceType::CSI_DRIVER,
        ResourceType::CSI_NODE,
        ResourceType::CSI_STORAGE_CAPACITY,
        ResourceType::STORAGE_CLASS,
        ResourceType::VOLUME_ATTACHMENT,
        ResourceType::VOLUME_ATTRIBUTES_CLASS,
        ResourceType::CUSTOM_RESOURCE_DEFINITION,
        ResourceType::PRIORITY_CLASS,
    ];
}
