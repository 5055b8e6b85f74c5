//! The demo fleet (`kdrift demo --clusters N`): N demo clusters from one manifests repository.
//! Every cluster holds the demo's objects; each also runs the payments `gateway` of its own
//! folder `clusters/<name>/` (replicas and region differ), which `.kdrift.yaml`'s `contexts:`
//! gives to that cluster's context alone. With the incident, prod-eu's gateway is also scaled
//! by hand ([`gateway_scale`]).
use serde_json::Value;

use super::manifests::DEMO_MANIFESTS;
use super::seed::{CLIENT_SIDE_APPLY, as_client_side_applied};
use crate::error::ApiError;
use crate::store::{Store, WriteOptions};

/// The most clusters a demo fleet has.
pub const MAX_CLUSTERS: usize = 5;

/// The cluster the incident plays on (the others play nothing).
pub const INCIDENT_CLUSTER: &str = "prod-eu";

/// The name of the `index`-th cluster (from 0): staging, prod-eu, prod-us, then prod-4, prod-5.
pub fn cluster_name(index: usize) -> String {
    match index {
        0 => "staging".into(),
        1 => "prod-eu".into(),
        2 => "prod-us".into(),
        n => format!("prod-{}", n + 1),
    }
}

/// The names of a fleet of `count` clusters.
pub fn cluster_names(count: usize) -> Vec<String> {
    (0..count).map(cluster_name).collect()
}

/// What makes a cluster of the fleet differ from the others: (replicas, region).
fn gateway_settings(name: &str) -> (u32, &str) {
    match name {
        "staging" => (1, "eu-central-1"),
        "prod-eu" => (3, "eu-west-1"),
        "prod-us" => (3, "us-east-1"),
        _ => (2, "ap-southeast-1"),
    }
}

/// The files of cluster `name`'s own folder, `clusters/<name>/` (path, text).
pub fn cluster_files(name: &str) -> Vec<(String, String)> {
    let (replicas, region) = gateway_settings(name);
    let text = format!(
        "# The payments gateway of cluster {name}: its replicas and region are this cluster's own.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gateway
  namespace: payments
  labels:
    app.kubernetes.io/name: gateway
    app.kubernetes.io/part-of: payments
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app.kubernetes.io/name: gateway
  template:
    metadata:
      labels:
        app.kubernetes.io/name: gateway
        app.kubernetes.io/part-of: payments
    spec:
      containers:
        - name: gateway
          image: registry.example/payments/gateway:1.8.0
          env:
            - name: REGION
              value: {region}
          resources:
            requests:
              cpu: 50m
              memory: 64Mi
"
    );
    vec![(format!("clusters/{name}/gateway.yaml"), text)]
}

/// The fleet's manifests repository: the demo's files, each cluster's folder, and a
/// `.kdrift.yaml` whose `contexts:` gives each context its folder.
pub fn fleet_manifests(names: &[String]) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = DEMO_MANIFESTS
        .iter()
        .map(|(path, text)| {
            let text = if *path == ".kdrift.yaml" {
                let mut text = (*text).to_owned();
                text.push_str(
                    "# One repository, a folder per cluster: clusters/<context>/ is read for that\n# kubeconfig context only; every other folder is shared.\ncontexts:\n",
                );
                for name in names {
                    text.push_str(&format!("  {name}: clusters/{name}\n"));
                }
                text
            } else {
                (*text).to_owned()
            };
            ((*path).to_owned(), text)
        })
        .collect();
    for name in names {
        files.extend(cluster_files(name));
    }
    files
}

/// When the fleet's own step comes on [`INCIDENT_CLUSTER`]: 3 s after the incident's first.
pub const GATEWAY_SCALE_AFTER: std::time::Duration = std::time::Duration::from_secs(8);

/// The fleet's own step of the incident, on [`INCIDENT_CLUSTER`] alone: its gateway (a
/// Deployment of its own folder) scaled by hand to 5, as `kubectl scale` sends it — a drift
/// whose accept belongs in `clusters/prod-eu/` and nowhere else.
pub fn gateway_scale() -> super::step::Step {
    super::step::Step::Scale {
        target: crate::object::Key::new("payments", "gateway"),
        replicas: 5,
    }
}

/// Plays [`gateway_scale`] after [`GATEWAY_SCALE_AFTER`].
pub fn spawn_step(store: Store) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        tokio::time::sleep(GATEWAY_SCALE_AFTER).await;
        if let Err(error) = super::incident::apply_step(&store, &gateway_scale()) {
            tracing::warn!(%error, "fleet step skipped");
        }
    })
}

/// Creates cluster `name`'s own objects as `kubectl apply` creates them (after the demo seed).
pub fn seed_cluster(store: &Store, name: &str) -> Result<(), ApiError> {
    for (path, text) in cluster_files(name) {
        for document in serde_yaml::Deserializer::from_str(&text) {
            let object: Value = serde::Deserialize::deserialize(document)
                .map_err(|e| ApiError::Internal(format!("{path}: {e}")))?;
            let api_version = object["apiVersion"].as_str().unwrap_or_default();
            let kind = object["kind"].as_str().unwrap_or_default();
            let resource = store.resource_type_of(api_version, kind).ok_or_else(|| {
                ApiError::Internal(format!("{path}: no resource for {api_version} {kind}"))
            })?;
            let object = as_client_side_applied(resource, object);
            match store.create(resource, object, &WriteOptions::manager(CLIENT_SIDE_APPLY)) {
                Ok(_) | Err(ApiError::AlreadyExists(_)) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn the_fleet_is_named_and_each_cluster_has_its_folder_in_the_repository() {
        assert_eq!(
            cluster_names(5),
            ["staging", "prod-eu", "prod-us", "prod-4", "prod-5"]
        );
        let files = fleet_manifests(&cluster_names(3));
        let config = &files.iter().find(|(p, _)| p == ".kdrift.yaml").unwrap().1;
        assert!(config.ends_with(
            "contexts:\n  staging: clusters/staging\n  prod-eu: clusters/prod-eu\n  prod-us: clusters/prod-us\n"
        ));
        assert!(
            files
                .iter()
                .any(|(p, _)| p == "clusters/prod-us/gateway.yaml")
        );
        assert!(!files.iter().any(|(p, _)| p.starts_with("clusters/prod-4")));
    }

    #[test]
    fn each_cluster_runs_its_own_gateway() {
        let store = Store::new();
        crate::scenario::seed(&store).unwrap();
        seed_cluster(&store, "prod-us").unwrap();
        let deployments = store
            .resource_type_of("apps/v1", "Deployment")
            .expect("deployments are served");
        let gateway = store
            .get(deployments, "payments", "gateway")
            .expect("the gateway was created");
        assert_eq!(gateway.pointer("/spec/replicas"), Some(&Value::from(3)));
        let env = gateway
            .pointer("/spec/template/spec/containers/0/env/0/value")
            .unwrap();
        assert_eq!(env, "us-east-1");
    }
}
