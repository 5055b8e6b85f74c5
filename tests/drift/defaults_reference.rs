//! The server's defaults are never drift: 43 objects of 29 kinds a v1.36 server created for an
//! out-of-band manager (which so owns every default it filled in), and four of them changed out
//! of band where the server fills in more for the new value (`testdata/kubernetes-1.36/defaults`,
//! README there).
use std::path::Path;
use std::sync::Arc;

use kdrift::drift::{Class, LiveObject, ObjectStatus, compare};
use kdrift::manifest::{Config, parse::parse_file};
use serde_json::Value;

const DEFAULTS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/testdata/kubernetes-1.36/defaults"
);

/// `(object, class, path)` of every drifted field of every captured object against its
/// manifest.
fn drift_of_every_object() -> Vec<(String, Class, String)> {
    let file: Arc<Path> = Arc::from(Path::new(DEFAULTS).join("manifests.yaml").as_path());
    let text = std::fs::read_to_string(&*file).expect("manifests.yaml");
    let parsed = parse_file(&file, &Arc::from(text), "default");
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    let list: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(DEFAULTS).join("objects.json")).expect("objects.json"),
    )
    .expect("JSON");
    let objects = list["items"].as_array().expect("a List");
    assert_eq!(objects.len(), parsed.objects.len());
    let mut out = Vec::new();
    for object in objects {
        let live = LiveObject::from_value(object.clone(), kdrift::schema::Schemas::builtin())
            .expect("a Kubernetes object");
        let manifest = parsed
            .objects
            .iter()
            .find(|m| m.key == live.key)
            .unwrap_or_else(|| panic!("no manifest for {}", live.key));
        let drift = compare(manifest, &live, &Config::default());
        assert_eq!(
            drift.status == ObjectStatus::InSync,
            drift.items.is_empty(),
            "{}",
            live.key
        );
        for item in drift.items {
            out.push((live.key.to_string(), item.class, item.path.to_string()));
        }
    }
    out
}

#[test]
fn defaults_of_every_kind_and_those_that_follow_a_live_change_are_not_drift() {
    let row = |key: &str, class, path: &str| (key.to_owned(), class, path.to_owned());
    assert_eq!(
        drift_of_every_object(),
        [
            // Each change is its one field; what the server filled in for it is not drift.
            row("deployment/sv2/d1", Class::Changed, "spec.strategy.type"),
            row("service/sv2/dual", Class::AddedLive, "spec.sessionAffinity"),
            row("service/sv2/eip", Class::AddedLive, "spec.type"),
            row(
                "horizontalpodautoscaler/sv2/h3",
                Class::AddedLive,
                "spec.behavior.scaleDown.stabilizationWindowSeconds"
            ),
        ]
    );
}
