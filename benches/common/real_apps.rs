//! Applications on a real API server for the real-server benches: each a Deployment (one replica
//! for the first `running`, none for the rest: the stand-in nodes hold ~110 pods each), a headless
//! Service (the stand-in's service range is small) and a ConfigMap, spread over namespaces
//! `{prefix}-00`…; a manifest file per application in the checkout, and the objects created with
//! server-side apply (manager `bench`, 16 at a time). A second run on the same server finds them
//! in place (apply is idempotent) and only waits for the Deployments.

#![allow(dead_code)]

use std::path::Path;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{DynamicObject, Patch, PatchParams};
use kube::discovery::ApiResource;

use super::manifest;

/// What to create: `apps` applications over `namespaces` namespaces named `{prefix}-NN`.
#[derive(Clone, Copy)]
pub struct Apps {
    pub prefix: &'static str,
    pub apps: usize,
    pub namespaces: usize,
    pub running: usize,
}

impl Apps {
    pub fn name(&self, i: usize) -> String {
        format!("app-{i:05}")
    }

    pub fn namespace(&self, i: usize) -> String {
        format!("{}-{:02}", self.prefix, i % self.namespaces)
    }

    /// The manifest file of application `i`: its Deployment, headless Service and ConfigMap.
    pub fn manifest_file(&self, i: usize) -> String {
        let (name, ns) = (self.name(i), self.namespace(i));
        let replicas = u32::from(i < self.running);
        let service =
            manifest::service_yaml(&name, &ns).replace("spec:\n", "spec:\n  clusterIP: None\n");
        format!(
            "{}---\n{}---\n{}",
            manifest::deployment_yaml(&name, &ns, replicas, "1.4.2"),
            service,
            manifest::configmap_yaml(&name, &ns, "false")
        )
    }

    /// Writes application `i`'s manifest under `root/<namespace>/`.
    pub fn write(&self, root: &Path, i: usize) {
        let folder = root.join(self.namespace(i));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join(format!("{}.yaml", self.name(i))),
            self.manifest_file(i),
        )
        .unwrap();
    }

    /// Creates (or leaves as they are) the namespaces and the objects, writes every manifest
    /// under `root`, and waits until every Deployment is available.
    pub async fn populate(&self, client: &kube::Client, root: &Path) {
        self.populate_or_reuse(client, root, false).await;
    }

    /// [`Apps::populate`]; with `reuse`, the objects are taken to be in place already (a kept
    /// server a run before created them: the 30,000 applies take minutes) and only the
    /// manifests are written before the wait.
    pub async fn populate_or_reuse(&self, client: &kube::Client, root: &Path, reuse: bool) {
        if reuse {
            for i in 0..self.apps {
                self.write(root, i);
            }
            println!("objects reused as they are (--reuse); manifests written");
            self.wait_available(client).await;
            return;
        }
        let params = PatchParams::apply("bench").force();
        let ns_api: kube::Api<k8s_openapi::api::core::v1::Namespace> =
            kube::Api::all(client.clone());
        for n in 0..self.namespaces {
            let ns = format!("{}-{n:02}", self.prefix);
            let body = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            ns_api
                .patch(&ns, &params, &Patch::Apply(body))
                .await
                .unwrap();
        }
        let began = Instant::now();
        let resource = |v: &serde_json::Value| match v["kind"].as_str().unwrap() {
            "Deployment" => ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
                "apps",
                "v1",
                "Deployment",
            )),
            kind => ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk("", "v1", kind)),
        };
        // One application's documents at a time: 30,000 parsed objects are not held at once.
        futures::stream::iter(0..self.apps)
            .flat_map(|i| {
                self.write(root, i);
                let docs: Vec<serde_json::Value> = self
                    .manifest_file(i)
                    .split("---\n")
                    .map(|doc| serde_yaml::from_str(doc).unwrap())
                    .collect();
                futures::stream::iter(docs)
            })
            .map(|doc| {
                let params = params.clone();
                let ar = resource(&doc);
                let api: kube::Api<DynamicObject> = kube::Api::namespaced_with(
                    client.clone(),
                    doc["metadata"]["namespace"].as_str().unwrap(),
                    &ar,
                );
                async move {
                    let name = doc["metadata"]["name"].as_str().unwrap().to_string();
                    api.patch(&name, &params, &Patch::Apply(doc)).await.unwrap();
                }
            })
            .buffer_unordered(16)
            .collect::<Vec<()>>()
            .await;
        println!(
            "applied {} objects in {:.1} s (server-side apply, 16 at a time)",
            3 * self.apps,
            began.elapsed().as_secs_f64()
        );
        self.wait_available(client).await;
    }

    /// Waits until every Deployment of the applications is available at its generation.
    async fn wait_available(&self, client: &kube::Client) {
        let deployments: kube::Api<k8s_openapi::api::apps::v1::Deployment> =
            kube::Api::all(client.clone());
        let prefix = format!("{}-", self.prefix);
        let waited = Instant::now();
        let mut printed = Instant::now();
        loop {
            // A page at a time: the bench runs kdrift in this process next, and a whole list of
            // 10,000 Deployments decoded at once (the allocator's arenas grew to 0.7 GB) leaves
            // free pages between kdrift's own that count in its resident memory.
            let mut ready = 0;
            let mut params = kube::api::ListParams::default().limit(500);
            loop {
                let page = deployments.list(&params).await.unwrap();
                ready += page
                    .items
                    .iter()
                    .filter(|d| {
                        d.metadata
                            .namespace
                            .as_deref()
                            .is_some_and(|n| n.starts_with(&prefix))
                    })
                    .filter(|d| {
                        let want = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
                        let status = d.status.as_ref();
                        status.and_then(|s| s.available_replicas).unwrap_or(0) == want
                            && status.and_then(|s| s.observed_generation) == d.metadata.generation
                    })
                    .count();
                match page.metadata.continue_.filter(|t| !t.is_empty()) {
                    Some(token) => params = params.continue_token(&token),
                    None => break,
                }
            }
            if ready >= self.apps {
                break;
            }
            // The controller-manager writes at 20 requests/s (its default --kube-api-qps): a
            // ReplicaSet and a status per Deployment, ~17 min for 10,000.
            assert!(
                waited.elapsed() < Duration::from_secs(40 * 60),
                "only {ready} of {} Deployments available after 40 min",
                self.apps
            );
            if printed.elapsed() >= Duration::from_secs(60) {
                printed = Instant::now();
                println!(
                    "  {ready} of {} Deployments available after {:.0} s",
                    self.apps,
                    waited.elapsed().as_secs_f64()
                );
            }
            // Not more often: a list of 10,000 Deployments is ~30 MB of JSON, and listing it
            // every 2 s took the API server's time from the controller-manager being waited on.
            let poll = if self.apps > 2_000 { 30 } else { 2 };
            tokio::time::sleep(Duration::from_secs(poll)).await;
        }
        println!(
            "every Deployment available {:.1} s later ({} pods Running)",
            waited.elapsed().as_secs_f64(),
            self.running
        );
    }
}

/// A checkout for the applications' manifests (`.kdrift.yaml` naming `bench`, their applier)
/// in a temporary folder, and the arguments kdrift runs with on the server of `kubeconfig`, all
/// namespaces: the folder (kept until the bench ends), the checkout's root, the arguments.
pub fn checkout(
    kubeconfig: &Path,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    kdrift::cli::CommonArgs,
) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("manifests");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join(".kdrift.yaml"), "appliers: [bench]\n").unwrap();
    let common = kdrift::cli::CommonArgs {
        kubeconfig: Some(kubeconfig.to_path_buf()),
        all_namespaces: true,
        manifests: Some(root.clone()),
        ..kdrift::cli::CommonArgs::default()
    };
    (dir, root, common)
}

/// The load average, as `/proc/loadavg` gives its three figures.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}
