//! The demo manifests under `demo/`, compiled into the binary so `kdrift demo` works from any
//! directory, and their parsing into API objects.
use serde_json::Value;

/// (path relative to `demo/`, contents) of every demo manifest. Namespaces come first, as
/// they must be created before the objects in them, then the definitions of custom resources.
pub const DEMO_MANIFESTS: &[(&str, &str)] = &[
    (
        ".kdrift.yaml",
        include_str!("../../../../demo/.kdrift.yaml"),
    ),
    (
        "namespaces.yaml",
        include_str!("../../../../demo/namespaces.yaml"),
    ),
    (
        "crds/applications.yaml",
        include_str!("../../../../demo/crds/applications.yaml"),
    ),
    (
        "crds/backuppolicies.yaml",
        include_str!("../../../../demo/crds/backuppolicies.yaml"),
    ),
    (
        "crds/gitrepositories.yaml",
        include_str!("../../../../demo/crds/gitrepositories.yaml"),
    ),
    (
        "crds/kustomizations.yaml",
        include_str!("../../../../demo/crds/kustomizations.yaml"),
    ),
    (
        "argocd/shop.yaml",
        include_str!("../../../../demo/argocd/shop.yaml"),
    ),
    (
        "flux-system/demo.yaml",
        include_str!("../../../../demo/flux-system/demo.yaml"),
    ),
    (
        "flux-system/platform.yaml",
        include_str!("../../../../demo/flux-system/platform.yaml"),
    ),
    (
        "inventory/base/deployment.yaml",
        include_str!("../../../../demo/inventory/base/deployment.yaml"),
    ),
    (
        "inventory/base/kustomization.yaml",
        include_str!("../../../../demo/inventory/base/kustomization.yaml"),
    ),
    (
        "inventory/base/service.yaml",
        include_str!("../../../../demo/inventory/base/service.yaml"),
    ),
    (
        "inventory/base/serviceaccount.yaml",
        include_str!("../../../../demo/inventory/base/serviceaccount.yaml"),
    ),
    (
        "inventory/base/settings.properties",
        include_str!("../../../../demo/inventory/base/settings.properties"),
    ),
    (
        "inventory/components/tracing/kustomization.yaml",
        include_str!("../../../../demo/inventory/components/tracing/kustomization.yaml"),
    ),
    (
        "inventory/overlays/prod/kustomization.yaml",
        include_str!("../../../../demo/inventory/overlays/prod/kustomization.yaml"),
    ),
    (
        "inventory/overlays/prod/namespace.yaml",
        include_str!("../../../../demo/inventory/overlays/prod/namespace.yaml"),
    ),
    (
        "inventory/overlays/prod/resources.yaml",
        include_str!("../../../../demo/inventory/overlays/prod/resources.yaml"),
    ),
    (
        "inventory/overlays/staging/kustomization.yaml",
        include_str!("../../../../demo/inventory/overlays/staging/kustomization.yaml"),
    ),
    (
        "inventory/overlays/staging/namespace.yaml",
        include_str!("../../../../demo/inventory/overlays/staging/namespace.yaml"),
    ),
    (
        "payments/fraud-check.yaml",
        include_str!("../../../../demo/payments/fraud-check.yaml"),
    ),
    (
        "payments/ledger-backup.yaml",
        include_str!("../../../../demo/payments/ledger-backup.yaml"),
    ),
    (
        "payments/ledger-db.yaml",
        include_str!("../../../../demo/payments/ledger-db.yaml"),
    ),
    (
        "payments/ledger-reconcile.yaml",
        include_str!("../../../../demo/payments/ledger-reconcile.yaml"),
    ),
    (
        "payments/ledger.yaml",
        include_str!("../../../../demo/payments/ledger.yaml"),
    ),
    (
        "payments/payments-api.yaml",
        include_str!("../../../../demo/payments/payments-api.yaml"),
    ),
    (
        "platform/auth.yaml",
        include_str!("../../../../demo/platform/auth.yaml"),
    ),
    (
        "platform/ingress-gateway.yaml",
        include_str!("../../../../demo/platform/ingress-gateway.yaml"),
    ),
    (
        "platform/metrics-collector.yaml",
        include_str!("../../../../demo/platform/metrics-collector.yaml"),
    ),
    (
        "platform/node-agent.yaml",
        include_str!("../../../../demo/platform/node-agent.yaml"),
    ),
    (
        "search/Chart.yaml",
        include_str!("../../../../demo/search/Chart.yaml"),
    ),
    (
        "search/values.yaml",
        include_str!("../../../../demo/search/values.yaml"),
    ),
    (
        "search/values-prod.yaml",
        include_str!("../../../../demo/search/values-prod.yaml"),
    ),
    (
        "search/templates/_helpers.tpl",
        include_str!("../../../../demo/search/templates/_helpers.tpl"),
    ),
    (
        "search/templates/configmap.yaml",
        include_str!("../../../../demo/search/templates/configmap.yaml"),
    ),
    (
        "search/templates/deployment.yaml",
        include_str!("../../../../demo/search/templates/deployment.yaml"),
    ),
    (
        "search/templates/service.yaml",
        include_str!("../../../../demo/search/templates/service.yaml"),
    ),
    (
        "shop/cart.yaml",
        include_str!("../../../../demo/shop/cart.yaml"),
    ),
    (
        "shop/catalog.yaml",
        include_str!("../../../../demo/shop/catalog.yaml"),
    ),
    (
        "shop/checkout.yaml",
        include_str!("../../../../demo/shop/checkout.yaml"),
    ),
    (
        "shop/frontend.yaml",
        include_str!("../../../../demo/shop/frontend.yaml"),
    ),
    (
        "shop/quota.yaml",
        include_str!("../../../../demo/shop/quota.yaml"),
    ),
];

/// The URL of the demo repository's `origin`, as the demo's Argo CD Application names it
/// (`spec.source.repoURL`); nothing is ever pushed there: the GitOps controllers of the demo
/// cluster read the local repository it stands for (`SimConfig::gitops_repos`).
pub const DEMO_REPO_URL: &str = "https://git.example/kdrift/demo.git";

/// The demo's kustomize application: every file under these folders is kustomize's to read (a
/// base, overlays, a component), never a manifest of its own.
pub const KUSTOMIZE_TREES: &[&str] = &["inventory/"];

/// (root, what `kubectl kustomize demo/<root>` renders) of every root of [`KUSTOMIZE_TREES`]:
/// what the seed creates, as `kubectl apply -k` of each overlay would. The demo cluster cannot
/// count on a kustomize being installed; a test of the product renders each root and compares.
pub const DEMO_RENDERED: &[(&str, &str)] = &[
    (
        "inventory/overlays/prod",
        include_str!("rendered/inventory-prod.yaml"),
    ),
    (
        "inventory/overlays/staging",
        include_str!("rendered/inventory-staging.yaml"),
    ),
];

/// The demo's Helm chart: every file under these folders is helm's to read (the chart, its
/// values files, its templates), never a manifest of its own.
pub const HELM_CHARTS: &[&str] = &["search/"];

/// A release of the demo's chart, installed by the seed as `helm install` leaves one.
#[derive(Debug, Clone, Copy)]
pub struct DemoRelease {
    /// The chart's folder under `demo/`.
    pub chart: &'static str,
    pub name: &'static str,
    pub namespace: &'static str,
    /// The values file given with `-f`, under `demo/`.
    pub values: &'static str,
    /// What `helm template NAME demo/CHART -n NAMESPACE -f demo/VALUES` renders: the release's
    /// manifest. The demo cluster cannot count on a helm being installed; a test of the product
    /// renders the chart with the real helm and compares.
    pub manifest: &'static str,
}

/// Every release of [`HELM_CHARTS`] the seed installs.
pub const DEMO_RELEASES: &[DemoRelease] = &[DemoRelease {
    chart: "search",
    name: "search",
    namespace: "search",
    values: "search/values-prod.yaml",
    manifest: include_str!("rendered/search-prod.yaml"),
}];

/// The contents of `demo/PATH`, when it is embedded.
pub fn demo_file(path: &str) -> Option<&'static str> {
    DEMO_MANIFESTS
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, contents)| *contents)
}

/// A demo manifest that does not parse (only possible if `demo/` was edited badly).
#[derive(Debug, thiserror::Error)]
#[error("demo/{path}: document {document}: {source}")]
pub struct ManifestError {
    pub path: String,
    pub document: usize,
    #[source]
    pub source: serde_yaml::Error,
}

/// One object of a demo manifest, with where it came from.
#[derive(Debug, Clone)]
pub struct DemoObject {
    pub path: &'static str,
    pub object: Value,
}

/// Every object of [`DEMO_MANIFESTS`] (but `.kdrift.yaml`, kdrift's settings) outside the
/// kustomize trees and the charts (whose release the seed installs apart: `helm::install`), in
/// file order (empty documents skipped), then every object the trees' roots render ([`DEMO_RENDERED`], `path`
/// naming the root).
pub fn demo_objects() -> Result<Vec<DemoObject>, ManifestError> {
    let mut objects = Vec::new();
    let plain = DEMO_MANIFESTS.iter().filter(|(path, _)| {
        *path != ".kdrift.yaml"
            && !KUSTOMIZE_TREES
                .iter()
                .chain(HELM_CHARTS)
                .any(|tree| path.starts_with(tree))
    });
    for (path, contents) in plain.chain(DEMO_RENDERED) {
        for (index, document) in serde_yaml::Deserializer::from_str(contents).enumerate() {
            let value: Value =
                serde::Deserialize::deserialize(document).map_err(|source| ManifestError {
                    path: (*path).to_string(),
                    document: index + 1,
                    source,
                })?;
            if !value.is_null() {
                objects.push(DemoObject {
                    path,
                    object: value,
                });
            }
        }
    }
    Ok(objects)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::object::{at, str_at};
    use std::collections::BTreeSet;

    fn deployments() -> Vec<Value> {
        demo_objects()
            .unwrap()
            .into_iter()
            .map(|o| o.object)
            .filter(|o| o["kind"] == "Deployment")
            .collect()
    }

    #[test]
    fn every_file_under_demo_is_embedded() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../demo");
        let mut on_disk = Vec::new();
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    on_disk.push(
                        path.strip_prefix(&root)
                            .unwrap()
                            .to_string_lossy()
                            .into_owned(),
                    );
                }
            }
        }
        on_disk.sort();
        let mut embedded: Vec<String> = DEMO_MANIFESTS.iter().map(|(p, _)| p.to_string()).collect();
        embedded.sort();
        assert_eq!(embedded, on_disk);
        for (path, contents) in DEMO_MANIFESTS {
            assert_eq!(
                &std::fs::read_to_string(root.join(path)).unwrap(),
                contents,
                "{path}"
            );
        }
    }

    #[test]
    fn demo_has_enough_deployments_namespaces_and_variety() {
        let deploys = deployments();
        assert!(deploys.len() >= 8, "{} deployments", deploys.len());
        let namespaces: BTreeSet<&str> = deploys
            .iter()
            .filter_map(|d| str_at(d, &["metadata", "namespace"]))
            .collect();
        assert!(namespaces.len() >= 3, "{namespaces:?}");
        let declared: BTreeSet<String> = demo_objects()
            .unwrap()
            .iter()
            .filter(|o| o.object["kind"] == "Namespace")
            .map(|o| o.object["metadata"]["name"].as_str().unwrap().to_string())
            .collect();
        for ns in &namespaces {
            assert!(
                declared.contains(*ns),
                "namespace {ns} has no Namespace manifest"
            );
        }
        let strategies: BTreeSet<&str> = deploys
            .iter()
            .map(|d| str_at(d, &["spec", "strategy", "type"]).unwrap_or("(default)"))
            .collect();
        assert!(
            strategies.contains("Recreate") && strategies.contains("RollingUpdate"),
            "{strategies:?}"
        );
        let surges: Vec<&Value> = deploys
            .iter()
            .filter_map(|d| at(d, &["spec", "strategy", "rollingUpdate", "maxSurge"]))
            .collect();
        assert!(
            surges.iter().any(|v| v.is_string()) && surges.iter().any(|v| v.is_number()),
            "{surges:?}"
        );
        for d in &deploys {
            // Catalog's count is its autoscaler's: its manifest says none.
            let replicas = d["spec"]["replicas"].as_i64().unwrap_or(1);
            assert!(
                (1..=4).contains(&replicas),
                "{}: {replicas} replicas",
                d["metadata"]["name"]
            );
            assert!(d["metadata"]["labels"]["app.kubernetes.io/name"].is_string());
            for c in d["spec"]["template"]["spec"]["containers"]
                .as_array()
                .unwrap()
            {
                assert!(
                    c["image"]
                        .as_str()
                        .unwrap()
                        .starts_with("registry.example/")
                );
                assert!(c["resources"].is_object(), "{}: no resources", c["name"]);
            }
        }
        let containers = || {
            deploys.iter().flat_map(|d| {
                d["spec"]["template"]["spec"]["containers"]
                    .as_array()
                    .unwrap()
            })
        };
        assert!(containers().any(|c| c["readinessProbe"].is_object()));
        assert!(containers().any(|c| c["livenessProbe"].is_object()));
        assert!(
            containers()
                .flat_map(|c| c["env"].as_array().into_iter().flatten())
                .any(|e| e["valueFrom"].is_object())
        );
        assert!(deploys.iter().any(|d| {
            d["spec"]["progressDeadlineSeconds"]
                .as_i64()
                .is_some_and(|s| s <= 60)
        }));
    }

    #[test]
    fn demo_is_an_application_repository_of_every_common_kind() {
        let objects = demo_objects().unwrap();
        let kinds: BTreeSet<&str> = objects
            .iter()
            .filter_map(|o| o.object["kind"].as_str())
            .collect();
        for kind in [
            "Namespace",
            "Deployment",
            "Service",
            "ServiceAccount",
            "ConfigMap",
            "Secret",
            "HorizontalPodAutoscaler",
            "Ingress",
            "PodDisruptionBudget",
            "CronJob",
            "ResourceQuota",
            "CustomResourceDefinition",
            "BackupPolicy",
        ] {
            assert!(kinds.contains(kind), "no {kind} in demo/");
        }
        // Every Deployment has its Service (but the worker) and ServiceAccount.
        let named = |kind: &str, ns: &str, name: &str| {
            objects.iter().any(|o| {
                o.object["kind"] == kind
                    && o.object["metadata"]["namespace"] == ns
                    && o.object["metadata"]["name"] == name
            })
        };
        for d in deployments() {
            let (ns, name) = (
                d["metadata"]["namespace"].as_str().unwrap(),
                d["metadata"]["name"].as_str().unwrap(),
            );
            assert!(named("ServiceAccount", ns, name), "{ns}/{name}");
            assert!(
                name == "ledger" || named("Service", ns, name),
                "{ns}/{name}"
            );
        }
    }

    #[test]
    fn the_gitops_objects_name_the_demo_repository_and_its_folders() {
        let objects = demo_objects().unwrap();
        let find = |kind: &str| {
            objects
                .iter()
                .find(|o| {
                    o.object["kind"] == kind && o.object["apiVersion"] != "apiextensions.k8s.io/v1"
                })
                .map(|o| o.object.clone())
                .unwrap()
        };
        let app = find("Application");
        assert_eq!(app["spec"]["source"]["repoURL"], DEMO_REPO_URL);
        assert_eq!(app["spec"]["syncPolicy"]["automated"]["selfHeal"], true);
        let ks = find("Kustomization");
        assert!(DEMO_REPO_URL.ends_with(&format!(
            "/{}.git",
            ks["spec"]["sourceRef"]["name"].as_str().unwrap()
        )));
        // Neither folder's manifests carry what the controllers add.
        for (path, text) in DEMO_MANIFESTS {
            assert!(!text.contains("tracking-id"), "{path}");
            assert!(!text.contains("kustomize.toolkit.fluxcd.io/name"), "{path}");
        }
    }

    #[test]
    fn quoted_values_stay_strings_and_files_keep_their_comments() {
        let catalog = deployments()
            .into_iter()
            .find(|d| d["metadata"]["name"] == "catalog")
            .unwrap();
        let env = &catalog["spec"]["template"]["spec"]["containers"][0]["env"][0];
        assert_eq!(env["value"], Value::String("1.10".into()));
        // Every manifest and values file starts with a comment (a chart's templates and
        // Chart.yaml are helm's).
        assert!(
            DEMO_MANIFESTS
                .iter()
                .filter(|(path, _)| !path.contains("/templates/") && !path.ends_with("Chart.yaml"))
                .all(|(_, text)| text.starts_with('#'))
        );
        assert!(
            DEMO_MANIFESTS
                .iter()
                .any(|(_, text)| text.contains("\n---\n"))
        );
    }
}
