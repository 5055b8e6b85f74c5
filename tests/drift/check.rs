//! `check` without a cluster: manifests on disk against live objects, as `kdrift check` will
//! report them — missing, unmanaged, drift, problems, and the exit code.
use std::fs;

use kdrift::drift::LiveObject;
use kdrift::drift::check::check;
use kdrift::manifest::{ManifestIndex, ObjectKey};
use serde_json::{Value, json};

fn deployment_yaml(name: &str, replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: {replicas}\n"
    )
}

fn live(name: &str, replicas: u32, managers: Value) -> LiveObject {
    LiveObject::from_value(
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default", "managedFields": managers},
            "spec": {"replicas": replicas, "revisionHistoryLimit": 10},
            "status": {"replicas": replicas}
        }),
        kdrift::schema::Schemas::builtin(),
    )
    .expect("live object")
}

fn scaled_by(manager: &str) -> Value {
    json!([{"manager": manager, "operation": "Update", "subresource": "scale", "time": "2026-11-22T02:00:00Z", "fieldsV1": {"f:spec": {"f:replicas": {}}}}])
}

fn all(_: &ObjectKey) -> bool {
    true
}

#[test]
fn in_sync_drift_missing_and_unmanaged_give_the_exit_codes_of_kubectl_diff() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("web.yaml"), deployment_yaml("web", 3)).expect("write");
    fs::write(dir.path().join("api.yaml"), deployment_yaml("api", 2)).expect("write");
    let index = ManifestIndex::load(dir.path(), "default");

    let report = check(
        &index,
        vec![live("web", 3, json!([])), live("api", 2, json!([]))],
        &all,
        false,
        vec![],
    );
    assert_eq!(
        report.exit_code(),
        0,
        "{}",
        report.to_text(jiff::Timestamp::now())
    );

    let report = check(
        &index,
        vec![
            live("web", 5, scaled_by("kubectl-scale")),
            live("api", 2, json!([])),
            live("extra", 1, json!([])),
        ],
        &all,
        true,
        vec![],
    );
    let json = report.to_json();
    assert_eq!(report.exit_code(), 1);
    let statuses: Vec<(&str, &str)> = json["objects"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            (
                o["key"].as_str().unwrap_or_default(),
                o["status"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("deployment/default/api", "in-sync"),
            ("deployment/default/web", "drifted"),
            ("deployment/default/extra", "unmanaged")
        ]
    );
    let item = &json["objects"][1]["items"][0];
    assert_eq!(
        (
            item["path"].as_str(),
            item["manager"].as_str(),
            item["line"].as_u64()
        ),
        (Some("spec.replicas"), Some("kubectl-scale"), Some(6))
    );

    let report = check(&index, vec![live("api", 2, json!([]))], &all, false, vec![]);
    assert_eq!(report.exit_code(), 1, "web is missing");
    assert!(
        report
            .to_text(jiff::Timestamp::now())
            .contains("deployment/default/web  missing from the cluster")
    );
}

#[test]
fn the_autoscaler_owning_replicas_is_not_drift() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("web.yaml"), deployment_yaml("web", 3)).expect("write");
    let index = ManifestIndex::load(dir.path(), "default");
    let report = check(
        &index,
        vec![live("web", 9, scaled_by("kube-controller-manager"))],
        &all,
        false,
        vec![],
    );
    assert_eq!(report.exit_code(), 0);
    let text = report.to_text("2026-11-22T02:05:00Z".parse().expect("time"));
    assert!(
        text.contains(
            "spec.replicas  3 → 9  autoscaled by kube-controller-manager (Update) 5m ago"
        ),
        "{text}"
    );
}

#[test]
fn errors_give_exit_code_2_and_every_drift_is_still_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("web.yaml"), deployment_yaml("web", 3)).expect("write");
    fs::write(
        dir.path().join("broken.yaml"),
        "apiVersion: v1\n\tkind: x\n",
    )
    .expect("write");
    let index = ManifestIndex::load(dir.path(), "default");
    let report = check(
        &index,
        vec![live("web", 4, json!([]))],
        &all,
        false,
        vec!["namespace \"secret\": forbidden".to_owned()],
    );
    assert_eq!(report.exit_code(), 2);
    let json = report.to_json();
    assert_eq!(json["objects"][0]["items"][0]["path"], "spec.replicas");
    assert!(
        json["problems"][0]["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("broken.yaml"))
    );
    assert_eq!(json["problems"][0]["line"], 2);
    assert_eq!(json["errors"][0], "namespace \"secret\": forbidden");
    let text = report.to_text(jiff::Timestamp::now());
    assert!(
        text.contains("problem: ") && text.contains("broken.yaml:2: malformed YAML"),
        "{text}"
    );
}

#[test]
fn manifests_the_listing_did_not_cover_are_not_missing() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("web.yaml"), deployment_yaml("web", 3)).expect("write");
    fs::write(
        dir.path().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    )
    .expect("write");
    let index = ManifestIndex::load(dir.path(), "default");
    let only_deployments = |key: &ObjectKey| key.kind == "Deployment";
    let report = check(
        &index,
        vec![live("web", 3, json!([]))],
        &only_deployments,
        false,
        vec![],
    );
    assert_eq!((report.objects.len(), report.exit_code()), (1, 0));
}

#[test]
fn many_objects_keep_each_drift_with_its_own_object() {
    let dir = tempfile::tempdir().expect("tempdir");
    let count: u32 = 600;
    for i in 0..count {
        fs::write(
            dir.path().join(format!("app-{i:03}.yaml")),
            deployment_yaml(&format!("app-{i:03}"), 2),
        )
        .expect("write");
    }
    let index = ManifestIndex::load(dir.path(), "default");
    // Every seventh object is scaled to its own number; one in eleven is missing.
    let lives = (0..count)
        .filter(|i| i % 11 != 5)
        .map(|i| {
            live(
                &format!("app-{i:03}"),
                if i.is_multiple_of(7) { 100 + i } else { 2 },
                json!([]),
            )
        })
        .collect();
    let report = check(&index, lives, &all, false, vec![]);
    assert_eq!(report.objects.len(), count as usize);
    for object in &report.objects {
        let i: u32 = object
            .drift
            .key
            .name
            .trim_start_matches("app-")
            .parse()
            .expect("number");
        let expected_live = (i % 11 != 5 && i.is_multiple_of(7)).then(|| json!(100 + i));
        let found_live = object
            .drift
            .items
            .first()
            .and_then(|item| item.live.clone());
        assert_eq!(found_live, expected_live, "{}", object.drift.key);
        assert_eq!(
            object.drift.status == kdrift::drift::ObjectStatus::Missing,
            i % 11 == 5,
            "{}",
            object.drift.key
        );
    }
}
