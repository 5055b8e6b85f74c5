//! What the API server's pod registry does for `pods/binding` (what a scheduler posts) and
//! `pods/eviction` (what `kubectl drain` posts), through its own storage rather than as a
//! client: like the real registry code they record no `managedFields` entry (on a real cluster
//! `spec.nodeName` set by the scheduler is owned by nobody). An eviction honours the one
//! PodDisruptionBudget covering the pod, with the decisions of `controller::disruption`.
use jiff::Timestamp;
use serde_json::{Value, json};

use super::write::set_resource_version;
use super::{EventType, Patch, Store, WriteOptions};
use crate::controller::disruption::{covers, evict};
use crate::error::{ApiError, StatusCause, not_found, qualified};
use crate::resources::ResourceType;

/// Set or replace the condition of `kind` in `status.conditions`, keeping its transition time
/// when its status is unchanged.
pub fn set_condition(object: &mut Value, condition: Value) {
    let kind = condition["type"].clone();
    let Some(status) = object.as_object_mut().map(|o| {
        o.entry("status")
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .map(|s| s.entry("conditions").or_insert_with(|| json!([])))
    }) else {
        return;
    };
    let Some(Value::Array(conditions)) = status else {
        return;
    };
    match conditions.iter_mut().find(|c| c["type"] == kind) {
        Some(existing) => {
            let mut new = condition;
            if existing["status"] == new["status"] {
                new["lastTransitionTime"] = existing["lastTransitionTime"].clone();
            }
            *existing = new;
        }
        None => conditions.push(condition),
    }
}

impl Store {
    /// Change one stored object as the server's own storage code does: no defaults, no
    /// `managedFields`; nothing is written when `change` leaves it as it was.
    pub fn update_unmanaged(
        &self,
        resource: ResourceType,
        namespace: &str,
        name: &str,
        change: impl FnOnce(&mut Value) -> Result<(), ApiError>,
    ) -> Result<Value, ApiError> {
        let ns = if resource.namespaced() { namespace } else { "" };
        let mut inner = self.lock();
        let old = inner
            .objects
            .get(&resource)
            .and_then(|m| m.get(&(ns.to_string(), name.to_string())))
            .cloned()
            .ok_or_else(|| not_found(resource, name))?;
        let before = old.value();
        let mut new = before.clone();
        change(&mut new)?;
        if new == before {
            return Ok(new);
        }
        inner.resource_version += 1;
        set_resource_version(&mut new, inner.resource_version);
        self.commit_locked(&mut inner, resource, new.clone(), EventType::Modified);
        Ok(new)
    }

    /// Bind a pod to `node`, as a `Binding` posted to `pods/{name}/binding` does: `spec.nodeName`
    /// and the `PodScheduled` condition. A pod bound already is a conflict.
    pub fn bind_pod(&self, namespace: &str, name: &str, node: &str) -> Result<Value, ApiError> {
        let now = self.now_rfc3339();
        self.update_unmanaged(ResourceType::POD, namespace, name, |pod| {
            let bound = pod
                .pointer("/spec/nodeName")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty());
            if let Some(bound) = bound {
                return Err(ApiError::Conflict {
                    message: format!(
                        "Operation cannot be fulfilled on {}: pod {name} is already assigned to node \"{bound}\"",
                        qualified(ResourceType::POD, name).replacen("pods", "pods/binding", 1)
                    ),
                    causes: Vec::new(),
                });
            }
            if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("nodeName".into(), json!(node));
            }
            set_condition(
                pod,
                json!({"lastProbeTime": null, "lastTransitionTime": now, "status": "True", "type": "PodScheduled"}),
            );
            Ok(())
        })
    }
}

/// Whether an eviction may skip the budgets: a pod that is not running yet or any more.
fn budget_free(pod: &Value) -> bool {
    matches!(
        pod.pointer("/status/phase").and_then(Value::as_str),
        Some("Succeeded" | "Failed" | "Pending")
    )
}

impl Store {
    /// Evict a pod as `pods/{name}/eviction` does: refused (429) while the budget covering it
    /// allows no disruption, else the budget takes one and the pod is marked and deleted.
    pub fn evict_pod(&self, namespace: &str, name: &str, dry_run: bool) -> Result<(), ApiError> {
        let pod = self
            .get(ResourceType::POD, namespace, name)
            .ok_or_else(|| not_found(ResourceType::POD, name))?;
        if !budget_free(&pod) {
            let budgets: Vec<Value> = self
                .list(ResourceType::POD_DISRUPTION_BUDGET, Some(namespace))
                .into_iter()
                .filter(|pdb| covers(pdb, &pod))
                .collect();
            if budgets.len() > 1 {
                return Err(ApiError::Internal(
                    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.".into(),
                ));
            }
            if let Some(pdb) = budgets.first() {
                let status = evict(pdb, name, Timestamp::now()).map_err(|refusal| {
                    ApiError::TooManyRequests {
                        message: refusal.message,
                        causes: vec![StatusCause {
                            reason: "DisruptionBudget".into(),
                            message: refusal.cause,
                            field: String::new(),
                        }],
                    }
                })?;
                if !dry_run {
                    let budget = pdb.pointer("/metadata/name").and_then(Value::as_str);
                    self.patch(
                        ResourceType::POD_DISRUPTION_BUDGET,
                        namespace,
                        budget.unwrap_or_default(),
                        &Patch::Merge(json!({"status": status})),
                        &WriteOptions::status("kube-apiserver"),
                    )?;
                }
            }
        }
        if dry_run {
            return Ok(());
        }
        let now = self.now_rfc3339();
        self.update_unmanaged(ResourceType::POD, namespace, name, |p| {
            set_condition(
                p,
                json!({"lastProbeTime": null, "lastTransitionTime": now, "message": "Eviction API: evicting",
                       "reason": "EvictionByEvictionAPI", "status": "True", "type": "DisruptionTarget"}),
            );
            Ok(())
        })?;
        self.delete(ResourceType::POD, namespace, name, false)
            .map(|_| ())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::store::WriteOptions;

    #[test]
    fn a_binding_sets_the_node_and_the_condition_without_an_owner() {
        let store = Store::new();
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-1", "namespace": "default"},
            "spec": {"containers": [{"name": "web", "image": "web:1"}]}});
        store
            .create(
                ResourceType::POD,
                pod,
                &WriteOptions::manager("kubectl-create"),
            )
            .unwrap();
        let bound = store.bind_pod("default", "web-1", "demo-node-2").unwrap();
        assert_eq!(bound["spec"]["nodeName"], "demo-node-2");
        assert_eq!(bound["status"]["conditions"][0]["type"], "PodScheduled");
        assert_eq!(bound["status"]["conditions"][0]["status"], "True");
        let managers: Vec<&str> = bound["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["manager"].as_str().unwrap())
            .collect();
        assert_eq!(managers, ["kubectl-create"]);
        let again = store
            .bind_pod("default", "web-1", "demo-node-1")
            .unwrap_err();
        assert_eq!(
            again.to_string(),
            "Operation cannot be fulfilled on pods/binding \"web-1\": pod web-1 is already assigned to node \"demo-node-2\""
        );
    }
}
