//! The measuring side: kdrift's real loop (`Session::drive`) on a TestBackend against the child's
//! cluster, timing frames and events, sampling this process's memory and CPU.
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kdrift::app::App;
use kdrift::cli::CommonArgs;
use kdrift::cluster::client::connect;
use kdrift::manifest::ObjectKey;
use kube::api::{Patch, PatchParams};

use super::cluster::{name, namespace};
use super::measure::{cpu_time, rss_mb};
use super::session;
use super::{DEPLOYMENTS, report};

#[derive(Default)]
struct Stats {
    /// The rows of a full sync.
    want_rows: usize,
    first_row: Option<Duration>,
    full_sync: Option<Duration>,
    frames: u64,
    /// A marker scale in flight: the row, the replicas it must show, when it was sent.
    marker: Option<(ObjectKey, i32, Instant)>,
    latencies: Vec<Duration>,
}

/// After each frame: what the figures need from the app.
fn on_frame(s: &mut Stats, app: &App, since_start: Duration) {
    s.frames += 1;
    let rows = app.cache.workloads.len();
    if rows > 0 && s.first_row.is_none() {
        s.first_row = Some(since_start);
    }
    let synced = kdrift::cluster::rows::WorkloadKind::ALL
        .iter()
        .all(|k| app.cache.workloads.set(*k).is_synced());
    if rows == s.want_rows && synced && s.full_sync.is_none() {
        s.full_sync = Some(since_start);
    }
    if let Some((key, replicas, sent)) = s.marker.clone()
        && app
            .cache
            .workloads
            .get(&key)
            .is_some_and(|e| e.row.desired == replicas)
    {
        s.latencies.push(sent.elapsed());
        s.marker = None;
    }
}

struct ClusterChild {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl ClusterChild {
    fn start(workloads: bool) -> (ClusterChild, String) {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .arg("--serve-store")
            .args(workloads.then_some("workloads"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let url = line.trim().strip_prefix("URL ").unwrap().to_string();
        (
            ClusterChild {
                child,
                stdin,
                stdout,
            },
            url,
        )
    }

    fn command(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        let mut reply = String::new();
        self.stdout.read_line(&mut reply).unwrap();
        reply.trim().to_string()
    }
}

/// `workloads`: 2,000 StatefulSets and 2,000 DaemonSets beside the Deployments.
pub fn live_figures(idle_seconds: u64, workloads: bool) {
    let others = if workloads {
        format!(
            " + {n} StatefulSets + {n} DaemonSets",
            n = super::PER_WORKLOAD_KIND
        )
    } else {
        String::new()
    };
    println!(
        "-- live: kdrift's loop on a 200x50 TestBackend against a demo cluster (child process) with {DEPLOYMENTS} Deployments{others} in {} namespaces",
        super::NAMESPACES
    );
    let rows = DEPLOYMENTS
        + if workloads {
            2 * super::PER_WORKLOAD_KIND
        } else {
            0
        };
    let seeding = Instant::now();
    let (mut child, url) = ClusterChild::start(workloads);
    println!(
        "   cluster seeded and serving in {:.1} s",
        seeding.elapsed().as_secs_f64()
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, session::kubeconfig_for(&url)).unwrap();
    // An empty manifests folder: these runs are about watching, and the default (the current
    // directory) is the crate, whose target/ a fresh clone keeps inside it.
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let common = CommonArgs {
        kubeconfig: Some(kubeconfig),
        manifests: Some(manifests),
        all_namespaces: true,
        ..CommonArgs::default()
    };
    let rt = kdrift::cluster::tokio_runtime().unwrap();
    let child_ref = &mut child;
    rt.block_on(async move {
        let child = child_ref;
        let rss_before = rss_mb();
        let start = Instant::now();
        let conn = connect(&common.connection()).await.unwrap();
        let client = conn.client.clone();
        let stats = Arc::new(Mutex::new(Stats {
            want_rows: rows,
            ..Stats::default()
        }));
        let script = async {
            while stats.lock().unwrap().full_sync.is_none() {
                tokio::time::sleep(Duration::from_millis(5)).await;
                assert!(start.elapsed() < Duration::from_secs(120), "no full sync");
            }
            {
                let s = stats.lock().unwrap();
                println!(
                    "time to first row {:>8.1} ms   (target ≤ 500 ms)",
                    s.first_row.unwrap().as_secs_f64() * 1000.0
                );
                println!(
                    "time to full sync {:>8.1} ms   (target ≤ 2000 ms)",
                    s.full_sync.unwrap().as_secs_f64() * 1000.0
                );
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
            let steady = rss_mb();
            println!("resident memory, steady   {steady:>6.1} MB (process; {rss_before:.1} MB before connecting; target ≤ 60 MB)");

            // A relist: every watch gets 410 and lists again; sample memory while it runs.
            let relist = tokio::task::block_in_place(|| child.command("relist"));
            assert_eq!(relist, "ok");
            let mut peak = steady;
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(4) {
                peak = peak.max(rss_mb());
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            println!("resident memory, relist   {peak:>6.1} MB peak ({:.2}x steady; target ≤ 1.5x)", peak / steady);

            // 1,000 events/s for 10 s, with marker scales timed from the API call to the frame.
            let churn_secs = 10;
            let cpu0 = cpu_time();
            let wall0 = Instant::now();
            let frames0 = stats.lock().unwrap().frames;
            // A one-line write to a pipe: it does not block the loop.
            writeln!(child.stdin, "churn 1000 {churn_secs}").unwrap();
            child.stdin.flush().unwrap();
            let mut k = 0usize;
            while wall0.elapsed() < Duration::from_secs(churn_secs) {
                let i = k % 10;
                let replicas = 4 + (k % 5) as i32;
                k += 1;
                let ns_api: kube::Api<Deployment> = kube::Api::namespaced(client.clone(), &namespace(i));
                let key = kdrift::cluster::rows::WorkloadKind::Deployment.key(&namespace(i), &name(i));
                stats.lock().unwrap().marker = Some((key, replicas, Instant::now()));
                ns_api
                    .patch_scale(&name(i), &PatchParams::default(), &Patch::Merge(serde_json::json!({"spec": {"replicas": replicas}})))
                    .await
                    .unwrap();
                let sent = Instant::now();
                while stats.lock().unwrap().marker.is_some() && sent.elapsed() < Duration::from_secs(2) {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                tokio::time::sleep(Duration::from_millis(40)).await;
            }
            let done = tokio::task::block_in_place(|| {
                let mut reply = String::new();
                child.stdout.read_line(&mut reply).unwrap();
                reply
            });
            let cpu = cpu_time() - cpu0;
            let wall = wall0.elapsed();
            let frames = stats.lock().unwrap().frames - frames0;
            let mut lat = std::mem::take(&mut stats.lock().unwrap().latencies);
            println!(
                "under load: {} writes/s achieved by the cluster; kdrift drew {frames} frames in {:.1} s",
                done.trim().strip_prefix("done ").unwrap_or("?"),
                wall.as_secs_f64()
            );
            report("watch event -> frame (marker scale, API call to frame)", &mut lat);
            println!(
                "CPU under 1,000 events/s    {:>6.1} % of a core (target ≤ 25 %)",
                cpu.as_secs_f64() / wall.as_secs_f64() * 100.0
            );

            tokio::time::sleep(Duration::from_secs(2)).await;
            let cpu0 = cpu_time();
            let frames0 = stats.lock().unwrap().frames;
            let t = Instant::now();
            tokio::time::sleep(Duration::from_secs(idle_seconds)).await;
            let cpu = cpu_time() - cpu0;
            let frames = stats.lock().unwrap().frames - frames0;
            println!(
                "idle CPU over {idle_seconds} s            {:>6.2} % of a core, {frames} frames (target ≤ 0.5 %)",
                cpu.as_secs_f64() / t.elapsed().as_secs_f64() * 100.0
            );
        };
        session::drive(&common, conn, start, stats.clone(), on_frame, script).await;
    });
    let _ = child.command("quit");
    let _ = child.child.wait();
}
