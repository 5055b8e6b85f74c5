//! The change timeline of the live view (issue 31): what a watch event's line costs (≤ 50 µs), a
//! status-only event (no line), the timeline at start for 10,000 listed Deployments (≤ 300 ms
//! extra), 100,000 lines held (≤ 30 MB) and what an object's previous version takes. Each
//! event goes through `update()` as the loop feeds it, with the timeline on and off
//! (`changes.keep: 0`); the difference is the timeline's. Figures are the thread's CPU time
//! (the machine is shared). The start lines of objects without a manifest read their fields at
//! the first `:changes`, timed apart. `cargo bench --bench changes [-- --quick]`.
use std::sync::Arc;
use std::time::Duration;

#[path = "common/measure.rs"]
mod measure;
use measure::heap_mb;

use jiff::Timestamp;
use kdrift::app::changes::Changes;
use kdrift::app::{App, Message, update};
use kdrift::cluster::client::NamespaceScope;
use kdrift::cluster::live::{LiveDeployment, LiveRow};
use kdrift::cluster::rows::WorkloadKind;
use kdrift::cluster::watch::{ClusterEvent, ClusterMessage, WatchUpdate};
use kdrift::drift::changes::{Agrees, Change};
use kdrift::drift::live_changes::{Prior, Version};
use kdrift::manifest::{ManifestIndex, ObjectKey};
use kdrift::schema::defaults::apply_defaults;
use kdrift::sim::patch::strategic_merge_patch;
use kdrift::sim::resources::ResourceType;
use kdrift::sim::ssa::record_update;
use serde_json::{Value, json};

const CART: &str = include_str!("../demo/shop/cart.yaml");

fn thread_cpu() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// The demo's cart Deployment named `name`, as a server holds it after `kubectl apply`, with a
/// status.
fn applied(name: &str) -> Value {
    // The file's first document: the Deployment (its Service follows).
    let deployment = CART.split("\n---").next().unwrap_or(CART);
    let text = deployment.replace("name: cart\n", &format!("name: {name}\n"));
    let mut object: Value = serde_yaml::from_str(&text).unwrap();
    let config = object.to_string();
    apply_defaults(
        "apps",
        "Deployment",
        kdrift::schema::builtin_kind("Deployment"),
        &mut object,
    );
    object["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/last-applied-configuration": config});
    object["metadata"]["resourceVersion"] = json!("1");
    object["metadata"]["uid"] = json!("0c8d1c5e-5a0e-4a8a-9d4e-2c1c9e0e6f10");
    object["status"] = json!({"replicas": 2, "readyReplicas": 2, "updatedReplicas": 2,
        "availableReplicas": 2, "observedGeneration": 1, "conditions": [
        {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
         "lastUpdateTime": "2026-11-22T01:00:00Z", "lastTransitionTime": "2026-11-22T01:00:00Z",
         "message": "Deployment has minimum availability."}]});
    record_update(
        ResourceType::DEPLOYMENT,
        None,
        &mut object,
        "kubectl-client-side-apply",
        None,
        "2026-11-22T01:00:00Z",
    );
    object
}

fn row(object: &Value) -> LiveRow {
    LiveRow::from_object(serde_json::from_value::<LiveDeployment>(object.clone()).unwrap())
}

fn batch(updates: Vec<WatchUpdate<LiveRow>>) -> Message {
    Message::Cluster(ClusterMessage {
        epoch: 0,
        event: ClusterEvent::WorkloadsLive(WorkloadKind::Deployment, updates),
    })
}

fn app(index: &Arc<ManifestIndex>, keep: Option<usize>) -> App {
    let mut app = App::new(
        "bench",
        vec![],
        NamespaceScope::All,
        "2026-11-22T02:00:00Z".parse::<Timestamp>().unwrap(),
    );
    update(&mut app, Message::Manifests(index.clone()));
    app.changes.set_keep(keep);
    app
}

/// Median and 99th percentile of `samples` in µs.
fn spread(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
    (at(0.5), at(0.99))
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 300 } else { 2_000 };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cart.yaml"), CART).unwrap();
    let index = Arc::new(ManifestIndex::load(dir.path(), "default"));

    // 1. One watch event of cart (which has a manifest): a kubectl scale (a line), then a
    //    status-only event (no line), alternately.
    let cart = applied("cart");
    let mut versions = Vec::new();
    let mut previous = cart.clone();
    for i in 0..rounds {
        let replicas = 3 + (i % 7) as u64;
        let mut scaled = strategic_merge_patch(
            ResourceType::DEPLOYMENT,
            &previous,
            &json!({"spec": {"replicas": replicas}}),
        )
        .unwrap();
        record_update(
            ResourceType::DEPLOYMENT,
            Some(&previous),
            &mut scaled,
            "kubectl",
            Some("scale"),
            "2026-11-22T02:00:00Z",
        );
        let mut status = scaled.clone();
        status["status"]["readyReplicas"] = json!(i % 5);
        versions.push((row(&scaled), row(&status)));
        previous = status;
    }
    println!("watch events of one Deployment with a manifest ({rounds} of each, thread CPU):");
    let mut medians = Vec::new();
    for keep in [Some(0), None] {
        let mut app = app(&index, keep);
        update(
            &mut app,
            batch(vec![
                WatchUpdate::Init,
                WatchUpdate::InitApply(row(&cart)),
                WatchUpdate::InitDone,
            ]),
        );
        let (mut writes, mut statuses) = (Vec::new(), Vec::new());
        for (scaled, status) in &versions {
            let t = thread_cpu();
            update(&mut app, batch(vec![WatchUpdate::Apply(scaled.clone())]));
            writes.push(thread_cpu() - t);
            let t = thread_cpu();
            update(&mut app, batch(vec![WatchUpdate::Apply(status.clone())]));
            statuses.push(thread_cpu() - t);
        }
        let (w50, w99) = spread(writes);
        let (s50, s99) = spread(statuses);
        let label = if keep == Some(0) {
            "timeline off"
        } else {
            "timeline on "
        };
        println!(
            "  {label}: a write (line) median {w50:.1} µs p99 {w99:.1} µs; status only median {s50:.1} µs p99 {s99:.1} µs; lines {}",
            app.changes.len()
        );
        medians.push((w50, s50));
    }
    println!(
        "  the timeline's part: a write's line {:.1} µs, a status-only event {:.1} µs (target ≤ 50 µs)",
        medians[1].0 - medians[0].0,
        medians[1].1 - medians[0].1
    );

    // 2. At start: 10,000 Deployments listed in one batch (none with a manifest: the case where
    //    drift read nothing before the timeline).
    let objects = if quick { 2_000 } else { 10_000 };
    let rows: Vec<LiveRow> = (0..objects)
        .map(|i| row(&applied(&format!("app-{i}"))))
        .collect();
    println!("a list of {objects} Deployments without manifests, one batch (thread CPU):");
    let mut took = Vec::new();
    for keep in [Some(0), None] {
        let mut app = app(&index, keep);
        // The heap is read before the batch is made and after the update, which frees it.
        let heap_before = heap_mb();
        let mut updates = vec![WatchUpdate::Init];
        updates.extend(rows.iter().cloned().map(WatchUpdate::InitApply));
        updates.push(WatchUpdate::InitDone);
        let t = thread_cpu();
        update(&mut app, batch(updates));
        let spent = thread_cpu() - t;
        let held = heap_mb() - heap_before;
        let label = if keep == Some(0) {
            "timeline off"
        } else {
            "timeline on "
        };
        println!(
            "  {label}: {:.0} ms, heap held after it +{held:.1} MB; lines {} ({} dropped); previous versions {:.1} MB ({} bytes each)",
            spent.as_secs_f64() * 1e3,
            app.changes.len(),
            app.changes.dropped,
            app.changes.prior_bytes() as f64 / 1e6,
            app.changes.prior_bytes() / objects.max(1),
        );
        took.push(spent);
        if keep.is_none() {
            // The start lines of objects without a manifest read their fields at the first
            // `:changes`: that cost is not the start's, but it is the timeline's.
            let t = thread_cpu();
            app.open_changes();
            let opened = thread_cpu() - t;
            println!(
                "  the first :changes reads the start lines' fields: {:.0} ms ({} lines), heap held then +{:.1} MB",
                opened.as_secs_f64() * 1e3,
                app.changes.len(),
                heap_mb() - heap_before
            );
        }
        drop(app);
    }
    println!(
        "  the timeline's part: {:.0} ms (target ≤ 300 ms for 10,000)",
        (took[1].as_secs_f64() - took[0].as_secs_f64()) * 1e3
    );

    // 3. 100,000 lines held (keep: 100,000), each as a scale line says it, of 10,000 objects
    //    whose keys the app holds already (with their previous versions).
    let keys: Vec<Arc<ObjectKey>> = (0..10_000)
        .map(|i| {
            Arc::new(ObjectKey::new(
                "apps",
                "Deployment",
                "shop",
                &format!("app-{i}"),
            ))
        })
        .collect();
    let heap = heap_mb();
    let mut changes = Changes::default();
    changes.set_keep(Some(100_000));
    let field = kdrift::managed_fields::FieldPath::fields(&["spec", "replicas"]);
    for i in 0..100_000u64 {
        let key = &keys[(i % 10_000) as usize];
        let change = Change {
            time: Some(format!("2026-11-22T02:{:02}:{:02}Z", (i / 60) % 60, i % 60)),
            object: key.to_string(),
            who: "kubectl (scale) Update".to_owned(),
            what: format!(".spec.replicas: {} → {}", i % 9, i % 9 + 1),
            git: Agrees::Drifted,
            writer: None,
        };
        changes.push(key.clone(), change, "kubectl", Some(&field));
    }
    println!(
        "100,000 lines held: heap +{:.1} MB (target ≤ 30 MB)",
        heap_mb() - heap
    );
    let text = cart.to_string();
    let version = Version::of_text(&text).unwrap();
    println!(
        "the previous version of the demo's cart: {} bytes (its JSON text: {} bytes)",
        Prior::of(&version, &mut kdrift::packed::Names::default()).heap_bytes(),
        text.len()
    );
    drop(changes);
}
