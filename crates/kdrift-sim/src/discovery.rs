//! Discovery as a 1.33 server without aggregated discovery answers it: `/version`, `/api`,
//! `/apis`, `/apis/{group}` and the group-version resource lists. Aggregated discovery
//! (`as=APIGroupDiscoveryList`) is declined the way such a server declines it: the legacy
//! document with `Content-Type: application/json`, which clients take as "not supported".
use std::net::SocketAddr;

use serde_json::{Value, json};

use super::resources::ResourceType;

/// `/version`: a 1.33 server.
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "32",
        "gitVersion": "v1.33.0",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-04-23T00:00:00Z",
        "goVersion": "go1.24.2",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

/// `/api`
pub fn core_versions(addr: SocketAddr) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": addr.to_string()}]
    })
}

fn apps_group() -> Value {
    json!({
        "name": "apps",
        "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
        "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}
    })
}

/// `/apis`
pub fn groups() -> Value {
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [apps_group()]})
}

/// `/apis/{group}`
pub fn group(name: &str) -> Option<Value> {
    (name == "apps").then(|| {
        let mut g = apps_group();
        g["kind"] = json!("APIGroup");
        g["apiVersion"] = json!("v1");
        g
    })
}

const ALL_VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// `/api/v1`, `/apis/apps/v1`: the resources of a group version.
pub fn resources(group: &str) -> Value {
    let mut list = Vec::new();
    for r in ResourceType::ALL.into_iter().filter(|r| r.group() == group) {
        let verbs: Vec<&str> = if r == ResourceType::Namespace {
            ALL_VERBS
                .iter()
                .copied()
                .filter(|v| *v != "deletecollection")
                .collect()
        } else {
            ALL_VERBS.to_vec()
        };
        let mut entry = json!({
            "name": r.plural(),
            "singularName": r.singular(),
            "namespaced": r.namespaced(),
            "kind": r.kind(),
            "verbs": verbs,
            "shortNames": r.short_names(),
        });
        if matches!(
            r,
            ResourceType::Deployment | ResourceType::ReplicaSet | ResourceType::Pod
        ) {
            entry["categories"] = json!(["all"]);
        }
        list.push(entry);
        for sub in r.subresources() {
            let mut s = json!({
                "name": format!("{}/{sub}", r.plural()),
                "singularName": "",
                "namespaced": r.namespaced(),
                "kind": r.kind(),
                "verbs": ["get", "patch", "update"],
            });
            if *sub == "scale" {
                s["group"] = json!("autoscaling");
                s["version"] = json!("v1");
                s["kind"] = json!("Scale");
            }
            list.push(s);
        }
    }
    let group_version = if group.is_empty() {
        "v1".to_string()
    } else {
        format!("{group}/v1")
    };
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": list})
}

/// `/openapi/v3`: where each group version's document is.
pub fn openapi_v3_index() -> Value {
    json!({"paths": {
        "api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=kdrift-demo-v1"},
        "apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=kdrift-demo-apps-v1"}
    }})
}

fn query_param(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "description": description, "schema": {"type": "string", "uniqueItems": true}})
}

fn operation(r: ResourceType, action: &str, extra: &[Value]) -> Value {
    let gvk = json!({"group": r.group(), "version": "v1", "kind": r.kind()});
    json!({
        "operationId": format!("{action}{}", r.kind()),
        "parameters": extra,
        "responses": {"200": {"description": "OK"}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
    })
}

/// `/openapi/v3/{api/v1 | apis/apps/v1}`: the paths and operations of a group version, with
/// the query parameters each write accepts (kubectl looks for `fieldValidation` on PATCH to
/// decide to validate on the server). Schemas are left out: kubectl then computes strategic
/// merge patches from its own built-in types, as it does for any server without them.
pub fn openapi_v3(group: &str) -> Option<Value> {
    if !matches!(group, "" | "apps") {
        return None;
    }
    let writes = [
        query_param(
            "dryRun",
            "When present, indicates that modifications should not be persisted.",
        ),
        query_param(
            "fieldManager",
            "fieldManager is a name associated with the actor or entity that is making these changes.",
        ),
        query_param(
            "fieldValidation",
            "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict.",
        ),
    ];
    let mut patch_params = writes.to_vec();
    patch_params.push(query_param(
        "force",
        "Force is going to \"force\" Apply requests.",
    ));
    let prefix = if group.is_empty() {
        "/api/v1".to_string()
    } else {
        format!("/apis/{group}/v1")
    };
    let mut paths = serde_json::Map::new();
    for r in ResourceType::ALL.into_iter().filter(|r| r.group() == group) {
        let base = if r.namespaced() {
            format!("{prefix}/namespaces/{{namespace}}/{}", r.plural())
        } else {
            format!("{prefix}/{}", r.plural())
        };
        paths.insert(
            base.clone(),
            json!({"get": operation(r, "list", &[]), "post": operation(r, "post", &writes)}),
        );
        let item = json!({
            "get": operation(r, "get", &[]),
            "put": operation(r, "put", &writes),
            "patch": operation(r, "patch", &patch_params),
            "delete": operation(r, "delete", &writes[..1]),
        });
        paths.insert(format!("{base}/{{name}}"), item);
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": paths,
        "components": {"schemas": {}}
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apps_v1_lists_deployments_with_their_scale_subresource() {
        let list = resources("apps");
        let names: Vec<&str> = list["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "deployments",
                "deployments/status",
                "deployments/scale",
                "replicasets",
                "replicasets/status",
                "replicasets/scale"
            ]
        );
        let scale = list["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["name"] == "deployments/scale"));
        assert_eq!(scale.map(|s| s["kind"].clone()), Some(json!("Scale")));
    }
}
