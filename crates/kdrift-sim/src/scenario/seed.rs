//! Seeding the demo cluster: every demo manifest created as `kubectl apply` (client-side)
//! creates it, so the cluster starts in sync with `demo/` and with the managedFields and
//! last-applied annotation a real team's cluster would carry; then the GitOps controllers'
//! first sync of the folders their Application and Kustomization name, as they apply them.
use serde_json::{Map, Value};

use super::manifests::{DEMO_RELEASES, DemoObject, demo_objects};
use crate::controller::gitops::{
    self, APPLICATION, ARGOCD_MANAGER, AppSpec, FLUX_MANAGER, KUSTOMIZATION,
};
use crate::controller::nodes::{
    DEMO_NODES, controller_manager_patch, node_status, registered_node,
};
use crate::error::ApiError;
use crate::resources::ResourceType;
use crate::store::{Patch, Store, WriteOptions};

pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// The field manager of `kubectl apply` without `--server-side`.
pub const CLIENT_SIDE_APPLY: &str = "kubectl-client-side-apply";

/// Register the demo's nodes, then create the namespaces and every demo object, as `kubectl
/// apply -R -f demo/` would, then install the demo's Helm release as helm does. Objects that already exist are left alone, so seeding twice is
/// harmless.
pub fn seed(store: &Store) -> Result<(), ApiError> {
    register_nodes(store)?;
    let objects = demo_objects().map_err(|e| ApiError::Internal(e.to_string()))?;
    // Namespaces first: the objects in them cannot be created before; then the definitions
    // of custom resources, which make their kinds served.
    let (first, rest): (Vec<_>, Vec<_>) = objects
        .iter()
        .cloned()
        .partition(|o| o.object["kind"] == "Namespace");
    let (definitions, rest): (Vec<_>, Vec<_>) = rest
        .into_iter()
        .partition(|o| o.object["kind"] == "CustomResourceDefinition");
    for demo in first.into_iter().chain(definitions).chain(rest) {
        let kind = demo.object["kind"].as_str().unwrap_or_default();
        let api_version = demo.object["apiVersion"].as_str().unwrap_or_default();
        let resource = store.resource_type_of(api_version, kind).ok_or_else(|| {
            ApiError::Internal(format!(
                "demo/{}: no resource for \"{api_version}\" \"{kind}\"",
                demo.path
            ))
        })?;
        let object = as_client_side_applied(resource, demo.object);
        match store.create(resource, object, &WriteOptions::manager(CLIENT_SIDE_APPLY)) {
            Ok(_) | Err(ApiError::AlreadyExists(_)) => {}
            Err(e) => return Err(e),
        }
    }
    gitops_first_syncs(store, &objects)?;
    for release in DEMO_RELEASES {
        super::helm::install(store, release)?;
    }
    Ok(())
}

/// Argo CD's and Flux's first sync of the objects the seed created (the team applied them with
/// kubectl before adopting GitOps, a common history): server-side apply with force as their
/// field managers, with Argo CD's tracking annotation and Flux's owner labels, which the
/// manifests in git do not carry.
fn gitops_first_syncs(store: &Store, objects: &[DemoObject]) -> Result<(), ApiError> {
    for owner in objects {
        let api_version = owner.object["apiVersion"].as_str().unwrap_or_default();
        let kind = owner.object["kind"].as_str().unwrap_or_default();
        let (configs, manager): (Vec<Value>, &str) = if (api_version, kind) == APPLICATION {
            let Some(spec) = AppSpec::of(&owner.object) else {
                continue;
            };
            let configs = objects
                .iter()
                .filter(|o| gitops::is_manifest_of(o.path, &spec.path, false))
                .map(|o| gitops::argocd_config(&spec, &o.object))
                .collect();
            (configs, ARGOCD_MANAGER)
        } else if (api_version, kind) == KUSTOMIZATION {
            let path = owner.object.pointer("/spec/path").and_then(Value::as_str);
            let dir = gitops::folder(path.unwrap_or_default());
            let configs = objects
                .iter()
                .filter(|o| gitops::is_manifest_of(o.path, &dir, true))
                .map(|o| gitops::flux_config(&owner.object, &o.object))
                .collect();
            (configs, FLUX_MANAGER)
        } else {
            continue;
        };
        for config in configs {
            let kind = config["kind"].as_str().unwrap_or_default();
            let api_version = config["apiVersion"].as_str().unwrap_or_default();
            let Some(resource) = store.resource_type_of(api_version, kind) else {
                continue;
            };
            let namespace = config
                .pointer("/metadata/namespace")
                .and_then(Value::as_str);
            let name = config.pointer("/metadata/name").and_then(Value::as_str);
            let (namespace, name) = (
                namespace.unwrap_or_default().to_string(),
                name.unwrap_or_default().to_string(),
            );
            let patch = Patch::Apply {
                config,
                force: true,
            };
            store.patch(
                resource,
                &namespace,
                &name,
                &patch,
                &WriteOptions::manager(manager),
            )?;
        }
    }
    Ok(())
}

/// The demo's three nodes, as their kubelets register them.
pub fn register_nodes(store: &Store) -> Result<(), ApiError> {
    for (index, name) in DEMO_NODES.iter().enumerate() {
        register_node(store, name, index)?;
    }
    Ok(())
}

/// One node as its kubelet registers it (the Node, then its status) and the controller manager
/// completes it (a pod range); `index` (0-based) sets its addresses. A node that exists stays.
pub fn register_node(store: &Store, name: &str, index: usize) -> Result<(), ApiError> {
    match store.create(
        ResourceType::NODE,
        registered_node(name),
        &WriteOptions::manager("kubelet"),
    ) {
        Ok(_) => {}
        Err(ApiError::AlreadyExists(_)) => return Ok(()),
        Err(e) => return Err(e),
    }
    let status = node_status(name, index, &store.now_rfc3339());
    store.patch(
        ResourceType::NODE,
        "",
        name,
        &Patch::Merge(status),
        &WriteOptions::status("kubelet"),
    )?;
    store.patch(
        ResourceType::NODE,
        "",
        name,
        &Patch::Merge(controller_manager_patch(index)),
        &WriteOptions::manager("kube-controller-manager"),
    )?;
    Ok(())
}

/// The object `kubectl apply` sends on create: the manifest with its namespace filled in and
/// the last-applied-configuration annotation holding the manifest itself.
pub fn as_client_side_applied(resource: ResourceType, mut manifest: Value) -> Value {
    if resource.namespaced()
        && manifest.pointer("/metadata/namespace").is_none()
        && let Some(meta) = manifest.get_mut("metadata").and_then(Value::as_object_mut)
    {
        meta.insert("namespace".into(), Value::String("default".into()));
    }
    let applied = last_applied_configuration(&manifest);
    if let Some(meta) = manifest.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(annotations) = annotations.as_object_mut() {
            annotations.insert(LAST_APPLIED.into(), Value::String(applied));
        }
    }
    manifest
}

/// The annotation's value as kubectl writes it: compact JSON with sorted keys,
/// `metadata.annotations` present (empty when the manifest has none), a trailing newline.
pub fn last_applied_configuration(manifest: &Value) -> String {
    let mut copy = manifest.clone();
    if let Some(meta) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(annotations) = annotations.as_object_mut() {
            annotations.remove(LAST_APPLIED);
        }
    }
    format!("{}\n", sorted(&copy))
}

fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn last_applied_matches_what_kubectl_writes() {
        // The manifest and annotation of reference/kubernetes-1.20/deploy-after-client-apply.json.
        let manifest: Value = serde_yaml::from_str(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: capture\n  labels: {app: web}\n\
             spec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: registry.example/web:1.0\n        ports: [{containerPort: 8080}]\n        env: [{name: MODE, value: prod}]\n        resources: {requests: {cpu: 100m, memory: 64Mi}}\n",
        )
        .unwrap();
        let expected = "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"annotations\":{},\"labels\":{\"app\":\"web\"},\"name\":\"web\",\"namespace\":\"capture\"},\"spec\":{\"replicas\":2,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"env\":[{\"name\":\"MODE\",\"value\":\"prod\"}],\"image\":\"registry.example/web:1.0\",\"name\":\"web\",\"ports\":[{\"containerPort\":8080}],\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}]}}}}\n";
        assert_eq!(last_applied_configuration(&manifest), expected);
        let created = as_client_side_applied(ResourceType::DEPLOYMENT, manifest);
        assert_eq!(created["metadata"]["annotations"][LAST_APPLIED], expected);
    }

    #[test]
    fn namespace_defaults_and_existing_annotations_are_kept() {
        let manifest = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "a", "annotations": {"team": "x"}}});
        let created = as_client_side_applied(ResourceType::DEPLOYMENT, manifest);
        assert_eq!(created["metadata"]["namespace"], "default");
        assert_eq!(created["metadata"]["annotations"]["team"], "x");
        let applied: Value = serde_json::from_str(
            created["metadata"]["annotations"][LAST_APPLIED]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            applied["metadata"]["annotations"],
            serde_json::json!({"team": "x"})
        );
        assert_eq!(applied["metadata"]["namespace"], "default");
    }
}
