//! Secrets are compared by value and never shown: a Secret manifest's `stringData` is folded
//! into `data` (base64) as the server stores it, and every value under `data` or `stringData`
//! that drift reports, a diff renders or a revert previews is replaced by a keyed digest of its
//! bytes (`hmac-sha256:1f2e3d4c5b6a…`), so that two equal values read the same and no value
//! leaves kdrift. The digest is an HMAC-SHA256 under the installation's own key (see
//! [`crate::state::digest_key`]), not the public SHA-256 of the value: a digest in a CI log
//! cannot be looked up in a table of common passwords, nor compared across installations.
use std::sync::OnceLock;

use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;

use super::path::{DriftPath, PathStep};
use crate::manifest::ObjectKey;

/// Whether `key` is a core `Secret`.
pub fn is_secret(key: &ObjectKey) -> bool {
    key.is_secret()
}

/// Whether a whole object (a live one, as read) is a core Secret.
pub fn is_secret_object(object: &Value) -> bool {
    object.get("apiVersion").and_then(Value::as_str) == Some("v1")
        && object.get("kind").and_then(Value::as_str) == Some("Secret")
}

/// Whether `path` of a Secret holds secret material: `data`, `stringData`, and what is below.
pub fn is_secret_path(path: &DriftPath) -> bool {
    matches!(path.0.first(), Some(PathStep::Field(f)) if f == "data" || f == "stringData")
}

/// What a digest says it is: an HMAC-SHA256, keyed.
pub const DIGEST_PREFIX: &str = "hmac-sha256:";

/// Whose key the digests are made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyScope {
    /// The installation's key ([`crate::state::digest_key`]): digests agree from run to run.
    Installation,
    /// A key of this run alone (the installation's could not be read or made): digests tell
    /// changed from unchanged within the run, and differ from those of other runs.
    ThisRun,
}

static KEY: OnceLock<([u8; crate::state::KEY_LEN], KeyScope)> = OnceLock::new();

/// Installs the key of the digests, once, before the first digest (later calls change nothing);
/// returns whether this key is the one used.
pub fn use_key(key: [u8; crate::state::KEY_LEN], scope: KeyScope) -> bool {
    KEY.set((key, scope)).is_ok()
}

/// Installs the installation's key ([`crate::state::digest_key`], made on first use); when it
/// cannot be read or made, the digests use a key of this run alone and the error says why.
pub fn install_key() -> Result<(), crate::state::KeyError> {
    let key = crate::state::digest_key()?;
    use_key(key, KeyScope::Installation);
    Ok(())
}

/// The key in use: the one installed, else one of this run (tests, a library caller).
fn key() -> &'static ([u8; crate::state::KEY_LEN], KeyScope) {
    KEY.get_or_init(|| {
        let key = crate::state::random_bytes().unwrap_or_else(|_| {
            let mut key = [0u8; crate::state::KEY_LEN];
            key[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
            key[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
            key
        });
        (key, KeyScope::ThisRun)
    })
}

/// Whose key the digests of this run are made with.
pub fn key_scope() -> KeyScope {
    key().1
}

/// The stand-in shown for secret bytes: `hmac-sha256:` and the first 12 hex digits of their
/// HMAC-SHA256 under the key in use.
pub fn digest_of(bytes: &[u8]) -> String {
    digest_with(&key().0, bytes)
}

fn digest_with(key: &[u8], bytes: &[u8]) -> String {
    // An HMAC takes a key of any length: this cannot fail.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return format!("{DIGEST_PREFIX}(no key)");
    };
    mac.update(bytes);
    let hash = mac.finalize().into_bytes();
    let hex: String = hash.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("{DIGEST_PREFIX}{hex}…")
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
            shown.starts_with("hmac-sha256:") && !shown.contains("s3cr3t"),
            "{shown}"
        );
    }

    #[test]
    fn a_digest_is_keyed_not_the_public_sha256_of_the_value() {
        use sha2::Digest;
        // `admin`'s SHA-256 is in every table of common passwords: it must not be shown.
        let public: String = Sha256::digest(b"admin")
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(public, "8c6976e5b541");
        let shown = digest_of(b"admin");
        assert!(shown.starts_with(DIGEST_PREFIX), "{shown}");
        assert!(!shown.contains(&public), "{shown}");
        // Still tells changed from unchanged, and depends on the key.
        assert_eq!(digest_of(b"admin"), shown);
        assert_ne!(digest_of(b"admin2"), shown);
        let one = digest_with(&[1u8; 32], b"admin");
        assert_ne!(one, digest_with(&[2u8; 32], b"admin"));
        // RFC 4231 test case 2 (key "Jefe"): the digest is HMAC-SHA256.
        assert_eq!(
            digest_with(b"Jefe", b"what do ya want for nothing?"),
            "hmac-sha256:5bdcc146bf60…"
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
