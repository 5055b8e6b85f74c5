//! `kdrift check` without the IO: pair every manifest with its live object and build the report
//! (missing, unmanaged, drift per object, problems). The caller lists the live objects.
use std::collections::HashMap;

use crate::manifest::{ManifestIndex, ManifestObject, ObjectKey};

use super::compare::{compare, missing, unmanaged};
use super::live::LiveObject;
use super::report::DriftReport;
use super::{ObjectDrift, ObjectStatus};

/// What the live listing covered, so that a manifest of a kind or namespace that was not listed
/// is not called missing.
pub trait Coverage {
    fn covers(&self, key: &ObjectKey) -> bool;
}

impl<F: Fn(&ObjectKey) -> bool> Coverage for F {
    fn covers(&self, key: &ObjectKey) -> bool {
        self(key)
    }
}

/// The namespaces every cluster has.
const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

/// An object the cluster made itself, which no repository holds and so is not "unmanaged": one
/// a controller owns (a ReplicaSet, a Job of a CronJob), anything in the system namespaces, the
/// system namespaces themselves, and what the control plane puts in every namespace (the
/// `default` ServiceAccount, the `kube-root-ca.crt` ConfigMap) or in `default` (the
/// `kubernetes` Service). Helm's own bookkeeping (release records, hooks' objects) is no
/// application object either.
pub fn made_by_the_cluster(object: &LiveObject) -> bool {
    if crate::helm::is_bookkeeping(&object.body) {
        return true;
    }
    let key = &object.key;
    let owned = object
        .body
        .pointer("/metadata/ownerReferences")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|owners| {
            owners
                .iter()
                .any(|o| o.get("controller") == Some(&serde_json::Value::Bool(true)))
        });
    let core = key.group.is_empty();
    owned
        || (key.namespace != "default" && SYSTEM_NAMESPACES.contains(&key.namespace.as_str()))
        || (core && key.kind == "Namespace" && SYSTEM_NAMESPACES.contains(&key.name.as_str()))
        || (core && key.kind == "ServiceAccount" && key.name == "default")
        || (core && key.kind == "ConfigMap" && key.name == "kube-root-ca.crt")
        || (core && key.kind == "Service" && key.namespace == "default" && key.name == "kubernetes")
}

/// A release object's drift where git's render of its chart already holds the live value (a
/// hotfix accepted into the values file): [`Class::InGit`], a pending upgrade and no drift.
/// Git agrees with live at a path when the comparison of git's render with live finds nothing
/// there.
pub fn in_git(
    drift: &mut ObjectDrift,
    git: &serde_json::Value,
    live: &LiveObject,
    config: &crate::manifest::Config,
) {
    agreeing(drift, git, live, config, super::Class::InGit);
}

/// A release object's drift where the revision helm is applying now (`pending-upgrade`,
/// `pending-rollback`) sets the live value: [`crate::drift::Class::HelmUpgrading`], helm at work, not drift.
pub fn helm_at_work(
    drift: &mut ObjectDrift,
    pending: &serde_json::Value,
    live: &LiveObject,
    config: &crate::manifest::Config,
) {
    agreeing(drift, pending, live, config, super::Class::HelmUpgrading);
}

/// The drift of `drift` that `other` (another desired state of the object) holds as live is
/// `class`, not drift; the object is in sync when no drift is left.
fn agreeing(
    drift: &mut ObjectDrift,
    other: &serde_json::Value,
    live: &LiveObject,
    config: &crate::manifest::Config,
    class: super::Class,
) {
    let against = super::compare_values(&drift.key, other, live, config);
    let disagrees: std::collections::HashSet<String> = against
        .items
        .iter()
        .filter(|i| i.class.is_drift())
        .map(|i| i.path.to_string())
        .collect();
    for item in drift.items.iter_mut().filter(|i| i.class.is_drift()) {
        if !disagrees.contains(&item.path.to_string()) {
            item.class = class;
        }
    }
    if !drift.items.iter().any(|i| i.class.is_drift()) {
        drift.status = ObjectStatus::InSync;
    }
}

/// [`compare`] of a manifest of `index` with its live object, a release's object also against
/// git's render of its chart ([`in_git`]): what `check`, `diff` and `blame` say of one object.
pub fn compare_in(
    index: &ManifestIndex,
    manifest: &ManifestObject,
    live: &LiveObject,
) -> ObjectDrift {
    let mut drift = compare(manifest, live, &index.config);
    if manifest.helm.is_some()
        && drift.status == ObjectStatus::Drifted
        && let Some(git) = index.git_render_as_applied(&manifest.key)
    {
        in_git(&mut drift, &git, live, &index.config);
    }
    // Helm mid-upgrade: what the release's pending revision sets is helm at work.
    if manifest.helm.is_some()
        && drift.status == ObjectStatus::Drifted
        && let Some(pending) = index.helm_pending(&manifest.key)
    {
        helm_at_work(&mut drift, &pending.body.to_value(), live, &index.config);
    }
    drift
}

/// Compares every manifest the listing covers with its live object. Live objects without a
/// manifest are listed as unmanaged only when `show_unmanaged` (the `kubectl`-like default hides
/// them). Manifest problems and `errors` (failed listings) go into the report as they are.
pub fn check(
    index: &ManifestIndex,
    live: Vec<LiveObject>,
    coverage: &dyn Coverage,
    show_unmanaged: bool,
    errors: Vec<String>,
) -> DriftReport {
    let kustomize =
        (!index.kustomize.tree.kustomizations.is_empty()).then(|| super::report::KustomizeInfo {
            renderer: index.kustomize.renderer.clone(),
            roots: index
                .kustomize
                .roots
                .iter()
                .map(|r| crate::manifest::kustomize::shown(&index.root, r))
                .collect(),
        });
    let mut report = DriftReport {
        problems: index.problems().into_iter().cloned().collect(),
        errors,
        kustomize,
        pending: index.pending_upgrades(),
        ..DriftReport::default()
    };
    let mut live: HashMap<ObjectKey, LiveObject> =
        live.into_iter().map(|l| (l.key.clone(), l)).collect();
    let pairs: Vec<(&ManifestObject, Option<LiveObject>)> = index
        .objects()
        .filter(|manifest| coverage.covers(&manifest.key))
        .map(|manifest| (manifest, live.remove(&manifest.key)))
        .collect();
    let compare_pair = |(manifest, object): &(&ManifestObject, Option<LiveObject>)| match object {
        Some(object) => compare_in(index, manifest, object),
        None => missing(&manifest.key),
    };
    // Thousands of objects: every core takes a share (each compare is independent).
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let drifts: Vec<ObjectDrift> = if workers == 1 || pairs.len() < 256 {
        pairs.iter().map(compare_pair).collect()
    } else {
        let chunk = pairs.len().div_ceil(workers);
        std::thread::scope(|scope| {
            let handles: Vec<_> = pairs
                .chunks(chunk)
                .map(|share| {
                    (
                        share,
                        scope.spawn(move || share.iter().map(compare_pair).collect::<Vec<_>>()),
                    )
                })
                .collect();
            // A share whose worker died is computed again here, so that drifts stay in order.
            handles
                .into_iter()
                .flat_map(|(share, handle)| {
                    handle
                        .join()
                        .unwrap_or_else(|_| share.iter().map(compare_pair).collect())
                })
                .collect()
        })
    };
    for ((manifest, live), drift) in pairs.iter().zip(drifts) {
        report.add(drift, Some(manifest), Some(index));
        if let (Some(live), Some(reported)) = (live, report.objects.last_mut()) {
            // The instance label alone is not trusted here: no Application list is at hand.
            reported.owners = crate::gitops::owners_of_json(live.body.get("metadata"));
        }
    }
    if show_unmanaged {
        let mut rest: Vec<ObjectKey> = live
            .into_iter()
            .filter(|(_, object)| !made_by_the_cluster(object))
            .map(|(key, _)| key)
            .collect();
        rest.sort();
        for key in rest {
            report.add(unmanaged(&key), None, Some(index));
        }
    }
    report
}
