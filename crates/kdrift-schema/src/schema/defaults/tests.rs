//! The defaults against objects a real server stored.
#![allow(clippy::unwrap_used)]
use super::*;

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

#[test]
fn deployment_defaults_match_the_reference_server() {
    let mut object = web_yaml();
    apply_defaults(
        "apps",
        "Deployment",
        crate::schema::builtin_kind("Deployment"),
        &mut object,
    );
    let mut expected = reference("deploy-after-client-apply.json")["spec"].clone();
    // A 1.20 server wrote the zero creation time of the template; current ones leave it out.
    remove_template_creation_time(&mut expected);
    assert_eq!(object["spec"], expected);
}

#[test]
fn replica_set_and_pod_template_defaults_match_the_reference() {
    let rs = &reference("replicasets.json")["items"][0];
    let mut object = json!({"spec": {
        "replicas": 2,
        "selector": rs["spec"]["selector"],
        "template": {"metadata": {"labels": rs["spec"]["template"]["metadata"]["labels"]},
            "spec": web_yaml()["spec"]["template"]["spec"]}
    }});
    apply_defaults(
        "apps",
        "ReplicaSet",
        crate::schema::builtin_kind("ReplicaSet"),
        &mut object,
    );
    let mut expected = rs["spec"].clone();
    remove_template_creation_time(&mut expected);
    assert_eq!(object["spec"], expected);
}

fn remove_template_creation_time(spec: &mut Value) {
    if let Some(meta) = spec
        .pointer_mut("/template/metadata")
        .and_then(Value::as_object_mut)
    {
        meta.remove("creationTimestamp");
    }
}

#[test]
fn pod_defaults_match_the_reference_except_admission_extras() {
    let mut expected = reference("pods.json")["items"][0]["spec"].clone();
    let spec = expected.as_object_mut().unwrap();
    // Added by admission plugins and the scheduler, which the demo cluster does elsewhere or not.
    for key in ["tolerations", "volumes", "nodeName"] {
        spec.remove(key);
    }
    spec["containers"][0]
        .as_object_mut()
        .unwrap()
        .remove("volumeMounts");
    let mut object = json!({"spec": web_yaml()["spec"]["template"]["spec"]});
    apply_defaults("", "Pod", crate::schema::builtin_kind("Pod"), &mut object);
    assert_eq!(object["spec"], expected);
}

#[test]
fn recreate_strategy_gets_no_rolling_update_and_explicit_values_stay() {
    let mut object = json!({"spec": {"replicas": 0, "strategy": {"type": "Recreate"}, "revisionHistoryLimit": 2}});
    apply_defaults(
        "apps",
        "Deployment",
        crate::schema::builtin_kind("Deployment"),
        &mut object,
    );
    assert_eq!(object["spec"]["strategy"], json!({"type": "Recreate"}));
    assert_eq!(object["spec"]["replicas"], json!(0));
    assert_eq!(object["spec"]["revisionHistoryLimit"], json!(2));
    let mut object = json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": 1}}}});
    apply_defaults(
        "apps",
        "Deployment",
        crate::schema::builtin_kind("Deployment"),
        &mut object,
    );
    assert_eq!(
        object["spec"]["strategy"],
        json!({"rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}, "type": "RollingUpdate"})
    );
    assert_eq!(object["spec"]["replicas"], json!(1));
}

#[test]
fn image_pull_policy_follows_the_tag() {
    for (image, policy) in [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("registry.example:5000/web", "Always"),
        ("registry.example:5000/web:1.0", "IfNotPresent"),
        ("web@sha256:abc", "IfNotPresent"),
    ] {
        assert_eq!(pull_policy(image), policy, "{image}");
    }
    let mut object = json!({"spec": {"containers": [{"name": "a", "image": "nginx", "imagePullPolicy": "Never"}]}});
    apply_defaults("", "Pod", crate::schema::builtin_kind("Pod"), &mut object);
    assert_eq!(
        object["spec"]["containers"][0]["imagePullPolicy"],
        json!("Never")
    );
}

#[test]
fn probes_env_field_refs_volumes_and_pod_requests() {
    let mut object = json!({"spec": {"containers": [{
        "name": "a", "image": "a:1",
        "readinessProbe": {"httpGet": {"port": 8080}},
        "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "1"}}
    }], "volumes": [{"name": "cfg", "configMap": {"name": "cfg"}}, {"name": "scratch"}]}});
    apply_defaults("", "Pod", crate::schema::builtin_kind("Pod"), &mut object);
    let c = &object["spec"]["containers"][0];
    assert_eq!(
        c["readinessProbe"],
        json!({"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
               "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(
        c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"],
        json!("v1")
    );
    assert_eq!(
        c["resources"]["requests"],
        json!({"cpu": "1", "memory": "1Gi"})
    );
    assert_eq!(
        object["spec"]["volumes"][0]["configMap"]["defaultMode"],
        json!(420)
    );
    assert_eq!(object["spec"]["volumes"][1]["emptyDir"], json!({}));
}

#[test]
fn namespace_gets_its_finalizer_phase_and_name_label() {
    let mut object = json!({"metadata": {"name": "demo"}});
    apply_defaults(
        "",
        "Namespace",
        crate::schema::builtin_kind("Namespace"),
        &mut object,
    );
    assert_eq!(
        object["metadata"]["labels"],
        json!({"kubernetes.io/metadata.name": "demo"})
    );
    assert_eq!(object["spec"], json!({"finalizers": ["kubernetes"]}));
    assert_eq!(object["status"], json!({"phase": "Active"}));
}

#[test]
fn conditional_defaults_of_jobs_autoscalers_and_external_ips() {
    let mut job = json!({"metadata": {}, "spec": {"backoffLimitPerIndex": 1, "completionMode": "Indexed",
        "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
        "template": {"metadata": {"labels": {"app": "j"}}, "spec": {"containers": []}}}});
    apply_defaults("batch", "Job", crate::schema::builtin_kind("Job"), &mut job);
    assert_eq!(job["spec"]["backoffLimit"], json!(i32::MAX));
    assert_eq!(job["spec"]["podReplacementPolicy"], json!("Failed"));
    assert_eq!(job["spec"]["manualSelector"], json!(false));
    assert_eq!(
        job["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
        json!("True")
    );
    assert_eq!(job["metadata"]["labels"], json!({"app": "j"}));

    let mut hpa = json!({"spec": {"behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}});
    apply_defaults(
        "autoscaling",
        "HorizontalPodAutoscaler",
        crate::schema::builtin_kind("HorizontalPodAutoscaler"),
        &mut hpa,
    );
    assert_eq!(
        hpa["spec"]["behavior"],
        json!({"scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
                "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]},
               "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                             {"type": "Percent", "value": 100, "periodSeconds": 15}]}})
    );

    let service = crate::schema::builtin_kind("Service");
    let mut external = json!({"spec": {"externalIPs": ["192.0.2.10"], "ports": [{"port": 80}]}});
    apply_defaults("", "Service", service, &mut external);
    assert_eq!(external["spec"]["externalTrafficPolicy"], json!("Cluster"));
    let mut name = json!({"spec": {"type": "ExternalName", "externalName": "example.com"}});
    apply_defaults("", "Service", service, &mut name);
    assert_eq!(
        name["spec"],
        json!({"type": "ExternalName", "externalName": "example.com", "sessionAffinity": "None"})
    );
    let mut none =
        json!({"spec": {"sessionAffinity": "None", "sessionAffinityConfig": {"clientIP": {}}}});
    apply_defaults("", "Service", service, &mut none);
    assert_eq!(none["spec"].get("sessionAffinityConfig"), None);
}

#[test]
fn code_defaults_are_known_for_built_in_kinds_only() {
    assert!(has_code_defaults("", "Service"));
    assert!(!has_code_defaults("", "ConfigMap"));
    assert!(!has_code_defaults("example.com", "Widget"));
}

#[test]
fn a_template_names_its_service_account_twice_as_a_server_stores_it() {
    // As a 1.36 server stores a Deployment applied with only serviceAccountName (and one
    // with only the deprecated serviceAccount).
    for given in ["serviceAccountName", "serviceAccount"] {
        let mut object = json!({"spec": {"template": {"spec": {given: "cart", "containers": []}}}});
        apply_defaults(
            "apps",
            "Deployment",
            crate::schema::builtin_kind("Deployment"),
            &mut object,
        );
        let spec = &object["spec"]["template"]["spec"];
        assert_eq!(spec["serviceAccountName"], "cart", "{given}: {spec}");
        assert_eq!(spec["serviceAccount"], "cart", "{given}: {spec}");
    }
}
