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
