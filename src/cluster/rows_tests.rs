#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::*;

const REFERENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/kubernetes-1.20");

fn capture(name: &str) -> String {
    let path = format!(
        "{}/testdata/kubernetes-1.36/objects/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap()
}

#[test]
fn a_statefulset_row_carries_its_kind_counts_and_revisions() {
    let text = capture("statefulset-db.after-out-of-band.json");
    let full: serde_json::Value = serde_json::from_str(&text).unwrap();
    let slim: SlimStatefulSet = serde_json::from_str(&text).unwrap();
    let row = WorkloadRow::from_statefulset(&slim);
    assert_eq!(row.kind(), WorkloadKind::StatefulSet);
    assert_eq!(
        row.key.name.as_ref(),
        full["metadata"]["name"].as_str().unwrap()
    );
    assert_eq!(
        i64::from(row.desired),
        full["spec"]["replicas"].as_i64().unwrap()
    );
    assert_eq!(
        i64::from(row.ready),
        full["status"]["readyReplicas"].as_i64().unwrap_or(0)
    );
    let KindFacts::StatefulSet(facts) = &row.facts else {
        panic!("{:?}", row.facts);
    };
    assert_eq!(
        facts.update_revision,
        full["status"]["updateRevision"].as_str().unwrap()
    );
    assert_eq!(
        row.images,
        [full["spec"]["template"]["spec"]["containers"][0]["image"]
            .as_str()
            .unwrap()]
    );
}

#[test]
fn a_daemonset_row_counts_nodes() {
    let text = capture("daemonset-agent.after-client-apply.json");
    let full: serde_json::Value = serde_json::from_str(&text).unwrap();
    let row = WorkloadRow::from_daemonset(&serde_json::from_str(&text).unwrap());
    assert_eq!(row.kind(), WorkloadKind::DaemonSet);
    let status = &full["status"];
    assert_eq!(
        (
            i64::from(row.desired),
            i64::from(row.replicas),
            i64::from(row.ready)
        ),
        (
            status["desiredNumberScheduled"].as_i64().unwrap(),
            status["currentNumberScheduled"].as_i64().unwrap(),
            status["numberReady"].as_i64().unwrap()
        )
    );
    assert!(matches!(row.facts, KindFacts::DaemonSet(_)));
}

#[test]
fn controller_revisions_become_revision_rows_of_their_owner() {
    let list: serde_json::Value =
        serde_json::from_str(&capture("controllerrevisions.json")).unwrap();
    let rows: Vec<ReplicaSetRow> = items(&list)
        .into_iter()
        .filter_map(|v| {
            ReplicaSetRow::from_controller_revision(&serde_json::from_value(v).unwrap())
        })
        .collect();
    assert_eq!(
        rows.len(),
        items(&list).len(),
        "every revision has an owner"
    );
    for (row, item) in rows.iter().zip(items(&list)) {
        let owner = &item["metadata"]["ownerReferences"][0];
        assert_eq!(row.owner.as_deref(), owner["name"].as_str());
        assert_eq!(row.owner_kind.kind(), owner["kind"].as_str().unwrap());
        assert_eq!(row.key.kind, "ControllerRevision");
        assert_eq!(row.revision, item["revision"].as_i64());
        assert!(
            row.template.keys().any(|k| k.starts_with("image ")),
            "{:?}",
            row.template
        );
    }
}

#[test]
fn workload_kinds_parse_as_kubectl_names_them() {
    for (word, kind) in [
        ("deploy", WorkloadKind::Deployment),
        ("Deployments", WorkloadKind::Deployment),
        ("sts", WorkloadKind::StatefulSet),
        ("statefulset", WorkloadKind::StatefulSet),
        ("ds", WorkloadKind::DaemonSet),
        ("daemonsets", WorkloadKind::DaemonSet),
    ] {
        assert_eq!(WorkloadKind::parse(word), Some(kind), "{word}");
    }
    assert_eq!(WorkloadKind::parse("pods"), None);
    assert_eq!(
        WorkloadKind::of_kind("apps", "StatefulSet"),
        Some(WorkloadKind::StatefulSet)
    );
    assert_eq!(WorkloadKind::of_kind("extensions", "DaemonSet"), None);
}

fn reference(name: &str) -> serde_json::Value {
    let path = format!("{REFERENCE}/{name}");
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn items(v: &serde_json::Value) -> Vec<serde_json::Value> {
    v["items"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| vec![v.clone()])
}

#[test]
fn rollout_in_progress_deployment_maps_counts_and_conditions() {
    let d: SlimDeployment =
        serde_json::from_value(reference("deploy-rollout-in-progress.json")).unwrap();
    let row = WorkloadRow::from_object(&d);
    let spec_replicas = d.spec.as_ref().unwrap().replicas.unwrap_or(1);
    assert_eq!(row.desired, spec_replicas);
    assert_eq!(
        row.updated,
        d.status.as_ref().unwrap().updated_replicas.unwrap_or(0)
    );
    assert!(row.condition("Progressing").is_some());
    assert!(!row.images.is_empty());
    assert!(row.last_change >= row.created);
}

#[test]
fn replicasets_carry_revision_owner_and_image() {
    for v in items(&reference("replicasets.json")) {
        let rs: ReplicaSet = serde_json::from_value(v).unwrap();
        let row = ReplicaSetRow::from_object(&rs);
        assert!(row.revision.is_some(), "{:?}", row.key);
        assert!(row.owner.is_some(), "{:?}", row.key);
        assert!(
            row.template.keys().any(|k| k.starts_with("image ")),
            "{:?}",
            row.template
        );
    }
}

#[test]
fn pods_report_ready_counts_and_owner() {
    for v in items(&reference("pods.json")) {
        let p: Pod = serde_json::from_value(v).unwrap();
        let row = PodRow::from_object(&p);
        assert!(row.containers >= 1);
        assert!(row.ready_containers <= row.containers);
        assert!(row.owner.is_some());
    }
}

#[test]
fn crashlooping_pod_shows_the_waiting_reason() {
    let p: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web-1", "namespace": "shop"},
        "spec": {"containers": [{"name": "web", "image": "web:2"}]},
        "status": {"phase": "Running", "containerStatuses": [{
            "name": "web", "image": "web:2", "imageID": "", "ready": false, "restartCount": 7,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}}
        }]}
    }))
    .unwrap();
    let row = PodRow::from_object(&p);
    assert_eq!(row.reason.as_deref(), Some("CrashLoopBackOff"));
    assert_eq!(
        (row.ready_containers, row.containers, row.restarts),
        (0, 1, 7)
    );
}

#[test]
fn unschedulable_pod_says_why() {
    let p: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web-1", "namespace": "shop"},
        "spec": {"containers": [{"name": "web"}]},
        "status": {"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
        ]}
    }))
    .unwrap();
    assert_eq!(
        PodRow::from_object(&p).reason.as_deref(),
        Some("Unschedulable")
    );
}

#[test]
fn events_about_other_kinds_are_dropped() {
    for v in items(&reference("events.json")) {
        let e: Event = serde_json::from_value(v).unwrap();
        let kind = e.involved_object.kind.clone().unwrap_or_default();
        let row = EventRow::from_object(&e);
        assert_eq!(
            row.is_some(),
            ["Deployment", "ReplicaSet", "Pod"].contains(&kind.as_str())
        );
    }
}
