//! The horizontal pod autoscaler, without metrics: it keeps its target's replicas between
//! `minReplicas` and `maxReplicas`, writing them through the target's `/scale` subresource as
//! kube-controller-manager does (so the autoscaler, not the manifest, owns `spec.replicas`).
use serde_json::{Value, json};

/// The target (`Deployment`, name) of an autoscaler.
pub fn target(hpa: &Value) -> Option<(&str, &str)> {
    let kind = hpa.pointer("/spec/scaleTargetRef/kind")?.as_str()?;
    let name = hpa.pointer("/spec/scaleTargetRef/name")?.as_str()?;
    Some((kind, name))
}

/// The replicas the autoscaler wants for a target that has `current`.
pub fn desired(hpa: &Value, current: i64) -> i64 {
    let min = hpa
        .pointer("/spec/minReplicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let max = hpa
        .pointer("/spec/maxReplicas")
        .and_then(Value::as_i64)
        .unwrap_or(min)
        .max(min);
    current.clamp(min, max)
}

/// The autoscaler's status for a target at `replicas`.
pub fn status(hpa: &Value, replicas: i64, now: &str) -> Value {
    let since = |kind: &str| {
        hpa.pointer("/status/conditions")
            .and_then(Value::as_array)
            .and_then(|c| c.iter().find(|c| c["type"] == kind))
            .and_then(|c| c.get("lastTransitionTime").cloned())
            .unwrap_or_else(|| json!(now))
    };
    json!({
        "conditions": [
            {"lastTransitionTime": since("AbleToScale"), "message": "recommended size matches current size", "reason": "ReadyForNewScale", "status": "True", "type": "AbleToScale"},
            {"lastTransitionTime": since("ScalingActive"), "message": "the demo cluster has no metrics: the count is kept between minReplicas and maxReplicas", "reason": "ValidMetricFound", "status": "True", "type": "ScalingActive"},
        ],
        "currentReplicas": replicas,
        "desiredReplicas": replicas,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicas_are_kept_between_the_bounds() {
        let hpa = json!({"spec": {"minReplicas": 2, "maxReplicas": 6, "scaleTargetRef": {"kind": "Deployment", "name": "catalog"}}});
        assert_eq!(target(&hpa), Some(("Deployment", "catalog")));
        assert_eq!(desired(&hpa, 1), 2);
        assert_eq!(desired(&hpa, 4), 4);
        assert_eq!(desired(&hpa, 9), 6);
    }
}
