//! Properties of `managedFields` over random histories of writes by several managers.
#![allow(clippy::unwrap_used)]
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::patch::strategic_merge_patch;
use crate::schema::defaults::apply_defaults;

/// One out-of-band write, as a strategic merge patch kubectl would send.
#[derive(Debug, Clone)]
enum Write {
    Replicas(u32),
    Image(u8),
    SetEnv(&'static str, u8),
    RemoveEnv(&'static str),
    SetLabel(&'static str, u8),
    RemoveLabel(&'static str),
}

fn write() -> impl Strategy<Value = Write> {
    let name = prop::sample::select(vec!["A", "B", "MODE"]);
    let label = prop::sample::select(vec!["app", "tier", "team"]);
    prop_oneof![
        (0..5u32).prop_map(Write::Replicas),
        (0..3u8).prop_map(Write::Image),
        (name.clone(), 0..3u8).prop_map(|(n, v)| Write::SetEnv(n, v)),
        name.prop_map(Write::RemoveEnv),
        (label.clone(), 0..3u8).prop_map(|(k, v)| Write::SetLabel(k, v)),
        label.prop_map(Write::RemoveLabel),
    ]
}

fn patch_of(write: &Write) -> Value {
    let container = |fields: Value| {
        let mut web = json!({"name": "web"});
        web.as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        json!({"spec": {"template": {"spec": {"containers": [web]}}}})
    };
    match write {
        Write::Replicas(n) => json!({"spec": {"replicas": n}}),
        Write::Image(v) => container(json!({"image": format!("web:{v}")})),
        Write::SetEnv(name, v) => {
            container(json!({"env": [{"name": name, "value": v.to_string()}]}))
        }
        Write::RemoveEnv(name) => container(json!({"env": [{"$patch": "delete", "name": name}]})),
        Write::SetLabel(key, v) => json!({"metadata": {"labels": {*key: v.to_string()}}}),
        Write::RemoveLabel(key) => json!({"metadata": {"labels": {*key: null}}}),
    }
}

fn created() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/kubernetes-1.20/web.yaml"
    );
    let mut object: Value = serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
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
        "creator",
        None,
        "2026-11-22T00:00:00Z",
    );
    object
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// With updates only, every leaf of the object has exactly one owner, and every owned path
    /// exists in the object.
    #[test]
    fn updates_keep_one_owner_per_leaf(history in prop::collection::vec((0..3usize, write()), 1..12)) {
        let managers = ["kubectl-set", "kubectl-edit", "kubectl-patch"];
        let mut object = created();
        for (step, (who, write)) in history.iter().enumerate() {
            let mut new = strategic_merge_patch(ResourceType::DEPLOYMENT, &object, &patch_of(write)).unwrap();
            apply_defaults("apps", "Deployment", crate::schema::builtin_kind("Deployment"), &mut new);
            let time = format!("2026-11-22T01:00:{step:02}Z");
            record_update(ResourceType::DEPLOYMENT, Some(&object), &mut new, managers[*who], None, &time);
            object = new;
        }
        let entries = ManagedFieldsEntry::read(&object).unwrap();
        for entry in &entries {
            prop_assert!(!entry.fields.is_empty());
            for path in entry.fields.paths() {
                prop_assert!(path.lookup(crate::schema::builtin_kind("Deployment"), &object).is_some(), "{} owns missing {}", entry.manager, path);
            }
        }
        let leaves = FieldSet::from_object(crate::schema::builtin_kind("Deployment"), &object)
            .without_subtree(&FieldPath::fields(&["status"]))
            .leaves();
        for leaf in leaves {
            let owners = crate::managed_fields::owners_in(crate::schema::builtin_kind("Deployment"), &entries, &leaf);
            prop_assert_eq!(owners.len(), 1, "{} owned by {:?}", leaf, owners.iter().map(|e| &e.manager).collect::<Vec<_>>());
        }
    }
}

/// An applied configuration: web.yaml with some fields varied.
fn config() -> impl Strategy<Value = Value> {
    (
        proptest::option::of(0..5u32),
        0..3u8,
        prop::sample::subsequence(vec!["A", "B", "MODE"], 0..=3),
        prop::sample::subsequence(vec!["tier", "team"], 0..=2),
    )
        .prop_map(|(replicas, image, env, labels)| {
            let mut config = json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "capture", "labels": {"app": "web"}},
                "spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                        {"name": "web", "image": format!("web:{image}")}
                    ]}}
                }
            });
            if let Some(r) = replicas {
                config["spec"]["replicas"] = json!(r);
            }
            if !env.is_empty() {
                config["spec"]["template"]["spec"]["containers"][0]["env"] = env
                    .iter()
                    .map(|n| json!({"name": n, "value": "v"}))
                    .collect();
            }
            for key in labels {
                config["metadata"]["labels"][key] = json!("x");
            }
            config
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A forced apply leaves the applied values in the object, fields applied before and owned by
    /// nobody else are gone, and applying the same configuration again changes nothing.
    #[test]
    fn forced_applies_converge(steps in prop::collection::vec((config(), prop::collection::vec(write(), 0..3)), 1..6)) {
        let mut live: Option<Value> = None;
        for (step, (config, writes)) in steps.iter().enumerate() {
            let time = format!("2026-11-22T02:00:{step:02}Z");
            let mut object = apply(ResourceType::DEPLOYMENT, live.as_ref(), config, "kubectl", true, &time).unwrap();
            apply_defaults("apps", "Deployment", crate::schema::builtin_kind("Deployment"), &mut object);
            let applied = FieldSet::from_applied(crate::schema::builtin_kind("Deployment"), config);
            for leaf in applied.leaves() {
                prop_assert_eq!(leaf.lookup(crate::schema::builtin_kind("Deployment"), &object), leaf.lookup(crate::schema::builtin_kind("Deployment"), config), "{}", leaf);
            }
            let again = apply(ResourceType::DEPLOYMENT, Some(&object), config, "kubectl", false, &time).unwrap();
            prop_assert_eq!(&again, &object);
            let entries = ManagedFieldsEntry::read(&object).unwrap();
            for env in ["A", "B"] {
                let applied_env = config["spec"]["template"]["spec"]["containers"][0]["env"]
                    .as_array().is_some_and(|l| l.iter().any(|e| e["name"] == json!(env)));
                let in_object = object["spec"]["template"]["spec"]["containers"][0]["env"]
                    .as_array().is_some_and(|l| l.iter().any(|e| e["name"] == json!(env)));
                let others = entries.iter().any(|e| e.manager != "kubectl"
                    && serde_json::to_string(&e.fields.to_fields_v1()).unwrap().contains(&format!("{{\\\"name\\\":\\\"{env}\\\"}}")));
                prop_assert_eq!(in_object, applied_env || others, "env {}", env);
            }
            // Out-of-band writes between applies.
            let mut current = object;
            for (i, write) in writes.iter().enumerate() {
                let mut new = strategic_merge_patch(ResourceType::DEPLOYMENT, &current, &patch_of(write)).unwrap();
                apply_defaults("apps", "Deployment", crate::schema::builtin_kind("Deployment"), &mut new);
                let time = format!("2026-11-22T02:01:{step}{i}Z");
                record_update(ResourceType::DEPLOYMENT, Some(&current), &mut new, "kubectl-edit", None, &time);
                current = new;
            }
            live = Some(current);
        }
    }
}
