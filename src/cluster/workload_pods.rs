//! The pods of a workload for `kdrift logs`: the workload kinds by the names kubectl accepts, the
//! pods its `spec.selector.matchLabels` select, the one a script wants the log of (the newest
//! unready, else the newest), why a pod has no log (on no node), and its log as a byte stream.
use std::collections::BTreeMap;

use futures::io::AsyncBufRead;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, LogParams};

use super::describe;
use super::logs::log_error;

/// Is `ty` a workload kind whose pods `logs` reads (`deploy`, `sts`, `ds`…)?
pub fn reads_pods_of(ty: &str) -> bool {
    workload(ty).is_some()
}

/// The workload kinds whose pods `logs` reads, by the names kubectl accepts.
fn workload(ty: &str) -> Option<(&'static str, ApiResource)> {
    match ty.to_ascii_lowercase().as_str() {
        "deploy" | "deployment" | "deployments" | "deployment.apps" | "deployments.apps" => {
            Some(("Deployment", ApiResource::erase::<Deployment>(&())))
        }
        "sts" | "statefulset" | "statefulsets" | "statefulset.apps" | "statefulsets.apps" => {
            Some(("StatefulSet", ApiResource::erase::<StatefulSet>(&())))
        }
        "ds" | "daemonset" | "daemonsets" | "daemonset.apps" | "daemonsets.apps" => {
            Some(("DaemonSet", ApiResource::erase::<DaemonSet>(&())))
        }
        _ => None,
    }
}

/// A workload whose pods `kdrift logs` reads.
pub struct WorkloadPods {
    client: Client,
    pub namespace: String,
    kind: &'static str,
    resource: ApiResource,
    name: String,
}

impl WorkloadPods {
    /// `TYPE` as kubectl names a workload kind (`deploy`, `sts`, `daemonset.apps`…), in
    /// `namespace`; `None` for another kind.
    pub fn new(client: &Client, ty: &str, namespace: &str, name: &str) -> Option<WorkloadPods> {
        let (kind, resource) = workload(ty)?;
        Some(WorkloadPods {
            client: client.clone(),
            namespace: namespace.to_owned(),
            kind,
            resource,
            name: name.to_owned(),
        })
    }

    fn what(&self) -> String {
        format!(
            "{} {}/{}",
            self.kind.to_lowercase(),
            self.namespace,
            self.name
        )
    }

    /// The workload's `spec.selector.matchLabels`.
    async fn selector(&self) -> Result<BTreeMap<String, String>, String> {
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.client.clone(), &self.namespace, &self.resource);
        let object = match api.get(&self.name).await {
            Ok(o) => o,
            Err(kube::Error::Api(s)) if s.code == 404 => {
                return Err(format!(
                    "no {} in namespace \"{}\"",
                    self.what(),
                    self.namespace
                ));
            }
            Err(e) => return Err(format!("cannot read {}: {}", self.what(), describe(&e))),
        };
        let labels: BTreeMap<String, String> = object
            .data
            .pointer("/spec/selector/matchLabels")
            .and_then(|m| serde_json::from_value(m.clone()).ok())
            .unwrap_or_default();
        if labels.is_empty() {
            return Err(format!(
                "{} selects its pods without matchLabels: kdrift logs cannot find them",
                self.what()
            ));
        }
        Ok(labels)
    }

    /// The newest unready pod of the workload, else its newest pod.
    pub async fn pod(&self) -> Result<Pod, String> {
        let labels = self.selector().await?;
        let selector = labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.namespace);
        let list = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| format!("cannot list the pods of {}: {}", self.what(), describe(&e)))?;
        newest_pod(list.items)
            .ok_or_else(|| format!("{} has no pods (selector {selector})", self.what()))
    }

    /// The log of `container` of pod `name`, as a byte stream.
    pub async fn log(
        &self,
        name: &str,
        params: &LogParams,
    ) -> Result<impl AsyncBufRead + Unpin + use<>, String> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &self.namespace);
        api.log_stream(name, params).await.map_err(|e| match &e {
            kube::Error::Api(s) => format!(
                "cannot read the log of pod {name}: {} ({}, HTTP {})",
                log_error(&e).0,
                s.reason,
                s.code
            ),
            other => format!("cannot read the log of pod {name}: {other}"),
        })
    }
}

/// Why `pod` is on no node (the scheduler's `PodScheduled` condition, else that it is pending),
/// or `None` when it has a node.
pub fn not_scheduled(pod: &Pod) -> Option<String> {
    let on_node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .is_some_and(|n| !n.is_empty());
    if on_node {
        return None;
    }
    let condition = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.type_ == "PodScheduled" && c.status == "False")
        });
    Some(match condition {
        Some(c) => match (c.reason.as_deref(), c.message.as_deref()) {
            (Some(reason), Some(message)) => format!("{reason}: {message}"),
            (Some(reason), None) => reason.to_owned(),
            (None, Some(message)) => message.to_owned(),
            (None, None) => "not scheduled yet".to_owned(),
        },
        None => "not scheduled yet".to_owned(),
    })
}

/// The pod's `Ready` condition is true.
pub fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// The pod a script wants the log of: the newest of those not ready, else the newest; pods
/// being deleted last.
pub fn newest_pod(pods: Vec<Pod>) -> Option<Pod> {
    pods.into_iter().max_by_key(|p| {
        (
            p.metadata.deletion_timestamp.is_none(),
            !is_ready(p),
            p.metadata.creation_timestamp.as_ref().map(|t| t.0),
            p.metadata.name.clone(),
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn pod(name: &str, created: &str, ready: bool) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "creationTimestamp": created},
            "status": {"conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}
        }))
        .unwrap()
    }

    #[test]
    fn the_newest_unready_pod_is_chosen_else_the_newest() {
        let pods = vec![
            pod("old-unready", "2026-01-01T00:00:00Z", false),
            pod("new-ready", "2026-01-03T00:00:00Z", true),
            pod("mid-unready", "2026-01-02T00:00:00Z", false),
        ];
        let name = |p: Option<Pod>| p.and_then(|p| p.metadata.name);
        assert_eq!(name(newest_pod(pods)).as_deref(), Some("mid-unready"));
        let ready = vec![
            pod("a", "2026-01-01T00:00:00Z", true),
            pod("b", "2026-01-02T00:00:00Z", true),
        ];
        assert_eq!(name(newest_pod(ready)).as_deref(), Some("b"));
        assert!(newest_pod(Vec::new()).is_none());
        assert_eq!(workload("STS").map(|w| w.0), Some("StatefulSet"));
        assert_eq!(
            workload("deployments.apps").map(|w| w.0),
            Some("Deployment")
        );
        assert!(workload("svc").is_none());
    }

    #[test]
    fn a_pod_on_no_node_says_why_from_the_scheduler() {
        let pending: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1"},
            "spec": {"containers": [{"name": "web"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                "reason": "Unschedulable", "message": "0/3 nodes are available: 3 Insufficient cpu."}]}
        }))
        .unwrap();
        assert_eq!(
            not_scheduled(&pending).as_deref(),
            Some("Unschedulable: 0/3 nodes are available: 3 Insufficient cpu.")
        );
        let running: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-2"},
            "spec": {"nodeName": "node-a", "containers": [{"name": "web"}]}
        }))
        .unwrap();
        assert_eq!(not_scheduled(&running), None);
    }
}
