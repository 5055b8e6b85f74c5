//! What the tests that run the controllers against a store share.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::time::Duration;

use serde_json::Value;

/// Poll `check` until it returns `Some`, or fail after a generous timeout (the machine is
/// loaded: this bounds a hang, it does not measure speed).
pub async fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    loop {
        if let Some(found) = check() {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A status count (absent is 0).
pub fn count(d: &Value, field: &str) -> i64 {
    d["status"][field].as_i64().unwrap_or(0)
}

/// A Deployment rolled out as `kubectl rollout status` says it.
pub fn rolled_out(d: &Value) -> bool {
    let desired = d["spec"]["replicas"].as_i64().unwrap_or(1);
    count(d, "observedGeneration") >= d["metadata"]["generation"].as_i64().unwrap_or(0)
        && count(d, "updatedReplicas") == desired
        && count(d, "replicas") == desired
        && count(d, "availableReplicas") == desired
}

/// A pod's `PodScheduled` condition (null when it has none).
pub fn scheduled_condition(pod: &Value) -> Value {
    pod["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "PodScheduled"))
        .cloned()
        .unwrap_or(Value::Null)
}
