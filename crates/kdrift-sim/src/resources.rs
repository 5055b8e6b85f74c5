//! The resource types the demo cluster serves: enough for discovery, routing and kubectl.

/// A resource type served by the demo cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ResourceType {
    Namespace,
    Deployment,
    ReplicaSet,
    Pod,
    Event,
}

impl ResourceType {
    pub const ALL: [ResourceType; 5] = [
        ResourceType::Namespace,
        ResourceType::Deployment,
        ResourceType::ReplicaSet,
        ResourceType::Pod,
        ResourceType::Event,
    ];

    /// API group ("" for the core group).
    pub fn group(self) -> &'static str {
        match self {
            ResourceType::Deployment | ResourceType::ReplicaSet => "apps",
            _ => "",
        }
    }

    pub fn version(self) -> &'static str {
        "v1"
    }

    /// `apiVersion` as written in objects: `v1` or `apps/v1`.
    pub fn api_version(self) -> &'static str {
        match self.group() {
            "apps" => "apps/v1",
            _ => "v1",
        }
    }

    /// The kind's schema, from the OpenAPI documents the demo cluster serves.
    pub fn schema(self) -> crate::schema::Schema {
        crate::schema::Schemas::builtin().root(self.api_version(), self.kind())
    }

    pub fn kind(self) -> &'static str {
        match self {
            ResourceType::Namespace => "Namespace",
            ResourceType::Deployment => "Deployment",
            ResourceType::ReplicaSet => "ReplicaSet",
            ResourceType::Pod => "Pod",
            ResourceType::Event => "Event",
        }
    }

    /// The plural used in URLs.
    pub fn plural(self) -> &'static str {
        match self {
            ResourceType::Namespace => "namespaces",
            ResourceType::Deployment => "deployments",
            ResourceType::ReplicaSet => "replicasets",
            ResourceType::Pod => "pods",
            ResourceType::Event => "events",
        }
    }

    pub fn singular(self) -> &'static str {
        match self {
            ResourceType::Namespace => "namespace",
            ResourceType::Deployment => "deployment",
            ResourceType::ReplicaSet => "replicaset",
            ResourceType::Pod => "pod",
            ResourceType::Event => "event",
        }
    }

    pub fn short_names(self) -> &'static [&'static str] {
        match self {
            ResourceType::Namespace => &["ns"],
            ResourceType::Deployment => &["deploy"],
            ResourceType::ReplicaSet => &["rs"],
            ResourceType::Pod => &["po"],
            ResourceType::Event => &["ev"],
        }
    }

    pub fn namespaced(self) -> bool {
        !matches!(self, ResourceType::Namespace)
    }

    /// Subresources served under `{plural}/{name}/{sub}`.
    pub fn subresources(self) -> &'static [&'static str] {
        match self {
            ResourceType::Deployment => &["status", "scale"],
            ResourceType::ReplicaSet => &["status", "scale"],
            ResourceType::Pod => &["status"],
            ResourceType::Namespace => &["status"],
            ResourceType::Event => &[],
        }
    }

    /// Find a resource type by group and URL plural.
    pub fn from_group_plural(group: &str, plural: &str) -> Option<ResourceType> {
        Self::ALL
            .into_iter()
            .find(|r| r.group() == group && r.plural() == plural)
    }

    /// Find a resource type by `apiVersion` and `kind`, as written in an object.
    pub fn from_api_version_kind(api_version: &str, kind: &str) -> Option<ResourceType> {
        Self::ALL
            .into_iter()
            .find(|r| r.api_version() == api_version && r.kind() == kind)
    }
}
