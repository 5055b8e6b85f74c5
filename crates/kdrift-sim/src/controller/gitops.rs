//! What the GitOps controllers of a real cluster write, as pure functions: Argo CD's
//! application controller (the tracking annotation on what it applies, an Application's sync
//! and health status, its operation and history, when self-heal acts) and Flux's
//! kustomize-controller (its owner labels, a Kustomization's Ready condition and inventory).
//! The IO (reading the repository with `git`, applying, writing status) is the driver's.
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::object::{annotation, at, i64_at, name, namespace, str_at};

/// The field manager Argo CD applies with (server-side apply, or its client-side apply).
pub const ARGOCD_MANAGER: &str = "argocd-controller";
/// The manager of the Application's own status: the application controller's user agent.
pub const ARGOCD_STATUS_MANAGER: &str = "argocd-application-controller";
/// The field manager Flux's kustomize-controller applies with.
pub const FLUX_MANAGER: &str = "kustomize-controller";
/// The annotation that asks Argo CD's application controller to refresh an Application now
/// (what `argocd app get --refresh` and a push's webhook write); the controller removes it once
/// it has.
pub const REFRESH: &str = "argocd.argoproj.io/refresh";
/// Argo CD's annotation tracking (the default since Argo CD 3.0).
pub const TRACKING_ID: &str = "argocd.argoproj.io/tracking-id";
pub const FLUX_NAME: &str = "kustomize.toolkit.fluxcd.io/name";
pub const FLUX_NAMESPACE: &str = "kustomize.toolkit.fluxcd.io/namespace";
/// apiVersion and kind of the two custom resources.
pub const APPLICATION: (&str, &str) = ("argoproj.io/v1alpha1", "Application");
pub const KUSTOMIZATION: (&str, &str) = ("kustomize.toolkit.fluxcd.io/v1", "Kustomization");
/// Flux's git source, which a Kustomization's `sourceRef` names.
pub const GIT_REPOSITORY: (&str, &str) = ("source.toolkit.fluxcd.io/v1", "GitRepository");
/// The namespace Argo CD runs in: an Application there is named by its name alone in tracking
/// ids (one elsewhere would be `namespace_name`).
pub const ARGOCD_NAMESPACE: &str = "argocd";
/// Entries of `status.history` Argo CD keeps (`spec.revisionHistoryLimit`'s default).
const HISTORY_LIMIT: usize = 10;

/// `<app>:<group>/<kind>:<namespace>/<name>` — the group empty for the core group, the
/// namespace empty for a cluster-scoped object (Argo CD's `argocd.argoproj.io/tracking-id`).
pub fn tracking_id(app: &str, object: &Value) -> String {
    let api_version = str_at(object, &["apiVersion"]).unwrap_or_default();
    let group = api_version
        .rsplit_once('/')
        .map(|(group, _)| group)
        .unwrap_or_default();
    let kind = str_at(object, &["kind"]).unwrap_or_default();
    format!(
        "{app}:{group}/{kind}:{}/{}",
        namespace(object),
        name(object)
    )
}

/// The application a tracking id names, and the object (group, kind, namespace, name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackingId<'a> {
    pub app: &'a str,
    pub group: &'a str,
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

pub fn parse_tracking_id(id: &str) -> Option<TrackingId<'_>> {
    let (app, rest) = id.split_once(':')?;
    let (group_kind, namespaced_name) = rest.split_once(':')?;
    let (group, kind) = group_kind.split_once('/')?;
    let (namespace, name) = namespaced_name.split_once('/')?;
    (!app.is_empty() && !kind.is_empty() && !name.is_empty()).then_some(TrackingId {
        app,
        group,
        kind,
        namespace,
        name,
    })
}

/// The key (namespace, name) of the Application a tracked object belongs to.
pub fn tracking_app(object: &Value) -> Option<(String, String)> {
    let id = parse_tracking_id(annotation(object, TRACKING_ID)?)?;
    Some(match id.app.split_once('_') {
        Some((ns, app)) => (ns.to_string(), app.to_string()),
        None => (ARGOCD_NAMESPACE.to_string(), id.app.to_string()),
    })
}

/// The name an Application goes by in tracking ids.
fn app_instance(namespace: &str, name: &str) -> String {
    if namespace == ARGOCD_NAMESPACE {
        name.to_string()
    } else {
        format!("{namespace}_{name}")
    }
}

/// What the controller needs of an Application's spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppSpec {
    pub namespace: String,
    pub name: String,
    pub repo_url: String,
    /// The folder in the repository, without `./` or a trailing `/` (empty: the root).
    pub path: String,
    pub target_revision: String,
    pub destination_namespace: String,
    pub automated: bool,
    pub self_heal: bool,
    pub prune: bool,
}

impl AppSpec {
    /// What the controller acts on, `None` when the Application is unreadable or deploys to
    /// another cluster: the demo's Argo CD reaches only the cluster it runs in (an Application of
    /// a hub for another cluster is that cluster's, and left alone here, status and all).
    pub fn of(app: &Value) -> Option<AppSpec> {
        let spec = app.get("spec")?;
        let server = str_at(spec, &["destination", "server"]);
        let cluster = str_at(spec, &["destination", "name"]);
        let here = match (server, cluster) {
            (Some(server), _) => server.trim_end_matches('/') == "https://kubernetes.default.svc",
            (None, Some(name)) => name == "in-cluster",
            (None, None) => true,
        };
        if !here {
            return None;
        }
        let automated = at(spec, &["syncPolicy", "automated"]).filter(|a| a.is_object());
        let flag = |key: &str| {
            automated
                .and_then(|a| a.get(key))
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        let enabled = automated.is_some_and(|a| a.get("enabled") != Some(&json!(false)));
        Some(AppSpec {
            namespace: namespace(app).to_string(),
            name: name(app).to_string(),
            repo_url: str_at(spec, &["source", "repoURL"])?.to_string(),
            path: folder(str_at(spec, &["source", "path"]).unwrap_or_default()),
            target_revision: str_at(spec, &["source", "targetRevision"])
                .filter(|r| !r.is_empty())
                .unwrap_or("HEAD")
                .to_string(),
            destination_namespace: str_at(spec, &["destination", "namespace"])
                .unwrap_or_default()
                .to_string(),
            automated: enabled,
            self_heal: enabled && flag("selfHeal"),
            prune: flag("prune"),
        })
    }

    pub fn instance(&self) -> String {
        app_instance(&self.namespace, &self.name)
    }

    fn source(&self) -> Value {
        json!({"repoURL": self.repo_url, "path": self.path, "targetRevision": self.target_revision})
    }
}

/// A repository folder as a path prefix: `./platform/` → `platform`, `.` → ``.
pub fn folder(path: &str) -> String {
    let trimmed = path.trim_start_matches("./").trim_matches('/');
    if trimmed == "." {
        String::new()
    } else {
        trimmed.to_string()
    }
}

/// Whether `file` is a manifest of `dir`: directly in it (Argo CD's directory source, not
/// recursive by default) or anywhere under it (`recursive`: Flux's generated kustomization).
pub fn is_manifest_of(file: &str, dir: &str, recursive: bool) -> bool {
    let is_yaml = [".yaml", ".yml", ".json"].iter().any(|e| file.ends_with(e));
    let rest = if dir.is_empty() {
        Some(file)
    } else {
        file.strip_prefix(dir).and_then(|r| r.strip_prefix('/'))
    };
    is_yaml && rest.is_some_and(|r| recursive || !r.contains('/'))
}

/// The manifest as Argo CD applies it: its namespace defaulted to the destination's, and the
/// tracking annotation added.
pub fn argocd_config(app: &AppSpec, manifest: &Value) -> Value {
    let mut config = manifest.clone();
    let Some(meta) = config.get_mut("metadata").and_then(Value::as_object_mut) else {
        return config;
    };
    if !meta.contains_key("namespace") && !app.destination_namespace.is_empty() {
        meta.insert(
            "namespace".into(),
            Value::String(app.destination_namespace.clone()),
        );
    }
    let id = tracking_id(&app.instance(), &config);
    insert_in(&mut config, "annotations", TRACKING_ID, &id);
    config
}

/// The manifest as Flux's kustomize-controller applies it: with its two owner labels.
pub fn flux_config(kustomization: &Value, manifest: &Value) -> Value {
    let mut config = manifest.clone();
    insert_in(&mut config, "labels", FLUX_NAME, name(kustomization));
    insert_in(
        &mut config,
        "labels",
        FLUX_NAMESPACE,
        namespace(kustomization),
    );
    config
}

fn insert_in(object: &mut Value, map: &str, key: &str, value: &str) {
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut)
        && let Some(entries) = meta
            .entry(map)
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
    {
        entries.insert(key.to_string(), Value::String(value.to_string()));
    }
}

/// Whether applying would change the live object: `applied` is the dry run of the apply.
/// Bookkeeping the write itself changes (resourceVersion, managedFields, generation) and
/// status are not a difference (Argo CD's server-side diff compares the same way).
pub fn differs(live: &Value, applied: &Value) -> bool {
    comparable(live) != comparable(applied)
}

fn comparable(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(map) = copy.as_object_mut() {
        map.remove("status");
    }
    if let Some(meta) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in ["resourceVersion", "managedFields", "generation"] {
            meta.remove(key);
        }
    }
    copy
}

/// Argo CD's health of one object: a Deployment's rollout, `None` for kinds without health.
pub fn health(object: &Value) -> Option<&'static str> {
    if str_at(object, &["kind"]) != Some("Deployment") {
        return None;
    }
    let conditions = at(object, &["status", "conditions"])
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if conditions
        .iter()
        .any(|c| c["type"] == "Progressing" && c["reason"] == "ProgressDeadlineExceeded")
    {
        return Some("Degraded");
    }
    let wanted = i64_at(object, &["spec", "replicas"]).unwrap_or(1);
    let count = |field: &str| i64_at(object, &["status", field]).unwrap_or(0);
    let observed = i64_at(object, &["status", "observedGeneration"]).unwrap_or(0)
        >= i64_at(object, &["metadata", "generation"]).unwrap_or(0);
    let done = observed
        && count("updatedReplicas") >= wanted
        && count("replicas") <= count("updatedReplicas")
        && count("availableReplicas") >= count("updatedReplicas");
    Some(if done { "Healthy" } else { "Progressing" })
}

/// The worst of the health of an application's objects (Argo CD's order).
pub fn app_health<'a>(objects: impl IntoIterator<Item = Option<&'a str>>) -> &'static str {
    let rank = |h: &str| match h {
        "Degraded" => 3,
        "Missing" => 2,
        "Progressing" => 1,
        _ => 0,
    };
    let mut worst = "Healthy";
    for health in objects.into_iter().flatten() {
        if rank(health) > rank(worst) {
            worst = match health {
                "Degraded" => "Degraded",
                "Missing" => "Missing",
                _ => "Progressing",
            };
        }
    }
    worst
}

/// One object of an application as the comparison found it.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    /// The object as Argo CD would apply it (from git, with the tracking annotation).
    pub config: Value,
    /// Absent live, or live differing from the config.
    pub out_of_sync: bool,
    /// Its health (`Missing` when absent, `None` for kinds without health).
    pub health: Option<&'static str>,
}

/// What the controller does with an application after a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppDecision {
    /// In sync, or drifted with nothing automated to act: no sync.
    Nothing,
    /// Drifted, self-heal on: sync once the delay since the first drift is over.
    HealAfter(Duration),
    /// Sync now: an automated app drifted on a revision it has not synced yet, or self-heal's
    /// delay is over.
    Sync,
}

/// Argo CD's automated sync: an app out of sync syncs at once when the revision is new to it
/// (a commit it has not synced); on the revision it synced last, only self-heal syncs again,
/// `remaining` after the drift was first seen (`None`: no drift seen before).
pub fn decide(
    app: &AppSpec,
    out_of_sync: bool,
    new_revision: bool,
    remaining: Option<Duration>,
) -> AppDecision {
    if !out_of_sync || !app.automated {
        return AppDecision::Nothing;
    }
    if new_revision {
        return AppDecision::Sync;
    }
    match (app.self_heal, remaining) {
        (false, _) => AppDecision::Nothing,
        (true, Some(left)) if left.is_zero() => AppDecision::Sync,
        (true, Some(left)) => AppDecision::HealAfter(left),
        (true, None) => AppDecision::HealAfter(Duration::ZERO),
    }
}

/// `group/version` and kind of an object, as Argo CD lists them in `status.resources`.
fn resource_ref(object: &Value) -> Map<String, Value> {
    let api_version = str_at(object, &["apiVersion"]).unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let mut entry = Map::new();
    if !group.is_empty() {
        entry.insert("group".into(), json!(group));
    }
    entry.insert("version".into(), json!(version));
    entry.insert("kind".into(), json!(str_at(object, &["kind"])));
    if !namespace(object).is_empty() {
        entry.insert("namespace".into(), json!(namespace(object)));
    }
    entry.insert("name".into(), json!(name(object)));
    entry
}

/// A finished sync: what it applied and when.
#[derive(Debug, Clone)]
pub struct SyncRun<'a> {
    pub revision: &'a str,
    pub started: &'a str,
    pub finished: &'a str,
    /// The objects applied, each with the kubectl-like word (`serverside-applied`).
    pub applied: Vec<&'a Value>,
}

/// `status.operationState` after an automated sync, and `status.history` with it added.
pub fn sync_record(app: &AppSpec, previous: &Value, run: &SyncRun<'_>) -> (Value, Value) {
    let resources: Vec<Value> = run
        .applied
        .iter()
        .map(|object| {
            let mut entry = resource_ref(object);
            let plural_group = str_at(object, &["apiVersion"])
                .and_then(|v| v.rsplit_once('/'))
                .map(|(g, _)| format!(".{g}"))
                .unwrap_or_default();
            let kind = str_at(object, &["kind"]).unwrap_or_default().to_lowercase();
            entry.insert("status".into(), json!("Synced"));
            entry.insert(
                "message".into(),
                json!(format!(
                    "{kind}{plural_group}/{} serverside-applied",
                    name(object)
                )),
            );
            entry.insert("hookPhase".into(), json!("Running"));
            entry.insert("syncPhase".into(), json!("Sync"));
            Value::Object(entry)
        })
        .collect();
    let operation = json!({
        "operation": {
            "initiatedBy": {"automated": true},
            "retry": {"limit": 5},
            "sync": {"revision": run.revision, "prune": app.prune, "syncOptions": ["ServerSideApply=true"]},
        },
        "phase": "Succeeded",
        "message": "successfully synced (all tasks run)",
        "startedAt": run.started,
        "finishedAt": run.finished,
        "syncResult": {"revision": run.revision, "source": app.source(), "resources": resources},
    });
    let mut history: Vec<Value> = at(previous, &["history"])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let id = history
        .iter()
        .filter_map(|h| h["id"].as_i64())
        .max()
        .map_or(0, |m| m + 1);
    history.push(json!({
        "id": id,
        "revision": run.revision,
        "deployStartedAt": run.started,
        "deployedAt": run.finished,
        "initiatedBy": {"automated": true},
        "source": app.source(),
    }));
    let excess = history.len().saturating_sub(HISTORY_LIMIT);
    history.drain(..excess);
    (operation, Value::Array(history))
}

/// An Application's `status` after a comparison at `revision`; `previous` is the status it
/// has (its operation and history are kept).
pub fn application_status(
    app: &AppSpec,
    previous: &Value,
    revision: &str,
    compared: &[Compared],
    now: &str,
) -> Value {
    let out_of_sync = compared.iter().any(|c| c.out_of_sync);
    let resources: Vec<Value> = compared
        .iter()
        .map(|c| {
            let mut entry = resource_ref(&c.config);
            entry.insert(
                "status".into(),
                json!(if c.out_of_sync { "OutOfSync" } else { "Synced" }),
            );
            if let Some(health) = c.health {
                entry.insert("health".into(), json!({"status": health}));
            }
            Value::Object(entry)
        })
        .collect();
    let images: std::collections::BTreeSet<&str> = compared
        .iter()
        .flat_map(|c| {
            at(&c.config, &["spec", "template", "spec", "containers"])
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|container| container["image"].as_str())
        })
        .collect();
    let mut status = json!({
        "sync": {
            "status": if out_of_sync { "OutOfSync" } else { "Synced" },
            "revision": revision,
            "comparedTo": {
                "source": app.source(),
                "destination": {"server": "https://kubernetes.default.svc", "namespace": app.destination_namespace},
            },
        },
        "health": {"status": app_health(compared.iter().map(|c| c.health))},
        "resources": resources,
        "summary": {"images": images},
        "sourceType": "Directory",
        "reconciledAt": now,
        "controllerNamespace": ARGOCD_NAMESPACE,
    });
    for kept in ["operationState", "history"] {
        if let Some(value) = previous.get(kept) {
            status[kept] = value.clone();
        }
    }
    status
}

/// An Application's status when its repository cannot be read.
pub fn unreadable_status(previous: &Value, repo_url: &str, now: &str) -> Value {
    let since = at(previous, &["conditions"])
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|c| c["type"] == "ComparisonError"))
        .and_then(|c| c.get("lastTransitionTime"))
        .cloned()
        .unwrap_or_else(|| json!(now));
    json!({
        "sync": {"status": "Unknown"},
        "health": {"status": previous.pointer("/health/status").cloned().unwrap_or(json!("Healthy"))},
        "conditions": [{
            "type": "ComparisonError",
            "message": format!("Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = repository not found: {repo_url}"),
            "lastTransitionTime": since,
        }],
        "reconciledAt": now,
        "controllerNamespace": ARGOCD_NAMESPACE,
    })
}

/// Flux's revision of a commit on a branch: `main@sha1:<sha>`.
pub fn flux_revision(branch: &str, sha: &str) -> String {
    format!("{branch}@sha1:{sha}")
}

/// A Kustomization's status after applying `revision`: Ready, the revision applied and the
/// inventory of what it applied (`<namespace>_<name>_<group>_<kind>` ids).
pub fn kustomization_status(
    kustomization: &Value,
    revision: &str,
    applied: &[Value],
    now: &str,
) -> Value {
    let generation = i64_at(kustomization, &["metadata", "generation"]).unwrap_or(1);
    let message = format!("Applied revision: {revision}");
    let since = ready_since(kustomization, "True", &message, now);
    let mut entries: Vec<Value> = applied
        .iter()
        .map(|object| {
            let api_version = str_at(object, &["apiVersion"]).unwrap_or_default();
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            json!({
                "id": format!("{}_{}_{group}_{}", namespace(object), name(object), str_at(object, &["kind"]).unwrap_or_default()),
                "v": version,
            })
        })
        .collect();
    entries.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    json!({
        "conditions": [{
            "type": "Ready",
            "status": "True",
            "reason": "ReconciliationSucceeded",
            "message": message,
            "lastTransitionTime": since,
            "observedGeneration": generation,
        }],
        "inventory": {"entries": entries},
        "lastAppliedRevision": revision,
        "lastAttemptedRevision": revision,
        "observedGeneration": generation,
    })
}

/// The manager of a GitRepository's status: Flux's source-controller.
pub const SOURCE_MANAGER: &str = "source-controller";

/// A GitRepository's status: Ready with the `revision` its branch is at, or not ready when its
/// URL cannot be fetched (`None`).
pub fn source_status(source: &Value, revision: Option<&str>, now: &str) -> Value {
    let generation = i64_at(source, &["metadata", "generation"]).unwrap_or(1);
    let url = str_at(source, &["spec", "url"]).unwrap_or_default();
    match revision {
        Some(revision) => {
            let message = format!("stored artifact for revision '{revision}'");
            json!({
                "artifact": {"revision": revision},
                "conditions": [{
                    "type": "Ready",
                    "status": "True",
                    "reason": "Succeeded",
                    "message": message,
                    "lastTransitionTime": ready_since(source, "True", &message, now),
                    "observedGeneration": generation,
                }],
                "observedGeneration": generation,
            })
        }
        None => {
            let message =
                format!("failed to checkout and determine revision: unable to clone '{url}'");
            json!({
                "conditions": [{
                    "type": "Ready",
                    "status": "False",
                    "reason": "GitOperationFailed",
                    "message": message,
                    "lastTransitionTime": ready_since(source, "False", &message, now),
                    "observedGeneration": generation,
                }],
                "observedGeneration": generation,
            })
        }
    }
}

/// A Kustomization's status when its source cannot be found.
pub fn kustomization_not_ready(kustomization: &Value, source: &str, now: &str) -> Value {
    let generation = i64_at(kustomization, &["metadata", "generation"]).unwrap_or(1);
    let message = format!("GitRepository.source.toolkit.fluxcd.io \"{source}\" not found");
    json!({
        "conditions": [{
            "type": "Ready",
            "status": "False",
            "reason": "ArtifactFailed",
            "message": message,
            "lastTransitionTime": ready_since(kustomization, "False", &message, now),
            "observedGeneration": generation,
        }],
        "observedGeneration": -1,
    })
}

/// When the Ready condition took its status: kept while it stays the same.
fn ready_since(kustomization: &Value, status: &str, message: &str, now: &str) -> Value {
    at(kustomization, &["status", "conditions"])
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
        .filter(|c| c["status"] == status && c["message"] == message)
        .and_then(|c| c.get("lastTransitionTime"))
        .cloned()
        .unwrap_or_else(|| json!(now))
}

/// Flux's durations (`10m`, `1h30m`, `45s`), as the Kustomization's `interval` says them.
pub fn go_duration(text: &str) -> Option<Duration> {
    let mut total = 0u64;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let n: u64 = number.parse().ok()?;
        number.clear();
        total += n * match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => return None,
        };
    }
    (number.is_empty() && total > 0).then(|| Duration::from_secs(total))
}

#[cfg(test)]
#[path = "gitops_tests.rs"]
mod tests;
