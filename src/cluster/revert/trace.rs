//! The trace a revert (or a rollback) leaves: an event `Reverted` on the object, reported by
//! kdrift, naming who asked and what was put back — written by [`Reverter::record`], read back
//! by [`traces`] for `kdrift blame`.
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject};

use super::{FIELD_MANAGER, Outcome, Preview, Reverter, field_manager_for};

impl Reverter {
    /// Leaves a trace of a revert done: a `Normal` event `Reverted` on the object, reported by
    /// kdrift, naming who asked (`who`), the fields put back and the field manager applied as — so
    /// that the timeline (`kdrift changes`) and an incident review tell a person's revert from a
    /// `helm upgrade`, though the fields are written as helm's. Not recorded is not fatal: the
    /// error says why (RBAC on events). `action` is what was done: `revert`, or a rollback's
    /// `rollback to revision 3`.
    pub async fn record(
        &self,
        preview: &Preview,
        outcome: &Outcome,
        who: &str,
        action: &str,
    ) -> Result<(), String> {
        let desired = match &self.manifest.helm {
            Some(release) => release.source(),
            None => format!(
                "{}:{}",
                crate::manifest::shown_path(&self.manifest.file),
                self.manifest.line
            ),
        };
        let message = format!(
            "kdrift {action} by {who}: put back {} as {desired} says (applied as field manager \"{}\")",
            listed(&preview.reverted),
            field_manager_for(&self.manifest)
        );
        record_event(
            &self.client,
            (&self.manifest.api_version, &self.manifest.key),
            &outcome.after,
            who,
            &message,
        )
        .await
    }
}

/// A revert's trace read back ([`Reverter::record`]): when, and its message (who asked, what was
/// put back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    pub time: String,
    pub message: String,
}

/// The traces kdrift left of reverts of `key`'s object, oldest first (its events `Reverted`
/// reported by kdrift, as long as the server keeps events: an hour by default).
pub async fn traces(
    client: &Client,
    key: &crate::manifest::ObjectKey,
) -> Result<Vec<Trace>, String> {
    use k8s_openapi::api::core::v1::Event;
    let namespace = match key.namespace.as_str() {
        "" => "default",
        ns => ns,
    };
    let api: Api<Event> = Api::namespaced(client.clone(), namespace);
    let params = kube::api::ListParams::default()
        .fields(&format!("involvedObject.name={},reason=Reverted", key.name));
    let list = api
        .list(&params)
        .await
        .map_err(|e| crate::cluster::describe(&e))?;
    let mut traces: Vec<Trace> = list
        .items
        .into_iter()
        .filter(|e| {
            e.reporting_component.as_deref() == Some(FIELD_MANAGER)
                && e.involved_object.kind.as_deref() == Some(key.kind.as_str())
                && e.involved_object.name.as_deref() == Some(key.name.as_str())
        })
        .map(|e| Trace {
            time: e
                .last_timestamp
                .map(|t| t.0.to_string())
                .unwrap_or_default(),
            message: e.message.unwrap_or_default(),
        })
        .collect();
    traces.sort_by(|a, b| a.time.cmp(&b.time));
    Ok(traces)
}

/// Who asks for a revert, for its trace: the local user and machine, and the kubeconfig context
/// (`alice@laptop (context prod)`): the API server knows the credentials, not the person.
pub fn who(context: &str) -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "someone".to_owned());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown host".to_owned());
    format!("{user}@{host} (context {context})")
}

/// `fields` for a trace: `spec.replicas, …` (at most five, then how many more).
fn listed(fields: &[String]) -> String {
    const SHOWN: usize = 5;
    match fields.len() {
        0 => "nothing".to_owned(),
        n if n > SHOWN => format!("{} and {} more", fields[..SHOWN].join(", "), n - SHOWN),
        _ => fields.join(", "),
    }
}

/// Leaves a trace of what kdrift did to an object: a `Normal` event `Reverted` on it (the
/// reason [`traces`] reads), reported by kdrift, with `message`; `after` is the object as the
/// write left it (its uid and resourceVersion). Not recorded is not fatal: the error says why.
pub async fn record_event(
    client: &Client,
    (api_version, key): (&str, &crate::manifest::ObjectKey),
    after: &serde_json::Value,
    who: &str,
    message: &str,
) -> Result<(), String> {
    let namespace = match key.namespace.as_str() {
        "" => "default",
        ns => ns,
    };
    let now = jiff::Timestamp::now().to_string();
    let involved = serde_json::json!({
        "apiVersion": api_version,
        "kind": key.kind.to_string(),
        "name": key.name.to_string(),
        "namespace": (!key.namespace.is_empty()).then(|| key.namespace.to_string()),
        "uid": after.pointer("/metadata/uid"),
        "resourceVersion": after.pointer("/metadata/resourceVersion"),
    });
    let event = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "generateName": format!("{}.kdrift-revert-", key.name),
            "namespace": namespace,
        },
        "involvedObject": involved,
        "type": "Normal",
        "reason": "Reverted",
        "message": message,
        "source": {"component": FIELD_MANAGER},
        "reportingComponent": FIELD_MANAGER,
        "reportingInstance": who,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    });
    let events: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &ApiResource::erase::<k8s_openapi::api::core::v1::Event>(&()),
    );
    let event: DynamicObject = serde_json::from_value(event).map_err(|e| e.to_string())?;
    events
        .create(&kube::api::PostParams::default(), &event)
        .await
        .map(|_| ())
        .map_err(|e| crate::cluster::describe(&e))
}
