//! The out-of-band changes a scenario makes, each named after the kubectl command that makes it,
//! and the request kubectl sends for it — same patch type, body and field manager.
use serde_json::{Value, json};

pub use crate::controller::gitops::REFRESH;
use crate::object::{Key, at};
use crate::resources::ResourceType;
use crate::store::{Patch, WriteOptions};

/// One out-of-band change, named after the kubectl command that makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `kubectl set image deployment/<name> <container>=<image>`
    SetImage {
        target: Key,
        container: String,
        image: String,
    },
    /// `kubectl scale deployment/<name> --replicas=<n>`
    Scale { target: Key, replicas: i64 },
    /// `kubectl set resources deployment/<name> -c <container> --limits=memory=<memory>`
    SetMemoryLimit {
        target: Key,
        container: String,
        memory: String,
    },
    /// `kubectl set env deployment/<name> -c <container> <name>=<value>`
    SetEnv {
        target: Key,
        container: String,
        name: String,
        value: String,
    },
    /// `kubectl edit deployment/<name>`, changing the readiness probe's timeout.
    EditProbeTimeout {
        target: Key,
        container: String,
        seconds: i64,
    },
    /// `kubectl edit configmap/<name>`, flipping one key.
    EditConfigMap {
        target: Key,
        key: String,
        value: String,
    },
    /// `kubectl patch service/<name> -p '{"spec":{"type":"<type>"}}'`.
    PatchServiceType { target: Key, service_type: String },
    /// `kubectl annotate ingress/<name> <key>=<value>`.
    AnnotateIngress {
        target: Key,
        key: String,
        value: String,
    },
    /// `kubectl drain <node> --ignore-daemonsets --delete-emptydir-data`, on the node that runs
    /// the most pods of the Deployment `target`: a cordon, then an eviction of each pod there but
    /// the DaemonSet's. The evictions of `target`'s pods land last, once the others are running
    /// again elsewhere (kubectl evicts them all at once; which go first is chance, and this is the
    /// order that shows the node's loss on one Deployment).
    Drain { target: Key },
    /// `kubectl uncordon <node>` of the node the drain of `target`'s busiest node cordoned.
    Uncordon { target: Key },
    /// A release from git, not a kubectl command: a teammate's commit (`author`, `message`) in
    /// the repository the Argo CD Application `app` syncs, changing `file` (under the
    /// Application's path) from `from` to `to` — one occurrence — pushed; then the push's
    /// webhook, which asks Argo CD to refresh `app` at once (see [`request_for`]). `target` is
    /// the workload the commit changes.
    Release {
        target: Key,
        app: Key,
        file: String,
        from: String,
        to: String,
        author: String,
        message: String,
    },
}

impl Step {
    pub fn target(&self) -> &Key {
        match self {
            Step::SetImage { target, .. }
            | Step::Scale { target, .. }
            | Step::SetMemoryLimit { target, .. }
            | Step::SetEnv { target, .. }
            | Step::EditProbeTimeout { target, .. }
            | Step::EditConfigMap { target, .. }
            | Step::PatchServiceType { target, .. }
            | Step::AnnotateIngress { target, .. }
            | Step::Drain { target }
            | Step::Uncordon { target }
            | Step::Release { target, .. } => target,
        }
    }

    /// The type of the object the step changes.
    pub fn resource(&self) -> ResourceType {
        match self {
            Step::EditConfigMap { .. } => ResourceType::CONFIG_MAP,
            Step::PatchServiceType { .. } => ResourceType::SERVICE,
            Step::AnnotateIngress { .. } => ResourceType::INGRESS,
            _ => ResourceType::DEPLOYMENT,
        }
    }
}

/// The patch and options kubectl sends for `step` against the `live` Deployment; for a
/// [`Step::Release`], the patch the push's webhook makes Argo CD's server send to the
/// Application (`argocd.argoproj.io/refresh: normal`, as `argocd app get --refresh` does).
pub fn request_for(step: &Step, live: &Value) -> (Patch, WriteOptions) {
    match step {
        // kubectl scale patches the scale subresource with a JSON merge patch. It has no
        // --field-manager and sends no fieldManager, so the server names the manager after the
        // user agent ("kubectl/v1.32.0 ..." → "kubectl"), as it does for the real kubectl
        // against this server (tests/kubectl/writes.rs).
        Step::Scale { replicas, .. } => (
            Patch::Merge(json!({"spec": {"replicas": replicas}})),
            WriteOptions {
                manager: "kubectl".into(),
                subresource: Some("scale".into()),
                dry_run: false,
            },
        ),
        Step::SetImage {
            container, image, ..
        } => (
            container_patch(live, json!({"image": image, "name": container})),
            WriteOptions::manager("kubectl-set"),
        ),
        Step::SetMemoryLimit {
            container, memory, ..
        } => (
            container_patch(
                live,
                json!({"name": container, "resources": {"limits": {"memory": memory}}}),
            ),
            WriteOptions::manager("kubectl-set"),
        ),
        Step::SetEnv {
            container,
            name,
            value,
            ..
        } => {
            // The two-way merge patch lists the new order of the whole env list.
            let mut order: Vec<Value> = container_of(live, container)
                .and_then(|c| c.get("env"))
                .and_then(Value::as_array)
                .map(|env| env.iter().map(|e| json!({"name": e["name"]})).collect())
                .unwrap_or_default();
            order.push(json!({"name": name}));
            let change = json!({
                "$setElementOrder/env": order,
                "env": [{"name": name, "value": value}],
                "name": container,
            });
            (
                container_patch(live, change),
                WriteOptions::manager("kubectl-set"),
            )
        }
        Step::EditProbeTimeout {
            container, seconds, ..
        } => (
            container_patch(
                live,
                json!({"name": container, "readinessProbe": {"timeoutSeconds": seconds}}),
            ),
            WriteOptions::manager("kubectl-edit"),
        ),
        // kubectl edit sends the two-way strategic merge patch of what changed.
        Step::EditConfigMap { key, value, .. } => (
            Patch::Strategic(json!({"data": {key: value}})),
            WriteOptions::manager("kubectl-edit"),
        ),
        // kubectl patch's default type is a strategic merge patch.
        Step::PatchServiceType { service_type, .. } => (
            Patch::Strategic(json!({"spec": {"type": service_type}})),
            WriteOptions::manager("kubectl-patch"),
        ),
        // kubectl annotate sends a JSON merge patch.
        Step::AnnotateIngress { key, value, .. } => (
            Patch::Merge(json!({"metadata": {"annotations": {key: value}}})),
            WriteOptions::manager("kubectl-annotate"),
        ),
        // kubectl cordon and uncordon (a drain's first request) patch the node's spec with a
        // strategic merge patch and no field manager: the server names it after the agent.
        Step::Drain { .. } => (
            Patch::Strategic(json!({"spec": {"unschedulable": true}})),
            WriteOptions::manager("kubectl"),
        ),
        Step::Uncordon { .. } => (
            Patch::Strategic(json!({"spec": {"unschedulable": null}})),
            WriteOptions::manager("kubectl"),
        ),
        Step::Release { .. } => (
            Patch::Merge(json!({"metadata": {"annotations": {REFRESH: "normal"}}})),
            WriteOptions::manager("argocd-server"),
        ),
    }
}

/// A strategic merge patch changing one container of the pod template, shaped as kubectl's
/// `CreateTwoWayMergePatch` shapes it (keys sorted, `$setElementOrder/containers` first).
fn container_patch(live: &Value, change: Value) -> Patch {
    let order: Vec<Value> = at(live, &["spec", "template", "spec", "containers"])
        .and_then(Value::as_array)
        .map(|cs| cs.iter().map(|c| json!({"name": c["name"]})).collect())
        .unwrap_or_default();
    Patch::Strategic(json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": order,
        "containers": [change],
    }}}}))
}

pub(super) fn container_of<'a>(live: &'a Value, name: &str) -> Option<&'a Value> {
    at(live, &["spec", "template", "spec", "containers"])?
        .as_array()?
        .iter()
        .find(|c| c["name"] == name)
}
