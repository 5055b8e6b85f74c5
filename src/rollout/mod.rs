//! The rollout phase of a Deployment and its gauge ratio, from a slim row alone (pure), following
//! the rules of `kubectl rollout status` (docs/ARCHITECTURE.md, "Deployment status and rollout");
//! [`workloads`]: the same for StatefulSets and DaemonSets.
use crate::cluster::rows::{KindFacts, WorkloadRow};

pub mod workloads;

/// Where a Deployment's rollout stands, in the order an on-call engineer cares about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RolloutPhase {
    /// Past its progress deadline (`Progressing=False`, `ProgressDeadlineExceeded`) or unable to
    /// create pods (`ReplicaFailure=True`).
    Stuck { reason: String, message: String },
    /// `spec.paused`: the controller does not roll out.
    Paused,
    /// A StatefulSet's RollingUpdate `partition`: the ordinals at or above it are updated, the
    /// ones below stay on the old revision until the partition is lowered.
    Partitioned {
        partition: i32,
        updated: i32,
        total: i32,
    },
    /// `OnDelete`: `old` of `total` pods still run the old revision; the controller replaces
    /// each only when it is deleted.
    WaitingForDelete { old: i32, total: i32 },
    /// A new template is replacing old pods (or the new spec is not yet observed).
    Progressing,
    /// Only the replica count is changing: every pod already runs the current template.
    Scaling,
    /// `kubectl rollout status` would say "successfully rolled out".
    Complete,
}

impl RolloutPhase {
    /// Sort rank: stuck first, complete last.
    pub fn rank(&self) -> u8 {
        match self {
            RolloutPhase::Stuck { .. } => 0,
            RolloutPhase::Paused
            | RolloutPhase::Partitioned { .. }
            | RolloutPhase::WaitingForDelete { .. } => 1,
            RolloutPhase::Progressing => 2,
            RolloutPhase::Scaling => 3,
            RolloutPhase::Complete => 4,
        }
    }

    /// The word the table shows (a stuck rollout adds its reason).
    pub fn label(&self) -> String {
        match self {
            RolloutPhase::Stuck { reason, .. } => format!("stuck: {reason}"),
            RolloutPhase::Paused => "paused".into(),
            RolloutPhase::Partitioned {
                partition,
                updated,
                total,
            } => format!("paused at partition {partition} ({updated} of {total} updated)"),
            RolloutPhase::WaitingForDelete { old, total } => {
                format!("waiting for pods to be deleted: {old} of {total} on the old revision")
            }
            RolloutPhase::Progressing => "progressing".into(),
            RolloutPhase::Scaling => "scaling".into(),
            RolloutPhase::Complete => "complete".into(),
        }
    }
}

/// A phase and how far along the rollout is, for the gauge.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutStatus {
    pub phase: RolloutPhase,
    /// 0.0..=1.0: pods both updated and available over the pods that must exist.
    pub ratio: f64,
}

/// `kubectl rollout status`: observed generation caught up, all replicas updated, old ones gone,
/// and all updated ones available.
pub fn is_complete(d: &WorkloadRow) -> bool {
    d.observed_generation >= d.generation
        && d.updated == d.desired
        && d.replicas == d.updated
        && d.available == d.updated
}

/// The phase and gauge ratio of one workload, by the rules of its kind.
pub fn rollout_status(d: &WorkloadRow) -> RolloutStatus {
    match &d.facts {
        KindFacts::Deployment => deployment_status(d),
        KindFacts::StatefulSet(facts) => workloads::statefulset_status(facts),
        KindFacts::DaemonSet(facts) => workloads::daemonset_status(facts),
    }
}

/// The phase and gauge ratio of one Deployment.
fn deployment_status(d: &WorkloadRow) -> RolloutStatus {
    RolloutStatus {
        phase: phase(d),
        ratio: ratio(d),
    }
}

fn phase(d: &WorkloadRow) -> RolloutPhase {
    if let Some(c) = d.condition("Progressing")
        && c.status == "False"
        && c.reason == "ProgressDeadlineExceeded"
    {
        return RolloutPhase::Stuck {
            reason: c.reason.to_string(),
            message: c.message.clone(),
        };
    }
    if let Some(c) = d.condition("ReplicaFailure")
        && c.status == "True"
    {
        return RolloutPhase::Stuck {
            reason: if c.reason.is_empty() {
                "ReplicaFailure".into()
            } else {
                c.reason.to_string()
            },
            message: c.message.clone(),
        };
    }
    if d.paused {
        return RolloutPhase::Paused;
    }
    if is_complete(d) {
        return RolloutPhase::Complete;
    }
    if d.observed_generation < d.generation {
        return RolloutPhase::Progressing;
    }
    let new_rs_created = d
        .condition("Progressing")
        .is_some_and(|c| c.reason == "NewReplicaSetCreated");
    // Pods of an older template still exist: the template is being rolled out.
    if d.replicas > d.updated || new_rs_created {
        return RolloutPhase::Progressing;
    }
    RolloutPhase::Scaling
}

fn ratio(d: &WorkloadRow) -> f64 {
    if is_complete(d) {
        return 1.0;
    }
    let done = d.updated.min(d.available).min(d.desired).max(0);
    let total = d.desired.max(d.replicas).max(0);
    if total == 0 {
        return 1.0;
    }
    (f64::from(done) / f64::from(total)).clamp(0.0, 1.0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::cluster::rows::ConditionRow;

    fn row(desired: i32, replicas: i32, updated: i32, available: i32) -> WorkloadRow {
        WorkloadRow {
            key: crate::cluster::rows::WorkloadKind::Deployment.key("shop", "web"),
            generation: 2,
            observed_generation: 2,
            desired,
            replicas,
            updated,
            ready: available,
            available,
            paused: false,
            owners: Vec::new(),
            facts: Default::default(),
            conditions: Vec::new(),
            revision: Some(2),
            images: vec!["web:2".into()],
            created: None,
            last_change: None,
        }
    }

    fn with_condition(mut d: WorkloadRow, kind: &str, status: &str, reason: &str) -> WorkloadRow {
        d.conditions.push(ConditionRow {
            kind: kind.into(),
            status: status.into(),
            reason: reason.into(),
            message: format!("{kind} {reason}"),
            last_update: None,
        });
        d
    }

    #[test]
    fn all_updated_and_available_is_complete() {
        let s = rollout_status(&row(3, 3, 3, 3));
        assert_eq!(s.phase, RolloutPhase::Complete);
        assert_eq!(s.ratio, 1.0);
    }

    #[test]
    fn unobserved_generation_is_progressing_even_with_counts_met() {
        let mut d = row(3, 3, 3, 3);
        d.generation = 3;
        assert_eq!(rollout_status(&d).phase, RolloutPhase::Progressing);
    }

    #[test]
    fn old_pods_still_running_is_progressing() {
        // Surge: 1 new pod ready, 3 old ones still there.
        let s = rollout_status(&row(3, 4, 1, 3));
        assert_eq!(s.phase, RolloutPhase::Progressing);
        assert_eq!(s.ratio, 0.25);
    }

    #[test]
    fn new_replicaset_created_is_progressing() {
        let d = with_condition(
            row(3, 0, 0, 0),
            "Progressing",
            "True",
            "NewReplicaSetCreated",
        );
        assert_eq!(rollout_status(&d).phase, RolloutPhase::Progressing);
    }

    #[test]
    fn replica_count_change_alone_is_scaling() {
        let up = rollout_status(&row(5, 3, 3, 3));
        assert_eq!(up.phase, RolloutPhase::Scaling);
        assert_eq!(up.ratio, 0.6);
        let down = rollout_status(&row(3, 5, 5, 5));
        assert_eq!(down.phase, RolloutPhase::Scaling);
        assert_eq!(down.ratio, 0.6);
        let unavailable = rollout_status(&row(3, 3, 3, 1));
        assert_eq!(unavailable.phase, RolloutPhase::Scaling);
    }

    #[test]
    fn progress_deadline_exceeded_is_stuck_with_reason() {
        let d = with_condition(
            row(3, 4, 1, 3),
            "Progressing",
            "False",
            "ProgressDeadlineExceeded",
        );
        let s = rollout_status(&d);
        assert_eq!(
            s.phase,
            RolloutPhase::Stuck {
                reason: "ProgressDeadlineExceeded".into(),
                message: "Progressing ProgressDeadlineExceeded".into()
            }
        );
        assert_eq!(s.phase.label(), "stuck: ProgressDeadlineExceeded");
    }

    #[test]
    fn replica_failure_is_stuck_with_its_reason() {
        let d = with_condition(row(3, 0, 0, 0), "ReplicaFailure", "True", "FailedCreate");
        assert_eq!(rollout_status(&d).phase.label(), "stuck: FailedCreate");
    }

    #[test]
    fn paused_wins_over_progress_but_not_over_stuck() {
        let mut d = row(3, 4, 1, 3);
        d.paused = true;
        assert_eq!(rollout_status(&d).phase, RolloutPhase::Paused);
        let d = with_condition(d, "Progressing", "False", "ProgressDeadlineExceeded");
        assert_eq!(rollout_status(&d).phase.rank(), 0);
    }

    #[test]
    fn progressing_true_with_other_reasons_is_not_stuck() {
        for reason in [
            "FoundNewReplicaSet",
            "ReplicaSetUpdated",
            "NewReplicaSetAvailable",
        ] {
            let d = with_condition(row(3, 4, 2, 3), "Progressing", "True", reason);
            assert_eq!(
                rollout_status(&d).phase,
                RolloutPhase::Progressing,
                "{reason}"
            );
        }
    }

    #[test]
    fn zero_replicas_scaled_down_is_complete() {
        let s = rollout_status(&row(0, 0, 0, 0));
        assert_eq!((s.phase, s.ratio), (RolloutPhase::Complete, 1.0));
    }
}
