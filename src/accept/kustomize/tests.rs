#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::prove::{hash_stem, with_name_replaced};
use super::*;
use serde_json::json;

fn item(name: &str) -> PathStep {
    let mut key = Map::new();
    key.insert("name".into(), name.into());
    PathStep::Item(key)
}

fn env_of(name: &str) -> Vec<PathStep> {
    vec![
        PathStep::Key("containers".into()),
        item("web"),
        PathStep::Key("env".into()),
        item(name),
    ]
}

#[test]
fn only_a_kustomize_hash_suffix_is_a_hash_suffix() {
    assert_eq!(hash_stem("web-config-7kcm455446"), Some("web-config"));
    assert_eq!(
        hash_stem("inventory-config-6cfkh69k6m"),
        Some("inventory-config")
    );
    // Ten characters, but not of kustomize's alphabet (vowels, 0, 1, 3 are not in it).
    assert_eq!(hash_stem("web-config-production"), None);
    assert_eq!(hash_stem("web-config-abc"), None);
    assert_eq!(hash_stem("webconfig"), None);
    let referrer =
        json!({"volumes": [{"configMap": {"name": "a-7kcm455446"}}], "note": "a-7kcm455446x"});
    assert_eq!(
        with_name_replaced(&referrer, "a-7kcm455446", "a-b6k527t6b9"),
        json!({"volumes": [{"configMap": {"name": "a-b6k527t6b9"}}], "note": "a-7kcm455446x"})
    );
}

#[test]
fn a_live_item_after_base_items_names_them_in_the_patch_before_it() {
    let rendered = json!({"containers": [{"name": "web", "env": [
        {"name": "A", "value": "1"}, {"name": "R", "value": "eu"}, {"name": "B", "value": "2"}]}]});
    // The patch already lists R; live added N after B: A and B are named, R is not again.
    let patch = json!({"containers": [{"name": "web", "env": [{"name": "R", "value": "eu"}]}]});
    let insert = FieldEdit::InsertItem {
        path: FieldPath(env_of("N")),
        value: json!({"name": "N", "value": "x"}),
        after: vec![item("B"), item("R"), item("A")],
    };
    let edits = keep_live_order(vec![insert], &rendered, &patch);
    let result = edit::intended::apply(&patch, &edits);
    assert_eq!(
        result["containers"][0]["env"],
        json!([{"name": "A"}, {"name": "R", "value": "eu"}, {"name": "B"}, {"name": "N", "value": "x"}])
    );
    // First in the live list: nothing to name.
    let first = FieldEdit::InsertItem {
        path: FieldPath(env_of("N")),
        value: json!({"name": "N", "value": "x"}),
        after: vec![],
    };
    assert_eq!(
        keep_live_order(vec![first.clone()], &rendered, &patch),
        vec![first]
    );
}
