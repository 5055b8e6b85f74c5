//! Every kind in the live view at scale (issue 11, point 8): kdrift's real loop against a demo
//! cluster (child process, the `live` bench's, seeded with `kinds`) of 10,000 Deployments,
//! 10,000 Services and 10,000 ConfigMaps in 500 namespaces, one manifest file per application
//! holding its three objects (one ConfigMap in ten drifted). Prints the time until every
//! object's drift is known, resident memory and heap at steady state, 1,000 files edited on disk
//! → each edited ConfigMap's new drift (its objects read again), watch event → frame under
//! 1,000 writes/s spread over the three kinds (a Deployment scaled: its row; a ConfigMap edited:
//! its drift), CPU under that load, and idle CPU with the frames drawn meanwhile.
//!
//! Run: `cargo bench --bench live_kinds` (`-- --quick`: 10 s idle instead of 60).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/session.rs"]
mod session;

#[path = "common/child.rs"]
mod child;
#[path = "live/cluster.rs"]
mod cluster;
#[path = "common/manifest.rs"]
mod manifest;
#[path = "common/measure.rs"]
mod measure;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kdrift::app::{App, DriftSummary};
use kdrift::cli::CommonArgs;
use kdrift::cluster::client::connect;
use kdrift::manifest::ObjectKey;
use kube::api::{Patch, PatchParams};

use cluster::{name, namespace};
use measure::{cpu_time, heap_mb, rss_mb};

pub const DEPLOYMENTS: usize = 10_000;
pub const NAMESPACES: usize = 500;

fn percentile(samples: &mut [Duration], p: f64) -> f64 {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i].as_secs_f64() * 1000.0
}

/// The manifest file of application `i`: its Deployment, Service and ConfigMap.
fn manifest_file(i: usize) -> String {
    manifest_file_with(i, if i % 10 == 9 { "true" } else { "false" })
}

/// The same with the ConfigMap's flag as given (`true` differs from the live value).
fn manifest_file_with(i: usize, flag: &str) -> String {
    let (name, ns) = (name(i), namespace(i));
    format!(
        "{}---\n{}---\n{}",
        manifest::deployment_yaml(&name, &ns, 3, "1.4.2"),
        manifest::service_yaml(&name, &ns),
        manifest::configmap_yaml(&name, &ns, flag)
    )
}

fn config_key(i: usize) -> ObjectKey {
    ObjectKey::new(
        "",
        "ConfigMap",
        &namespace(i),
        &format!("{}-config", name(i)),
    )
}

/// What a frame must show for a marker write to count as seen.
#[derive(Clone)]
enum Want {
    Replicas(ObjectKey, i32),
    Drift(ObjectKey, DriftSummary),
}

#[derive(Default)]
struct Stats {
    frames: u64,
    all_drift: Option<Duration>,
    counts: (usize, usize),
    marker: Option<(Want, Instant)>,
    deployment_latencies: Vec<Duration>,
    configmap_latencies: Vec<Duration>,
    /// Manifests edited on disk: the ConfigMaps whose drift must become one field, and when
    /// the files were written; then how long it took.
    edited: Option<(Vec<ObjectKey>, Instant)>,
    edit_took: Option<Duration>,
}

/// Every Deployment row and every other object has its drift.
fn all_known(app: &App) -> bool {
    app.ledger.rows().count() >= DEPLOYMENTS
        && app.ledger.others().count() >= 2 * DEPLOYMENTS
        && !app.objects.kinds.is_empty()
        && app.objects.kinds.values().all(|listed| *listed)
}

/// After each frame: what the figures need from the app.
fn on_frame(s: &mut Stats, app: &App, since_start: Duration) {
    s.frames += 1;
    if let Some((keys, written)) = &s.edited
        && keys
            .iter()
            .all(|k| app.ledger.get(k).map(|e| &e.summary) == Some(&DriftSummary::Fields(1)))
    {
        s.edit_took = Some(written.elapsed());
        s.edited = None;
    }
    if s.all_drift.is_none() && all_known(app) {
        s.all_drift = Some(since_start);
        let drifted = |d: &DriftSummary| matches!(d, DriftSummary::Fields(_));
        let rows = app.ledger.rows().filter(|e| drifted(&e.summary)).count();
        let objects = app.ledger.others().filter(|e| drifted(&e.summary)).count();
        s.counts = (rows, objects);
    }
    let Some((want, sent)) = s.marker.clone() else {
        return;
    };
    match want {
        Want::Replicas(key, replicas)
            if app
                .cache
                .workloads
                .get(&key)
                .is_some_and(|e| e.row.desired == replicas) =>
        {
            s.deployment_latencies.push(sent.elapsed());
            s.marker = None;
        }
        Want::Drift(key, summary) if app.ledger.get(&key).map(|e| &e.summary) == Some(&summary) => {
            s.configmap_latencies.push(sent.elapsed());
            s.marker = None;
        }
        _ => {}
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--serve-store") {
        cluster::serve();
        return;
    }
    let idle_seconds = if args.iter().any(|a| a == "--quick") {
        10
    } else {
        60
    };
    kdrift::runtime::tune_allocator();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("manifests");
    std::fs::create_dir_all(&root).unwrap();
    // The bench cluster's objects were written by the "bench" manager: it is the applier here.
    std::fs::write(root.join(".kdrift.yaml"), "appliers: [bench]\n").unwrap();
    for i in 0..DEPLOYMENTS {
        let folder = root.join(namespace(i));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(format!("{}.yaml", name(i))), manifest_file(i)).unwrap();
    }
    let seeding = Instant::now();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--serve-store", "kinds"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child_in = child.stdin.take().unwrap();
    let mut child_out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    child_out.read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("URL ").unwrap().to_string();
    println!(
        "-- live kinds: {DEPLOYMENTS} Deployments + {DEPLOYMENTS} Services + {DEPLOYMENTS} ConfigMaps in {NAMESPACES} namespaces, one manifest file per application (1 ConfigMap in 10 drifted); cluster seeded in {:.1} s",
        seeding.elapsed().as_secs_f64()
    );
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, session::kubeconfig_for(&url)).unwrap();
    let common = CommonArgs {
        kubeconfig: Some(kubeconfig),
        all_namespaces: true,
        manifests: Some(root.clone()),
        ..CommonArgs::default()
    };
    let rt = kdrift::cluster::tokio_runtime().unwrap();
    let (child_in_ref, child_out_ref) = (&mut child_in, &mut child_out);
    rt.block_on(async move {
        let (child_in, child_out) = (child_in_ref, child_out_ref);
        let rss_before = rss_mb();
        let start = Instant::now();
        let conn = connect(&common.connection()).await.unwrap();
        let client = conn.client.clone();
        let stats = Arc::new(Mutex::new(Stats::default()));
        let script = async {
            while stats.lock().unwrap().all_drift.is_none() {
                tokio::time::sleep(Duration::from_millis(5)).await;
                assert!(start.elapsed() < Duration::from_secs(300), "drift never complete");
            }
            {
                let s = stats.lock().unwrap();
                println!(
                    "every object's drift      {:>8.1} ms after start (manifests loaded, kinds mapped, listed, compared); drifted: {} Deployments, {} other objects",
                    s.all_drift.unwrap().as_secs_f64() * 1000.0,
                    s.counts.0,
                    s.counts.1
                );
            }
            tokio::time::sleep(Duration::from_secs(3)).await;
            println!(
                "resident memory, steady   {:>6.1} MB (process; {rss_before:.1} MB before connecting; target ≤ 80 MB); heap in use {:.1} MB",
                rss_mb(),
                heap_mb()
            );

            // A pull that changes 1,000 applications' files: each of their ConfigMaps now
            // differs from the live one. The live view reads those objects again (a GET each,
            // several at once) and compares: the time until every one shows its drift.
            let edited: Vec<usize> = (100..1_100).collect();
            for &i in &edited {
                let file = root.join(namespace(i)).join(format!("{}.yaml", name(i)));
                std::fs::write(file, manifest_file_with(i, "true")).unwrap();
            }
            stats.lock().unwrap().edited =
                Some((edited.iter().map(|&i| config_key(i)).collect(), Instant::now()));
            while stats.lock().unwrap().edit_took.is_none() {
                tokio::time::sleep(Duration::from_millis(5)).await;
                assert!(start.elapsed() < Duration::from_secs(600), "the edit was never seen");
            }
            println!(
                "1,000 files edited        {:>8.1} ms until each ConfigMap's new drift (150 ms of it the debounce; 2,000 objects of other kinds read again)",
                stats.lock().unwrap().edit_took.unwrap().as_secs_f64() * 1000.0
            );

            // 1,000 writes/s for 10 s over the three kinds, with markers: a Deployment scaled
            // (its row's desired), a ConfigMap's flag flipped (its drift), in turn.
            let churn_secs = 10;
            let cpu0 = cpu_time();
            let wall0 = Instant::now();
            let frames0 = stats.lock().unwrap().frames;
            writeln!(child_in, "churn 1000 {churn_secs}").unwrap();
            child_in.flush().unwrap();
            let mut flags = [false; 10];
            let mut k = 0usize;
            while wall0.elapsed() < Duration::from_secs(churn_secs) {
                let i = (k / 2) % 10; // the churn leaves the first ten applications alone
                if k.is_multiple_of(2) {
                    let replicas = 4 + (k % 5) as i32;
                    let api: kube::Api<Deployment> = kube::Api::namespaced(client.clone(), &namespace(i));
                    stats.lock().unwrap().marker = Some((Want::Replicas(kdrift::cluster::rows::WorkloadKind::Deployment.key(&namespace(i), &name(i)), replicas), Instant::now()));
                    api.patch_scale(&name(i), &PatchParams::default(), &Patch::Merge(serde_json::json!({"spec": {"replicas": replicas}})))
                        .await
                        .unwrap();
                } else {
                    flags[i] = !flags[i];
                    let summary = if flags[i] { DriftSummary::Fields(1) } else { DriftSummary::InSync };
                    let api: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), &namespace(i));
                    stats.lock().unwrap().marker = Some((Want::Drift(config_key(i), summary), Instant::now()));
                    let body = serde_json::json!({"data": {"FEATURE_NEW_CHECKOUT": flags[i].to_string()}});
                    let params = PatchParams {
                        field_manager: Some("bench-marker".into()),
                        ..PatchParams::default()
                    };
                    api.patch(&format!("{}-config", name(i)), &params, &Patch::Merge(body))
                        .await
                        .unwrap();
                }
                k += 1;
                let sent = Instant::now();
                while stats.lock().unwrap().marker.is_some() && sent.elapsed() < Duration::from_secs(2) {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                tokio::time::sleep(Duration::from_millis(40)).await;
            }
            let done = tokio::task::block_in_place(|| {
                let mut reply = String::new();
                child_out.read_line(&mut reply).unwrap();
                reply
            });
            let cpu = cpu_time() - cpu0;
            let wall = wall0.elapsed();
            let (frames, mut deployments, mut configmaps) = {
                let mut s = stats.lock().unwrap();
                (
                    s.frames - frames0,
                    std::mem::take(&mut s.deployment_latencies),
                    std::mem::take(&mut s.configmap_latencies),
                )
            };
            println!(
                "under load: {} writes/s achieved by the cluster; kdrift drew {frames} frames in {:.1} s",
                done.trim().strip_prefix("done ").unwrap_or("?"),
                wall.as_secs_f64()
            );
            let mut all: Vec<Duration> = deployments.iter().chain(&configmaps).copied().collect();
            println!(
                "watch event -> frame      median {:>6.2} ms  p99 {:>6.2} ms (n={}; target p99 ≤ 20 ms): Deployment scale → row median {:.2} p99 {:.2} (n={}), ConfigMap edit → drift median {:.2} p99 {:.2} (n={})",
                percentile(&mut all, 0.5),
                percentile(&mut all, 0.99),
                all.len(),
                percentile(&mut deployments, 0.5),
                percentile(&mut deployments, 0.99),
                deployments.len(),
                percentile(&mut configmaps, 0.5),
                percentile(&mut configmaps, 0.99),
                configmaps.len()
            );
            println!(
                "CPU under 1,000 writes/s  {:>6.1} % of a core",
                cpu.as_secs_f64() / wall.as_secs_f64() * 100.0
            );
            println!(
                "resident memory, after    {:>6.1} MB; heap in use {:.1} MB",
                rss_mb(),
                heap_mb()
            );

            tokio::time::sleep(Duration::from_secs(2)).await;
            let cpu0 = cpu_time();
            let frames0 = stats.lock().unwrap().frames;
            let t = Instant::now();
            tokio::time::sleep(Duration::from_secs(idle_seconds)).await;
            let cpu = cpu_time() - cpu0;
            let frames = stats.lock().unwrap().frames - frames0;
            println!(
                "idle CPU over {idle_seconds} s         {:>6.3} % of a core, {frames} frames (target ≤ 0.05 %)",
                cpu.as_secs_f64() / t.elapsed().as_secs_f64() * 100.0
            );
        };
        session::drive(&common, conn, start, stats.clone(), on_frame, script).await;
    });
    writeln!(child_in, "quit").unwrap();
    let _ = child.wait();
}
