//! The replicaset controller's decisions, as pure functions: which pods to create or delete so
//! a ReplicaSet has `spec.replicas` of them, and the ReplicaSet status (ready and available
//! counts, honouring `minReadySeconds`).
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};

use super::events::{Component, EventSpec};
use crate::object::{
    at, i64_at, name, namespace, owner_reference, parse_time, spec_replicas, str_at,
};

/// What one sync of a ReplicaSet decided.
#[derive(Debug, Clone, Default)]
pub struct ReplicaSetSync {
    /// Pods to create (complete objects).
    pub create: Vec<Value>,
    /// Names of pods to delete.
    pub delete: Vec<String>,
    pub events: Vec<EventSpec>,
    /// The new status, when it differs from the current one.
    pub status: Option<Value>,
    /// Look again after this long (a pod about to pass `minReadySeconds`).
    pub requeue_after: Option<Duration>,
}

/// Since when a pod has been Ready, if it is.
pub fn ready_since(pod: &Value) -> Option<Timestamp> {
    let ready = at(pod, &["status", "conditions"])?
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")?;
    if ready["status"] != "True" {
        return None;
    }
    Some(
        ready["lastTransitionTime"]
            .as_str()
            .and_then(parse_time)
            .unwrap_or(Timestamp::UNIX_EPOCH),
    )
}

/// Lower ranks are deleted first, as the replicaset controller prefers: pods not yet running,
/// then not ready, then the most restarted, then the newest.
fn deletion_rank(pod: &Value) -> (u8, u8, i64, std::cmp::Reverse<String>) {
    let phase = match str_at(pod, &["status", "phase"]) {
        Some("Running") => 2,
        Some("Pending") => 0,
        _ => 1,
    };
    let ready = u8::from(ready_since(pod).is_some());
    let restarts: i64 = at(pod, &["status", "containerStatuses"])
        .and_then(Value::as_array)
        .map(|cs| cs.iter().filter_map(|c| c["restartCount"].as_i64()).sum())
        .unwrap_or(0);
    let created = str_at(pod, &["metadata", "creationTimestamp"])
        .unwrap_or_default()
        .to_string();
    (phase, ready, -restarts, std::cmp::Reverse(created))
}

/// Decide what the replicaset controller does for `rs`, owning `pods`. `suffix` gives the
/// random part of new pod names.
pub fn sync_replicaset(
    rs: &Value,
    pods: &[Value],
    now: Timestamp,
    suffix: &mut dyn FnMut() -> String,
) -> ReplicaSetSync {
    let mut out = ReplicaSetSync::default();
    let wanted = usize::try_from(spec_replicas(rs)).unwrap_or(0);
    let mut remaining: Vec<&Value> = pods.iter().collect();
    if pods.len() < wanted {
        for _ in pods.len()..wanted {
            let pod = new_pod(rs, &suffix());
            out.events.push(EventSpec::normal(
                Component::ReplicaSetController,
                "SuccessfulCreate",
                format!("Created pod: {}", name(&pod)),
            ));
            out.create.push(pod);
        }
    } else if pods.len() > wanted {
        remaining.sort_by_key(|p| deletion_rank(p));
        for pod in remaining.drain(..pods.len() - wanted) {
            out.events.push(EventSpec::normal(
                Component::ReplicaSetController,
                "SuccessfulDelete",
                format!("Deleted pod: {}", name(pod)),
            ));
            out.delete.push(name(pod).to_string());
        }
    }
    let min_ready =
        SignedDuration::from_secs(i64_at(rs, &["spec", "minReadySeconds"]).unwrap_or(0));
    let mut ready = 0;
    let mut available = 0;
    let mut next_available: Option<SignedDuration> = None;
    for pod in &remaining {
        let Some(since) = ready_since(pod) else {
            continue;
        };
        ready += 1;
        let at = since + min_ready;
        if at <= now {
            available += 1;
        } else {
            let wait = at.duration_since(now);
            next_available = Some(next_available.map_or(wait, |w| w.min(wait)));
        }
    }
    let total = i64::try_from(remaining.len() + out.create.len()).unwrap_or(0);
    let mut status = Map::new();
    status.insert("replicas".into(), json!(total));
    let mut put = |key: &str, n: i64| {
        if n != 0 {
            status.insert(key.into(), json!(n));
        }
    };
    put("fullyLabeledReplicas", total);
    put("readyReplicas", ready);
    put("availableReplicas", available);
    put(
        "observedGeneration",
        i64_at(rs, &["metadata", "generation"]).unwrap_or(0),
    );
    let status = Value::Object(status);
    if rs.get("status") != Some(&status) {
        out.status = Some(status);
    }
    out.requeue_after = next_available
        .and_then(|d| Duration::try_from(d).ok())
        .map(|d| d + Duration::from_millis(20));
    out
}

/// A pod of `rs`'s template, named `<rs>-<suffix>`, owned by the ReplicaSet.
pub fn new_pod(rs: &Value, suffix: &str) -> Value {
    let template = at(rs, &["spec", "template"])
        .cloned()
        .unwrap_or_else(|| json!({}));
    let labels = template
        .pointer("/metadata/labels")
        .cloned()
        .unwrap_or_else(|| json!({}));
    pod_from_template(rs, &template, &format!("{}-{suffix}", name(rs)), labels)
}

/// A pod named `pod_name` made from `template` as the controllers make them
/// (`controller.GetPodFromTemplate`): `generateName` after the owner, the template's
/// annotations and spec, `labels`, owned by `owner`.
pub fn pod_from_template(owner: &Value, template: &Value, pod_name: &str, labels: Value) -> Value {
    let mut metadata = json!({
        "name": pod_name,
        "generateName": format!("{}-", name(owner)),
        "namespace": namespace(owner),
        "labels": labels,
        "ownerReferences": [owner_reference(owner)],
    });
    if let Some(annotations) = template.pointer("/metadata/annotations") {
        metadata["annotations"] = annotations.clone();
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": template.get("spec").cloned().unwrap_or_else(|| json!({})),
    })
}

/// How long until the first of `pods` that is ready becomes available (`minReadySeconds`
/// after it got ready), a little more so the look after it sees it available.
pub fn next_available<'a>(
    pods: impl Iterator<Item = &'a Value>,
    min_ready: SignedDuration,
    now: Timestamp,
) -> Option<Duration> {
    pods.filter_map(ready_since)
        .map(|since| since + min_ready)
        .filter(|at| *at > now)
        .map(|at| at.duration_since(now))
        .min()
        .and_then(|d| Duration::try_from(d).ok())
        .map(|d| d + Duration::from_millis(20))
}

/// Five characters of Kubernetes' safe alphabet, as `generateName` appends.
pub fn random_suffix() -> String {
    const SAFE: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    uuid::Uuid::new_v4().as_bytes()[..5]
        .iter()
        .map(|b| char::from(SAFE[usize::from(*b) % SAFE.len()]))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn rs(replicas: i64, min_ready: i64) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-585f666f7", "namespace": "shop", "uid": "rs-uid", "generation": 2},
            "spec": {"replicas": replicas, "minReadySeconds": min_ready,
                "template": {"metadata": {"labels": {"app": "web", "pod-template-hash": "585f666f7"}},
                             "spec": {"containers": [{"name": "web", "image": "web:1"}]}}}})
    }

    fn pod(name: &str, ready_at: Option<&str>, created: &str) -> Value {
        let mut p = new_pod(&rs(1, 0), name);
        p["metadata"]["creationTimestamp"] = json!(created);
        p["status"] = match ready_at {
            Some(t) => {
                json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": t}]})
            }
            None => {
                json!({"phase": "Pending", "conditions": [{"type": "Ready", "status": "False"}]})
            }
        };
        p
    }

    fn now() -> Timestamp {
        "2026-11-22T03:00:10Z".parse().unwrap()
    }

    #[test]
    fn creates_missing_pods_owned_and_labelled() {
        let mut n = 0;
        let r = sync_replicaset(&rs(2, 0), &[], now(), &mut || {
            n += 1;
            format!("abc{n}x")
        });
        assert_eq!(r.create.len(), 2);
        let p = &r.create[0];
        assert_eq!(p["metadata"]["name"], "web-585f666f7-abc1x");
        assert_eq!(p["metadata"]["labels"]["pod-template-hash"], "585f666f7");
        assert_eq!(
            p["metadata"]["ownerReferences"][0],
            json!({"apiVersion": "apps/v1", "blockOwnerDeletion": true,
            "controller": true, "kind": "ReplicaSet", "name": "web-585f666f7", "uid": "rs-uid"})
        );
        assert_eq!(r.events[1].message, "Created pod: web-585f666f7-abc2x");
        assert_eq!(
            r.status,
            Some(json!({"replicas": 2, "fullyLabeledReplicas": 2, "observedGeneration": 2}))
        );
    }

    #[test]
    fn deletes_unready_and_newest_pods_first() {
        let pods = [
            pod("old", Some("2026-11-22T03:00:00Z"), "2026-11-22T02:00:00Z"),
            pod("new", Some("2026-11-22T03:00:01Z"), "2026-11-22T02:30:00Z"),
            pod("pending", None, "2026-11-22T01:00:00Z"),
        ];
        let r = sync_replicaset(&rs(1, 0), &pods, now(), &mut random_suffix);
        assert_eq!(r.delete, ["web-585f666f7-pending", "web-585f666f7-new"]);
        assert_eq!(r.status.unwrap()["availableReplicas"], 1);
    }

    #[test]
    fn min_ready_seconds_delays_availability_and_asks_to_look_again() {
        let pods = [pod(
            "a",
            Some("2026-11-22T03:00:08Z"),
            "2026-11-22T03:00:00Z",
        )];
        let r = sync_replicaset(&rs(1, 5), &pods, now(), &mut random_suffix);
        let status = r.status.unwrap();
        assert_eq!(status["readyReplicas"], 1);
        assert!(status.get("availableReplicas").is_none());
        let wait = r.requeue_after.unwrap();
        assert!(
            wait >= Duration::from_secs(3) && wait < Duration::from_secs(4),
            "{wait:?}"
        );
    }

    #[test]
    fn random_suffixes_use_the_safe_alphabet() {
        let s = random_suffix();
        assert_eq!(s.len(), 5);
        assert!(s.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
        assert_ne!(random_suffix(), random_suffix());
    }
}
