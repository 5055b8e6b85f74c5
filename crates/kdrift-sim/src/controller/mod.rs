//! The demo cluster's controllers: deployment, replicaset, statefulset, a scheduler, a simulated
//! kubelet, the node lifecycle controller and the garbage collectors, behaving like
//! kube-controller-manager and kube-scheduler so that rollouts look real.
//!
//! The decisions are pure functions of the objects (tested without a store):
//! - [`hash`]: the pod-template-hash of a pod template, the hash of a ControllerRevision.
//! - [`deployment`]: which ReplicaSets a Deployment wants (rolling update, Recreate, scaling).
//! - [`deploy_status`]: Deployment status, conditions and progress deadlines.
//! - [`replicaset`]: which pods a ReplicaSet wants, and its status.
//! - [`statefulset`]: a StatefulSet's ordered pods, its rolling update, status and history.
//! - [`daemonset`]: a DaemonSet's pod per node, its rolling update, status and history.
//! - [`revision`]: ControllerRevisions, the template history of StatefulSets and DaemonSets.
//! - [`scheduler`]: which node a pod goes to, or kube-scheduler's reason why none fits.
//! - [`disruption`]: PodDisruptionBudget status, and whether an eviction may go.
//! - [`nodes`]: the demo's Node objects and the cordon taint.
//! - [`quantity`]: resource quantities read as the scheduler reads them.
//! - [`pods`]: the pod lifecycle a kubelet would report (image rules for broken images).
//! - [`logs`]: what containers write, made up from the pod, the container and the time.
//! - [`events`]: `Event` objects as the components write them.
//! - [`autoscaler`]: the horizontal pod autoscaler, without metrics.
//! - [`apiextensions`]: the status the apiextensions server gives a CustomResourceDefinition.
//!
//! [`driver`] is the thin IO layer: it follows the store's changes, keeps an owner index and
//! timers (`index`) and the scheduler's cache ([`cluster`]), calls the pure functions and writes
//! their results through the store.
//! [`object`] holds the small JSON readers they share.
use std::time::Duration;

use tokio::task::JoinHandle;

use super::store::Store;

pub mod apiextensions;
pub mod autoscaler;
pub mod cluster;
pub mod daemonset;
pub mod deploy_status;
pub mod deployment;
pub mod disruption;
pub mod driver;
pub mod events;
pub mod hash;
mod index;
pub mod logs;
pub mod nodes;
pub mod object;
pub mod pods;
pub mod quantity;
pub mod replicaset;
pub mod revision;
pub mod scheduler;
pub mod statefulset;

/// How fast the simulated cluster moves.
#[derive(Clone, Debug)]
pub struct Timings {
    /// From pod creation to Ready (with a healthy image).
    pub pod_ready: Duration,
    /// From pod creation to the first image pull result (ContainerCreating until then).
    pub image_pull: Duration,
    /// First back-off of a crashing container or a failing image pull; doubles up to 5 minutes
    /// as the kubelet's does.
    pub crash_backoff: Duration,
}

impl Default for Timings {
    /// Demo timings: pods ready in about two seconds, so a rollout is visible but short.
    fn default() -> Timings {
        Timings {
            pod_ready: Duration::from_secs(2),
            image_pull: Duration::from_millis(800),
            crash_backoff: Duration::from_secs(5),
        }
    }
}

impl Timings {
    /// Test timings: everything within about 100 ms.
    pub fn fast() -> Timings {
        Timings {
            pod_ready: Duration::from_millis(100),
            image_pull: Duration::from_millis(40),
            crash_backoff: Duration::from_millis(100),
        }
    }
}

/// Run every controller against `store` until the task is aborted.
pub fn spawn(store: Store, timings: Timings) -> JoinHandle<()> {
    tokio::spawn(driver::run(store, timings))
}
