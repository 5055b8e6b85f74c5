//! The benchmark's demo cluster, in a child process so the parent's CPU and memory figures are
//! kdrift's alone: a store seeded with Deployments, served over HTTP, driven by stdin commands.
use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

use kdrift::sim::SimServer;
use kdrift::sim::resources::ResourceType;
use kdrift::sim::store::{Patch, Store, WriteOptions};
use serde_json::{Value, json};

use super::{DEPLOYMENTS, NAMESPACES};

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

fn seed(store: &Store) {
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
}

/// `live --serve-store`: seed, serve, print the URL, then obey stdin:
/// `churn RATE SECONDS` (label writes spread over the Deployments), `relist` (410 for every
/// watch: clients list again), `quit`.
pub fn serve() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = Store::new();
        seed(&store);
        let server = SimServer::serve_store(store.clone(), 0).await.unwrap();
        println!("URL {}", server.url());
        std::io::stdout().flush().unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
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
                        store
                            .patch(
                                ResourceType::DEPLOYMENT,
                                &namespace(i),
                                &name(i),
                                &patch,
                                &opts,
                            )
                            .unwrap();
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
