//! The benchmark's demo cluster, in a child process so the parent's CPU and memory figures are
//! kdrift's alone: a store seeded with Deployments, served over HTTP, driven by stdin commands.
use std::io::Write;
use std::time::{Duration, Instant};

use kdrift::sim::SimServer;
use kdrift::sim::resources::ResourceType;
use kdrift::sim::store::{Patch, Store, WriteOptions};
use serde_json::{Value, json};

use super::{DEPLOYMENTS, NAMESPACES};

/// StatefulSets, and as many DaemonSets, beside the Deployments with `workloads`.
pub const PER_WORKLOAD_KIND: usize = 2_000;

pub fn namespace(i: usize) -> String {
    format!("ns-{:03}", i % NAMESPACES)
}

pub fn name(i: usize) -> String {
    format!("app-{i:05}")
}

fn deployment(i: usize) -> Value {
    let name = name(i);
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace(i), "labels": {"app": name}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{
                    "name": "app",
                    "image": format!("registry.example/{name}:1.4.2"),
                    "env": [{"name": "LOG_LEVEL", "value": "info"}],
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}
                }]}
            }
        }
    })
}

pub fn service(i: usize) -> Value {
    let name = name(i);
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": namespace(i), "labels": {"app": name}},
        "spec": {
            "selector": {"app": name},
            "ports": [{"name": "http", "port": 80, "targetPort": 8080}]
        }
    })
}

pub fn configmap(i: usize) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": format!("{}-config", name(i)), "namespace": namespace(i)},
        "data": {
            "LOG_FORMAT": "json",
            "FEATURE_NEW_CHECKOUT": "false",
            "settings.yaml": "retries: 3\ntimeout: 5s\n"
        }
    })
}

/// The name of the `i`th StatefulSet or DaemonSet (`--workloads`).
pub fn workload_name(kind: &str, i: usize) -> String {
    format!("{kind}-{i:05}")
}

fn pod_template(name: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": name}},
        "spec": {"containers": [{
            "name": "app",
            "image": format!("registry.example/{name}:2.1.0"),
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}
        }]}
    })
}

/// StatefulSets and DaemonSets (`--serve-store workloads`), rolled out, with the status their
/// controllers would write (no controller runs in this store).
fn seed_workloads(store: &Store) {
    store.set_clock_behind(3 * 86_400);
    let opts = WriteOptions::manager("bench");
    let status = WriteOptions::status("kube-controller-manager");
    for i in 0..PER_WORKLOAD_KIND {
        let ns = namespace(i);
        let name = workload_name("db", i);
        let sts = json!({
            "apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
            "spec": {
                "replicas": 3, "serviceName": name,
                "selector": {"matchLabels": {"app": name}},
                "template": pod_template(&name)
            }
        });
        store
            .create(ResourceType::STATEFUL_SET, sts, &opts)
            .unwrap();
        let revision = format!("{name}-7c9d8b6f5");
        let s = json!({"status": {
            "observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3,
            "updatedReplicas": 3, "availableReplicas": 3,
            "currentRevision": revision, "updateRevision": revision, "collisionCount": 0
        }});
        store
            .patch(
                ResourceType::STATEFUL_SET,
                &ns,
                &name,
                &Patch::Merge(s),
                &status,
            )
            .unwrap();
        let name = workload_name("agent", i);
        let ds = json!({
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": pod_template(&name)
            }
        });
        store.create(ResourceType::DAEMON_SET, ds, &opts).unwrap();
        let s = json!({"status": {
            "observedGeneration": 1, "desiredNumberScheduled": 3, "currentNumberScheduled": 3,
            "numberReady": 3, "updatedNumberScheduled": 3, "numberAvailable": 3,
            "numberMisscheduled": 0
        }});
        store
            .patch(
                ResourceType::DAEMON_SET,
                &ns,
                &name,
                &Patch::Merge(s),
                &status,
            )
            .unwrap();
    }
    store.set_clock_behind(0);
}

/// A Service and a ConfigMap per Deployment (`--serve-store kinds`).
fn seed_kinds(store: &Store) {
    store.set_clock_behind(3 * 86_400);
    let opts = WriteOptions::manager("bench");
    for i in 0..DEPLOYMENTS {
        store
            .create(ResourceType::SERVICE, service(i), &opts)
            .unwrap();
        store
            .create(ResourceType::CONFIG_MAP, configmap(i), &opts)
            .unwrap();
    }
    store.set_clock_behind(0);
}

fn seed(store: &Store) {
    // Made three days ago, as a cluster's Deployments are: their ages change by the day, so an
    // idle screen has nothing to redraw (fresh objects' ages tick every second).
    store.set_clock_behind(3 * 86_400);
    let opts = WriteOptions::manager("bench");
    for n in 0..NAMESPACES {
        store
            .create(
                ResourceType::NAMESPACE,
                json!({"metadata": {"name": namespace(n)}}),
                &opts,
            )
            .unwrap();
    }
    let status = WriteOptions::status("kube-controller-manager");
    for i in 0..DEPLOYMENTS {
        store
            .create(ResourceType::DEPLOYMENT, deployment(i), &opts)
            .unwrap();
        let s = json!({"status": {
            "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability.",
                 "lastUpdateTime": "2026-11-22T03:00:00Z", "lastTransitionTime": "2026-11-22T03:00:00Z"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": format!("ReplicaSet \"{}-5d8f7c9b6\" has successfully progressed.", name(i)),
                 "lastUpdateTime": "2026-11-22T03:00:00Z", "lastTransitionTime": "2026-11-22T03:00:00Z"}
            ]
        }});
        store
            .patch(
                ResourceType::DEPLOYMENT,
                &namespace(i),
                &name(i),
                &Patch::Merge(s),
                &status,
            )
            .unwrap();
    }
    store.set_clock_behind(0);
}

/// `live --serve-store [kinds]`: seed (with `kinds`, a Service and a ConfigMap per Deployment
/// too), serve, print the URL, then obey stdin: `churn RATE SECONDS` (label writes spread over
/// the objects, kinds in turn), `relist` (410 for every watch: clients list again), `quit`.
pub fn serve() {
    let kinds = std::env::args().any(|a| a == "kinds");
    let workloads = std::env::args().any(|a| a == "workloads");
    let rt = super::child::runtime();
    rt.block_on(async {
        let store = Store::new();
        seed(&store);
        if kinds {
            seed_kinds(&store);
        }
        if workloads {
            seed_workloads(&store);
        }
        let server = SimServer::serve_store(store.clone(), 0).await.unwrap();
        let mut rx = super::child::serving(&server.url());
        let opts = WriteOptions::manager("bench-churn");
        let mut counter = 0usize;
        while let Some(line) = rx.recv().await {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["churn", rate, secs] => {
                    let rate: u64 = rate.parse().unwrap();
                    let secs: u64 = secs.parse().unwrap();
                    let start = Instant::now();
                    let total = rate * secs;
                    for k in 0..total {
                        let due = start + Duration::from_micros(k * 1_000_000 / rate);
                        tokio::time::sleep_until(due.into()).await;
                        // Skip the first ten Deployments: the parent scales those as markers.
                        let i = 10 + (counter * 7919) % (DEPLOYMENTS - 10);
                        counter += 1;
                        let patch = Patch::Merge(
                            json!({"metadata": {"labels": {"bench-t": counter.to_string()}}}),
                        );
                        let w = i % PER_WORKLOAD_KIND;
                        // With `workloads`, writes spread over the kinds as their rows do:
                        // 10 : 2 : 2 (slots 0–9, 10–11, 12–13); with `kinds`, in turn.
                        let slot = if workloads { counter % 14 } else { counter % 3 };
                        let (resource, name, ns) = match slot {
                            1 if kinds => (ResourceType::SERVICE, name(i), namespace(i)),
                            2 if kinds => (
                                ResourceType::CONFIG_MAP,
                                format!("{}-config", name(i)),
                                namespace(i),
                            ),
                            10 | 11 if workloads => (
                                ResourceType::STATEFUL_SET,
                                workload_name("db", w),
                                namespace(w),
                            ),
                            12 | 13 if workloads => (
                                ResourceType::DAEMON_SET,
                                workload_name("agent", w),
                                namespace(w),
                            ),
                            _ => (ResourceType::DEPLOYMENT, name(i), namespace(i)),
                        };
                        store.patch(resource, &ns, &name, &patch, &opts).unwrap();
                    }
                    println!("done {:.0}", total as f64 / start.elapsed().as_secs_f64());
                }
                ["relist"] => {
                    server.faults().set_watch_gone(true);
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    server.faults().set_watch_gone(false);
                    println!("ok");
                }
                ["quit"] => break,
                _ => println!("?"),
            }
            std::io::stdout().flush().unwrap();
        }
        server.shutdown().await;
    });
}
