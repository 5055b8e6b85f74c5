//! Helm at scale (issue 30, performance): 50 releases of 20 objects each (10 Deployments and 10
//! ConfigMaps), installed in a demo cluster as helm 4 leaves them (a record Secret each, the
//! objects applied server-side as field manager `helm`), 5 Deployments then scaled out of band,
//! and an empty checkout: the releases alone are the desired state. Prints:
//! - decoding a 1 MiB release record (a chart with 700 KiB of incompressible files): median of
//!   20, in this process (target ≤ 20 ms);
//! - first drift of all: `kdrift check -A` from a fresh process, median of 5, and the live
//!   view's time from start until every row has its drift (target ≤ 2 s on 2 cores);
//! - a `helm upgrade` seen in the live view: a new revision's record created (as helm creates
//!   it) → the app holds that revision as the release's desired state; median of 5 (target ≤ 1 s).
//!
//! Run: `cargo bench --bench helm` (needs `kubectl` on PATH).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/sim.rs"]
mod sim;

#[path = "common/session.rs"]
mod session;

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use kdrift::app::App;
use kdrift::cli::CommonArgs;
use kdrift::cluster::client::connect;
use serde_json::{Value, json};

const RELEASES: usize = 50;
const DEPLOYMENTS: usize = 10;
const RUNS: usize = 5;

fn namespace(r: usize) -> String {
    format!("rel-{r:02}")
}

fn run(program: &str, args: &[&str], dir: &Path, env: &[(&str, &Path)]) -> String {
    let mut command = Command::new(program);
    command.args(args).current_dir(dir);
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Release `r`'s manifest: 10 Deployments and 10 ConfigMaps, `replicas` each.
fn manifest(r: usize, replicas: u32) -> String {
    let mut docs = Vec::new();
    for d in 0..DEPLOYMENTS {
        docs.push(format!(
            "# Source: app/templates/svc-{d}.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: svc-{d}\n  labels:\n    app: svc-{d}\n    helm.sh/chart: app-1.0.{r}\nspec:\n  replicas: {replicas}\n  selector:\n    matchLabels: {{app: svc-{d}}}\n  template:\n    metadata:\n      labels: {{app: svc-{d}}}\n    spec:\n      containers:\n        - name: main\n          image: registry.example/app/svc-{d}:1.0.0\n          env:\n            - name: MODE\n              value: normal\n          resources:\n            requests: {{cpu: 50m, memory: 64Mi}}\n"
        ));
        docs.push(format!(
            "# Source: app/templates/settings-{d}.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings-{d}\ndata:\n  mode: normal\n  level: \"{d}\"\n"
        ));
    }
    format!("---\n{}", docs.join("---\n"))
}

fn release_json(r: usize, revision: u64, replicas: u32, files: Option<&str>) -> Value {
    let mut chart = json!({"metadata": {"name": "app", "version": format!("1.0.{r}")}});
    if let Some(files) = files {
        chart["files"] = json!([{"name": "blob.bin", "data": files}]);
    }
    json!({
        "name": "app", "namespace": namespace(r), "version": revision,
        "info": {"status": "deployed", "description": "Upgrade complete"},
        "chart": chart, "config": {"replicaCount": replicas},
        "manifest": manifest(r, replicas), "hooks": [], "apply_method": "ssa",
    })
}

fn record(r: usize, revision: u64, replicas: u32) -> Value {
    let release = kdrift::helm::record::encode(&release_json(r, revision, replicas, None)).unwrap();
    json!({
        "apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
        "metadata": {"name": format!("sh.helm.release.v1.app.v{revision}"), "namespace": namespace(r),
            "labels": {"owner": "helm", "name": "app", "status": "deployed", "version": revision.to_string()}},
        "data": {"release": base64::engine::general_purpose::STANDARD.encode(release)},
    })
}

/// The objects of release `r` as helm 4 applies them.
fn applied(r: usize) -> Vec<Value> {
    manifest(r, 2)
        .split("---\n")
        .filter_map(|doc| serde_yaml::from_str::<Value>(doc).ok())
        .filter(|v| v.is_object())
        .map(|mut object| {
            let meta = object["metadata"].as_object_mut().unwrap();
            meta.insert("namespace".into(), json!(namespace(r)));
            meta.entry("labels").or_insert(json!({}))["app.kubernetes.io/managed-by"] =
                json!("Helm");
            meta.insert(
                "annotations".into(),
                json!({"meta.helm.sh/release-name": "app", "meta.helm.sh/release-namespace": namespace(r)}),
            );
            object
        })
        .collect()
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A 1 MiB record: a release whose chart carries 700 KiB of files that gzip cannot shrink.
fn decode_bench() {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let noise: Vec<u8> = (0..700 * 1024)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state & 0xff) as u8
        })
        .collect();
    let files = base64::engine::general_purpose::STANDARD.encode(noise);
    let encoded = kdrift::helm::record::encode(&release_json(0, 1, 2, Some(&files))).unwrap();
    let mut times = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        let release = kdrift::helm::record::decode(encoded.as_bytes()).unwrap();
        times.push(started.elapsed());
        assert_eq!(release.revision, 1);
    }
    println!(
        "decode a release record of {:.2} MiB   {:>8.2} ms median of 20 (base64, gzip, JSON; target ≤ 20 ms)",
        encoded.len() as f64 / (1024.0 * 1024.0),
        ms(median(times))
    );
}

#[derive(Default)]
struct Stats {
    all_drift: Option<Duration>,
    /// The release whose new revision is awaited, and since when.
    awaited: Option<(String, u64, Instant)>,
    seen: Option<Duration>,
}

fn on_frame(s: &mut Stats, app: &App, since_start: Duration) {
    if s.all_drift.is_none() && app.ledger.rows().count() >= RELEASES * DEPLOYMENTS {
        s.all_drift = Some(since_start);
    }
    if let Some((ns, revision, since)) = &s.awaited {
        let key = kdrift::manifest::ObjectKey::new("apps", "Deployment", ns, "svc-0");
        let now = app
            .manifests
            .as_ref()
            .and_then(|i| i.get(&key))
            .and_then(|m| m.helm.as_ref())
            .map(|r| r.revision);
        if now == Some(*revision) {
            s.seen = Some(since.elapsed());
            s.awaited = None;
        }
    }
}

fn live(repo: &Path, kubeconfig: &Path, env: &[(&str, &Path); 2], dir: &Path) {
    let common = CommonArgs {
        kubeconfig: Some(kubeconfig.to_path_buf()),
        all_namespaces: true,
        manifests: Some(repo.to_path_buf()),
        ..CommonArgs::default()
    };
    let rt = kdrift::cluster::tokio_runtime().unwrap();
    let env: Vec<(&str, std::path::PathBuf)> =
        env.iter().map(|(k, v)| (*k, v.to_path_buf())).collect();
    let dir = dir.to_path_buf();
    rt.block_on(async move {
        let start = Instant::now();
        let conn = connect(&common.connection()).await.unwrap();
        let stats = Arc::new(Mutex::new(Stats::default()));
        let script = async {
            while stats.lock().unwrap().all_drift.is_none() {
                tokio::time::sleep(Duration::from_millis(5)).await;
                assert!(start.elapsed() < Duration::from_secs(120), "drift never complete");
            }
            println!(
                "live view, every row's drift   {:>8.1} ms after start ({RELEASES} releases read and decoded, their objects listed and compared; target ≤ 2,000 ms)",
                ms(stats.lock().unwrap().all_drift.unwrap())
            );
            let env: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
            let mut latencies = Vec::new();
            for round in 0..RUNS {
                let r = 20 + round;
                let file = dir.join(format!("v2-{r}.json"));
                std::fs::write(&file, record(r, 2, 3).to_string()).unwrap();
                stats.lock().unwrap().awaited = Some((namespace(r), 2, Instant::now()));
                // kubectl's own start-up is not the watch's: the clock starts when the record
                // exists (kubectl returns once it is created).
                let created = Instant::now();
                run("kubectl", &["create", "-f", file.to_str().unwrap()], &dir, &env);
                let creation = created.elapsed();
                while stats.lock().unwrap().awaited.is_some() {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    assert!(created.elapsed() < Duration::from_secs(30), "upgrade never seen");
                }
                let seen = stats.lock().unwrap().seen.unwrap();
                latencies.push(seen.saturating_sub(creation));
            }
            let mut sorted = latencies.clone();
            sorted.sort();
            println!(
                "helm upgrade → new revision    {:>8.1} ms median of {RUNS} after the record is created (min {:.1}, max {:.1}; 40 ms of it is the settling of record writes; target ≤ 1,000 ms)",
                ms(median(latencies)),
                ms(sorted[0]),
                ms(sorted[RUNS - 1])
            );
        };
        session::drive(&common, conn, start, stats.clone(), on_frame, script).await;
    });
}

fn main() {
    if Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_err()
    {
        println!("helm bench: kubectl not on PATH; skipped");
        return;
    }
    kdrift::runtime::tune_allocator();
    println!(
        "-- helm: {RELEASES} releases of {} objects ({DEPLOYMENTS} Deployments, {DEPLOYMENTS} ConfigMaps), 5 Deployments scaled out of band",
        2 * DEPLOYMENTS
    );
    decode_bench();
    let cluster = sim::InProcess::start();
    let (dir, kubeconfig) = (&cluster.dir, &cluster.kubeconfig);
    let env = cluster.env();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(
        repo.join("README.md"),
        "the releases are the desired state\n",
    )
    .unwrap();
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.com",
            "commit",
            "-qm",
            "repo",
        ],
    ] {
        run("git", args, &repo, &env);
    }
    let started = Instant::now();
    let mut namespaces = Vec::new();
    let mut records = Vec::new();
    let mut objects = Vec::new();
    for r in 0..RELEASES {
        namespaces.push(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace(r)}}),
        );
        records.push(record(r, 1, 2));
        objects.extend(applied(r));
    }
    let list =
        |items: Vec<Value>| json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string();
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let ns_file = write("namespaces.json", list(namespaces));
    let rec_file = write("records.json", list(records));
    let obj_file = write("objects.json", list(objects));
    run(
        "kubectl",
        &["create", "-f", ns_file.to_str().unwrap()],
        &repo,
        &env,
    );
    run(
        "kubectl",
        &["create", "-f", rec_file.to_str().unwrap()],
        &repo,
        &env,
    );
    run(
        "kubectl",
        &[
            "apply",
            "--server-side",
            "--field-manager=helm",
            "-f",
            obj_file.to_str().unwrap(),
        ],
        &repo,
        &env,
    );
    for r in 0..RUNS {
        run(
            "kubectl",
            &[
                "-n",
                &namespace(r),
                "scale",
                "deployment/svc-5",
                "--replicas=4",
            ],
            &repo,
            &env,
        );
    }
    println!(
        "   cluster filled with kubectl in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let kdrift = env!("CARGO_BIN_EXE_kdrift");
    let mut checks = Vec::new();
    let mut summary = String::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let out = run(kdrift, &["check", "-A"], &repo, &env);
        checks.push(started.elapsed());
        summary = out.lines().last().unwrap_or_default().to_owned();
    }
    assert!(
        summary.starts_with(&format!("{} objects:", RELEASES * 2 * DEPLOYMENTS))
            && summary.contains("5 drifted"),
        "{summary}"
    );
    println!(
        "kdrift check -A (first drift)  {:>8.1} ms median of {RUNS}, fresh process ({summary}; target ≤ 2,000 ms)",
        ms(median(checks))
    );
    live(&repo, kubeconfig, &env, dir.path());
    cluster.shutdown();
}
