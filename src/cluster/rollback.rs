//! A rollback's cluster IO: a workload and the ReplicaSets or ControllerRevisions that hold its
//! revisions (read through [`super::read::Reader`]), the pod template put back where no manifest describes the
//! workload (a JSON patch of `spec.template`, as `kubectl rollout undo` sends one), and the
//! rollout that follows, until it completes, sticks or the wait ends. The rollback through the
//! manifests is a revert ([`super::revert::Reverter`]).
use std::time::{Duration, Instant};

use kube::Client;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
};
use serde_json::Value;

use super::read::Reader;
use crate::manifest::ObjectKey;

fn resource(kind: &str) -> ApiResource {
    ApiResource::from_gvk(&GroupVersionKind::gvk("apps", "v1", kind))
}

/// Where a workload kind keeps its revisions: a Deployment in ReplicaSets, a StatefulSet and a
/// DaemonSet in ControllerRevisions.
fn history_kind(kind: &str) -> &'static str {
    match kind {
        "Deployment" => "ReplicaSet",
        _ => "ControllerRevision",
    }
}

/// The workload `key` (a Deployment, StatefulSet or DaemonSet) and its revisions' objects
/// (those its selector picks; which it controls is
/// [`crate::revert::rollback::revisions_of`]'s to say).
pub async fn read(client: &Client, key: &ObjectKey) -> Result<(Value, Vec<Value>), String> {
    let object = key.to_string();
    let workload = Reader::of(client, &resource(&key.kind), Some(&key.namespace))
        .get(&key.name, None)
        .await
        .map_err(|e| format!("{object} cannot be read: {e}"))?
        .ok_or_else(|| format!("{object} is not in the cluster: nothing to roll back"))?;
    let selector = workload
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| Some(format!("{k}={}", v.as_str()?)))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    let sets = Reader::of(
        client,
        &resource(history_kind(&key.kind)),
        Some(&key.namespace),
    );
    let mut params = ListParams::default().labels(&selector).limit(250);
    let mut replicasets = Vec::new();
    loop {
        let page = sets.page_as::<Value>(&params).await.map_err(|e| {
            format!(
                "the {}s of {object} cannot be listed: {e}",
                history_kind(&key.kind)
            )
        })?;
        replicasets.extend(page.items);
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok((workload, replicasets)),
        }
    }
}

/// Puts `template` into the workload's `spec.template` (no manifest describes it: as
/// `kubectl rollout undo` does), as field manager kdrift; `dry_run` asks the server only. The
/// object as the patch left it.
pub async fn undo(
    client: &Client,
    key: &ObjectKey,
    template: &Value,
    dry_run: bool,
) -> Result<Value, String> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &key.namespace, &resource(&key.kind));
    let patch: json_patch::Patch = serde_json::from_value(serde_json::json!([
        {"op": "replace", "path": "/spec/template", "value": template}
    ]))
    .map_err(|e| format!("the rollback's patch: {e}"))?;
    let mut params = PatchParams {
        field_manager: Some(super::revert::FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    };
    if dry_run {
        params = params.dry_run();
    }
    let patched = api
        .patch(&key.name, &params, &Patch::Json::<()>(patch))
        .await
        .map_err(|e| format!("{key} could not be rolled back: {e}"))?;
    serde_json::to_value(patched).map_err(|e| e.to_string())
}

/// How a followed rollout ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Followed {
    /// Every replica updated and available.
    Complete,
    /// The controller gave up (`ProgressDeadlineExceeded`): its message.
    Stuck(String),
    /// Still rolling out when the wait ended: what it had done.
    TimedOut(String),
}

/// Reads the Deployment every second until its rollout completes or sticks, or `limit` passes.
pub async fn follow(client: &Client, key: &ObjectKey, limit: Duration) -> Result<Followed, String> {
    let reader = Reader::of(client, &resource(&key.kind), Some(&key.namespace));
    let start = Instant::now();
    loop {
        let workload = reader
            .get(&key.name, None)
            .await
            .map_err(|e| format!("{key} cannot be read: {e}"))?
            .ok_or_else(|| format!("{key} is no longer in the cluster"))?;
        if let Some(done) = rollout_state(&workload) {
            return Ok(done);
        }
        if start.elapsed() >= limit {
            return Ok(Followed::TimedOut(progress(&workload)));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

fn number(workload: &Value, pointer: &str) -> i64 {
    workload
        .pointer(pointer)
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// `2 of 3 updated, 1 available`.
fn progress(workload: &Value) -> String {
    format!(
        "{} of {} updated, {} available",
        number(workload, "/status/updatedReplicas"),
        workload
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1),
        number(workload, "/status/availableReplicas")
    )
}

/// Complete or stuck, as `kubectl rollout status` tells them; `None` while it rolls out.
fn rollout_state(workload: &Value) -> Option<Followed> {
    let observed =
        number(workload, "/status/observedGeneration") >= number(workload, "/metadata/generation");
    match workload.get("kind").and_then(Value::as_str) {
        Some("StatefulSet") => {
            let wanted = workload
                .pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            let on_update = workload.pointer("/status/currentRevision")
                == workload.pointer("/status/updateRevision");
            let done = observed
                && on_update
                && number(workload, "/status/updatedReplicas") == wanted
                && number(workload, "/status/readyReplicas") == wanted;
            return done.then_some(Followed::Complete);
        }
        Some("DaemonSet") => {
            let wanted = number(workload, "/status/desiredNumberScheduled");
            let done = observed
                && number(workload, "/status/updatedNumberScheduled") == wanted
                && number(workload, "/status/numberAvailable") == wanted;
            return done.then_some(Followed::Complete);
        }
        _ => {}
    }
    let stuck = workload
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| {
            c.get("type").and_then(Value::as_str) == Some("Progressing")
                && c.get("reason").and_then(Value::as_str) == Some("ProgressDeadlineExceeded")
        });
    if let Some(condition) = stuck {
        let message = condition
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("progress deadline exceeded");
        return Some(Followed::Stuck(message.to_owned()));
    }
    let wanted = workload
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let observed =
        number(workload, "/status/observedGeneration") >= number(workload, "/metadata/generation");
    let done = observed
        && number(workload, "/status/updatedReplicas") == wanted
        && number(workload, "/status/replicas") == wanted
        && number(workload, "/status/availableReplicas") == wanted;
    done.then_some(Followed::Complete)
}
