#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::*;
use serde_json::json;

fn now() -> Timestamp {
    "2026-11-24T03:00:10Z".parse().unwrap()
}

fn node(name: &str) -> Value {
    json!({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}},
           "spec": {}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
}

fn ds(image: &str, generation: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "platform", "uid": "ds-uid", "generation": 1,
            "annotations": {"deprecated.daemonset.template.generation": generation}},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "revisionHistoryLimit": 10,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": image}]}}}})
}

fn suffixes() -> impl FnMut() -> String {
    let mut n = 0;
    move || {
        n += 1;
        format!("p{n}")
    }
}

/// Run a sync and return it, with the revisions it made added to `revisions`.
fn sync(d: &Value, nodes: &[Value], pods: &[Value], revisions: &mut Vec<Value>) -> WorkloadSync {
    let refs: Vec<&Value> = nodes.iter().collect();
    let r = sync_daemonset(d, &refs, pods, revisions, now(), &mut suffixes());
    for change in &r.history {
        if let HistoryChange::Create(rev) = change {
            revisions.push(rev.clone());
        }
    }
    r
}

/// `pods` bound to their target nodes, ready since long ago.
fn running(pods: &[Value]) -> Vec<Value> {
    pods.iter()
        .enumerate()
        .map(|(i, p)| {
            let mut p = p.clone();
            p["metadata"]["name"] = json!(format!("{}-{i}", p["metadata"]["name"].as_str().unwrap()));
            p["metadata"]["creationTimestamp"] = json!("2026-11-24T02:00:00Z");
            p["spec"]["nodeName"] = json!(target_node(&p).unwrap());
            p["status"] = json!({"phase": "Running", "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-24T02:00:00Z"}]});
            p
        })
        .collect()
}

#[test]
fn one_pod_per_fitting_node_pinned_and_tolerant() {
    let mut nodes = vec![
        node("demo-node-1"),
        node("demo-node-2"),
        node("demo-node-3"),
    ];
    nodes[1]["spec"]["taints"] =
        json!([{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]);
    nodes[2]["spec"]["unschedulable"] = json!(true);
    let mut revisions = Vec::new();
    let r = sync(&ds("agent:1.0", "1"), &nodes, &[], &mut revisions);
    assert_eq!(
        r.create.len(),
        2,
        "not on the tainted node; a cordon is tolerated"
    );
    let pod = &r.create[0];
    let hash = revisions[0]["metadata"]["labels"]["controller-revision-hash"]
        .as_str()
        .unwrap();
    assert_eq!(revisions[0]["metadata"]["name"], format!("agent-{hash}"));
    assert_eq!(
        revisions[0]["metadata"]["annotations"]["deprecated.daemonset.template.generation"],
        "1"
    );
    assert_eq!(
        pod["metadata"]["labels"],
        json!({"app": "agent", "controller-revision-hash": hash, "pod-template-generation": "1"})
    );
    assert_eq!(pod["metadata"]["generateName"], "agent-");
    assert_eq!(
        pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            [0]["matchFields"][0],
        json!({"key": "metadata.name", "operator": "In", "values": ["demo-node-1"]})
    );
    let tolerations: Vec<&str> = pod["spec"]["tolerations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        tolerations,
        [
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
            "node.kubernetes.io/disk-pressure",
            "node.kubernetes.io/memory-pressure",
            "node.kubernetes.io/pid-pressure",
            "node.kubernetes.io/unschedulable"
        ]
    );
    assert_eq!(r.events[0].message, "Created pod: agent-p1");
    let status = r.status.unwrap();
    assert_eq!(status["desiredNumberScheduled"], 2);
    assert_eq!(status["currentNumberScheduled"], 0);
    assert_eq!(status["numberUnavailable"], 2);
    assert_eq!(status["numberMisscheduled"], 0);
}

#[test]
fn status_counts_the_pods_on_their_nodes() {
    let nodes = vec![node("demo-node-1"), node("demo-node-2")];
    let mut revisions = Vec::new();
    let d = ds("agent:1.0", "1");
    let created = sync(&d, &nodes, &[], &mut revisions).create;
    let pods = running(&created);
    let r = sync(&d, &nodes, &pods, &mut revisions);
    assert!(r.create.is_empty() && r.delete.is_empty());
    assert_eq!(
        r.status.unwrap(),
        json!({"currentNumberScheduled": 2, "desiredNumberScheduled": 2, "numberAvailable": 2,
               "numberMisscheduled": 0, "numberReady": 2, "observedGeneration": 1, "updatedNumberScheduled": 2})
    );
    // A NoSchedule taint added later: the pod stays, misscheduled.
    let mut tainted = nodes.clone();
    tainted[1]["spec"]["taints"] =
        json!([{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]);
    let r = sync(&d, &tainted, &pods, &mut revisions);
    assert!(r.delete.is_empty());
    assert_eq!(r.status.unwrap()["numberMisscheduled"], 1);
    // NoExecute: it goes.
    tainted[1]["spec"]["taints"][0]["effect"] = json!("NoExecute");
    let r = sync(&d, &tainted, &pods, &mut revisions);
    assert_eq!(r.delete.len(), 1);
}

#[test]
fn a_rolling_update_replaces_max_unavailable_pods_at_a_time() {
    let nodes = vec![
        node("demo-node-1"),
        node("demo-node-2"),
        node("demo-node-3"),
    ];
    let mut revisions = Vec::new();
    let v1 = ds("agent:1.0", "1");
    let pods = running(&sync(&v1, &nodes, &[], &mut revisions).create);
    let v2 = ds("agent:1.1", "2");
    let r = sync(&v2, &nodes, &pods, &mut revisions);
    assert_eq!(revisions.len(), 2);
    assert_eq!(r.delete.len(), 1, "maxUnavailable 1");
    assert!(r.create.is_empty());
    let status = r.status.unwrap();
    assert!(status.get("updatedNumberScheduled").is_none());
    // The old pod went: a new one for its node.
    let rest: Vec<Value> = pods
        .iter()
        .filter(|p| p["metadata"]["name"] != r.delete[0].as_str())
        .cloned()
        .collect();
    let r = sync(&v2, &nodes, &rest, &mut revisions);
    assert_eq!(r.create.len(), 1);
    assert_eq!(r.create[0]["spec"]["containers"][0]["image"], "agent:1.1");
    assert_eq!(
        r.create[0]["metadata"]["labels"]["pod-template-generation"],
        "2"
    );
    // While the new pod is not ready, no other old pod goes.
    let mut fresh = r.create[0].clone();
    fresh["spec"]["nodeName"] = json!(target_node(&fresh).unwrap());
    fresh["metadata"]["creationTimestamp"] = json!("2026-11-24T03:00:09Z");
    let mut with_new = rest.clone();
    with_new.push(fresh);
    let r = sync(&v2, &nodes, &with_new, &mut revisions);
    assert!(r.delete.is_empty() && r.create.is_empty());
    assert_eq!(r.status.unwrap()["updatedNumberScheduled"], 1);
}

#[test]
fn a_surge_starts_the_new_pod_before_the_old_one_goes() {
    let nodes = vec![node("demo-node-1"), node("demo-node-2")];
    let mut revisions = Vec::new();
    let v1 = ds("agent:1.0", "1");
    let pods = running(&sync(&v1, &nodes, &[], &mut revisions).create);
    let mut v2 = ds("agent:1.1", "2");
    v2["spec"]["updateStrategy"]["rollingUpdate"] = json!({"maxSurge": 1, "maxUnavailable": 0});
    let r = sync(&v2, &nodes, &pods, &mut revisions);
    assert!(r.delete.is_empty());
    assert_eq!(r.create.len(), 1, "maxSurge 1");
    let surged = running(&r.create);
    let mut both = pods.clone();
    both.extend(surged);
    let r = sync(&v2, &nodes, &both, &mut revisions);
    assert_eq!(
        r.delete.len(),
        1,
        "the new pod is available: the old one on its node goes"
    );
    assert_eq!(r.create.len(), 1, "and the next node surges");
}

#[test]
fn on_delete_waits_for_pods_to_be_deleted() {
    let nodes = vec![node("demo-node-1")];
    let mut revisions = Vec::new();
    let v1 = ds("agent:1.0", "1");
    let pods = running(&sync(&v1, &nodes, &[], &mut revisions).create);
    let mut v2 = ds("agent:1.1", "2");
    v2["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
    let r = sync(&v2, &nodes, &pods, &mut revisions);
    assert!(r.delete.is_empty() && r.create.is_empty());
    let r = sync(&v2, &nodes, &[], &mut revisions);
    assert_eq!(r.create[0]["spec"]["containers"][0]["image"], "agent:1.1");
}
