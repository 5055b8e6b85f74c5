//! The timeline lines `kdrift changes` reads from objects other than the changed object's own
//! `managedFields`: rollouts (a Deployment's ReplicaSets, a StatefulSet's or DaemonSet's
//! ControllerRevisions, each with what its pod template changed from the revision before),
//! Warning events, and GitOps syncs (an Argo CD Application's last operation, a Flux
//! Kustomization's last applied revision). Pure: the caller lists the objects.
use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::manifest::ObjectKey;

use super::changes::{Agrees, Change, template_change};

fn text_of(value: &Value, pointer: &str) -> Option<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The object's name as lines show it: `deployment/shop/web`.
pub fn object_name(value: &Value) -> String {
    ObjectKey::of_object(value, "").map_or_else(|| "(unnamed)".to_owned(), |k| k.to_string())
}

/// What a rollout's revisions are made of: ReplicaSets or ControllerRevisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revisions {
    ReplicaSets,
    ControllerRevisions,
}

impl Revisions {
    fn number(self, object: &Value) -> u64 {
        match self {
            Revisions::ReplicaSets => object
                .pointer("/metadata/annotations/deployment.kubernetes.io~1revision")
                .and_then(Value::as_str)
                .and_then(|r| r.parse().ok())
                .unwrap_or(0),
            Revisions::ControllerRevisions => {
                object.get("revision").and_then(Value::as_u64).unwrap_or(0)
            }
        }
    }

    /// The pod template of a revision, less what its controller adds to each revision (the
    /// `pod-template-hash` label; a ControllerRevision's `$patch: replace`).
    fn template(self, object: &Value) -> Value {
        let pointer = match self {
            Revisions::ReplicaSets => "/spec/template",
            Revisions::ControllerRevisions => "/data/spec/template",
        };
        let mut template = object.pointer(pointer).cloned().unwrap_or(Value::Null);
        if let Some(fields) = template.as_object_mut() {
            fields.remove("$patch");
        }
        if let Some(labels) = template
            .pointer_mut("/metadata/labels")
            .and_then(Value::as_object_mut)
        {
            labels.remove("pod-template-hash");
        }
        template
    }
}

/// The controller that makes an owner kind's revisions, as a line names it.
fn controller_of(owner: &str) -> String {
    match owner {
        "deployment" => "deployment-controller".to_owned(),
        "statefulset" => "statefulset-controller".to_owned(),
        "daemonset" => "daemonset-controller".to_owned(),
        other => format!("{other} controller"),
    }
}

/// The time `item`'s revision became the newest: its creation, unless its controller reused it
/// (`kubectl rollout undo`, `helm rollback`: the old ReplicaSet's revision annotation, or a
/// ControllerRevision's `revision`, written anew), then that write's `managedFields` time.
fn newest_since(item: &Value, revisions: Revisions) -> (Option<String>, bool) {
    let created = text_of(item, "/metadata/creationTimestamp");
    let owned = |entry: &Value| match revisions {
        Revisions::ReplicaSets => entry
            .pointer("/fieldsV1/f:metadata/f:annotations/f:deployment.kubernetes.io~1revision")
            .is_some(),
        Revisions::ControllerRevisions => entry.pointer("/fieldsV1/f:revision").is_some(),
    };
    let written = item
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .and_then(|entries| entries.iter().find(|e| owned(e)))
        .and_then(|e| text_of(e, "/time"));
    let reused = match revisions {
        Revisions::ReplicaSets => item
            .pointer("/metadata/annotations/deployment.kubernetes.io~1revision-history")
            .is_some(),
        // A ControllerRevision's data never changes: a later write of `revision` is a reuse.
        Revisions::ControllerRevisions => written.is_some() && written > created,
    };
    match (reused, written) {
        (true, Some(time)) => (Some(time), true),
        _ => (created, reused),
    }
}

/// The revisions a ReplicaSet held before its current one (`revision-history: "1,3"`).
fn history(item: &Value) -> Vec<u64> {
    text_of(
        item,
        "/metadata/annotations/deployment.kubernetes.io~1revision-history",
    )
    .map(|h| h.split(',').filter_map(|r| r.trim().parse().ok()).collect())
    .unwrap_or_default()
}

/// One time a revision became the newest of its workload.
struct Stint<'a> {
    time: Option<String>,
    /// `None` where the number it had is gone (a reused ControllerRevision's first).
    revision: Option<u64>,
    item: &'a Value,
    /// Its controller made an older revision the newest again.
    rollback: bool,
    /// Its time is a bound, not the moment: a reused ReplicaSet says only when its controller
    /// last wrote it (a later scale, or the scale-down of the rollout that followed).
    at_or_before: bool,
}

/// A workload's stints, from the revisions of one owner, in the order they became the newest.
/// A ReplicaSet keeps every number it held (`revision-history`), and numbers only grow: they
/// order its stints. A reused one is dated by its controller's last write of it, which may come
/// after the rollout that replaced it (that rollout scales it down): such a rollback is dated at
/// that rollout, the latest it can have happened. A ControllerRevision's data is never written
/// again, so its `revision` write dates its reuse: its stints go by time.
fn stints<'a>(list: &[&'a Value], revisions: Revisions) -> Vec<Stint<'a>> {
    let mut stints: Vec<Stint<'a>> = Vec::new();
    for &item in list {
        let revision = revisions.number(item);
        let (time, reused) = newest_since(item, revisions);
        if reused {
            let created = text_of(item, "/metadata/creationTimestamp");
            match revisions {
                // Each number it held before: the first when it was made, the others reuses.
                Revisions::ReplicaSets => {
                    for (i, held) in history(item).into_iter().enumerate() {
                        stints.push(Stint {
                            time: if i == 0 { created.clone() } else { None },
                            revision: Some(held),
                            item,
                            rollback: i > 0,
                            at_or_before: i > 0,
                        });
                    }
                }
                // The number it first held is gone; it first stood when it was made.
                Revisions::ControllerRevisions => stints.push(Stint {
                    time: created,
                    revision: None,
                    item,
                    rollback: false,
                    at_or_before: false,
                }),
            }
        }
        stints.push(Stint {
            time,
            revision: Some(revision),
            item,
            rollback: reused,
            at_or_before: reused && revisions == Revisions::ReplicaSets,
        });
    }
    match revisions {
        Revisions::ReplicaSets => {
            stints.sort_by_key(|s| s.revision);
            // From the newest back: a reuse is no later than the stint after it.
            let mut next: Option<String> = None;
            for stint in stints.iter_mut().rev() {
                if stint.at_or_before {
                    stint.time = match (stint.time.take(), &next) {
                        (Some(time), Some(next)) if time > *next => Some(next.clone()),
                        (None, next) => next.clone(),
                        (time, _) => time,
                    };
                }
                if stint.time.is_some() {
                    next.clone_from(&stint.time);
                }
            }
        }
        // RFC 3339 times of one server sort as text.
        Revisions::ControllerRevisions => {
            stints.sort_by(|a, b| a.time.cmp(&b.time).then(a.revision.cmp(&b.revision)));
        }
    }
    stints
}

/// A rollout line each time a revision became its workload's newest, in the order they did:
/// its owner (the workload), when (see [`newest_since`]), what its pod template changed from the
/// newest before it, and whether git agrees with the template it put live (`agrees`, given the
/// owner's key and the template). A rollback is named as one, dated as near when it happened as
/// the API still says (not when the revision it went back to was first made; see [`stints`]),
/// and the rollout it undid keeps its own predecessor: the reused revision as it first stood.
pub fn rollouts(
    items: &[Value],
    revisions: Revisions,
    agrees: &dyn Fn(&ObjectKey, &Value) -> Agrees,
    scaled_up: &ScaledUp,
) -> Vec<Change> {
    let mut by_owner: BTreeMap<(String, String), Vec<&Value>> = BTreeMap::new();
    for item in items {
        let controller = item
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .and_then(|refs| {
                refs.iter()
                    .find(|r| r.get("controller") == Some(&Value::Bool(true)))
            });
        let (kind, owner) = match controller {
            Some(r) => {
                let kind = text_of(r, "/kind").unwrap_or_default();
                let name = format!(
                    "{}/{}",
                    text_of(item, "/metadata/namespace").unwrap_or_default(),
                    text_of(r, "/name").unwrap_or_default()
                );
                (kind, name)
            }
            None => (String::new(), object_name(item)),
        };
        by_owner.entry((owner, kind)).or_default().push(item);
    }
    let mut out = Vec::new();
    for ((owner, kind), list) in by_owner {
        let mut stints = stints(&list, revisions);
        // A rollback dated by a bound: its scale-up from zero after the stint before it, when
        // the events still say it, is the moment.
        for i in 1..stints.len() {
            let after = stints[i - 1].time.clone();
            let stint = &mut stints[i];
            if !stint.at_or_before {
                continue;
            }
            let (Some(after), Some(until)) = (after, stint.time.clone()) else {
                continue;
            };
            if let Some(at) = scaled_up.first_between(stint.item, &after, &until) {
                stint.time = Some(at);
                stint.at_or_before = false;
            }
        }
        let (owner_line, owner_key) = if kind.is_empty() {
            (owner.clone(), None)
        } else {
            let (ns, name) = owner.split_once('/').unwrap_or(("", &owner));
            (
                format!("{}/{owner}", kind.to_ascii_lowercase()),
                Some(ObjectKey::new("apps", &kind, ns, name)),
            )
        };
        for (i, stint) in stints.iter().enumerate() {
            let template = revisions.template(stint.item);
            let name = object_name(stint.item);
            let revision = stint.revision.map_or_else(
                || "an earlier revision".to_owned(),
                |r| format!("revision {r}"),
            );
            let what = match i.checked_sub(1).and_then(|p| stints.get(p)) {
                Some(before) => {
                    let change = template_change(&revisions.template(before.item), &template);
                    if stint.rollback {
                        // The number it first held, whose template it still is.
                        let first = history(stint.item).first().copied();
                        format!(
                            "rollback to {revision} ({name}, the template of {}{}): {change}",
                            first.map_or_else(
                                || "an earlier revision".to_owned(),
                                |r| format!("revision {r}")
                            ),
                            if stint.at_or_before {
                                "; at or before this time"
                            } else {
                                ""
                            }
                        )
                    } else {
                        format!("rollout to {revision} ({name}): {change}")
                    }
                }
                None if stint.revision.is_some_and(|r| r <= 1) => {
                    format!("first {revision} ({name})")
                }
                None => format!("{revision} ({name}), the oldest kept"),
            };
            let git = owner_key
                .as_ref()
                .map_or(Agrees::NotInGit, |key| agrees(key, &template));
            out.push(Change {
                time: stint.time.clone(),
                object: owner_line.clone(),
                who: controller_of(&kind.to_ascii_lowercase()),
                what,
                git,
                writer: None,
            });
        }
    }
    out
}

/// When each ReplicaSet was scaled up from zero, as its Deployment's events say (`Scaled up
/// replica set web-5d8 from 0 to 2`): the moment a rollback made an old one the newest again,
/// which its own managedFields no longer tell once it is scaled again. Events last an hour by
/// default; without one a rollback keeps its bound (`at or before this time`).
#[derive(Debug, Default)]
pub struct ScaledUp(HashMap<(String, String), Vec<String>>);

impl ScaledUp {
    /// From a list of events (any kinds; the others are passed over).
    pub fn from_events(items: &[Value]) -> ScaledUp {
        let mut times: HashMap<(String, String), Vec<String>> = HashMap::new();
        for event in items {
            if text_of(event, "/reason").as_deref() != Some("ScalingReplicaSet") {
                continue;
            }
            let message = text_of(event, "/message").unwrap_or_default();
            let Some((name, _)) = message
                .strip_prefix("Scaled up replica set ")
                .and_then(|rest| rest.split_once(" from 0 to "))
            else {
                continue;
            };
            let namespace = text_of(event, "/involvedObject/namespace").unwrap_or_default();
            let at = times.entry((namespace, name.to_owned())).or_default();
            // An aggregated event keeps its first and its last time; an events/v1 time has
            // microseconds, cut to the second as the other times of the timeline are (so that
            // they sort as text with them).
            for pointer in [
                "/firstTimestamp",
                "/lastTimestamp",
                "/eventTime",
                "/series/lastObservedTime",
            ] {
                at.extend(text_of(event, pointer).map(|t| match t.split_once('.') {
                    Some((second, _)) => format!("{second}Z"),
                    None => t,
                }));
            }
        }
        for at in times.values_mut() {
            at.sort();
            at.dedup();
        }
        ScaledUp(times)
    }

    /// The first scale-up of `item` (a ReplicaSet) from zero after `after` and no later than
    /// `until` (RFC 3339 times of one server sort as text).
    fn first_between(&self, item: &Value, after: &str, until: &str) -> Option<String> {
        let key = (
            text_of(item, "/metadata/namespace").unwrap_or_default(),
            text_of(item, "/metadata/name").unwrap_or_default(),
        );
        self.0
            .get(&key)?
            .iter()
            .find(|t| t.as_str() >= after && t.as_str() <= until)
            .cloned()
    }
}

/// A line per Warning event, and per trace kdrift left of a revert (a `Normal` event reported by
/// `kdrift`, which names who asked): its object, reason and message, at its last time.
pub fn warnings(items: &[Value]) -> Vec<Change> {
    let kdrift = |e: &Value| {
        text_of(e, "/reportingComponent").as_deref() == Some("kdrift")
            // (The component `cluster::revert::Reverter::record` reports as.)
            || text_of(e, "/source/component").as_deref() == Some("kdrift")
    };
    items
        .iter()
        .filter(|e| e.get("type").and_then(Value::as_str) == Some("Warning") || kdrift(e))
        .map(|e| {
            let time = text_of(e, "/lastTimestamp")
                .or_else(|| text_of(e, "/series/lastObservedTime"))
                .or_else(|| text_of(e, "/eventTime"))
                .or_else(|| text_of(e, "/metadata/creationTimestamp"));
            let object = format!(
                "{}/{}/{}",
                text_of(e, "/involvedObject/kind")
                    .unwrap_or_default()
                    .to_ascii_lowercase(),
                text_of(e, "/involvedObject/namespace").unwrap_or_default(),
                text_of(e, "/involvedObject/name").unwrap_or_default()
            );
            let who = text_of(e, "/source/component")
                .or_else(|| text_of(e, "/reportingComponent"))
                .unwrap_or_else(|| "(unknown)".to_owned());
            Change {
                time,
                object,
                who,
                what: format!(
                    "{} {}: {}",
                    text_of(e, "/type").unwrap_or_default(),
                    text_of(e, "/reason").unwrap_or_default(),
                    text_of(e, "/message").unwrap_or_default()
                ),
                git: Agrees::NoField,
                writer: None,
            }
        })
        .collect()
}

/// Whether `object` is a GitOps owner whose syncs make lines: an Argo CD Application or a Flux
/// Kustomization (by apiVersion group and kind).
pub fn is_sync_kind(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("argoproj.io", "Application") | ("kustomize.toolkit.fluxcd.io", "Kustomization")
    )
}

/// The sync line of an Argo CD Application (its last operation: `finishedAt`, the revision it
/// synced, its phase and message) or a Flux Kustomization (its `lastAppliedRevision`, at the
/// time of its Ready condition, with that condition's status and message). `None` for another
/// object, or one that has not synced.
pub fn sync_line(object: &Value) -> Option<Change> {
    let group = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .and_then(|v| v.rsplit_once('/'))
        .map_or("", |(g, _)| g);
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let short = |revision: String| revision.chars().take(12).collect::<String>();
    match (group, kind) {
        ("argoproj.io", "Application") => {
            let op = object.pointer("/status/operationState")?;
            let revision = text_of(op, "/syncResult/revision")
                .or_else(|| text_of(op, "/operation/sync/revision"))
                .unwrap_or_else(|| "(no revision)".to_owned());
            let phase = text_of(op, "/phase").unwrap_or_default();
            let message = text_of(op, "/message").unwrap_or_default();
            let automated = op
                .pointer("/operation/initiatedBy/automated")
                .and_then(Value::as_bool)
                == Some(true);
            Some(Change {
                time: text_of(op, "/finishedAt").or_else(|| text_of(op, "/startedAt")),
                object: object_name(object),
                who: "argocd-application-controller".to_owned(),
                what: format!(
                    "{}sync to revision {}: {phase}{}",
                    if automated { "automated " } else { "" },
                    short(revision),
                    if message.is_empty() {
                        String::new()
                    } else {
                        format!(" ({message})")
                    }
                ),
                git: Agrees::NoField,
                writer: None,
            })
        }
        ("kustomize.toolkit.fluxcd.io", "Kustomization") => {
            let revision = text_of(object, "/status/lastAppliedRevision")?;
            let ready = object
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .and_then(|c| c.iter().find(|c| c.get("type") == Some(&"Ready".into())));
            let status = ready
                .and_then(|r| text_of(r, "/status"))
                .unwrap_or_default();
            let message = ready
                .and_then(|r| text_of(r, "/message"))
                .unwrap_or_default();
            Some(Change {
                time: ready.and_then(|r| text_of(r, "/lastTransitionTime")),
                object: object_name(object),
                who: "kustomize-controller".to_owned(),
                what: format!("applied revision {revision} (Ready={status}: {message})"),
                git: Agrees::NoField,
                writer: None,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn revision(owner: &str, n: u64, image: &str, created: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": format!("{owner}-{n}"), "namespace": "payments",
                "creationTimestamp": created,
                "ownerReferences": [{"kind": "StatefulSet", "name": owner, "controller": true}]},
            "revision": n,
            "data": {"spec": {"template": {"$patch": "replace",
                "metadata": {"labels": {"app": owner}},
                "spec": {"containers": [{"name": "db", "image": image}]}}}}})
    }

    #[test]
    fn a_statefulsets_revisions_are_rollout_lines_with_the_image_they_changed() {
        let items = [
            revision("ledger-db", 2, "postgres:16.3", "2026-01-01T11:00:00Z"),
            revision("ledger-db", 1, "postgres:16.2", "2026-01-01T10:00:00Z"),
        ];
        let lines = rollouts(
            &items,
            Revisions::ControllerRevisions,
            &|_, _| Agrees::NotInGit,
            &ScaledUp::default(),
        );
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].object, "statefulset/payments/ledger-db");
        assert_eq!(lines[1].who, "statefulset-controller");
        assert_eq!(
            lines[1].what,
            "rollout to revision 2 (controllerrevision/payments/ledger-db-2): db image postgres:16.2 → postgres:16.3"
        );
        assert_eq!(lines[1].time.as_deref(), Some("2026-01-01T11:00:00Z"));
        assert!(lines[0].what.starts_with("first revision 1"));
    }

    /// A ReplicaSet of Deployment repro/d, made and last written by its controller at those
    /// seconds past 10:00.
    fn replicaset(
        (name, revision, history): (&str, &str, Option<&str>),
        image: &str,
        (made, written): (u32, u32),
    ) -> Value {
        let at = |s: u32| format!("2026-01-01T10:00:{s:02}Z");
        let (created, written) = (at(made), at(written));
        let mut annotations = json!({"deployment.kubernetes.io/revision": revision});
        if let Some(history) = history {
            annotations["deployment.kubernetes.io/revision-history"] = json!(history);
        }
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": "repro", "creationTimestamp": created,
                "annotations": annotations,
                "ownerReferences": [{"kind": "Deployment", "name": "d", "controller": true}],
                "managedFields": [{"manager": "kube-controller-manager", "operation": "Update",
                    "time": written, "fieldsV1": {"f:metadata": {"f:annotations": {
                        "f:deployment.kubernetes.io/revision": {}}}, "f:spec": {"f:replicas": {}}}}]},
            "spec": {"template": {"metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "nginx", "image": image}]}}}})
    }

    #[test]
    fn a_rollback_a_later_rollout_scaled_down_stays_before_it_and_each_rollout_has_its_predecessor()
    {
        // nginx:1.0 (revision 1, d-a) at 10:00:00, 2.0 (d-b) at :10, back to 1.0 at :20 (d-a
        // reused as revision 3), 3.0 (d-c) at :30; d-c's rollout scaled d-a down at :32, its
        // controller's last write of it.
        let items = [
            replicaset(("d-a", "3", Some("1")), "nginx:1.0", (0, 32)),
            replicaset(("d-b", "2", None), "nginx:2.0", (10, 32)),
            replicaset(("d-c", "4", None), "nginx:3.0", (30, 32)),
        ];
        let lines = rollouts(
            &items,
            Revisions::ReplicaSets,
            &|_, _| Agrees::NotInGit,
            &ScaledUp::default(),
        );
        let whats: Vec<(&str, &str)> = lines
            .iter()
            .map(|l| (l.time.as_deref().unwrap(), l.what.as_str()))
            .collect();
        assert_eq!(
            whats,
            [
                (
                    "2026-01-01T10:00:00Z",
                    "first revision 1 (replicaset/repro/d-a)"
                ),
                (
                    "2026-01-01T10:00:10Z",
                    "rollout to revision 2 (replicaset/repro/d-b): nginx image nginx:1.0 → nginx:2.0"
                ),
                (
                    "2026-01-01T10:00:30Z",
                    "rollback to revision 3 (replicaset/repro/d-a, the template of revision 1; at or before this time): nginx image nginx:2.0 → nginx:1.0"
                ),
                (
                    "2026-01-01T10:00:30Z",
                    "rollout to revision 4 (replicaset/repro/d-c): nginx image nginx:1.0 → nginx:3.0"
                ),
            ]
        );
        // Still the newest: its last write bounds it (a later scale moves that write too).
        let items = [
            replicaset(("d-a", "3", Some("1")), "nginx:1.0", (0, 26)),
            replicaset(("d-b", "2", None), "nginx:2.0", (10, 22)),
        ];
        let lines = rollouts(
            &items,
            Revisions::ReplicaSets,
            &|_, _| Agrees::NotInGit,
            &ScaledUp::default(),
        );
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2].time.as_deref(), Some("2026-01-01T10:00:26Z"));
        assert!(
            lines[2].what.starts_with("rollback to revision 3 ("),
            "{lines:?}"
        );
        // Its Deployment's events still say when the rollback scaled it up from zero (one event
        // for both scale-ups from zero: at its making and at :20); the scale of :26 is not one.
        let event = |message: &str, first: u32, last: u32| {
            json!({"reason": "ScalingReplicaSet", "message": message,
                "involvedObject": {"kind": "Deployment", "namespace": "repro", "name": "d"},
                "firstTimestamp": format!("2026-01-01T10:00:{first:02}Z"),
                "lastTimestamp": format!("2026-01-01T10:00:{last:02}Z")})
        };
        let events = [
            event("Scaled up replica set d-a from 0 to 1", 0, 20),
            event("Scaled up replica set d-b from 0 to 1", 10, 10),
            event("Scaled up replica set d-a from 1 to 2", 26, 26),
        ];
        let lines = rollouts(
            &items,
            Revisions::ReplicaSets,
            &|_, _| Agrees::NotInGit,
            &ScaledUp::from_events(&events),
        );
        assert_eq!(lines[2].time.as_deref(), Some("2026-01-01T10:00:20Z"));
        assert_eq!(
            lines[2].what,
            "rollback to revision 3 (replicaset/repro/d-a, the template of revision 1): nginx image nginx:2.0 → nginx:1.0"
        );
        assert_eq!(lines[0].time.as_deref(), Some("2026-01-01T10:00:00Z"));
        // An events/v1 event's time (microseconds) is cut to the second, as the others are.
        let new_style = json!({"reason": "ScalingReplicaSet",
            "message": "Scaled up replica set d-a from 0 to 1",
            "involvedObject": {"kind": "Deployment", "namespace": "repro", "name": "d"},
            "eventTime": "2026-01-01T10:00:20.345678Z"});
        let at = ScaledUp::from_events(&[new_style]).first_between(
            &items[0],
            "2026-01-01T10:00:10Z",
            "2026-01-01T10:00:26Z",
        );
        assert_eq!(at.as_deref(), Some("2026-01-01T10:00:20Z"));
    }

    #[test]
    fn a_statefulset_rollback_is_dated_by_its_revision_write_and_said_as_one() {
        // ledger-db-1 was made at 10:00 (revision 1), ledger-db-2 at 11:00; at 12:00 a rollback
        // wrote revision 3 into ledger-db-1 (a ControllerRevision's data never changes).
        let mut first = revision("ledger-db", 3, "postgres:16.2", "2026-01-01T10:00:00Z");
        first["metadata"]["managedFields"] = json!([{"manager": "kube-controller-manager",
            "operation": "Update", "time": "2026-01-01T12:00:00Z",
            "fieldsV1": {"f:revision": {}, "f:data": {}}}]);
        let items = [
            first,
            revision("ledger-db", 2, "postgres:16.3", "2026-01-01T11:00:00Z"),
        ];
        let lines = rollouts(
            &items,
            Revisions::ControllerRevisions,
            &|_, _| Agrees::NotInGit,
            &ScaledUp::default(),
        );
        let whats: Vec<(&str, &str)> = lines
            .iter()
            .map(|l| (l.time.as_deref().unwrap(), l.what.as_str()))
            .collect();
        assert_eq!(whats.len(), 3, "{whats:?}");
        assert_eq!(whats[0].0, "2026-01-01T10:00:00Z");
        assert!(
            whats[0]
                .1
                .starts_with("an earlier revision (controllerrevision/payments/ledger-db-3)"),
            "{whats:?}"
        );
        assert_eq!(whats[1].0, "2026-01-01T11:00:00Z");
        assert!(
            whats[1].1.starts_with("rollout to revision 2 (")
                && whats[1]
                    .1
                    .ends_with("db image postgres:16.2 → postgres:16.3"),
            "{whats:?}"
        );
        assert_eq!(whats[2].0, "2026-01-01T12:00:00Z");
        assert!(
            whats[2].1.starts_with("rollback to revision 3 (")
                && whats[2]
                    .1
                    .ends_with("db image postgres:16.3 → postgres:16.2"),
            "{whats:?}"
        );
    }

    #[test]
    fn argo_and_flux_syncs_are_lines_with_their_revision_and_time() {
        let app = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "shop", "namespace": "argocd"},
            "status": {"operationState": {"phase": "Succeeded",
                "message": "successfully synced (all tasks run)",
                "finishedAt": "2026-01-01T12:00:00Z",
                "operation": {"initiatedBy": {"automated": true}},
                "syncResult": {"revision": "0123456789abcdef0123"}}}});
        let line = sync_line(&app).unwrap();
        assert_eq!(line.object, "application/argocd/shop");
        assert_eq!(line.who, "argocd-application-controller");
        assert_eq!(
            line.what,
            "automated sync to revision 0123456789ab: Succeeded (successfully synced (all tasks run))"
        );
        assert_eq!(line.time.as_deref(), Some("2026-01-01T12:00:00Z"));
        let ks = json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "platform", "namespace": "flux-system"},
            "status": {"lastAppliedRevision": "main@sha1:abc",
                "conditions": [{"type": "Ready", "status": "True",
                    "message": "Applied revision: main@sha1:abc",
                    "lastTransitionTime": "2026-01-01T12:05:00Z"}]}});
        let line = sync_line(&ks).unwrap();
        assert_eq!(line.who, "kustomize-controller");
        assert_eq!(
            line.what,
            "applied revision main@sha1:abc (Ready=True: Applied revision: main@sha1:abc)"
        );
        assert_eq!(line.time.as_deref(), Some("2026-01-01T12:05:00Z"));
        // A sync names no field: no word of git beside it (not "not in git").
        assert_eq!(line.git, Agrees::NoField);
        assert!(line.to_json().get("git").is_none(), "{}", line.to_json());
        assert!(sync_line(&json!({"apiVersion": "v1", "kind": "ConfigMap"})).is_none());
        let event = json!({"type": "Warning", "reason": "BackOff", "message": "Back-off",
            "involvedObject": {"kind": "Pod", "namespace": "shop", "name": "web-1"},
            "lastTimestamp": "2026-01-01T12:06:00Z", "source": {"component": "kubelet"}});
        let lines = warnings(&[event]);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].git, Agrees::NoField);
        assert!(is_sync_kind("argoproj.io", "Application"));
    }
}
