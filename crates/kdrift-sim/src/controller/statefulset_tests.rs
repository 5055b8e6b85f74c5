#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::*;
use serde_json::json;

fn now() -> Timestamp {
    "2026-11-24T03:00:10Z".parse().unwrap()
}

fn set(replicas: i64, image: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "payments", "uid": "sts-uid", "generation": 1},
        "spec": {"replicas": replicas, "serviceName": "db", "podManagementPolicy": "OrderedReady",
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "db"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "template": {"metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": image}]}}}})
}

/// The revisions `set` made of itself, as the driver would store them.
fn history_of(set: &Value, revisions: &[Value]) -> Vec<Value> {
    let mut all = revisions.to_vec();
    for change in sync_statefulset(set, &[], revisions, now()).history {
        match change {
            HistoryChange::Create(r) => all.push(r),
            HistoryChange::Renumber { name, revision } => {
                for r in &mut all {
                    if r["metadata"]["name"] == name.as_str() {
                        r["revision"] = json!(revision);
                    }
                }
            }
            HistoryChange::Delete(_) => {}
        }
    }
    all
}

/// The first revision of `set` and its name.
fn first_revision(set: &Value) -> (Vec<Value>, String) {
    let revisions = history_of(set, &[]);
    let name = revisions[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    (revisions, name)
}

fn ready(mut pod: Value) -> Value {
    pod["status"] = json!({"phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-24T03:00:00Z"}]});
    pod
}

fn pods(set: &Value, revision: &str, ordinals: std::ops::Range<i64>) -> Vec<Value> {
    ordinals
        .map(|n| ready(new_pod(set, &set["spec"]["template"], n, revision)))
        .collect()
}

#[test]
fn pods_are_made_one_at_a_time_in_order() {
    let s = set(3, "db:1");
    let (revisions, rev) = first_revision(&s);
    let first = sync_statefulset(&s, &[], &revisions, now());
    assert_eq!(first.create.len(), 1);
    let db0 = &first.create[0];
    assert_eq!(db0["metadata"]["name"], "db-0");
    assert_eq!(
        db0["metadata"]["labels"],
        json!({"app": "db", "apps.kubernetes.io/pod-index": "0",
               "controller-revision-hash": rev, "statefulset.kubernetes.io/pod-name": "db-0"})
    );
    assert_eq!(db0["metadata"]["generateName"], "db-");
    assert_eq!(db0["spec"]["hostname"], "db-0");
    assert_eq!(db0["spec"]["subdomain"], "db");
    assert_eq!(db0["metadata"]["ownerReferences"][0]["kind"], "StatefulSet");
    assert_eq!(
        first.events[0].message,
        "create Pod db-0 in StatefulSet db successful"
    );
    // db-0 exists but is not ready: wait.
    let mut unready = db0.clone();
    unready["status"] = json!({"phase": "Pending"});
    let waiting = sync_statefulset(&s, &[unready], &revisions, now());
    assert!(waiting.create.is_empty() && waiting.delete.is_empty());
    // db-0 ready: db-1 comes.
    let next = sync_statefulset(&s, &[ready(db0.clone())], &revisions, now());
    assert_eq!(next.create[0]["metadata"]["name"], "db-1");
    let status = next.status.unwrap();
    assert_eq!(status["replicas"], 2);
    assert_eq!(status["readyReplicas"], 1);
    assert_eq!(status["currentRevision"], rev.as_str());
    assert_eq!(status["updateRevision"], rev.as_str());
    assert_eq!(status["collisionCount"], 0);
    assert_eq!(status["observedGeneration"], 1);
}

#[test]
fn parallel_makes_every_pod_at_once() {
    let mut s = set(3, "db:1");
    s["spec"]["podManagementPolicy"] = json!("Parallel");
    let revisions = history_of(&s, &[]);
    let r = sync_statefulset(&s, &[], &revisions, now());
    let names: Vec<&str> = r
        .create
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["db-0", "db-1", "db-2"]);
}

#[test]
fn scale_down_removes_the_highest_ordinal_first() {
    let s = set(3, "db:1");
    let (revisions, rev) = first_revision(&s);
    let r = sync_statefulset(&set(1, "db:1"), &pods(&s, &rev, 0..3), &revisions, now());
    assert_eq!(r.delete, ["db-2"]);
    assert_eq!(r.status.unwrap()["replicas"], 2);
}

#[test]
fn a_rolling_update_goes_from_the_highest_ordinal_down_to_the_partition() {
    let v1 = set(3, "db:1");
    let (revisions, old) = first_revision(&v1);
    let mut v2 = set(3, "db:2");
    v2["metadata"]["generation"] = json!(2);
    v2["status"] = json!({"currentRevision": old});
    let r = sync_statefulset(&v2, &pods(&v1, &old, 0..3), &revisions, now());
    let [HistoryChange::Create(new_rev)] = r.history.as_slice() else {
        panic!("{:?}", r.history)
    };
    let new = new_rev["metadata"]["name"].as_str().unwrap().to_string();
    assert_eq!(new_rev["revision"], 2);
    assert_eq!(r.delete, ["db-2"], "one pod at a time, the highest first");
    let status = r.status.unwrap();
    assert_eq!(
        (
            status["currentRevision"].as_str(),
            status["updateRevision"].as_str()
        ),
        (Some(old.as_str()), Some(new.as_str()))
    );
    assert_eq!(status["currentReplicas"], 2);
    assert!(status.get("updatedReplicas").is_none());

    // db-2 back on the new revision and ready; db-1 goes next. With partition 1, db-0 stays.
    let revisions = history_of(&v2, &revisions);
    let mut mixed = pods(&v1, &old, 0..2);
    mixed.extend(pods(&v2, &new, 2..3));
    v2["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(1);
    let r = sync_statefulset(&v2, &mixed, &revisions, now());
    assert_eq!(r.delete, ["db-1"]);
    let mut done = pods(&v1, &old, 0..1);
    done.extend(pods(&v2, &new, 1..3));
    let r = sync_statefulset(&v2, &done, &revisions, now());
    assert!(r.delete.is_empty(), "{:?}", r.delete);
    let status = r.status.unwrap();
    assert_eq!(status["updatedReplicas"], 2);
    assert_eq!(
        status["currentRevision"],
        old.as_str(),
        "a partitioned rollout keeps the old revision current"
    );
    // A pod below the partition that is deleted comes back on the old revision.
    let r = sync_statefulset(&v2, &pods(&v2, &new, 1..3), &revisions, now());
    assert_eq!(
        r.create[0]["metadata"]["labels"]["controller-revision-hash"],
        old.as_str()
    );
    assert_eq!(r.create[0]["spec"]["containers"][0]["image"], "db:1");
    // Partition 0 and every pod updated: the update revision becomes current.
    v2["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(0);
    let r = sync_statefulset(&v2, &pods(&v2, &new, 0..3), &revisions, now());
    assert_eq!(r.status.unwrap()["currentRevision"], new.as_str());
}

#[test]
fn max_unavailable_updates_several_pods_at_once() {
    let v1 = set(4, "db:1");
    let (revisions, old) = first_revision(&v1);
    let mut v2 = set(4, "db:2");
    v2["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = json!(2);
    let r = sync_statefulset(&v2, &pods(&v1, &old, 0..4), &revisions, now());
    assert_eq!(r.delete, ["db-2", "db-3"]);
}

#[test]
fn on_delete_leaves_pods_until_someone_deletes_them() {
    let v1 = set(2, "db:1");
    let (revisions, old) = first_revision(&v1);
    let mut v2 = set(2, "db:2");
    v2["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
    let revisions = history_of(&v2, &revisions);
    let r = sync_statefulset(&v2, &pods(&v1, &old, 0..2), &revisions, now());
    assert!(r.delete.is_empty());
    let r = sync_statefulset(&v2, &pods(&v1, &old, 0..1), &revisions, now());
    assert_eq!(r.create[0]["spec"]["containers"][0]["image"], "db:2");
}

#[test]
fn the_revision_of_a_captured_statefulset_is_named_as_a_real_server_names_it() {
    let captured: Value = serde_json::from_str(include_str!(
        "../../../../testdata/kubernetes-1.36/objects/statefulset-db.after-client-apply.json"
    ))
    .unwrap();
    let r = sync_statefulset(&captured, &[], &[], now());
    let Some(HistoryChange::Create(rev)) = r.history.first() else {
        panic!("{:?}", r.history)
    };
    assert_eq!(rev["metadata"]["name"], "db-b7d7b979b");
    assert_eq!(
        rev["metadata"]["labels"]["controller.kubernetes.io/hash"],
        "b7d7b979b"
    );
    let reference: Value = serde_json::from_str(include_str!(
        "../../../../testdata/kubernetes-1.36/objects/controllerrevisions.json"
    ))
    .unwrap();
    let real = reference["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metadata"]["name"] == "db-b7d7b979b")
        .unwrap();
    assert_eq!(rev["data"], real["data"]);
    assert_eq!(
        rev["metadata"]["annotations"],
        real["metadata"]["annotations"]
    );
}

#[test]
fn old_revisions_past_the_limit_go() {
    let mut s = set(1, "db:0");
    s["spec"]["revisionHistoryLimit"] = json!(1);
    let mut revisions = history_of(&s, &[]);
    for v in 1..4 {
        s["spec"]["template"]["spec"]["containers"][0]["image"] = json!(format!("db:{v}"));
        revisions = history_of(&s, &revisions);
    }
    let current = revisions.last().unwrap()["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let r = sync_statefulset(&s, &pods(&s, &current, 0..1), &revisions, now());
    let deleted: Vec<&HistoryChange> = r
        .history
        .iter()
        .filter(|c| matches!(c, HistoryChange::Delete(_)))
        .collect();
    assert_eq!(deleted.len(), 2, "4 revisions, 1 live, 1 kept");
}
