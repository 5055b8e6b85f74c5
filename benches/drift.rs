//! Drift speed: 10,000 objects from parsed manifests, one object's recompute after a watch event,
//! and loading 10,000 manifest files (issue 4: ≤ 100 ms, ≤ 50 µs, ≤ 2 s on 2 cores).
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

#[path = "common/measure.rs"]
mod measure;
use measure::{heap_mb, rss_mb};

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kdrift::drift::{LiveObject, compare};
use kdrift::manifest::{Config, ManifestIndex, ManifestObject, parse::parse_file};
use serde_json::{Value, json};

const OBJECTS: usize = 10_000;

/// CPU time of the benchmarking thread: the 2-core machine is shared, and wall time there
/// measures the neighbours as much as the code.
struct ThreadCpu;

fn thread_cpu() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

struct Nanos;

impl ValueFormatter for Nanos {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = match typical {
            t if t < 1e3 => (1.0, "ns"),
            t if t < 1e6 => (1e-3, "µs"),
            t if t < 1e9 => (1e-6, "ms"),
            _ => (1e-9, "s"),
        };
        values.iter_mut().for_each(|v| *v *= factor);
        unit
    }
    fn scale_throughputs(&self, _: f64, _: &Throughput, values: &mut [f64]) -> &'static str {
        values.iter_mut().for_each(|v| *v = 0.0);
        "-"
    }
    fn scale_for_machines(&self, _: &mut [f64]) -> &'static str {
        "ns"
    }
}

impl Measurement for ThreadCpu {
    type Intermediate = Duration;
    type Value = Duration;
    fn start(&self) -> Duration {
        thread_cpu()
    }
    fn end(&self, start: Duration) -> Duration {
        thread_cpu().saturating_sub(start)
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &Nanos
    }
}

/// A two-container Deployment manifest, as a team would keep it.
fn manifest_text(i: usize) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{i}
  namespace: ns-{ns}
  labels: {{app: app-{i}, team: t{ns}}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: app-{i}}}}}
  template:
    metadata:
      labels: {{app: app-{i}}}
    spec:
      containers:
      - name: app
        image: registry.example/app-{i}:1.{i}
        ports: [{{containerPort: 8080, name: http}}]
        env:
        - {{name: MODE, value: prod}}
        - {{name: REGION, value: eu}}
        resources:
          requests: {{cpu: 250m, memory: 256Mi}}
          limits: {{cpu: 0.5, memory: 1Gi}}
        readinessProbe:
          httpGet: {{path: /healthz, port: http}}
      - name: proxy
        image: envoy:1.30
        ports: [{{containerPort: 9901}}]
",
        ns = i % 50
    )
}

/// What `kubectl apply` of [`manifest_text`] records in the last-applied annotation.
fn last_applied(i: usize) -> String {
    let mut applied: Value = serde_yaml::from_str(&manifest_text(i)).unwrap_or(Value::Null);
    if let Some(meta) = applied.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("annotations".into(), json!({}));
    }
    applied.to_string()
}

/// The same object live on a current server: defaults, status, managedFields, the last-applied
/// annotation of `kubectl apply`; every tenth one with a `kubectl set env` on top.
fn live_json(i: usize) -> Value {
    let web = "k:{\"name\":\"app\"}";
    let mut managed = vec![
        json!({"manager": "kubectl-client-side-apply", "operation": "Update", "time": "2026-11-22T01:00:00Z", "fieldsV1": {
            "f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:team": {}}},
            "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {"f:containers": {web: {".": {}, "f:image": {}, "f:name": {}, "f:env": {".": {}, "k:{\"name\":\"MODE\"}": {".": {}, "f:name": {}, "f:value": {}}}}}}}}}}),
        json!({"manager": "kube-controller-manager", "operation": "Update", "subresource": "status", "time": "2026-11-22T01:00:05Z", "fieldsV1": {"f:status": {"f:replicas": {}}}}),
    ];
    let mut env = vec![
        json!({"name": "MODE", "value": "prod"}),
        json!({"name": "REGION", "value": "eu"}),
    ];
    if i.is_multiple_of(10) {
        env.push(json!({"name": "DEBUG", "value": "1"}));
        managed.push(json!({"manager": "kubectl-set", "operation": "Update", "time": "2026-11-22T02:00:00Z", "fieldsV1": {
            "f:spec": {"f:template": {"f:spec": {"f:containers": {web: {"f:env": {"k:{\"name\":\"DEBUG\"}": {".": {}, "f:name": {}, "f:value": {}}}}}}}}}}));
    }
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": format!("app-{i}"), "namespace": format!("ns-{}", i % 50), "uid": "u", "resourceVersion": "100", "generation": 1,
            "labels": {"app": format!("app-{i}"), "team": format!("t{}", i % 50)},
            "annotations": {"deployment.kubernetes.io/revision": "1",
                "kubectl.kubernetes.io/last-applied-configuration": last_applied(i)}, "managedFields": managed},
        "spec": {"replicas": 3, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": {"app": format!("app-{i}")}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {"metadata": {"labels": {"app": format!("app-{i}")}, "creationTimestamp": null}, "spec": {
                "containers": [
                    {"name": "proxy", "image": "envoy:1.30", "ports": [{"containerPort": 9901, "protocol": "TCP"}],
                     "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"},
                    {"name": "app", "image": format!("registry.example/app-{i}:1.{i}"), "imagePullPolicy": "IfNotPresent",
                     "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}], "env": env,
                     "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "500m", "memory": "1Gi"}},
                     "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 10},
                     "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
                ],
                "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler", "securityContext": {}, "terminationGracePeriodSeconds": 30}}},
        "status": {"replicas": 3, "readyReplicas": 3, "updatedReplicas": 3, "availableReplicas": 3, "observedGeneration": 1}
    })
}

/// Resident memory of this process, from `/proc/self/statm` (pages of 4 KiB).
fn manifest(i: usize) -> ManifestObject {
    let file: Arc<Path> = Arc::from(Path::new("bench.yaml"));
    parse_file(&file, &Arc::from(manifest_text(i)), "default")
        .objects
        .remove(0)
}

fn compare_benches(c: &mut Criterion<ThreadCpu>) {
    let manifests: Vec<ManifestObject> = (0..OBJECTS).map(manifest).collect();
    let config = Config::default();
    let (rss_before, heap_before) = (rss_mb(), heap_mb());
    // The live view keeps the reduced extract of each object, as the engine is meant to be fed.
    let lives: Vec<LiveObject> = (0..OBJECTS)
        .map(|i| {
            let mut live = LiveObject::from_value(live_json(i), kdrift::schema::Schemas::builtin())
                .expect("live");
            live.reduce_to(&manifests[i].body.to_value(), &config);
            live
        })
        .collect();
    let drifts: Vec<_> = manifests
        .iter()
        .zip(&lives)
        .map(|(m, l)| compare(m, l, &config))
        .collect();
    eprintln!(
        "memory: 10k parsed manifests {heap_before:.0} MB heap ({rss_before:.0} MB resident); \
         with 10k reduced live extracts and their drift {:.0} MB heap ({:.0} MB resident)",
        heap_mb(),
        rss_mb()
    );
    // Keeping only the drift of each object (a watch event brings the whole object again).
    drop(lives);
    eprintln!(
        "memory: 10k manifests and 10k drift results without the extracts {:.0} MB heap",
        heap_mb()
    );
    let lives: Vec<LiveObject> = (0..OBJECTS)
        .map(|i| {
            let mut live = LiveObject::from_value(live_json(i), kdrift::schema::Schemas::builtin())
                .expect("live");
            live.reduce_to(&manifests[i].body.to_value(), &config);
            live
        })
        .collect();
    drop(drifts);
    let drifted = manifests
        .iter()
        .zip(&lives)
        .filter(|(m, l)| compare(m, l, &config).drift_count() > 0)
        .count();
    assert_eq!(
        drifted,
        OBJECTS / 10,
        "the fixture drifts every tenth object"
    );

    let mut group = c.benchmark_group("drift");
    group.sample_size(20);
    group.bench_function("compare 10k objects", |b| {
        b.iter(|| {
            manifests
                .iter()
                .zip(&lives)
                .map(|(m, l)| compare(m, l, &config).drift_count())
                .sum::<usize>()
        })
    });
    // A watch event as the app gets it: the object's JSON text, read into an extract only
    // because the object has a manifest, compared, dropped.
    let event = live_json(10).to_string();
    group.bench_function(
        "one object after a watch event (extract from JSON + compare)",
        |b| {
            b.iter(|| {
                let live = LiveObject::from_deployment_json(
                    black_box(&event),
                    kdrift::schema::Schemas::builtin(),
                )
                .expect("live");
                compare(&manifests[10], &live, &config)
            })
        },
    );
    group.bench_function("one object compare", |b| {
        b.iter(|| compare(&manifests[10], black_box(&lives[10]), &config))
    });
    group.finish();
}

fn load_benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    for i in 0..OBJECTS {
        let sub = dir.path().join(format!("team-{}", i % 50));
        std::fs::create_dir_all(&sub).expect("mkdir");
        std::fs::write(sub.join(format!("app-{i}.yaml")), manifest_text(i)).expect("write");
    }
    // Wall time: loading runs on every core.
    let mut load = c.benchmark_group("manifests");
    load.sample_size(10);
    load.bench_function("load and parse 10k files", |b| {
        b.iter(|| {
            let index = ManifestIndex::load(dir.path(), "default");
            assert_eq!(index.len(), OBJECTS);
            index
        })
    });
    load.finish();
}

criterion_group! {
    name = cpu;
    config = Criterion::default().with_measurement(ThreadCpu);
    targets = compare_benches
}
criterion_group!(wall, load_benches);
criterion_main!(cpu, wall);
