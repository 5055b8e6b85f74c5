//! Store behaviour a client can observe: metadata, conflicts, namespaces, history.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use serde_json::json;

use super::*;

fn deployment(ns: &str, name: &str, replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}
        }
    })
}

#[test]
fn a_new_store_has_the_system_namespaces() {
    let store = Store::new();
    let names: Vec<String> = store
        .list(ResourceType::NAMESPACE, None)
        .iter()
        .filter_map(|n| {
            n.pointer("/metadata/name")
                .and_then(Value::as_str)
                .map(String::from)
        })
        .collect();
    assert_eq!(
        names,
        ["default", "kube-node-lease", "kube-public", "kube-system"]
    );
}

#[test]
fn create_fills_server_metadata_and_update_bumps_generation_on_spec_only() {
    let store = Store::new();
    let created = store
        .create(
            ResourceType::DEPLOYMENT,
            deployment("default", "web", 2),
            &WriteOptions::manager("test"),
        )
        .unwrap();
    assert_eq!(created["metadata"]["generation"], 1);
    assert!(
        created["metadata"]["uid"]
            .as_str()
            .is_some_and(|u| u.len() == 36)
    );
    assert!(
        created["metadata"]["creationTimestamp"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    let rv: u64 = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();

    let mut labels_only = created.clone();
    labels_only["metadata"]["labels"]["extra"] = json!("1");
    let updated = store
        .update(
            ResourceType::DEPLOYMENT,
            labels_only,
            &WriteOptions::manager("test"),
        )
        .unwrap();
    assert_eq!(updated["metadata"]["generation"], 1);
    let rv2: u64 = updated["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(rv2 > rv);

    let mut scaled = updated.clone();
    scaled["spec"]["replicas"] = json!(5);
    let updated = store
        .update(
            ResourceType::DEPLOYMENT,
            scaled,
            &WriteOptions::manager("test"),
        )
        .unwrap();
    assert_eq!(updated["metadata"]["generation"], 2);
    assert_eq!(updated["metadata"]["uid"], created["metadata"]["uid"]);
}

#[test]
fn a_stale_resource_version_is_a_conflict_worded_as_a_real_server() {
    let store = Store::new();
    let created = store
        .create(
            ResourceType::DEPLOYMENT,
            deployment("default", "web", 2),
            &WriteOptions::manager("test"),
        )
        .unwrap();
    let mut first = created.clone();
    first["spec"]["replicas"] = json!(3);
    store
        .update(
            ResourceType::DEPLOYMENT,
            first,
            &WriteOptions::manager("test"),
        )
        .unwrap();
    let mut stale = created;
    stale["spec"]["replicas"] = json!(4);
    let err = store
        .update(
            ResourceType::DEPLOYMENT,
            stale,
            &WriteOptions::manager("test"),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Operation cannot be fulfilled on deployments.apps \"web\": the object has been modified; please apply your changes to the latest version and try again"
    );
}

#[test]
fn writing_into_a_missing_namespace_is_not_found() {
    let store = Store::new();
    let err = store
        .create(
            ResourceType::DEPLOYMENT,
            deployment("nope", "web", 1),
            &WriteOptions::manager("test"),
        )
        .unwrap_err();
    assert!(
        matches!(&err, ApiError::NotFound(m) if m == "namespaces \"nope\" not found"),
        "{err:?}"
    );
}

#[test]
fn dry_run_stores_nothing_and_invalid_names_are_refused() {
    let store = Store::new();
    let opts = WriteOptions {
        dry_run: true,
        ..WriteOptions::manager("test")
    };
    let made = store
        .create(
            ResourceType::DEPLOYMENT,
            deployment("default", "web", 1),
            &opts,
        )
        .unwrap();
    assert_eq!(made["metadata"]["name"], "web");
    assert!(
        store
            .get(ResourceType::DEPLOYMENT, "default", "web")
            .is_none()
    );
    let err = store
        .create(
            ResourceType::DEPLOYMENT,
            deployment("default", "Bad_Name", 1),
            &WriteOptions::manager("t"),
        )
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("Deployment.apps \"Bad_Name\" is invalid: metadata.name"),
        "{err}"
    );
}

#[test]
fn a_watch_replays_changes_after_its_version_and_refuses_forgotten_ones() {
    let store = Store::new();
    let start = store.resource_version();
    for i in 0..3 {
        store
            .create(
                ResourceType::DEPLOYMENT,
                deployment("default", &format!("d{i}"), 1),
                &WriteOptions::manager("t"),
            )
            .unwrap();
    }
    let watch = store.watch_from(Some(start + 1)).unwrap();
    let names: Vec<&str> = watch.replay.iter().map(|e| &*e.entry.name).collect();
    assert_eq!(names, ["d1", "d2"]);
    for i in 0..HISTORY_CAPACITY {
        store
            .delete(ResourceType::NAMESPACE, "no-such", &i.to_string(), false)
            .ok();
        let mut d = store
            .get(ResourceType::DEPLOYMENT, "default", "d0")
            .unwrap();
        d["metadata"]["labels"]["n"] = json!(i.to_string());
        store
            .update(ResourceType::DEPLOYMENT, d, &WriteOptions::manager("t"))
            .unwrap();
    }
    let err = store.watch_from(Some(start)).err().unwrap();
    assert!(
        matches!(&err, ApiError::Gone(m) if m.starts_with(&format!("too old resource version: {start} ("))),
        "{err:?}"
    );
}

#[test]
fn deleting_a_namespace_deletes_what_it_holds() {
    let store = Store::new();
    store
        .create(
            ResourceType::NAMESPACE,
            json!({"metadata": {"name": "team"}}),
            &WriteOptions::manager("t"),
        )
        .unwrap();
    store
        .create(
            ResourceType::DEPLOYMENT,
            deployment("team", "web", 1),
            &WriteOptions::manager("t"),
        )
        .unwrap();
    store
        .delete(ResourceType::NAMESPACE, "", "team", false)
        .unwrap();
    assert!(
        store
            .list(ResourceType::DEPLOYMENT, Some("team"))
            .is_empty()
    );
    assert!(matches!(
        store.delete(ResourceType::NAMESPACE, "", "team", false),
        Err(ApiError::NotFound(_))
    ));
}

#[test]
fn an_entry_serializes_as_serde_does_and_finds_its_metadata() {
    let store = Store::new();
    let created = store
        .create(
            ResourceType::DEPLOYMENT,
            deployment("default", "web", 2),
            &WriteOptions::manager("t"),
        )
        .unwrap();
    let entry = store
        .get_entry(ResourceType::DEPLOYMENT, "default", "web")
        .unwrap();
    assert_eq!(
        entry.json.as_ref(),
        serde_json::to_vec(&created).unwrap().as_slice()
    );
    let metadata: Value = serde_json::from_slice(&entry.metadata_json()).unwrap();
    assert_eq!(metadata, created["metadata"]);
}

#[test]
fn removing_the_last_env_var_or_label_leaves_no_empty_list_or_map() {
    // The API types are `omitempty`: a real server stores no `env: []` and no `labels: {}`.
    let store = Store::new();
    let mut web = deployment("default", "web", 1);
    web["spec"]["template"]["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": "1"}]);
    web["metadata"]["labels"] = json!({"team": "a"});
    store
        .create(
            ResourceType::DEPLOYMENT,
            web,
            &WriteOptions::manager("test"),
        )
        .unwrap();
    let patch = Patch::Json(json!([
        {"op": "remove", "path": "/spec/template/spec/containers/0/env/0"},
        {"op": "remove", "path": "/metadata/labels/team"}
    ]));
    let patched = store
        .patch(
            ResourceType::DEPLOYMENT,
            "default",
            "web",
            &patch,
            &WriteOptions::manager("kubectl-patch"),
        )
        .unwrap();
    let container = &patched["spec"]["template"]["spec"]["containers"][0];
    assert!(container.get("env").is_none(), "{container}");
    assert!(patched["metadata"].get("labels").is_none(), "{patched}");
    // An empty struct stays, as it does on a real server.
    assert_eq!(
        patched["spec"]["template"]["spec"]["securityContext"],
        json!({})
    );
}

#[test]
fn a_write_that_drops_the_selector_is_refused_and_the_object_kept() {
    // What kubectl's re-apply after a client-side to server-side apply migration meets on a real
    // server (1.36 capture: 422, "spec.selector: Required value").
    let store = Store::new();
    store
        .create(
            ResourceType::DEPLOYMENT,
            deployment("default", "web", 1),
            &WriteOptions::manager("test"),
        )
        .unwrap();
    let patch = Patch::Json(json!([{"op": "remove", "path": "/spec/selector"}]));
    let refused = store.patch(
        ResourceType::DEPLOYMENT,
        "default",
        "web",
        &patch,
        &WriteOptions::manager("kubectl-patch"),
    );
    assert_eq!(
        refused.err().map(|e| e.to_string()),
        Some("Deployment.apps \"web\" is invalid: spec.selector: Required value".to_owned())
    );
    let kept = store
        .get(ResourceType::DEPLOYMENT, "default", "web")
        .unwrap();
    assert_eq!(
        kept["spec"]["selector"],
        json!({"matchLabels": {"app": "web"}})
    );
    let patch = Patch::Json(json!([
        {"op": "replace", "path": "/spec/template/metadata/labels/app", "value": "other"}
    ]));
    let refused = store.patch(
        ResourceType::DEPLOYMENT,
        "default",
        "web",
        &patch,
        &WriteOptions::manager("kubectl-patch"),
    );
    assert_eq!(
        refused.err().map(|e| e.to_string()),
        Some("Deployment.apps \"web\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`".to_owned())
    );
}

#[test]
fn a_list_continued_from_a_forgotten_version_is_expired() {
    let store = Store::new();
    let opts = WriteOptions::manager("test");
    for i in 0..3 {
        let name = format!("web-{i}");
        store
            .create(
                ResourceType::DEPLOYMENT,
                deployment("default", &name, 1),
                &opts,
            )
            .unwrap();
    }
    let first = store.list_page(ResourceType::DEPLOYMENT, None, None, Some(1), &|_| true);
    let after = first.continue_after.clone().unwrap();
    let at = first.resource_version;
    let rest = |store: &Store| {
        store.list_page_at(
            ResourceType::DEPLOYMENT,
            None,
            Some(&after),
            None,
            &|_| true,
            at,
        )
    };
    store
        .delete(ResourceType::DEPLOYMENT, "default", "web-2", false)
        .unwrap();
    // While the history reaches back to the first page, the rest is as it was then.
    assert_eq!(rest(&store).unwrap().items.len(), 2);
    for n in 0..HISTORY_CAPACITY {
        let patch = Patch::Merge(json!({"metadata": {"labels": {"n": n.to_string()}}}));
        store
            .patch(ResourceType::DEPLOYMENT, "default", "web-0", &patch, &opts)
            .unwrap();
    }
    match rest(&store) {
        Err(ApiError::Gone(m)) => {
            assert!(
                m.starts_with("The provided continue parameter is too old"),
                "{m}"
            )
        }
        Ok(page) => panic!("a page of {} from a forgotten version", page.items.len()),
        Err(e) => panic!("{e}"),
    }
}

/// A v1.36 server records a write through `/scale` (what `kubectl scale` sends) with no
/// `time` in its managedFields entry; any other write has one (KUBERNETES.md).
#[test]
fn a_scale_write_records_its_entry_without_a_time() {
    let store = Store::new();
    store
        .create(
            ResourceType::DEPLOYMENT,
            deployment("default", "web", 1),
            &WriteOptions::manager("kubectl-create"),
        )
        .unwrap();
    let opts = WriteOptions {
        manager: "kubectl".into(),
        subresource: Some("scale".into()),
        dry_run: false,
    };
    let scaled = store
        .patch(
            ResourceType::DEPLOYMENT,
            "default",
            "web",
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
            &opts,
        )
        .unwrap();
    let entries = scaled["metadata"]["managedFields"].as_array().unwrap();
    let scale = entries
        .iter()
        .find(|e| e["subresource"] == "scale")
        .unwrap();
    assert_eq!(scale["manager"], "kubectl");
    assert!(scale.get("time").is_none(), "{scale}");
    let create = entries
        .iter()
        .find(|e| e["manager"] == "kubectl-create")
        .unwrap();
    assert!(create["time"].is_string(), "{create}");
}

#[test]
fn a_new_store_has_the_system_priority_classes() {
    let store = Store::new();
    let node = store
        .get(ResourceType::PRIORITY_CLASS, "", "system-node-critical")
        .unwrap();
    assert_eq!(node["value"], 2_000_001_000);
    assert_eq!(node["preemptionPolicy"], "PreemptLowerPriority");
    assert_eq!(node["metadata"]["generation"], 1);
}

#[test]
fn a_custom_resource_whose_schema_preserves_unknown_fields_keeps_them_and_prunes_the_rest() {
    // Flux's and many charts' CRDs publish only `x-kubernetes-preserve-unknown-fields: true`
    // (at the root or under `spec`); a real server keeps every field below it and still prunes
    // beside a declared struct that does not preserve.
    let store = Store::new();
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                {"name": "v2", "served": true, "storage": false,
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                     "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}
            ]
        }
    });
    store
        .create(
            ResourceType::CUSTOM_RESOURCE_DEFINITION,
            crd,
            &WriteOptions::manager("kubectl-create"),
        )
        .unwrap();
    let widget = |version: &str| {
        store
            .resource_types()
            .iter()
            .copied()
            .find(|t| t.kind() == "Widget" && t.version() == version)
            .unwrap()
    };
    let object = |version: &str, name: &str| {
        json!({
            "apiVersion": format!("example.com/{version}"), "kind": "Widget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"size": 3, "chart": {"name": "podinfo", "values": {"replicaCount": 2}}},
            "extra": true
        })
    };
    let (kept, warnings) = store
        .create_validated(
            widget("v1"),
            object("v1", "open"),
            &WriteOptions::manager("kubectl-create"),
            FieldValidation::Warn,
        )
        .unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(kept["spec"]["chart"]["values"]["replicaCount"], 2, "{kept}");
    assert_eq!(kept["extra"], true, "{kept}");

    let (pruned, warnings) = store
        .create_validated(
            widget("v2"),
            object("v2", "closed"),
            &WriteOptions::manager("kubectl-create"),
            FieldValidation::Warn,
        )
        .unwrap();
    assert_eq!(pruned["spec"], json!({"size": 3}), "{pruned}");
    assert!(pruned.get("extra").is_none(), "{pruned}");
    assert_eq!(warnings.len(), 2, "{warnings:?}");
}
