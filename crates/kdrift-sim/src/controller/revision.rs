//! ControllerRevisions, the history StatefulSets and DaemonSets keep of their pod templates, as
//! pure functions shared by both controllers: the revision's `data` (the template as a strategic
//! merge patch that replaces it, which is what `kubectl rollout undo` applies), finding or
//! making the revision of the current template (an older equal one is renumbered, as after an
//! undo), and which old revisions go past `revisionHistoryLimit`.
use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::events::EventSpec;
use crate::object::{at, i64_at, name, namespace, owner_reference, str_at};

/// `{"spec":{"template":{...,"$patch":"replace"}}}` of `owner`'s pod template.
pub fn template_patch(owner: &Value) -> Value {
    let mut template = at(owner, &["spec", "template"])
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(map) = template.as_object_mut() {
        map.insert("$patch".into(), json!("replace"));
    }
    json!({"spec": {"template": template}})
}

/// The pod template a revision holds.
pub fn template_of(revision: &Value) -> Value {
    let mut template = at(revision, &["data", "spec", "template"])
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(map) = template.as_object_mut() {
        map.remove("$patch");
    }
    template
}

pub fn number(revision: &Value) -> i64 {
    i64_at(revision, &["revision"]).unwrap_or(0)
}

/// A new ControllerRevision of `owner`: named `<owner>-<hash>`, labelled with the template's
/// labels and `hash_label: hash`, carrying the owner's annotations.
pub fn new_revision(
    owner: &Value,
    data: Value,
    hash: &str,
    hash_label: &str,
    revision: i64,
) -> Value {
    let mut labels = at(owner, &["spec", "template", "metadata", "labels"])
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    labels.insert(hash_label.into(), json!(hash));
    let mut metadata = json!({
        "name": format!("{}-{hash}", name(owner)),
        "namespace": namespace(owner),
        "labels": labels,
        "ownerReferences": [owner_reference(owner)],
    });
    if let Some(annotations) = at(owner, &["metadata", "annotations"])
        .filter(|a| a.as_object().is_some_and(|m| !m.is_empty()))
    {
        metadata["annotations"] = annotations.clone();
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": metadata,
        "data": data,
        "revision": revision,
    })
}

/// What one sync of a StatefulSet or a DaemonSet decided.
#[derive(Debug, Clone, Default)]
pub struct WorkloadSync {
    /// Revision changes, to make before the pods that name them.
    pub history: Vec<HistoryChange>,
    pub create: Vec<Value>,
    /// Names of pods to delete.
    pub delete: Vec<String>,
    pub events: Vec<EventSpec>,
    pub status: Option<Value>,
    /// Look again after this long (a pod about to pass `minReadySeconds`).
    pub requeue_after: Option<Duration>,
}

/// What the controller does to its history for the current template.
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryChange {
    Create(Value),
    /// An older revision equal to the template becomes the newest (an undo).
    Renumber {
        name: String,
        revision: i64,
    },
    Delete(String),
}

/// The revision of the current template (its name and number) and the change that makes it so.
pub struct Update {
    pub name: String,
    pub revision: i64,
    pub change: Option<HistoryChange>,
}

/// Find or make the revision of `owner`'s current template among `revisions`, whose data
/// `data` hashes to `hash`.
pub fn update_revision(
    owner: &Value,
    revisions: &[Value],
    data: &Value,
    hash: &str,
    hash_label: &str,
) -> Update {
    let newest = revisions.iter().map(number).max().unwrap_or(0);
    let equal = revisions
        .iter()
        .filter(|r| r.get("data") == Some(data))
        .max_by_key(|r| number(r));
    match equal {
        Some(r) if number(r) == newest => Update {
            name: name(r).to_string(),
            revision: newest,
            change: None,
        },
        Some(r) => Update {
            name: name(r).to_string(),
            revision: newest + 1,
            change: Some(HistoryChange::Renumber {
                name: name(r).to_string(),
                revision: newest + 1,
            }),
        },
        None => {
            let created = new_revision(owner, data.clone(), hash, hash_label, newest + 1);
            Update {
                name: str_at(&created, &["metadata", "name"])
                    .unwrap_or_default()
                    .to_string(),
                revision: newest + 1,
                change: Some(HistoryChange::Create(created)),
            }
        }
    }
}

/// The revisions past `limit` that no pod and neither the current nor the update revision
/// uses, oldest first.
pub fn expired(revisions: &[Value], live: &BTreeSet<String>, limit: i64) -> Vec<String> {
    let mut old: Vec<&Value> = revisions
        .iter()
        .filter(|r| !live.contains(name(r)))
        .collect();
    old.sort_by_key(|r| number(r));
    let over = old
        .len()
        .saturating_sub(usize::try_from(limit.max(0)).unwrap_or(0));
    old[..over].iter().map(|r| name(r).to_string()).collect()
}

/// The pod labels of a template plus `extra`.
pub fn labels_with(template: &Value, extra: &[(&str, String)]) -> Map<String, Value> {
    let mut labels = at(template, &["metadata", "labels"])
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (k, v) in extra {
        labels.insert((*k).to_string(), json!(v));
    }
    labels
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn set(image: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "ref", "uid": "u1", "annotations": {"team": "a"}},
            "spec": {"template": {"metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": image}]}}}})
    }

    #[test]
    fn a_new_template_makes_a_revision_and_an_old_one_is_renumbered() {
        let v1 = set("db:1");
        let data = template_patch(&v1);
        assert_eq!(data["spec"]["template"]["$patch"], "replace");
        let first = update_revision(&v1, &[], &data, "aaa", "controller.kubernetes.io/hash");
        let Some(HistoryChange::Create(r1)) = first.change else {
            panic!()
        };
        assert_eq!((first.name.as_str(), first.revision), ("db-aaa", 1));
        assert_eq!(
            r1["metadata"]["labels"],
            json!({"app": "db", "controller.kubernetes.io/hash": "aaa"})
        );
        assert_eq!(r1["metadata"]["annotations"], json!({"team": "a"}));
        assert_eq!(r1["metadata"]["ownerReferences"][0]["kind"], "StatefulSet");
        assert_eq!(template_of(&r1), v1["spec"]["template"]);
        let v2 = set("db:2");
        let second = update_revision(
            &v2,
            std::slice::from_ref(&r1),
            &template_patch(&v2),
            "bbb",
            "h",
        );
        let Some(HistoryChange::Create(r2)) = second.change else {
            panic!()
        };
        assert_eq!(second.revision, 2);
        let same = update_revision(
            &v2,
            &[r1.clone(), r2.clone()],
            &template_patch(&v2),
            "bbb",
            "h",
        );
        assert!(same.change.is_none());
        // Back to the first template: revision 1 becomes revision 3.
        let undo = update_revision(
            &v1,
            &[r1.clone(), r2.clone()],
            &template_patch(&v1),
            "aaa",
            "h",
        );
        assert_eq!(
            undo.change,
            Some(HistoryChange::Renumber {
                name: "db-aaa".into(),
                revision: 3
            })
        );
        assert_eq!(undo.name, "db-aaa");
    }

    #[test]
    fn history_past_the_limit_goes_oldest_first() {
        let revs: Vec<Value> = (1..=5)
            .map(|n| json!({"metadata": {"name": format!("r{n}")}, "revision": n}))
            .collect();
        let live: BTreeSet<String> = ["r5".to_string(), "r1".to_string()].into();
        assert_eq!(expired(&revs, &live, 2), ["r2"]);
        assert!(expired(&revs, &live, 10).is_empty());
    }
}
