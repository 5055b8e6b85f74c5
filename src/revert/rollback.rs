//! The pure decisions of a rollback (`kdrift rollback`): a workload's revisions read from its
//! ReplicaSets (a Deployment) or ControllerRevisions (a StatefulSet, a DaemonSet), the one to go
//! back to, the workload as it would be on that revision, and where
//! the bad values came from — git (the checkout holds the current revision's values: the git
//! half edits them back), out of band (git holds the target's values: the cluster alone) — or
//! no manifest at all (the cluster alone, as `kubectl rollout undo` does it).
use serde_json::Value;

use crate::drift::{DriftItem, LiveObject, ObjectDrift};
use crate::manifest::{Config, ManifestObject, ObjectKey};

/// The annotation a Deployment and its ReplicaSets carry their revision in.
pub const REVISION: &str = "deployment.kubernetes.io/revision";
/// The label the Deployment controller adds to a ReplicaSet's template (not the user's).
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";

/// One revision of a workload: its number, the ReplicaSet holding it, its pod template.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    pub number: u64,
    pub name: String,
    /// The pod template as the workload's `spec.template` would say it (the controller's
    /// `pod-template-hash` label left out).
    pub template: Value,
}

/// Why a rollback is refused before anything is changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RollbackError {
    #[error(
        "{object} is paused (spec.paused): a rollback would not roll out; resume it first (kubectl rollout resume {object})"
    )]
    Paused { object: String },
    #[error("{object} has no revision before revision {current}: nothing to roll back to")]
    NoPrevious { object: String, current: u64 },
    #[error(
        "{object} has no revision {wanted} any more (revisionHistoryLimit keeps {kept}): its revisions are {have}"
    )]
    Gone {
        object: String,
        wanted: u64,
        kept: String,
        have: String,
    },
    #[error("{object} is already at revision {wanted}: nothing to roll back")]
    AtTarget { object: String, wanted: u64 },
    #[error("{object}'s current revision is not known (no revision of it yet)")]
    NoCurrent { object: String },
}

/// The revisions of `workload` among `history` (its ReplicaSets or ControllerRevisions; those
/// it controls), oldest first.
pub fn revisions_of(workload: &Value, history: &[Value]) -> Vec<Revision> {
    let uid = workload.pointer("/metadata/uid").and_then(Value::as_str);
    let mut out: Vec<Revision> = history
        .iter()
        .filter(|rs| {
            rs.pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .is_some_and(|owners| {
                    owners.iter().any(|o| {
                        o.get("controller") == Some(&Value::Bool(true))
                            && o.get("uid").and_then(Value::as_str) == uid
                    })
                })
        })
        .filter_map(|rs| {
            // A ControllerRevision holds its number and its template as a patch.
            let number = match rs.get("revision").and_then(Value::as_u64) {
                Some(number) => number,
                None => revision_number(rs)?,
            };
            let mut template = rs
                .pointer("/spec/template")
                .or_else(|| rs.pointer("/data/spec/template"))?
                .clone();
            if let Some(map) = template.as_object_mut() {
                map.remove("$patch");
            }
            if let Some(labels) = template
                .pointer_mut("/metadata/labels")
                .and_then(Value::as_object_mut)
            {
                labels.remove(POD_TEMPLATE_HASH);
            }
            Some(Revision {
                number,
                name: rs
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                template,
            })
        })
        .collect();
    out.sort_by_key(|r| r.number);
    out
}

/// The revision number an object's annotation says.
pub fn revision_number(object: &Value) -> Option<u64> {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(REVISION))
        .and_then(Value::as_str)
        .and_then(|n| n.parse().ok())
}

/// The workload's current revision: a Deployment's annotation says it; a StatefulSet's or
/// DaemonSet's is its newest ControllerRevision (an undo renumbers the old one as the newest).
pub fn current(workload: &Value, revisions: &[Revision]) -> Option<u64> {
    revision_number(workload).or_else(|| {
        (workload.get("kind").and_then(Value::as_str) != Some("Deployment"))
            .then(|| revisions.last().map(|r| r.number))
            .flatten()
    })
}

/// The revision to go back to: `wanted`, else the newest before the current one. Refused when
/// the workload is paused, the revision is gone or is the current one.
pub fn target<'r>(
    object: &str,
    workload: &Value,
    revisions: &'r [Revision],
    wanted: Option<u64>,
) -> Result<&'r Revision, RollbackError> {
    if workload.pointer("/spec/paused") == Some(&Value::Bool(true)) {
        return Err(RollbackError::Paused {
            object: object.to_owned(),
        });
    }
    let current = current(workload, revisions).ok_or_else(|| RollbackError::NoCurrent {
        object: object.to_owned(),
    })?;
    match wanted {
        Some(wanted) if wanted == current => Err(RollbackError::AtTarget {
            object: object.to_owned(),
            wanted,
        }),
        Some(wanted) => revisions
            .iter()
            .find(|r| r.number == wanted)
            .ok_or_else(|| RollbackError::Gone {
                object: object.to_owned(),
                wanted,
                kept: workload
                    .pointer("/spec/revisionHistoryLimit")
                    .map_or_else(|| "10".to_owned(), Value::to_string),
                have: revisions
                    .iter()
                    .map(|r| r.number.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        None => {
            revisions
                .iter()
                .rev()
                .find(|r| r.number < current)
                .ok_or(RollbackError::NoPrevious {
                    object: object.to_owned(),
                    current,
                })
        }
    }
}

/// `workload` as it would be on `revision`: its pod template replaced.
pub fn on_revision(workload: &Value, revision: &Revision) -> Value {
    let mut object = workload.clone();
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("template".into(), revision.template.clone());
    }
    object
}

/// Whether a drifted field lies in the pod template (what a rollback changes).
pub fn in_template(item: &DriftItem) -> bool {
    item.path.pointer().starts_with("/spec/template/")
}

/// Where the bad values came from, for the fields the rollback changes.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// The checkout holds the current revision's values: git brought them (its `drift`: the
    /// manifest against the target revision, the fields to write back).
    Git(ObjectDrift),
    /// The checkout holds the target revision's values: an out-of-band change (the fields
    /// to put back: `paths`, as `revert --field` names them).
    OutOfBand(Vec<String>),
    /// The checkout holds neither revision's value of these fields.
    Neither(Vec<String>),
}

/// What the rollback changes in the pod template: the template fields where the target
/// revision differs from live now (live against the target as desired state).
pub fn changes(key: &ObjectKey, target: &Value, live: &LiveObject, config: &Config) -> Vec<String> {
    crate::drift::compare_values(key, target, live, config)
        .items
        .iter()
        .filter(|i| i.class.is_drift() && in_template(i))
        .map(|i| i.path.to_string())
        .collect()
}

/// Where the values a rollback changes come from in `manifest`: compared with live now (the
/// current revision) and with the workload on the target revision.
pub fn origin(
    manifest: &ManifestObject,
    live: &LiveObject,
    target: &LiveObject,
    changed: &[String],
    config: &Config,
) -> Origin {
    let differs = |drift: &ObjectDrift, path: &String| {
        drift
            .items
            .iter()
            .any(|i| i.class.is_drift() && i.path.to_string() == *path)
    };
    let against_live = crate::drift::compare(manifest, live, config);
    let against_target = crate::drift::compare(manifest, target, config);
    if changed.iter().all(|p| !differs(&against_live, p)) {
        let mut drift = against_target;
        drift
            .items
            .retain(|i| i.class.is_drift() && changed.contains(&i.path.to_string()));
        return Origin::Git(drift);
    }
    if changed.iter().all(|p| !differs(&against_target, p)) {
        return Origin::OutOfBand(changed.to_vec());
    }
    Origin::Neither(
        changed
            .iter()
            .filter(|p| differs(&against_live, p) && differs(&against_target, p))
            .cloned()
            .collect(),
    )
}

/// `manifest` as git says it once the git half's edit is in: its body with `drift`'s fields at
/// their target values (each item's `live`; removed where the target has none). What the
/// cluster half applies, the edit having been proved to render it.
pub fn edited(manifest: &ManifestObject, drift: &ObjectDrift) -> ManifestObject {
    let mut body = manifest.body.to_value();
    for item in drift.items.iter().filter(|i| i.class.is_drift()) {
        match &item.live {
            Some(value) => {
                super::plan::put_path(&mut body, &item.path, value.clone());
            }
            None => super::plan::remove_path(&mut body, &item.path),
        }
    }
    let mut edited = manifest.clone();
    edited.body = crate::manifest::tree::Names::default().pack(&body);
    edited
}

/// The commit message of a rollback's git half: what it restores, and the commits that brought
/// the bad values (`(hash, subject)`).
pub fn commit_message(
    key: &ObjectKey,
    revision: u64,
    drift: &ObjectDrift,
    bad: &[(String, String)],
) -> String {
    let mut message = format!(
        "kdrift: roll back {}/{}/{} to revision {revision}\n\n",
        key.kind.to_ascii_lowercase(),
        key.namespace,
        key.name
    );
    for item in drift.items.iter().filter(|i| i.class.is_drift()) {
        message.push_str(&format!(
            "- {}: {} → {}\n",
            item.path,
            crate::drift::report::short_value(item.manifest.as_ref()),
            crate::drift::report::short_value(item.live.as_ref())
        ));
    }
    if !bad.is_empty() {
        message.push_str("\nThe values rolled back came with:\n");
        for (hash, subject) in bad {
            message.push_str(&format!("- {hash} {subject}\n"));
        }
    }
    message
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rs(name: &str, revision: u64, image: &str, uid: &str) -> Value {
        json!({
            "metadata": {"name": name, "annotations": {REVISION: revision.to_string()},
                "ownerReferences": [{"uid": uid, "controller": true, "kind": "Deployment"}]},
            "spec": {"template": {"metadata": {"labels": {"app": "web", POD_TEMPLATE_HASH: "abc"}},
                "spec": {"containers": [{"name": "web", "image": image}]}}}
        })
    }

    fn workload(revision: u64, paused: bool) -> Value {
        json!({"metadata": {"uid": "u1", "annotations": {REVISION: revision.to_string()}},
            "spec": {"paused": paused, "revisionHistoryLimit": 2}})
    }

    #[test]
    fn the_previous_revision_is_the_target_and_refusals_name_why() {
        let sets = vec![
            rs("web-3", 3, "web:3", "u1"),
            rs("web-1", 1, "web:1", "u1"),
            rs("other", 2, "x", "u2"),
        ];
        let revisions = revisions_of(&workload(3, false), &sets);
        assert_eq!(
            revisions.iter().map(|r| r.number).collect::<Vec<_>>(),
            [1, 3]
        );
        assert!(
            revisions[0].template["metadata"]["labels"]
                .get(POD_TEMPLATE_HASH)
                .is_none()
        );
        let previous = target("deployment/web", &workload(3, false), &revisions, None).unwrap();
        assert_eq!(previous.number, 1);
        assert!(matches!(
            target("deployment/web", &workload(3, true), &revisions, None),
            Err(RollbackError::Paused { .. })
        ));
        assert!(matches!(
            target("deployment/web", &workload(3, false), &revisions, Some(3)),
            Err(RollbackError::AtTarget { .. })
        ));
        let gone = target("deployment/web", &workload(3, false), &revisions, Some(2))
            .unwrap_err()
            .to_string();
        assert_eq!(
            gone,
            "deployment/web has no revision 2 any more (revisionHistoryLimit keeps 2): its revisions are 1, 3"
        );
        assert!(matches!(
            target("deployment/web", &workload(1, false), &revisions, None),
            Err(RollbackError::NoPrevious { .. })
        ));
    }

    #[test]
    fn a_controller_revision_holds_its_number_and_template_as_a_patch() {
        let sts = json!({"kind": "StatefulSet", "metadata": {"uid": "s1"}, "spec": {}});
        let revision = |n: u64, image: &str| {
            json!({"metadata": {"name": format!("db-{n}"),
                "ownerReferences": [{"uid": "s1", "controller": true}]},
                "revision": n,
                "data": {"spec": {"template": {"$patch": "replace",
                    "spec": {"containers": [{"name": "db", "image": image}]}}}}})
        };
        let revisions = revisions_of(&sts, &[revision(2, "db:2"), revision(1, "db:1")]);
        assert_eq!(revisions.len(), 2);
        assert_eq!(current(&sts, &revisions), Some(2));
        assert!(revisions[0].template.get("$patch").is_none());
        let previous = target("statefulset/db", &sts, &revisions, None).unwrap();
        assert_eq!(previous.template["spec"]["containers"][0]["image"], "db:1");
    }
}
