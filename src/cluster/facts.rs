//! What a StatefulSet's or DaemonSet's row keeps of the object: the counts and strategy their
//! rollout phase is computed from (by `rollout::workloads`), decoded from the API object.
use k8s_openapi::api::apps::v1::{DaemonSet, StatefulSet};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// How a StatefulSet replaces pods when its template changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatefulUpdate {
    /// Reverse ordinal order, ordinals below `partition` kept on the old revision.
    RollingUpdate {
        partition: i32,
        /// `maxUnavailable` as written (a number or a percentage), default 1.
        max_unavailable: Option<String>,
    },
    /// Pods change revision only when they are deleted.
    OnDelete,
}

/// What a StatefulSet's row needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatefulSetFacts {
    pub generation: i64,
    pub observed_generation: i64,
    /// `spec.replicas` (defaulted to 1 by the API server).
    pub desired: i32,
    pub replicas: i32,
    pub ready: i32,
    pub available: i32,
    /// Pods at the current revision.
    pub current: i32,
    /// Pods at the update revision.
    pub updated: i32,
    pub current_revision: String,
    pub update_revision: String,
    pub update: StatefulUpdate,
}

/// What a DaemonSet's row needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaemonSetFacts {
    pub generation: i64,
    pub observed_generation: i64,
    /// Nodes that should run the pod.
    pub desired: i32,
    /// Nodes that run it.
    pub current: i32,
    pub ready: i32,
    pub updated: i32,
    pub available: i32,
    /// Nodes that run it but should not.
    pub misscheduled: i32,
    /// `OnDelete` instead of RollingUpdate.
    pub on_delete: bool,
    pub max_unavailable: Option<String>,
    pub max_surge: Option<String>,
}

fn int_or_string(value: Option<&IntOrString>) -> Option<String> {
    value.map(|v| match v {
        IntOrString::Int(n) => n.to_string(),
        IntOrString::String(s) => s.clone(),
    })
}

impl StatefulSetFacts {
    pub fn of(sts: &StatefulSet) -> StatefulSetFacts {
        let spec = sts.spec.as_ref();
        let status = sts.status.as_ref();
        let strategy = spec.and_then(|s| s.update_strategy.as_ref());
        let update = match strategy.and_then(|s| s.type_.as_deref()) {
            Some("OnDelete") => StatefulUpdate::OnDelete,
            _ => {
                let rolling = strategy.and_then(|s| s.rolling_update.as_ref());
                StatefulUpdate::RollingUpdate {
                    partition: rolling.and_then(|r| r.partition).unwrap_or(0),
                    max_unavailable: int_or_string(
                        rolling.and_then(|r| r.max_unavailable.as_ref()),
                    ),
                }
            }
        };
        StatefulSetFacts {
            generation: sts.metadata.generation.unwrap_or(0),
            observed_generation: status.and_then(|s| s.observed_generation).unwrap_or(0),
            desired: spec.and_then(|s| s.replicas).unwrap_or(1),
            replicas: status.map_or(0, |s| s.replicas),
            ready: status.and_then(|s| s.ready_replicas).unwrap_or(0),
            available: status.and_then(|s| s.available_replicas).unwrap_or(0),
            current: status.and_then(|s| s.current_replicas).unwrap_or(0),
            updated: status.and_then(|s| s.updated_replicas).unwrap_or(0),
            current_revision: status
                .and_then(|s| s.current_revision.clone())
                .unwrap_or_default(),
            update_revision: status
                .and_then(|s| s.update_revision.clone())
                .unwrap_or_default(),
            update,
        }
    }
}

impl DaemonSetFacts {
    pub fn of(ds: &DaemonSet) -> DaemonSetFacts {
        let strategy = ds.spec.as_ref().and_then(|s| s.update_strategy.as_ref());
        let rolling = strategy.and_then(|s| s.rolling_update.as_ref());
        let status = ds.status.as_ref();
        DaemonSetFacts {
            generation: ds.metadata.generation.unwrap_or(0),
            observed_generation: status.and_then(|s| s.observed_generation).unwrap_or(0),
            desired: status.map_or(0, |s| s.desired_number_scheduled),
            current: status.map_or(0, |s| s.current_number_scheduled),
            ready: status.map_or(0, |s| s.number_ready),
            updated: status.and_then(|s| s.updated_number_scheduled).unwrap_or(0),
            available: status.and_then(|s| s.number_available).unwrap_or(0),
            misscheduled: status.map_or(0, |s| s.number_misscheduled),
            on_delete: strategy.and_then(|s| s.type_.as_deref()) == Some("OnDelete"),
            max_unavailable: int_or_string(rolling.and_then(|r| r.max_unavailable.as_ref())),
            max_surge: int_or_string(rolling.and_then(|r| r.max_surge.as_ref())),
        }
    }
}
