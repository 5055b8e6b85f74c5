//! Zero values a server drops (issue 46): the objects of `testdata/zero-values/objects.yaml`,
//! each with every non-pointer `omitempty` scalar of the structs it uses added at Go's zero
//! (`false`, `0`, `""`), as `kdrift_schema::gotypes` says the server drops them. The fields
//! come from the OpenAPI v3 documents kdrift carries (each definition's `properties` and
//! `type`), the dropping from the Go struct tags; a server (the demo cluster or a real one) is
//! then asked to store both objects, and must hold none of the added zeros.
#![allow(dead_code)]

use std::collections::HashMap;

use kdrift::gotypes;
use serde_json::{Map, Value};

const OBJECTS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/testdata/zero-values/objects.yaml"
);
const OPENAPI: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/kdrift-schema/data/openapi-v3"
);

/// One object of the file: as written, with the zeros added, and the JSON pointers added.
pub struct Zeroed {
    pub name: String,
    pub plain: Value,
    pub zeroed: Value,
    pub added: Vec<(String, Value)>,
}

/// Every definition of the documents, by name.
fn definitions() -> HashMap<String, Value> {
    let mut all = HashMap::new();
    for entry in std::fs::read_dir(OPENAPI).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n == "index.json") {
            continue;
        }
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if let Some(Value::Object(schemas)) = doc.pointer("/components/schemas") {
            for (name, schema) in schemas {
                all.insert(name.clone(), schema.clone());
            }
        }
    }
    all
}

/// The definition a property refers to (`$ref`, or `allOf` of one `$ref`).
fn reference(property: &Value) -> Option<&str> {
    property
        .get("$ref")
        .or_else(|| property.pointer("/allOf/0/$ref"))
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
}

/// The definition of a kind (`x-kubernetes-group-version-kind`).
fn definition_of(defs: &HashMap<String, Value>, api_version: &str, kind: &str) -> String {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    defs.iter()
        .find(|(_, d)| {
            d["x-kubernetes-group-version-kind"]
                .as_array()
                .is_some_and(|gvks| {
                    gvks.iter().any(|g| {
                        g["group"] == group && g["version"] == version && g["kind"] == kind
                    })
                })
        })
        .map(|(name, _)| name.clone())
        .unwrap_or_else(|| panic!("no definition of {api_version} {kind}"))
}

fn add_zeros(
    defs: &HashMap<String, Value>,
    types: &gotypes::GoTypes,
    definition: &str,
    object: &mut Map<String, Value>,
    at: &str,
    added: &mut Vec<(String, Value)>,
) {
    let Some(Value::Object(properties)) = defs.get(definition).map(|d| &d["properties"]) else {
        return;
    };
    let message = gotypes::message_of_definition(definition).unwrap();
    for (name, property) in properties {
        let pointer = format!("{at}/{}", name.replace('~', "~0").replace('/', "~1"));
        match object.get_mut(name) {
            Some(Value::Object(inner)) => {
                if let Some(target) = reference(property) {
                    add_zeros(defs, types, target, inner, &pointer, added);
                } else if let Some(target) =
                    property.get("additionalProperties").and_then(reference)
                {
                    for (key, value) in inner.iter_mut() {
                        if let Value::Object(value) = value {
                            let p = format!("{pointer}/{key}");
                            add_zeros(defs, types, target, value, &p, added);
                        }
                    }
                }
            }
            Some(Value::Array(items)) => {
                if let Some(target) = property.get("items").and_then(reference) {
                    for (index, item) in items.iter_mut().enumerate() {
                        if let Value::Object(item) = item {
                            let p = format!("{pointer}/{index}");
                            add_zeros(defs, types, target, item, &p, added);
                        }
                    }
                }
            }
            Some(_) => {}
            None if gotypes::omits_zero(types, &message, name) == Some(true) => {
                let zero = match property["type"].as_str() {
                    Some("boolean") => Value::Bool(false),
                    Some("integer") | Some("number") => Value::from(0),
                    Some("string") => Value::String(String::new()),
                    _ => continue,
                };
                object.insert(name.clone(), zero.clone());
                added.push((pointer, zero));
            }
            None => {}
        }
    }
}

/// The objects of the file in namespace `ns`, with their zeros added.
pub fn objects(ns: &str) -> Vec<Zeroed> {
    let text = std::fs::read_to_string(OBJECTS)
        .unwrap()
        .replace("namespace: NS", &format!("namespace: {ns}"));
    let defs = definitions();
    let types = gotypes::builtin().unwrap();
    let mut out = Vec::new();
    for document in text.split("\n---\n") {
        let plain: Value = serde_yaml::from_str(document).unwrap();
        let api_version = plain["apiVersion"].as_str().unwrap().to_owned();
        let kind = plain["kind"].as_str().unwrap().to_owned();
        let definition = definition_of(&defs, &api_version, &kind);
        let mut zeroed = plain.clone();
        let mut added = Vec::new();
        add_zeros(
            &defs,
            types,
            &definition,
            zeroed.as_object_mut().unwrap(),
            "",
            &mut added,
        );
        out.push(Zeroed {
            name: format!("{kind}/{}", plain["metadata"]["name"].as_str().unwrap()),
            plain,
            zeroed,
            added,
        });
    }
    out
}

/// The added zeros a server stored: `stored` is what it made of the zeroed object, `plain` of
/// the object as written. A zero read back where the plain object reads back something else
/// (absent, or a default) was kept, not dropped.
pub fn kept_zeros(object: &Zeroed, plain: &Value, stored: &Value) -> Vec<String> {
    object
        .added
        .iter()
        .filter(|(pointer, zero)| {
            stored.pointer(pointer) == Some(zero) && plain.pointer(pointer) != Some(zero)
        })
        .map(|(pointer, zero)| format!("{} {pointer} = {zero}", object.name))
        .collect()
}

/// The zeroed objects as one YAML stream, for a manifests folder.
pub fn manifests(objects: &[Zeroed]) -> String {
    objects
        .iter()
        .map(|o| serde_yaml::to_string(&o.zeroed).unwrap())
        .collect::<Vec<_>>()
        .join("---\n")
}

/// Every added zero the server stored, over all `objects`: `dry_run` sends one object (a
/// server-side dry-run create) and returns what the server would store.
pub fn zeros_kept_by(objects: &[Zeroed], dry_run: impl Fn(&Value) -> Value) -> Vec<String> {
    let added: usize = objects.iter().map(|o| o.added.len()).sum();
    assert!(added > 100, "{added} zeros added");
    objects
        .iter()
        .flat_map(|o| kept_zeros(o, &dry_run(&o.plain), &dry_run(&o.zeroed)))
        .collect()
}

/// The zeroed objects as one YAML stream for a server-side apply: less the zeros an apply may
/// not send (`metadata.resourceVersion: 0` asks for an update of that version; a port's
/// `protocol: ""` is another key of the list than the `TCP` live, so a second port).
pub fn manifests_for_apply(objects: &[Zeroed]) -> String {
    objects
        .iter()
        .map(|o| {
            let mut object = o.zeroed.clone();
            for (pointer, _) in &o.added {
                if pointer.starts_with("/metadata/") || pointer.ends_with("/protocol") {
                    let (parent, field) = pointer.rsplit_once('/').unwrap();
                    if let Some(Value::Object(map)) = object.pointer_mut(parent) {
                        map.remove(field);
                    }
                }
            }
            serde_yaml::to_string(&object).unwrap()
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

/// What both servers must answer, in the objects' namespace: `kubectl` runs kubectl there (its
/// output), `file` writes a scratch file, `check` runs `kdrift check` of `manifests` (a file of
/// [`manifests`]) there (exit code, stdout). No added zero is stored; the manifests are in sync
/// after a client-side apply and after a server-side apply as helm 4 makes one (the applier
/// owns the zeros, the server holds none); a pointer's zero removed live is drift.
pub fn assert_zeros_are_no_drift(
    objects: &[Zeroed],
    manifests: &std::path::Path,
    kubectl: &dyn Fn(&[&str]) -> String,
    file: &dyn Fn(&str, &str) -> std::path::PathBuf,
    check: &dyn Fn() -> (i32, String),
) {
    let kept = zeros_kept_by(objects, |object| {
        let path = file("object.json", &object.to_string());
        let args = ["create", "--dry-run=server", "-o", "json", "-f"];
        serde_json::from_str(&kubectl(&[&args[..], &[path.to_str().unwrap()]].concat())).unwrap()
    });
    assert!(kept.is_empty(), "zeros the server stored: {kept:#?}");

    kubectl(&["apply", "-f", manifests.to_str().unwrap()]);
    let (code, out) = check();
    assert_eq!(code, 0, "in sync right after apply: {out}");

    let applied = file("applied.yaml", &manifests_for_apply(objects));
    kubectl(&[
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=release-tool",
        "-f",
        applied.to_str().unwrap(),
    ]);
    let (code, out) = check();
    assert_eq!(code, 0, "in sync after a server-side apply: {out}");
    let stored: Value =
        serde_json::from_str(&kubectl(&["get", "deployment/zero-web", "-o", "json"])).unwrap();
    let pod = &stored["spec"]["template"]["spec"];
    assert!(
        pod.get("hostNetwork").is_none() && pod.get("hostIPC").is_none(),
        "a server stores no zero it drops, applied or not: {pod}"
    );

    // A pointer's zero is kept: `automountServiceAccountToken: false` removed live is drift.
    const PATCH: &str =
        r#"[{"op":"remove","path":"/spec/template/spec/automountServiceAccountToken"}]"#;
    kubectl(&[
        "patch",
        "deployment/zero-web",
        "--type",
        "json",
        "-p",
        PATCH,
    ]);
    let (code, out) = check();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("spec.template.spec.automountServiceAccountToken  false → (absent)"),
        "{out}"
    );
}
