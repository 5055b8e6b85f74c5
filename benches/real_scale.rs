//! kdrift at 30,000 objects on a real Kubernetes API server (issue 35, item 2): 10,000
//! Deployments (100 with one replica, Running; the rest at zero), 10,000 headless Services and
//! 10,000 ConfigMaps in 100 namespaces, a manifest for each, created by the bench. kdrift's real
//! loop (a 200x50 TestBackend, all namespaces) prints:
//! - first row and every object's drift known, from connecting;
//! - this process's resident memory and live heap once synced (the bench's own set-up is done
//!   and dropped by then; resident memory also holds pages the allocator kept), and the most
//!   heap in use on the way there;
//! - CPU over `--idle-seconds` (60) with nothing changing;
//! - event → frame under `--rate` (100) writes/s for `--write-seconds` (30): each write a
//!   merge patch by manager `hotfix` (`spec.minReadySeconds`) of a Deployment in sync, timed
//!   from the server's answer to the first frame whose drift column shows it; p50 and p99;
//! - `kdrift check` beside `kubectl diff` on `--diff-objects` (1,000) objects of it (a folder of
//!   their manifests): medians of `--check-runs` (3) and `--kubectl-runs` (1; kubectl diff takes
//!   ~0.1 s per object) and their ratio per object.
//!
//! The server: the realk8s that `KDRIFT_REALK8S_KUBECONFIG` names, else one started from
//! `../shared/realk8s` (stopped at the end), else the bench says why it cannot run and exits.
//! kubectl: `KDRIFT_CONFORMANCE_KUBECTL`, else `kubectl` on PATH. Objects are created in
//! namespaces `scale-00`…`scale-99` and left in place on a named server (a second run finds
//! them; the Deployments it wrote are put back in sync at the end).
//!
//! Run: `cargo bench --bench real_scale` (`-- --apps 1000` for a smaller look; `-- --reuse` on
//! a kept server whose objects a run before created: they are not applied again;
//! `-- --frame-interval MS` to pace frames otherwise than the app does).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/breakdown.rs"]
mod breakdown;
#[path = "common/manifest.rs"]
mod manifest;
#[path = "common/measure.rs"]
mod measure;
#[path = "common/real_apps.rs"]
mod real_apps;
#[path = "common/realk8s.rs"]
mod realk8s;
#[path = "common/session.rs"]
mod session;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};
use futures::StreamExt;
use kdrift::app::{App, DriftSummary, Message};
use kdrift::cluster::client::connect;
use kdrift::manifest::ObjectKey;
use kdrift::runtime::event_loop::Event;
use kube::api::{Patch, PatchParams};
use tokio::sync::mpsc::UnboundedSender;

use measure::{cpu_time, heap_mb, malloc_report, rss_mb};
use real_apps::{Apps, load_average};

#[derive(Default)]
struct Stats {
    apps: usize,
    first_row: Option<Duration>,
    synced: Option<Duration>,
    /// Deployments at zero replicas in sync when the drift was first complete: the writes' targets.
    in_sync: Vec<ObjectKey>,
    /// Writes answered by the server and not yet on screen.
    pending: HashMap<ObjectKey, Instant>,
    latencies: Vec<Duration>,
    /// Heap bytes of the change timeline's previous versions when the drift was complete.
    prior_bytes: usize,
    /// The heap of each part of the app, taken at the first frame after the script asks for it
    /// (`want_breakdown`): its clones, freed at once, would otherwise be in the resident figure.
    breakdown: String,
    want_breakdown: bool,
    /// The most heap in use from connecting until then (MB).
    start_peak: f64,
}

/// Whether every object of the bench's `apps` applications has its drift: the bench's own
/// objects only — another Deployment on the server (an earlier run's leftovers, a chart
/// installed by hand) made it look complete two rows early, before two were compared.
fn own_drift_known(app: &App, apps: usize) -> bool {
    let own = app
        .ledger
        .iter()
        .filter(|(k, _)| k.namespace.starts_with("scale-"));
    let (rows, others) = own.fold((0, 0), |(rows, others), (k, _)| {
        if App::is_row_kind(k) {
            (rows + 1, others)
        } else {
            (rows, others + 1)
        }
    });
    rows >= apps && others >= 2 * apps
}

fn on_frame(s: &mut Stats, app: &App, since: Duration) {
    if s.first_row.is_none() && !app.cache.workloads.is_empty() {
        s.first_row = Some(since);
    }
    if s.synced.is_none()
        && own_drift_known(app, s.apps)
        && !app.objects.kinds.is_empty()
        && app.objects.kinds.values().all(|listed| *listed)
    {
        s.synced = Some(since);
        s.start_peak = measure::peak_mb();
        s.prior_bytes = app.changes.prior_bytes();
        s.in_sync = app
            .ledger
            .iter()
            .filter(|(k, e)| e.summary == DriftSummary::InSync && k.namespace.starts_with("scale-"))
            .filter(|(k, _)| kdrift::app::App::is_row_kind(k))
            .map(|(k, _)| k.clone())
            .collect();
        s.in_sync.sort();
    }
    if s.want_breakdown && s.breakdown.is_empty() {
        s.breakdown = breakdown::heap_by_part(app);
    }
    if !s.pending.is_empty() {
        let seen: Vec<ObjectKey> = s
            .pending
            .keys()
            .filter(|k| matches!(app.drift_of(k), DriftSummary::Fields(_)))
            .cloned()
            .collect();
        for key in seen {
            if let Some(sent) = s.pending.remove(&key) {
                s.latencies.push(sent.elapsed());
            }
        }
    }
}

fn value(args: &[String], flag: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == flag)
        .and_then(|at| args.get(at + 1))
        .map_or(default, |v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{flag} {v:?}: not a number"))
        })
}

fn percentile(samples: &mut [Duration], p: f64) -> f64 {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples
        .get(i)
        .map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Seconds `program args` took, with `KUBECONFIG`; its exit code must be 0 or 1 (drift found).
fn timed(program: &str, args: &[&str], kubeconfig: &Path) -> f64 {
    let began = Instant::now();
    let out = Command::new(program)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("KDRIFT_HELM", "/nonexistent/helm")
        .output()
        .unwrap();
    let took = began.elapsed().as_secs_f64();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{program} {args:?}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let apps = Apps {
        prefix: "scale",
        apps: value(&args, "--apps", 10_000) as usize,
        namespaces: 100,
        running: 100,
    };
    let idle_seconds = value(&args, "--idle-seconds", 60);
    let write_seconds = value(&args, "--write-seconds", 30);
    let rate = value(&args, "--rate", 100).max(1);
    let diff_objects = value(&args, "--diff-objects", 1_000) as usize;
    let check_runs = value(&args, "--check-runs", 3).max(1);
    let kubectl_runs = value(&args, "--kubectl-runs", 1);
    let frame_interval = Duration::from_millis(value(
        &args,
        "--frame-interval",
        kdrift::runtime::event_loop::FRAME_INTERVAL.as_millis() as u64,
    ));
    // The objects a run before left on a kept server, not applied again (minutes at 30,000).
    let reuse = args.iter().any(|a| a == "--reuse");
    let server = match realk8s::find() {
        Ok(server) => server,
        Err(why) => {
            println!("-- real_scale: cannot run: {why}");
            return;
        }
    };
    println!(
        "-- real_scale: {n} Deployments ({} with one pod) + {n} headless Services + {n} ConfigMaps in {} namespaces, a manifest each, on {}; load {}",
        apps.running,
        apps.namespaces,
        server.origin,
        load_average(),
        n = apps.apps
    );
    kdrift::runtime::tune_allocator();
    let (dir, root, common) = real_apps::checkout(&server.kubeconfig);
    let rt = kdrift::cluster::tokio_runtime().unwrap();
    let written: Vec<ObjectKey> = rt.block_on(async {
        {
            let conn = connect(&common.connection()).await.unwrap();
            apps.populate_or_reuse(&conn.client, &root, reuse).await;
        }
        // kdrift starts in a process of its own: the set-up's freed pages go back first.
        measure::release_freed_pages();
        measure::reset_peak();
        let start = Instant::now();
        let conn = connect(&common.connection()).await.unwrap();
        let connected = start.elapsed();
        let client = conn.client.clone();
        let stats = Arc::new(Mutex::new(Stats {
            apps: apps.apps,
            ..Stats::default()
        }));
        let written = Arc::new(Mutex::new(Vec::new()));
        let (stats_ref, written_ref, client_ref) = (&stats, &written, &client);
        let script = |tx: UnboundedSender<Event>| async move {
            let (stats, written, client) = (stats_ref, written_ref, client_ref);
            while stats.lock().unwrap().synced.is_none() {
                tokio::time::sleep(Duration::from_millis(20)).await;
                assert!(
                    start.elapsed() < Duration::from_secs(600),
                    "drift never complete"
                );
            }
            {
                let s = stats.lock().unwrap();
                println!(
                    "first row {:.3} s (connected at {:.3} s), every object's drift known {:.2} s after connecting",
                    s.first_row.unwrap().as_secs_f64(),
                    connected.as_secs_f64(),
                    s.synced.unwrap().as_secs_f64()
                );
            }
            // Let the first lists' aftermath settle (memory released, ages drawn).
            tokio::time::sleep(Duration::from_secs(5)).await;
            let (peak, prior_bytes) = {
                let s = stats.lock().unwrap();
                (s.start_peak, s.prior_bytes)
            };
            println!(
                "synced: resident {:.1} MB ({}), live heap {:.1} MB (at most {peak:.1} MB on the way), the timeline's previous versions {:.1} MB; {}",
                rss_mb(),
                measure::resident_parts(),
                heap_mb(),
                prior_bytes as f64 / 1e6,
                malloc_report()
            );
            // The breakdown clones each part (tens of MB, freed at once): after the figure
            // above, at a frame a key asks for, and its pages handed back before the idle.
            stats.lock().unwrap().want_breakdown = true;
            tx.send(Event::App(Message::Key(KeyEvent::from(KeyCode::Down))))
                .unwrap();
            while stats.lock().unwrap().breakdown.is_empty() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            measure::release_freed_pages();
            println!("heap by part: {}", stats.lock().unwrap().breakdown);

            let cpu0 = cpu_time();
            let t = Instant::now();
            tokio::time::sleep(Duration::from_secs(idle_seconds)).await;
            let wall = t.elapsed().as_secs_f64();
            println!(
                "idle: CPU {:.3} % of a core over {wall:.0} s; load {}",
                (cpu_time() - cpu0).as_secs_f64() / wall * 100.0,
                load_average()
            );

            let targets: Vec<ObjectKey> = stats.lock().unwrap().in_sync.clone();
            let count = (rate * write_seconds) as usize;
            assert!(
                targets.len() >= count,
                "{} Deployments in sync, {count} writes wanted",
                targets.len()
            );
            let params = PatchParams {
                field_manager: Some("hotfix".into()),
                ..PatchParams::default()
            };
            let every = Duration::from_secs_f64(1.0 / rate as f64);
            let began = tokio::time::Instant::now();
            // Each write sent at its own moment of the schedule, whatever the answers' delays.
            let writes = futures::stream::iter(targets.into_iter().take(count).enumerate())
                .map(|(n, key)| {
                    let api: kube::Api<k8s_openapi::api::apps::v1::Deployment> =
                        kube::Api::namespaced(client.clone(), &key.namespace);
                    let params = params.clone();
                    let stats = stats.clone();
                    let written = written.clone();
                    let at = began + every * u32::try_from(n).unwrap();
                    async move {
                        tokio::time::sleep_until(at).await;
                        let patch = serde_json::json!({"spec": {"minReadySeconds": 7}});
                        api.patch(&key.name, &params, &Patch::Merge(patch))
                            .await
                            .unwrap();
                        stats
                            .lock()
                            .unwrap()
                            .pending
                            .insert(key.clone(), Instant::now());
                        written.lock().unwrap().push(key);
                    }
                })
                .buffer_unordered(64);
            let cpu0 = cpu_time();
            writes.collect::<Vec<()>>().await;
            let sending = began.elapsed().as_secs_f64();
            let waited = Instant::now();
            while !stats.lock().unwrap().pending.is_empty() && waited.elapsed().as_secs() < 30 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let busy = (cpu_time() - cpu0).as_secs_f64() / began.elapsed().as_secs_f64() * 100.0;
            let mut s = stats.lock().unwrap();
            let mut latencies = std::mem::take(&mut s.latencies);
            println!(
                "{count} writes in {sending:.1} s ({:.0}/s): event → frame p50 {:.1} ms, p99 {:.1} ms (n={}, {} never shown); CPU {busy:.1} % of a core; load {}",
                count as f64 / sending,
                percentile(&mut latencies, 0.5),
                percentile(&mut latencies, 0.99),
                latencies.len(),
                s.pending.len(),
                load_average()
            );
        };
        println!("frames at most every {} ms under churn", frame_interval.as_millis());
        session::drive_paced(
            &common,
            conn,
            start,
            stats.clone(),
            on_frame,
            Some(frame_interval),
            script,
        )
        .await;
        written.lock().unwrap().clone()
    });

    // check beside kubectl diff on the manifests of the first applications.
    let subset = dir.path().join("subset");
    std::fs::create_dir_all(&subset).unwrap();
    std::fs::write(subset.join(".kdrift.yaml"), "appliers: [bench]\n").unwrap();
    let subset_apps = diff_objects.div_ceil(3).min(apps.apps);
    // The manifests one folder down: kubectl diff -R reads every file of its folder, and
    // .kdrift.yaml is not a manifest.
    let manifests = subset.join("apps");
    for i in 0..subset_apps {
        apps.write(&manifests, i);
    }
    let objects = subset_apps * 3;
    let kdrift = env!("CARGO_BIN_EXE_kdrift");
    let subset_text = subset.to_str().unwrap();
    let checks: Vec<f64> = (0..check_runs)
        .map(|_| {
            timed(
                kdrift,
                &["check", "-A", "--manifests", subset_text],
                &server.kubeconfig,
            )
        })
        .collect();
    let check = median(checks.clone());
    print!(
        "kdrift check on {objects} objects: median {check:.2} s of {checks:.2?} ({:.2} ms per object)",
        check * 1000.0 / objects as f64
    );
    if kubectl_runs > 0 {
        let kubectl =
            std::env::var("KDRIFT_CONFORMANCE_KUBECTL").unwrap_or_else(|_| "kubectl".into());
        let diffs: Vec<f64> = (0..kubectl_runs)
            .map(|_| {
                timed(
                    &kubectl,
                    &["diff", "-R", "-f", manifests.to_str().unwrap()],
                    &server.kubeconfig,
                )
            })
            .collect();
        let diff = median(diffs.clone());
        println!(
            "; kubectl diff: median {diff:.1} s of {diffs:.1?} ({:.1} ms per object); kdrift {:.0}× faster",
            diff * 1000.0 / objects as f64,
            diff / check
        );
    } else {
        println!();
    }

    // Put the written Deployments back in sync, for the next run on a named server.
    rt.block_on(async {
        let conn = connect(&common.connection()).await.unwrap();
        let params = PatchParams {
            field_manager: Some("hotfix".into()),
            ..PatchParams::default()
        };
        futures::stream::iter(written)
            .map(|key| {
                let api: kube::Api<k8s_openapi::api::apps::v1::Deployment> =
                    kube::Api::namespaced(conn.client.clone(), &key.namespace);
                let params = params.clone();
                async move {
                    let patch = serde_json::json!({"spec": {"minReadySeconds": null}});
                    api.patch(&key.name, &params, &Patch::Merge(patch))
                        .await
                        .unwrap();
                }
            })
            .buffer_unordered(16)
            .collect::<Vec<()>>()
            .await;
    });
    drop(server);
}
