//! The revert mechanism against the API server: a server-side dry run for the preview, then
//! server-side apply of the manifest under kdrift's field manager (forcing ownership of the fields
//! out-of-band managers took) and a guarded JSON patch removing the fields added live. No
//! printing: the headless command and the TUI both show a [`Preview`] and call [`Reverter::execute`].
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::Value;

use crate::manifest::{Config, ManifestObject};
use crate::revert::plan::{self, Kept, Removal};
use crate::revert::rekey;

mod errors;
mod trace;

use errors::classify;

pub use trace::{Trace, record_event, traces, who};

/// The field manager kdrift applies and patches as.
pub const FIELD_MANAGER: &str = "kdrift";

/// The field manager a revert of `manifest` writes as: kdrift's own, or `helm` for an object of
/// a Helm release, so that helm's next upgrade finds the fields as its own (helm 4 applies
/// server-side without forcing: fields kdrift owned would conflict).
pub fn field_manager_for(manifest: &ManifestObject) -> &'static str {
    match manifest.helm {
        Some(_) => crate::helm::FIELD_MANAGER,
        None => FIELD_MANAGER,
    }
}

/// Apply attempts while only the object's status moves under it (each after a fresh read).
pub const APPLY_ATTEMPTS: u8 = 4;

/// What a revert will do, from a server-side dry run of both steps.
#[derive(Debug, Clone)]
pub struct Preview {
    /// `deployment/shop/web`.
    pub object: String,
    /// The resourceVersion the preview was made from (the revert compares content, not this:
    /// status writes move it all through a rollout).
    pub resource_version: String,
    /// The live object now.
    pub before: Value,
    /// The live object as the server says it will be after both steps.
    pub after: Value,
    /// The fields added live that the second step removes.
    pub removals: Vec<Removal>,
    /// An autoscaler owns `spec.replicas`, or one scales the object: the apply leaves them to
    /// it, and they are not removed.
    pub autoscaled: bool,
    /// Manifest list items whose key was changed live, put back in place before the apply, and
    /// the object as the server's dry run of that step returned it.
    pub rekey: Option<(Vec<rekey::Rekey>, Value)>,
    /// Why `spec.replicas` is left as it is live, when a HorizontalPodAutoscaler scales the
    /// object but a hand scale owns them (said in the preview).
    pub replicas_note: Option<String>,
    /// Drifted fields the revert leaves as they are live (not asked for with `--field`, or
    /// already in git), each with why.
    pub kept: Vec<Kept>,
    /// The drifted fields it puts back, as `kdrift check` prints them (for its trace).
    pub reverted: Vec<String>,
}

impl Preview {
    /// The coloured (or plain) diff of live now → live after; empty when nothing changes.
    /// The diff of a rollback (`+++ NAME (after rollback)`).
    pub fn diff_of_rollback(&self) -> String {
        plan::preview_diff(&self.before, &self.after, &self.object, "rollback", false)
    }

    pub fn diff(&self, colour: bool) -> String {
        plan::preview_diff(&self.before, &self.after, &self.object, "revert", colour)
    }

    /// The diff as lines for a screen (the TUI colours them by kind).
    pub fn lines(&self) -> Vec<plan::PreviewLine> {
        plan::preview_lines(&self.before, &self.after, &self.object, "revert")
    }

    /// True when the live object already equals what the revert would make it.
    pub fn changes_nothing(&self) -> bool {
        self.removals.is_empty()
            && plan::relevant_yaml(&self.before) == plan::relevant_yaml(&self.after)
    }
}

/// What a revert did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The live object afterwards.
    pub after: Value,
    /// The fields added live that were removed.
    pub removed: Vec<Removal>,
    /// Fields planned for removal that someone else changed meanwhile: left as they are.
    pub kept: Vec<Removal>,
    /// True when the removal met a conflict and was re-read and retried.
    pub retried: bool,
}

/// The points between the steps of [`Reverter::execute`], for a caller (a test) that needs to act
/// there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Before each apply attempt (1, then 2 after a conflict), after the object was re-read.
    BeforeApply(u8),
    /// Before each removal attempt (1, then 2 after a conflict).
    BeforeRemoval(u8),
}

/// Why a revert did not happen, or happened only in part. Each message fits on one line.
#[derive(Debug, thiserror::Error)]
pub enum RevertError {
    #[error(
        "RBAC refused: you may not {verb} {resource} in namespace \"{namespace}\" (API server: {message})"
    )]
    Forbidden {
        verb: &'static str,
        resource: String,
        namespace: String,
        message: String,
    },
    #[error(
        "{object} changed since the preview (its spec, labels or annotations): nothing was reverted; preview it again before confirming"
    )]
    ChangedSincePreview { object: String },
    #[error("someone else is changing {object}: {what}; run the revert again")]
    Conflict { object: String, what: String },
    #[error("the API server refused the manifest of {object} ({file}:{line}): {message}")]
    Invalid {
        object: String,
        file: String,
        line: usize,
        message: String,
    },
    /// `how` says what creates it: `kubectl apply`, or for a release's object `helm upgrade`.
    #[error("{object} does not exist in the cluster: there is nothing to revert ({how})")]
    NotFound { object: String, how: String },
    #[error("the API server is unreachable: {reason}")]
    Unreachable { reason: String },
    /// The fields asked for (`--field`) cannot be reverted as asked: which, and why.
    #[error("{0}")]
    Scope(String),
    #[error(
        "the manifest of {object} was applied, but removing the fields added live ({fields}) failed: {reason}"
    )]
    RemovalFailed {
        object: String,
        fields: String,
        reason: String,
    },
    #[error("cannot {verb} {object}: {reason}")]
    Api {
        verb: &'static str,
        object: String,
        reason: String,
    },
}

impl RevertError {
    /// `manifest`'s object is not live: what creates it — `kubectl apply` of the file, or for an
    /// object of a Helm release, helm itself (kdrift does not create a release's objects behind
    /// helm's back).
    pub fn missing(manifest: &ManifestObject) -> RevertError {
        let how = match &manifest.helm {
            Some(release) => format!(
                "it is an object of Helm release {}/{}: `helm upgrade {} … -n {}` recreates it, or `helm rollback {} {} -n {}` applies revision {} again",
                release.namespace,
                release.name,
                release.name,
                release.namespace,
                release.name,
                release.revision,
                release.namespace,
                release.revision
            ),
            None => "kubectl apply creates it".to_owned(),
        };
        RevertError::NotFound {
            object: manifest.key.to_string(),
            how,
        }
    }
}

/// One object to revert: its manifest and the API for its kind. Cheap to clone, `Send`, so the
/// TUI can run the preview and the revert on tasks.
#[derive(Clone)]
pub struct Reverter {
    client: Client,
    api: Api<DynamicObject>,
    resource: ApiResource,
    manifest: ManifestObject,
    config: Config,
    schemas: crate::schema::Schemas,
    object: String,
    scope: Scope,
}

/// Which drifted fields a revert puts back ([`crate::revert::scope`]): those `fields` names, or
/// with none every one but a release object's fields that `git` (git's render of its chart, as
/// applied) already holds.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub fields: Vec<String>,
    pub git: Option<Value>,
    /// A release object as the revision helm is applying now sets it (mid-upgrade): its
    /// fields are helm's, left live unless named.
    pub pending: Option<Value>,
}

impl Scope {
    /// The scope of a revert of `manifest` (of `index`) asked for `fields`: a release object's
    /// with git's render of its chart, when the checkout has one.
    pub fn of(
        index: &crate::manifest::ManifestIndex,
        manifest: &ManifestObject,
        fields: Vec<String>,
    ) -> Scope {
        Scope {
            fields,
            git: manifest
                .helm
                .as_ref()
                .and_then(|_| index.git_render_as_applied(&manifest.key)),
            pending: manifest
                .helm
                .as_ref()
                .and_then(|_| index.helm_pending(&manifest.key))
                .map(|pending| pending.body.to_value()),
        }
    }
}

impl Reverter {
    /// Finds the kind's resource through discovery (one request).
    pub async fn new(
        client: &Client,
        manifest: &ManifestObject,
        config: &Config,
        schemas: &crate::schema::Schemas,
    ) -> Result<Reverter, RevertError> {
        let (group, version) = match manifest.api_version.rsplit_once('/') {
            Some((group, version)) => (group, version),
            None => ("", manifest.api_version.as_str()),
        };
        let gvk = GroupVersionKind::gvk(group, version, &manifest.key.kind);
        let object = manifest.key.to_string();
        let (resource, _) = kube::discovery::pinned_kind(client, &gvk)
            .await
            .map_err(|err| classify(err, "discover", &object, &manifest.key.namespace, None))?;
        let api = if manifest.key.namespace.is_empty() {
            Api::all_with(client.clone(), &resource)
        } else {
            Api::namespaced_with(client.clone(), &manifest.key.namespace, &resource)
        };
        Ok(Reverter {
            client: client.clone(),
            api,
            resource,
            manifest: manifest.clone(),
            config: config.clone(),
            schemas: schemas.clone(),
            object,
            scope: Scope::default(),
        })
    }

    /// The same revert of the fields `scope` chooses (the others stay as they are live).
    pub fn scoped(mut self, scope: Scope) -> Reverter {
        self.scope = scope;
        self
    }

    /// The drift of `live` (the object as the preview reads it), against git's render too for a
    /// release's object: `None` when it cannot be compared (only a scope needs it then).
    fn drift_of(&self, live: &Value) -> Result<Option<crate::drift::ObjectDrift>, RevertError> {
        let scoped = !self.scope.fields.is_empty()
            || self.scope.git.is_some()
            || self.scope.pending.is_some();
        let live = match crate::drift::LiveObject::from_value(live.clone(), &self.schemas) {
            Ok(live) => live,
            Err(e) if scoped => {
                return Err(RevertError::Scope(format!(
                    "{} cannot be compared: {e}",
                    self.object
                )));
            }
            Err(_) => return Ok(None),
        };
        let mut drift = crate::drift::compare(&self.manifest, &live, &self.config);
        if let Some(git) = &self.scope.git {
            crate::drift::check::in_git(&mut drift, git, &live, &self.config);
        }
        if let Some(pending) = &self.scope.pending {
            crate::drift::check::helm_at_work(&mut drift, pending, &live, &self.config);
        }
        Ok(Some(drift))
    }

    /// `deployment/shop/web`.
    pub fn object(&self) -> &str {
        &self.object
    }

    /// The server-side dry run of both steps (`dryRun=All`): live now and live after.
    pub async fn preview(&self) -> Result<Preview, RevertError> {
        let before = self.get().await?;
        // One comparison of the object as it is: which fields stay live, whether an autoscaler
        // owns the replicas, and which fields the revert puts back (for its trace).
        let drift = self.drift_of(&before)?;
        let kept = match &drift {
            Some(drift) => crate::revert::scope::kept(drift, &self.scope.fields)
                .map_err(|e| RevertError::Scope(e.to_string()))?,
            None => Vec::new(),
        };
        let items = drift.as_ref().map_or(&[][..], |d| d.items.as_slice());
        let reverted = items
            .iter()
            .filter(|i| i.class.is_drift() && !kept.iter().any(|k| k.covers(&i.path)))
            .map(|i| i.path.to_string())
            .collect();
        let rv = resource_version(&before);
        let scaler = match before.pointer("/spec/replicas") {
            Some(replicas) => self.autoscaler().await.map(|hpa| (hpa, replicas.clone())),
            None => None,
        };
        let autoscaled = scaler.is_some()
            || items
                .iter()
                .any(|i| i.class == crate::drift::Class::Autoscaled);
        let mut config = plan::apply_config(&self.manifest, None, autoscaled, &kept);
        let rekeys = rekey::rekeys(&self.manifest, &before, &self.config, &self.schemas);
        let mut rekey = None;
        if !rekeys.is_empty() {
            // The first step as the server takes it, and the apply's dry run with the rekeyed
            // items keyed as live (the stored object still has the live keys).
            let operations = rekey::rekey_patch(&before, &rekeys).unwrap_or_default();
            let params = PatchParams {
                dry_run: true,
                ..PatchParams::default()
            };
            let replaced = self.json_patch(&operations, &params).await?;
            config = rekey::rekeyed_config(&config, &rekeys);
            rekey = Some((rekeys, replaced));
        }
        let mut params = apply_params(&self.manifest);
        params.dry_run = true;
        let mut applied = self.apply(&config, &params).await?;
        if let Some((rekeys, replaced)) = &rekey {
            // Each item as the first step leaves it, in the applied object.
            applied = rekey::with_items_of(&applied, replaced, rekeys);
        }
        let mut removals = plan::removals(&self.manifest, &applied, &self.config, &self.schemas);
        removals.retain(|r| !kept.iter().any(|k| k.covers(&r.path)));
        // A hand scale of an object an autoscaler scales: removing `spec.replicas` would set the
        // server's default, 1, until the autoscaler's next sync — a drop to one pod nobody
        // asked for. They are left for the autoscaler to set from where they are.
        let replicas_note = scaler.and_then(|(hpa, replicas)| {
            let before = removals.len();
            removals.retain(|r| r.path.to_string() != "spec.replicas");
            (removals.len() < before).then(|| {
                format!(
                    "leaves spec.replicas at {replicas}: {hpa} scales {}, and removing the field would set 1 replica until that autoscaler acts",
                    self.object
                )
            })
        });
        let after = if removals.is_empty() {
            applied
        } else {
            // The removal as the server would take it on the object as it is now (RBAC, schema) …
            let on_live = plan::removal_patch(&before, &removals);
            let params = PatchParams {
                dry_run: true,
                ..PatchParams::default()
            };
            self.remove(&on_live, &params).await?;
            // … and its effect on the applied object, as the server makes it: one dry-run patch
            // from live to that end (a Service whose `type` goes back to ClusterIP loses its
            // `nodePort`s there, not in a local edit). Where that is refused, the local edit.
            let end = plan::patched(&applied, &plan::removal_patch(&applied, &removals));
            match self
                .json_patch(&plan::end_patch(&before, &end), &params)
                .await
            {
                Ok(mut server) => {
                    plan::in_order_of(&end, &mut server);
                    server
                }
                Err(error) => {
                    tracing::info!(%error, object = %self.object, "the end state's dry run refused; previewing the local edit");
                    end
                }
            }
        };
        Ok(Preview {
            object: self.object.clone(),
            resource_version: rv,
            before,
            after,
            removals,
            autoscaled,
            rekey,
            replicas_note,
            kept,
            reverted,
        })
    }

    /// The HorizontalPodAutoscaler whose `scaleTargetRef` is this object, as
    /// `horizontalpodautoscaler shop/web (2 to 10 replicas)`; `None` when there is none, or the
    /// autoscalers cannot be listed (then nothing is assumed).
    async fn autoscaler(&self) -> Option<String> {
        use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
        let namespace = &self.manifest.key.namespace;
        if namespace.is_empty() {
            return None;
        }
        let api: Api<HorizontalPodAutoscaler> = Api::namespaced(self.client.clone(), namespace);
        let list = match api.list(&kube::api::ListParams::default()).await {
            Ok(list) => list,
            Err(error) => {
                tracing::info!(%error, object = %self.object, "autoscalers not listed");
                return None;
            }
        };
        let group = |api_version: &str| {
            api_version
                .rsplit_once('/')
                .map_or(String::new(), |(g, _)| g.to_owned())
        };
        let own_group = group(&self.manifest.api_version);
        list.items.into_iter().find_map(|hpa| {
            let spec = hpa.spec?;
            let target = &spec.scale_target_ref;
            let matches = target.kind == *self.manifest.key.kind
                && target.name == *self.manifest.key.name
                && target.api_version.as_deref().map(group).unwrap_or_default() == own_group;
            matches.then(|| {
                format!(
                    "horizontalpodautoscaler {namespace}/{} ({} to {} replicas)",
                    hpa.metadata.name.unwrap_or_default(),
                    spec.min_replicas.unwrap_or(1),
                    spec.max_replicas
                )
            })
        })
    }

    /// Reverts as previewed: apply if the object is still as previewed (else
    /// [`RevertError::ChangedSincePreview`]: show a new preview), then remove the previewed fields
    /// added live, guarded by `test` operations; a conflicting removal is re-read and retried
    /// once, and a field whose value changed meanwhile is kept ([`Outcome::kept`]).
    pub async fn execute(&self, preview: &Preview) -> Result<Outcome, RevertError> {
        self.execute_with(preview, &|_| {}).await
    }

    /// [`Reverter::execute`], calling `at` between the steps.
    pub async fn execute_with(
        &self,
        preview: &Preview,
        at: &(dyn Fn(Stage) + Sync),
    ) -> Result<Outcome, RevertError> {
        let mut object = self.apply_unchanged(preview, at).await?;
        let mut retried = false;
        for attempt in 1..=2u8 {
            let patch = plan::removal_patch(&object, &preview.removals);
            let kept = patch.changed.clone();
            if patch.is_empty() {
                return Ok(Outcome {
                    after: object,
                    removed: Vec::new(),
                    kept,
                    retried,
                });
            }
            at(Stage::BeforeRemoval(attempt));
            match self.remove(&patch, &PatchParams::default()).await {
                Ok(after) => {
                    return Ok(Outcome {
                        after,
                        removed: patch.removed,
                        kept,
                        retried,
                    });
                }
                Err(err) if is_conflict(&err) && attempt == 1 => {
                    retried = true;
                    object = self
                        .get()
                        .await
                        .map_err(|e| self.removal_failed(&patch.removed, e))?;
                }
                Err(err) if is_conflict(&err) => {
                    return Err(RevertError::Conflict {
                        object: self.object.clone(),
                        what: format!(
                            "the manifest was applied, but removing {} conflicted twice",
                            labels(&patch.removed)
                        ),
                    });
                }
                Err(err) => return Err(self.removal_failed(&patch.removed, err)),
            }
        }
        Err(RevertError::Conflict {
            object: self.object.clone(),
            what: format!(
                "the manifest was applied, but removing {} conflicted twice",
                labels(&preview.removals)
            ),
        })
    }

    /// Applies the manifest if the object is still as previewed (its spec, labels and
    /// annotations: status writes do not count), conditional on the resourceVersion just read so
    /// that nothing written in between is overwritten. A 409 is re-read: a changed object stops
    /// the revert; an unchanged one (a status write, as the deployment controller makes many
    /// during the very rollout being reverted) is retried, up to [`APPLY_ATTEMPTS`] times.
    async fn apply_unchanged(
        &self,
        preview: &Preview,
        at: &(dyn Fn(Stage) + Sync),
    ) -> Result<Value, RevertError> {
        let previewed = plan::relevant_yaml(&preview.before);
        // After the first step (items put back in place), the object is the step's result.
        let rekeyed = preview
            .rekey
            .as_ref()
            .map(|(_, replaced)| plan::relevant_yaml(replaced));
        for attempt in 1..=APPLY_ATTEMPTS {
            let mut now = self.get().await?;
            let relevant = plan::relevant_yaml(&now);
            let done = rekeyed.as_ref() == Some(&relevant);
            if relevant != previewed && !done {
                return Err(RevertError::ChangedSincePreview {
                    object: self.object.clone(),
                });
            }
            if let Some((rekeys, _)) = preview.rekey.as_ref().filter(|_| !done) {
                let Some(operations) = rekey::rekey_patch(&now, rekeys) else {
                    return Err(RevertError::ChangedSincePreview {
                        object: self.object.clone(),
                    });
                };
                match self.json_patch(&operations, &PatchParams::default()).await {
                    Ok(replaced) => now = replaced,
                    Err(err) if is_conflict(&err) => continue,
                    Err(err) => return Err(err),
                }
            }
            let rv = resource_version(&now);
            let config =
                plan::apply_config(&self.manifest, Some(&rv), preview.autoscaled, &preview.kept);
            at(Stage::BeforeApply(attempt));
            match self.apply(&config, &apply_params(&self.manifest)).await {
                Err(err) if is_conflict(&err) => continue,
                other => return other,
            }
        }
        Err(RevertError::Conflict {
            object: self.object.clone(),
            what: format!(
                "nothing was applied: the object was written to between the read and the apply {APPLY_ATTEMPTS} times"
            ),
        })
    }

    fn removal_failed(&self, removals: &[Removal], err: RevertError) -> RevertError {
        RevertError::RemovalFailed {
            object: self.object.clone(),
            fields: labels(removals),
            reason: err.to_string(),
        }
    }

    async fn get(&self) -> Result<Value, RevertError> {
        let name = &self.manifest.key.name;
        match self.api.get(name).await {
            Ok(object) => to_value(object),
            Err(kube::Error::Api(status)) if status.code == 404 => {
                Err(RevertError::missing(&self.manifest))
            }
            Err(err) => Err(classify(
                err,
                "get",
                &rbac_resource(&self.resource),
                &self.manifest.key.namespace,
                None,
            )),
        }
    }

    async fn apply(&self, config: &Value, params: &PatchParams) -> Result<Value, RevertError> {
        let name = &self.manifest.key.name;
        match self.api.patch(name, params, &Patch::Apply(config)).await {
            Ok(object) => to_value(object),
            Err(err) => Err(classify(
                err,
                "patch",
                &rbac_resource(&self.resource),
                &self.manifest.key.namespace,
                Some(&self.manifest),
            )),
        }
    }

    async fn remove(
        &self,
        patch: &plan::RemovalPatch,
        params: &PatchParams,
    ) -> Result<Value, RevertError> {
        self.json_patch(&patch.operations, params).await
    }

    /// A JSON patch of `operations` as field manager `kdrift`.
    async fn json_patch(
        &self,
        operations: &Value,
        params: &PatchParams,
    ) -> Result<Value, RevertError> {
        let operations: json_patch::Patch =
            serde_json::from_value(operations.clone()).map_err(|e| RevertError::Api {
                verb: "patch",
                object: self.object.clone(),
                reason: e.to_string(),
            })?;
        let mut params = params.clone();
        params.field_manager = Some(field_manager_for(&self.manifest).to_owned());
        let name = &self.manifest.key.name;
        match self
            .api
            .patch(name, &params, &Patch::Json::<()>(operations))
            .await
        {
            Ok(object) => to_value(object),
            Err(err) => Err(classify(
                err,
                "patch",
                &rbac_resource(&self.resource),
                &self.manifest.key.namespace,
                None,
            )),
        }
    }
}

/// `deployments.apps`, as RBAC rules and kubectl name a resource.
fn rbac_resource(resource: &ApiResource) -> String {
    if resource.group.is_empty() {
        resource.plural.clone()
    } else {
        format!("{}.{}", resource.plural, resource.group)
    }
}

fn apply_params(manifest: &ManifestObject) -> PatchParams {
    PatchParams::apply(field_manager_for(manifest)).force()
}

fn to_value(object: DynamicObject) -> Result<Value, RevertError> {
    serde_json::to_value(object).map_err(|e| RevertError::Api {
        verb: "read",
        object: "the API server's reply".into(),
        reason: e.to_string(),
    })
}

fn resource_version(object: &Value) -> String {
    object
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn labels(removals: &[Removal]) -> String {
    removals
        .iter()
        .map(Removal::label)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A removal that met someone else's write: a 409, or a failed `test` operation (422).
fn is_conflict(err: &RevertError) -> bool {
    match err {
        RevertError::Api { reason, .. } => {
            reason.starts_with("HTTP 409")
                || (reason.starts_with("HTTP 422") && reason.contains("testing value"))
        }
        RevertError::Invalid { message, .. } => message.contains("testing value"),
        _ => false,
    }
}
