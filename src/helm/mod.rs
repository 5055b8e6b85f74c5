//! Helm, as a source of desired state: release records decoded ([`record`]) and chosen
//! ([`select`]) without the cluster's IO (`cluster/helm.rs` lists them), the source each
//! release's objects are shown with, and what of Helm's own bookkeeping is never drift; charts
//! of the checkout and their values ([`chart`]), rendered by the user's helm ([`render`]).
//!
//! A release's `manifest` is what helm applied: the desired state of every object it names,
//! in the release's namespace where an object names none (`manifest/helm.rs` indexes it).
pub mod chart;
pub mod record;
pub mod render;
pub mod rollback;
pub mod select;

use std::sync::Arc;

use serde_json::Value;

pub use record::{ChartMeta, RecordError, Release, Status, Storage};
pub use select::{Chosen, RecordMeta};

/// The label helm puts on every record.
pub const OWNER_LABEL: &str = "owner=helm";
/// The type of helm's release Secrets.
pub const SECRET_TYPE: &str = "helm.sh/release.v1";
/// The annotation that makes a template a hook.
pub const HOOK_ANNOTATION: &str = "helm.sh/hook";

/// The releases read from a cluster, and the records that could not be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Releases {
    pub releases: Vec<Arc<Release>>,
    /// One line per record that did not decode (`secret/NS/NAME: why`) or listing that failed.
    pub problems: Vec<String>,
    /// Release records that were not read, and why (a listing RBAC refuses): a release there
    /// may have drifted unseen, so a check that has these is not green.
    pub unread: Vec<String>,
}

impl Release {
    /// `helm:NS/RELEASE rev N (chart NAME-VERSION)`: the source of the release's objects. A
    /// revision that is not deployed says its status; a newer one that failed or is pending is
    /// said after the chart.
    pub fn source(&self) -> String {
        let status = match self.status {
            Status::Deployed => String::new(),
            ref other => format!(" {other}"),
        };
        let newer = match &self.newer {
            Some((revision, status)) => format!("; rev {revision} {status}"),
            None => String::new(),
        };
        format!(
            "helm:{}/{} rev {}{status} (chart {}{newer})",
            self.namespace,
            self.name,
            self.revision,
            self.chart_label()
        )
    }

    /// `NAME-VERSION`, as helm's `helm.sh/chart` label and `helm list` write a chart.
    pub fn chart_label(&self) -> String {
        if self.chart.version.is_empty() {
            self.chart.name.clone()
        } else {
            format!("{}-{}", self.chart.name, self.chart.version)
        }
    }

    /// The field manager helm writes with, in words: helm 4 applies server-side, helm 3 patches.
    pub fn manager_words(&self) -> &'static str {
        if self.server_side() {
            "helm applied it server-side as field manager \"helm\" (operation Apply)"
        } else {
            "helm patched it as field manager \"helm\" (operation Update, a three-way merge)"
        }
    }
}

/// The label helm puts on every object it installs (`setMetadataVisitor` in helm's
/// `pkg/action/validate.go`), beside [`RELEASE_NAME_ANNOTATION`] and
/// [`RELEASE_NAMESPACE_ANNOTATION`].
pub const MANAGED_BY_LABEL: (&str, &str) = ("app.kubernetes.io/managed-by", "Helm");
pub const RELEASE_NAME_ANNOTATION: &str = "meta.helm.sh/release-name";
pub const RELEASE_NAMESPACE_ANNOTATION: &str = "meta.helm.sh/release-namespace";

/// The field manager helm writes with, both helm 3 (Update) and helm 4 (Apply).
pub const FIELD_MANAGER: &str = "helm";

impl Release {
    /// `object` (one document of the manifest) as helm sends it to the server: with the
    /// `managed-by` label and the release annotations helm adds to every object. The release's
    /// manifest leaves them out; they are what helm applied all the same.
    pub fn as_applied(&self, object: &mut Value) {
        Release::add_metadata(&self.name, &self.namespace, object)
    }

    /// [`Release::as_applied`] for release `name` in `namespace`.
    pub fn add_metadata(name: &str, namespace: &str, object: &mut Value) {
        let Some(metadata) = object
            .as_object_mut()
            .map(|o| {
                o.entry("metadata")
                    .or_insert_with(|| Value::Object(Default::default()))
            })
            .and_then(Value::as_object_mut)
        else {
            return;
        };
        let mut put = |map: &str, key: &str, value: &str| {
            let entry = metadata
                .entry(map)
                .or_insert_with(|| Value::Object(Default::default()));
            if entry.is_null() {
                *entry = Value::Object(Default::default());
            }
            if let Some(map) = entry.as_object_mut() {
                map.insert(key.to_owned(), Value::String(value.to_owned()));
            }
        };
        put("labels", MANAGED_BY_LABEL.0, MANAGED_BY_LABEL.1);
        put("annotations", RELEASE_NAME_ANNOTATION, name);
        put("annotations", RELEASE_NAMESPACE_ANNOTATION, namespace);
    }

    /// What a revert to the release says: which manager it writes as and why a later
    /// `helm upgrade` is unaffected.
    pub fn revert_note(&self) -> String {
        format!(
            "{}: reverted as field manager \"{FIELD_MANAGER}\" because {}; the fields are helm's own again, so a later `helm upgrade` or `helm rollback` is unaffected (applied as kdrift, helm 4's next upgrade would conflict on them)",
            self.source(),
            self.manager_words()
        )
    }
}

/// True for an object that is Helm's own bookkeeping rather than something a chart describes:
/// a release record (a Secret of type `helm.sh/release.v1`, or a ConfigMap of the ConfigMap
/// driver) and a hook's object (a test pod, a migration Job), which helm runs rather than keeps.
pub fn is_bookkeeping(live: &Value) -> bool {
    let hook = live
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(HOOK_ANNOTATION))
        .is_some();
    is_release_record(live) || hook
}

/// True for a release record: a Secret of type `helm.sh/release.v1`, or a ConfigMap of the
/// ConfigMap driver (labelled `owner: helm`, named `sh.helm.release.v1.…`).
pub fn is_release_record(live: &Value) -> bool {
    let kind = live.get("kind").and_then(Value::as_str).unwrap_or_default();
    let metadata = live.get("metadata");
    let label = |name: &str| {
        metadata
            .and_then(|m| m.get("labels"))
            .and_then(|l| l.get(name))
            .and_then(Value::as_str)
    };
    let named_as_record = metadata
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .is_some_and(|n| n.starts_with("sh.helm.release.v1."));
    match kind {
        "Secret" => {
            live.get("type").and_then(Value::as_str) == Some(SECRET_TYPE)
                || (label("owner") == Some("helm") && named_as_record)
        }
        "ConfigMap" => label("owner") == Some("helm") && named_as_record,
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn release(status: Status, newer: Option<(u64, Status)>) -> Release {
        Release {
            name: "web".into(),
            namespace: "shop".into(),
            revision: 2,
            status,
            description: String::new(),
            last_deployed: None,
            chart: ChartMeta {
                name: "podinfo".into(),
                version: "6.14.1".into(),
                app_version: None,
            },
            config: serde_json::json!({}),
            manifest: String::new(),
            hooks: Vec::new(),
            apply_method: None,
            newer,
            pending: None,
        }
    }

    #[test]
    fn the_source_names_release_revision_chart_and_any_status_that_is_not_deployed() {
        assert_eq!(
            release(Status::Deployed, None).source(),
            "helm:shop/web rev 2 (chart podinfo-6.14.1)"
        );
        assert_eq!(
            release(Status::Failed, None).source(),
            "helm:shop/web rev 2 failed (chart podinfo-6.14.1)"
        );
        assert_eq!(
            release(Status::Deployed, Some((3, Status::PendingUpgrade))).source(),
            "helm:shop/web rev 2 (chart podinfo-6.14.1; rev 3 pending-upgrade)"
        );
    }

    #[test]
    fn an_object_is_desired_with_the_label_and_annotations_helm_adds() {
        let mut object = serde_json::json!({"kind": "Service", "metadata": {"name": "web",
            "labels": {"app": "web"}, "annotations": null}});
        release(Status::Deployed, None).as_applied(&mut object);
        assert_eq!(
            object["metadata"],
            serde_json::json!({"name": "web",
                "labels": {"app": "web", "app.kubernetes.io/managed-by": "Helm"},
                "annotations": {"meta.helm.sh/release-name": "web",
                    "meta.helm.sh/release-namespace": "shop"}})
        );
    }

    #[test]
    fn records_and_hooks_are_bookkeeping_and_a_chart_object_is_not() {
        let secret = serde_json::json!({"kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": "sh.helm.release.v1.web.v1"}});
        let configmap = serde_json::json!({"kind": "ConfigMap",
            "metadata": {"name": "sh.helm.release.v1.web.v1", "labels": {"owner": "helm"}}});
        let hook = serde_json::json!({"kind": "Pod",
            "metadata": {"name": "web-test", "annotations": {"helm.sh/hook": "test"}}});
        let deployment = serde_json::json!({"kind": "Deployment", "metadata": {"name": "web",
            "labels": {"app.kubernetes.io/managed-by": "Helm"},
            "annotations": {"meta.helm.sh/release-name": "web"}}});
        let plain = serde_json::json!({"kind": "ConfigMap", "metadata": {"name": "settings",
            "labels": {"owner": "helm"}}});
        assert!(is_bookkeeping(&secret));
        assert!(is_bookkeeping(&configmap));
        assert!(is_bookkeeping(&hook));
        assert!(!is_bookkeeping(&deployment));
        assert!(!is_bookkeeping(&plain));
    }
}
