//! The incident's node loss, as kubectl makes it: `kubectl drain` (a cordon, then evictions
//! through the eviction API, honouring PodDisruptionBudgets and retrying as kubectl does, the
//! DaemonSet's pods left alone) and `kubectl uncordon`.
use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::step::{Step, request_for};
use crate::controller::disruption::selector_matches;
use crate::controller::object::{Key, at, name, namespace, str_at};
use crate::controller::scheduler::pod_requests;
use crate::error::{ApiError, not_found};
use crate::resources::ResourceType;
use crate::store::Store;

/// How long the drain keeps trying (kubectl drain's `--timeout`).
const GIVE_UP: Duration = Duration::from_secs(60);
/// Between two tries of a refused eviction (kubectl waits 5 s).
const RETRY: Duration = Duration::from_millis(500);
/// How long an evicted pod's replacement may take to get a node before the next eviction.
const SETTLE: Duration = Duration::from_secs(10);

fn node_of(pod: &Value) -> &str {
    str_at(pod, &["spec", "nodeName"]).unwrap_or_default()
}

/// The pods of Deployment `target`, by its selector.
fn pods_of(store: &Store, target: &Key) -> Result<Vec<Value>, ApiError> {
    let deploy = store
        .get(ResourceType::DEPLOYMENT, &target.namespace, &target.name)
        .ok_or_else(|| not_found(ResourceType::DEPLOYMENT, &target.name))?;
    let selector = at(&deploy, &["spec", "selector"])
        .cloned()
        .unwrap_or(Value::Null);
    Ok(store
        .list(ResourceType::POD, Some(&target.namespace))
        .into_iter()
        .filter(|p| selector_matches(&selector, at(p, &["metadata", "labels"])))
        .collect())
}

/// Drain the node that runs the most of `target`'s pods (ties: the first by name).
pub async fn drain(store: &Store, target: &Key) -> Result<(), ApiError> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for pod in pods_of(store, target)? {
        if !node_of(&pod).is_empty() {
            *counts.entry(node_of(&pod).to_string()).or_default() += 1;
        }
    }
    let Some(node) = counts
        .iter()
        .max_by_key(|(n, c)| (**c, std::cmp::Reverse(n.as_str())))
        .map(|(n, _)| n.clone())
    else {
        return Ok(());
    };
    let (cordon, opts) = request_for(
        &Step::Drain {
            target: target.clone(),
        },
        &Value::Null,
    );
    store.patch(ResourceType::NODE, "", &node, &cordon, &opts)?;
    let daemon = |p: &Value| {
        at(p, &["metadata", "ownerReferences"])
            .and_then(Value::as_array)
            .is_some_and(|refs| refs.iter().any(|r| r["kind"] == "DaemonSet"))
    };
    let targets: Vec<String> = pods_of(store, target)?
        .iter()
        .map(|p| name(p).to_string())
        .collect();
    let mut others: Vec<Value> = Vec::new();
    let mut last: Vec<Value> = Vec::new();
    for pod in store.list(ResourceType::POD, None) {
        if node_of(&pod) != node || daemon(&pod) {
            continue;
        }
        if namespace(&pod) == target.namespace && targets.iter().any(|t| t == name(&pod)) {
            last.push(pod);
        } else {
            others.push(pod);
        }
    }
    // One at a time, the biggest first, each once its replacement has a node, so the small ones
    // fill what is left; then the target's pods, which find no room.
    others.sort_by_key(|p| std::cmp::Reverse(pod_requests(p).memory));
    let deadline = tokio::time::Instant::now() + GIVE_UP;
    let is_target =
        |p: &Value| namespace(p) == target.namespace && targets.iter().any(|t| t == name(p));
    let bound_others = || {
        store
            .list(ResourceType::POD, None)
            .iter()
            .filter(|p| !node_of(p).is_empty() && !is_target(p))
            .count()
    };
    for pod in others {
        let before = bound_others();
        evict_all(store, vec![pod], deadline).await;
        let settle = (tokio::time::Instant::now() + SETTLE).min(deadline);
        while bound_others() < before && tokio::time::Instant::now() < settle {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    evict_all(store, last, deadline).await;
    Ok(())
}

/// Evict `pods`, again after a pause while a disruption budget refuses, until `deadline`.
async fn evict_all(store: &Store, mut pods: Vec<Value>, deadline: tokio::time::Instant) {
    while !pods.is_empty() && tokio::time::Instant::now() < deadline {
        pods.retain(
            |pod| match store.evict_pod(namespace(pod), name(pod), false) {
                Err(ApiError::TooManyRequests { .. }) => true,
                Ok(()) | Err(ApiError::NotFound(_)) => false,
                Err(error) => {
                    tracing::warn!(pod = name(pod), %error, "eviction failed");
                    false
                }
            },
        );
        if !pods.is_empty() {
            tokio::time::sleep(RETRY).await;
        }
    }
}

/// Uncordon every cordoned node; the last one uncordoned.
pub fn uncordon(store: &Store) -> Result<Value, ApiError> {
    let (patch, opts) = request_for(
        &Step::Uncordon {
            target: Key::new("", ""),
        },
        &Value::Null,
    );
    let mut last = Value::Null;
    for node in store.list(ResourceType::NODE, None) {
        if at(&node, &["spec", "unschedulable"]) == Some(&Value::Bool(true)) {
            last = store.patch(ResourceType::NODE, "", name(&node), &patch, &opts)?;
        }
    }
    Ok(last)
}

#[cfg(test)]
#[path = "drain_tests.rs"]
mod tests;
