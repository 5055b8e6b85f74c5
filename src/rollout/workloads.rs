//! Rollout phases of StatefulSets and DaemonSets (pure), from the status their controllers
//! publish, following the rules of `kubectl rollout status sts/…` and `ds/…`:
//! - a StatefulSet is rolled out when its spec is observed, every desired pod is ready, and its
//!   update revision is its current revision; with a RollingUpdate `partition` N, when the pods
//!   at ordinals ≥ N are updated ("paused at partition N", not stuck); with `OnDelete`, the
//!   controller replaces a pod only when it is deleted, so old-revision pods are waiting on the
//!   operator, not progressing;
//! - a DaemonSet is rolled out when its spec is observed and every node that should run its pod
//!   runs an updated, available one.
//!
//! Neither kind has a progress deadline: "stuck" needs time and the pods (the caller's part).
use super::{RolloutPhase, RolloutStatus};
pub use crate::cluster::facts::{DaemonSetFacts, StatefulSetFacts, StatefulUpdate};

/// A StatefulSet or DaemonSet whose rollout shows no progress for this long is stuck: the
/// default `progressDeadlineSeconds` of a Deployment, which these kinds do not have.
pub const STALL_AFTER: jiff::SignedDuration = jiff::SignedDuration::from_secs(600);

/// Whether a phase can stall: a rollout or a scale under way, not one waiting on the operator
/// (paused at a partition, OnDelete) nor one already complete or stuck.
pub fn can_stall(phase: &RolloutPhase) -> bool {
    matches!(phase, RolloutPhase::Progressing | RolloutPhase::Scaling)
}

/// The phase of a rollout that made no progress since `since`: stuck once [`STALL_AFTER`] has
/// passed, with the counts that did not move, and once its pods were asked, why they are not
/// ready (`pods`, as `app::detail::why_not_ready` words it: `2 pods CrashLoopBackOff: last exit
/// 1 (Error)`), whose first state becomes the reason.
pub fn stalled(
    status: &RolloutStatus,
    counts: (i32, i32, i32),
    since: jiff::Timestamp,
    now: jiff::Timestamp,
    pods: Option<&str>,
) -> Option<RolloutPhase> {
    if !can_stall(&status.phase) || now.duration_since(since) < STALL_AFTER {
        return None;
    }
    let (desired, updated, ready) = counts;
    let minutes = now.duration_since(since).as_secs() / 60;
    let mut message =
        format!("no progress for {minutes}m: {updated} of {desired} updated, {ready} ready");
    let reason = match pods {
        Some(why) => {
            message = format!("{message}; {why}");
            pod_state(why).unwrap_or("NoProgress")
        }
        None => "NoProgress",
    };
    Some(RolloutPhase::Stuck {
        reason: reason.into(),
        message,
    })
}

/// The first pods' state of a why line: `CrashLoopBackOff` of `2 pods CrashLoopBackOff: …`.
fn pod_state(why: &str) -> Option<&str> {
    let (_, rest) = why.split_once(' ')?;
    let rest = rest
        .strip_prefix("pods ")
        .or_else(|| rest.strip_prefix("pod "))?;
    let end = rest.find([':', ';']).unwrap_or(rest.len());
    Some(rest[..end].trim()).filter(|s| !s.is_empty())
}

fn fraction(done: i32, total: i32) -> f64 {
    if total <= 0 {
        return 1.0;
    }
    (f64::from(done.max(0)) / f64::from(total)).clamp(0.0, 1.0)
}

/// The phase and gauge of a StatefulSet.
pub fn statefulset_status(s: &StatefulSetFacts) -> RolloutStatus {
    let observed = s.observed_generation > 0 && s.observed_generation >= s.generation;
    let same_revision = s.update_revision.is_empty() || s.update_revision == s.current_revision;
    match &s.update {
        StatefulUpdate::RollingUpdate { partition, .. } if *partition > 0 => {
            // Only ordinals ≥ partition take the new revision.
            let target = (s.desired - partition).max(0);
            let done = observed && s.ready >= s.desired && s.updated >= target;
            let phase = if !observed || s.ready < s.desired || s.updated < target {
                RolloutPhase::Progressing
            } else if same_revision {
                RolloutPhase::Complete
            } else {
                RolloutPhase::Partitioned {
                    partition: *partition,
                    updated: s.updated,
                    total: s.desired,
                }
            };
            let ratio = if done {
                1.0
            } else {
                fraction(s.updated.min(target).min(s.ready), target)
            };
            RolloutStatus { phase, ratio }
        }
        StatefulUpdate::OnDelete if observed && s.ready >= s.desired && !same_revision => {
            let old = (s.replicas - s.updated).max(0);
            RolloutStatus {
                phase: RolloutPhase::WaitingForDelete {
                    old,
                    total: s.replicas,
                },
                ratio: fraction(s.updated, s.replicas),
            }
        }
        _ => {
            let complete = observed && s.ready >= s.desired && same_revision;
            let phase = if complete {
                RolloutPhase::Complete
            } else if !observed || !same_revision || s.updated < s.replicas {
                RolloutPhase::Progressing
            } else {
                RolloutPhase::Scaling
            };
            let ratio = if complete {
                1.0
            } else if same_revision {
                fraction(s.ready, s.desired.max(s.replicas))
            } else {
                fraction(s.updated.min(s.ready), s.desired.max(s.replicas))
            };
            RolloutStatus { phase, ratio }
        }
    }
}

/// The phase and gauge of a DaemonSet.
pub fn daemonset_status(d: &DaemonSetFacts) -> RolloutStatus {
    let observed = d.observed_generation > 0 && d.observed_generation >= d.generation;
    let updated = d.updated >= d.desired;
    let available = d.available >= d.desired;
    if observed && updated && available && d.misscheduled == 0 {
        return RolloutStatus {
            phase: RolloutPhase::Complete,
            ratio: 1.0,
        };
    }
    let phase = if d.on_delete && observed && available && !updated {
        RolloutPhase::WaitingForDelete {
            old: (d.current - d.updated).max(0),
            total: d.current,
        }
    } else if observed && updated {
        // The template is everywhere; pods are still becoming available, or the set of nodes
        // changed (a node joined, or one no longer matches and its pod is to go).
        RolloutPhase::Scaling
    } else {
        RolloutPhase::Progressing
    };
    RolloutStatus {
        phase,
        ratio: fraction(d.updated.min(d.available), d.desired),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn capture(name: &str) -> Value {
        let path = format!(
            "{}/testdata/kubernetes-1.36/objects/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    fn sts(change: impl Fn(&mut Value)) -> StatefulSetFacts {
        let mut object = capture("statefulset-db.after-client-apply.json");
        change(&mut object);
        StatefulSetFacts::of(&serde_json::from_value(object).unwrap())
    }

    fn ds(change: impl Fn(&mut Value)) -> DaemonSetFacts {
        let mut object = capture("daemonset-agent.after-client-apply.json");
        change(&mut object);
        DaemonSetFacts::of(&serde_json::from_value(object).unwrap())
    }

    /// The status of a template change half done: `updated` pods on the new revision.
    fn rolling(object: &mut Value, updated: i64) {
        object["metadata"]["generation"] = json!(2);
        let status = &mut object["status"];
        status["observedGeneration"] = json!(2);
        status["updateRevision"] = json!("db-5f8d6c7b9");
        status["updatedReplicas"] = json!(updated);
        status["currentReplicas"] = json!(2 - updated);
    }

    #[test]
    fn captured_statefulsets_are_complete_after_apply_and_after_a_scale() {
        let applied = statefulset_status(&sts(|_| {}));
        assert_eq!(applied.phase, RolloutPhase::Complete);
        assert_eq!(applied.ratio, 1.0);
        let scaled = StatefulSetFacts::of(
            &serde_json::from_value(capture("statefulset-db.after-out-of-band.json")).unwrap(),
        );
        assert_eq!((scaled.desired, scaled.ready), (3, 3));
        assert_eq!(statefulset_status(&scaled).phase, RolloutPhase::Complete);
        // The spec not yet observed, or a pod not ready: not complete.
        let unobserved = statefulset_status(&sts(|o| o["metadata"]["generation"] = json!(2)));
        assert_eq!(unobserved.phase, RolloutPhase::Progressing);
        let scaling = statefulset_status(&sts(|o| {
            o["spec"]["replicas"] = json!(3);
            o["status"]["replicas"] = json!(3);
            o["status"]["updatedReplicas"] = json!(3);
        }));
        assert_eq!(scaling.phase, RolloutPhase::Scaling);
        assert!((scaling.ratio - 2.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn a_statefulset_rolling_update_progresses_until_every_pod_is_on_the_update_revision() {
        let half = statefulset_status(&sts(|o| rolling(o, 1)));
        assert_eq!(half.phase, RolloutPhase::Progressing);
        assert_eq!(half.ratio, 0.5);
        let done = statefulset_status(&sts(|o| {
            rolling(o, 2);
            // The controller makes the update revision current once every pod runs it.
            o["status"]["currentRevision"] = json!("db-5f8d6c7b9");
        }));
        assert_eq!(done.phase, RolloutPhase::Complete);
    }

    #[test]
    fn a_partitioned_update_is_paused_at_its_partition_not_stuck() {
        let paused = statefulset_status(&sts(|o| {
            o["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(1);
            rolling(o, 1);
        }));
        assert_eq!(
            paused.phase,
            RolloutPhase::Partitioned {
                partition: 1,
                updated: 1,
                total: 2
            }
        );
        assert_eq!(
            paused.phase.label(),
            "paused at partition 1 (1 of 2 updated)"
        );
        assert_eq!(paused.ratio, 1.0, "everything the partition allows is done");
        let waiting = statefulset_status(&sts(|o| {
            o["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(1);
            rolling(o, 0);
        }));
        assert_eq!(waiting.phase, RolloutPhase::Progressing);
    }

    #[test]
    fn on_delete_waits_for_the_operator_to_delete_old_pods() {
        let waiting = statefulset_status(&sts(|o| {
            o["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
            rolling(o, 0);
        }));
        assert_eq!(
            waiting.phase,
            RolloutPhase::WaitingForDelete { old: 2, total: 2 }
        );
        assert_eq!(
            waiting.phase.label(),
            "waiting for pods to be deleted: 2 of 2 on the old revision"
        );
    }

    #[test]
    fn captured_daemonsets_are_complete_and_a_new_template_rolls_node_by_node() {
        assert_eq!(daemonset_status(&ds(|_| {})).phase, RolloutPhase::Complete);
        let set_image = DaemonSetFacts::of(
            &serde_json::from_value(capture("daemonset-agent.after-out-of-band.json")).unwrap(),
        );
        assert_eq!(set_image.max_unavailable.as_deref(), Some("1"));
        assert_eq!(set_image.max_surge.as_deref(), Some("0"));
        assert_eq!(daemonset_status(&set_image).phase, RolloutPhase::Complete);
        let rolling = daemonset_status(&ds(|o| {
            o["metadata"]["generation"] = json!(2);
            o["status"]["observedGeneration"] = json!(2);
            o["status"]["updatedNumberScheduled"] = json!(1);
            o["status"]["numberAvailable"] = json!(1);
        }));
        assert_eq!(rolling.phase, RolloutPhase::Progressing);
        assert_eq!(rolling.ratio, 0.5);
        let new_node = daemonset_status(&ds(|o| {
            o["status"]["desiredNumberScheduled"] = json!(3);
            o["status"]["updatedNumberScheduled"] = json!(3);
            o["status"]["currentNumberScheduled"] = json!(3);
        }));
        assert_eq!(new_node.phase, RolloutPhase::Scaling, "a node joined");
        let on_delete = daemonset_status(&ds(|o| {
            o["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
            o["metadata"]["generation"] = json!(2);
            o["status"]["observedGeneration"] = json!(2);
            o["status"]["updatedNumberScheduled"] = json!(0);
        }));
        assert_eq!(
            on_delete.phase,
            RolloutPhase::WaitingForDelete { old: 2, total: 2 }
        );
    }

    #[test]
    fn a_stall_takes_the_pods_state_as_its_reason() {
        assert_eq!(
            pod_state("2 pods Pending: Insufficient memory; 1 pod CrashLoopBackOff"),
            Some("Pending")
        );
        assert_eq!(
            pod_state("1 pod ImagePullBackOff: image a:b"),
            Some("ImagePullBackOff")
        );
        assert_eq!(pod_state("1 pod not ready"), Some("not ready"));
        assert_eq!(pod_state("garbage"), None);
    }
}
