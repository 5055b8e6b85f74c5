//! The properties the fuzz targets check, one function per target. The targets
//! (`fuzz/fuzz_targets/*.rs`) and the ordinary test suite (`tests/drift/fuzz_regressions.rs`, which
//! replays `fuzz/regressions/<target>/*` and `fuzz/corpus/<target>/*`) include this same file, so
//! a crash the fuzzer found stays fixed without nightly. A broken property panics: that is what
//! libFuzzer reports.
#![allow(dead_code)]

mod editor;
mod kustomization;

use std::path::Path;
use std::sync::Arc;

use kdrift::manifest::ObjectKey;
use kdrift::manifest::lines::{Step, line_of};
use kdrift::manifest::tree::Names;
use serde_json::Value;

#[allow(unused_imports)]
pub use editor::{check_edit, editor};
#[allow(unused_imports)]
pub use kustomization::{KustomizeFolder, kustomization};

/// The 1-based number of the last line of `text` (a final line break opens an empty last line,
/// which a parser may name at the end of the input).
fn last_line(text: &str) -> usize {
    text.split('\n').count()
}

fn assert_line_in(text: &str, line: usize, what: &dyn std::fmt::Display) {
    assert!(
        (1..=last_line(text)).contains(&line),
        "{what}: line {line} is not a line of the {}-line input",
        last_line(text)
    );
}

/// The manifest loader: any bytes give objects and problems, never a panic. Every line named
/// is a line of the file, every object's span is a piece of the file on character boundaries
/// with the digest of that piece, and the compact body holds the document's value.
pub fn manifest_loader(data: &[u8]) {
    let text = match kdrift::manifest::walk::manifest_text(data.to_vec()) {
        Ok(text) => text,
        Err(reason) => {
            assert!(reason.starts_with("binary file"), "{reason}");
            return;
        }
    };
    let file: Arc<Path> = Arc::from(Path::new("manifests/fuzz.yaml"));
    let text: Arc<str> = Arc::from(text);
    let parsed = kdrift::manifest::parse::parse_file(&file, &text, "default");
    for problem in &parsed.problems {
        let message = problem.to_string();
        assert!(!message.trim().is_empty(), "a problem without a message");
        if let (_, Some(line)) = problem.place() {
            assert_line_in(&text, line, &message);
        }
    }
    for object in &parsed.objects {
        let what = format!("object {}", object.key.type_name());
        assert_line_in(&text, object.line, &what);
        let document = text.get(object.span()).unwrap_or_else(|| {
            panic!(
                "{what}: span {:?} is not a piece of the file",
                object.span()
            )
        });
        assert_eq!(kdrift::manifest::digest(document), object.digest, "{what}");
        assert!(
            text[..object.span().start].matches('\n').count() <= object.first_line() + 1,
            "{what}: first line {} is before its span",
            object.first_line()
        );
        let value = object.body.to_value();
        let again = Names::default().pack(&value).to_value();
        // Same members in the same order, numbers as written.
        assert_eq!(
            value.to_string(),
            again.to_string(),
            "{what}: the packed body changes the value"
        );
        // Every field's line is a line of the document.
        let lines_in_document = last_line(document);
        if let Value::Object(map) = &value {
            for (key, child) in map {
                let mut steps = vec![Step::Field(key)];
                if let Some(Value::Object(inner)) = Some(child) {
                    for inner_key in inner.keys().take(8) {
                        steps.truncate(1);
                        steps.push(Step::Field(inner_key));
                        let line = line_of(document, &steps);
                        assert!(line < lines_in_document, "{what}: {steps:?} at line {line}");
                    }
                }
                let line = line_of(document, &steps[..1]);
                assert!(line < lines_in_document, "{what}: {key} at line {line}");
            }
        }
    }
}

/// `.kdrift.yaml` and the user config (`config.toml`), from the same text: any text gives a
/// config or problems, each problem on a line of the text; the rules it gives can be used.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (config, problems) = kdrift::manifest::config::parse(Path::new(".kdrift.yaml"), text);
    for problem in &problems {
        let message = problem.to_string();
        let (_, line) = problem.place();
        assert_line_in(text, line.unwrap_or(1), &message);
    }
    let keys = [
        ObjectKey::new("apps", "Deployment", "shop", "web"),
        ObjectKey::new("", "ConfigMap", "shop-1", "web-*?"),
        ObjectKey::new("", "Namespace", "", ""),
    ];
    for rule in &config.ignore {
        assert_line_in(text, rule.line, &format!("ignore rule {rule:?}"));
        for key in &keys {
            rule.selects(key);
        }
    }
    match kdrift::user_config::parse(text, Path::new("config.toml")) {
        Ok(_) => {}
        Err(error @ kdrift::user_config::ConfigError::Parse { line, .. }) => {
            assert_line_in(text, line, &error);
        }
        Err(error) => panic!("parsing a text reads no file, yet: {error}"),
    }
}

/// A watch event of the live view's watchers (one JSON line of a watch stream): decoded as each
/// watched kind, turned into its row, and for the table's kinds read into a drift extract and
/// compared with a manifest. Any bytes give rows or decode errors, never a panic.
pub fn watch_event(data: &[u8]) {
    use k8s_openapi::api::apps::v1::{ControllerRevision, ReplicaSet};
    use k8s_openapi::api::core::v1::{Event, Pod};
    use kdrift::cluster::live::{
        LiveAny, LiveDaemonSet, LiveDeployment, LiveStatefulSet, TableResource,
    };
    use kdrift::cluster::rows::{EventRow, PodRow, ReplicaSetRow};

    let manifest = deployment_manifest();
    let compare = |json: &kdrift::cluster::live::LiveJson| {
        if let Ok(live) = json.extract() {
            kdrift::drift::compare::compare(manifest, &live, &Default::default());
        }
    };
    each_object::<LiveDeployment>(data, |d| compare(&d.into_row().json));
    each_object::<LiveStatefulSet>(data, |s| compare(&s.into_row().json));
    each_object::<LiveDaemonSet>(data, |d| compare(&d.into_row().json));
    each_object::<ReplicaSet>(data, |rs| drop(ReplicaSetRow::from_object(&rs)));
    each_object::<ControllerRevision>(data, |cr| {
        drop(ReplicaSetRow::from_controller_revision(&cr))
    });
    each_object::<Pod>(data, |pod| drop(PodRow::from_object(&pod)));
    each_object::<Event>(data, |event| drop(EventRow::from_object(&event)));
    each_object::<LiveAny>(data, |object| {
        let schemas = kdrift::schema::Schemas::builtin();
        for (api_version, kind) in [("v1", "ConfigMap"), ("example.com/v1", "Widget")] {
            let _ = object.json.extract_as(api_version, kind, schemas);
        }
    });
}

/// The object of a watch event as kube's watcher decodes it (`{"type": …, "object": …}`).
fn each_object<K: serde::de::DeserializeOwned>(data: &[u8], mut each: impl FnMut(K)) {
    use kube::api::WatchEvent;
    match serde_json::from_slice::<WatchEvent<K>>(data) {
        Ok(
            WatchEvent::Added(object) | WatchEvent::Modified(object) | WatchEvent::Deleted(object),
        ) => each(object),
        Ok(WatchEvent::Bookmark(_) | WatchEvent::Error(_)) | Err(_) => {}
    }
}

/// A Deployment manifest that the live objects are compared with.
fn deployment_manifest() -> &'static kdrift::manifest::ManifestObject {
    static MANIFEST: std::sync::OnceLock<kdrift::manifest::ManifestObject> =
        std::sync::OnceLock::new();
    MANIFEST.get_or_init(read_deployment_manifest)
}

fn read_deployment_manifest() -> kdrift::manifest::ManifestObject {
    const TEXT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {app: web}
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.27
        env:
        - {name: A, value: \"1\"}
        resources:
          limits: {cpu: 500m, memory: 1Gi}
        ports:
        - containerPort: 80
";
    let file: Arc<Path> = Arc::from(Path::new("manifests/web.yaml"));
    let parsed = kdrift::manifest::parse::parse_file(&file, &Arc::from(TEXT), "default");
    parsed
        .objects
        .into_iter()
        .next()
        .expect("the manifest of the watch_event check parses")
}
