//! Drift in the live view at scale (issue 4, point 9): kdrift's real loop against a demo cluster
//! (child process, the `live` bench's) of 10,000 Deployments, with a manifest for each in a
//! folder (one in ten drifted). Prints the time until every row has its drift, resident memory
//! with manifests and drift held, and the time from a manifest edit on disk to the row's new
//! drift.
//!
//! Run: `cargo bench --bench live_drift`.

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

use kdrift::app::{App, DriftSummary};
use kdrift::cli::CommonArgs;
use kdrift::cluster::client::connect;
use kdrift::manifest::ObjectKey;

use cluster::{name, namespace};
use measure::{heap_mb, rss_mb};

pub const DEPLOYMENTS: usize = 10_000;
pub const NAMESPACES: usize = 500;

/// The manifest of Deployment `i` as the bench cluster seeds it; `image` differs for drift.
fn manifest(i: usize, image: &str) -> String {
    manifest::deployment_yaml(&name(i), &namespace(i), 3, image)
}

#[derive(Default)]
struct Stats {
    all_drift: Option<Duration>,
    counts: (usize, usize, usize),
    /// A row whose drift must become this, and since when.
    marker: Option<(ObjectKey, DriftSummary, Instant)>,
    marker_latency: Option<Duration>,
}

/// After each frame: what the figures need from the app.
fn on_frame(s: &mut Stats, app: &App, since_start: Duration) {
    if s.all_drift.is_none() && app.ledger.rows().count() >= DEPLOYMENTS {
        s.all_drift = Some(since_start);
        let rows = app.ledger.rows().count();
        let in_sync = app
            .ledger
            .rows()
            .filter(|e| e.summary == DriftSummary::InSync)
            .count();
        let drifted = app
            .ledger
            .rows()
            .filter(|e| matches!(e.summary, DriftSummary::Fields(_)))
            .count();
        s.counts = (in_sync, drifted, rows - in_sync - drifted);
    }
    if let Some((key, want, since)) = &s.marker
        && app.drift_of(key) == want
    {
        s.marker_latency = Some(since.elapsed());
        s.marker = None;
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--serve-store") {
        cluster::serve();
        return;
    }
    kdrift::runtime::tune_allocator();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("manifests");
    std::fs::create_dir_all(&root).unwrap();
    // The bench cluster's objects were written by the "bench" manager: it is the applier here.
    std::fs::write(root.join(".kdrift.yaml"), "appliers: [bench]\n").unwrap();
    for i in 0..DEPLOYMENTS {
        let folder = root.join(namespace(i));
        std::fs::create_dir_all(&folder).unwrap();
        let image = if i % 10 == 9 { "1.4.3" } else { "1.4.2" };
        std::fs::write(folder.join(format!("{}.yaml", name(i))), manifest(i, image)).unwrap();
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .arg("--serve-store")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child_in = child.stdin.take().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().strip_prefix("URL ").unwrap().to_string();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, session::kubeconfig_for(&url)).unwrap();
    let common = CommonArgs {
        kubeconfig: Some(kubeconfig),
        all_namespaces: true,
        manifests: Some(root.clone()),
        ..CommonArgs::default()
    };
    println!(
        "-- live drift: {DEPLOYMENTS} Deployments in {NAMESPACES} namespaces, one manifest file each (1 in 10 drifted)"
    );
    let rt = kdrift::cluster::tokio_runtime().unwrap();
    rt.block_on(async move {
        let rss_before = rss_mb();
        let start = Instant::now();
        let conn = connect(&common.connection()).await.unwrap();
        let stats = Arc::new(Mutex::new(Stats::default()));
        let script = async {
            while stats.lock().unwrap().all_drift.is_none() {
                tokio::time::sleep(Duration::from_millis(5)).await;
                assert!(start.elapsed() < Duration::from_secs(180), "drift never complete");
            }
            {
                let s = stats.lock().unwrap();
                println!(
                    "every row's drift         {:>8.1} ms after start (manifests loaded, listed, compared); in sync {}, drifted {}, other {}",
                    s.all_drift.unwrap().as_secs_f64() * 1000.0,
                    s.counts.0,
                    s.counts.1,
                    s.counts.2
                );
            }
            tokio::time::sleep(Duration::from_secs(3)).await;
            let steady = rss_mb();
            println!(
                "resident memory, steady   {steady:>6.1} MB (process, manifests + drift; {rss_before:.1} MB before connecting; target ≤ 100 MB); heap in use {:.1} MB",
                heap_mb()
            );
            let mut latencies = Vec::new();
            for round in 0..5usize {
                let i = 100 + round * 10; // in sync at start
                let file = root.join(namespace(i)).join(format!("{}.yaml", name(i)));
                let key = kdrift::cluster::rows::WorkloadKind::Deployment.key(&namespace(i), &name(i));
                stats.lock().unwrap().marker = Some((key, DriftSummary::Fields(1), Instant::now()));
                stats.lock().unwrap().marker_latency = None;
                std::fs::write(&file, manifest(i, "2.0.0")).unwrap();
                let t = Instant::now();
                while stats.lock().unwrap().marker.is_some() {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    assert!(t.elapsed() < Duration::from_secs(30), "edit never shown");
                }
                latencies.push(stats.lock().unwrap().marker_latency.unwrap());
            }
            latencies.sort();
            println!(
                "manifest edit → row drift {:>8.1} ms median of {} (150 ms of it is the debounce; includes the GET)",
                latencies[latencies.len() / 2].as_secs_f64() * 1000.0,
                latencies.len()
            );
        };
        session::drive(&common, conn, start, stats.clone(), on_frame, script).await;
    });
    writeln!(child_in, "quit").unwrap();
    let _ = child.wait();
}
