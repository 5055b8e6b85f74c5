//! [`Schemas`]: the schema of each kind by `apiVersion` and `kind`, from the server's OpenAPI v3
//! documents, else from the documents of a current server built into kdrift
//! ([`Schemas::builtin`], captured from Kubernetes 1.36).
use std::collections::HashMap;
use std::sync::OnceLock;

use super::Schema;
use super::openapi::{GroupVersionKind, OpenApiError, read_document};

/// One OpenAPI v3 document built into kdrift: its path below `/openapi/v3/` and its text.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinDocument {
    /// `api/v1`, `apis/apps/v1`.
    pub path: &'static str,
    pub json: &'static str,
}

macro_rules! builtin {
    ($($path:literal => $file:literal),* $(,)?) => {
        &[$(BuiltinDocument {
            path: $path,
            json: include_str!(concat!("../../data/openapi-v3/", $file, ".json")),
        }),*]
    };
}

/// The OpenAPI v3 documents of the built-in group-versions of a 1.36 server.
pub const BUILTIN_DOCUMENTS: &[BuiltinDocument] = builtin![
    "api/v1" => "api__v1",
    "apis/apps/v1" => "apis__apps__v1",
    "apis/batch/v1" => "apis__batch__v1",
    "apis/autoscaling/v2" => "apis__autoscaling__v2",
    "apis/autoscaling/v1" => "apis__autoscaling__v1",
    "apis/networking.k8s.io/v1" => "apis__networking.k8s.io__v1",
    "apis/policy/v1" => "apis__policy__v1",
    "apis/rbac.authorization.k8s.io/v1" => "apis__rbac.authorization.k8s.io__v1",
    "apis/scheduling.k8s.io/v1" => "apis__scheduling.k8s.io__v1",
    "apis/authentication.k8s.io/v1" => "apis__authentication.k8s.io__v1",
    "apis/authorization.k8s.io/v1" => "apis__authorization.k8s.io__v1",
    "apis/storage.k8s.io/v1" => "apis__storage.k8s.io__v1",
    "apis/apiextensions.k8s.io/v1" => "apis__apiextensions.k8s.io__v1",
];

/// The `/openapi/v3` index of the server the built-in documents come from.
pub const BUILTIN_INDEX: &str = include_str!("../../data/openapi-v3/index.json");

/// The schemas of kinds by `apiVersion` and `kind`. Cheap to clone next to a list of objects;
/// lookups borrow.
#[derive(Debug, Clone, Default)]
pub struct Schemas {
    by_version: HashMap<Box<str>, HashMap<Box<str>, Schema>>,
    /// Whether the built-in documents stand in for a kind none of `by_version` defines.
    builtin: bool,
}

type KindsOf = HashMap<Box<str>, Schema>;

/// The kinds of the built-in document of `api_version` (`v1`, `apps/v1`), read the first time one
/// is asked for: a process that only needs apps/v1 never reads (nor pages in) the other 3.5 MB.
fn builtin_kinds(api_version: &str) -> Option<&'static KindsOf> {
    const N: usize = BUILTIN_DOCUMENTS.len();
    static READ: [OnceLock<KindsOf>; N] = [const { OnceLock::new() }; N];
    let at = BUILTIN_DOCUMENTS
        .iter()
        .position(|d| api_version_of(d.path) == api_version)?;
    Some(READ[at].get_or_init(|| {
        // Built in and tested (`every_builtin_document_reads`): cannot fail.
        read_document(BUILTIN_DOCUMENTS[at].json.as_bytes())
            .unwrap_or_default()
            .iter()
            .map(|(gvk, schema)| (gvk.kind.clone().into_boxed_str(), *schema))
            .collect()
    }))
}

/// `v1` of `api/v1`, `apps/v1` of `apis/apps/v1`.
fn api_version_of(path: &str) -> &str {
    path.strip_prefix("apis/")
        .or_else(|| path.strip_prefix("api/"))
        .unwrap_or(path)
}

impl Schemas {
    pub fn new() -> Schemas {
        Schemas::default()
    }

    /// The built-in kinds of a current server (core, apps, batch, autoscaling/v2, networking,
    /// policy, RBAC, storage, apiextensions), from the documents built into kdrift, each read
    /// when a kind of it is first asked for.
    pub fn builtin() -> &'static Schemas {
        static BUILTIN: OnceLock<Schemas> = OnceLock::new();
        BUILTIN.get_or_init(|| Schemas {
            by_version: HashMap::new(),
            builtin: true,
        })
    }

    /// Adds (or replaces) the kinds of an OpenAPI v3 document; returns how many it defines.
    pub fn add_document(&mut self, bytes: &[u8]) -> Result<usize, OpenApiError> {
        let kinds = read_document(bytes)?;
        self.add(&kinds);
        Ok(kinds.len())
    }

    /// Adds (or replaces) these kinds.
    pub fn add(&mut self, kinds: &[(GroupVersionKind, Schema)]) {
        for (gvk, schema) in kinds {
            self.insert(gvk, *schema);
        }
    }

    pub fn insert(&mut self, gvk: &GroupVersionKind, schema: Schema) {
        self.by_version
            .entry(gvk.api_version().into_boxed_str())
            .or_default()
            .insert(gvk.kind.clone().into_boxed_str(), schema);
    }

    /// The schema of exactly this `apiVersion` and `kind`.
    pub fn get(&self, api_version: &str, kind: &str) -> Option<Schema> {
        if let Some(schema) = self.by_version.get(api_version).and_then(|k| k.get(kind)) {
            return Some(*schema);
        }
        if self.builtin {
            return builtin_kinds(api_version)?.get(kind).copied();
        }
        None
    }

    /// The schema of a kind: this version's, else another version's of the same group (a
    /// manifest of a version the documents lack keys its lists as the other does), else
    /// [`Schema::UNKNOWN`] (maps granular, lists atomic, as a server without a schema).
    pub fn root(&self, api_version: &str, kind: &str) -> Schema {
        if let Some(schema) = self.get(api_version, kind) {
            return schema;
        }
        let group = group_of(api_version);
        let added = self
            .by_version
            .iter()
            .filter(|(version, _)| group_of(version) == group)
            .find_map(|(_, kinds)| kinds.get(kind).copied());
        let builtin = || {
            BUILTIN_DOCUMENTS
                .iter()
                .map(|d| api_version_of(d.path))
                .filter(|version| self.builtin && group_of(version) == group)
                .find_map(|version| builtin_kinds(version)?.get(kind).copied())
        };
        added.or_else(builtin).unwrap_or(Schema::UNKNOWN)
    }

    /// Whether no kind is known.
    pub fn is_empty(&self) -> bool {
        self.by_version.is_empty() && !self.builtin
    }

    /// Every kind known, in no order (the built-in documents are all read).
    pub fn kinds(&self) -> impl Iterator<Item = (&str, &str)> {
        let added = self.by_version.iter().flat_map(|(version, kinds)| {
            kinds
                .keys()
                .map(move |kind| (version.as_ref(), kind.as_ref()))
        });
        let builtin = BUILTIN_DOCUMENTS
            .iter()
            .filter(|_| self.builtin)
            .map(|d| api_version_of(d.path))
            .flat_map(|version| {
                builtin_kinds(version)
                    .into_iter()
                    .flat_map(move |kinds| kinds.keys().map(move |kind| (version, kind.as_ref())))
            })
            .filter(|(version, kind)| {
                !self
                    .by_version
                    .get(*version)
                    .is_some_and(|k| k.contains_key(*kind))
            });
        added.chain(builtin)
    }
}

/// `apps` of `apps/v1`, `""` of `v1`.
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}
