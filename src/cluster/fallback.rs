//! The Deployment watch across all namespaces, and what stands in for it while it is refused.
//!
//! A real API server refuses a cluster-wide list (403) as soon as the user may not list one
//! namespace. Rather than mark every row forbidden, kdrift then watches each namespace on its own
//! (names from a namespace list; if that is refused too, the namespaces seen so far), so only the
//! refused namespaces are marked and the others stay live. It probes the cluster-wide list with
//! backoff and goes back to the single watch (one relist) once it is allowed: the per-namespace
//! watchers, and their relists, exist only after a 403.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::ListParams;
use kube::{Api, Client};

use super::client::NamespaceScope;
use super::live::{LiveRow, TableResource};
use super::rows::WorkloadKind;
use super::watch::{
    ClusterEvent, ClusterMessage, PumpEnd, WatchHealth, WatchedKind, Watchers, first_page, pump,
};

/// First wait before the cluster-wide list is tried again after a 403; doubles up to the max.
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(30);

/// Watch one workload kind (`K`'s) in all namespaces until `send` reports the receiver gone.
pub async fn watch_all_namespaces<K, S>(client: Client, epoch: u64, send: S)
where
    K: TableResource,
    S: Fn(ClusterMessage) -> bool + Clone + Send + Sync + 'static,
{
    let emit = |event| send(ClusterMessage { epoch, event });
    let watched = WatchedKind::of(K::KIND);
    // Namespaces seen in the rows: where to watch if even the namespace list is refused.
    let mut seen: BTreeSet<Arc<str>> = BTreeSet::new();
    let wrap = |u| ClusterEvent::WorkloadsLive(K::KIND, u);
    let map = |d: K| Some(d.into_row());
    // A 403 here sends nothing: the watcher's list meets it too and falls back.
    if !first_page(&Api::all(client.clone()), &emit, wrap, map).await {
        return;
    }
    loop {
        let end = pump::<K, LiveRow>(
            Api::all(client.clone()),
            &NamespaceScope::All,
            watched,
            &emit,
            wrap,
            |h| ClusterEvent::Health(watched, h),
            map,
            true,
            |d: &K| {
                if let Some(ns) = kube::Resource::meta(d).namespace.as_deref()
                    && !seen.contains(ns)
                {
                    seen.insert(Arc::from(ns));
                }
            },
        )
        .await;
        let PumpEnd::Forbidden(message) = end else {
            return;
        };
        tracing::info!(%message, kind = K::KIND.kind(), "all-namespaces watch refused; watching each namespace");
        if !per_namespace_until_allowed::<K, S>(&client, epoch, &send, &seen, &message).await {
            return;
        }
        tracing::info!(kind = K::KIND.kind(), "all-namespaces watch allowed again");
        if !emit(ClusterEvent::AllNamespacesWatch(K::KIND)) {
            return;
        }
    }
}

/// Watch each namespace until the cluster-wide list is allowed again (true) or the receiver is
/// gone (false).
async fn per_namespace_until_allowed<K, S>(
    client: &Client,
    epoch: u64,
    send: &S,
    seen: &BTreeSet<Arc<str>>,
    message: &str,
) -> bool
where
    K: TableResource,
    S: Fn(ClusterMessage) -> bool + Clone + Send + Sync + 'static,
{
    let emit = |event| send(ClusterMessage { epoch, event });
    // Dropping a `Watchers` stops its task: leaving this function stops every namespace watcher.
    let mut watchers: BTreeMap<Arc<str>, Watchers> = BTreeMap::new();
    // Aborting a task does not stop it mid-send: the namespace watchers send under this lock
    // and only while it holds true, so nothing of theirs follows `AllNamespacesWatch`.
    let open = Arc::new(Mutex::new(true));
    let mut delay = RETRY_FIRST;
    let mut health = None;
    loop {
        // Listed again at each probe, so a namespace created meanwhile is watched too.
        let names = match namespace_names(client).await {
            Some(names) => names,
            None => seen.clone(),
        };
        for ns in names {
            if let std::collections::btree_map::Entry::Vacant(slot) = watchers.entry(ns) {
                let task = spawn_namespace::<K, S>(
                    client,
                    slot.key().clone(),
                    epoch,
                    send.clone(),
                    open.clone(),
                );
                slot.insert(Watchers { tasks: vec![task] });
            }
        }
        // Nowhere to watch: the whole scope is forbidden.
        let next = if watchers.is_empty() {
            WatchHealth::Forbidden {
                namespace: None,
                message: message.to_string(),
            }
        } else {
            WatchHealth::Connected
        };
        if health.as_ref() != Some(&next) {
            if !emit(ClusterEvent::Health(WatchedKind::of(K::KIND), next.clone())) {
                return false;
            }
            health = Some(next);
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(RETRY_MAX);
        if cluster_list_allowed(client, K::KIND).await {
            *open.lock().unwrap_or_else(|e| e.into_inner()) = false;
            return true;
        }
    }
}

fn spawn_namespace<K, S>(
    client: &Client,
    ns: Arc<str>,
    epoch: u64,
    send: S,
    open: Arc<Mutex<bool>>,
) -> tokio::task::JoinHandle<()>
where
    K: TableResource,
    S: Fn(ClusterMessage) -> bool + Send + Sync + 'static,
{
    let api = Api::namespaced(client.clone(), &ns);
    tokio::spawn(async move {
        let emit = |event| {
            let open = open.lock().unwrap_or_else(|e| e.into_inner());
            // Closed: the all-namespaces watch took over; end as if the receiver were gone.
            *open && send(ClusterMessage { epoch, event })
        };
        let scope = NamespaceScope::One(ns.to_string());
        let (a, b) = (ns.clone(), ns);
        pump::<K, LiveRow>(
            api,
            &scope,
            WatchedKind::of(K::KIND),
            &emit,
            move |u| ClusterEvent::NamespaceWorkloads(K::KIND, a.clone(), u),
            move |h| ClusterEvent::NamespaceHealth(K::KIND, b.clone(), h),
            |d: K| Some(d.into_row()),
            false,
            |_: &K| {},
        )
        .await;
    })
}

/// Names of every namespace, sorted (also for `:ns` without a name).
pub async fn list_namespaces(client: &Client) -> Result<Vec<String>, kube::Error> {
    let api: Api<Namespace> = Api::all(client.clone());
    let list = api.list(&ListParams::default()).await?;
    let mut names: Vec<String> = list
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    names.sort();
    Ok(names)
}

/// Why the namespaces could not be listed, for the `:ns` picker: a 403 said as a refusal (RBAC
/// often allows reading some namespaces but not listing them), anything else as kube words it.
pub fn namespace_list_error(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) if status.code == 403 => {
            format!("the server refuses (403 Forbidden): {}", status.message)
        }
        other => other.to_string().replace('\n', " "),
    }
}

/// Names of every namespace, or `None` if they cannot be listed (refused or unreachable).
async fn namespace_names(client: &Client) -> Option<BTreeSet<Arc<str>>> {
    match list_namespaces(client).await {
        Ok(names) => Some(names.iter().map(|n| Arc::from(n.as_str())).collect()),
        Err(err) => {
            tracing::warn!(error = %err, "cannot list namespaces; watching those seen so far");
            None
        }
    }
}

/// Does the cluster-wide Deployment list answer again? (One item asked, not the whole list.)
async fn cluster_list_allowed(client: &Client, kind: WorkloadKind) -> bool {
    let api: Api<kube::api::DynamicObject> =
        Api::all_with(client.clone(), &super::live::workload_resource(kind));
    api.list(&ListParams::default().limit(1)).await.is_ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::namespace_list_error;

    #[test]
    fn a_403_on_listing_namespaces_is_said_as_a_refusal() {
        let status: kube::core::Status = serde_json::from_value(serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden",
            "code": 403,
            "message": "namespaces is forbidden: User \"dev\" cannot list resource \"namespaces\""
        }))
        .unwrap();
        let text = namespace_list_error(&kube::Error::Api(Box::new(status)));
        assert!(
            text.starts_with("the server refuses (403 Forbidden): "),
            "{text}"
        );
        assert!(text.contains("User \"dev\" cannot list"), "{text}");
    }
}
