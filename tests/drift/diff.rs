//! `kdrift diff`: one object's drift as a unified diff in the manifest's YAML shape, each
//! drifted line annotated with its manager and age.
use kdrift::drift::diff::{LineKind, diff_lines, render};
use kdrift::drift::{LiveObject, compare_values};
use kdrift::manifest::{Config, ObjectKey};
use serde_json::{Value, json};

fn now() -> jiff::Timestamp {
    "2026-11-22T03:00:00Z".parse().expect("time")
}

fn manifest() -> Value {
    serde_yaml::from_str(
        "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: web:1
        env: [{name: MODE, value: prod}, {name: LOG, value: info}]
",
    )
    .expect("manifest")
}

fn live() -> LiveObject {
    LiveObject::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "managedFields": [
            {"manager": "kubectl-edit", "operation": "Update", "time": "2026-11-22T02:00:00Z", "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {"f:image": {}}}}}}}},
            {"manager": "kubectl-rollout", "operation": "Update", "time": "2026-11-22T02:58:00Z", "fieldsV1": {"f:spec": {"f:template": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/restartedAt": {}}}}}}}
        ]},
        "spec": {"replicas": 2, "template": {
            "metadata": {"labels": {"app": "web"}, "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-22T02:58:00Z"}},
            "spec": {"containers": [{"name": "web", "image": "web:2", "env": [{"name": "MODE", "value": "prod"}]}]}}}
    }), kdrift::schema::Schemas::builtin())
    .expect("live")
}

#[test]
fn changed_removed_and_restarted_fields_are_shown_with_their_managers() {
    let drift = compare_values(
        &ObjectKey::new("apps", "Deployment", "shop", "web"),
        &manifest(),
        &live(),
        &Config::default(),
    );
    let lines = diff_lines(&manifest(), &drift, "web.yaml:1", now(), 0);
    let text = render(&lines, false);
    let expected = "\
--- web.yaml:1 (git)
+++ deployment/shop/web (live)
@@ -12,0 +12,2 @@
+      annotations:
+        kubectl.kubernetes.io/restartedAt: 2026-11-22T02:58:00Z  # restarted by kubectl-rollout (Update) 2m ago
@@ -15,1 +17,1 @@
-        image: web:1
+        image: web:2  # kubectl-edit (Update) 1h ago
@@ -19,2 +21,0 @@
-        - name: LOG  # manager unknown
-          value: info
";
    assert_eq!(text, expected);
    // Keys move between drifted fields: each item's lines are marked with it. Items are listed
    // in live order, so n/N go from the top of the diff down.
    let marked: Vec<(LineKind, usize)> = lines
        .iter()
        .filter_map(|l| l.item.map(|i| (l.kind, i)))
        .collect();
    assert_eq!(
        marked,
        [
            (LineKind::Added, 0),
            (LineKind::Added, 1),
            (LineKind::Removed, 2)
        ]
    );
}

#[test]
fn colour_goes_to_a_terminal_only() {
    let drift = compare_values(
        &ObjectKey::new("apps", "Deployment", "shop", "web"),
        &manifest(),
        &live(),
        &Config::default(),
    );
    let lines = diff_lines(&manifest(), &drift, "web.yaml", now(), 3);
    assert!(!render(&lines, false).contains('\x1b'));
    let coloured = render(&lines, true);
    assert!(
        coloured.contains("\x1b[32m+        image: web:2\x1b[0m"),
        "{coloured}"
    );
    assert!(
        coloured.contains("\x1b[31m-        image: web:1\x1b[0m"),
        "{coloured}"
    );
}

#[test]
fn a_string_yaml_1_1_reads_as_another_type_is_shown_quoted() {
    let manifest: Value = serde_yaml::from_str(
        "apiVersion: v1
kind: ConfigMap
metadata: {name: conf, namespace: shop}
data: {flag: \"on\", mode: \"yes\", level: info}
",
    )
    .expect("manifest");
    let live = LiveObject::from_value(
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "conf", "namespace": "shop"},
            "data": {"flag": "off", "mode": "yes", "level": "info"}}),
        kdrift::schema::Schemas::builtin(),
    )
    .expect("live");
    let key = ObjectKey::new("", "ConfigMap", "shop", "conf");
    let drift = compare_values(&key, &manifest, &live, &Config::default());
    let text = render(
        &diff_lines(&manifest, &drift, "conf.yaml:1", now(), 3),
        false,
    );
    assert!(text.contains("-  flag: \"on\""), "{text}");
    assert!(text.contains("+  flag: \"off\""), "{text}");
    assert!(text.contains("   mode: \"yes\""), "{text}");
    assert!(text.contains("   level: info"), "{text}");
}
