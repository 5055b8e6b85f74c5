//! The demo cluster under load, printing its figures: 10,000 Deployments with a ReplicaSet and a
//! pod each in 500 namespaces (resident memory), a full list of the Deployments over HTTP, and
//! 1,000 writes/s over HTTP with 5 watchers attached (achieved rate, watcher lag).
//!
//! `cargo bench --bench sim` (set `SIM_BENCH_DEPLOYMENTS` to scale the cluster down).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kdrift::sim::SimServer;
use kdrift::sim::resources::ResourceType;
use kdrift::sim::store::{Store, WriteOptions};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const NAMESPACES: usize = 500;
const WATCHERS: usize = 5;
const WRITE_RATE: u64 = 1_000;
const WRITE_SECONDS: u64 = 10;

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

fn deployment(ns: &str, name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": ns}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": ns}},
                "spec": {"containers": [container(name)]}
            }
        }
    })
}

fn container(name: &str) -> Value {
    json!({
        "name": name,
        "image": format!("registry.example/{name}:1.4.2"),
        "ports": [{"name": "http", "containerPort": 8080}],
        "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "UPSTREAM", "value": "http://backend.svc:8080"}],
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}, "periodSeconds": 5}
    })
}

fn replicaset(ns: &str, name: &str, owner_uid: &str) -> Value {
    let hash = "5d8f7c9b6";
    json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": format!("{name}-{hash}"), "namespace": ns,
            "labels": {"app.kubernetes.io/name": name, "pod-template-hash": hash},
            "annotations": {"deployment.kubernetes.io/revision": "1", "deployment.kubernetes.io/desired-replicas": "1", "deployment.kubernetes.io/max-replicas": "2"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": owner_uid, "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app.kubernetes.io/name": name, "pod-template-hash": hash}},
            "template": {"metadata": {"labels": {"app.kubernetes.io/name": name, "pod-template-hash": hash}}, "spec": {"containers": [container(name)]}}
        }
    })
}

fn pod(ns: &str, name: &str, rs_uid: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("{name}-5d8f7c9b6-x7k2p"), "namespace": ns,
            "labels": {"app.kubernetes.io/name": name, "pod-template-hash": "5d8f7c9b6"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{name}-5d8f7c9b6"), "uid": rs_uid, "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": {"nodeName": "demo-node-1", "containers": [container(name)]}
    })
}

fn seed(store: &Store, deployments: usize) -> Duration {
    let started = Instant::now();
    let opts = WriteOptions::manager("bench");
    for n in 0..NAMESPACES {
        let ns = format!("team-{n:03}");
        store
            .create(
                ResourceType::NAMESPACE,
                json!({"metadata": {"name": ns}}),
                &opts,
            )
            .unwrap();
    }
    for i in 0..deployments {
        let ns = format!("team-{:03}", i % NAMESPACES);
        let name = format!("svc-{i:05}");
        let d = store
            .create(ResourceType::DEPLOYMENT, deployment(&ns, &name), &opts)
            .unwrap();
        let uid = d["metadata"]["uid"].as_str().unwrap().to_string();
        let rs = store
            .create(
                ResourceType::REPLICA_SET,
                replicaset(&ns, &name, &uid),
                &opts,
            )
            .unwrap();
        let rs_uid = rs["metadata"]["uid"].as_str().unwrap().to_string();
        store
            .create(ResourceType::POD, pod(&ns, &name, &rs_uid), &opts)
            .unwrap();
    }
    started.elapsed()
}

/// GET `path` on a fresh connection; returns the body length.
async fn get(addr: std::net::SocketAddr, path: &str, accept: &str) -> usize {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut body = Vec::new();
    stream.read_to_end(&mut body).await.unwrap();
    assert!(
        body.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&body[..body.len().min(300)])
    );
    body.len()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// A watcher reading a chunked watch stream: counts events and the lag from the write
/// timestamp (a label in nanoseconds) to the moment the line is read.
async fn watch(
    addr: std::net::SocketAddr,
    rv: u64,
    seen: Arc<AtomicU64>,
    lag_sum_us: Arc<AtomicU64>,
    lag_max_us: Arc<AtomicU64>,
    epoch: Instant,
) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET /apis/apps/v1/deployments?watch=true&resourceVersion={rv}&timeoutSeconds=600 HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    // Headers.
    loop {
        line.clear();
        reader.read_line(&mut line).await.unwrap();
        if line == "\r\n" {
            break;
        }
    }
    let mut pending = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
            return;
        }
        let size = usize::from_str_radix(line.trim(), 16).unwrap_or(0);
        if size == 0 {
            return;
        }
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk).await.unwrap();
        pending.extend_from_slice(&chunk[..size]);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let event: Vec<u8> = pending.drain(..=end).collect();
            let text = String::from_utf8_lossy(&event);
            if let Some(at) = text.find("\"bench-t\":\"") {
                let rest = &text[at + 11..];
                let sent: u64 = rest[..rest.find('"').unwrap_or(0)].parse().unwrap_or(0);
                let now = u64::try_from(epoch.elapsed().as_micros()).unwrap_or(0);
                let lag = now.saturating_sub(sent);
                lag_sum_us.fetch_add(lag, Ordering::Relaxed);
                lag_max_us.fetch_max(lag, Ordering::Relaxed);
                seen.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

fn main() {
    let deployments: usize = std::env::var("SIM_BENCH_DEPLOYMENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let base = rss_mib();
    let store = Store::new();
    let took = seed(&store, deployments);
    let rss = rss_mib();
    println!(
        "seed: {deployments} Deployments + {deployments} ReplicaSets + {deployments} pods in {NAMESPACES} namespaces in {:.1} s",
        took.as_secs_f64()
    );
    println!(
        "memory: VmRSS {rss:.0} MiB ({:.0} MiB above the {base:.0} MiB before seeding; target < 512 MiB)",
        rss - base
    );

    runtime.block_on(async {
        let server = SimServer::serve_store(store.clone(), 0).await.unwrap();
        let addr = server.addr();
        for (label, accept) in [
            ("JSON", "application/json"),
            ("Table (kubectl get -A)", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"),
        ] {
            let mut samples = Vec::new();
            let mut bytes = 0;
            for _ in 0..5 {
                let started = Instant::now();
                bytes = get(addr, "/apis/apps/v1/deployments", accept).await;
                samples.push(started.elapsed());
            }
            let first = samples[0];
            println!(
                "list {deployments} Deployments as {label}: first {:.0} ms, median {:.0} ms of 5 ({:.1} MiB; target < 1 s)",
                first.as_secs_f64() * 1000.0,
                median(samples).as_secs_f64() * 1000.0,
                bytes as f64 / 1_048_576.0
            );
        }

        // Writes over HTTP (merge patches through kube-rs) at a fixed pace, 5 watchers attached.
        let epoch = Instant::now();
        let rv = store.resource_version();
        let seen = Arc::new(AtomicU64::new(0));
        let lag_sum = Arc::new(AtomicU64::new(0));
        let lag_max = Arc::new(AtomicU64::new(0));
        for _ in 0..WATCHERS {
            tokio::spawn(watch(addr, rv, seen.clone(), lag_sum.clone(), lag_max.clone(), epoch));
        }
        let client = kube::Client::try_from(kube::Config::new(server.url().parse().unwrap())).unwrap();
        let written = Arc::new(AtomicU64::new(0));
        let failed = Arc::new(AtomicU64::new(0));
        let total = WRITE_RATE * WRITE_SECONDS;
        let workers = 16u64;
        let started = Instant::now();
        let mut handles = Vec::new();
        for w in 0..workers {
            let (client, written, failed) = (client.clone(), written.clone(), failed.clone());
            handles.push(tokio::spawn(async move {
                let mut i = w;
                while i < total {
                    // Write number i is due at i / rate seconds.
                    let due = started + Duration::from_micros(i * 1_000_000 / WRITE_RATE);
                    tokio::time::sleep_until(due.into()).await;
                    let n = usize::try_from(i).unwrap_or(0) % deployments;
                    let ns = format!("team-{:03}", n % NAMESPACES);
                    let api: kube::Api<k8s_openapi::api::apps::v1::Deployment> = kube::Api::namespaced(client.clone(), &ns);
                    let t = epoch.elapsed().as_micros().to_string();
                    let patch = json!({"metadata": {"labels": {"bench-t": t}}});
                    let params = kube::api::PatchParams::default();
                    match api.patch(&format!("svc-{n:05}"), &params, &kube::api::Patch::Merge(&patch)).await {
                        Ok(_) => written.fetch_add(1, Ordering::Relaxed),
                        Err(_) => failed.fetch_add(1, Ordering::Relaxed),
                    };
                    i += workers;
                }
            }));
        }
        for h in handles {
            h.await.unwrap();
        }
        let elapsed = started.elapsed();
        let expected = written.load(Ordering::Relaxed) * WATCHERS as u64;
        let deadline = Instant::now() + Duration::from_secs(30);
        while seen.load(Ordering::Relaxed) < expected && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let seen_n = seen.load(Ordering::Relaxed).max(1);
        println!(
            "writes: {} in {:.2} s = {:.0} writes/s over HTTP (target {WRITE_RATE}/s), {} failed",
            written.load(Ordering::Relaxed),
            elapsed.as_secs_f64(),
            written.load(Ordering::Relaxed) as f64 / elapsed.as_secs_f64(),
            failed.load(Ordering::Relaxed)
        );
        println!(
            "watchers: {WATCHERS} received {} of {expected} events; lag from write to watcher: mean {:.1} ms, max {:.1} ms",
            seen.load(Ordering::Relaxed),
            lag_sum.load(Ordering::Relaxed) as f64 / seen_n as f64 / 1000.0,
            lag_max.load(Ordering::Relaxed) as f64 / 1000.0
        );
        println!("memory after the write run: VmRSS {:.0} MiB", rss_mib());

        // Headroom: the same writes unpaced, 16 in flight, watchers still attached.
        let burst = 5_000u64;
        let done = Arc::new(AtomicU64::new(0));
        let started = Instant::now();
        let mut handles = Vec::new();
        for w in 0..workers {
            let (client, done) = (client.clone(), done.clone());
            handles.push(tokio::spawn(async move {
                let mut i = w;
                while i < burst {
                    let n = usize::try_from(i).unwrap_or(0) % deployments;
                    let ns = format!("team-{:03}", n % NAMESPACES);
                    let api: kube::Api<k8s_openapi::api::apps::v1::Deployment> = kube::Api::namespaced(client.clone(), &ns);
                    let patch = json!({"metadata": {"labels": {"burst": i.to_string()}}});
                    if api.patch(&format!("svc-{n:05}"), &kube::api::PatchParams::default(), &kube::api::Patch::Merge(&patch)).await.is_ok() {
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    i += workers;
                }
            }));
        }
        for h in handles {
            h.await.unwrap();
        }
        println!(
            "headroom: {} unpaced writes in {:.2} s = {:.0} writes/s (client and server share the machine)",
            done.load(Ordering::Relaxed),
            started.elapsed().as_secs_f64(),
            done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
        );
        server.shutdown().await;
    });
}
