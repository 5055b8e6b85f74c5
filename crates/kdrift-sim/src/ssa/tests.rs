//! Ownership as a real server records it, checked against the reference captures.
#![allow(clippy::unwrap_used, clippy::panic)]
use serde_json::{Value, json};

use super::*;
use crate::managed_fields::PathElement;
use crate::patch::strategic_merge_patch;
use crate::schema::defaults::apply_defaults;

const T0: &str = "2026-11-22T02:59:06Z";
const T1: &str = "2026-11-22T02:59:15Z";
const T2: &str = "2026-11-22T03:10:00Z";

fn reference(file: &str) -> Value {
    let path = format!(
        "{}/../../testdata/kubernetes-1.20/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn web_yaml() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/kubernetes-1.20/web.yaml"
    );
    serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn entries(object: &Value) -> Vec<ManagedFieldsEntry> {
    ManagedFieldsEntry::read(object).unwrap()
}

fn entry<'a>(entries: &'a [ManagedFieldsEntry], manager: &str) -> &'a ManagedFieldsEntry {
    entries.iter().find(|e| e.manager == manager).unwrap()
}

fn managers(object: &Value) -> Vec<String> {
    entries(object).iter().map(|e| e.manager.clone()).collect()
}

fn path(text: &str) -> FieldPath {
    FieldPath::fields(&text.split('.').collect::<Vec<_>>())
}

/// `kubectl apply` (client-side) of web.yaml: a create by kubectl-client-side-apply.
fn created_by_client_side_apply() -> Value {
    let mut object = web_yaml();
    let last_applied = reference("deploy-after-client-apply.json")["metadata"]["annotations"]
        ["kubectl.kubernetes.io/last-applied-configuration"]
        .clone();
    object["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/last-applied-configuration": last_applied});
    object["metadata"]["uid"] = json!("4a7018bd-483e-4bf8-9a5e-8e205e2b4b94");
    object["metadata"]["creationTimestamp"] = json!(T0);
    object["metadata"]["generation"] = json!(1);
    apply_defaults(
        "apps",
        "Deployment",
        crate::schema::builtin_kind("Deployment"),
        &mut object,
    );
    record_update(
        ResourceType::DEPLOYMENT,
        None,
        &mut object,
        "kubectl-client-side-apply",
        None,
        T0,
    );
    object
}

fn patched(old: &Value, manager: &str, patch: Value, time: &str) -> Value {
    let mut new = strategic_merge_patch(ResourceType::DEPLOYMENT, old, &patch).unwrap();
    apply_defaults(
        "apps",
        "Deployment",
        crate::schema::builtin_kind("Deployment"),
        &mut new,
    );
    record_update(
        ResourceType::DEPLOYMENT,
        Some(old),
        &mut new,
        manager,
        None,
        time,
    );
    new
}

fn container_patch(fields: Value) -> Value {
    let mut web = json!({"name": "web"});
    web.as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    json!({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "web"}], "containers": [web]}}}})
}

#[test]
fn create_owns_every_field_after_defaulting_as_the_reference() {
    let object = created_by_client_side_apply();
    let reference = reference("deploy-after-client-apply.json");
    assert_eq!(
        entries(&object)[0].to_value(),
        reference["metadata"]["managedFields"][0],
        "manager, operation, apiVersion, time and fieldsV1 as the server wrote them"
    );
}

#[test]
fn set_env_and_set_resources_give_the_reference_kubectl_set_entry() {
    let created = created_by_client_side_apply();
    let with_env = patched(
        &created,
        "kubectl-set",
        container_patch(json!({
            "$setElementOrder/env": [{"name": "MODE"}, {"name": "EXTRA"}],
            "env": [{"name": "EXTRA", "value": "1"}]
        })),
        T1,
    );
    let with_limits = patched(
        &with_env,
        "kubectl-set",
        container_patch(json!({"resources": {"limits": {"memory": "256Mi"}}})),
        T1,
    );
    let reference = reference("deploy-after-set-env-and-resources.json");
    let got = entries(&with_limits);
    let want = ManagedFieldsEntry::parse_list(&reference["metadata"]["managedFields"]).unwrap();
    assert_eq!(entry(&got, "kubectl-set"), entry(&want, "kubectl-set"));
    assert_eq!(
        entry(&got, "kubectl-client-side-apply"),
        entry(&want, "kubectl-client-side-apply")
    );
}

#[test]
fn an_update_takes_the_fields_it_changed_from_their_owner() {
    let created = created_by_client_side_apply();
    let image = container_patch(json!({"image": "registry.example/web:1.1"}));
    let object = patched(&created, "kubectl-set", image, T2);
    let all = entries(&object);
    let web = FieldPath::fields(&["spec", "template", "spec", "containers"])
        .child(PathElement::parse(r#"k:{"name":"web"}"#).unwrap());
    let image = web.child(PathElement::field("image"));
    assert!(entry(&all, "kubectl-set").fields.contains(&image));
    assert!(
        !entry(&all, "kubectl-client-side-apply")
            .fields
            .contains(&image)
    );
    assert_eq!(entry(&all, "kubectl-set").time.as_deref(), Some(T2));
    assert_eq!(
        entry(&all, "kubectl-client-side-apply").time.as_deref(),
        Some(T0)
    );
    assert_eq!(
        managers(&object),
        ["kubectl-client-side-apply", "kubectl-set"]
    );
}

#[test]
fn removed_fields_leave_every_set_and_empty_entries_go() {
    let created = created_by_client_side_apply();
    let with_env = patched(
        &created,
        "kubectl-set",
        container_patch(json!({"env": [{"name": "EXTRA", "value": "1"}]})),
        T1,
    );
    // kubectl edit deletes EXTRA: kubectl-set owned nothing else, so its entry disappears.
    let removed = patched(
        &with_env,
        "kubectl-edit",
        container_patch(json!({"env": [{"$patch": "delete", "name": "EXTRA"}]})),
        T2,
    );
    assert_eq!(managers(&removed), ["kubectl-client-side-apply"]);
    assert_eq!(entries(&removed)[0], entries(&created)[0]);
}

#[test]
fn scale_and_status_subresources_are_recorded_as_such() {
    let created = created_by_client_side_apply();
    let mut scaled = created.clone();
    scaled["spec"]["replicas"] = json!(4);
    record_update(
        ResourceType::DEPLOYMENT,
        Some(&created),
        &mut scaled,
        "kubectl-scale",
        Some("scale"),
        T1,
    );
    let all = entries(&scaled);
    let scale = entry(&all, "kubectl-scale");
    assert_eq!(scale.subresource.as_deref(), Some("scale"));
    assert_eq!(scale.fields.paths(), [path("spec.replicas")]);
    assert!(
        !entry(&all, "kubectl-client-side-apply")
            .fields
            .contains(&path("spec.replicas"))
    );
    assert_eq!(scale.to_value()["subresource"], json!("scale"));

    let mut with_status = scaled.clone();
    with_status["status"] = json!({"replicas": 4, "observedGeneration": 2});
    // A status write cannot change spec: a stray spec change is not owned.
    with_status["spec"]["paused"] = json!(true);
    record_update(
        ResourceType::DEPLOYMENT,
        Some(&scaled),
        &mut with_status,
        "kube-controller-manager",
        Some("status"),
        T2,
    );
    let all = entries(&with_status);
    let status = entry(&all, "kube-controller-manager");
    assert_eq!(status.subresource.as_deref(), Some("status"));
    assert_eq!(
        status.fields.paths(),
        [path("status.observedGeneration"), path("status.replicas")]
    );
}

#[test]
fn main_resource_writes_do_not_own_status() {
    let mut object = web_yaml();
    object["status"] = json!({"replicas": 9});
    record_update(
        ResourceType::DEPLOYMENT,
        None,
        &mut object,
        "creator",
        None,
        T0,
    );
    let all = entries(&object);
    assert!(!all[0].fields.touches(&path("status")));
    assert!(!all[0].fields.touches(&path("metadata.name")));
    assert!(all[0].fields.contains(&path("metadata.labels.app")));
}

#[test]
fn managed_fields_sent_by_the_client_are_taken_as_given_and_an_empty_list_resets() {
    let created = created_by_client_side_apply();
    let mut migrated = created.clone();
    migrated["metadata"]["managedFields"][0]["manager"] = json!("kubectl");
    migrated["metadata"]["managedFields"][0]["operation"] = json!("Apply");
    record_update(
        ResourceType::DEPLOYMENT,
        Some(&created),
        &mut migrated,
        "kubectl-patch",
        None,
        T1,
    );
    assert_eq!(managers(&migrated), ["kubectl"]);
    assert_eq!(entries(&migrated)[0].operation, Operation::Apply);

    let mut reset = created.clone();
    reset["metadata"]["managedFields"] = json!([]);
    record_update(
        ResourceType::DEPLOYMENT,
        Some(&created),
        &mut reset,
        "kubectl-patch",
        None,
        T1,
    );
    assert!(reset["metadata"].get("managedFields").is_none());

    let mut kept = created.clone();
    kept["metadata"]
        .as_object_mut()
        .unwrap()
        .shift_remove("managedFields");
    record_update(
        ResourceType::DEPLOYMENT,
        Some(&created),
        &mut kept,
        "kubectl-patch",
        None,
        T1,
    );
    assert_eq!(entries(&kept), entries(&created));
}

#[test]
fn apply_creates_with_an_apply_entry_of_the_applied_fields() {
    let object = apply(
        ResourceType::DEPLOYMENT,
        None,
        &web_yaml(),
        "kubectl",
        false,
        T0,
    )
    .unwrap();
    let all = entries(&object);
    assert_eq!(all.len(), 1);
    assert_eq!(
        (all[0].manager.as_str(), all[0].operation),
        ("kubectl", Operation::Apply)
    );
    assert_eq!(
        all[0].fields,
        FieldSet::from_applied(crate::schema::builtin_kind("Deployment"), &web_yaml())
    );
    // The applied configuration, with the server's defaults.
    let mut defaulted = web_yaml();
    apply_defaults(
        "apps",
        "Deployment",
        crate::schema::builtin_kind("Deployment"),
        &mut defaulted,
    );
    assert_eq!(object["spec"], defaulted["spec"]);
}

#[test]
fn apply_conflict_is_worded_as_the_reference_server() {
    let live = reference("deploy-after-scale.json");
    let err = apply(
        ResourceType::DEPLOYMENT,
        Some(&live),
        &web_yaml(),
        "kubectl",
        false,
        T2,
    )
    .unwrap_err();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/kubernetes-1.20/status-ssa-conflict.txt"
    ))
    .unwrap();
    let status: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    let ApiError::Conflict { message, causes } = err else {
        panic!("not a conflict: {err:?}")
    };
    assert_eq!(message, status["message"].as_str().unwrap());
    let cause = &status["details"]["causes"][0];
    assert_eq!(
        causes,
        [StatusCause {
            reason: cause["reason"].as_str().unwrap().into(),
            message: cause["message"].as_str().unwrap().into(),
            field: cause["field"].as_str().unwrap().into(),
        }]
    );
}

#[test]
fn force_takes_the_fields_and_equal_values_are_shared() {
    let live = reference("deploy-after-scale.json");
    let object = apply(
        ResourceType::DEPLOYMENT,
        Some(&live),
        &web_yaml(),
        "kubectl",
        true,
        T2,
    )
    .unwrap();
    assert_eq!(object["spec"]["replicas"], json!(2));
    let all = entries(&object);
    assert_eq!(all[0].manager, "kubectl", "Apply entries come first");
    let csa = entry(&all, "kubectl-client-side-apply");
    assert!(!csa.fields.contains(&path("spec.replicas")));
    assert!(
        entry(&all, "kubectl")
            .fields
            .contains(&path("spec.replicas"))
    );
    // The image had the same value: both own it now.
    let image = FieldPath::fields(&["spec", "template", "spec", "containers"])
        .child(PathElement::parse(r#"k:{"name":"web"}"#).unwrap())
        .child(PathElement::field("image"));
    assert_eq!(crate::managed_fields::owners(&all, &image).len(), 2);
    // The env var kubectl-set added is not in the applied config, and stays.
    assert_eq!(
        object["spec"]["template"]["spec"]["containers"][0]["env"][1]["name"],
        json!("EXTRA")
    );
}

#[test]
fn fields_no_longer_applied_are_pruned_unless_someone_else_owns_them() {
    let mut config = web_yaml();
    config["spec"]["template"]["spec"]["containers"][0]["env"] =
        json!([{"name": "MODE", "value": "prod"}, {"name": "EXTRA", "value": "1"}]);
    config["metadata"]["labels"]["tier"] = json!("front");
    let first = apply(
        ResourceType::DEPLOYMENT,
        None,
        &config,
        "kubectl",
        false,
        T0,
    )
    .unwrap();

    let second = apply(
        ResourceType::DEPLOYMENT,
        Some(&first),
        &web_yaml(),
        "kubectl",
        false,
        T1,
    )
    .unwrap();
    assert_eq!(
        second["spec"]["template"]["spec"]["containers"][0]["env"],
        json!([{"name": "MODE", "value": "prod"}])
    );
    assert_eq!(second["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(
        entries(&second)[0].fields,
        FieldSet::from_applied(crate::schema::builtin_kind("Deployment"), &web_yaml())
    );

    // Someone else changed EXTRA in between: it survives the prune.
    let mut touched = first.clone();
    touched["spec"]["template"]["spec"]["containers"][0]["env"][1]["value"] = json!("2");
    record_update(
        ResourceType::DEPLOYMENT,
        Some(&first),
        &mut touched,
        "kubectl-edit",
        None,
        T1,
    );
    let third = apply(
        ResourceType::DEPLOYMENT,
        Some(&touched),
        &web_yaml(),
        "kubectl",
        false,
        T2,
    )
    .unwrap();
    assert_eq!(
        third["spec"]["template"]["spec"]["containers"][0]["env"],
        json!([{"name": "MODE", "value": "prod"}, {"name": "EXTRA", "value": "2"}])
    );
}

#[test]
fn several_conflicts_are_listed_by_manager() {
    let created = created_by_client_side_apply();
    let edited = patched(
        &created,
        "kubectl-edit",
        json!({"spec": {"paused": true}}),
        T1,
    );
    let mut config = web_yaml();
    config["spec"]["replicas"] = json!(5);
    config["spec"]["paused"] = json!(false);
    let ApiError::Conflict { message, causes } = apply(
        ResourceType::DEPLOYMENT,
        Some(&edited),
        &config,
        "kubectl",
        false,
        T2,
    )
    .unwrap_err() else {
        panic!("expected a conflict")
    };
    assert_eq!(
        message,
        "Apply failed with 2 conflicts: conflicts with \"kubectl-client-side-apply\" using apps/v1:\n- .spec.replicas\nconflicts with \"kubectl-edit\" using apps/v1:\n- .spec.paused"
    );
    assert_eq!(causes.len(), 2);
}

#[test]
fn applied_config_must_match_the_resource() {
    let mut config = web_yaml();
    config["apiVersion"] = json!("apps/v1beta1");
    assert!(matches!(
        apply(ResourceType::DEPLOYMENT, None, &config, "kubectl", false, T0),
        Err(ApiError::BadRequest(m)) if m.contains("apps/v1beta1")
    ));
    assert!(matches!(
        apply(ResourceType::REPLICA_SET, None, &web_yaml(), "kubectl", false, T0),
        Err(ApiError::BadRequest(m)) if m.contains("Deployment")
    ));
    let mut config = web_yaml();
    config["metadata"]["managedFields"] = json!([{"manager": "me", "operation": "Apply"}]);
    assert!(matches!(
        apply(ResourceType::DEPLOYMENT, None, &config, "kubectl", false, T0),
        Err(ApiError::BadRequest(m)) if m == "metadata.managedFields must be nil"
    ));
}
