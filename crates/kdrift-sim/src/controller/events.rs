//! `Event` objects (core/v1) as the deployment controller, the replicaset controller, the
//! scheduler and the kubelet record them, so `kubectl describe` and kdrift show familiar lines.
use std::sync::atomic::{AtomicU64, Ordering};

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::object::{format_time, name, namespace, uid};

/// Who records an event: the `source.component` and the field manager of the write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    DeploymentController,
    ReplicaSetController,
    StatefulSetController,
    DaemonSetController,
    Scheduler,
    Kubelet,
}

impl Component {
    pub fn source(self) -> &'static str {
        match self {
            Component::DeploymentController => "deployment-controller",
            Component::ReplicaSetController => "replicaset-controller",
            Component::StatefulSetController => "statefulset-controller",
            Component::DaemonSetController => "daemonset-controller",
            Component::Scheduler => "default-scheduler",
            Component::Kubelet => "kubelet",
        }
    }

    /// The field manager its writes are recorded under.
    pub fn manager(self) -> &'static str {
        match self {
            Component::DeploymentController
            | Component::ReplicaSetController
            | Component::StatefulSetController
            | Component::DaemonSetController => "kube-controller-manager",
            Component::Scheduler => "kube-scheduler",
            Component::Kubelet => "kubelet",
        }
    }
}

/// One event to record about an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSpec {
    pub component: Component,
    /// `Normal` or `Warning`.
    pub warning: bool,
    pub reason: String,
    pub message: String,
}

impl EventSpec {
    pub fn normal(component: Component, reason: &str, message: String) -> EventSpec {
        EventSpec {
            component,
            warning: false,
            reason: reason.into(),
            message,
        }
    }
    pub fn warning(component: Component, reason: &str, message: String) -> EventSpec {
        EventSpec {
            component,
            warning: true,
            reason: reason.into(),
            message,
        }
    }
}

/// The Event object for `spec` about `involved`, named `<object>.<hex>` as client-go's recorder
/// names them (the hex part is a strictly increasing nanosecond clock, so names never collide).
pub fn event_object(
    involved: &Value,
    spec: &EventSpec,
    now: Timestamp,
    host: Option<&str>,
) -> Value {
    let time = format_time(now);
    let mut source = json!({"component": spec.component.source()});
    if let Some(host) = host {
        source["host"] = json!(host);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": format!("{}.{:x}", name(involved), unique_nanos(now)),
            "namespace": namespace(involved),
        },
        "involvedObject": {
            "apiVersion": involved.get("apiVersion").cloned().unwrap_or(Value::Null),
            "kind": involved.get("kind").cloned().unwrap_or(Value::Null),
            "name": name(involved),
            "namespace": namespace(involved),
            "resourceVersion": involved.pointer("/metadata/resourceVersion").cloned().unwrap_or(Value::Null),
            "uid": uid(involved),
        },
        "reason": spec.reason,
        "message": spec.message,
        "source": source,
        "firstTimestamp": time,
        "lastTimestamp": time,
        "count": 1,
        "type": if spec.warning { "Warning" } else { "Normal" },
        "eventTime": null,
        "reportingComponent": "",
        "reportingInstance": "",
    })
}

/// The merge patch that records one more occurrence of an existing event (the kubelet's
/// `BackOff` events are counted, not repeated).
pub fn repeat_patch(event: &Value, now: Timestamp) -> Value {
    let count = event.get("count").and_then(Value::as_i64).unwrap_or(1);
    json!({"count": count + 1, "lastTimestamp": format_time(now)})
}

fn unique_nanos(now: Timestamp) -> u64 {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let wanted = u64::try_from(now.as_nanosecond()).unwrap_or(0);
    let mut last = LAST.load(Ordering::Relaxed);
    loop {
        let next = wanted.max(last + 1);
        match LAST.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn scaling_event_reads_like_the_deployment_controllers() {
        let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": "7"}});
        let now: Timestamp = "2026-11-22T02:59:06Z".parse().unwrap();
        let spec = EventSpec::normal(
            Component::DeploymentController,
            "ScalingReplicaSet",
            "Scaled up replica set web-5d9c7b8f6 from 0 to 2".into(),
        );
        let a = event_object(&deploy, &spec, now, None);
        let b = event_object(&deploy, &spec, now, None);
        assert_ne!(
            a["metadata"]["name"], b["metadata"]["name"],
            "two events at once need two names"
        );
        assert!(a["metadata"]["name"].as_str().unwrap().starts_with("web."));
        assert_eq!(a["source"], json!({"component": "deployment-controller"}));
        assert_eq!(a["involvedObject"]["kind"], "Deployment");
        assert_eq!(a["type"], "Normal");
        assert_eq!(a["lastTimestamp"], "2026-11-22T02:59:06Z");
        assert_eq!(repeat_patch(&a, now)["count"], 2);
    }
}
