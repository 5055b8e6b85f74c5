//! The demo's Helm release, installed as `helm install` (helm 4) leaves one: the objects of its
//! manifest applied server-side as field manager `helm`, with the label and annotations helm adds
//! to every object it applies, and the release record helm keeps of the revision (a Secret of type
//! `helm.sh/release.v1` labelled `owner=helm`, the release's JSON gzipped and base64-encoded). The
//! record holds the chart (metadata, values, templates), so the real helm can `upgrade`,
//! `rollback`, `get` and `uninstall` it against the demo cluster.
use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::manifests::{DEMO_MANIFESTS, DemoRelease, demo_file};
use crate::error::ApiError;
use crate::resources::ResourceType;
use crate::store::{Patch, Store, WriteOptions};

/// The field manager helm 4 applies with.
pub const HELM_MANAGER: &str = "helm";

/// A release's JSON as helm writes it into its record: gzip, then base64.
pub fn encode(release_json: &Value) -> Result<String, std::io::Error> {
    use std::io::Write as _;
    let json = serde_json::to_vec(release_json)?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&json)?;
    let bytes = gz.finish()?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn internal(release: &DemoRelease, what: impl std::fmt::Display) -> ApiError {
    ApiError::Internal(format!("demo release {}: {what}", release.name))
}

/// A demo file read as YAML, as JSON.
fn yaml_file(release: &DemoRelease, path: &str) -> Result<Value, ApiError> {
    let text = demo_file(path).ok_or_else(|| internal(release, format!("no demo/{path}")))?;
    serde_yaml::from_str(text).map_err(|e| internal(release, format!("demo/{path}: {e}")))
}

/// The release's JSON for revision 1, deployed at `now`.
pub fn release_json(release: &DemoRelease, now: &str) -> Result<Value, ApiError> {
    let metadata = yaml_file(release, &format!("{}/Chart.yaml", release.chart))?;
    let values = yaml_file(release, &format!("{}/values.yaml", release.chart))?;
    let config = yaml_file(release, release.values)?;
    let prefix = format!("{}/", release.chart);
    let templates: Vec<Value> = DEMO_MANIFESTS
        .iter()
        .filter_map(|(path, text)| {
            let name = path.strip_prefix(&prefix)?;
            name.starts_with("templates/").then(|| {
                json!({"name": name,
                    "data": base64::engine::general_purpose::STANDARD.encode(text)})
            })
        })
        .collect();
    Ok(json!({
        "name": release.name,
        "info": {
            "first_deployed": now,
            "last_deployed": now,
            "deleted": "",
            "description": "Install complete",
            "status": "deployed",
        },
        "chart": {
            "metadata": metadata,
            "lock": null,
            "templates": templates,
            "values": values,
            "schema": null,
            "files": [],
        },
        "config": config,
        "manifest": release.manifest,
        "version": 1,
        "namespace": release.namespace,
        "apply_method": "ssa",
    }))
}

/// The objects of the release's manifest as helm applies them: in the release's namespace where
/// one names none, with `app.kubernetes.io/managed-by: Helm` and the release annotations.
pub fn applied_objects(release: &DemoRelease) -> Result<Vec<Value>, ApiError> {
    let mut objects = Vec::new();
    for document in serde_yaml::Deserializer::from_str(release.manifest) {
        let mut object: Value = serde::Deserialize::deserialize(document)
            .map_err(|e| internal(release, format!("its manifest: {e}")))?;
        let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
            continue;
        };
        meta.entry("namespace")
            .or_insert_with(|| Value::String(release.namespace.into()));
        let labels = meta
            .entry("labels")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert("app.kubernetes.io/managed-by".into(), json!("Helm"));
        }
        let annotations = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(annotations) = annotations.as_object_mut() {
            annotations.insert("meta.helm.sh/release-name".into(), json!(release.name));
            annotations.insert(
                "meta.helm.sh/release-namespace".into(),
                json!(release.namespace),
            );
        }
        objects.push(object);
    }
    Ok(objects)
}

/// The record Secret of revision 1.
pub fn record_secret(release: &DemoRelease, now: &str) -> Result<Value, ApiError> {
    let encoded =
        encode(&release_json(release, now)?).map_err(|e| internal(release, e.to_string()))?;
    Ok(json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "helm.sh/release.v1",
        "metadata": {
            "name": format!("sh.helm.release.v1.{}.v1", release.name),
            "namespace": release.namespace,
            "labels": {"name": release.name, "owner": "helm", "status": "deployed",
                "version": "1"},
        },
        "data": {"release": base64::engine::general_purpose::STANDARD.encode(encoded)},
    }))
}

/// Install `release` as helm 4 does: its objects applied, then its record created. A release
/// whose record exists is left alone, so seeding twice is harmless.
pub fn install(store: &Store, release: &DemoRelease) -> Result<(), ApiError> {
    let record = record_secret(release, &store.now_rfc3339())?;
    let record_name = format!("sh.helm.release.v1.{}.v1", release.name);
    if store
        .get(ResourceType::SECRET, release.namespace, &record_name)
        .is_some()
    {
        return Ok(());
    }
    for object in applied_objects(release)? {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        let resource = store
            .resource_type_of(api_version, kind)
            .ok_or_else(|| internal(release, format!("no resource for {api_version} {kind}")))?;
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        store.patch(
            resource,
            release.namespace,
            &name,
            &Patch::Apply {
                config: object,
                force: true,
            },
            &WriteOptions::manager(HELM_MANAGER),
        )?;
    }
    store.create(
        ResourceType::SECRET,
        record,
        &WriteOptions::manager(HELM_MANAGER),
    )?;
    Ok(())
}
