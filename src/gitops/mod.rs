//! Who reconciles an object: Argo CD or Flux, recognised from what their controllers write on
//! the objects they apply, and what their owning Application, Kustomization or HelmRelease says
//! they will do about a live change (pure; the reads are the caller's).
//!
//! - Argo CD: the annotation `argocd.argoproj.io/tracking-id`
//!   (`<app>:<group>/<kind>:<namespace>/<name>`, the app written `<namespace>_<name>` when
//!   Applications live outside Argo CD's own namespace), or, with label tracking (Argo CD 2.x's
//!   default), the label `app.kubernetes.io/instance` — which Helm charts set too, so it counts
//!   only once an Application of that name was read ([`Reconciler::claims`]).
//! - [`source`]: the folders of the checkout the Applications deploy (manifests without
//!   `--manifests`).
//! - Flux: the labels `kustomize.toolkit.fluxcd.io/name` and `…/namespace` (a Kustomization),
//!   `helm.toolkit.fluxcd.io/name` and `…/namespace` (a HelmRelease).
pub mod source;

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Value, json};

pub const ARGO_TRACKING_ID: &str = "argocd.argoproj.io/tracking-id";
pub const ARGO_INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
pub const FLUX_KUSTOMIZE_NAME: &str = "kustomize.toolkit.fluxcd.io/name";
pub const FLUX_KUSTOMIZE_NAMESPACE: &str = "kustomize.toolkit.fluxcd.io/namespace";
pub const FLUX_HELM_NAME: &str = "helm.toolkit.fluxcd.io/name";
pub const FLUX_HELM_NAMESPACE: &str = "helm.toolkit.fluxcd.io/namespace";

/// Argo CD's default `timeout.reconciliation`: how often an app is compared with git.
pub const ARGO_RECONCILIATION: &str = "3m";

/// The object that owns a live object for a GitOps controller.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Owner {
    /// An Argo CD Application; its namespace when the tracking id names one. `by_label`: named
    /// by the `app.kubernetes.io/instance` label alone (label tracking, Argo CD 2.x's default),
    /// which Helm charts set too: an owner only once an Application of that name was read
    /// ([`Reconciler::claims`]).
    Argo {
        app: String,
        namespace: Option<String>,
        by_label: bool,
    },
    /// A Flux Kustomization (`kustomize.toolkit.fluxcd.io/v1`).
    FluxKustomization { name: String, namespace: String },
    /// A Flux HelmRelease (`helm.toolkit.fluxcd.io/v2`).
    FluxHelmRelease { name: String, namespace: String },
}

impl Owner {
    /// `argo:shop`, `flux:flux-system/platform`, `helm:flux-system/redis`.
    pub fn short(&self) -> String {
        match self {
            Owner::Argo { app, .. } => format!("argo:{app}"),
            Owner::FluxKustomization { name, .. } => format!("flux:{name}"),
            Owner::FluxHelmRelease { name, .. } => format!("helm:{name}"),
        }
    }

    /// The controller's name, for sentences and JSON (`argocd`, `flux`).
    pub fn controller(&self) -> &'static str {
        match self {
            Owner::Argo { .. } => "argocd",
            Owner::FluxKustomization { .. } | Owner::FluxHelmRelease { .. } => "flux",
        }
    }

    /// The owning object's kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Owner::Argo { .. } => "Application",
            Owner::FluxKustomization { .. } => "Kustomization",
            Owner::FluxHelmRelease { .. } => "HelmRelease",
        }
    }

    /// Its name and, when known, namespace.
    pub fn name(&self) -> (&str, Option<&str>) {
        match self {
            Owner::Argo { app, namespace, .. } => (app, namespace.as_deref()),
            Owner::FluxKustomization { name, namespace }
            | Owner::FluxHelmRelease { name, namespace } => (name, Some(namespace)),
        }
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Owner::Argo { app, .. } => write!(f, "Argo CD app {app}"),
            Owner::FluxKustomization { name, namespace } => {
                write!(f, "Flux Kustomization {namespace}/{name}")
            }
            Owner::FluxHelmRelease { name, namespace } => {
                write!(f, "Flux HelmRelease {namespace}/{name}")
            }
        }
    }
}

/// The app of an Argo CD tracking id: `shop` of `shop:apps/Deployment:shop/frontend`, with its
/// namespace when written `team-a_shop` (Applications in any namespace).
pub fn parse_tracking_id(id: &str) -> Option<Owner> {
    let (app, rest) = id.split_once(':')?;
    // The rest is `<group>/<kind>:<namespace>/<name>`: a tracking id, not some other value.
    let (group_kind, place) = rest.split_once(':')?;
    if !group_kind.contains('/') || !place.contains('/') || app.is_empty() {
        return None;
    }
    Some(match app.split_once('_') {
        Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() => Owner::Argo {
            app: name.to_owned(),
            namespace: Some(namespace.to_owned()),
            by_label: false,
        },
        _ => Owner::Argo {
            app: app.to_owned(),
            namespace: None,
            by_label: false,
        },
    })
}

/// The owners an object's labels and annotations name (several when controllers overlap: each
/// is said). Without a tracking id, the instance label names a candidate Argo CD app
/// (`by_label`), an owner only once the app is read.
pub fn owners_of(
    labels: Option<&BTreeMap<String, String>>,
    annotations: Option<&BTreeMap<String, String>>,
) -> Vec<Owner> {
    owners_by(
        |k| labels.and_then(|l| l.get(k)).map(String::as_str),
        |k| annotations.and_then(|a| a.get(k)).map(String::as_str),
    )
}

/// The owners named by an object's JSON metadata (`metadata.labels`, `metadata.annotations`),
/// read where they are (no copy of the maps: this runs for every compare of a live object).
pub fn owners_of_json(metadata: Option<&Value>) -> Vec<Owner> {
    let at = |field: &str, key: &str| metadata?.get(field)?.get(key)?.as_str();
    owners_by(|k| at("labels", k), |k| at("annotations", k))
}

/// [`owners_of`] over lookups of a label and of an annotation.
fn owners_by<'a>(
    label: impl Fn(&str) -> Option<&'a str>,
    annotation: impl Fn(&str) -> Option<&'a str>,
) -> Vec<Owner> {
    let label = |k: &str| label(k).filter(|v| !v.is_empty()).map(str::to_owned);
    let mut owners = Vec::new();
    match annotation(ARGO_TRACKING_ID).and_then(parse_tracking_id) {
        Some(owner) => owners.push(owner),
        None => {
            if let Some(app) = label(ARGO_INSTANCE_LABEL) {
                owners.push(Owner::Argo {
                    app,
                    namespace: None,
                    by_label: true,
                });
            }
        }
    }
    if let (Some(name), Some(namespace)) =
        (label(FLUX_KUSTOMIZE_NAME), label(FLUX_KUSTOMIZE_NAMESPACE))
    {
        owners.push(Owner::FluxKustomization { name, namespace });
    }
    if let (Some(name), Some(namespace)) = (label(FLUX_HELM_NAME), label(FLUX_HELM_NAMESPACE)) {
        owners.push(Owner::FluxHelmRelease { name, namespace });
    }
    owners
}

/// The commit an owning object says it has applied: an Argo CD Application's
/// `status.sync.revision` while it is `Synced`; a Flux Kustomization's or HelmRelease's
/// `status.lastAppliedRevision` (`main@sha1:<sha>`, or a bare sha as older Flux wrote it).
pub fn synced_revision(object: &Value) -> Option<String> {
    if str_at(object, &["kind"]) == Some("Application") {
        return (str_at(object, &["status", "sync", "status"]) == Some("Synced"))
            .then(|| str_at(object, &["status", "sync", "revision"]))
            .flatten()
            .map(str::to_owned);
    }
    let applied = str_at(object, &["status", "lastAppliedRevision"])?;
    let sha = applied.rsplit([':', '/']).next().unwrap_or(applied);
    (!sha.is_empty()).then(|| sha.to_owned())
}

/// Whether the revision an owner reports is the commit `sha` (either may be abbreviated).
pub fn is_commit(revision: &str, sha: &str) -> bool {
    !revision.is_empty()
        && !sha.is_empty()
        && (revision.starts_with(sha) || sha.starts_with(revision))
}

/// What the owning object says its controller will do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    Argo {
        /// `syncPolicy.automated` is set.
        automated: bool,
        self_heal: bool,
        prune: bool,
        sync_status: Option<String>,
        health: Option<String>,
        repo_url: Option<String>,
        path: Option<String>,
        target_revision: Option<String>,
        /// The source is a Helm chart (`chart` set): no folder of manifests to map.
        chart: Option<String>,
    },
    Flux {
        interval: Option<String>,
        suspend: bool,
        prune: bool,
        /// The Ready condition's status and reason (`True ReconciliationSucceeded`).
        ready: Option<String>,
        path: Option<String>,
        /// A HelmRelease's `spec.driftDetection.mode` is `enabled`: helm-controller corrects
        /// live changes. `None` for a Kustomization, which applies its folder every time.
        drift_detection: Option<bool>,
    },
}

fn str_at<'v>(value: &'v Value, path: &[&str]) -> Option<&'v str> {
    path.iter()
        .try_fold(value, |v, k| v.get(k))
        .and_then(Value::as_str)
}

fn bool_at(value: &Value, path: &[&str]) -> bool {
    path.iter()
        .try_fold(value, |v, k| v.get(k))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

impl Policy {
    /// From an Argo CD Application (`argoproj.io/v1alpha1`) as the API returns it. A multi-source
    /// app's first source stands for it.
    pub fn of_application(app: &Value) -> Policy {
        let spec = app.get("spec").unwrap_or(&Value::Null);
        let automated = spec
            .get("syncPolicy")
            .and_then(|p| p.get("automated"))
            .filter(|a| !a.is_null());
        let source = spec
            .get("source")
            .or_else(|| spec.get("sources").and_then(|s| s.get(0)))
            .unwrap_or(&Value::Null);
        let text = |v: &Value, path: &[&str]| str_at(v, path).map(str::to_owned);
        Policy::Argo {
            automated: automated
                .is_some_and(|a| a.get("enabled").and_then(Value::as_bool) != Some(false)),
            self_heal: automated.is_some_and(|a| bool_at(a, &["selfHeal"])),
            prune: automated.is_some_and(|a| bool_at(a, &["prune"])),
            sync_status: text(app, &["status", "sync", "status"]),
            health: text(app, &["status", "health", "status"]),
            repo_url: text(source, &["repoURL"]),
            path: text(source, &["path"]),
            target_revision: text(source, &["targetRevision"]),
            chart: text(source, &["chart"]),
        }
    }

    /// From a Flux Kustomization or HelmRelease as the API returns it.
    pub fn of_flux(object: &Value) -> Policy {
        let ready = object
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .and_then(|cs| {
                cs.iter()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
            })
            .map(|c| {
                let status = str_at(c, &["status"]).unwrap_or("Unknown");
                match str_at(c, &["reason"]) {
                    Some(reason) => format!("{status} {reason}"),
                    None => status.to_owned(),
                }
            });
        Policy::Flux {
            interval: str_at(object, &["spec", "interval"]).map(str::to_owned),
            suspend: bool_at(object, &["spec", "suspend"]),
            prune: bool_at(object, &["spec", "prune"]),
            ready,
            path: str_at(object, &["spec", "path"]).map(str::to_owned),
            drift_detection: (str_at(object, &["kind"]) == Some("HelmRelease"))
                .then(|| str_at(object, &["spec", "driftDetection", "mode"]) == Some("enabled")),
        }
    }

    /// Whether the controller applies a new commit by itself: an automated Argo CD app, a Flux
    /// object not suspended.
    pub fn syncs_commits(&self) -> bool {
        match self {
            Policy::Argo { automated, .. } => *automated,
            Policy::Flux { suspend, .. } => !suspend,
        }
    }

    /// Whether the controller undoes a live change by itself.
    pub fn reverts_changes(&self) -> bool {
        match self {
            Policy::Argo {
                automated,
                self_heal,
                ..
            } => *automated && *self_heal,
            // A HelmRelease without drift detection upgrades only when its chart or values
            // change: a live change stays until then.
            Policy::Flux {
                suspend,
                drift_detection,
                ..
            } => !suspend && *drift_detection != Some(false),
        }
    }
}

/// An owner and what could be read of it: its policy, or why not (403, no such kind).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reconciler {
    pub owner: Owner,
    pub policy: Result<Policy, String>,
    /// Where the owning object was found, when the owner's marks did not say.
    pub found_in: Option<String>,
}

/// Argo CD's reconciliation period in seconds ([`ARGO_RECONCILIATION`]).
const ARGO_PERIOD: i64 = 180;

impl Reconciler {
    /// Whether it is an owner to speak of: always, but for an instance label whose Application
    /// could not be read (most likely a Helm chart's label, not Argo CD's).
    pub fn claims(&self) -> bool {
        !matches!(self.owner, Owner::Argo { by_label: true, .. }) || self.policy.is_ok()
    }

    /// The table's and `:drift`'s marker: `argo:shop self-heal`, `flux:platform 10m`,
    /// `argo:shop ?` when its app could not be read.
    pub fn marker(&self) -> String {
        let short = self.owner.short();
        match &self.policy {
            Ok(Policy::Argo {
                automated,
                self_heal,
                ..
            }) => match (automated, self_heal) {
                (true, true) => format!("{short} self-heal"),
                (true, false) => format!("{short} auto"),
                (false, _) => format!("{short} manual"),
            },
            Ok(Policy::Flux { suspend: true, .. }) => format!("{short} suspended"),
            Ok(Policy::Flux { interval, .. }) => {
                format!("{short} {}", interval.as_deref().unwrap_or("?"))
            }
            Err(_) => format!("{short} ?"),
        }
    }

    /// One sentence on what will happen to a live change: for the detail, diff, accept and
    /// revert views. An Application whose source is a Helm chart says so: kdrift compares the
    /// manifests folder, not the chart's rendering.
    pub fn sentence(&self) -> String {
        let said = self.what_happens();
        match &self.policy {
            Ok(Policy::Argo {
                chart: Some(chart), ..
            }) => format!(
                "{said} (its source is the Helm chart {chart}, which kdrift does not render: the manifests folder is what is compared)"
            ),
            _ => said,
        }
    }

    /// [`Reconciler::sentence`], with the time left when the live change's time is known and
    /// Argo CD self-heals: its next comparison is due at most one period after the change.
    pub fn sentence_since(&self, changed: Option<jiff::Timestamp>, now: jiff::Timestamp) -> String {
        let said = self.sentence();
        let self_heals = matches!(
            &self.policy,
            Ok(Policy::Argo {
                automated: true,
                self_heal: true,
                ..
            })
        );
        let (true, Some(changed)) = (self_heals, changed) else {
            return said;
        };
        let left = changed.as_second() + ARGO_PERIOD - now.as_second();
        let when = if left > 0 {
            format!(
                "in about {}m{:02}s: Argo CD compares every {ARGO_RECONCILIATION}, self-heal may act sooner",
                left / 60,
                left % 60
            )
        } else {
            "due now".to_owned()
        };
        said.replacen(
            &format!("(within ~{ARGO_RECONCILIATION})"),
            &format!("({when})"),
            1,
        )
    }

    fn what_happens(&self) -> String {
        let owner = &self.owner;
        match &self.policy {
            Err(why) => format!("managed by {owner} (details not readable: {why})"),
            Ok(Policy::Argo {
                automated: true,
                self_heal: true,
                ..
            }) => {
                let Owner::Argo { app, .. } = owner else {
                    return format!("{owner} self-heals");
                };
                format!(
                    "Argo CD self-heal is on for app {app}: this change will be reverted at its next sync (within ~{ARGO_RECONCILIATION}) unless it is committed to git and pushed"
                )
            }
            Ok(Policy::Argo {
                automated: true, ..
            }) => format!(
                "{owner} syncs automatically, self-heal off: this change stays until a new commit is synced over it"
            ),
            Ok(Policy::Argo { .. }) => {
                format!("{owner} syncs by hand: this change stays until someone syncs the app")
            }
            Ok(Policy::Flux {
                interval,
                suspend,
                drift_detection,
                ..
            }) => {
                let every = interval.as_deref().unwrap_or("its interval");
                if *suspend {
                    format!(
                        "{owner} reconciles every {every}; suspended: yes — this change stays until it is resumed"
                    )
                } else if *drift_detection == Some(false) {
                    format!(
                        "{owner} reconciles every {every}; drift detection is off (spec.driftDetection.mode): this change stays until the next upgrade (a new chart version or values)"
                    )
                } else {
                    format!(
                        "{owner} reconciles every {every}; suspended: no — this change will be reverted at its next reconcile unless it is committed to git and pushed"
                    )
                }
            }
        }
    }

    /// In the revert view: a revert under Argo CD is what a sync of the app does to this object
    /// (applying the manifest), and with self-heal on it will happen anyway.
    pub fn on_revert(&self) -> Option<String> {
        let Owner::Argo { app, .. } = &self.owner else {
            return None;
        };
        Some(match &self.policy {
            Ok(policy) if policy.reverts_changes() => format!(
                "reverting has the effect of a sync of app {app} for this object, which self-heal would do anyway"
            ),
            _ => format!(
                "reverting has the effect of a sync of app {app} for this object (argocd app sync {app} --resource … does the same)"
            ),
        })
    }

    /// After an accept: what the commit must do before the controller acts.
    pub fn after_accept(&self) -> Option<String> {
        match &self.policy {
            Ok(Policy::Argo {
                target_revision, ..
            }) => {
                let branch = target_revision.as_deref().unwrap_or("HEAD");
                Some(format!(
                    "{}: push the commit to the branch it watches ({branch}) before its next sync",
                    self.owner
                ))
            }
            Ok(Policy::Flux { interval, .. }) => Some(format!(
                "{}: push the commit before its next reconcile (every {})",
                self.owner,
                interval.as_deref().unwrap_or("interval")
            )),
            Err(_) => Some(format!(
                "{}: push the commit to the branch it watches",
                self.owner
            )),
        }
    }

    /// For `check -o json`: `{"controller", "kind", "name", "namespace", "revertsChanges", …}`.
    pub fn to_json(&self) -> Value {
        let (name, namespace) = self.owner.name();
        let namespace = namespace.or(self.found_in.as_deref());
        let mut out = json!({
            "controller": self.owner.controller(),
            "kind": self.owner.kind(),
            "name": name,
            "sentence": self.sentence(),
        });
        if let Some(ns) = namespace {
            out["namespace"] = json!(ns);
        }
        match &self.policy {
            Ok(policy) => {
                out["revertsChanges"] = json!(policy.reverts_changes());
                match policy {
                    Policy::Argo {
                        automated,
                        self_heal,
                        prune,
                        sync_status,
                        health,
                        target_revision,
                        ..
                    } => {
                        out["automated"] = json!(automated);
                        out["selfHeal"] = json!(self_heal);
                        out["prune"] = json!(prune);
                        if let Some(s) = sync_status {
                            out["syncStatus"] = json!(s);
                        }
                        if let Some(h) = health {
                            out["health"] = json!(h);
                        }
                        if let Some(t) = target_revision {
                            out["targetRevision"] = json!(t);
                        }
                    }
                    Policy::Flux {
                        interval,
                        suspend,
                        prune,
                        ready,
                        drift_detection,
                        ..
                    } => {
                        if let Some(d) = drift_detection {
                            out["driftDetection"] = json!(d);
                        }
                        if let Some(i) = interval {
                            out["interval"] = json!(i);
                        }
                        out["suspend"] = json!(suspend);
                        out["prune"] = json!(prune);
                        if let Some(r) = ready {
                            out["ready"] = json!(r);
                        }
                    }
                }
            }
            Err(why) => out["unreadable"] = json!(why),
        }
        out
    }
}

#[cfg(test)]
mod tests;
