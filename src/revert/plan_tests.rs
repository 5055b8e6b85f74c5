//! The pure decisions of a revert: pointers, the guarded patch, emptied parents, the preview.
use super::*;

fn env_path(name: &str) -> DriftPath {
    let mut key = Map::new();
    key.insert("name".into(), json!("web"));
    let mut env_key = Map::new();
    env_key.insert("name".into(), json!(name));
    DriftPath::default()
        .child("spec")
        .child("template")
        .child("spec")
        .child("containers")
        .item(key, None)
        .child("env")
        .item(env_key, None)
}

fn object() -> Value {
    json!({
        "metadata": {"name": "web", "resourceVersion": "7"},
        "spec": {"template": {"spec": {"containers": [
            {"name": "side"},
            {"name": "web", "env": [
                {"name": "A", "value": "1"},
                {"name": "B", "value": "2"},
                {"name": "C", "value": "3"}
            ]}
        ]}}}
    })
}

fn removal(name: &str, value: Value) -> Removal {
    Removal {
        path: env_path(name),
        value,
        manager: Some("kubectl-set".into()),
        order: None,
        emptied_by: Vec::new(),
    }
}

#[test]
fn pointers_find_list_items_by_merge_key() {
    assert_eq!(
        live_pointer(&object(), &env_path("C")).as_deref(),
        Some("/spec/template/spec/containers/1/env/2")
    );
    assert_eq!(live_pointer(&object(), &env_path("Z")), None);
}

#[test]
fn removal_patch_guards_and_removes_later_items_first() {
    let planned = [
        removal("A", json!({"name": "A", "value": "1"})),
        removal("C", json!({"name": "C", "value": "3"})),
    ];
    let patch = removal_patch(&object(), &planned);
    let ops = patch.operations.as_array().unwrap();
    assert_eq!(
        ops[0],
        json!({"op": "test", "path": "/spec/template/spec/containers/1/env/2", "value": {"name": "C", "value": "3"}})
    );
    let removes: Vec<&str> = ops
        .iter()
        .filter(|o| o["op"] == "remove")
        .map(|o| o["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        removes,
        [
            "/spec/template/spec/containers/1/env/2",
            "/spec/template/spec/containers/1/env/0"
        ]
    );
    let after = patched(&object(), &patch);
    let env = after
        .pointer("/spec/template/spec/containers/1/env")
        .unwrap();
    assert_eq!(env, &json!([{"name": "B", "value": "2"}]));
}

#[test]
fn a_field_inside_another_removed_field_goes_with_it() {
    let mut outer = DriftPath::default()
        .child("spec")
        .child("template")
        .child("spec")
        .child("containers");
    let mut key = Map::new();
    key.insert("name".into(), json!("web"));
    outer = outer.item(key, None).child("env");
    let env = object()
        .pointer("/spec/template/spec/containers/1/env")
        .unwrap()
        .clone();
    let planned = [
        removal("B", json!({"name": "B", "value": "2"})),
        Removal {
            path: outer,
            value: env,
            manager: None,
            order: None,
            emptied_by: Vec::new(),
        },
    ];
    let patch = removal_patch(&object(), &planned);
    assert_eq!(patch.removed.len(), 1);
    let after = patched(&object(), &patch);
    assert!(
        after
            .pointer("/spec/template/spec/containers/1/env")
            .is_none()
    );
}

#[test]
fn the_patched_object_keeps_its_key_order() {
    let object = json!({"spec": {"a": 1, "b": {"x": 1, "y": 2}, "c": 3, "d": 4}});
    let planned = [Removal {
        path: DriftPath::default().child("spec").child("a"),
        value: json!(1),
        manager: None,
        order: None,
        emptied_by: Vec::new(),
    }];
    let after = patched(&object, &removal_patch(&object, &planned));
    assert_eq!(
        serde_json::to_string(&after).unwrap(),
        r#"{"spec":{"b":{"x":1,"y":2},"c":3,"d":4}}"#
    );
    let mut planned = planned[0].clone();
    planned.path = DriftPath::default().child("spec").child("b");
    planned.emptied_by = vec![DriftPath::default().child("spec").child("b").child("x")];
    assert_eq!(planned.label(), "spec.b.x and the spec.b it leaves empty");
}

#[test]
fn a_field_changed_since_the_plan_is_kept() {
    let planned = [removal("B", json!({"name": "B", "value": "old"}))];
    let patch = removal_patch(&object(), &planned);
    assert!(patch.is_empty());
    assert_eq!(patch.changed.len(), 1);
    assert_eq!(patched(&object(), &patch), object());
}

#[test]
fn preview_diff_shows_live_now_and_after() {
    let before = object();
    let mut after = object();
    after["spec"]["template"]["spec"]["containers"][1]["env"]
        .as_array_mut()
        .unwrap()
        .remove(1);
    let text = preview_diff(&before, &after, "deployment/web", "revert", false);
    assert!(
        text.lines()
            .any(|l| l.starts_with('-') && l.contains("value:") && l.contains('2')),
        "{text}"
    );
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with('+') && !l.starts_with("+++")),
        "{text}"
    );
    assert!(text.contains("deployment/web (after revert)"), "{text}");
    assert!(preview_diff(&before, &before, "x", "revert", false).is_empty());
    let kinds: Vec<PreviewKind> = preview_lines(&before, &after, "deployment/web", "revert")
        .iter()
        .map(|l| l.kind)
        .filter(|k| matches!(k, PreviewKind::Added | PreviewKind::Removed))
        .collect();
    assert_eq!(kinds, [PreviewKind::Removed, PreviewKind::Removed]);
    let coloured = preview_diff(&before, &after, "deployment/web", "revert", true);
    assert!(coloured.contains("\x1b[31m-"), "{coloured}");
}

#[test]
fn kept_fields_are_left_out_of_the_apply_and_a_null_parent_with_them() {
    let kept = |path: DriftPath| Kept {
        applied: None,
        path,
        why: "not named with --field".into(),
    };
    let mut config = object();
    config["spec"]["template"]["spec"]["containers"][1]["resources"] = json!({"limits": null});
    let limits = memory_limit();
    without_kept(
        &mut config,
        &[kept(env_path("B").child("value")), kept(limits)],
    );
    let web = &config["spec"]["template"]["spec"]["containers"][1];
    assert_eq!(
        web["env"],
        json!([{"name": "A", "value": "1"}, {"name": "B"}, {"name": "C", "value": "3"}])
    );
    assert_eq!(
        web["resources"],
        json!({}),
        "limits: null would remove the live limit"
    );
    assert!(kept(env_path("B")).covers(&env_path("B").child("value")));
    assert!(kept(env_path("B").child("value")).covers(&env_path("B")));
    assert!(!kept(env_path("B")).covers(&env_path("C")));
}

#[test]
fn a_kept_field_helm_owns_is_applied_with_its_live_value() {
    let kept = |path: DriftPath, value: Value| Kept {
        applied: Some(value),
        path,
        why: "helm is mid-upgrade".into(),
    };
    let mut config = object();
    let replicas = DriftPath::default().child("spec").child("replicas");
    let limit = memory_limit();
    without_kept(
        &mut config,
        &[
            kept(replicas, json!(5)),
            kept(limit, json!("512Mi")),
            kept(env_path("D"), json!({"name": "D", "value": "4"})),
        ],
    );
    assert_eq!(config["spec"]["replicas"], 5);
    let web = &config["spec"]["template"]["spec"]["containers"][1];
    assert_eq!(web["resources"]["limits"]["memory"], "512Mi");
    assert_eq!(web["env"][3], json!({"name": "D", "value": "4"}));
}

/// `spec.template.spec.containers[name=web].resources.limits.memory`.
fn memory_limit() -> DriftPath {
    DriftPath::default()
        .child("spec")
        .child("template")
        .child("spec")
        .child("containers")
        .item(
            {
                let mut key = Map::new();
                key.insert("name".into(), json!("web"));
                key
            },
            None,
        )
        .child("resources")
        .child("limits")
        .child("memory")
}

#[test]
fn the_end_patch_changes_content_only_and_leaves_the_servers_fields() {
    let live = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "resourceVersion": "7", "generation": 2,
                     "managedFields": [{"manager": "kubectl-patch"}]},
        "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30948}]},
        "status": {"loadBalancer": {}},
    });
    // Both steps as kdrift's dry runs leave it: its own managedFields entry, no status.
    let end = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "resourceVersion": "8", "generation": 3,
                     "managedFields": [{"manager": "kdrift"}]},
        "spec": {"ports": [{"port": 80, "nodePort": 30948}]},
    });
    let patch = end_patch(&live, &end);
    assert_eq!(patch, json!([{"op": "remove", "path": "/spec/type"}]));
    // Applied to live, it is the end with live's bookkeeping.
    let operations: json_patch::Patch = serde_json::from_value(patch).unwrap();
    let mut after = live.clone();
    json_patch::patch(&mut after, &operations).unwrap();
    assert_eq!(after["spec"], end["spec"]);
    assert_eq!(
        after["metadata"]["managedFields"],
        live["metadata"]["managedFields"]
    );
    assert_eq!(after["status"], live["status"]);
}
