//! The identity of a Kubernetes object: (group, kind, namespace, name).
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

/// Identifies one object across the manifests and the cluster. `namespace` is empty for
/// cluster-scoped kinds; `group` is empty for the core group (`v1`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ObjectKey {
    pub group: SharedStr,
    pub kind: SharedStr,
    pub namespace: SharedStr,
    pub name: SharedStr,
}

/// An immutable string shared by the keys and manifests that hold it: tens of thousands of keys
/// are held at once (the index, the drift of each object), and their group, kind and namespace
/// are a handful of values. Reads as a `&str`; compares with `str` and `String`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SharedStr(Arc<str>);

impl SharedStr {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `text`, shared with every other `interned` copy of it in the process: for the words of
    /// a small vocabulary (condition types, statuses and reasons, kinds) that tens of thousands
    /// of rows repeat. Words no row holds any more are let go ([`crate::intern`]).
    pub fn interned(text: &str) -> SharedStr {
        static WORDS: std::sync::Mutex<crate::intern::Interner<str>> =
            std::sync::Mutex::new(crate::intern::Interner::new());
        let mut words = WORDS.lock().unwrap_or_else(|e| e.into_inner());
        SharedStr(words.text(text))
    }
}

impl std::ops::Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl Serialize for SharedStr {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl From<&str> for SharedStr {
    fn from(text: &str) -> SharedStr {
        SharedStr(Arc::from(text))
    }
}

impl From<String> for SharedStr {
    fn from(text: String) -> SharedStr {
        SharedStr(Arc::from(text))
    }
}

impl From<Arc<str>> for SharedStr {
    fn from(text: Arc<str>) -> SharedStr {
        SharedStr(text)
    }
}

impl From<SharedStr> for String {
    fn from(text: SharedStr) -> String {
        text.0.to_string()
    }
}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for SharedStr {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<SharedStr> for str {
    fn eq(&self, other: &SharedStr) -> bool {
        *self == *other.0
    }
}

impl PartialEq<SharedStr> for &str {
    fn eq(&self, other: &SharedStr) -> bool {
        **self == *other.0
    }
}

impl PartialEq<SharedStr> for String {
    fn eq(&self, other: &SharedStr) -> bool {
        **self == *other.0
    }
}

/// Kinds without a namespace; a manifest of these never takes `-n` or `default`.
const CLUSTER_SCOPED: &[&str] = &[
    "Namespace",
    "Node",
    "PersistentVolume",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "StorageClass",
    "PriorityClass",
    "IngressClass",
    "RuntimeClass",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "APIService",
];

impl ObjectKey {
    /// A core Secret: its values are never shown, only digests of them.
    pub fn is_secret(&self) -> bool {
        self.group.is_empty() && self.kind == "Secret"
    }

    pub fn new(group: &str, kind: &str, namespace: &str, name: &str) -> ObjectKey {
        ObjectKey {
            group: group.into(),
            kind: kind.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The key of a Kubernetes object (manifest or live), or `None` when `value` is not one
    /// (no `apiVersion`, `kind` or `metadata.name`). A missing namespace takes `default_namespace`
    /// (the `-n` flag, else `default`), as kubectl does.
    pub fn of_object(value: &Value, default_namespace: &str) -> Option<ObjectKey> {
        let api_version = value.get("apiVersion")?.as_str()?;
        let kind = value.get("kind")?.as_str()?;
        let metadata = value.get("metadata")?;
        let name = metadata.get("name")?.as_str()?;
        if kind.is_empty() || name.is_empty() {
            return None;
        }
        let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
        let namespace = if CLUSTER_SCOPED.contains(&kind) {
            ""
        } else {
            metadata
                .get("namespace")
                .and_then(Value::as_str)
                .filter(|ns| !ns.is_empty())
                .unwrap_or(default_namespace)
        };
        Some(ObjectKey::new(group, kind, namespace, name))
    }

    /// `deployment/web` style, as kubectl prints it (kind in lower case).
    pub fn type_name(&self) -> String {
        format!("{}/{}", self.kind.to_ascii_lowercase(), self.name)
    }
}

/// `deployment/shop/frontend`: kind in lower case, namespace (when namespaced), name.
impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind.to_ascii_lowercase();
        if self.namespace.is_empty() {
            write!(f, "{kind}/{}", self.name)
        } else {
            write!(f, "{kind}/{}/{}", self.namespace, self.name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_takes_group_from_api_version_and_default_namespace() {
        let deploy =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}});
        let key = ObjectKey::of_object(&deploy, "shop");
        assert_eq!(
            key,
            Some(ObjectKey::new("apps", "Deployment", "shop", "web"))
        );
        assert_eq!(
            key.map(|k| k.to_string()).as_deref(),
            Some("deployment/shop/web")
        );

        let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "prod"}});
        assert_eq!(
            ObjectKey::of_object(&svc, "default"),
            Some(ObjectKey::new("", "Service", "prod", "web"))
        );

        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}});
        assert_eq!(
            ObjectKey::of_object(&ns, "default")
                .map(|k| k.to_string())
                .as_deref(),
            Some("namespace/shop")
        );
    }

    #[test]
    fn yaml_that_is_not_an_object_has_no_key() {
        for value in [
            json!({"name": "x"}),
            json!([1, 2]),
            json!("text"),
            json!({"apiVersion": "v1", "kind": "X", "metadata": {}}),
        ] {
            assert_eq!(ObjectKey::of_object(&value, "default"), None);
        }
    }
}
