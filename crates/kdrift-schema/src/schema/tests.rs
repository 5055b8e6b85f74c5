//! The schema answers as the Kubernetes API types declare them.
#![allow(clippy::unwrap_used)]
use super::*;
use serde_json::json;

fn root(kind: &str) -> Schema {
    builtin_kind(kind)
}

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

#[test]
fn every_builtin_document_reads_with_its_kinds() {
    for document in BUILTIN_DOCUMENTS {
        let kinds = openapi::read_document(document.json.as_bytes()).unwrap();
        assert!(!kinds.is_empty(), "{}", document.path);
    }
    let schemas = Schemas::builtin();
    for (api_version, kind) in [
        ("v1", "ConfigMap"),
        ("v1", "Secret"),
        ("v1", "Service"),
        ("v1", "ServiceAccount"),
        ("apps/v1", "StatefulSet"),
        ("batch/v1", "CronJob"),
        ("autoscaling/v2", "HorizontalPodAutoscaler"),
        ("networking.k8s.io/v1", "Ingress"),
        ("policy/v1", "PodDisruptionBudget"),
        ("rbac.authorization.k8s.io/v1", "ClusterRole"),
        ("storage.k8s.io/v1", "StorageClass"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ] {
        let root = schemas.root(api_version, kind);
        assert_eq!(root.shape(), Shape::Struct, "{api_version} {kind}");
        assert!(root.declares("metadata"), "{api_version} {kind}");
    }
    // A document read again is the one already built.
    let apps = BUILTIN_DOCUMENTS[1];
    let once = openapi::read_document(apps.json.as_bytes()).unwrap();
    let twice = openapi::read_document(apps.json.as_bytes()).unwrap();
    assert!(std::sync::Arc::ptr_eq(&once, &twice));
}

#[test]
fn service_ports_key_on_port_and_protocol_with_its_default() {
    let ports = Schemas::builtin()
        .root("v1", "Service")
        .field("spec")
        .field("ports");
    assert_eq!(ports.list_type(), ListType::Map);
    assert_eq!(ports.smp_merge_key(), Some("port"));
    assert_eq!(
        ports.item_key(&json!({"name": "http", "port": 80})),
        json!({"port": 80, "protocol": "TCP"}).as_object().cloned()
    );
    assert_eq!(
        ports.item().field("targetPort").format(),
        Format::IntOrString
    );
}

#[test]
fn formats_of_quantities_bytes_and_int_or_string() {
    let container = pod_spec("Deployment").field("containers").item();
    assert_eq!(
        container
            .field("resources")
            .field("limits")
            .field("cpu")
            .format(),
        Format::Quantity
    );
    let secret = Schemas::builtin().root("v1", "Secret");
    assert_eq!(
        secret.field("data").field("password").format(),
        Format::Bytes
    );
    assert_eq!(
        secret.field("stringData").field("password").format(),
        Format::Plain
    );
    let rolling = root("Deployment")
        .field("spec")
        .field("strategy")
        .field("rollingUpdate");
    assert_eq!(rolling.field("maxSurge").format(), Format::IntOrString);
    // The Go zero values a built-in document marks are not defaults the server fills in.
    assert_eq!(
        container
            .field("ports")
            .item()
            .field("containerPort")
            .default_value(),
        None
    );
    assert_eq!(
        container
            .field("ports")
            .item()
            .field("protocol")
            .default_value(),
        Some(&json!("TCP"))
    );
}

#[test]
fn a_custom_resource_document_gives_its_kind_with_its_list_types() {
    let text = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/kubernetes-1.36/openapi/apis__example.com__v1.json"
    ))
    .unwrap();
    let mut schemas = Schemas::new();
    assert_eq!(schemas.add_document(&text).unwrap(), 1);
    let widget = schemas.root("example.com/v1", "Widget");
    let spec = widget.field("spec");
    assert_eq!(spec.field("ports").list_type(), ListType::Map);
    assert_eq!(
        spec.field("ports")
            .item_key(&json!({"name": "http", "port": 80})),
        json!({"name": "http"}).as_object().cloned()
    );
    assert_eq!(spec.field("tags").list_type(), ListType::Set);
    // Its metadata is the ObjectMeta every kind has.
    assert_eq!(
        widget.field("metadata").field("finalizers").list_type(),
        ListType::Set
    );
    // Another version of the group answers for a version the documents lack.
    assert_eq!(schemas.root("example.com/v2", "Widget"), widget);
    assert!(schemas.root("example.com/v1", "Gadget").is_unknown());
}

#[test]
fn a_document_that_is_not_openapi_is_an_error() {
    assert!(matches!(
        openapi::read_document(b"<html>forbidden</html>"),
        Err(OpenApiError::Malformed(_))
    ));
    assert_eq!(
        openapi::read_document(br#"{"openapi": "3.0.0", "components": {"schemas": {}}}"#)
            .unwrap_err(),
        OpenApiError::NoKinds
    );
}

#[test]
fn a_schema_that_refers_to_itself_is_cut_where_it_recurs() {
    // JSONSchemaProps: `properties` holds more of itself.
    let crd = Schemas::builtin().root("apiextensions.k8s.io/v1", "CustomResourceDefinition");
    let schema = crd
        .field("spec")
        .field("versions")
        .item()
        .field("schema")
        .field("openAPIV3Schema");
    assert_eq!(schema.shape(), Shape::Struct);
    assert!(schema.field("properties").field("spec").is_unknown());
    assert_eq!(
        crd.field("spec").field("versions").list_type(),
        ListType::Atomic
    );
}
