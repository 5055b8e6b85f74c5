//! The schema answers as the Kubernetes API types declare them.
use super::*;
use serde_json::json;

fn pod_spec(kind: &str) -> Schema {
    root(kind).field("spec").field("template").field("spec")
}

#[test]
fn containers_env_volumes_merge_by_name() {
    let spec = pod_spec("Deployment");
    for list in [
        "containers",
        "initContainers",
        "ephemeralContainers",
        "volumes",
        "imagePullSecrets",
    ] {
        assert_eq!(spec.field(list).list_type(), ListType::Map, "{list}");
        assert_eq!(spec.field(list).smp_merge_key(), Some("name"), "{list}");
    }
    let container = spec.field("containers").item();
    assert_eq!(container.field("env").smp_merge_key(), Some("name"));
    assert_eq!(
        container.field("volumeMounts").smp_merge_key(),
        Some("mountPath")
    );
    assert_eq!(spec.field("hostAliases").smp_merge_key(), Some("ip"));
}

#[test]
fn ports_key_on_container_port_and_protocol_for_ssa_but_container_port_for_smp() {
    let ports = pod_spec("ReplicaSet")
        .field("containers")
        .item()
        .field("ports");
    assert_eq!(ports.smp_merge_key(), Some("containerPort"));
    let key = ports.item_key(&json!({"containerPort": 8080}));
    assert_eq!(
        key,
        json!({"containerPort": 8080, "protocol": "TCP"})
            .as_object()
            .cloned()
    );
    let key = ports.item_key(&json!({"protocol": "UDP", "containerPort": 53, "name": "dns"}));
    assert_eq!(
        serde_json::to_string(&key).ok(),
        Some(r#"{"containerPort":53,"protocol":"UDP"}"#.to_string())
    );
}

#[test]
fn atomic_lists_and_maps() {
    let spec = root("Pod").field("spec");
    assert!(spec.field("tolerations").is_atomic_for(&json!([])));
    let container = spec.field("containers").item();
    assert!(container.field("args").is_atomic_for(&json!(["a"])));
    assert!(container.field("command").is_atomic_for(&json!(["a"])));
    assert!(!container.field("env").is_atomic_for(&json!([])));
    assert!(
        root("Deployment")
            .field("spec")
            .field("selector")
            .is_atomic()
    );
    assert!(
        !root("Deployment")
            .field("spec")
            .field("strategy")
            .is_atomic()
    );
    assert_eq!(
        root("Pod")
            .field("metadata")
            .field("finalizers")
            .list_type(),
        ListType::Set
    );
    assert_eq!(
        root("Pod").field("metadata").field("finalizers").smp_list(),
        SmpList::MergePrimitives
    );
    assert_eq!(
        root("Pod")
            .field("metadata")
            .field("ownerReferences")
            .smp_merge_key(),
        Some("uid")
    );
    assert_eq!(
        root("Deployment")
            .field("status")
            .field("conditions")
            .smp_merge_key(),
        Some("type")
    );
}

#[test]
fn retain_keys_on_strategy_and_volumes() {
    assert!(
        root("Deployment")
            .field("spec")
            .field("strategy")
            .retain_keys()
    );
    assert!(pod_spec("Deployment").field("volumes").item().retain_keys());
    assert!(!pod_spec("Deployment").retain_keys());
}

#[test]
fn unknown_kinds_and_fields_are_granular_maps_and_atomic_lists() {
    let unknown = root("Widget").field("spec").field("things");
    assert!(unknown.is_unknown());
    assert!(unknown.is_atomic_for(&json!([1, 2])));
    assert!(!unknown.is_atomic_for(&json!({"a": 1})));
    let field = pod_spec("Deployment")
        .field("containers")
        .item()
        .field("noSuchField");
    assert!(field.is_unknown());
    // Labels are a map: any key has the scalar schema, and is not a declared field.
    let labels = root("Deployment").field("metadata").field("labels");
    assert_eq!(labels.field("app").shape(), Shape::Scalar);
    assert!(!labels.declares("app"));
}

#[test]
fn zero_value_is_the_serialized_empty_go_struct() {
    assert_eq!(
        root("Deployment").zero_value(),
        json!({
            "metadata": {"creationTimestamp": null},
            "spec": {
                "selector": null,
                "template": {"metadata": {"creationTimestamp": null}, "spec": {"containers": null}},
                "strategy": {}
            },
            "status": {}
        })
    );
    assert_eq!(
        root("ReplicaSet").zero_value()["status"],
        json!({"replicas": 0})
    );
}

#[test]
fn find_item_by_key() {
    let env = pod_spec("Deployment")
        .field("containers")
        .item()
        .field("env");
    let list = vec![
        json!({"name": "A", "value": "1"}),
        json!({"name": "B", "value": "2"}),
    ];
    let key = env.item_key(&json!({"name": "B"}));
    assert_eq!(key.and_then(|k| env.find_item(&list, &k)), Some(1));
}
