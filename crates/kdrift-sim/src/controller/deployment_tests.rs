//! Tests of the deployment controller's decisions, against a small in-memory world where
//! ReplicaSets get their pods at once and pods become available when the test says so.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::*;
use crate::controller::deploy_status::{TIMED_OUT, condition};

struct World {
    deploy: Value,
    rss: Vec<Value>,
    now: Timestamp,
    events: Vec<String>,
    /// (total pods, available pods) after every sync.
    history: Vec<(i64, i64)>,
}

fn deployment(replicas: i64, image: &str, strategy: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "d-uid", "generation": 1},
        "spec": {
            "replicas": replicas,
            "progressDeadlineSeconds": 45,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": strategy,
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "web", "image": image}]}},
        },
    })
}

fn rolling(surge: Value, unavailable: Value) -> Value {
    json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}})
}

impl World {
    fn new(deploy: Value) -> World {
        World {
            deploy,
            rss: Vec::new(),
            now: "2026-11-22T03:00:00Z".parse().unwrap(),
            events: Vec::new(),
            history: Vec::new(),
        }
    }

    /// One sync, then the ReplicaSet controller's and kubelet's part: pods exist at once and
    /// are available if `healthy` says so for their image.
    fn sync(&mut self, healthy: &dyn Fn(&str) -> bool) -> DeploymentSync {
        let result = sync_deployment(&self.deploy, &self.rss, self.now);
        for action in &result.actions {
            match action {
                DeploymentAction::CreateReplicaSet(rs) => {
                    let mut rs = rs.clone();
                    rs["metadata"]["generation"] = json!(1);
                    self.rss.push(rs);
                }
                DeploymentAction::ScaleReplicaSet {
                    name,
                    replicas,
                    annotations,
                } => {
                    let rs = self
                        .rss
                        .iter_mut()
                        .find(|rs| rs["metadata"]["name"] == name.as_str())
                        .unwrap();
                    rs["spec"]["replicas"] = json!(replicas);
                    rs["metadata"]["generation"] =
                        json!(rs["metadata"]["generation"].as_i64().unwrap() + 1);
                    for (k, v) in annotations {
                        rs["metadata"]["annotations"][k] = v.clone();
                    }
                }
                DeploymentAction::AnnotateReplicaSet { name, annotations } => {
                    let rs = self
                        .rss
                        .iter_mut()
                        .find(|rs| rs["metadata"]["name"] == name.as_str())
                        .unwrap();
                    for (k, v) in annotations {
                        rs["metadata"]["annotations"][k] = v.clone();
                    }
                }
                DeploymentAction::DeleteReplicaSet { name } => self
                    .rss
                    .retain(|rs| rs["metadata"]["name"] != name.as_str()),
            }
        }
        self.events
            .extend(result.events.iter().map(|e| e.message.clone()));
        if let Some(revision) = &result.revision {
            self.deploy["metadata"]["annotations"][REVISION] = json!(revision);
        }
        if let Some(status) = &result.status {
            self.deploy["status"] = status.clone();
        }
        for rs in &mut self.rss {
            let replicas = rs["spec"]["replicas"].as_i64().unwrap();
            let image = rs["spec"]["template"]["spec"]["containers"][0]["image"]
                .as_str()
                .unwrap()
                .to_string();
            let available = if healthy(&image) { replicas } else { 0 };
            rs["status"] = json!({"replicas": replicas, "readyReplicas": available, "availableReplicas": available,
                                  "observedGeneration": rs["metadata"]["generation"]});
        }
        let total = self
            .rss
            .iter()
            .map(|rs| rs["status"]["replicas"].as_i64().unwrap())
            .sum();
        let available = self
            .rss
            .iter()
            .map(|rs| rs["status"]["availableReplicas"].as_i64().unwrap())
            .sum();
        self.history.push((total, available));
        self.now += jiff::SignedDuration::from_secs(1);
        result
    }

    fn settle(&mut self, healthy: &dyn Fn(&str) -> bool) {
        for _ in 0..50 {
            let r = self.sync(healthy);
            if r.actions.is_empty() && r.status.is_none() && r.revision.is_none() {
                return;
            }
        }
        panic!("did not settle: {:#?}", self.deploy["status"]);
    }

    fn set_image(&mut self, image: &str) {
        self.deploy["spec"]["template"]["spec"]["containers"][0]["image"] = json!(image);
        let generation = self.deploy["metadata"]["generation"].as_i64().unwrap();
        self.deploy["metadata"]["generation"] = json!(generation + 1);
    }

    fn progressing(&self) -> (String, String, String) {
        let c = condition(&self.deploy["status"], "Progressing").unwrap();
        (
            c["status"].as_str().unwrap().into(),
            c["reason"].as_str().unwrap().into(),
            c["message"].as_str().unwrap().into(),
        )
    }

    fn sizes(&self) -> Vec<(String, i64)> {
        let mut s: Vec<(String, i64)> = self
            .rss
            .iter()
            .map(|rs| {
                (
                    rs["metadata"]["annotations"][REVISION]
                        .as_str()
                        .unwrap()
                        .to_string(),
                    rs["spec"]["replicas"].as_i64().unwrap(),
                )
            })
            .collect();
        s.sort();
        s
    }
}

fn all_healthy(_: &str) -> bool {
    true
}

#[test]
fn first_rollout_creates_one_replica_set_and_completes() {
    let mut w = World::new(deployment(2, "web:1", rolling(json!("25%"), json!("25%"))));
    w.settle(&all_healthy);
    assert_eq!(w.rss.len(), 1);
    let rs = &w.rss[0];
    let hash = rs["metadata"]["labels"][POD_TEMPLATE_HASH]
        .as_str()
        .unwrap();
    assert_eq!(rs["metadata"]["name"], format!("web-{hash}"));
    assert_eq!(
        rs["spec"]["selector"]["matchLabels"][POD_TEMPLATE_HASH],
        hash
    );
    assert_eq!(
        rs["spec"]["template"]["metadata"]["labels"][POD_TEMPLATE_HASH],
        hash
    );
    assert_eq!(rs["metadata"]["ownerReferences"][0]["uid"], "d-uid");
    assert_eq!(rs["metadata"]["ownerReferences"][0]["controller"], true);
    assert_eq!(rs["metadata"]["annotations"][DESIRED_REPLICAS], "2");
    assert_eq!(rs["metadata"]["annotations"][MAX_REPLICAS], "3");
    assert_eq!(w.deploy["metadata"]["annotations"][REVISION], "1");
    assert_eq!(
        w.events,
        [format!("Scaled up replica set web-{hash} from 0 to 2")]
    );
    let status = &w.deploy["status"];
    assert_eq!(
        (
            status["replicas"].as_i64(),
            status["updatedReplicas"].as_i64(),
            status["availableReplicas"].as_i64()
        ),
        (Some(2), Some(2), Some(2))
    );
    assert_eq!(status["observedGeneration"], 1);
    assert!(
        status.get("unavailableReplicas").is_none(),
        "zero counts are omitted"
    );
    let (state, reason, message) = w.progressing();
    assert_eq!(
        (state.as_str(), reason.as_str()),
        ("True", "NewReplicaSetAvailable")
    );
    assert_eq!(
        message,
        format!("ReplicaSet \"web-{hash}\" has successfully progressed.")
    );
    let available = condition(status, "Available").unwrap();
    assert_eq!(available["reason"], "MinimumReplicasAvailable");
    assert_eq!(available["message"], "Deployment has minimum availability.");
}

#[test]
fn rolling_update_stays_within_surge_and_unavailability() {
    for (surge, unavailable, max_total, min_available) in [
        (json!(1), json!(0), 5, 4),
        (json!("25%"), json!("25%"), 5, 3),
        (json!(0), json!(2), 4, 2),
        (json!("50%"), json!(1), 6, 3),
    ] {
        let mut w = World::new(deployment(
            4,
            "web:1",
            rolling(surge.clone(), unavailable.clone()),
        ));
        w.settle(&all_healthy);
        w.history.clear();
        w.set_image("web:2");
        w.settle(&all_healthy);
        for (total, available) in &w.history {
            assert!(
                *total <= max_total,
                "{surge}/{unavailable}: {total} pods > {max_total}: {:?}",
                w.history
            );
            assert!(
                *available >= min_available,
                "{surge}/{unavailable}: {available} available < {min_available}: {:?}",
                w.history
            );
        }
        assert_eq!(
            w.sizes(),
            [("1".to_string(), 0), ("2".to_string(), 4)],
            "{surge}/{unavailable}"
        );
        assert!(w.history.len() > 2, "a rolling update takes several steps");
        assert_eq!(w.deploy["metadata"]["annotations"][REVISION], "2");
        assert_eq!(w.progressing().1, "NewReplicaSetAvailable");
    }
}

#[test]
fn recreate_removes_every_old_pod_before_creating_new_ones() {
    let mut w = World::new(deployment(3, "web:1", json!({"type": "Recreate"})));
    w.settle(&all_healthy);
    assert_eq!(
        w.rss[0]["metadata"]["annotations"][MAX_REPLICAS], "3",
        "no surge with Recreate"
    );
    w.history.clear();
    w.set_image("web:2");
    w.settle(&all_healthy);
    // Old pods go to zero before any new one exists: the pod count passes through 0.
    assert!(
        w.history.iter().all(|(total, _)| *total <= 3),
        "{:?}",
        w.history
    );
    assert!(w.history.contains(&(0, 0)), "{:?}", w.history);
    assert_eq!(w.sizes(), [("1".to_string(), 0), ("2".to_string(), 3)]);
    assert!(
        w.events
            .iter()
            .any(|e| e.starts_with("Scaled down replica set web-") && e.ends_with("from 3 to 0")),
        "{:?}",
        w.events
    );
}

#[test]
fn a_rollout_that_never_becomes_ready_exceeds_its_progress_deadline() {
    let mut w = World::new(deployment(3, "web:1", rolling(json!("50%"), json!(0))));
    w.settle(&all_healthy);
    w.set_image("web:crash");
    let broken = |image: &str| !image.contains("crash");
    let mut requeue = None;
    for _ in 0..5 {
        requeue = w.sync(&broken).requeue_after.or(requeue);
    }
    let (state, reason, message) = w.progressing();
    assert_eq!(
        (state.as_str(), reason.as_str()),
        ("True", "ReplicaSetUpdated"),
        "{message}"
    );
    assert!(message.ends_with("is progressing."), "{message}");
    assert!(
        requeue.is_some_and(|d| d <= Duration::from_secs(47)),
        "{requeue:?}"
    );
    // Old pods stay (maxUnavailable 0): still available while the new ones never are.
    assert_eq!(
        condition(&w.deploy["status"], "Available").unwrap()["status"],
        "True"
    );
    w.now += jiff::SignedDuration::from_secs(60);
    w.sync(&broken);
    let (state, reason, message) = w.progressing();
    assert_eq!((state.as_str(), reason.as_str()), ("False", TIMED_OUT));
    let new_name = w
        .rss
        .iter()
        .find(|rs| rs["metadata"]["annotations"][REVISION] == "2")
        .unwrap()["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        message,
        format!("ReplicaSet \"{new_name}\" has timed out progressing.")
    );
    assert_eq!(
        w.deploy["status"]["updatedReplicas"], 2,
        "surge of 50% of 3 rounds up to 2"
    );
    assert_eq!(w.deploy["status"]["unavailableReplicas"], 2);
    // Stuck stays stuck, and nothing is requeued for it.
    let again = w.sync(&broken);
    assert!(again.status.is_none() && again.requeue_after.is_none());
}

#[test]
fn revisions_count_up_and_a_rollback_reuses_the_old_replica_set() {
    let mut w = World::new(deployment(2, "web:1", rolling(json!(1), json!(0))));
    w.settle(&all_healthy);
    w.set_image("web:2");
    w.settle(&all_healthy);
    w.set_image("web:1");
    w.settle(&all_healthy);
    assert_eq!(
        w.rss.len(),
        2,
        "the old template's ReplicaSet is scaled up again, not recreated"
    );
    assert_eq!(w.sizes(), [("2".to_string(), 0), ("3".to_string(), 2)]);
    assert_eq!(w.deploy["metadata"]["annotations"][REVISION], "3");
    let revived = w
        .rss
        .iter()
        .find(|rs| rs["metadata"]["annotations"][REVISION] == "3")
        .unwrap();
    assert_eq!(revived["metadata"]["annotations"][REVISION_HISTORY], "1");
}

#[test]
fn old_replica_sets_beyond_the_history_limit_are_deleted() {
    let mut d = deployment(1, "web:0", rolling(json!(1), json!(0)));
    d["spec"]["revisionHistoryLimit"] = json!(2);
    let mut w = World::new(d);
    w.settle(&all_healthy);
    for i in 1..=5 {
        w.set_image(&format!("web:{i}"));
        w.settle(&all_healthy);
    }
    assert_eq!(
        w.sizes(),
        [
            ("4".to_string(), 0),
            ("5".to_string(), 0),
            ("6".to_string(), 1)
        ]
    );
}

#[test]
fn scaling_resizes_the_replica_set_without_a_new_revision() {
    let mut w = World::new(deployment(2, "web:1", rolling(json!("25%"), json!("25%"))));
    w.settle(&all_healthy);
    w.deploy["spec"]["replicas"] = json!(4);
    w.settle(&all_healthy);
    assert_eq!(w.sizes(), [("1".to_string(), 4)]);
    assert_eq!(w.rss[0]["metadata"]["annotations"][DESIRED_REPLICAS], "4");
    assert!(
        w.events.last().unwrap().ends_with("from 2 to 4"),
        "{:?}",
        w.events
    );
    assert_eq!(w.deploy["status"]["availableReplicas"], 4);
}

#[test]
fn paused_deployments_do_not_roll_out() {
    let mut w = World::new(deployment(2, "web:1", rolling(json!(1), json!(0))));
    w.settle(&all_healthy);
    w.deploy["spec"]["paused"] = json!(true);
    w.set_image("web:2");
    w.settle(&all_healthy);
    assert_eq!(w.rss.len(), 1);
    assert_eq!(w.progressing().1, "DeploymentPaused");
    w.deploy["spec"]["paused"] = json!(false);
    w.settle(&all_healthy);
    assert_eq!(w.sizes(), [("1".to_string(), 0), ("2".to_string(), 2)]);
}
