//! Tests of [`super`] (live_changes.rs).
#![allow(clippy::unwrap_used)]

use super::*;
use serde_json::json;

fn deployment(web: &str, replicas: u64, entries: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "7",
            "managedFields": entries},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [
            {"name": "sidecar", "image": "proxy:1"},
            {"name": "web", "image": web}]}}},
        "status": {"readyReplicas": 1}
    })
}

/// The version of `object`'s text (leaked: a test's versions borrow it until the end).
fn version(object: &Value) -> Result<Version<'static>, String> {
    Version::of_text(Box::leak(object.to_string().into_boxed_str()))
}

#[test]
fn drift_inputs_move_with_all_a_compare_reads_and_not_with_status() {
    let entry = |manager: &str, sub: Option<&str>, time: &str, fields: Value| {
        json!({"manager": manager, "operation": "Update", "subresource": sub,
            "time": time, "fieldsV1": fields})
    };
    let status = |time| {
        entry(
            "kube-controller-manager",
            Some("status"),
            time,
            json!({"f:status": {"f:readyReplicas": {}}}),
        )
    };
    let set = entry(
        "kubectl-set",
        None,
        "2026-11-22T02:00:00Z",
        json!({"f:spec": {"f:replicas": {}}}),
    );
    let before = deployment("web:1", 3, json!([set, status("2026-11-22T02:01:00Z")]));
    let inputs = |object: &Value| version(object).unwrap().drift_inputs();
    let base = inputs(&before);

    // Status, a status entry's time, the resourceVersion: nothing a compare reads.
    let mut later = deployment("web:1", 3, json!([set, status("2026-11-22T02:09:00Z")]));
    later["status"] = json!({"readyReplicas": 3});
    later["metadata"]["resourceVersion"] = json!("8");
    assert_eq!(inputs(&later), base);

    // A field of the body; an entry that owns more than status moving; the last
    // client-side apply's annotation (left out of the body, read by the compare).
    let field = deployment("web:2", 3, json!([set, status("2026-11-22T02:01:00Z")]));
    assert_ne!(inputs(&field), base);
    let moved = entry(
        "kubectl-set",
        None,
        "2026-11-22T02:05:00Z",
        json!({"f:spec": {"f:replicas": {}}}),
    );
    assert_ne!(
        inputs(&deployment(
            "web:1",
            3,
            json!([moved, status("2026-11-22T02:01:00Z")])
        )),
        base
    );
    let (mut noted, mut applied) = (before.clone(), before.clone());
    noted["metadata"]["annotations"] = json!({"team": "pay"});
    applied["metadata"]["annotations"] = json!({"team": "pay",
        "kubectl.kubernetes.io/last-applied-configuration": "{\"spec\":{}}"});
    let (noted_version, applied_version) = (version(&noted).unwrap(), version(&applied).unwrap());
    assert_eq!(noted_version.body, applied_version.body);
    assert_ne!(noted_version.drift_inputs(), applied_version.drift_inputs());
}

#[test]
fn a_version_is_the_events_text_less_status_managed_fields_and_server_metadata() {
    let text = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web",
        "resourceVersion":"7","uid":"u-1","generation":3,"labels":{"app":"web"},
        "annotations":{"deployment.kubernetes.io/revision":"4","t\u0065am":"shop \"a\"",
        "kubectl.kubernetes.io/last-applied-configuration":"{}"},
        "managedFields":[{"manager":"kubectl","operation":"Update","time":"2026-01-01T10:00:00Z",
        "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}}]},
        "spec":{"replicas":2,"we\u0069rd":1},"status":{"readyReplicas":2}}"#;
    let version = Version::of_text(text).unwrap();
    assert_eq!(
        version.body,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"},"annotations":{"team":"shop \"a\""}},"spec":{"replicas":2,"we\u0069rd":1}}"#
    );
    let body: Value = serde_json::from_str(&version.body).unwrap();
    assert_eq!(body["spec"]["weird"], json!(1));
    let entries = version.entries().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].manager, "kubectl");
    assert_eq!(Prior::of(&version, &mut Names::default()).stamps.len(), 1);
    let err =
        Version::of_text(r#"{"metadata":{"managedFields":[{"operation":"Patch"}]}}"#).unwrap_err();
    assert!(
        err.contains("entry 0: operation \"Patch\" is neither"),
        "{err}"
    );
    assert!(
        Version::of_text("{\"spec\":")
            .unwrap_err()
            .contains("cannot be read")
    );
}

fn schema() -> Schema {
    crate::schema::Schemas::builtin().root("apps/v1", "Deployment")
}

fn apply_entry() -> Value {
    json!({"manager": "kubectl-client-side-apply", "operation": "Update",
        "apiVersion": "apps/v1", "time": "2026-01-01T10:00:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"sidecar\"}": {".": {}, "f:image": {}, "f:name": {}},
            "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}})
}

#[test]
fn a_keyed_list_item_is_named_by_its_key_with_old_and_new_and_the_manager_that_moved() {
    let before = version(&deployment("shop/web:1.0", 2, json!([apply_entry()]))).unwrap();
    let set = json!({"manager": "kubectl-set", "operation": "Update", "apiVersion": "apps/v1",
        "time": "2026-01-01T11:00:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"web\"}": {"f:image": {}}}}}}}});
    let after = version(&deployment("shop/web:1.1", 2, json!([apply_entry(), set]))).unwrap();
    let line = line_over(
        "deployment/shop/web",
        &before,
        &after,
        None,
        "2026-01-01T11:00:01Z",
    )
    .unwrap();
    assert_eq!(
        line.change.what,
        ".spec.template.spec.containers[name=\"web\"].image: \"shop/web:1.0\" → \"shop/web:1.1\""
    );
    assert_eq!(line.change.who, "kubectl-set Update");
    assert_eq!(line.manager, "kubectl-set");
    assert_eq!(line.change.time.as_deref(), Some("2026-01-01T11:00:00Z"));
    assert_eq!(line.change.git, Agrees::NotInGit);
    assert_eq!(
        line.paths.first().unwrap().to_string(),
        ".spec.template.spec.containers[name=\"web\"].image"
    );
}

#[test]
fn a_second_scale_moves_no_entry_and_is_the_owners_at_the_time_seen() {
    let scale = json!({"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1",
        "subresource": "scale", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:replicas": {}}}});
    let before = version(&deployment("a:1", 3, json!([apply_entry(), scale.clone()]))).unwrap();
    let after = version(&deployment("a:1", 5, json!([apply_entry(), scale]))).unwrap();
    let line = line_over(
        "deployment/shop/web",
        &before,
        &after,
        None,
        "2026-01-01T12:00:00Z",
    )
    .unwrap();
    assert_eq!(line.change.what, ".spec.replicas: 3 → 5");
    // Both own it; the entry listed last (the newest write) is the writer.
    assert_eq!(line.change.who, "kubectl (scale) Update");
    assert_eq!(line.change.time.as_deref(), Some("2026-01-01T12:00:00Z"));
}

/// A Deployment with `entries` and a selector, before and after its `tier` label changed.
fn selector_changed(entries: Value) -> (Value, Version<'static>, Version<'static>) {
    let mut object = deployment("a:1", 3, entries);
    object["spec"]["selector"] = json!({"matchLabels": {"app": "web", "tier": "front"}});
    let before = version(&object).unwrap();
    object["spec"]["selector"]["matchLabels"]["tier"] = json!("back");
    let after = version(&object).unwrap();
    (object, before, after)
}

/// The line of `after` over `before` as the timeline makes it: `before` packed.
fn line_over(
    object: &str,
    before: &Version<'_>,
    after: &Version<'_>,
    desired: Option<&Desired<'_>>,
    seen: &str,
) -> Option<LiveChange> {
    let mut names = Names::default();
    let prior = Prior::of(before, &mut names);
    live_change(object, schema(), &prior, after, desired, seen)
}

/// The line of `after` over `before`, seen at 12:00.
fn line_of(before: Version<'_>, after: &Version<'_>) -> LiveChange {
    line_over("d", &before, after, None, "2026-01-01T12:00:00Z").unwrap()
}

#[test]
fn an_atomic_field_shows_its_whole_values_though_only_part_changed() {
    let (_, before, after) = selector_changed(json!([apply_entry()]));
    let line = line_of(before, &after);
    assert_eq!(
        line.change.what,
        r#".spec.selector: {"matchLabels":{"app":"web","tier":"front"}} → {"matchLabels":{"app":"web","tier":"back"}}"#
    );
}

#[test]
fn without_a_moved_entry_the_writer_is_the_last_owner_of_the_changed_field() {
    // No entry moves (same times and fields): the writer is the last owner of the changed
    // field, `spec.selector` (atomic: the label inside it is not a field of its own); the
    // later entry's text does not name it and is passed over unread.
    let mut entry = apply_entry();
    entry["fieldsV1"]["f:spec"]["f:selector"] = json!({});
    let label = json!({"manager": "kubectl-label", "operation": "Update",
        "apiVersion": "apps/v1", "time": "2026-01-01T10:30:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {"f:team": {}}}}});
    let (mut object, before, after) = selector_changed(json!([entry, label]));
    let line = line_of(before, &after);
    assert_eq!(line.change.who, "kubectl-client-side-apply Update");
    assert_eq!(line.change.time.as_deref(), Some("2026-01-01T12:00:00Z"));
    // An entry that moved but names none of the fields is the writer only when no moved
    // entry names them.
    let label_moved = json!({"manager": "kubectl-label", "operation": "Update",
        "apiVersion": "apps/v1", "time": "2026-01-01T11:30:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {"f:team": {}}}}});
    object["metadata"]["managedFields"][1] = label_moved;
    object["spec"]["selector"]["matchLabels"]["tier"] = json!("middle");
    let moved = version(&object).unwrap();
    let line = line_of(after, &moved);
    assert_eq!(line.change.who, "kubectl-label Update");
    assert_eq!(line.change.time.as_deref(), Some("2026-01-01T11:30:00Z"));
}

#[test]
fn a_status_only_event_makes_no_line() {
    let mut object = deployment("a:1", 3, json!([apply_entry()]));
    let before = version(&object).unwrap();
    object["status"]["readyReplicas"] = json!(3);
    object["metadata"]["resourceVersion"] = json!("8");
    let after = version(&object).unwrap();
    assert!(line_over("d", &before, &after, None, "t").is_none());
}
