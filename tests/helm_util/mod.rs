//! A Helm release as helm 4 leaves one in a cluster, for the tests that install one by hand on
//! the demo cluster: the record Secret helm creates for a revision, and the objects of its
//! manifest as helm applies them (server-side, field manager `helm`, with helm's label and
//! release annotations). The chart is `web` 1.2.0: a ConfigMap, a Secret and a Deployment whose
//! replicas are the revision's `replicaCount`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use base64::Engine as _;
use serde_json::{Value, json};

/// The chart's rendered templates, as helm stores them in a release (`# Source:` comments, no
/// namespace: helm installs them in the release's).
pub fn manifest(replicas: u32) -> String {
    format!(
        "---\n# Source: web/templates/settings.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-settings\n  labels:\n    app.kubernetes.io/managed-by: Helm\n    helm.sh/chart: web-1.2.0\ndata:\n  greeting: hello\n---\n# Source: web/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: web-token\ntype: Opaque\nstringData:\n  token: s3cret\n---\n# Source: web/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    app.kubernetes.io/managed-by: Helm\n    helm.sh/chart: web-1.2.0\nspec:\n  replicas: {replicas}\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n        - name: web\n          image: nginx:1.27\n"
    )
}

/// The release's JSON for one revision.
pub fn release_json(namespace: &str, revision: u64, status: &str, replicas: u32) -> Value {
    json!({
        "name": "web",
        "namespace": namespace,
        "version": revision,
        "info": {"status": status, "description": "Install complete"},
        "chart": {"metadata": {"name": "web", "version": "1.2.0", "appVersion": "1.27"}},
        "config": {"replicaCount": replicas},
        "manifest": manifest(replicas),
        "hooks": [],
        "apply_method": "ssa",
    })
}

/// The record Secret helm creates for a revision (gzip and base64 as helm encodes it), as
/// `kubectl create -f` takes it.
pub fn record_secret(namespace: &str, revision: u64, status: &str, replicas: u32) -> Value {
    let release =
        kdrift::helm::record::encode(&release_json(namespace, revision, status, replicas)).unwrap();
    raw_record(namespace, "web", revision, status, &release)
}

/// A record Secret holding `release` as helm's own base64 text.
pub fn raw_record(
    namespace: &str,
    name: &str,
    revision: u64,
    status: &str,
    release: &str,
) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "helm.sh/release.v1",
        "metadata": {
            "name": format!("sh.helm.release.v1.{name}.v{revision}"),
            "namespace": namespace,
            "labels": {"owner": "helm", "name": name, "status": status,
                "version": revision.to_string()},
        },
        "data": {"release": base64::engine::general_purpose::STANDARD.encode(release)},
    })
}

/// The objects of the manifest as helm 4 applies them, as one `kind: List` for
/// `kubectl apply --server-side --field-manager=helm -f`.
pub fn applied(namespace: &str, replicas: u32) -> Value {
    let mut documents = Vec::new();
    for doc in manifest(replicas).split("\n---\n") {
        let mut object: Value = serde_yaml::from_str(doc.trim_start_matches("---\n")).unwrap();
        let meta = object["metadata"].as_object_mut().unwrap();
        meta.insert("namespace".into(), json!(namespace));
        let labels = meta.entry("labels").or_insert(json!({}));
        labels["app.kubernetes.io/managed-by"] = json!("Helm");
        meta.insert(
            "annotations".into(),
            json!({"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": namespace}),
        );
        documents.push(object);
    }
    json!({"apiVersion": "v1", "kind": "List", "items": documents})
}

/// The helm the chart tests run: `KDRIFT_TEST_HELM`, else `helm` on PATH; `None` (the reason
/// written to stderr, past the test harness's capture) when there is none.
pub fn helm_for_tests(test: &str) -> Option<std::path::PathBuf> {
    use std::io::Write as _;
    let named = std::env::var_os("KDRIFT_TEST_HELM")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from);
    // A helm that was named must be there: a run that means to test with it must not pass by
    // skipping.
    if let Some(named) = &named {
        assert!(
            named.is_file(),
            "KDRIFT_TEST_HELM={} is not a file",
            named.display()
        );
    }
    let found = named.or_else(|| {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|dir| dir.join("helm"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        let _ = writeln!(
            std::io::stderr(),
            "\n{test}: SKIPPED: no helm (set KDRIFT_TEST_HELM to a helm 3 or 4 binary, or put helm on PATH)\n"
        );
    }
    found
}

/// `helm template RELEASE CHART -n NAMESPACE ARGS…` with the real helm; its output.
pub fn template(
    helm: &std::path::Path,
    release: &str,
    chart: &std::path::Path,
    namespace: &str,
    args: &[&str],
) -> String {
    let scratch = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(helm)
        .args(["template", release])
        .arg(chart)
        .args(["--namespace", namespace])
        .args(args)
        .env("HELM_CACHE_HOME", scratch.path().join("cache"))
        .env("HELM_CONFIG_HOME", scratch.path().join("config"))
        .env("HELM_DATA_HOME", scratch.path().join("data"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "helm template: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A rendered chart as helm keeps it in a release: the hooks left out.
pub fn without_hooks(rendered: &str) -> String {
    rendered
        .split("\n---\n")
        .filter(|doc| !doc.contains("\"helm.sh/hook\"") && !doc.contains("helm.sh/hook:"))
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// The record Secret of a release made of `manifest` (chart `chart` at `version`).
pub fn record_of(
    namespace: &str,
    name: &str,
    revision: u64,
    chart: (&str, &str),
    config: Value,
    manifest: &str,
) -> Value {
    let release = json!({
        "name": name, "namespace": namespace, "version": revision,
        "info": {"status": "deployed", "description": "Install complete"},
        "chart": {"metadata": {"name": chart.0, "version": chart.1}},
        "config": config, "manifest": manifest, "hooks": [], "apply_method": "ssa",
    });
    raw_record(
        namespace,
        name,
        revision,
        "deployed",
        &kdrift::helm::record::encode(&release).unwrap(),
    )
}

/// The objects of `manifest` as helm 4 applies them for release `name`, as one `kind: List`.
pub fn applied_manifest(namespace: &str, name: &str, manifest: &str) -> Value {
    let items: Vec<Value> = manifest
        .split("\n---\n")
        .filter_map(|doc| serde_yaml::from_str::<Value>(doc).ok())
        .filter(|v| v.is_object())
        .map(|mut object| {
            let meta = object["metadata"].as_object_mut().unwrap();
            meta.insert("namespace".into(), json!(namespace));
            let labels = meta.entry("labels").or_insert(json!({}));
            labels["app.kubernetes.io/managed-by"] = json!("Helm");
            let annotations = meta.entry("annotations").or_insert(json!({}));
            annotations["meta.helm.sh/release-name"] = json!(name);
            annotations["meta.helm.sh/release-namespace"] = json!(namespace);
            object
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}
