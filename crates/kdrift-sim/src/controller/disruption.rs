//! The disruption controller's part of PodDisruptionBudgets, as a pure function: the status it
//! writes (healthy pods, how many must stay, how many may go). Which pods a budget covers and the
//! eviction API's verdict are the API server's (`store::disruption`).
use serde_json::{Map, Value, json};

use super::replicaset::ready_since;
use crate::object::{at, i64_at, scaled_int_or_percent, str_at};
use crate::store::disruption::covers;

fn terminal(pod: &Value) -> bool {
    matches!(
        str_at(pod, &["status", "phase"]),
        Some("Succeeded" | "Failed")
    )
}

/// The budget's status over the pods of its namespace (`pods`), keeping the evictions it
/// recorded (`disruptedPods`) of pods that are still there.
pub fn budget_status(pdb: &Value, pods: &[Value], now: &str) -> Value {
    let covered: Vec<&Value> = pods
        .iter()
        .filter(|p| covers(pdb, p) && !terminal(p))
        .collect();
    let disrupted: Map<String, Value> = at(pdb, &["status", "disruptedPods"])
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter(|(name, _)| {
                    covered
                        .iter()
                        .any(|p| str_at(p, &["metadata", "name"]) == Some(name.as_str()))
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    let expected = i64::try_from(covered.len()).unwrap_or(0);
    let healthy = i64::try_from(
        covered
            .iter()
            .filter(|p| {
                ready_since(p).is_some()
                    && !disrupted.contains_key(str_at(p, &["metadata", "name"]).unwrap_or(""))
            })
            .count(),
    )
    .unwrap_or(0);
    let spec = pdb.get("spec").unwrap_or(&Value::Null);
    let desired = match (spec.get("minAvailable"), spec.get("maxUnavailable")) {
        (Some(min), _) => scaled_int_or_percent(Some(min), expected, true),
        (None, Some(max)) => expected - scaled_int_or_percent(Some(max), expected, true),
        (None, None) => expected,
    }
    .max(0);
    let allowed = (healthy - desired).max(0);
    let generation = i64_at(pdb, &["metadata", "generation"]).unwrap_or(1);
    let (state, reason) = if allowed > 0 {
        ("True", "SufficientPods")
    } else {
        ("False", "InsufficientPods")
    };
    let previous = at(pdb, &["status", "conditions"])
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == "DisruptionAllowed"));
    let since = match previous {
        Some(c) if c["status"] == state => c["lastTransitionTime"].clone(),
        _ => json!(now),
    };
    let mut status = json!({
        "conditions": [{"lastTransitionTime": since, "message": "", "observedGeneration": generation,
                        "reason": reason, "status": state, "type": "DisruptionAllowed"}],
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "disruptionsAllowed": allowed,
        "expectedPods": expected,
        "observedGeneration": generation,
    });
    if !disrupted.is_empty() {
        status["disruptedPods"] = Value::Object(disrupted);
    }
    status
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::store::disruption::{evict, selector_matches};
    use jiff::Timestamp;

    fn pdb(spec: Value) -> Value {
        json!({"metadata": {"name": "api", "namespace": "payments", "generation": 1},
               "spec": spec})
    }

    fn pod(name: &str, ready: bool) -> Value {
        let mut p = json!({"metadata": {"name": name, "namespace": "payments", "labels": {"app": "api"}},
                           "status": {"phase": "Running"}});
        if ready {
            p["status"]["conditions"] = json!([{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-24T03:00:00Z"}]);
        }
        p
    }

    #[test]
    fn the_status_counts_healthy_pods_against_the_budget() {
        let budget = pdb(json!({"minAvailable": 1, "selector": {"matchLabels": {"app": "api"}}}));
        let pods = [pod("a", true), pod("b", true), pod("c", false)];
        let status = budget_status(&budget, &pods, "2026-11-24T03:00:00Z");
        assert_eq!(
            (
                status["expectedPods"].as_i64(),
                status["currentHealthy"].as_i64(),
                status["desiredHealthy"].as_i64(),
                status["disruptionsAllowed"].as_i64()
            ),
            (Some(3), Some(2), Some(1), Some(1))
        );
        assert_eq!(status["conditions"][0]["reason"], "SufficientPods");
        let max =
            pdb(json!({"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "api"}}}));
        assert_eq!(budget_status(&max, &pods, "t")["desiredHealthy"], 1);
        let none = budget_status(&budget, &[], "2026-11-24T03:00:00Z");
        assert_eq!(none["conditions"][0]["reason"], "InsufficientPods");
    }

    #[test]
    fn an_eviction_takes_one_disruption_or_is_refused_with_the_numbers() {
        let mut budget =
            pdb(json!({"minAvailable": 1, "selector": {"matchLabels": {"app": "api"}}}));
        let now: Timestamp = "2026-11-24T03:00:00Z".parse().unwrap();
        assert_eq!(
            evict(&budget, "a", now).unwrap_err().cause,
            "The disruption budget api is still being processed by the server."
        );
        budget["status"] = budget_status(&budget, &[pod("a", true), pod("b", true)], "t");
        let after = evict(&budget, "a", now).unwrap();
        assert_eq!(after["disruptionsAllowed"], 0);
        assert_eq!(after["disruptedPods"]["a"], "2026-11-24T03:00:00Z");
        budget["status"] = after;
        let refusal = evict(&budget, "b", now).unwrap_err();
        assert_eq!(
            refusal.message,
            "Cannot evict pod as it would violate the pod's disruption budget."
        );
        assert_eq!(
            refusal.cause,
            "The disruption budget api needs 1 healthy pods and has 2 currently"
        );
        // The evicted pod no longer counts as healthy while it is still there.
        let status = budget_status(&budget, &[pod("a", true), pod("b", true)], "t");
        assert_eq!(
            (
                status["currentHealthy"].as_i64(),
                status["disruptionsAllowed"].as_i64()
            ),
            (Some(1), Some(0))
        );
        assert!(selector_matches(
            &json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["api"]}]}),
            Some(&json!({"app": "api"}))
        ));
    }
}
