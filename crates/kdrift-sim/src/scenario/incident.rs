//! The `incident` scenario: an on-call night in two minutes. Each step is the request kubectl
//! sends for the command in its doc line — same patch type, body and field manager — so kdrift
//! sees exactly what it would see on a real cluster. Near the end a node is drained (its pods
//! evicted and made again on the two others, which are then too full for two of the inventory
//! pods: Pending, `Insufficient memory`), and a step brings it back; then the demo's Helm
//! release is scaled by hand; last, a bad release comes from git: a teammate's commit gives
//! `shop/cart` a crashing image, and Argo CD syncs it.
use std::time::Duration;

use serde_json::Value;

pub use super::release::StepError;
pub use super::step::{REFRESH, Step, request_for};
use crate::controller::Gitops;
use crate::error::{ApiError, not_found};
use crate::object::Key;
use crate::store::Store;

/// When the steps happen.
#[derive(Debug, Clone)]
pub struct Pacing {
    /// Before the first step (the seeded cluster settles first).
    pub start: Duration,
    /// Between two steps.
    pub between: Duration,
}

impl Pacing {
    /// Demo pacing: first step after 5 s, then one every 12 s (the stuck rollout crosses its 45 s
    /// deadline about a minute in; the drain comes after about two minutes, the uncordon 12 s
    /// later).
    pub fn demo() -> Pacing {
        Pacing {
            start: Duration::from_secs(5),
            between: Duration::from_secs(12),
        }
    }
}

/// The incident, in order.
pub fn steps() -> Vec<Step> {
    vec![
        // A release with a crashing build: the rollout sticks, then exceeds its 45 s deadline.
        Step::SetImage {
            target: Key::new("shop", "checkout"),
            container: "checkout".into(),
            image: "registry.example/shop/checkout:3.2.0-crash".into(),
        },
        // Traffic spike: someone scales the frontend by hand.
        Step::Scale {
            target: Key::new("shop", "frontend"),
            replicas: 4,
        },
        // The warehouse feed backs up: prod's inventory (a kustomize overlay) scaled by hand.
        Step::Scale {
            target: Key::new("inventory-prod", "inventory"),
            replicas: 5,
        },
        // OOM kills at 3 a.m.: a memory limit raised live.
        Step::SetMemoryLimit {
            target: Key::new("payments", "payments-api"),
            container: "api".into(),
            memory: "512Mi".into(),
        },
        // Debugging a login problem: verbose logs turned on live.
        Step::SetEnv {
            target: Key::new("platform", "auth"),
            container: "auth".into(),
            name: "LOG_LEVEL".into(),
            value: "debug".into(),
        },
        // Flapping readiness under load: the probe timeout edited by hand.
        Step::EditProbeTimeout {
            target: Key::new("platform", "ingress-gateway"),
            container: "gateway".into(),
            seconds: 3,
        },
        // The new checkout path is suspected: its feature flag flipped by hand.
        Step::EditConfigMap {
            target: Key::new("shop", "frontend-config"),
            key: "FEATURE_NEW_CHECKOUT".into(),
            value: "on".into(),
        },
        // Reaching the frontend around the ingress to tell which one is slow.
        Step::PatchServiceType {
            target: Key::new("shop", "frontend"),
            service_type: "NodePort".into(),
        },
        // Large uploads fail at the ingress: its body size limit raised by annotation.
        Step::AnnotateIngress {
            target: Key::new("shop", "frontend"),
            key: "nginx.ingress.kubernetes.io/proxy-body-size".into(),
            value: "20m".into(),
        },
        // A node's disk fails: it is drained. The two others cannot hold two of the inventory
        // pods: prod's inventory shows 3 of 5 ready, two pods Pending (Insufficient memory).
        Step::Drain {
            target: Key::new("inventory-prod", "inventory"),
        },
        // The disk is replaced: the node takes pods again and the Pending ones land there.
        Step::Uncordon {
            target: Key::new("inventory-prod", "inventory"),
        },
        // Search is slow after the outage: its Helm release (demo/search) scaled by hand, a
        // hotfix helm knows nothing of until someone writes it into values-prod.yaml.
        Step::Scale {
            target: Key::new("search", "search"),
            replicas: 4,
        },
        // A bad release from git: a teammate's commit bumps the cart to a crashing build, and
        // its push's webhook has Argo CD sync shop/ at once — what was changed there by hand
        // and not committed goes back to git with it. The cart's rollout sticks.
        Step::Release {
            target: Key::new("shop", "cart"),
            app: Key::new("argocd", "shop"),
            file: "cart.yaml".into(),
            from: "registry.example/shop/cart:0.9.7".into(),
            to: "registry.example/shop/cart:0.9.8-crash".into(),
            author: "Dana Whitfield <dana@shop.example>".into(),
            message: "cart 0.9.8: session store on the new Redis client".into(),
        },
    ]
}

/// Play every step of the incident, waiting as `pacing` says; a release commits in the
/// repository `gitops` names. A step whose target is missing (deleted by the user meanwhile) or
/// whose file the user changed is skipped: the demo goes on.
pub async fn play(store: &Store, gitops: &Gitops, pacing: &Pacing) {
    tokio::time::sleep(pacing.start).await;
    for (index, step) in steps().iter().enumerate() {
        if index > 0 {
            tokio::time::sleep(pacing.between).await;
        }
        if let Err(error) = run_step(store, gitops, step).await {
            tracing::warn!(?step, %error, "scenario step skipped");
        }
    }
}

/// Play one step: one request, a drain's several, or a release's commit and webhook.
pub async fn run_step(store: &Store, gitops: &Gitops, step: &Step) -> Result<(), StepError> {
    match step {
        Step::Drain { target } => Ok(super::drain::drain(store, target).await?),
        Step::Release { .. } => super::release::release(store, gitops, step)
            .await
            .map(|_| ()),
        other => Ok(apply_step(store, other).map(|_| ())?),
    }
}

/// Send one step to the store, as kubectl would send it (a drain is several requests: see
/// [`run_step`]).
pub fn apply_step(store: &Store, step: &Step) -> Result<Value, ApiError> {
    match step {
        Step::Drain { .. } => {
            return Err(ApiError::BadRequest(
                "a drain is several requests: play it with run_step".into(),
            ));
        }
        Step::Release { .. } => {
            return Err(ApiError::BadRequest(
                "a release is a commit in git: play it with run_step".into(),
            ));
        }
        Step::Uncordon { .. } => return super::drain::uncordon(store),
        _ => {}
    }
    let target = step.target();
    let resource = step.resource();
    let live = store
        .get(resource, &target.namespace, &target.name)
        .ok_or_else(|| not_found(resource, &target.name))?;
    let (patch, opts) = request_for(step, &live);
    store.patch(resource, &target.namespace, &target.name, &patch, &opts)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::resources::ResourceType;
    use crate::scenario::manifests::demo_objects;
    use crate::scenario::step::container_of;
    use crate::store::Patch;
    use serde_json::json;

    fn demo_object(step: &Step) -> Value {
        let key = step.target();
        let released = super::super::manifests::DEMO_RELEASES
            .iter()
            .flat_map(|r| super::super::helm::applied_objects(r).unwrap());
        demo_objects()
            .unwrap()
            .into_iter()
            .map(|o| o.object)
            .chain(released)
            .find(|o| {
                o["kind"] == step.resource().kind()
                    && o["metadata"]["namespace"] == key.namespace.as_str()
                    && o["metadata"]["name"] == key.name.as_str()
            })
            .unwrap_or_else(|| panic!("no demo object for {step:?}"))
    }

    #[test]
    fn every_step_targets_a_demo_object_and_container() {
        for step in steps() {
            let live = demo_object(&step);
            assert_eq!(
                live["metadata"]["namespace"],
                step.target().namespace.as_str()
            );
            let container = match &step {
                Step::Scale { .. }
                | Step::EditConfigMap { .. }
                | Step::PatchServiceType { .. }
                | Step::AnnotateIngress { .. }
                | Step::Drain { .. }
                | Step::Uncordon { .. } => continue,
                Step::Release { file, from, .. } => {
                    // The Application shop syncs the folder shop/.
                    let text = super::super::manifests::demo_file(&format!("shop/{file}"))
                        .unwrap_or_else(|| panic!("no demo file shop/{file}"));
                    assert_eq!(text.matches(from.as_str()).count(), 1, "{step:?}");
                    assert!(live.to_string().contains(from.as_str()), "{step:?}");
                    continue;
                }
                Step::SetImage { container, .. }
                | Step::SetMemoryLimit { container, .. }
                | Step::SetEnv { container, .. }
                | Step::EditProbeTimeout { container, .. } => container,
            };
            assert!(container_of(&live, container).is_some(), "{step:?}");
        }
    }

    #[test]
    fn requests_are_written_as_kubectl_writes_them() {
        let mut managers = Vec::new();
        for step in steps() {
            let live = demo_object(&step);
            let (patch, opts) = request_for(&step, &live);
            managers.push((opts.manager.clone(), opts.subresource.clone()));
            let body = match patch {
                Patch::Strategic(v) | Patch::Merge(v) => serde_json::to_string(&v).unwrap(),
                other => panic!("unexpected patch {other:?}"),
            };
            match step {
                Step::SetEnv { .. } => assert_eq!(
                    body,
                    r#"{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"auth"}],"containers":[{"$setElementOrder/env":[{"name":"LOG_FORMAT"},{"name":"SIGNING_KEY"},{"name":"LOG_LEVEL"}],"env":[{"name":"LOG_LEVEL","value":"debug"}],"name":"auth"}]}}}}"#
                ),
                Step::Scale { replicas, .. } => {
                    assert_eq!(body, format!(r#"{{"spec":{{"replicas":{replicas}}}}}"#))
                }
                Step::SetImage { .. } => assert_eq!(
                    body,
                    r#"{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"checkout"}],"containers":[{"image":"registry.example/shop/checkout:3.2.0-crash","name":"checkout"}]}}}}"#
                ),
                Step::EditConfigMap { .. } => {
                    assert_eq!(body, r#"{"data":{"FEATURE_NEW_CHECKOUT":"on"}}"#)
                }
                Step::PatchServiceType { .. } => {
                    assert_eq!(body, r#"{"spec":{"type":"NodePort"}}"#)
                }
                Step::AnnotateIngress { .. } => assert_eq!(
                    body,
                    r#"{"metadata":{"annotations":{"nginx.ingress.kubernetes.io/proxy-body-size":"20m"}}}"#
                ),
                Step::Drain { .. } => assert_eq!(body, r#"{"spec":{"unschedulable":true}}"#),
                Step::Uncordon { .. } => {
                    assert_eq!(body, r#"{"spec":{"unschedulable":null}}"#)
                }
                Step::Release { .. } => assert_eq!(
                    body,
                    r#"{"metadata":{"annotations":{"argocd.argoproj.io/refresh":"normal"}}}"#
                ),
                _ => assert!(body.contains("$setElementOrder/containers"), "{body}"),
            }
        }
        let names: Vec<&str> = managers.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(
            names,
            [
                "kubectl-set",
                "kubectl",
                "kubectl",
                "kubectl-set",
                "kubectl-set",
                "kubectl-edit",
                "kubectl-edit",
                "kubectl-patch",
                "kubectl-annotate",
                "kubectl",
                "kubectl",
                "kubectl",
                "argocd-server"
            ]
        );
        for scale in [1, 2, 11] {
            assert_eq!(managers[scale].1.as_deref(), Some("scale"));
        }
    }

    /// A step that is not one request to the API: a drain's several, an uncordon, a release's
    /// commit.
    fn is_node_step(step: &Step) -> bool {
        matches!(
            step,
            Step::Drain { .. } | Step::Uncordon { .. } | Step::Release { .. }
        )
    }

    fn managers(d: &Value) -> Vec<(String, String)> {
        d["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["manager"].as_str().unwrap().to_string(),
                    m["subresource"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_incident_leaves_the_changes_kubectl_would_leave() {
        use crate::controller::{Timings, spawn};
        let store = Store::new();
        let controllers = spawn(store.clone(), Timings::fast(), Default::default());
        crate::scenario::seed(&store).unwrap();
        let seeded = store
            .get(ResourceType::DEPLOYMENT, "shop", "frontend")
            .unwrap();
        // Applied with kubectl, then adopted by Argo CD (server-side apply).
        assert!(
            managers(&seeded).contains(&("kubectl-client-side-apply".to_string(), String::new())),
            "{:?}",
            managers(&seeded)
        );
        assert!(managers(&seeded).contains(&("argocd-controller".to_string(), String::new())));
        // As in the demo, the incident starts once the seeded cluster has rolled out.
        let settled = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
        while store
            .list(ResourceType::REPLICA_SET, None)
            .iter()
            .filter(|rs| rs["status"]["availableReplicas"].as_i64() > Some(0))
            .count()
            < 10
        {
            assert!(
                tokio::time::Instant::now() < settled,
                "the seeded demo did not settle"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        for step in steps().iter().filter(|s| !is_node_step(s)) {
            apply_step(&store, step).unwrap();
        }
        let get = |ns: &str, name: &str| store.get(ResourceType::DEPLOYMENT, ns, name).unwrap();

        let frontend = get("shop", "frontend");
        assert_eq!(frontend["spec"]["replicas"], 4);
        assert!(
            managers(&frontend).contains(&("kubectl".into(), "scale".into())),
            "{:?}",
            managers(&frontend)
        );

        let inventory = get("inventory-prod", "inventory");
        assert_eq!(inventory["spec"]["replicas"], 5);
        assert_eq!(
            get("inventory-staging", "inventory")["spec"]["replicas"],
            1,
            "staging, rendered from the same base, is left alone"
        );

        let checkout = get("shop", "checkout");
        let container = &checkout["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(
            container["image"],
            "registry.example/shop/checkout:3.2.0-crash"
        );
        assert_eq!(
            container["env"].as_array().unwrap().len(),
            3,
            "the other fields are untouched"
        );
        assert!(managers(&checkout).contains(&("kubectl-set".into(), String::new())));

        let api = get("payments", "payments-api");
        let resources = &api["spec"]["template"]["spec"]["containers"][0]["resources"];
        assert_eq!(resources["limits"], json!({"cpu": "1", "memory": "512Mi"}));
        assert_eq!(resources["requests"]["memory"], "256Mi");

        let auth = get("platform", "auth");
        let env: Vec<&str> = auth["spec"]["template"]["spec"]["containers"][0]["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(env, ["LOG_FORMAT", "SIGNING_KEY", "LOG_LEVEL"]);

        let gateway = get("platform", "ingress-gateway");
        assert_eq!(
            gateway["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["timeoutSeconds"],
            3
        );
        assert!(managers(&gateway).contains(&("kubectl-edit".into(), String::new())));

        let flags = store
            .get(ResourceType::CONFIG_MAP, "shop", "frontend-config")
            .unwrap();
        assert_eq!(flags["data"]["FEATURE_NEW_CHECKOUT"], "on");
        assert!(managers(&flags).contains(&("kubectl-edit".into(), String::new())));
        let service = store
            .get(ResourceType::SERVICE, "shop", "frontend")
            .unwrap();
        assert_eq!(service["spec"]["type"], "NodePort");
        assert!(service["spec"]["ports"][0]["nodePort"].is_i64());
        let ingress = store
            .get(ResourceType::INGRESS, "shop", "frontend")
            .unwrap();
        assert_eq!(
            ingress["metadata"]["annotations"]["nginx.ingress.kubernetes.io/proxy-body-size"],
            "20m"
        );
        assert!(managers(&ingress).contains(&("kubectl-annotate".into(), String::new())));

        // The hotfixes roll out; the crashing image does not.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let d = get("shop", "frontend");
            let api = get("payments", "payments-api");
            let done = |d: &Value| {
                d["status"]["availableReplicas"] == d["spec"]["replicas"]
                    && d["status"]["updatedReplicas"] == d["spec"]["replicas"]
                    && d["status"]["replicas"] == d["spec"]["replicas"]
            };
            if done(&d)
                && done(&api)
                && api["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
            {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "frontend/payments-api did not roll out: {:#} {:#}",
                d["status"],
                api["status"]
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let checkout = get("shop", "checkout");
        assert_eq!(checkout["status"]["updatedReplicas"], 2);
        assert_eq!(checkout["status"]["availableReplicas"], 3);
        controllers.abort();
    }
}
