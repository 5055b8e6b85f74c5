//! PodDisruptionBudgets as the API server reads them: which pods a budget covers, and the eviction
//! API's verdict on one eviction (429 with the budget's numbers when it may not go). The status a
//! budget holds is written by the disruption controller (`controller::disruption`).
use jiff::Timestamp;
use serde_json::{Value, json};

use crate::object::{at, i64_at, namespace, str_at};

/// Whether a label selector (`matchLabels`, `matchExpressions`) selects `labels`. An empty
/// selector selects everything, as a `policy/v1` budget's does.
pub fn selector_matches(selector: &Value, labels: Option<&Value>) -> bool {
    let get = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
    let match_labels = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(|m| m.iter().all(|(k, v)| get(k) == v.as_str()));
    let expressions = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    match_labels
        && expressions.iter().all(|e| {
            let key = e["key"].as_str().unwrap_or_default();
            let values: Vec<&str> = e["values"]
                .as_array()
                .map(|v| v.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            match e["operator"].as_str().unwrap_or_default() {
                "In" => get(key).is_some_and(|v| values.contains(&v)),
                "NotIn" => get(key).is_none_or(|v| !values.contains(&v)),
                "Exists" => get(key).is_some(),
                "DoesNotExist" => get(key).is_none(),
                _ => false,
            }
        })
}

/// Whether budget `pdb` covers `pod`.
pub fn covers(pdb: &Value, pod: &Value) -> bool {
    namespace(pdb) == namespace(pod)
        && selector_matches(
            at(pdb, &["spec", "selector"]).unwrap_or(&Value::Null),
            at(pod, &["metadata", "labels"]),
        )
}

/// Why an eviction may not go through, with the cause a real server gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub message: String,
    pub cause: String,
}

/// The eviction API's answer for evicting `pod` covered by `pdb`: `Ok` with the budget's status
/// after the eviction (one disruption fewer, the pod recorded), or why not.
pub fn evict(pdb: &Value, pod_name: &str, now: Timestamp) -> Result<Value, Refusal> {
    let name = str_at(pdb, &["metadata", "name"]).unwrap_or_default();
    let refused = |cause: String| Refusal {
        message: "Cannot evict pod as it would violate the pod's disruption budget.".into(),
        cause,
    };
    let generation = i64_at(pdb, &["metadata", "generation"]).unwrap_or(1);
    if i64_at(pdb, &["status", "observedGeneration"]).unwrap_or(0) < generation {
        return Err(refused(format!(
            "The disruption budget {name} is still being processed by the server."
        )));
    }
    let allowed = i64_at(pdb, &["status", "disruptionsAllowed"]).unwrap_or(0);
    if allowed <= 0 {
        return Err(refused(format!(
            "The disruption budget {name} needs {} healthy pods and has {} currently",
            i64_at(pdb, &["status", "desiredHealthy"]).unwrap_or(0),
            i64_at(pdb, &["status", "currentHealthy"]).unwrap_or(0)
        )));
    }
    let mut status = pdb.get("status").cloned().unwrap_or_else(|| json!({}));
    status["disruptionsAllowed"] = json!(allowed - 1);
    status["disruptedPods"][pod_name] = json!(crate::object::format_time(now));
    Ok(status)
}
