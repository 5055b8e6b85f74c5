//! URL → what is asked. The Kubernetes URL scheme is regular: `/api/v1/...` for the core group,
//! `/apis/{group}/{version}/...` for the others, then `[watch/]`, `[namespaces/{ns}/]`,
//! `{plural}[/{name}[/{subresource}]]`.
use super::response::decode_path;
use crate::resources::ResourceType;

/// A request target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Version,
    /// `/api`
    CoreVersions,
    /// `/apis`
    Groups,
    /// `/apis/{group}`
    Group(String),
    /// `/api/v1`, `/apis/{group}/{version}`
    Resources {
        group: String,
        version: String,
    },
    Health,
    /// `/openapi/v2`
    OpenApiV2,
    /// `/openapi/v3`
    OpenApiV3Index,
    /// `/openapi/v3/api/v1`, `/openapi/v3/apis/{group}/{version}`: the path after `/openapi/v3/`.
    OpenApiV3(String),
    /// A resource path.
    Resource(ResourcePath),
    /// Anything else: 404.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    pub resource: ResourceType,
    /// `None`: all namespaces (or a cluster-scoped type).
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
    /// The deprecated `/watch/` path prefix.
    pub watch_prefix: bool,
}

/// Whether a type of `types` is served in this group and version.
pub fn served_group_version(types: &[ResourceType], group: &str, version: &str) -> bool {
    types
        .iter()
        .any(|r| r.group() == group && r.version() == version)
}

/// What `path` asks for, among the served `types`.
pub fn route(path: &str, types: &[ResourceType]) -> Route {
    let served = |group: &str, version: &str| served_group_version(types, group, version);
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(decode_path)
        .collect();
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    match segs.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "livez" | "readyz"] => Route::Health,
        ["api"] => Route::CoreVersions,
        ["openapi", "v2"] => Route::OpenApiV2,
        ["openapi", "v3"] => Route::OpenApiV3Index,
        ["openapi", "v3", "api", version] if served("", version) => {
            Route::OpenApiV3(format!("api/{version}"))
        }
        ["openapi", "v3", "apis", group, version] if served(group, version) => {
            Route::OpenApiV3(format!("apis/{group}/{version}"))
        }
        ["apis"] => Route::Groups,
        ["apis", group] if types.iter().any(|r| r.group() == *group) => {
            Route::Group(group.to_string())
        }
        ["api", version] if served("", version) => Route::Resources {
            group: String::new(),
            version: version.to_string(),
        },
        ["apis", group, version] if served(group, version) => Route::Resources {
            group: group.to_string(),
            version: version.to_string(),
        },
        ["api", version, rest @ ..] if served("", version) => {
            resource_route(types, "", version, rest)
        }
        ["apis", group, version, rest @ ..] if served(group, version) => {
            resource_route(types, group, version, rest)
        }
        _ => Route::Unknown,
    }
}

fn resource_route(types: &[ResourceType], group: &str, version: &str, rest: &[&str]) -> Route {
    let find = |plural: &str| {
        types
            .iter()
            .copied()
            .find(|r| r.group() == group && r.version() == version && r.plural() == plural)
    };
    let (watch_prefix, rest) = match rest {
        ["watch", tail @ ..] => (true, tail),
        _ => (false, rest),
    };
    let (namespace, rest) = match rest {
        ["namespaces", ns, plural, ..] if find(plural).is_some() => {
            (Some(ns.to_string()), &rest[2..])
        }
        _ => (None, rest),
    };
    let parsed = match rest {
        [plural] => Some((plural, None, None)),
        [plural, name] => Some((plural, Some(name.to_string()), None)),
        [plural, name, sub] => Some((plural, Some(name.to_string()), Some(sub.to_string()))),
        _ => None,
    };
    let Some((plural, name, subresource)) = parsed else {
        return Route::Unknown;
    };
    let Some(resource) = find(plural) else {
        return Route::Unknown;
    };
    if namespace.is_some() && !resource.namespaced() {
        return Route::Unknown;
    }
    if let Some(sub) = &subresource
        && !resource.subresources().contains(&sub.as_str())
    {
        return Route::Unknown;
    }
    Route::Resource(ResourcePath {
        resource,
        namespace,
        name,
        subresource,
        watch_prefix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(path: &str) -> Route {
        super::route(path, ResourceType::BUILTIN)
    }

    fn res(path: &str) -> ResourcePath {
        match route(path) {
            Route::Resource(r) => r,
            other => ResourcePath {
                resource: ResourceType::EVENT,
                namespace: Some(format!("{other:?}")),
                name: None,
                subresource: None,
                watch_prefix: false,
            },
        }
    }

    #[test]
    fn resource_paths_route_as_on_a_real_server() {
        let r = res("/apis/apps/v1/namespaces/shop/deployments/web/scale");
        assert_eq!(r.resource, ResourceType::DEPLOYMENT);
        assert_eq!(r.namespace.as_deref(), Some("shop"));
        assert_eq!(r.name.as_deref(), Some("web"));
        assert_eq!(r.subresource.as_deref(), Some("scale"));

        let r = res("/api/v1/namespaces/shop");
        assert_eq!(
            (r.resource, r.namespace, r.name),
            (ResourceType::NAMESPACE, None, Some("shop".into()))
        );
        let r = res("/api/v1/namespaces/shop/status");
        assert_eq!(r.subresource.as_deref(), Some("status"));
        let r = res("/api/v1/watch/namespaces/shop/pods");
        assert!(
            r.watch_prefix
                && r.resource == ResourceType::POD
                && r.namespace.as_deref() == Some("shop")
        );
        let r = res("/apis/apps/v1/deployments");
        assert_eq!((r.resource, r.namespace), (ResourceType::DEPLOYMENT, None));
    }

    #[test]
    fn unknown_paths_are_not_routed() {
        assert_eq!(
            route("/apis/apps/v1/namespaces/shop/statefulset"),
            Route::Unknown
        );
        assert_eq!(route("/apis/batch/v2/jobs"), Route::Unknown);
        assert_eq!(route("/apis/example.com/v1/widgets"), Route::Unknown);
        // A custom resource is served once its type is.
        let widgets = ResourceType::define(crate::resources::ResourceDef {
            group: "example.com",
            version: "v1",
            kind: "Widget",
            plural: "widgets",
            singular: "widget",
            namespaced: true,
            short_names: &[],
            categories: &[],
            subresources: &[],
            verbs: &[],
            storage_version_hash: "",
            schema: Some(crate::schema::Schema::UNKNOWN),
            printer_columns: &[],
        });
        let mut types = ResourceType::BUILTIN.to_vec();
        types.push(widgets);
        assert!(matches!(
            super::route("/apis/example.com/v1/namespaces/a/widgets/w1", &types),
            Route::Resource(ResourcePath { resource, .. }) if resource == widgets
        ));
        assert_eq!(
            route("/apis/apps/v1/namespaces/shop/deployments/web/logs"),
            Route::Unknown
        );
        assert_eq!(
            route("/api/v1"),
            Route::Resources {
                group: String::new(),
                version: "v1".into()
            }
        );
    }
}
