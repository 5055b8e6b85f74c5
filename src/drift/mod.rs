//! The drift engine: a live object compared with its manifest, field by field, by meaning, each
//! difference attributed to the field manager that made it (see `docs/ARCHITECTURE.md`, "Drift
//! semantics"). Pure: no IO.
//!
//! - [`live`]: the compact live extract ([`LiveObject`]) made from the server's JSON.
//! - [`compare`](mod@compare): the walk of manifest and live values ([`compare()`](compare::compare)).
//! - [`list_keys`]: items of keyed lists paired by merge key (server defaults filled in).
//! - [`owners`]: attribution on the shared [`crate::managed_fields`] sets: who owns a path.
//! - [`normalize`], [`quantity`]: equality by meaning, fields that are never drift.
//! - [`path`]: [`DriftPath`], the address of a drifted field.
//! - [`report`], [`diff`]: the headless report (text, JSON, exit code) and one object's diff.
//! - [`secret`]: Secrets compared by value, never shown (digests stand in for values).
//! - [`check`]: `kdrift check` without the IO (pairing, missing, unmanaged).
//! - [`changes`], [`live_changes`]: the change timeline's lines (`kdrift changes`, `kdrift
//!   blame`), and each watch event compared with the version before it (the live view's
//!   `:changes`); [`history`]: its rollout, Warning event and GitOps sync lines. The previous
//!   versions it keeps are [`crate::packed`].
//!
//! Feeding it from the live view: on a watch event of an object that has a manifest,
//! [`LiveObject::from_deployment_json`] (the watcher keeps each object's JSON text), then
//! [`LiveObject::reduce_to`] the object's manifest (keeps only what drift reads), then
//! [`compare()`]; keep the [`ObjectDrift`] (and the reduced extract if wanted). When
//! [`crate::manifest::ManifestIndex::reload_file`] names changed keys, recompute those from the
//! full live object (a reduced extract only holds the old manifest's fields).
pub mod blame;
pub mod changes;
pub mod check;
pub mod compare;
pub mod diff;
pub mod fleet;
pub mod history;
pub mod list_keys;
pub mod live;
pub mod live_changes;
pub mod normalize;
pub mod owners;
pub mod path;
pub mod quantity;
pub mod report;
pub mod secret;

use serde_json::Value;

pub use compare::{compare, compare_values, missing, unmanaged};
pub use live::LiveObject;
pub use path::{DriftPath, PathStep};
pub use report::DriftReport;

use crate::manifest::ObjectKey;

/// How a field differs. The last two are shown but are not drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// A field the manifest sets has another value live.
    Changed,
    /// A field the manifest sets is absent live.
    RemovedLive,
    /// A field absent from the manifest, set live by an out-of-band manager.
    AddedLive,
    /// `env` items on both sides in another relative order (`$(VAR)` expands only from earlier
    /// variables): `manifest` and `live` hold the names in each order.
    Reordered,
    /// `spec.replicas` owned by the horizontal pod autoscaler.
    Autoscaled,
    /// The pod template's `kubectl.kubernetes.io/restartedAt` annotation (`kubectl rollout restart`).
    Restarted,
    /// A Helm release's object whose live value is what git's render of its chart says: a hotfix
    /// accepted into git, waiting for `helm upgrade` (a pending upgrade, not drift).
    InGit,
    /// A Helm release's object whose live value is what the release's newer revision, still
    /// `pending-upgrade` or `pending-rollback`, sets: helm mid-upgrade, at work (not drift).
    HelmUpgrading,
}

impl Class {
    pub fn is_drift(self) -> bool {
        matches!(
            self,
            Class::Changed | Class::RemovedLive | Class::AddedLive | Class::Reordered
        )
    }

    /// The stable name used in JSON and text (`changed`, `removed-live`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Class::Changed => "changed",
            Class::RemovedLive => "removed-live",
            Class::AddedLive => "added-live",
            Class::Reordered => "reordered",
            Class::Autoscaled => "autoscaled",
            Class::Restarted => "restarted",
            Class::InGit => "in-git",
            Class::HelmUpgrading => "helm-upgrading",
        }
    }
}

/// Who last wrote a field, from `managedFields`; `manager: None` is "unknown".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attribution {
    pub manager: Option<String>,
    pub operation: Option<String>,
    /// RFC 3339.
    pub time: Option<String>,
    pub subresource: Option<String>,
}

impl Attribution {
    pub fn of(entry: &crate::managed_fields::ManagedFieldsEntry) -> Attribution {
        Attribution {
            manager: Some(entry.manager.clone()),
            operation: Some(entry.operation.as_str().to_owned()),
            time: entry.time.clone(),
            subresource: entry.subresource.clone(),
        }
    }
}

/// One drifted (or noted) field.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftItem {
    pub class: Class,
    pub path: DriftPath,
    pub manifest: Option<Value>,
    pub live: Option<Value>,
    pub attribution: Attribution,
    /// For a list item added live: the items before it in the live list (an accept inserts it
    /// after the nearest of them the manifest has). Empty otherwise.
    pub preceding: Preceding,
}

/// The items before an added one in its live list: the keys of the whole list, shared by every
/// item added to it, and the item's place (thousands of items added to one list would otherwise
/// each hold a copy of all the ones before it).
#[derive(Debug, Clone, Default)]
pub struct Preceding {
    /// Each live item's key (`None`: an item without one, skipped).
    list: std::sync::Arc<[Option<PathStep>]>,
    at: usize,
}

impl Preceding {
    /// The items before place `at` of a list whose items' keys are `list`.
    pub fn new(list: std::sync::Arc<[Option<PathStep>]>, at: usize) -> Preceding {
        let at = at.min(list.len());
        Preceding { list, at }
    }

    /// Nearest first.
    pub fn nearest_first(&self) -> impl Iterator<Item = &PathStep> {
        self.list[..self.at].iter().rev().flatten()
    }
}

impl PartialEq for Preceding {
    fn eq(&self, other: &Preceding) -> bool {
        self.nearest_first().eq(other.nearest_first())
    }
}

/// The state of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectStatus {
    InSync,
    /// N drifted fields (the items with [`Class::is_drift`]).
    Drifted,
    /// In git, not in the cluster.
    Missing,
    /// In the cluster, not in git.
    Unmanaged,
    /// The object could not be compared (a fetch failed, the live object is unreadable).
    Error(String),
}

/// The drift of one object.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectDrift {
    pub key: ObjectKey,
    /// The schema of the object's kind (as the live object's; unknown for an object missing
    /// live): list keys for the diff and the accept edit.
    pub schema: crate::schema::Schema,
    pub status: ObjectStatus,
    pub items: Vec<DriftItem>,
}

impl ObjectDrift {
    /// The paths of the items `which` picks, `, `-separated, or `none`: the fields an error about
    /// a `--field` that names none of them lists.
    pub fn paths_of(&self, which: impl Fn(&DriftItem) -> bool) -> String {
        let paths: Vec<String> = self
            .items
            .iter()
            .filter(|item| which(item))
            .map(|item| item.path.to_string())
            .collect();
        if paths.is_empty() {
            "none".to_owned()
        } else {
            paths.join(", ")
        }
    }

    /// The number of drifted fields (notes such as autoscaled or restarted not counted).
    pub fn drift_count(&self) -> usize {
        self.items
            .iter()
            .filter(|item| item.class.is_drift())
            .count()
    }

    /// True when the pod template was restarted with `kubectl rollout restart`.
    pub fn restarted(&self) -> bool {
        self.items.iter().any(|item| item.class == Class::Restarted)
    }
}

/// Managers that apply manifests with `Update`: their writes are the manifest's, never drift.
/// Every `Apply` entry (`kubectl apply --server-side` as `kubectl`, Argo CD, Flux) is an applier
/// too, whatever its name; `kubectl` with `Update` (old kubectl's edit) is not.
/// `kubectl-create` is here because `kubectl create -f DIR` is how some teams apply: the server
/// records the created object's defaults under it, which would otherwise all read as added live;
/// it cannot write an object that already exists, so no out-of-band change hides behind it.
/// `kdrift` is kdrift's own revert: it applies the manifest, and the defaults the server fills in
/// again after its removals are the manifest's. `helm` is helm 3's three-way merge patch of a
/// release's manifest (helm 4 applies server-side under the same name).
pub const BUILTIN_APPLIERS: &[&str] = &[
    "kdrift",
    "helm",
    "kubectl-client-side-apply",
    "kubectl-create",
    "argocd-controller",
    "kustomize-controller",
    "helm-controller",
    "before-first-apply",
];

/// Managers of the control plane: they fill defaults and status, not configuration.
pub const SYSTEM_MANAGERS: &[&str] = &[
    "kube-controller-manager",
    "kubelet",
    "kube-scheduler",
    "kube-apiserver",
    "kube-proxy",
    "cloud-controller-manager",
    "horizontal-pod-autoscaler",
];

/// Managers that write `spec.replicas` for an autoscaler.
pub const AUTOSCALERS: &[&str] = &["kube-controller-manager", "horizontal-pod-autoscaler"];
