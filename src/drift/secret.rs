//! Secrets are compared by value and never shown: a Secret manifest's `stringData` is folded
//! into `data` (base64) as the server stores it, and every value under `data` or `stringData`
//! that drift reports, a diff renders or a revert previews is replaced by a digest of its bytes
//! (`sha256:1f2e3d4c…`), so that two equal values read the same and no value leaves kdrift.
use base64::Engine;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::path::{DriftPath, PathStep};
use crate::manifest::ObjectKey;

/// Whether `key` is a core `Secret`.
pub fn is_secret(key: &ObjectKey) -> bool {
    key.group.is_empty() && key.kind == "Secret"
}

/// Whether `path` of a Secret holds secret material: `data`, `stringData`, and what is below.
pub fn is_secret_path(path: &DriftPath) -> bool {
    matches!(path.0.first(), Some(PathStep::Field(f)) if f == "data" || f == "stringData")
}

/// The stand-in shown for secret bytes: `sha256:` and the first 12 hex digits of their digest.
pub fn digest_of(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}…")
}

/// The stand-in of one value: a `data` value is base64, its decoded bytes are digested (so
/// that `data` and `stringData` of the same text read the same); anything else by its text.
/// Maps and lists are masked value by value.
pub fn mask(value: &Value, base64_encoded: bool) -> Value {
    match value {
        Value::String(text) => {
            let decoded = base64_encoded
                .then(|| base64::engine::general_purpose::STANDARD.decode(text).ok())
                .flatten();
            Value::String(match decoded {
                Some(bytes) => digest_of(&bytes),
                None => digest_of(text.as_bytes()),
            })
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), mask(v, base64_encoded)))
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| mask(v, base64_encoded)).collect())
        }
        Value::Null => Value::Null,
        other => Value::String(digest_of(other.to_string().as_bytes())),
    }
}

/// A Secret object (manifest or live) with every `data` and `stringData` value masked, and its
/// `last-applied-configuration` annotation (which holds what was applied, `stringData` in plain
/// text) replaced by a note.
pub fn mask_object(object: &mut Value) {
    let Some(map) = object.as_object_mut() else {
        return;
    };
    if let Some(data) = map.get_mut("data") {
        *data = mask(data, true);
    }
    if let Some(strings) = map.get_mut("stringData") {
        *strings = mask(strings, false);
    }
    if let Some(Value::Object(annotations)) = map
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        && let Some(applied) =
            annotations.get_mut("kubectl.kubernetes.io/last-applied-configuration")
    {
        *applied = Value::String("(not shown: it holds the Secret's values)".into());
    }
}

/// A Secret manifest as the server would store it: `stringData` folded into `data`, base64.
pub fn fold_string_data(manifest: &Value) -> Value {
    let mut out = manifest.clone();
    let Some(map) = out.as_object_mut() else {
        return out;
    };
    let Some(Value::Object(strings)) = map.shift_remove("stringData") else {
        return out;
    };
    let data = map
        .entry("data")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(data) = data.as_object_mut() {
        for (key, value) in strings {
            let text = match value {
                Value::String(text) => text,
                other => other.to_string(),
            };
            let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
            data.insert(key, Value::String(encoded));
        }
    }
    out
}

/// The drift items of a Secret with their values masked (see [`mask`]).
pub fn mask_items(items: &mut [super::DriftItem]) {
    for item in items.iter_mut().filter(|i| is_secret_path(&i.path)) {
        let encoded = matches!(item.path.0.first(), Some(PathStep::Field(f)) if f == "data");
        item.manifest = item.manifest.as_ref().map(|v| mask(v, encoded));
        item.live = item.live.as_ref().map(|v| mask(v, encoded));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn string_data_and_data_of_one_text_read_the_same() {
        let folded = fold_string_data(&json!({"stringData": {"password": "s3cr3t-value"}}));
        assert_eq!(folded, json!({"data": {"password": "czNjcjN0LXZhbHVl"}}));
        let from_data = mask(&json!("czNjcjN0LXZhbHVl"), true);
        let from_text = mask(&json!("s3cr3t-value"), false);
        assert_eq!(from_data, from_text);
        let shown = from_data.as_str().unwrap_or_default();
        assert!(
            shown.starts_with("sha256:") && !shown.contains("s3cr3t"),
            "{shown}"
        );
    }

    #[test]
    fn a_masked_object_holds_no_value() {
        let mut secret = json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "db", "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": "{\"stringData\":{\"password\":\"s3cr3t-value\"}}"}},
            "data": {"password": "czNjcjN0LXZhbHVl"},
            "stringData": {"user": "app"},
            "type": "Opaque"
        });
        mask_object(&mut secret);
        let text = secret.to_string();
        for plain in ["s3cr3t", "czNjcjN0LXZhbHVl", "\"app\""] {
            assert!(!text.contains(plain), "{text}");
        }
        assert_eq!(secret["type"], json!("Opaque"));
    }
}
