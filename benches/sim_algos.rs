//! Cost of the demo cluster's per-write algorithms on the reference Deployment: strategic merge
//! patch, managedFields bookkeeping of an update, a server-side apply, and decoding the protobuf
//! body `kubectl create deployment` sends.
use criterion::{Criterion, criterion_group, criterion_main};
use kdrift::schema::defaults;
use kdrift::sim::resources::ResourceType;
use kdrift::sim::{patch, ssa};
use serde_json::{Value, json};

fn reference(file: &str) -> Value {
    let path = format!(
        "{}/testdata/kubernetes-1.20/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

fn per_write(c: &mut Criterion) {
    let live = reference("deploy-after-set-env-and-resources.json");
    let set_image = json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "web:2"}]}}}});
    c.bench_function("strategic merge patch (set image)", |b| {
        b.iter(|| patch::strategic_merge_patch(ResourceType::DEPLOYMENT, &live, &set_image))
    });
    let mut new = patch::strategic_merge_patch(ResourceType::DEPLOYMENT, &live, &set_image)
        .unwrap_or(Value::Null);
    defaults::apply_defaults(
        "apps",
        "Deployment",
        kdrift::schema::builtin_kind("Deployment"),
        &mut new,
    );
    c.bench_function("record_update (set image)", |b| {
        b.iter(|| {
            let mut n = new.clone();
            ssa::record_update(
                ResourceType::DEPLOYMENT,
                Some(&live),
                &mut n,
                "kubectl-set",
                None,
                "2026-11-22T04:00:00Z",
            );
            n
        })
    });
    c.bench_function("read managedFields", |b| {
        b.iter(|| kdrift::managed_fields::ManagedFieldsEntry::read(&live))
    });
    c.bench_function("compare old/new", |b| {
        b.iter(|| {
            kdrift::managed_fields::Comparison::of(
                kdrift::schema::builtin_kind("Deployment"),
                Some(&live),
                &new,
            )
        })
    });
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/kubernetes-1.20/web.yaml"
    );
    let config: Value = serde_yaml::from_str(&std::fs::read_to_string(path).unwrap_or_default())
        .unwrap_or(Value::Null);
    c.bench_function("server-side apply (web.yaml, forced)", |b| {
        b.iter(|| {
            ssa::apply(
                ResourceType::DEPLOYMENT,
                Some(&live),
                &config,
                "kubectl",
                true,
                "2026-11-22T04:00:00Z",
            )
        })
    });
}

fn protobuf(c: &mut Criterion) {
    let path = format!(
        "{}/crates/kdrift-sim/testdata/protobuf/deployment.pb",
        env!("CARGO_MANIFEST_DIR")
    );
    let body = std::fs::read(path).unwrap_or_default();
    // The first decode reads the descriptors and the Go types: not part of a request's cost.
    let _ = kdrift::sim::server::decode_protobuf(("apps/v1", "Deployment"), &body);
    c.bench_function("protobuf body (kubectl create deployment)", |b| {
        b.iter(|| kdrift::sim::server::decode_protobuf(("apps/v1", "Deployment"), &body))
    });
}

criterion_group!(benches, per_write, protobuf);
criterion_main!(benches);
