//! The driver's GitOps work: the simulated Argo CD compares each Application's folder, as
//! committed in its repository, with the live objects (a dry run of the apply it would make),
//! writes the Application's status and, with self-heal, applies git again a set time after an
//! out-of-band change; the simulated Flux writes each Kustomization's status. Repositories are
//! read with the `git` command at a commit, never from a working tree, so uncommitted edits do
//! not count.
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::Driver;
use crate::controller::gitops::{
    self, APPLICATION, ARGOCD_MANAGER, ARGOCD_STATUS_MANAGER, AppDecision, AppSpec, Compared,
    FLUX_MANAGER, GIT_REPOSITORY, KUSTOMIZATION, SyncRun,
};
use crate::controller::index::Timer;
use crate::object::{Key, annotation, name, namespace, str_at};
use crate::resources::ResourceType;
use crate::store::{EventType, Patch, WriteOptions};

/// Commits' folders read, kept while they are asked for again (a handful of entries).
const CACHED_FOLDERS: usize = 16;

/// The GitOps controllers' part of the driver's state.
#[derive(Default)]
pub(super) struct GitopsWork {
    pub dirty_apps: BTreeSet<Key>,
    pub dirty_kustomizations: BTreeSet<Key>,
    /// GitRepositories whose status the source controller looks at.
    pub dirty_sources: BTreeSet<Key>,
    /// Application → when it was first seen drifted (self-heal counts from there).
    first_drift: HashMap<Key, Instant>,
    /// Application or Kustomization → when it is next looked at.
    planned: HashMap<(bool, Key), Instant>,
    /// (repository, commit, folder, recursive) → its manifests.
    folders: HashMap<(PathBuf, String, String, bool), Arc<Vec<Value>>>,
}

impl GitopsWork {
    pub fn is_idle(&self) -> bool {
        self.dirty_apps.is_empty()
            && self.dirty_kustomizations.is_empty()
            && self.dirty_sources.is_empty()
    }
}

fn is_kind(resource: ResourceType, (api_version, kind): (&str, &str)) -> bool {
    resource.kind() == kind && resource.api_version() == api_version
}

impl Driver {
    /// Follow the changes the GitOps controllers care about: their own objects, and every
    /// object Argo CD tracks (any write to it may be drift). True when the object is theirs
    /// alone.
    pub(super) fn observe_gitops(
        &mut self,
        resource: ResourceType,
        kind: EventType,
        object: &Value,
    ) -> bool {
        if is_kind(resource, APPLICATION) {
            if kind != EventType::Deleted {
                self.gitops_work.dirty_apps.insert(Key::of(object));
            } else {
                self.gitops_work.first_drift.remove(&Key::of(object));
                self.gitops.plan_heal(namespace(object), name(object), None);
            }
            return true;
        }
        if is_kind(resource, KUSTOMIZATION) {
            if kind != EventType::Deleted {
                self.gitops_work
                    .dirty_kustomizations
                    .insert(Key::of(object));
            }
            return true;
        }
        if is_kind(resource, GIT_REPOSITORY) {
            if kind != EventType::Deleted {
                self.gitops_work.dirty_sources.insert(Key::of(object));
            }
            // The Kustomizations that name it look again (kustomize-controller watches its
            // sources): one made before its source becomes ready.
            self.kustomizations_of(object);
            return true;
        }
        if annotation(object, gitops::TRACKING_ID).is_some()
            && let Some((ns, app)) = gitops::tracking_app(object)
        {
            self.gitops_work.dirty_apps.insert(Key::new(&ns, &app));
        }
        false
    }

    /// Every Kustomization whose `sourceRef` names the GitRepository `source` looks again.
    fn kustomizations_of(&mut self, source: &Value) {
        let Some(resource) = self
            .store
            .resource_type_of(KUSTOMIZATION.0, KUSTOMIZATION.1)
        else {
            return;
        };
        for ks in self.store.list(resource, None) {
            let source_namespace =
                str_at(&ks, &["spec", "sourceRef", "namespace"]).unwrap_or(namespace(&ks));
            if str_at(&ks, &["spec", "sourceRef", "name"]) == Some(name(source))
                && source_namespace == namespace(source)
            {
                self.gitops_work.dirty_kustomizations.insert(Key::of(&ks));
            }
        }
    }

    /// Flux's source-controller, as far as the demo goes: a GitRepository's status says the
    /// revision its branch is at in the local repository its `url` stands for, or that it
    /// cannot be fetched. (It stores no artifact; Kustomizations read the repository.)
    pub(super) fn reconcile_source(&mut self, key: &Key) {
        let Some((resource, source)) = self.unsuspended(GIT_REPOSITORY, key) else {
            return;
        };
        let url = str_at(&source, &["spec", "url"]).unwrap_or_default();
        let revision = self.gitops.repo(url).cloned().and_then(|repo| {
            let sha = resolve(&repo, "HEAD")?;
            Some(gitops::flux_revision(&branch(&repo), &sha))
        });
        let now = self.store.now_rfc3339();
        let status = gitops::source_status(&source, revision.as_deref(), &now);
        if source.get("status") != Some(&status) {
            let opts = WriteOptions::status(gitops::SOURCE_MANAGER);
            self.modify(resource, key, &opts, |s| s["status"] = status.clone());
        }
    }

    /// Every Application and Kustomization looks again (at start and after a resync).
    pub(super) fn resync_gitops(&mut self) {
        if let Some(resource) = self
            .store
            .resource_type_of(GIT_REPOSITORY.0, GIT_REPOSITORY.1)
        {
            for object in self.store.list(resource, None) {
                self.gitops_work.dirty_sources.insert(Key::of(&object));
            }
        }
        for (kind, dirty) in [(APPLICATION, true), (KUSTOMIZATION, false)] {
            let Some(resource) = self.store.resource_type_of(kind.0, kind.1) else {
                continue;
            };
            for object in self.store.list(resource, None) {
                let key = Key::of(&object);
                if dirty {
                    self.gitops_work.dirty_apps.insert(key);
                } else {
                    self.gitops_work.dirty_kustomizations.insert(key);
                }
            }
        }
    }

    /// Look at an Application or Kustomization again after `after`, unless a look no later is
    /// already planned.
    fn plan_gitops_look(&mut self, application: bool, key: &Key, after: Duration) {
        let now = Instant::now();
        let at = now + after;
        let planned = self
            .gitops_work
            .planned
            .get(&(application, key.clone()))
            .copied();
        if planned.is_some_and(|p| p > now && p <= at) {
            return;
        }
        self.gitops_work
            .planned
            .insert((application, key.clone()), at);
        let timer = if application {
            Timer::Application(key.clone())
        } else {
            Timer::Kustomization(key.clone())
        };
        self.schedule(after, timer);
    }

    pub(super) fn gitops_timer_fired(&mut self, application: bool, key: Key) {
        self.gitops_work.planned.remove(&(application, key.clone()));
        if application {
            self.gitops_work.dirty_apps.insert(key);
        } else {
            self.gitops_work.dirty_kustomizations.insert(key);
        }
    }

    /// Argo CD's reconciliation of one Application: compare, decide, sync, write the status.
    pub(super) fn reconcile_application(&mut self, key: &Key) {
        let Some(resource) = self.store.resource_type_of(APPLICATION.0, APPLICATION.1) else {
            return;
        };
        let Some(app) = self.store.get(resource, &key.namespace, &key.name) else {
            return;
        };
        let Some(spec) = AppSpec::of(&app) else {
            return;
        };
        let mut previous = app.get("status").cloned().unwrap_or_else(|| json!({}));
        let now = self.store.now_rfc3339();
        let source = self.gitops.repo(&spec.repo_url).cloned().and_then(|repo| {
            let sha = resolve(&repo, &spec.target_revision)?;
            let manifests = self.folder(&repo, &sha, &spec.path, false)?;
            Some((sha, manifests))
        });
        let Some((sha, manifests)) = source else {
            let status = gitops::unreadable_status(&previous, &spec.repo_url, &now);
            self.write_app_status(resource, key, &previous, status);
            return;
        };
        let configs: Vec<Value> = manifests
            .iter()
            .map(|m| gitops::argocd_config(&spec, m))
            .collect();
        let mut compared: Vec<Compared> = configs.into_iter().map(|c| self.compare(c)).collect();
        let out_of_sync = compared.iter().any(|c| c.out_of_sync);
        let last_synced = previous
            .pointer("/operationState/syncResult/revision")
            .and_then(Value::as_str)
            .map(str::to_string);
        let delay = self.timings.self_heal;
        let remaining = if out_of_sync {
            let since = *self
                .gitops_work
                .first_drift
                .entry(key.clone())
                .or_insert_with(Instant::now);
            Some((since + delay).saturating_duration_since(Instant::now()))
        } else {
            self.gitops_work.first_drift.remove(key);
            None
        };
        let new_revision = last_synced.as_deref().is_some_and(|r| r != sha);
        match gitops::decide(&spec, out_of_sync, new_revision, remaining) {
            AppDecision::Nothing => self.gitops.plan_heal(&key.namespace, &key.name, None),
            AppDecision::HealAfter(left) => {
                let due = jiff::Timestamp::now()
                    .checked_add(jiff::SignedDuration::try_from(left).unwrap_or_default())
                    .ok();
                self.gitops.plan_heal(&key.namespace, &key.name, due);
                self.plan_gitops_look(true, key, left);
            }
            AppDecision::Sync => {
                let applied: Vec<Value> = compared
                    .iter()
                    .filter(|c| c.out_of_sync)
                    .map(|c| c.config.clone())
                    .filter(|config| self.apply(config, ARGOCD_MANAGER))
                    .collect();
                let finished = self.store.now_rfc3339();
                let run = SyncRun {
                    revision: &sha,
                    started: &now,
                    finished: &finished,
                    applied: applied.iter().collect(),
                };
                record_sync(&spec, &mut previous, &run);
                self.gitops_work.first_drift.remove(key);
                self.gitops.plan_heal(&key.namespace, &key.name, None);
                let configs: Vec<Value> = compared.into_iter().map(|c| c.config).collect();
                compared = configs.into_iter().map(|c| self.compare(c)).collect();
            }
        }
        let in_sync = !compared.iter().any(|c| c.out_of_sync);
        if in_sync && (last_synced.is_none() || new_revision) {
            // In sync with a commit not on record: the seed's first sync of these objects, or a
            // commit that made git say what is live (a hotfix accepted). On record as synced,
            // so that the next drift waits for self-heal rather than syncing at once.
            let created = match last_synced {
                None => str_at(&app, &["metadata", "creationTimestamp"]).unwrap_or(&now),
                Some(_) => &now,
            };
            let run = SyncRun {
                revision: &sha,
                started: created,
                finished: created,
                applied: compared.iter().map(|c| &c.config).collect(),
            };
            record_sync(&spec, &mut previous, &run);
        }
        let status = gitops::application_status(&spec, &previous, &sha, &compared, &now);
        self.write_app_status(resource, key, &previous, status);
        if annotation(&app, gitops::REFRESH).is_some() {
            // Refreshed: the request is done, and Argo CD's controller removes it.
            let opts = WriteOptions::manager(ARGOCD_STATUS_MANAGER);
            self.modify(resource, key, &opts, |app| {
                if let Some(annotations) = app
                    .pointer_mut("/metadata/annotations")
                    .and_then(Value::as_object_mut)
                {
                    annotations.remove(gitops::REFRESH);
                }
            });
        }
        let resync = self.timings.app_resync;
        self.plan_gitops_look(true, key, resync);
    }

    /// One object of an application against the cluster: the dry run of Argo CD's apply
    /// changes nothing when it is in sync.
    fn compare(&self, config: Value) -> Compared {
        let found = self.resource_of(&config).and_then(|resource| {
            let live = self
                .store
                .get(resource, namespace(&config), name(&config))?;
            Some((resource, live))
        });
        let Some((resource, live)) = found else {
            return Compared {
                config,
                out_of_sync: true,
                health: Some("Missing"),
            };
        };
        let dry_run = WriteOptions {
            manager: ARGOCD_MANAGER.to_string(),
            subresource: None,
            dry_run: true,
        };
        let applied = self.store.patch(
            resource,
            namespace(&config),
            name(&config),
            &Patch::Apply {
                config: config.clone(),
                force: true,
            },
            &dry_run,
        );
        let out_of_sync = applied.is_ok_and(|applied| gitops::differs(&live, &applied));
        let health = gitops::health(&live);
        Compared {
            config,
            out_of_sync,
            health,
        }
    }

    /// The Flux object `key` of `kind` (`(apiVersion, kind)`) and its type, unless the cluster
    /// does not serve the kind, there is no such object, or it is suspended.
    fn unsuspended(&self, kind: (&str, &str), key: &Key) -> Option<(ResourceType, Value)> {
        let resource = self.store.resource_type_of(kind.0, kind.1)?;
        let object = self.store.get(resource, &key.namespace, &key.name)?;
        (object.pointer("/spec/suspend") != Some(&json!(true))).then_some((resource, object))
    }

    fn resource_of(&self, object: &Value) -> Option<ResourceType> {
        let api_version = str_at(object, &["apiVersion"])?;
        let kind = str_at(object, &["kind"])?;
        self.store.resource_type_of(api_version, kind)
    }

    /// Server-side apply with force, as `manager`; whether it was written.
    fn apply(&self, config: &Value, manager: &str) -> bool {
        let Some(resource) = self.resource_of(config) else {
            return false;
        };
        let patch = Patch::Apply {
            config: config.clone(),
            force: true,
        };
        match self.store.patch(
            resource,
            namespace(config),
            name(config),
            &patch,
            &WriteOptions::manager(manager),
        ) {
            Ok(_) => true,
            Err(error) => {
                tracing::warn!(%error, object = %Key::of(config), "GitOps apply failed");
                false
            }
        }
    }

    /// The Application's status, through the object (it has no status subresource), unless
    /// only the time of the comparison changed.
    fn write_app_status(
        &mut self,
        resource: ResourceType,
        key: &Key,
        previous: &Value,
        status: Value,
    ) {
        let unchanged = |a: &Value, b: &Value| {
            let strip = |v: &Value| {
                let mut v = v.clone();
                if let Some(map) = v.as_object_mut() {
                    map.remove("reconciledAt");
                }
                v
            };
            strip(a) == strip(b)
        };
        if unchanged(previous, &status) {
            return;
        }
        let opts = WriteOptions::manager(ARGOCD_STATUS_MANAGER);
        self.modify(resource, key, &opts, |app| app["status"] = status.clone());
    }

    /// Flux's reconciliation of one Kustomization: its status at the commit its source is at.
    /// The demo's Flux applies nothing after the seed (see docs/demo.md).
    pub(super) fn reconcile_kustomization(&mut self, key: &Key) {
        let Some((resource, ks)) = self.unsuspended(KUSTOMIZATION, key) else {
            return;
        };
        let now = self.store.now_rfc3339();
        let source = str_at(&ks, &["spec", "sourceRef", "name"]).unwrap_or_default();
        let source_namespace =
            str_at(&ks, &["spec", "sourceRef", "namespace"]).unwrap_or(&key.namespace);
        let dir = gitops::folder(str_at(&ks, &["spec", "path"]).unwrap_or_default());
        // The GitRepository it names, and the local repository its URL stands for.
        let repository = self
            .store
            .resource_type_of(GIT_REPOSITORY.0, GIT_REPOSITORY.1)
            .and_then(|resource| self.store.get(resource, source_namespace, source));
        let url = repository
            .as_ref()
            .and_then(|r| str_at(r, &["spec", "url"]))
            .unwrap_or_default();
        let read = self.gitops.repo(url).cloned().and_then(|repo| {
            let sha = resolve(&repo, "HEAD")?;
            let manifests = self.folder(&repo, &sha, &dir, true)?;
            Some((gitops::flux_revision(&branch(&repo), &sha), manifests))
        });
        let status = match read {
            Some((revision, manifests)) => {
                let applied: Vec<Value> = manifests
                    .iter()
                    .map(|m| gitops::flux_config(&ks, m))
                    .collect();
                gitops::kustomization_status(&ks, &revision, &applied, &now)
            }
            None => gitops::kustomization_not_ready(&ks, source, &now),
        };
        if ks.get("status") != Some(&status) {
            let opts = WriteOptions::status(FLUX_MANAGER);
            self.modify(resource, key, &opts, |k| k["status"] = status.clone());
        }
        let interval = str_at(&ks, &["spec", "interval"])
            .and_then(gitops::go_duration)
            .unwrap_or(Duration::from_secs(600));
        self.plan_gitops_look(false, key, interval);
    }

    /// The manifests of `dir` at commit `sha` (directly in it, or under it when `recursive`).
    fn folder(
        &mut self,
        repo: &Path,
        sha: &str,
        dir: &str,
        recursive: bool,
    ) -> Option<Arc<Vec<Value>>> {
        let cache_key = (
            repo.to_path_buf(),
            sha.to_string(),
            dir.to_string(),
            recursive,
        );
        if let Some(found) = self.gitops_work.folders.get(&cache_key) {
            return Some(found.clone());
        }
        let listing = git(repo, &["ls-tree", "-r", "--name-only", sha])?;
        let mut manifests = Vec::new();
        for file in listing
            .lines()
            .filter(|f| gitops::is_manifest_of(f, dir, recursive))
        {
            let text = git(repo, &["show", &format!("{sha}:{file}")])?;
            for document in serde_yaml::Deserializer::from_str(&text) {
                match serde::Deserialize::deserialize(document) {
                    Ok(Value::Null) => {}
                    Ok(value @ Value::Object(_)) => manifests.push(value),
                    Ok(_) => {}
                    Err(error) => {
                        tracing::warn!(%error, file, "GitOps: a manifest does not parse");
                        return None;
                    }
                }
            }
        }
        if self.gitops_work.folders.len() >= CACHED_FOLDERS {
            self.gitops_work.folders.clear();
        }
        let manifests = Arc::new(manifests);
        self.gitops_work
            .folders
            .insert(cache_key, manifests.clone());
        Some(manifests)
    }
}

fn record_sync(spec: &AppSpec, status: &mut Value, run: &SyncRun<'_>) {
    let (operation, history) = gitops::sync_record(spec, status, run);
    status["operationState"] = operation;
    status["history"] = history;
}

/// `git -C repo args…`: its output when it succeeds.
fn git(repo: &Path, args: &[&str]) -> Option<String> {
    crate::git::run(repo, args, &[]).ok()
}

/// The commit a revision (`HEAD`, a branch, a tag, a sha) names.
fn resolve(repo: &Path, revision: &str) -> Option<String> {
    let commit = format!("{revision}^{{commit}}");
    let sha = git(repo, &["rev-parse", "--verify", "--quiet", &commit])?;
    Some(sha.trim().to_string())
}

/// The branch HEAD is on (`main` when detached).
fn branch(repo: &Path) -> String {
    git(repo, &["symbolic-ref", "--short", "-q", "HEAD"])
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| "main".to_string())
}
