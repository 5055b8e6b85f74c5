//! The live side of drift in the live view: the table watcher's Deployment type, which decodes
//! each object into the slim row and keeps its JSON text ([`LiveJson`]) so that the app can read
//! the drift extract ([`LiveObject`]) of the objects that have a manifest — only those: most of a
//! cluster has none, and reading the extract of each is most of the watcher's cost. Also the
//! fetches the app asks for when a manifest changes or a diff opens (one GET per object, or one
//! list per namespace when many objects of it are wanted). The app keeps no live object: it
//! compares and drops it.
use std::collections::BTreeMap;

use kube::Client;
use kube::api::{Api, ApiResource, GetParams, ListParams};
use serde::de::{Deserialize, Deserializer, Error as _};
use serde_json::value::RawValue;

use super::read::{self, Reader};
use super::rows::{PodRow, WorkloadKind, WorkloadRow};
use super::slim::{SlimDaemonSet, SlimDeployment, SlimStatefulSet};
use crate::drift::LiveObject;
use crate::drift::live::LiveError;
use crate::manifest::{ObjectKey, SharedStr};

/// A workload as the table watcher decodes it: the slim fields for the row (`S`, one type per
/// kind) and the object's JSON text, read into a drift extract only if the app has a manifest
/// for it.
#[derive(Debug, Clone)]
pub struct Live<S> {
    pub slim: S,
    pub json: LiveJson,
}

pub type LiveDeployment = Live<SlimDeployment>;
pub type LiveStatefulSet = Live<SlimStatefulSet>;
pub type LiveDaemonSet = Live<SlimDaemonSet>;

impl<'de, S: serde::de::DeserializeOwned> Deserialize<'de> for Live<S> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Copying the text is cheap next to building a JSON tree of every object; kube reads
        // objects from the response bytes with serde_json, which hands over the text as is.
        let raw = Box::<RawValue>::deserialize(d)?;
        let slim = serde_json::from_str(raw.get()).map_err(D::Error::custom)?;
        Ok(Live {
            slim,
            json: LiveJson(raw),
        })
    }
}

/// The slim decoding of one workload kind: its row and its metadata.
pub trait SlimWorkload {
    const KIND: WorkloadKind;
    fn row(&self) -> WorkloadRow;
    fn metadata(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
}

impl SlimWorkload for SlimDeployment {
    const KIND: WorkloadKind = WorkloadKind::Deployment;
    fn row(&self) -> WorkloadRow {
        WorkloadRow::from_object(self)
    }
    fn metadata(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        &self.metadata
    }
}

impl SlimWorkload for SlimStatefulSet {
    const KIND: WorkloadKind = WorkloadKind::StatefulSet;
    fn row(&self) -> WorkloadRow {
        WorkloadRow::from_statefulset(self)
    }
    fn metadata(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        &self.metadata
    }
}

impl SlimWorkload for SlimDaemonSet {
    const KIND: WorkloadKind = WorkloadKind::DaemonSet;
    fn row(&self) -> WorkloadRow {
        WorkloadRow::from_daemonset(self)
    }
    fn metadata(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        &self.metadata
    }
}

super::slim::apps_resource!(LiveDeployment, "Deployment", "deployments", slim.metadata);
super::slim::apps_resource!(
    LiveStatefulSet,
    "StatefulSet",
    "statefulsets",
    slim.metadata
);
super::slim::apps_resource!(LiveDaemonSet, "DaemonSet", "daemonsets", slim.metadata);

/// What a table watcher decodes: one workload kind's [`Live`] type, a kube resource.
pub trait TableResource:
    kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
    + serde::de::DeserializeOwned
    + Clone
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
    const KIND: WorkloadKind;
    fn into_row(self) -> LiveRow;
}

impl<S> TableResource for Live<S>
where
    S: SlimWorkload + serde::de::DeserializeOwned + Clone + std::fmt::Debug + Send + Sync + 'static,
    Live<S>: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
{
    const KIND: WorkloadKind = S::KIND;
    fn into_row(self) -> LiveRow {
        LiveRow::from_object(self)
    }
}

/// The JSON text of one live object, as the server sent it.
#[derive(Debug, Clone)]
pub struct LiveJson(Box<RawValue>);

impl LiveJson {
    pub fn text(&self) -> &str {
        self.0.get()
    }

    /// Reads the drift extract: the fields drift compares and the `managedFields` entries that
    /// attribute them.
    pub fn extract(&self) -> Result<LiveObject, LiveError> {
        LiveObject::from_deployment_json(self.text(), crate::schema::Schemas::builtin())
    }
}

impl PartialEq for LiveJson {
    fn eq(&self, other: &LiveJson) -> bool {
        self.text() == other.text()
    }
}

/// A row and the object's JSON: one watch event for the app.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveRow {
    pub row: WorkloadRow,
    pub json: LiveJson,
}

impl LiveRow {
    pub fn from_object<S: SlimWorkload>(d: Live<S>) -> LiveRow {
        LiveRow {
            row: d.slim.row(),
            json: d.json,
        }
    }
}

impl super::rows::Keyed for LiveRow {
    fn key(&self) -> &ObjectKey {
        &self.row.key
    }
}

/// The result of fetching one object: its JSON text, `Ok(None)` when it does not exist
/// (missing), `Err` with the reason when it could not be fetched.
pub type Fetched = (ObjectKey, Result<Option<LiveJson>, String>);

/// An object to fetch, and the `apiVersion` to read it in (its manifest's).
pub type Wanted = (ObjectKey, String);

/// More wanted objects than this in one namespace: one list instead of a GET each.
const LIST_THRESHOLD: usize = 8;
/// More wanted objects than this in all: one paged list of every namespace.
const LIST_ALL_THRESHOLD: usize = 256;

/// The API resource of a workload kind (all three are `apps/v1`).
pub fn workload_resource(kind: WorkloadKind) -> ApiResource {
    ApiResource {
        group: "apps".into(),
        version: "v1".into(),
        api_version: "apps/v1".into(),
        kind: kind.kind().into(),
        plural: kind.resource().into(),
    }
}

/// Fetches the objects of `wanted`, of any kind, for the live view's drift: a GET each, or a
/// paged list of a namespace (or of every namespace) when many objects of one kind there are
/// wanted — the live view's one reader of objects it does not watch the change of. Every key
/// gets an answer, handed to `deliver` a batch at a time: a list's found objects page by page,
/// then the keys no page had. After the manifests load, every workload already listed is asked
/// for (10,000 at scale), so the answers are the objects' JSON text, as a watch event brings
/// them: the app reads each into a drift extract, compares and drops it. Extracts made here (a
/// tree of each whole object, ~30 KB) queued for the app by the thousand and were the start's
/// largest heap by far (330 MB at 10,000), whose pages the allocator kept as resident memory.
/// `in_flight` GETs run at once (as `check` reads them: more over HTTP/2).
pub async fn fetch(
    client: &Client,
    kinds: &LiveKinds,
    wanted: Vec<Wanted>,
    in_flight: usize,
    deliver: &mut (impl FnMut(Vec<Fetched>) + Send),
) {
    let mut by_kind: BTreeMap<(String, String), Vec<ObjectKey>> = BTreeMap::new();
    for (key, api_version) in wanted {
        by_kind
            .entry((api_version, key.kind.to_string()))
            .or_default()
            .push(key);
    }
    for ((api_version, kind), keys) in by_kind {
        match resource_of(kinds, &api_version, &kind) {
            Ok((resource, namespaced)) => {
                let kind = Kind {
                    resource: &resource,
                    namespaced,
                };
                fetch_kind(client, kind, keys, in_flight, deliver).await;
            }
            Err(reason) => deliver(keys.into_iter().map(|k| (k, Err(reason.clone()))).collect()),
        }
    }
}

/// The resource to read `kind` of `api_version` from, and whether it is namespaced: the one
/// discovery found; the workloads' before discovery answered (the table watches them from the
/// start).
fn resource_of(
    kinds: &LiveKinds,
    api_version: &str,
    kind: &str,
) -> Result<(ApiResource, bool), String> {
    if let Some(served) = kinds.served.get(api_version, kind) {
        return Ok((served.api_resource(), served.namespaced));
    }
    if api_version == "apps/v1"
        && let Some(workload) = WorkloadKind::of_kind("apps", kind)
    {
        return Ok((workload_resource(workload), true));
    }
    Err(kinds
        .served
        .unserved(api_version, kind)
        .unwrap_or_else(|| format!("no kind {kind} in {api_version} on this cluster")))
}

/// One kind's resource and scope.
#[derive(Clone, Copy)]
struct Kind<'a> {
    resource: &'a ApiResource,
    namespaced: bool,
}

async fn fetch_kind(
    client: &Client,
    kind: Kind<'_>,
    keys: Vec<ObjectKey>,
    in_flight: usize,
    deliver: &mut (impl FnMut(Vec<Fetched>) + Send),
) {
    use futures::StreamExt;
    if kind.namespaced && keys.len() > LIST_ALL_THRESHOLD {
        let all = Reader::of(client, kind.resource, None);
        return list_matching(&all, kind, "every namespace", keys, deliver).await;
    }
    let mut by_namespace: BTreeMap<String, Vec<ObjectKey>> = BTreeMap::new();
    for key in keys {
        by_namespace
            .entry(key.namespace.to_string())
            .or_default()
            .push(key);
    }
    let mut gets = Vec::new();
    for (namespace, keys) in by_namespace {
        let scope = Some(namespace.as_str()).filter(|_| kind.namespaced);
        let reader = Reader::of(client, kind.resource, scope);
        if keys.len() > LIST_THRESHOLD {
            let place = match scope {
                Some(namespace) => format!("\"{namespace}\""),
                None => "the cluster".to_owned(),
            };
            list_matching(&reader, kind, &place, keys, deliver).await;
            continue;
        }
        gets.extend(keys.into_iter().map(|key| (reader.clone(), key)));
    }
    // The few objects of each namespace by name, several at once (as `check` reads them).
    let plural = kind.resource.plural.as_str();
    let out: Vec<Fetched> = futures::stream::iter(gets)
        .map(|(reader, key)| async move {
            let result = match reader
                .get_as::<LiveAny>(&key.name, &GetParams::default())
                .await
            {
                Ok(found) => Ok(found.map(|object| object.json)),
                Err(e) => Err(format!(
                    "cannot get {plural} \"{}\"{}: {}",
                    key.name,
                    in_namespace(&key),
                    super::describe(&e)
                )),
            };
            (key, result)
        })
        .buffered(in_flight.max(1))
        .collect()
        .await;
    if !out.is_empty() {
        deliver(out);
    }
}

/// ` in "NAMESPACE"`, or nothing for a cluster-scoped object.
fn in_namespace(key: &ObjectKey) -> String {
    if key.namespace.is_empty() {
        String::new()
    } else {
        format!(" in \"{}\"", key.namespace)
    }
}

/// Lists with `reader` page by page and answers each key (the found ones after each page);
/// `place` names where, for the error.
async fn list_matching(
    reader: &Reader,
    kind: Kind<'_>,
    place: &str,
    keys: Vec<ObjectKey>,
    deliver: &mut (impl FnMut(Vec<Fetched>) + Send),
) {
    let mut wanted: std::collections::HashSet<ObjectKey> = keys.into_iter().collect();
    let mut params = ListParams::default().limit(read::PAGE);
    loop {
        match reader.page_as::<LiveAny>(&params).await {
            Ok(list) => {
                let mut found = Vec::new();
                for object in list.items {
                    let namespace = match kind.namespaced {
                        true => object.metadata.namespace.as_deref().unwrap_or_default(),
                        false => "",
                    };
                    let probe = ObjectKey::new(
                        &kind.resource.group,
                        &kind.resource.kind,
                        namespace,
                        object.metadata.name.as_deref().unwrap_or_default(),
                    );
                    // Only the wanted ones are handed over (as the app's own key); the rest of
                    // the page is dropped here.
                    if let Some(key) = wanted.take(&probe) {
                        found.push((key, Ok(Some(object.json))));
                    }
                }
                if !found.is_empty() {
                    deliver(found);
                }
                match list.metadata.continue_ {
                    Some(token) if !token.is_empty() => params = params.continue_token(&token),
                    _ => break,
                }
            }
            Err(e) => {
                let reason = format!(
                    "cannot list {} in {place}: {}",
                    kind.resource.plural,
                    super::describe(&e)
                );
                deliver(
                    wanted
                        .into_iter()
                        .map(|k| (k, Err(reason.clone())))
                        .collect(),
                );
                return;
            }
        }
    }
    if !wanted.is_empty() {
        deliver(wanted.into_iter().map(|k| (k, Ok(None))).collect());
    }
}

/// What the live view needs to read objects of any kind: the kinds the cluster serves (from
/// discovery) and their schemas (from its OpenAPI). Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct LiveKinds {
    pub served: std::sync::Arc<crate::cluster::kinds::ServedKinds>,
    pub schemas: std::sync::Arc<crate::schema::Schemas>,
}

/// An object of a kind the manifests use, as its watcher decodes it: its identity (metadata
/// without the rest) and its JSON text, read into a drift extract only when it has a manifest.
#[derive(Debug, Clone)]
pub struct LiveAny {
    pub metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    pub json: LiveJson,
}

impl LiveKinds {
    /// What the live view knows before discovery answers: Deployments (the table's kind) and
    /// the built-in schemas.
    pub fn before_discovery() -> LiveKinds {
        let deployments = crate::cluster::kinds::ServedKind {
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into(),
            plural: "deployments".into(),
            singular: "deployment".into(),
            short_names: vec!["deploy".into()],
            namespaced: true,
            verbs: Vec::new(),
            preferred: true,
        };
        LiveKinds {
            served: std::sync::Arc::new(crate::cluster::kinds::ServedKinds::from_kinds(vec![
                deployments,
            ])),
            schemas: std::sync::Arc::new(crate::schema::Schemas::builtin().clone()),
        }
    }
}

impl<'de> Deserialize<'de> for LiveAny {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct MetadataOnly {
            #[serde(deserialize_with = "super::slim::slim_meta", default)]
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        }
        let raw = Box::<RawValue>::deserialize(d)?;
        let MetadataOnly { metadata } =
            serde_json::from_str(raw.get()).map_err(D::Error::custom)?;
        Ok(LiveAny {
            metadata,
            json: LiveJson(raw),
        })
    }
}

impl kube::Resource for LiveAny {
    type DynamicType = ApiResource;
    type Scope = kube::core::DynamicResourceScope;

    fn kind(dt: &ApiResource) -> std::borrow::Cow<'_, str> {
        dt.kind.as_str().into()
    }
    fn group(dt: &ApiResource) -> std::borrow::Cow<'_, str> {
        dt.group.as_str().into()
    }
    fn version(dt: &ApiResource) -> std::borrow::Cow<'_, str> {
        dt.version.as_str().into()
    }
    fn api_version(dt: &ApiResource) -> std::borrow::Cow<'_, str> {
        dt.api_version.as_str().into()
    }
    fn plural(dt: &ApiResource) -> std::borrow::Cow<'_, str> {
        dt.plural.as_str().into()
    }
    fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        &mut self.metadata
    }
}

impl LiveJson {
    /// The drift extract of an object of `api_version` and `kind` (a list item may lack them).
    pub fn extract_as(
        &self,
        api_version: &str,
        kind: &str,
        schemas: &crate::schema::Schemas,
    ) -> Result<LiveObject, LiveError> {
        LiveObject::from_item_json(self.text(), api_version, kind, schemas)
    }
}

/// The result of fetching one object of any kind.
pub type FetchedObject = (
    crate::manifest::ObjectKey,
    Result<Option<Box<LiveObject>>, String>,
);

/// Fetches objects of any kind, each in the `apiVersion` given with it (its manifest's): a GET
/// each, several at once (as `check` reads them by name). Every key gets an answer, in order.
pub async fn fetch_objects(
    client: &Client,
    kinds: &LiveKinds,
    wanted: Vec<(crate::manifest::ObjectKey, String)>,
) -> Vec<FetchedObject> {
    use futures::StreamExt;
    futures::stream::iter(wanted)
        .map(|(key, api_version)| async move {
            let result = get_object(client, kinds, &key, &api_version)
                .await
                .and_then(|found| match found {
                    None => Ok(None),
                    Some(value) => {
                        LiveObject::from_item(value, &api_version, &key.kind, &kinds.schemas)
                            .map(|o| Some(Box::new(o)))
                            .map_err(|e| e.to_string())
                    }
                });
            (key, result)
        })
        .buffered(read::GETS_IN_FLIGHT_HTTP1)
        .collect()
        .await
}

/// One object of any kind as the API server returns it (`managedFields` and `status` kept), in
/// `api_version`: `None` when the cluster has no such object; the error as a sentence.
pub async fn get_object(
    client: &Client,
    kinds: &LiveKinds,
    key: &crate::manifest::ObjectKey,
    api_version: &str,
) -> Result<Option<serde_json::Value>, String> {
    let Some(kind) = kinds.served.get(api_version, &key.kind) else {
        return Err(kinds
            .served
            .unserved(api_version, &key.kind)
            .unwrap_or_else(|| format!("no kind {} in {api_version} on this cluster", key.kind)));
    };
    Reader::new(client, kind, Some(&key.namespace))
        .get(&key.name, None)
        .await
        .map_err(|e| {
            format!(
                "cannot get {} \"{}\": {}",
                kind.resource(),
                key.name,
                crate::cluster::describe(&e)
            )
        })
}

/// The pods of each workload asked about (`None` when they could not be listed): one pod list
/// per namespace, the workload's own pods kept — a StatefulSet's or DaemonSet's own them
/// directly, a Deployment's through the ReplicaSet named after it and their `pod-template-hash`.
pub async fn pods_of_workloads(
    client: &Client,
    keys: Vec<ObjectKey>,
) -> Vec<(ObjectKey, Option<Vec<PodRow>>)> {
    use k8s_openapi::api::core::v1::Pod;
    type Listed = Option<Vec<(PodRow, Option<String>)>>;
    let mut pods_of: BTreeMap<SharedStr, Listed> = BTreeMap::new();
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        if !pods_of.contains_key(&key.namespace) {
            let api: Api<Pod> = Api::namespaced(client.clone(), &key.namespace);
            let listed = match api.list(&ListParams::default()).await {
                Ok(list) => Some(
                    list.items
                        .iter()
                        .map(|p| {
                            let hash = p
                                .metadata
                                .labels
                                .as_ref()
                                .and_then(|l| l.get("pod-template-hash"))
                                .cloned();
                            (PodRow::from_object(p), hash)
                        })
                        .collect(),
                ),
                Err(e) => {
                    tracing::warn!(namespace = %key.namespace, error = %e, "cannot list pods to say why a row is short of ready pods");
                    None
                }
            };
            pods_of.insert(key.namespace.clone(), listed);
        }
        let own = pods_of
            .get(&key.namespace)
            .and_then(Option::as_ref)
            .map(|pods| {
                pods.iter()
                    .filter(|(p, hash)| owned_by(p, hash.as_deref(), &key))
                    .map(|(p, _)| p.clone())
                    .collect()
            });
        out.push((key, own));
    }
    out
}

/// Whether `pod` (with its `pod-template-hash`, if any) belongs to the workload `key`.
fn owned_by(pod: &PodRow, hash: Option<&str>, key: &ObjectKey) -> bool {
    let Some(kind) = WorkloadKind::of_key(key).filter(|kind| pod.owner_kind == Some(*kind)) else {
        return false;
    };
    let Some(owner) = pod.owner.as_deref() else {
        return false;
    };
    match kind {
        WorkloadKind::Deployment => hash.is_some_and(|hash| {
            owner.strip_suffix(hash).and_then(|o| o.strip_suffix('-')) == Some(&*key.name)
        }),
        WorkloadKind::StatefulSet | WorkloadKind::DaemonSet => owner == &*key.name,
    }
}
