//! CustomResourceDefinitions make their custom resources served: a stored definition becomes a
//! resource type per served version (routing, discovery, the store) with its schema, and an
//! OpenAPI v3 document per group-version. Made again whenever a definition is written or
//! deleted; a definition whose spec did not change keeps its types.
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;

use super::Entry;
use crate::openapi_v3::{CustomKind, Document, custom_document};
use crate::resources::{ResourceDef, ResourceType};
use crate::schema::openapi::read_document;

/// The custom types and documents of the definitions stored.
#[derive(Default)]
pub struct Custom {
    pub types: Vec<ResourceType>,
    pub documents: Vec<Arc<Document>>,
    /// By group-version: what its types and document were made from, to reuse them.
    made: HashMap<(String, String), Made>,
}

struct Made {
    /// The (name, uid, generation) of each definition of the group-version.
    from: Vec<(String, String, u64)>,
    types: Vec<ResourceType>,
    document: Option<Arc<Document>>,
}

/// One served version of one definition.
struct Served {
    name: String,
    uid: String,
    generation: u64,
    group: String,
    version: String,
    kind: String,
    plural: String,
    singular: String,
    namespaced: bool,
    short_names: Vec<String>,
    categories: Vec<String>,
    subresources: Vec<&'static str>,
    schema: Option<Value>,
    printer_columns: Vec<crate::resources::PrinterColumn>,
}

/// A version's `additionalPrinterColumns`.
fn printer_columns(version: &Value) -> Vec<crate::resources::PrinterColumn> {
    version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| crate::resources::PrinterColumn {
            name: text(c, "/name").to_owned(),
            type_: text(c, "/type").to_owned(),
            format: text(c, "/format").to_owned(),
            description: text(c, "/description").to_owned(),
            priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
            json_path: text(c, "/jsonPath").to_owned(),
        })
        .collect()
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn strings(value: &Value, pointer: &str) -> Vec<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn served(crd: &Value) -> Vec<Served> {
    let (group, plural, kind) = (
        text(crd, "/spec/group"),
        text(crd, "/spec/names/plural"),
        text(crd, "/spec/names/kind"),
    );
    if group.is_empty() || plural.is_empty() || kind.is_empty() {
        return Vec::new();
    }
    let singular = match text(crd, "/spec/names/singular") {
        "" => kind.to_ascii_lowercase(),
        s => s.to_owned(),
    };
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v.get("served") != Some(&Value::Bool(false)));
    versions
        .filter_map(|v| {
            let version = v.get("name")?.as_str()?.to_owned();
            let mut subresources = Vec::new();
            if v.pointer("/subresources/scale").is_some() {
                subresources.push("scale");
            }
            if v.pointer("/subresources/status").is_some() {
                subresources.push("status");
            }
            Some(Served {
                name: text(crd, "/metadata/name").to_owned(),
                uid: text(crd, "/metadata/uid").to_owned(),
                generation: crd
                    .pointer("/metadata/generation")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                group: group.to_owned(),
                version,
                kind: kind.to_owned(),
                plural: plural.to_owned(),
                singular: singular.clone(),
                namespaced: text(crd, "/spec/scope") != "Cluster",
                short_names: strings(crd, "/spec/names/shortNames"),
                categories: strings(crd, "/spec/names/categories"),
                subresources,
                schema: v.pointer("/schema/openAPIV3Schema").cloned(),
                printer_columns: printer_columns(v),
            })
        })
        .collect()
}

fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

fn leak_all(texts: &[String]) -> &'static [&'static str] {
    Box::leak(
        texts
            .iter()
            .map(|t| leak(t))
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    )
}

/// The types and document of one group-version's definitions.
fn make(served: &[&Served]) -> (Vec<ResourceType>, Option<Arc<Document>>) {
    let kinds: Vec<CustomKind<'_>> = served
        .iter()
        .map(|s| CustomKind {
            group: &s.group,
            version: &s.version,
            kind: &s.kind,
            plural: &s.plural,
            namespaced: s.namespaced,
            schema: s.schema.as_ref(),
        })
        .collect();
    let document = custom_document(&kinds).map(Arc::new);
    let schemas = document.as_ref().and_then(|d| read_document(&d.json).ok());
    let types = served
        .iter()
        .map(|s| {
            let schema = schemas
                .iter()
                .flat_map(|kinds| kinds.iter())
                .find(|(gvk, _)| gvk.kind == s.kind)
                .map(|(_, schema)| *schema)
                .unwrap_or(crate::schema::Schema::UNKNOWN);
            ResourceType::define(ResourceDef {
                group: leak(&s.group),
                version: leak(&s.version),
                kind: leak(&s.kind),
                plural: leak(&s.plural),
                singular: leak(&s.singular),
                namespaced: s.namespaced,
                short_names: leak_all(&s.short_names),
                categories: leak_all(&s.categories),
                subresources: Box::leak(s.subresources.clone().into_boxed_slice()),
                verbs: &[
                    "delete",
                    "deletecollection",
                    "get",
                    "list",
                    "patch",
                    "create",
                    "update",
                    "watch",
                ],
                storage_version_hash: "",
                schema: Some(schema),
                printer_columns: Box::leak(s.printer_columns.clone().into_boxed_slice()),
            })
        })
        .collect();
    (types, document)
}

impl Custom {
    /// Makes the custom types again from the definitions stored.
    pub fn refresh(&mut self, crds: Option<&BTreeMap<(String, String), Arc<Entry>>>) {
        let all: Vec<Served> = crds
            .into_iter()
            .flat_map(|m| m.values())
            .flat_map(|e| served(&e.value()))
            .collect();
        let mut by_version: BTreeMap<(String, String), Vec<&Served>> = BTreeMap::new();
        for s in &all {
            by_version
                .entry((s.group.clone(), s.version.clone()))
                .or_default()
                .push(s);
        }
        let mut made = HashMap::new();
        let (mut types, mut documents) = (Vec::new(), Vec::new());
        for (gv, served) in by_version {
            let from: Vec<(String, String, u64)> = served
                .iter()
                .map(|s| (s.name.clone(), s.uid.clone(), s.generation))
                .collect();
            let entry = match self.made.remove(&gv) {
                Some(old) if old.from == from => old,
                _ => {
                    let (types, document) = make(&served);
                    Made {
                        from,
                        types,
                        document,
                    }
                }
            };
            types.extend(entry.types.iter().copied());
            documents.extend(entry.document.clone());
            made.insert(gv, entry);
        }
        self.made = made;
        self.types = types;
        self.documents = documents;
    }
}
