//! `SlimDeployment`: what the watcher decodes from each Deployment — only the fields a row needs.
//! `managedFields`, the pod template's details and annotations such as
//! `last-applied-configuration` are skipped while parsing, never allocated: at 1,000 watch
//! events a second and 10,000 objects per list, that is most of the decoding cost.
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::apps::v1::{
    DaemonSet, DaemonSetSpec, DaemonSetStatus, DaemonSetUpdateStrategy, DeploymentStatus,
    StatefulSet, StatefulSetSpec, StatefulSetStatus, StatefulSetUpdateStrategy,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

use super::rows::REVISION_ANNOTATION;

#[derive(Debug, Clone, Deserialize)]
pub struct SlimDeployment {
    #[serde(deserialize_with = "slim_meta", default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: Option<SlimDeploymentSpec>,
    #[serde(default)]
    pub status: Option<DeploymentStatus>,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SlimDeploymentSpec {
    pub replicas: Option<i32>,
    pub paused: Option<bool>,
    #[serde(default)]
    pub template: SlimTemplate,
}

#[derive(Debug, Clone, Deserialize, Default)]
pub struct SlimTemplate {
    #[serde(default)]
    pub spec: Option<SlimPodSpec>,
}

#[derive(Debug, Clone, Deserialize, Default)]
pub struct SlimPodSpec {
    #[serde(default)]
    pub containers: Vec<SlimContainer>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SlimContainer {
    pub image: Option<String>,
}

/// What the watcher decodes from each StatefulSet: the counts, revisions and update strategy
/// of its rollout, and its images.
#[derive(Debug, Clone, Deserialize)]
pub struct SlimStatefulSet {
    #[serde(deserialize_with = "slim_meta", default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: Option<SlimStatefulSetSpec>,
    #[serde(default)]
    pub status: Option<StatefulSetStatus>,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SlimStatefulSetSpec {
    pub replicas: Option<i32>,
    pub update_strategy: Option<StatefulSetUpdateStrategy>,
    #[serde(default)]
    pub template: SlimTemplate,
}

impl SlimStatefulSet {
    /// The object with only the fields decoded (for the rollout rules, which read objects).
    pub fn as_object(&self) -> StatefulSet {
        StatefulSet {
            metadata: self.metadata.clone(),
            spec: self.spec.as_ref().map(|s| StatefulSetSpec {
                replicas: s.replicas,
                update_strategy: s.update_strategy.clone(),
                ..StatefulSetSpec::default()
            }),
            status: self.status.clone(),
        }
    }
}

/// What the watcher decodes from each DaemonSet.
#[derive(Debug, Clone, Deserialize)]
pub struct SlimDaemonSet {
    #[serde(deserialize_with = "slim_meta", default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: Option<SlimDaemonSetSpec>,
    #[serde(default)]
    pub status: Option<DaemonSetStatus>,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SlimDaemonSetSpec {
    pub update_strategy: Option<DaemonSetUpdateStrategy>,
    #[serde(default)]
    pub template: SlimTemplate,
}

impl SlimDaemonSet {
    /// The object with only the fields decoded (for the rollout rules, which read objects).
    pub fn as_object(&self) -> DaemonSet {
        DaemonSet {
            metadata: self.metadata.clone(),
            spec: self.spec.as_ref().map(|s| DaemonSetSpec {
                update_strategy: s.update_strategy.clone(),
                ..DaemonSetSpec::default()
            }),
            status: self.status.clone(),
        }
    }
}

/// The metadata fields kept: identity, resourceVersion (the watcher resumes from it),
/// generation, creation time and the revision annotation.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SlimMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    generation: Option<i64>,
    creation_timestamp: Option<Time>,
    #[serde(default, deserialize_with = "revision_only")]
    annotations: Option<BTreeMap<String, String>>,
    #[serde(default, deserialize_with = "owner_labels")]
    labels: Option<BTreeMap<String, String>>,
}

pub(crate) fn slim_meta<'de, D: Deserializer<'de>>(d: D) -> Result<ObjectMeta, D::Error> {
    let m = SlimMeta::deserialize(d)?;
    Ok(ObjectMeta {
        name: m.name,
        namespace: m.namespace,
        uid: m.uid,
        resource_version: m.resource_version,
        generation: m.generation,
        creation_timestamp: m.creation_timestamp,
        annotations: m.annotations,
        labels: m.labels,
        ..ObjectMeta::default()
    })
}

/// Annotations, keeping only the revision and Argo CD's tracking id: other values are skipped
/// unread.
fn revision_only<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<BTreeMap<String, String>>, D::Error> {
    d.deserialize_option(KeptOnly(&[
        REVISION_ANNOTATION,
        crate::gitops::ARGO_TRACKING_ID,
    ]))
}

/// Labels, keeping only those that name a GitOps owner (see [`crate::gitops`]).
fn owner_labels<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<BTreeMap<String, String>>, D::Error> {
    d.deserialize_option(KeptOnly(&[
        crate::gitops::ARGO_INSTANCE_LABEL,
        crate::gitops::FLUX_KUSTOMIZE_NAME,
        crate::gitops::FLUX_KUSTOMIZE_NAMESPACE,
        crate::gitops::FLUX_HELM_NAME,
        crate::gitops::FLUX_HELM_NAMESPACE,
    ]))
}

/// A string map of which only the entries of these keys are read (the others skipped unread);
/// none kept is `None`, so most objects allocate nothing.
struct KeptOnly(&'static [&'static str]);

impl<'de> Visitor<'de> for KeptOnly {
    type Value = Option<BTreeMap<String, String>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map of strings")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut kept = BTreeMap::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if self.0.contains(&key.as_ref()) {
                kept.insert(key.into_owned(), map.next_value::<String>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok((!kept.is_empty()).then_some(kept))
    }
}

/// `kube::Resource` for a partial decoding of an `apps/v1` workload kind (the watcher's own
/// types), whose `ObjectMeta` sits at `$($meta).+`.
macro_rules! apps_resource {
    ($ty:ty, $kind:literal, $plural:literal, $($meta:ident).+) => {
        impl kube::Resource for $ty {
            type DynamicType = ();
            type Scope = k8s_openapi::NamespaceResourceScope;

            fn kind(_: &()) -> std::borrow::Cow<'_, str> {
                std::borrow::Cow::Borrowed($kind)
            }
            fn group(_: &()) -> std::borrow::Cow<'_, str> {
                std::borrow::Cow::Borrowed("apps")
            }
            fn version(_: &()) -> std::borrow::Cow<'_, str> {
                std::borrow::Cow::Borrowed("v1")
            }
            fn api_version(_: &()) -> std::borrow::Cow<'_, str> {
                std::borrow::Cow::Borrowed("apps/v1")
            }
            fn plural(_: &()) -> std::borrow::Cow<'_, str> {
                std::borrow::Cow::Borrowed($plural)
            }
            fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &self.$($meta).+
            }
            fn meta_mut(&mut self) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &mut self.$($meta).+
            }
        }
    };
}
pub(crate) use apps_resource;

apps_resource!(SlimDeployment, "Deployment", "deployments", metadata);

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_rows_need_and_drops_the_rest() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/kubernetes-1.20/deploy-after-client-apply.json"
        ))
        .unwrap();
        let full: serde_json::Value = serde_json::from_str(&text).unwrap();
        let slim: SlimDeployment = serde_json::from_str(&text).unwrap();
        assert_eq!(
            slim.metadata.name.as_deref(),
            full["metadata"]["name"].as_str()
        );
        assert_eq!(
            slim.metadata.resource_version.as_deref(),
            full["metadata"]["resourceVersion"].as_str()
        );
        assert!(slim.metadata.managed_fields.is_none());
        let annotations = slim.metadata.annotations.unwrap();
        assert_eq!(
            annotations.keys().collect::<Vec<_>>(),
            [REVISION_ANNOTATION]
        );
        let image = &slim.spec.unwrap().template.spec.unwrap().containers[0].image;
        assert_eq!(
            image.as_deref(),
            full["spec"]["template"]["spec"]["containers"][0]["image"].as_str()
        );
    }
}
