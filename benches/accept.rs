//! Accept without git: edit + verify + write of one document of a 2,000-line, 40-document
//! manifest file (the issue asks for at most 20 ms). Run: `cargo bench --bench accept`.
use std::hint::black_box;
use std::path::Path;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use kdrift::manifest::edit::{ContentHash, FieldEdit, FieldPath, edit_document, write_verified};
use serde_json::json;

/// One 49-line Deployment document with comments, `n` in its names.
fn document(n: usize) -> String {
    let mut doc = format!(
        "# deployment {n}: owned by team-{n}\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{n}\n  namespace: shop\n  labels:\n    app.kubernetes.io/name: app-{n}\n    app.kubernetes.io/part-of: shop\nspec:\n  replicas: 2 # by hand in incidents\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: app-{n}\n  template:\n    metadata:\n      labels:\n        app.kubernetes.io/name: app-{n}\n    spec:\n      containers:\n      - name: app\n        image: \"registry.example.com/app-{n}:1.10\"\n        ports:\n        - containerPort: 8080\n          name: http\n        env:\n"
    );
    for e in 0..8 {
        doc.push_str(&format!(
            "        - name: VAR_{e}\n          value: \"{e}\"\n"
        ));
    }
    doc.push_str("        resources:\n          requests:\n            cpu: 100m\n            memory: 128Mi\n      - name: sidecar\n        image: busybox:1.36\n        args: [\"sleep\", \"infinity\"]\n");
    doc
}

fn manifest() -> String {
    let docs: Vec<String> = (0..40).map(document).collect();
    // 40 documents of 49 lines, 39 separators and a closing comment: 2,000 lines.
    docs.join("---\n") + "# end of the generated file\n"
}

fn bench(c: &mut Criterion) {
    let text = manifest();
    assert_eq!(
        text.lines().count(),
        2000,
        "the bench file must be 2,000 lines"
    );
    let container = |name: &str| {
        FieldPath::keys(&["spec", "template", "spec", "containers"]).item("name", name)
    };
    let edits = [
        FieldEdit::Set {
            path: FieldPath::keys(&["spec", "replicas"]),
            value: json!(5),
        },
        FieldEdit::Set {
            path: container("app")
                .key("env")
                .item("name", "VAR_3")
                .key("value"),
            value: json!("on"),
        },
        FieldEdit::Set {
            path: container("sidecar")
                .key("resources")
                .key("limits")
                .key("memory"),
            value: json!("64Mi"),
        },
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("all.yaml");
    c.bench_function(
        "accept: edit + verify + write, 2,000 lines / 40 documents",
        |b| {
            b.iter_batched(
                || std::fs::write(&file, &text).expect("reset the file"),
                |()| {
                    let current = std::fs::read_to_string(&file).expect("read");
                    let hash = ContentHash::of(current.as_bytes());
                    let edited = edit_document(&current, 20, black_box(&edits)).expect("edit");
                    write_verified(dir.path(), Path::new("all.yaml"), hash, &edited)
                        .expect("write");
                },
                BatchSize::PerIteration,
            )
        },
    );
}

/// The parts, to see where the time goes: the edit with its checks, and the write alone.
fn parts(c: &mut Criterion) {
    let text = manifest();
    let edits = [FieldEdit::Set {
        path: FieldPath::keys(&["spec", "replicas"]),
        value: json!(5),
    }];
    c.bench_function("accept: edit + verify only, one field", |b| {
        b.iter(|| edit_document(black_box(&text), 20, &edits).expect("edit"))
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("all.yaml");
    c.bench_function("accept: verified write only", |b| {
        b.iter_batched(
            || std::fs::write(&file, &text).expect("reset the file"),
            |()| {
                let hash = ContentHash::of(text.as_bytes());
                write_verified(dir.path(), Path::new("all.yaml"), hash, &text).expect("write");
            },
            BatchSize::PerIteration,
        )
    });
}

criterion_group!(benches, bench, parts);
criterion_main!(benches);
