//! The detail of one workload, assembled from the cache for the screen: its revisions
//! (ReplicaSets of a Deployment, ControllerRevisions of a StatefulSet or DaemonSet, with what
//! changed from the previous one), pods, recent events, conditions.
use std::collections::{BTreeMap, BTreeSet};

use super::cache::{ClusterCache, WorkloadEntry};
use crate::cluster::rows::{EventRow, KindFacts, PodRow, ReplicaSetRow, WorkloadKind};
use crate::manifest::ObjectKey;

/// Events shown in the detail view, newest first.
pub const RECENT_EVENTS: usize = 12;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision<'a> {
    /// A ReplicaSet of a Deployment, or a ControllerRevision of a StatefulSet or DaemonSet.
    pub rs: &'a ReplicaSetRow,
    /// Its pods wanted and ready: the ReplicaSet's own counts; for a ControllerRevision (which
    /// has none), its pods counted.
    pub desired: i32,
    pub ready: i32,
    /// The revision the workload rolls out (pods are updated to it).
    pub current: bool,
    pub images: Vec<&'a str>,
    /// What this revision changed from the one before it (`image web: web:1 → web:2`).
    pub changes: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Detail<'a> {
    pub deployment: &'a WorkloadEntry,
    /// Newest revision first.
    pub revisions: Vec<Revision<'a>>,
    /// Newest first for a Deployment; by ordinal for a StatefulSet, by node for a DaemonSet.
    pub pods: Vec<&'a PodRow>,
    pub events: Vec<&'a EventRow>,
}

fn is_ready(p: &PodRow) -> bool {
    p.phase == "Running" && p.ready_containers == p.containers && !p.deleting
}

/// Whether `pod` was made from the ControllerRevision `rs` of `owner`: a StatefulSet's pods are
/// labelled with the revision's name, a DaemonSet's with its hash (the name's suffix).
fn of_revision(pod: &PodRow, rs: &ReplicaSetRow, owner: &str) -> bool {
    pod.revision_hash.as_deref().is_some_and(|hash| {
        *rs.key.name == *hash
            || rs
                .key
                .name
                .strip_prefix(owner)
                .and_then(|rest| rest.strip_prefix('-'))
                == Some(hash)
    })
}

/// The ordinal of a StatefulSet's pod (`db-2` → 2).
fn ordinal(pod: &PodRow) -> Option<u32> {
    pod.key.name.rsplit_once('-')?.1.parse().ok()
}

pub fn detail<'a>(cache: &'a ClusterCache, key: &ObjectKey) -> Option<Detail<'a>> {
    let deployment = cache.workloads.get(key)?;
    let kind = deployment.row.kind();
    let owned = |owner: &Option<String>| owner.as_deref() == Some(key.name.as_ref());
    let source = match kind {
        WorkloadKind::Deployment => &cache.replicasets,
        WorkloadKind::StatefulSet | WorkloadKind::DaemonSet => &cache.revisions,
    };
    let mut sets: Vec<&ReplicaSetRow> = source
        .in_namespace(&key.namespace)
        .filter(|rs| rs.owner_kind == kind && owned(&rs.owner))
        .collect();
    sets.sort_by_key(|rs| rs.revision.unwrap_or(0));
    let rs_names: BTreeSet<&str> = sets.iter().map(|rs| rs.key.name.as_ref()).collect();
    let mut pods: Vec<&PodRow> = cache
        .pods
        .in_namespace(&key.namespace)
        .filter(|p| {
            p.owner_kind == Some(kind)
                && match kind {
                    WorkloadKind::Deployment => {
                        p.owner.as_deref().is_some_and(|o| rs_names.contains(o))
                    }
                    _ => owned(&p.owner),
                }
        })
        .collect();
    match kind {
        // Newest first; a creation time has whole seconds, so of pods made in the same second
        // the newer revision's come first (a rollout's first pod beside a replaced old one).
        WorkloadKind::Deployment => {
            let revision = |p: &PodRow| {
                sets.iter()
                    .find(|rs| Some(rs.key.name.as_ref()) == p.owner.as_deref())
                    .and_then(|rs| rs.revision)
            };
            pods.sort_by(|a, b| {
                b.created
                    .cmp(&a.created)
                    .then_with(|| revision(b).cmp(&revision(a)))
                    .then_with(|| a.key.name.cmp(&b.key.name))
            })
        }
        WorkloadKind::StatefulSet => pods.sort_by_key(|p| (ordinal(p), p.key.name.clone())),
        WorkloadKind::DaemonSet => pods.sort_by(|a, b| {
            a.node
                .cmp(&b.node)
                .then_with(|| a.key.name.cmp(&b.key.name))
        }),
    }
    let update_revision = match &deployment.row.facts {
        KindFacts::StatefulSet(f) => Some(f.update_revision.as_str()),
        _ => None,
    };
    let newest = sets.last().map(|rs| rs.key.name.clone());
    let mut revisions: Vec<Revision> = Vec::with_capacity(sets.len());
    for (i, rs) in sets.iter().enumerate() {
        let changes = match i.checked_sub(1).and_then(|p| sets.get(p)) {
            Some(prev) => template_changes(&prev.template, &rs.template),
            None => Vec::new(),
        };
        let images = rs
            .template
            .iter()
            .filter(|(k, _)| k.starts_with("image "))
            .map(|(_, v)| v.as_str())
            .collect();
        let (desired, ready, current) = match kind {
            WorkloadKind::Deployment => (
                rs.desired,
                rs.ready,
                deployment.row.revision.is_some() && rs.revision == deployment.row.revision,
            ),
            _ => {
                let of_it: Vec<&&PodRow> = pods
                    .iter()
                    .filter(|p| of_revision(p, rs, &key.name))
                    .collect();
                let current = match update_revision {
                    Some(update) => *rs.key.name == *update,
                    None => newest.as_ref() == Some(&rs.key.name),
                };
                (
                    of_it.len() as i32,
                    of_it.iter().filter(|p| is_ready(p)).count() as i32,
                    current,
                )
            }
        };
        revisions.push(Revision {
            rs,
            desired,
            ready,
            current,
            images,
            changes,
        });
    }
    revisions.reverse();
    let pod_names: BTreeSet<&str> = pods.iter().map(|p| p.key.name.as_ref()).collect();
    let mut events: Vec<&EventRow> = cache
        .events
        .in_namespace(&key.namespace)
        .filter(|e| match e.involved_kind.as_str() {
            "ReplicaSet" => rs_names.contains(e.involved_name.as_str()),
            "Pod" => pod_names.contains(e.involved_name.as_str()),
            involved => involved == kind.kind() && *e.involved_name == *key.name,
        })
        .collect();
    events.sort_by_key(|e| std::cmp::Reverse(e.last_seen));
    events.truncate(RECENT_EVENTS);
    Some(Detail {
        deployment,
        revisions,
        pods,
        events,
    })
}

/// Why the pods of each stalled row are not ready, from the pods listed for it (`None` when
/// they could not be listed, or nothing is wrong with them): `Message::StallsExplained`.
pub fn explain_stalls(
    stalled: Vec<super::Stalled>,
    pods: Vec<(ObjectKey, Option<Vec<PodRow>>)>,
) -> Vec<(ObjectKey, Option<String>)> {
    stalled
        .into_iter()
        .zip(pods)
        .map(|(s, (_, pods))| {
            let why = pods.and_then(|pods| {
                let pods: Vec<&PodRow> = pods.iter().collect();
                why_not_ready(s.desired, s.ready, &pods)
            });
            (s.key, why)
        })
        .collect()
}

/// One line on why pods are not ready, from those that are not: `2 pods Pending: Insufficient
/// memory`, `1 pod CrashLoopBackOff: last exit 1 (Error)`, `1 pod ImagePullBackOff: image
/// web:bad`; several causes joined by `; `. While ready < desired every cause counts; once
/// enough pods are ready (a rolling update keeps the old ones), only failures do, not pods that
/// are merely starting. None when nothing is wrong.
pub fn why_not_ready(desired: i32, ready: i32, pods: &[&PodRow]) -> Option<String> {
    let short = ready < desired;
    // (state, cause) → pods, in the order first seen.
    let mut groups: Vec<((String, String), usize)> = Vec::new();
    for pod in pods.iter().filter(|p| !p.deleting) {
        if pod.phase == "Running" && pod.ready_containers == pod.containers && pod.reason.is_none()
        {
            continue;
        }
        let state = match pod.reason.as_deref() {
            Some("Unschedulable") | None if pod.phase == "Pending" => "Pending".to_owned(),
            Some(reason) => reason.to_owned(),
            None => "not ready".to_owned(),
        };
        let starting = matches!(
            state.as_str(),
            "ContainerCreating" | "PodInitializing" | "not ready"
        ) || (state == "Pending" && pod.why.is_none());
        if starting && !short {
            continue;
        }
        let cause = pod_cause(pod);
        let group = (state, cause);
        match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, count)) => *count += 1,
            None => groups.push((group, 1)),
        }
    }
    if groups.is_empty() {
        return None;
    }
    let parts: Vec<String> = groups
        .into_iter()
        .map(|((state, cause), count)| {
            let pods = if count == 1 { "pod" } else { "pods" };
            match cause.is_empty() {
                true => format!("{count} {pods} {state}"),
                false => format!("{count} {pods} {state}: {cause}"),
            }
        })
        .collect();
    Some(parts.join("; "))
}

/// A pod's cause in a few words: the scheduler's reasons without their node counts, the image
/// of a failing pull, the last exit of a crashing container.
fn pod_cause(pod: &PodRow) -> String {
    if let Some(why) = &pod.why {
        if let Some(reasons) = scheduling_reasons(why) {
            return reasons;
        }
        if let Some(image) = why.strip_prefix("image ") {
            let image = image.split(": ").next().unwrap_or(image);
            return format!("image {image}");
        }
    }
    match &pod.last_exit {
        Some(exit) => match &exit.reason {
            Some(reason) => format!("last exit {} ({reason})", exit.exit_code),
            None => format!("last exit {}", exit.exit_code),
        },
        None => String::new(),
    }
}

/// `0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient memory. preemption:
/// …` → `node(s) were unschedulable, Insufficient memory`.
pub fn scheduling_reasons(message: &str) -> Option<String> {
    let (_, rest) = message.split_once("nodes are available: ")?;
    let reasons = rest
        .split(". ")
        .next()
        .unwrap_or(rest)
        .trim_end_matches('.');
    let reasons: Vec<&str> = reasons
        .split(", ")
        .map(|r| {
            r.trim_start_matches(|c: char| c.is_ascii_digit())
                .trim_start()
        })
        .filter(|r| !r.is_empty())
        .collect();
    (!reasons.is_empty()).then(|| reasons.join(", "))
}

/// The template facts that differ between two revisions, one line each.
pub fn template_changes(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in after {
        match before.get(k) {
            Some(old) if old == v => {}
            Some(old) => out.push(format!("{k}: {old} → {v}")),
            None => out.push(format!("+ {k}: {v}")),
        }
    }
    for (k, old) in before {
        if !after.contains_key(k) {
            out.push(format!("- {k}: {old}"));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn facts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn changes_list_changed_added_and_removed_facts() {
        let before = facts(&[
            ("image web", "web:1"),
            ("env web A", "1"),
            ("limits web cpu", "1"),
        ]);
        let after = facts(&[
            ("image web", "web:2"),
            ("env web A", "1"),
            ("env web B", "2"),
        ]);
        assert_eq!(
            template_changes(&before, &after),
            [
                "+ env web B: 2",
                "image web: web:1 → web:2",
                "- limits web cpu: 1"
            ]
        );
    }

    fn pod(name: &str, spec: serde_json::Value, status: serde_json::Value) -> PodRow {
        let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "shop"},
            "spec": spec,
            "status": status,
        }))
        .unwrap();
        PodRow::from_object(&pod)
    }

    fn web(image: &str) -> serde_json::Value {
        serde_json::json!({"containers": [{"name": "web", "image": image}]})
    }

    fn unschedulable(name: &str) -> PodRow {
        pod(
            name,
            web("web:1"),
            serde_json::json!({"phase": "Pending", "conditions": [{
                "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                "message": "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
            }]}),
        )
    }

    #[test]
    fn pending_pods_say_the_schedulers_reasons_without_node_counts() {
        let a = unschedulable("web-a");
        let b = unschedulable("web-b");
        assert_eq!(a.reason.as_deref(), Some("Unschedulable"));
        assert!(
            a.why
                .as_deref()
                .unwrap()
                .starts_with("0/3 nodes are available")
        );
        assert_eq!(a.node, None);
        assert_eq!(
            why_not_ready(5, 3, &[&a, &b]).as_deref(),
            Some("2 pods Pending: node(s) were unschedulable, Insufficient memory")
        );
        let starting = pod(
            "web-e",
            web("web:1"),
            serde_json::json!({"phase": "Pending", "containerStatuses": [{
                "name": "web", "image": "web:1", "imageID": "", "ready": false, "restartCount": 0,
                "state": {"waiting": {"reason": "ContainerCreating"}}
            }]}),
        );
        assert_eq!(
            why_not_ready(5, 4, &[&starting]).as_deref(),
            Some("1 pod ContainerCreating")
        );
        assert_eq!(
            why_not_ready(5, 5, &[&starting]),
            None,
            "enough pods ready: a starting pod is no trouble"
        );
        assert_eq!(
            why_not_ready(5, 5, &[&a]).as_deref(),
            Some("1 pod Pending: node(s) were unschedulable, Insufficient memory"),
            "a rolling update that cannot schedule its new pod"
        );
    }

    #[test]
    fn a_crash_loop_says_its_last_exit_and_a_failed_pull_its_image() {
        let crashing = pod(
            "web-c",
            serde_json::json!({"nodeName": "demo-node-2", "containers": [{"name": "web", "image": "web:crash"}]}),
            serde_json::json!({"phase": "Running", "containerStatuses": [{
                "name": "web", "image": "web:crash", "imageID": "", "ready": false, "restartCount": 4,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s restarting failed container=web pod=web-c_shop"}},
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": "2026-11-24T10:00:00Z"}}
            }]}),
        );
        assert_eq!(crashing.node.as_deref(), Some("demo-node-2"));
        let exit = crashing.last_exit.clone().unwrap();
        assert_eq!((exit.container.as_str(), exit.exit_code), ("web", 1));
        let pulling = pod(
            "web-d",
            web("registry.example/web:nope"),
            serde_json::json!({"phase": "Pending", "containerStatuses": [{
                "name": "web", "image": "registry.example/web:nope", "imageID": "", "ready": false, "restartCount": 0,
                "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image \"registry.example/web:nope\""}}
            }]}),
        );
        assert_eq!(
            pulling.why.as_deref(),
            Some(
                "image registry.example/web:nope: Back-off pulling image \"registry.example/web:nope\""
            )
        );
        assert_eq!(
            why_not_ready(3, 1, &[&crashing, &pulling]).as_deref(),
            Some(
                "1 pod CrashLoopBackOff: last exit 1 (Error); 1 pod ImagePullBackOff: image registry.example/web:nope"
            )
        );
    }
}
