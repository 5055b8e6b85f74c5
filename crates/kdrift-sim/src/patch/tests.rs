//! Patches as kubectl sends them (`kubectl ... -v=8` shows the bodies), applied to the reference
//! Deployment captured from a real server.
#![allow(clippy::unwrap_used)]
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn reference(file: &str) -> Value {
    let path = format!(
        "{}/../../testdata/kubernetes-1.20/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn web() -> Value {
    reference("deploy-after-client-apply.json")
}

fn smp(target: &Value, patch: &str) -> Result<Value, ApiError> {
    strategic_merge_patch(
        ResourceType::DEPLOYMENT,
        target,
        &serde_json::from_str(patch).unwrap(),
    )
}

fn container(object: &Value) -> &Value {
    &object["spec"]["template"]["spec"]["containers"][0]
}

// kubectl set image deployment/web web=registry.example/web:1.1
const SET_IMAGE: &str = r#"{"spec":{"template":{"spec":{"containers":[{"image":"registry.example/web:1.1","name":"web"}]}}}}"#;
// kubectl set env deployment/web EXTRA=1
const SET_ENV: &str = r#"{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"web"}],"containers":[{"$setElementOrder/env":[{"name":"MODE"},{"name":"EXTRA"}],"env":[{"name":"EXTRA","value":"1"}],"name":"web"}]}}}}"#;
// kubectl set env deployment/web EXTRA-
const UNSET_ENV: &str = r#"{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"web"}],"containers":[{"$setElementOrder/env":[{"name":"MODE"}],"env":[{"$patch":"delete","name":"EXTRA"}],"name":"web"}]}}}}"#;
// kubectl set resources deployment/web --limits=memory=256Mi
const SET_RESOURCES: &str = r#"{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"web"}],"containers":[{"name":"web","resources":{"limits":{"memory":"256Mi"}}}]}}}}"#;
// kubectl rollout restart deployment/web
const RESTART: &str = r#"{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-11-22T03:30:00Z"}}}}}"#;
// kubectl edit: replicas 2 -> 3, the ports block deleted, a label added
const EDIT: &str = r#"{"metadata":{"labels":{"tier":"front"}},"spec":{"replicas":3,"template":{"spec":{"$setElementOrder/containers":[{"name":"web"}],"containers":[{"name":"web","ports":null}]}}}}"#;
// kubectl edit: strategy switched to Recreate (rollingUpdate deleted in the editor)
const EDIT_RECREATE: &str =
    r#"{"spec":{"strategy":{"$retainKeys":["type"],"rollingUpdate":null,"type":"Recreate"}}}"#;
// kubectl apply (client-side) of a manifest whose strategy says Recreate: no null sent
const APPLY_RECREATE: &str = r#"{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}"#;

#[test]
fn set_image_changes_only_the_image() {
    let out = smp(&web(), SET_IMAGE).unwrap();
    let mut expected = web();
    expected["spec"]["template"]["spec"]["containers"][0]["image"] =
        json!("registry.example/web:1.1");
    assert_eq!(out, expected);
}

#[test]
fn set_env_then_set_resources_gives_the_reference_spec() {
    let out = smp(&smp(&web(), SET_ENV).unwrap(), SET_RESOURCES).unwrap();
    let expected = reference("deploy-after-set-env-and-resources.json");
    assert_eq!(out["spec"], expected["spec"]);
}

#[test]
fn set_env_removal_deletes_the_item_by_name() {
    let with_extra = smp(&web(), SET_ENV).unwrap();
    assert_eq!(
        container(&with_extra)["env"],
        json!([{"name": "MODE", "value": "prod"}, {"name": "EXTRA", "value": "1"}])
    );
    let out = smp(&with_extra, UNSET_ENV).unwrap();
    assert_eq!(out, web());
}

#[test]
fn client_side_apply_removes_the_env_var_gone_from_last_applied() {
    let live = smp(&web(), SET_ENV).unwrap();
    let last_applied =
        web()["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .clone();
    let patch = json!({
        "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": last_applied}},
        "spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "web"}],
            "containers": [{"$setElementOrder/env": [{"name": "MODE"}], "env": [{"$patch": "delete", "name": "EXTRA"}], "name": "web"}]
        }}}
    });
    let out = strategic_merge_patch(ResourceType::DEPLOYMENT, &live, &patch).unwrap();
    assert_eq!(out, web());
}

#[test]
fn rollout_restart_adds_the_template_annotation() {
    let out = smp(&web(), RESTART).unwrap();
    assert_eq!(
        out["spec"]["template"]["metadata"],
        json!({"creationTimestamp": null, "labels": {"app": "web"},
               "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-22T03:30:00Z"}})
    );
}

#[test]
fn edit_sets_deletes_and_adds() {
    let out = smp(&web(), EDIT).unwrap();
    assert_eq!(out["spec"]["replicas"], json!(3));
    assert_eq!(
        out["metadata"]["labels"],
        json!({"app": "web", "tier": "front"})
    );
    assert!(container(&out).get("ports").is_none());
    assert_eq!(container(&out)["image"], json!("registry.example/web:1.0"));
}

#[test]
fn retain_keys_drops_rolling_update_on_recreate() {
    for patch in [EDIT_RECREATE, APPLY_RECREATE] {
        let out = smp(&web(), patch).unwrap();
        assert_eq!(
            out["spec"]["strategy"],
            json!({"type": "Recreate"}),
            "{patch}"
        );
    }
}

#[test]
fn retain_keys_switches_a_volume_source() {
    // kubectl apply of a manifest whose volume "cfg" now comes from a secret.
    let pod = json!({"spec": {"containers": [{"name": "c"}], "volumes": [
        {"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 420}},
        {"name": "tmp", "emptyDir": {}}
    ]}});
    let patch = json!({"spec": {"$setElementOrder/volumes": [{"name": "cfg"}, {"name": "tmp"}], "volumes": [
        {"$retainKeys": ["name", "secret"], "name": "cfg", "secret": {"secretName": "cfg"}}
    ]}});
    let out = strategic_merge_patch(ResourceType::POD, &pod, &patch).unwrap();
    assert_eq!(
        out["spec"]["volumes"],
        json!([{"name": "cfg", "secret": {"secretName": "cfg"}}, {"name": "tmp", "emptyDir": {}}])
    );
}

#[test]
fn retain_keys_must_name_every_patched_key() {
    let err = smp(
        &web(),
        r#"{"spec":{"strategy":{"$retainKeys":["type"],"rollingUpdate":{"maxSurge":1}}}}"#,
    );
    assert!(
        matches!(err, Err(ApiError::Invalid(m)) if m == "patch content doesn't match retainKeys list")
    );
}

#[test]
fn patch_replace_in_maps_and_lists() {
    let out = smp(
        &web(),
        r#"{"metadata":{"labels":{"$patch":"replace","team":"a"}}}"#,
    )
    .unwrap();
    assert_eq!(out["metadata"]["labels"], json!({"team": "a"}));
    let out = smp(
        &web(),
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"busybox"},{"$patch":"replace"}]}}}}"#,
    )
    .unwrap();
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"],
        json!([{"name": "only", "image": "busybox"}])
    );
    let out = smp(&web(), r#"{"spec":{"strategy":{"$patch":"delete"}}}"#).unwrap();
    assert!(out["spec"].get("strategy").is_none());
}

#[test]
fn new_containers_are_appended_and_ports_merge_by_container_port() {
    let out = smp(
        &web(),
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"side:1"},{"name":"web","ports":[{"containerPort":9090},{"containerPort":8080,"name":"http"}]}]}}}}"#,
    )
    .unwrap();
    let containers = &out["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[1], json!({"name": "side", "image": "side:1"}));
    assert_eq!(
        containers[0]["ports"],
        json!([{"containerPort": 8080, "protocol": "TCP", "name": "http"}, {"containerPort": 9090}])
    );
}

#[test]
fn atomic_lists_are_replaced_and_primitive_sets_merged() {
    let mut pod = json!({"metadata": {"finalizers": ["a", "b"]}, "spec": {
        "tolerations": [{"key": "x", "operator": "Exists"}],
        "containers": [{"name": "c", "args": ["--one", "--two"]}]
    }});
    let patch = json!({
        "metadata": {"finalizers": ["c"], "$deleteFromPrimitiveList/finalizers": ["a"]},
        "spec": {"tolerations": [{"key": "y", "operator": "Exists"}], "containers": [{"name": "c", "args": ["--three"]}]}
    });
    pod = strategic_merge_patch(ResourceType::POD, &pod, &patch).unwrap();
    assert_eq!(pod["metadata"]["finalizers"], json!(["b", "c"]));
    assert_eq!(
        pod["spec"]["tolerations"],
        json!([{"key": "y", "operator": "Exists"}])
    );
    assert_eq!(pod["spec"]["containers"][0]["args"], json!(["--three"]));
}

#[test]
fn set_element_order_reorders_and_keeps_server_only_items_in_place() {
    let object = json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "env": [
        {"name": "A", "value": "1"}, {"name": "SERVER", "value": "s"}, {"name": "B", "value": "2"}
    ]}]}}}});
    let patch = r#"{"spec":{"template":{"spec":{"containers":[{"name":"web","$setElementOrder/env":[{"name":"B"},{"name":"A"}]}]}}}}"#;
    let out = smp(&object, patch).unwrap();
    let names: Vec<&str> = container(&out)["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["B", "A", "SERVER"]);
}

#[test]
fn malformed_strategic_patches_are_bad_requests_or_invalid() {
    assert!(matches!(
        smp(&web(), r#"{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}"#),
        Err(ApiError::BadRequest(m)) if m.contains("does not contain declared merge key: name")
    ));
    assert!(
        matches!(smp(&web(), r#"{"spec":{"x":[[1]]}}"#), Err(ApiError::Invalid(m)) if m == "lists of lists are not supported")
    );
    assert!(matches!(
        smp(&web(), r#"[1]"#),
        Err(ApiError::BadRequest(_))
    ));
    assert!(matches!(
        smp(&web(), r#"{"spec":{"$patch":"explode"}}"#),
        Err(ApiError::BadRequest(_))
    ));
}

#[test]
fn json_patch_applies_and_fails_as_a_server_does() {
    let patch = json!([
        {"op": "test", "path": "/spec/replicas", "value": 2},
        {"op": "replace", "path": "/spec/replicas", "value": 5},
        {"op": "add", "path": "/metadata/labels/tier", "value": "front"}
    ]);
    let out = json_patch(&web(), &patch).unwrap();
    assert_eq!(out["spec"]["replicas"], json!(5));
    assert_eq!(out["metadata"]["labels"]["tier"], json!("front"));
    let failed = json_patch(
        &web(),
        &json!([{"op": "test", "path": "/spec/replicas", "value": 9}]),
    );
    assert!(
        matches!(failed, Err(ApiError::Invalid(m)) if m == "testing value /spec/replicas failed: test failed")
    );
    let missing = json_patch(&web(), &json!([{"op": "remove", "path": "/spec/nothing"}]));
    assert!(matches!(
        missing,
        Err(ApiError::Invalid(m)) if m == "remove operation does not apply: doc is missing path: /spec/nothing: missing value"
    ));
    assert!(matches!(
        json_patch(&web(), &json!({"op": "add"})),
        Err(ApiError::BadRequest(_))
    ));
}

#[test]
fn merge_patch_replaces_lists_and_null_deletes() {
    let out = merge_patch(&web(), &json!({"spec": {"replicas": 4, "paused": null, "template": {"spec": {"containers": [{"name": "x"}]}}}})).unwrap();
    assert_eq!(out["spec"]["replicas"], json!(4));
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"],
        json!([{"name": "x"}])
    );
    let out = merge_patch(&web(), &json!({"spec": {"strategy": null}})).unwrap();
    assert!(out["spec"].get("strategy").is_none());
    assert!(matches!(
        merge_patch(&web(), &json!([1])),
        Err(ApiError::BadRequest(_))
    ));
}

/// Changes to a Deployment: replicas, image, env values by name, labels.
#[derive(Debug, Clone)]
struct Change {
    replicas: Option<u32>,
    image: Option<String>,
    env: Vec<(String, String)>,
    labels: Vec<(String, String)>,
}

fn change() -> impl Strategy<Value = Change> {
    (
        proptest::option::of(0..50u32),
        proptest::option::of("[a-z]{1,8}:[0-9]{1,2}"),
        prop::collection::vec(("(MODE|EXTRA|A|B)", "[a-z0-9]{0,4}"), 0..4),
        prop::collection::vec(("(app|tier|team)", "[a-z]{1,4}"), 0..3),
    )
        .prop_map(|(replicas, image, env, labels)| Change {
            replicas,
            image,
            env,
            labels,
        })
}

/// The patch kubectl would send for `change`: only the replaced fields.
fn patch_for(change: &Change) -> Value {
    let mut web = json!({"name": "web"});
    if let Some(image) = &change.image {
        web["image"] = json!(image);
    }
    if !change.env.is_empty() {
        web["env"] = change
            .env
            .iter()
            .map(|(n, v)| json!({"name": n, "value": v}))
            .collect();
    }
    let mut patch = json!({"spec": {"template": {"spec": {"containers": [web]}}}});
    if let Some(r) = change.replicas {
        patch["spec"]["replicas"] = json!(r);
    }
    for (k, v) in &change.labels {
        patch["metadata"]["labels"][k] = json!(v);
    }
    patch
}

/// The object with `change` made by hand.
fn expected_after(change: &Change) -> Value {
    let mut out = web();
    if let Some(r) = change.replicas {
        out["spec"]["replicas"] = json!(r);
    }
    let c = &mut out["spec"]["template"]["spec"]["containers"][0];
    if let Some(image) = &change.image {
        c["image"] = json!(image);
    }
    for (name, value) in &change.env {
        let env = c["env"].as_array_mut().unwrap();
        match env.iter_mut().find(|e| e["name"] == json!(name)) {
            Some(e) => e["value"] = json!(value),
            None => env.push(json!({"name": name, "value": value})),
        }
    }
    for (k, v) in &change.labels {
        out["metadata"]["labels"][k] = json!(v);
    }
    out
}

proptest! {
    #[test]
    fn replacing_fields_gives_the_object_with_those_fields_replaced(change in change()) {
        let out = strategic_merge_patch(ResourceType::DEPLOYMENT, &web(), &patch_for(&change)).unwrap();
        prop_assert_eq!(out, expected_after(&change));
    }
}
