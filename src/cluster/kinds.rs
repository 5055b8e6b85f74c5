//! The kinds the cluster serves, as kubectl's REST mapper knows them: for each group the
//! manifests use, every resource of its versions with its plural, scope and the names kubectl
//! accepts for it (kind, singular, plural, short names), read from discovery (`/api`, `/apis`,
//! one resource list per group-version). `TYPE/NAME` arguments are read against them too.
use std::collections::BTreeSet;
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList;
use kube::Client;
use kube::api::{ApiResource, GroupVersionKind};

/// A kind the cluster serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedKind {
    /// `""` for the core group.
    pub group: String,
    pub version: String,
    pub kind: String,
    /// The resource in URLs (`deployments`).
    pub plural: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub namespaced: bool,
    pub verbs: Vec<String>,
    /// Whether the group lists this version first (its preferred version).
    pub preferred: bool,
}

impl ServedKind {
    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `deployments.apps`, as kubectl names the resource in its messages.
    pub fn resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// kube's description of the resource, for `Api::<DynamicObject>`.
    pub fn api_resource(&self) -> ApiResource {
        let gvk = GroupVersionKind::gvk(&self.group, &self.version, &self.kind);
        ApiResource::from_gvk_with_plural(&gvk, &self.plural)
    }

    /// Does `name` (lower case, without group) name this kind, as kubectl reads a type?
    pub fn is_named(&self, name: &str) -> bool {
        name == self.plural
            || name == self.singular
            || name == self.kind.to_ascii_lowercase()
            || self.short_names.iter().any(|s| s == name)
    }

    pub fn can(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
}

impl fmt::Display for ServedKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in {}", self.kind, self.api_version())
    }
}

/// Why discovery failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the API server's discovery ({what}): {reason}")]
pub struct DiscoveryError {
    pub what: String,
    pub reason: String,
}

/// The served kinds of some groups of a cluster.
#[derive(Debug, Clone, Default)]
pub struct ServedKinds {
    kinds: Vec<ServedKind>,
    /// The groups discovered, and the versions each serves.
    groups: Vec<(String, Vec<String>)>,
}

fn describe(error: &kube::Error) -> String {
    crate::cluster::describe(error)
}

impl ServedKinds {
    /// Reads discovery for `groups` (`""` is the core group): `/api`, `/apis`, then the
    /// resources of every version those groups serve.
    pub async fn discover(
        client: &Client,
        groups: &BTreeSet<String>,
    ) -> Result<ServedKinds, DiscoveryError> {
        let error = |what: &str, e: kube::Error| DiscoveryError {
            what: what.to_owned(),
            reason: describe(&e),
        };
        let mut served = ServedKinds::default();
        if groups.contains("") {
            let core = client
                .list_core_api_versions()
                .await
                .map_err(|e| error("/api", e))?;
            let versions = core.versions.clone();
            for (i, version) in versions.iter().enumerate() {
                let list = client
                    .list_core_api_resources(version)
                    .await
                    .map_err(|e| error(&format!("/api/{version}"), e))?;
                served.add("", version, i == 0, &list);
            }
            served.groups.push((String::new(), versions));
        }
        if groups.iter().any(|g| !g.is_empty()) {
            let list = client
                .list_api_groups()
                .await
                .map_err(|e| error("/apis", e))?;
            for group in list.groups.iter().filter(|g| groups.contains(&g.name)) {
                let preferred = group.preferred_version.as_ref().map(|p| p.version.clone());
                let mut versions = Vec::new();
                for version in &group.versions {
                    let resources = client
                        .list_api_group_resources(&version.group_version)
                        .await
                        .map_err(|e| error(&format!("/apis/{}", version.group_version), e))?;
                    let is_preferred = preferred.as_deref() == Some(version.version.as_str());
                    served.add(&group.name, &version.version, is_preferred, &resources);
                    versions.push(version.version.clone());
                }
                served.groups.push((group.name.clone(), versions));
            }
        }
        Ok(served)
    }

    /// These kinds and `other`'s (discovered for other groups).
    pub fn extend(&mut self, other: ServedKinds) {
        self.kinds.extend(other.kinds);
        self.groups.extend(other.groups);
    }

    fn add(&mut self, group: &str, version: &str, preferred: bool, list: &APIResourceList) {
        for r in list.resources.iter().filter(|r| !r.name.contains('/')) {
            self.kinds.push(ServedKind {
                group: group.to_owned(),
                version: version.to_owned(),
                kind: r.kind.clone(),
                plural: r.name.clone(),
                singular: if r.singular_name.is_empty() {
                    r.kind.to_ascii_lowercase()
                } else {
                    r.singular_name.clone()
                },
                short_names: r.short_names.clone().unwrap_or_default(),
                namespaced: r.namespaced,
                verbs: r.verbs.clone(),
                preferred,
            });
        }
    }

    /// A set of kinds as discovery would give them (tests, and callers that know them).
    pub fn from_kinds(kinds: Vec<ServedKind>) -> ServedKinds {
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for k in &kinds {
            match groups.iter_mut().find(|(g, _)| *g == k.group) {
                Some((_, versions)) if !versions.contains(&k.version) => {
                    versions.push(k.version.clone())
                }
                Some(_) => {}
                None => groups.push((k.group.clone(), vec![k.version.clone()])),
            }
        }
        ServedKinds { kinds, groups }
    }

    /// The kind of objects of `apiVersion` and `kind`.
    pub fn get(&self, api_version: &str, kind: &str) -> Option<&ServedKind> {
        let (group, version) = split_api_version(api_version);
        self.kinds
            .iter()
            .find(|k| k.group == group && k.version == version && k.kind == kind)
    }

    /// Whether `group` was discovered (served by the cluster), and which versions it serves.
    pub fn group_versions(&self, group: &str) -> Option<&[String]> {
        self.groups
            .iter()
            .find(|(g, _)| g == group)
            .map(|(_, v)| v.as_slice())
    }

    /// Whether objects of `group` and `kind` are namespaced (`None`: not served).
    pub fn namespaced(&self, group: &str, kind: &str) -> Option<bool> {
        self.kinds
            .iter()
            .find(|k| k.group == group && k.kind == kind)
            .map(|k| k.namespaced)
    }

    /// Why a manifest's `apiVersion` and `kind` is not served, worded for the person reading:
    /// `None` when it is.
    pub fn unserved(&self, api_version: &str, kind: &str) -> Option<String> {
        if self.get(api_version, kind).is_some() {
            return None;
        }
        let (group, _) = split_api_version(api_version);
        let others: Vec<String> = self
            .kinds
            .iter()
            .filter(|k| k.group == group && k.kind == kind)
            .map(ServedKind::api_version)
            .collect();
        Some(if !others.is_empty() {
            format!(
                "no kind {kind} in {api_version} on this cluster (it serves {kind} in {})",
                others.join(", ")
            )
        } else if group.contains('.') && !group.ends_with(".k8s.io") {
            format!(
                "no kind {kind} in {api_version} on this cluster — is its CustomResourceDefinition installed?"
            )
        } else {
            format!("no kind {kind} in {api_version} on this cluster")
        })
    }

    /// Every kind discovered.
    pub fn iter(&self) -> impl Iterator<Item = &ServedKind> {
        self.kinds.iter()
    }

    /// The kind a `TYPE` of `TYPE/NAME` names, as kubectl reads it: `deployment`, `deploy`,
    /// `deployments`, `deployments.apps`, `deployments.v1.apps`, `cm`, `widgets.example.com`,
    /// case-insensitive; the preferred version of a group when several serve the kind.
    pub fn parse_type(&self, text: &str) -> Option<&ServedKind> {
        let lower = text.to_ascii_lowercase();
        let candidates = self.kinds.iter().filter(|k| {
            if k.is_named(&lower) {
                return true;
            }
            // `plural.group`, `plural.version.group`, `kind.group`.
            match lower.split_once('.') {
                Some((base, rest)) => {
                    k.is_named(base)
                        && (rest == k.group || rest == format!("{}.{}", k.version, k.group))
                }
                None => false,
            }
        });
        // The core and built-in groups first, as kubectl prefers them for short names; then
        // the preferred version.
        candidates.min_by_key(|k| {
            (
                !(k.group.is_empty() || !k.group.contains('.') || k.group.ends_with(".k8s.io")),
                !k.preferred,
            )
        })
    }
}

/// `("apps", "v1")` of `apps/v1`, `("", "v1")` of `v1`.
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

/// Maps the manifests' kinds through `kinds`: scope, or why one is not served.
pub fn map_kinds(index: &mut crate::manifest::ManifestIndex, kinds: &ServedKinds) {
    index.set_kinds(|api_version, kind| match kinds.get(api_version, kind) {
        Some(served) => Ok(served.namespaced),
        None => Err(kinds
            .unserved(api_version, kind)
            .unwrap_or_else(|| format!("no kind {kind} in {api_version} on this cluster"))),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(group: &str, version: &str, kind: &str, plural: &str, short: &[&str]) -> ServedKind {
        ServedKind {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: kind.to_ascii_lowercase(),
            short_names: short.iter().map(|s| s.to_string()).collect(),
            namespaced: true,
            verbs: vec!["list".into()],
            preferred: true,
        }
    }

    fn served() -> ServedKinds {
        ServedKinds::from_kinds(vec![
            kind("apps", "v1", "Deployment", "deployments", &["deploy"]),
            kind("", "v1", "ConfigMap", "configmaps", &["cm"]),
            kind("", "v1", "Service", "services", &["svc"]),
            kind("example.com", "v1", "Widget", "widgets", &["wd"]),
            kind(
                "serving.knative.dev",
                "v1",
                "Service",
                "services",
                &["ksvc"],
            ),
        ])
    }

    #[test]
    fn types_are_read_as_kubectl_reads_them() {
        let served = served();
        for (text, expected) in [
            ("deploy", "Deployment"),
            ("deployments.apps", "Deployment"),
            ("deployments.v1.apps", "Deployment"),
            ("Deployment", "Deployment"),
            ("cm", "ConfigMap"),
            ("configmap", "ConfigMap"),
            ("wd", "Widget"),
            ("widgets.example.com", "Widget"),
            ("widget.example.com", "Widget"),
        ] {
            assert_eq!(
                served.parse_type(text).map(|k| k.kind.as_str()),
                Some(expected),
                "{text}"
            );
        }
        // A name two groups share goes to the built-in one, as with kubectl.
        assert_eq!(
            served.parse_type("services").map(|k| k.group.as_str()),
            Some("")
        );
        assert_eq!(
            served
                .parse_type("services.serving.knative.dev")
                .map(|k| k.group.as_str()),
            Some("serving.knative.dev")
        );
        assert!(served.parse_type("gadgets").is_none());
    }

    #[test]
    fn an_unserved_kind_says_what_to_check() {
        let served = served();
        assert_eq!(served.unserved("apps/v1", "Deployment"), None);
        let crd = served
            .unserved("ops.example.com/v1", "BackupPolicy")
            .unwrap_or_default();
        assert!(
            crd.contains("is its CustomResourceDefinition installed?"),
            "{crd}"
        );
        let version = served
            .unserved("example.com/v2", "Widget")
            .unwrap_or_default();
        assert!(
            version.contains("it serves Widget in example.com/v1"),
            "{version}"
        );
    }
}
