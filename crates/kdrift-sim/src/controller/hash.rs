//! The `pod-template-hash` of a pod template: a stable FNV-1a hash of the template (without its
//! own hash label), written with the alphabet Kubernetes uses so names look like `web-585f666f7`;
//! and the hash of a ControllerRevision's data, computed exactly as the controllers compute it.
use serde_json::Value;

pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";

/// Kubernetes' "safe" alphabet: no vowels (no words in names), no look-alike characters.
const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// The hash label value for `template` (a Deployment's `spec.template`).
pub fn pod_template_hash(template: &Value) -> String {
    let mut hasher = Fnv1a32::new();
    write_canonical(&without_hash_label(template), &mut hasher);
    // Each decimal digit becomes one safe character, as `rand.SafeEncodeString` does.
    safe_encode(hasher.finish())
}

/// The hash of a ControllerRevision's `data` (`history.HashControllerRevision`): FNV-1 (not 1a)
/// over the data as Go's `json.Marshal` writes it (keys sorted, `<>&` escaped), then the collision
/// count. A StatefulSet's revision of the same template gets the same name as on a real server.
pub fn revision_hash(data: &Value, collision_count: i64) -> String {
    let mut hasher = Fnv1_32(0x811c_9dc5);
    hasher.write(go_json(data).as_bytes());
    hasher.write(collision_count.to_string().as_bytes());
    safe_encode(hasher.0)
}

/// Compact JSON with sorted keys and the HTML characters escaped, as Go's `json.Marshal` of a
/// map writes it.
pub fn go_json(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.clone(), sorted(v)))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string(&sorted(value))
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

fn safe_encode(hash: u32) -> String {
    hash.to_string()
        .bytes()
        .map(|b| char::from(SAFE_ALPHABET[usize::from(b) % SAFE_ALPHABET.len()]))
        .collect()
}

/// Whether two pod templates are the same apart from the hash label (how the deployment
/// controller finds the ReplicaSet of its current template).
pub fn templates_equal(a: &Value, b: &Value) -> bool {
    without_hash_label(a) == without_hash_label(b)
}

fn without_hash_label(template: &Value) -> Value {
    let mut copy = template.clone();
    if let Some(labels) = copy
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        labels.remove(POD_TEMPLATE_HASH);
    }
    // A server writes `creationTimestamp: null` into templates; it carries no meaning.
    if let Some(meta) = copy.get_mut("metadata").and_then(Value::as_object_mut)
        && meta.get("creationTimestamp") == Some(&Value::Null)
    {
        meta.remove("creationTimestamp");
    }
    copy
}

/// Feed `value` to the hasher with object keys sorted, so key order never changes the hash.
fn write_canonical(value: &Value, hasher: &mut Fnv1a32) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            hasher.write(b"{");
            for key in keys {
                hasher.write(key.as_bytes());
                hasher.write(b":");
                if let Some(v) = map.get(key) {
                    write_canonical(v, hasher);
                }
                hasher.write(b",");
            }
            hasher.write(b"}");
        }
        Value::Array(items) => {
            hasher.write(b"[");
            for item in items {
                write_canonical(item, hasher);
                hasher.write(b",");
            }
            hasher.write(b"]");
        }
        other => hasher.write(other.to_string().as_bytes()),
    }
}

/// FNV-1: multiply, then xor (Go's `fnv.New32`).
struct Fnv1_32(u32);

impl Fnv1_32 {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.wrapping_mul(0x0100_0193);
            self.0 ^= u32::from(*b);
        }
    }
}

struct Fnv1a32(u32);

impl Fnv1a32 {
    fn new() -> Fnv1a32 {
        Fnv1a32(0x811c_9dc5)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u32::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0193);
        }
    }
    fn finish(&self) -> u32 {
        self.0
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn template(image: &str) -> Value {
        json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": image}]}})
    }

    #[test]
    fn a_statefulset_revision_hashes_as_on_a_real_server() {
        let revisions: Value = serde_json::from_str(include_str!(
            "../../../../testdata/kubernetes-1.36/objects/controllerrevisions.json"
        ))
        .unwrap();
        let db = revisions["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["metadata"]["name"] == "db-b7d7b979b")
            .unwrap();
        assert_eq!(revision_hash(&db["data"], 0), "b7d7b979b");
        assert_eq!(
            go_json(&json!({"b": "<&>", "a": 1})),
            r#"{"a":1,"b":"\u003c\u0026\u003e"}"#
        );
    }

    #[test]
    fn hash_is_stable_and_uses_the_safe_alphabet() {
        let h = pod_template_hash(&template("web:1"));
        assert_eq!(h, pod_template_hash(&template("web:1")));
        assert!((8..=10).contains(&h.len()), "{h}");
        assert!(h.bytes().all(|b| SAFE_ALPHABET.contains(&b)), "{h}");
    }

    #[test]
    fn hash_changes_with_the_template_not_with_key_order_or_its_label() {
        let a = template("web:1");
        assert_ne!(pod_template_hash(&a), pod_template_hash(&template("web:2")));
        let reordered = json!({"spec": {"containers": [{"image": "web:1", "name": "web"}]}, "metadata": {"labels": {"app": "web"}}});
        assert_eq!(pod_template_hash(&a), pod_template_hash(&reordered));
        let mut labelled = a.clone();
        labelled["metadata"]["labels"][POD_TEMPLATE_HASH] = json!("xyz");
        assert_eq!(pod_template_hash(&a), pod_template_hash(&labelled));
        assert!(templates_equal(&a, &labelled));
        assert!(!templates_equal(&a, &template("web:2")));
    }
}
