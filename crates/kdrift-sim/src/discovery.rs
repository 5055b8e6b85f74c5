//! Discovery as a 1.36 server without aggregated discovery answers it: `/version`, `/api`,
//! `/apis`, `/apis/{group}` and the group-version resource lists, made from the types the store
//! serves (built-in and custom). Aggregated discovery (`as=APIGroupDiscoveryList`) is declined
//! the way such a server declines it: the legacy document with `Content-Type:
//! application/json`, which clients take as "not supported".
use std::net::SocketAddr;

use serde_json::{Value, json};

use super::resources::ResourceType;

/// `/version`: the 1.36 server the OpenAPI documents were captured from.
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "36",
        "emulationMajor": "1",
        "emulationMinor": "36",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "35",
        "gitVersion": "v1.36.2",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-08-21T00:00:00Z",
        "goVersion": "go1.26.10",
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

/// The named groups served, each with its versions, in the order a server lists them.
fn named_groups(types: &[ResourceType]) -> Vec<(&'static str, Vec<&'static str>)> {
    let mut groups: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for r in types.iter().filter(|r| !r.group().is_empty()) {
        match groups.iter_mut().find(|(g, _)| *g == r.group()) {
            Some((_, versions)) if !versions.contains(&r.version()) => versions.push(r.version()),
            Some(_) => {}
            None => groups.push((r.group(), vec![r.version()])),
        }
    }
    groups
}

fn group_value(name: &str, versions: &[&str]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({
        "name": name,
        "preferredVersion": versions.first().cloned().unwrap_or(Value::Null),
        "versions": versions,
    })
}

/// `/apis`
pub fn groups(types: &[ResourceType]) -> Value {
    let groups: Vec<Value> = named_groups(types)
        .iter()
        .map(|(name, versions)| group_value(name, versions))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/{group}`
pub fn group(types: &[ResourceType], name: &str) -> Option<Value> {
    let groups = named_groups(types);
    let (_, versions) = groups.iter().find(|(g, _)| *g == name)?;
    let mut g = group_value(name, versions);
    g["kind"] = json!("APIGroup");
    g["apiVersion"] = json!("v1");
    Some(g)
}

/// `/api/v1`, `/apis/apps/v1`: the resources of a group version.
pub fn resources(types: &[ResourceType], group: &str, version: &str) -> Value {
    let mut list = Vec::new();
    for r in types
        .iter()
        .filter(|r| r.group() == group && r.version() == version)
    {
        let mut entry = json!({
            "name": r.plural(),
            "singularName": r.singular(),
            "namespaced": r.namespaced(),
            "kind": r.kind(),
            "verbs": r.verbs(),
        });
        if !r.short_names().is_empty() {
            entry["shortNames"] = json!(r.short_names());
        }
        if !r.categories().is_empty() {
            entry["categories"] = json!(r.categories());
        }
        if !r.def().storage_version_hash.is_empty() {
            entry["storageVersionHash"] = json!(r.def().storage_version_hash);
        }
        list.push(entry);
        for sub in r.subresources() {
            let mut s = json!({
                "name": format!("{}/{sub}", r.plural()),
                "singularName": r.singular(),
                "namespaced": r.namespaced(),
                "kind": r.kind(),
                "verbs": ["get", "patch", "update"],
            });
            match *sub {
                "scale" => {
                    s["group"] = json!("autoscaling");
                    s["version"] = json!("v1");
                    s["kind"] = json!("Scale");
                }
                "log" => s["verbs"] = json!(["get"]),
                "binding" => {
                    s["kind"] = json!("Binding");
                    s["verbs"] = json!(["create"]);
                }
                "token" => {
                    s["group"] = json!("authentication.k8s.io");
                    s["version"] = json!("v1");
                    s["kind"] = json!("TokenRequest");
                    s["verbs"] = json!(["create"]);
                }
                "eviction" => {
                    s["group"] = json!("policy");
                    s["version"] = json!("v1");
                    s["kind"] = json!("Eviction");
                    s["verbs"] = json!(["create"]);
                }
                _ => {}
            }
            list.push(s);
        }
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": list})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apps_v1_lists_its_types_with_their_subresources() {
        let list = resources(ResourceType::BUILTIN, "apps", "v1");
        let names: Vec<&str> = list["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "controllerrevisions",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status",
            ]
        );
        let scale = list["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["name"] == "deployments/scale"));
        assert_eq!(scale.map(|s| s["kind"].clone()), Some(json!("Scale")));
        let groups = groups(ResourceType::BUILTIN);
        let names: Vec<&str> = groups["groups"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|g| g["name"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "apps",
                "authentication.k8s.io",
                "authorization.k8s.io",
                "batch",
                "autoscaling",
                "networking.k8s.io",
                "policy",
                "rbac.authorization.k8s.io",
                "storage.k8s.io",
                "apiextensions.k8s.io",
                "scheduling.k8s.io"
            ]
        );
    }
}
