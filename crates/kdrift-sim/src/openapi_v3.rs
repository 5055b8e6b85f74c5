//! `/openapi/v3`: the documents a 1.36 server publishes for the built-in group-versions (the
//! same documents kdrift falls back on), and one made for each custom resource group-version
//! from its CustomResourceDefinition, as the apiextensions server makes them: the kind's schema
//! with `apiVersion`, `kind` and `metadata` added, its list kind, the meta definitions they
//! refer to, and the paths of its operations with the query parameters each write accepts
//! (kubectl reads `fieldValidation` there to validate on the server).
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use serde_json::{Map, Value, json};

use crate::schema::BUILTIN_DOCUMENTS;

/// One OpenAPI v3 document, served at `/openapi/v3/{path}?hash={hash}`.
#[derive(Debug, Clone)]
pub struct Document {
    /// `api/v1`, `apis/example.com/v1`.
    pub path: String,
    pub json: Bytes,
    /// A digest of the text, as the index pins it.
    pub hash: String,
}

impl Document {
    pub fn new(path: String, json: Bytes) -> Document {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        json.hash(&mut hasher);
        Document {
            path,
            json,
            hash: format!("{:016X}", hasher.finish()),
        }
    }
}

/// The documents of the built-in group-versions.
pub fn builtin() -> &'static [Arc<Document>] {
    static DOCUMENTS: OnceLock<Vec<Arc<Document>>> = OnceLock::new();
    DOCUMENTS.get_or_init(|| {
        BUILTIN_DOCUMENTS
            .iter()
            .map(|d| {
                Arc::new(Document::new(
                    d.path.to_owned(),
                    Bytes::from_static(d.json.as_bytes()),
                ))
            })
            .collect()
    })
}

/// `/openapi/v3`: where each document is.
pub fn index<'a>(documents: impl Iterator<Item = &'a Arc<Document>>) -> Value {
    let mut paths = Map::new();
    for d in documents {
        paths.insert(
            d.path.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{}?hash={}", d.path, d.hash)}),
        );
    }
    json!({ "paths": paths })
}

/// The definitions of the core document, for the meta types every document repeats.
fn core_definitions() -> &'static Map<String, Value> {
    static CORE: OnceLock<Map<String, Value>> = OnceLock::new();
    CORE.get_or_init(|| {
        BUILTIN_DOCUMENTS
            .iter()
            .find(|d| d.path == "api/v1")
            .and_then(|d| serde_json::from_str::<Value>(d.json).ok())
            .and_then(|v| v.pointer("/components/schemas").cloned())
            .and_then(|v| match v {
                Value::Object(map) => Some(map),
                _ => None,
            })
            .unwrap_or_default()
    })
}

const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.";

/// Every definition `value` refers to, and those they refer to.
fn referred(value: &Value, definitions: &Map<String, Value>, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref")
                && let Some(name) = target.strip_prefix("#/components/schemas/")
                && out.insert(name.to_owned())
                && let Some(definition) = definitions.get(name)
            {
                referred(definition, definitions, out);
            }
            map.values().for_each(|v| referred(v, definitions, out));
        }
        Value::Array(items) => items.iter().for_each(|v| referred(v, definitions, out)),
        _ => {}
    }
}

fn reference(name: &str) -> Value {
    json!({"allOf": [{"$ref": format!("#/components/schemas/{name}")}]})
}

/// `com.example.v1.Widget`: the group reversed, the version, the kind.
pub fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.rsplit('.').collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// What a custom resource document describes.
pub struct CustomKind<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub plural: &'a str,
    pub namespaced: bool,
    /// The version's `schema.openAPIV3Schema` (an object schema), if it has one.
    pub schema: Option<&'a Value>,
}

/// The document of a custom resource group-version (`apis/{group}/{version}`).
pub fn custom_document(kinds: &[CustomKind<'_>]) -> Option<Document> {
    let first = kinds.first()?;
    let (group, version) = (first.group, first.version);
    let mut schemas = Map::new();
    let mut paths = Map::new();
    for k in kinds {
        let name = definition_name(group, version, k.kind);
        let gvk = json!([{"group": group, "kind": k.kind, "version": version}]);
        let mut object = match k.schema {
            Some(Value::Object(schema)) => schema.clone(),
            _ => {
                let mut open = Map::new();
                open.insert("type".into(), json!("object"));
                open.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
                open
            }
        };
        let properties = object
            .entry("properties")
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        let mut with_meta = Map::new();
        with_meta.insert("apiVersion".into(), json!({"type": "string"}));
        with_meta.insert("kind".into(), json!({"type": "string"}));
        with_meta.insert("metadata".into(), reference(&format!("{META}ObjectMeta")));
        for (field, schema) in properties {
            if !matches!(field.as_str(), "apiVersion" | "kind" | "metadata") {
                with_meta.insert(field, schema);
            }
        }
        object.insert("properties".into(), Value::Object(with_meta));
        object.insert("x-kubernetes-group-version-kind".into(), gvk.clone());
        schemas.insert(name.clone(), Value::Object(object));
        schemas.insert(
            format!("{name}List"),
            json!({
                "type": "object",
                "required": ["items"],
                "properties": {
                    "apiVersion": {"type": "string"},
                    "items": {"type": "array", "items": {"$ref": format!("#/components/schemas/{name}")}},
                    "kind": {"type": "string"},
                    "metadata": reference(&format!("{META}ListMeta")),
                },
                "x-kubernetes-group-version-kind": [{"group": group, "kind": format!("{}List", k.kind), "version": version}],
            }),
        );
        operations(k, &name, &gvk[0], &mut paths);
    }
    let core = core_definitions();
    let mut wanted = BTreeSet::new();
    for root in ["ObjectMeta", "ListMeta", "Status", "DeleteOptions", "Patch"] {
        let name = format!("{META}{root}");
        if let Some(definition) = core.get(&name) {
            referred(definition, core, &mut wanted);
        }
        wanted.insert(name);
    }
    for name in wanted {
        if let Some(definition) = core.get(&name) {
            schemas.insert(name, definition.clone());
        }
    }
    let document = json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    });
    let text = serde_json::to_vec(&document).ok()?;
    Some(Document::new(
        format!("apis/{group}/{version}"),
        Bytes::from(text),
    ))
}

fn query(name: &str, ty: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "description": description, "schema": {"type": ty, "uniqueItems": true}})
}

/// The paths and operations of one custom kind.
fn operations(k: &CustomKind<'_>, definition: &str, gvk: &Value, paths: &mut Map<String, Value>) {
    let writes = [
        query(
            "dryRun",
            "string",
            "When present, indicates that modifications should not be persisted.",
        ),
        query(
            "fieldManager",
            "string",
            "fieldManager is a name associated with the actor or entity that is making these changes.",
        ),
        query(
            "fieldValidation",
            "string",
            "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict",
        ),
    ];
    let mut patch_params = writes.to_vec();
    patch_params.push(query(
        "force",
        "boolean",
        "Force is going to \"force\" Apply requests.",
    ));
    let object = json!({"application/json": {"schema": {"$ref": format!("#/components/schemas/{definition}")}}});
    let list = json!({"application/json": {"schema": {"$ref": format!("#/components/schemas/{definition}List")}}});
    let op = |action: &str, params: &[Value], content: &Value| {
        json!({
            "operationId": format!("{action}{}", k.kind),
            "parameters": params,
            "responses": {"200": {"description": "OK", "content": content}},
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        })
    };
    let prefix = format!("/apis/{}/{}", k.group, k.version);
    let base = if k.namespaced {
        format!("{prefix}/namespaces/{{namespace}}/{}", k.plural)
    } else {
        format!("{prefix}/{}", k.plural)
    };
    paths.insert(
        base.clone(),
        json!({
            "get": op("list", &[], &list),
            "post": op("post", &writes, &object),
            "delete": op("deletecollection", &writes[..1], &json!({})),
        }),
    );
    paths.insert(
        format!("{base}/{{name}}"),
        json!({
            "get": op("get", &[], &object),
            "put": op("put", &writes, &object),
            "patch": op("patch", &patch_params, &object),
            "delete": op("delete", &writes[..1], &json!({})),
        }),
    );
    if k.namespaced {
        paths.insert(
            format!("{prefix}/{}", k.plural),
            json!({"get": op("list", &[], &list)}),
        );
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_custom_document_reads_as_its_kind_with_its_list_types() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}}
        }}}});
        let document = custom_document(&[CustomKind {
            group: "example.com",
            version: "v1",
            kind: "Widget",
            plural: "widgets",
            namespaced: true,
            schema: Some(&schema),
        }])
        .unwrap();
        assert_eq!(document.path, "apis/example.com/v1");
        let mut schemas = crate::schema::Schemas::new();
        assert_eq!(schemas.add_document(&document.json).unwrap(), 1);
        let widget = schemas.root("example.com/v1", "Widget");
        assert_eq!(
            widget.field("spec").field("ports").smp_merge_key(),
            None,
            "custom resources have no strategic merge keys"
        );
        assert_eq!(
            widget.field("spec").field("ports").list_keys()[0].name,
            "name"
        );
        assert!(!widget.field("metadata").field("labels").is_unknown());
        let text = String::from_utf8(document.json.to_vec()).unwrap();
        assert!(text.contains("/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"));
        assert!(text.contains("fieldValidation"));
    }
}
