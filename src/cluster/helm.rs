//! Reading Helm's release records from the cluster: Secrets of type `helm.sh/release.v1` and the
//! ConfigMap driver's ConfigMaps, labelled `owner=helm`, in the namespace scope. Only records of
//! a current revision are listed (deployed, failed, pending: the server filters on the `status`
//! label, so a release's hundreds of superseded revisions are never sent), and of those only the
//! one chosen per release is decoded (see [`crate::helm::select`]).
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Client;
use kube::api::{Api, ListParams};

use super::client::NamespaceScope;
use super::describe;
use crate::helm::{RecordMeta, Releases, Storage, select};

/// The records worth listing: a release's current revision and any newer one in flight.
pub const CURRENT_RECORDS: &str =
    "owner=helm,status in (deployed,failed,pending-install,pending-upgrade,pending-rollback)";

/// Page size of the listings.
const PAGE: u32 = 250;

/// A listed record: what its labels say, and its `data.release` (helm's base64 text).
struct Listed {
    meta: RecordMeta,
    data: Option<Vec<u8>>,
}

fn api<K>(client: &Client, scope: &NamespaceScope) -> Api<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    <K as kube::Resource>::DynamicType: Default,
{
    match scope.as_namespace() {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

fn labels_of(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> BTreeMap<String, String> {
    meta.labels.clone().unwrap_or_default()
}

async fn list_secrets(client: &Client, scope: &NamespaceScope) -> Result<Vec<Listed>, kube::Error> {
    let api: Api<Secret> = api(client, scope);
    let mut params = ListParams::default()
        .labels(CURRENT_RECORDS)
        .fields(&format!("type={}", crate::helm::SECRET_TYPE))
        .limit(PAGE);
    let mut out = Vec::new();
    loop {
        let page = api.list(&params).await?;
        let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        for secret in page.items {
            let name = secret.metadata.name.clone().unwrap_or_default();
            let namespace = secret.metadata.namespace.clone().unwrap_or_default();
            let Some(meta) = RecordMeta::from_labels(
                Storage::Secret,
                &name,
                &namespace,
                &labels_of(&secret.metadata),
            ) else {
                continue;
            };
            let data = secret
                .data
                .and_then(|mut d| d.remove("release"))
                .map(|bytes| bytes.0);
            out.push(Listed { meta, data });
        }
        match next {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(out),
        }
    }
}

async fn list_configmaps(
    client: &Client,
    scope: &NamespaceScope,
) -> Result<Vec<Listed>, kube::Error> {
    let api: Api<ConfigMap> = api(client, scope);
    let mut params = ListParams::default().labels(CURRENT_RECORDS).limit(PAGE);
    let mut out = Vec::new();
    loop {
        let page = api.list(&params).await?;
        let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        for map in page.items {
            let name = map.metadata.name.clone().unwrap_or_default();
            if !name.starts_with("sh.helm.release.v1.") {
                continue;
            }
            let namespace = map.metadata.namespace.clone().unwrap_or_default();
            let Some(meta) = RecordMeta::from_labels(
                Storage::ConfigMap,
                &name,
                &namespace,
                &labels_of(&map.metadata),
            ) else {
                continue;
            };
            let data = map
                .data
                .and_then(|mut d| d.remove("release"))
                .map(String::into_bytes);
            out.push(Listed { meta, data });
        }
        match next {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(out),
        }
    }
}

/// The records of one kind of storage in `scope`; across all namespaces when that is refused
/// (RBAC that grants some namespaces), namespace by namespace, the refused ones said.
async fn list_storage(
    client: &Client,
    scope: &NamespaceScope,
    storage: Storage,
    releases: &mut Releases,
) -> Vec<Listed> {
    let what = match storage {
        Storage::Secret => "secrets",
        Storage::ConfigMap => "configmaps",
    };
    let list = |scope: NamespaceScope| async move {
        match storage {
            Storage::Secret => list_secrets(client, &scope).await,
            Storage::ConfigMap => list_configmaps(client, &scope).await,
        }
    };
    let refused = |releases: &mut Releases, place: String, why: &str| {
        releases.unread.push(format!(
            "Helm releases stored as {what} {place} were not read ({why}): a release there may have drifted unseen; let this user list {what} there (helm itself needs it), or check as one who may"
        ))
    };
    match list(scope.clone()).await {
        Ok(records) => records,
        Err(kube::Error::Api(status))
            if status.is_forbidden() && scope.as_namespace().is_none() =>
        {
            let Ok(namespaces) = super::fallback::list_namespaces(client).await else {
                refused(releases, "in all namespaces".to_owned(), &status.message);
                return Vec::new();
            };
            let mut records = Vec::new();
            let mut forbidden = Vec::new();
            for ns in namespaces {
                match list(NamespaceScope::One(ns.clone())).await {
                    Ok(found) => records.extend(found),
                    Err(kube::Error::Api(status)) if status.is_forbidden() => forbidden.push(ns),
                    Err(e) => releases.problems.push(format!(
                        "{what} in namespace \"{ns}\": cannot list Helm's release records: {}",
                        describe(&e)
                    )),
                }
            }
            if !forbidden.is_empty() {
                refused(
                    releases,
                    format!("in namespace(s) {}", forbidden.join(", ")),
                    "forbidden",
                );
            }
            records
        }
        Err(kube::Error::Api(status)) if status.is_forbidden() => {
            let place = format!("in namespace \"{}\"", scope.label());
            refused(releases, place, &status.message);
            Vec::new()
        }
        Err(e) => {
            releases.problems.push(format!(
                "{what} in {}: cannot list Helm's release records: {}",
                scope.label(),
                describe(&e)
            ));
            Vec::new()
        }
    }
}

/// Every release of the namespace scope at its current revision, decoded; the records that
/// could not be read or listed are said (a listing refused by RBAC too: helm's records are
/// Secrets, which many users may not read, and what was not read may have drifted).
///
/// With one namespace in scope, the records of every namespace are read where RBAC allows
/// (else those of that namespace): a release elsewhere may put objects into it (monitoring and
/// ingress charts do), and `-n THAT_NS` finds them by their own namespace. Only the releases
/// with something in that namespace are kept.
pub async fn read_releases(client: &Client, scope: &NamespaceScope) -> Releases {
    if let Some(ns) = scope.as_namespace() {
        let mut everywhere = Releases::default();
        let secrets = list_secrets(client, &NamespaceScope::All).await;
        let configmaps = list_configmaps(client, &NamespaceScope::All).await;
        if let (Ok(mut listed), Ok(configmaps)) = (secrets, configmaps) {
            listed.extend(configmaps);
            decode_into(&mut everywhere, listed).await;
            everywhere
                .releases
                .retain(|release| release.namespace == ns || puts_objects_in(release, ns));
            everywhere
                .problems
                .retain(|line| line.contains(&format!("/{ns}/")) || !line.contains('/'));
            return everywhere;
        }
    }
    let mut releases = Releases::default();
    let mut listed = list_storage(client, scope, Storage::Secret, &mut releases).await;
    listed.extend(list_storage(client, scope, Storage::ConfigMap, &mut releases).await);
    decode_into(&mut releases, listed).await;
    releases
}

/// Whether a release's manifest names namespace `ns` for an object of its own.
fn puts_objects_in(release: &crate::helm::Release, ns: &str) -> bool {
    release.manifest.lines().any(|line| {
        line.trim()
            .strip_prefix("namespace:")
            .is_some_and(|value| value.trim().trim_matches(['"', '\'']) == ns)
    })
}

/// Decodes the records chosen from `listed` into `releases`, off the async workers.
async fn decode_into(releases: &mut Releases, listed: Vec<Listed>) {
    let decoded = tokio::task::spawn_blocking(move || decode_chosen(listed))
        .await
        .unwrap_or_else(|e| {
            (
                Vec::new(),
                vec![format!("helm: decoding the release records failed: {e}")],
            )
        });
    releases.releases = decoded.0;
    releases.problems.extend(decoded.1);
}

/// Decodes the record chosen for each release (the rest are never decoded).
fn decode_chosen(listed: Vec<Listed>) -> (Vec<Arc<crate::helm::Release>>, Vec<String>) {
    let metas: Vec<RecordMeta> = listed.iter().map(|l| l.meta.clone()).collect();
    let mut data: BTreeMap<(Storage, String, String), Option<Vec<u8>>> = listed
        .into_iter()
        .map(|l| ((l.meta.storage, l.meta.namespace, l.meta.object), l.data))
        .collect();
    let mut releases = Vec::new();
    let mut problems = Vec::new();
    for chosen in select::choose(metas) {
        let record = &chosen.record;
        let bytes = data
            .remove(&(
                record.storage,
                record.namespace.clone(),
                record.object.clone(),
            ))
            .flatten();
        let decoded = match bytes {
            Some(bytes) => crate::helm::record::decode(&bytes),
            None => Err(crate::helm::RecordError::NoData),
        };
        // The revision helm is applying now, decoded too: its fields live are helm at work.
        let pending = chosen.pending.as_ref().and_then(|meta| {
            let bytes = data
                .remove(&(meta.storage, meta.namespace.clone(), meta.object.clone()))
                .flatten()?;
            match crate::helm::record::decode(&bytes) {
                Ok(release) => Some(Arc::new(release)),
                Err(e) => {
                    problems.push(format!("{}: {e}", meta.describe()));
                    None
                }
            }
        });
        match decoded {
            Ok(mut release) => {
                release.newer = chosen.newer.clone();
                release.pending = pending;
                // The record's own labels say which release it is, if its JSON is sparse.
                if release.name.is_empty() {
                    release.name = record.release.clone();
                }
                if release.namespace.is_empty() {
                    release.namespace = record.namespace.clone();
                }
                releases.push(Arc::new(release));
            }
            Err(e) => problems.push(format!("{}: {e}", record.describe())),
        }
    }
    (releases, problems)
}

/// Revision `revision` of the release `name` in `namespace`, decoded from its record (a
/// Secret `sh.helm.release.v1.NAME.vN`, else a ConfigMap of that name: helm's two storages).
pub async fn read_revision(
    client: &Client,
    name: &str,
    namespace: &str,
    revision: u64,
) -> Result<crate::helm::Release, String> {
    let object = format!("sh.helm.release.v1.{name}.v{revision}");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let bytes = match secrets.get_opt(&object).await {
        Ok(Some(secret)) => secret
            .data
            .and_then(|mut d| d.remove("release"))
            .map(|bytes| bytes.0),
        Ok(None) => {
            let maps: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
            match maps.get_opt(&object).await {
                Ok(found) => found
                    .and_then(|map| map.data)
                    .and_then(|mut d| d.remove("release"))
                    .map(String::into_bytes),
                Err(e) => {
                    return Err(format!(
                        "cannot read {namespace}/{object}: {}",
                        describe(&e)
                    ));
                }
            }
        }
        Err(e) => {
            return Err(format!(
                "cannot read {namespace}/{object}: {}",
                describe(&e)
            ));
        }
    };
    let bytes = bytes.ok_or_else(|| {
        format!("release {name} has no revision {revision} (no record {namespace}/{object})")
    })?;
    crate::helm::record::decode(&bytes).map_err(|e| format!("{namespace}/{object}: {e}"))
}

/// Record changes closer together than this are read as one (`helm upgrade` writes the new
/// record, then marks it deployed and the old one superseded).
pub const SETTLE: std::time::Duration = std::time::Duration::from_millis(40);

/// Reads the releases of the connection's scope, then again whenever a release record changes:
/// a watch of the records' metadata alone (labelled `owner=helm`, Secrets and ConfigMaps), so a
/// `helm upgrade` is seen as its records change, with no polling. `send` gets each reading that
/// differs from the one before, and returns false once the receiver is gone.
pub fn spawn_release_watcher<S>(
    conn: &super::client::Connection,
    epoch: u64,
    send: S,
) -> super::watch::Watchers
where
    S: Fn(u64, Releases) -> bool + Send + Sync + 'static,
{
    use futures::StreamExt;
    use kube::core::PartialObjectMeta;
    use kube::runtime::{WatchStreamExt, watcher};

    let client = conn.client.clone();
    let scope = conn.scope.clone();
    let task = tokio::spawn(async move {
        let config = watcher::Config::default()
            .labels("owner=helm")
            .timeout(super::watch::watch_timeout_jittered());
        let secrets = watcher(
            api::<PartialObjectMeta<Secret>>(&client, &scope),
            config.clone(),
        )
        .default_backoff()
        .map(|event| event.is_ok());
        let configmaps = watcher(api::<PartialObjectMeta<ConfigMap>>(&client, &scope), config)
            .default_backoff()
            .map(|event| event.is_ok());
        let mut changes = futures::stream::select(secrets, configmaps).boxed();
        let mut last: Option<Releases> = None;
        loop {
            let releases = read_releases(&client, &scope).await;
            if last.as_ref() != Some(&releases) {
                if !send(epoch, releases.clone()) {
                    return;
                }
                last = Some(releases);
            }
            // Wait for a record to change (a failing watch retries with backoff on its own).
            loop {
                match changes.next().await {
                    Some(true) => break,
                    Some(false) => continue,
                    None => return,
                }
            }
            let settle = tokio::time::sleep(SETTLE);
            tokio::pin!(settle);
            loop {
                tokio::select! {
                    () = &mut settle => break,
                    next = changes.next() => if next.is_none() { return },
                }
            }
        }
    });
    super::watch::Watchers { tasks: vec![task] }
}
