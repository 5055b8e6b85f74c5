//! Small readers of the JSON objects the controllers work on (names, owners, int-or-percent,
//! times), so the decision code reads like the Kubernetes logic it mirrors.
use jiff::Timestamp;
use serde_json::Value;

/// Namespace and name of an object: what the controllers key their work by.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    pub namespace: String,
    pub name: String,
}

impl Key {
    pub fn new(namespace: &str, name: &str) -> Key {
        Key {
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }

    pub fn of(object: &Value) -> Key {
        Key::new(namespace(object), name(object))
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// The value at a path of object keys, if every step exists.
pub fn at<'a>(object: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(object, |v, key| v.get(key))
}

pub fn str_at<'a>(object: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(object, path).and_then(Value::as_str)
}

pub fn i64_at(object: &Value, path: &[&str]) -> Option<i64> {
    at(object, path).and_then(Value::as_i64)
}

pub fn name(object: &Value) -> &str {
    str_at(object, &["metadata", "name"]).unwrap_or_default()
}

pub fn namespace(object: &Value) -> &str {
    str_at(object, &["metadata", "namespace"]).unwrap_or_default()
}

pub fn uid(object: &Value) -> &str {
    str_at(object, &["metadata", "uid"]).unwrap_or_default()
}

pub fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    at(object, &["metadata", "annotations", key]).and_then(Value::as_str)
}

/// `spec.replicas`, defaulting to 1 as the API server does.
pub fn spec_replicas(object: &Value) -> i64 {
    i64_at(object, &["spec", "replicas"]).unwrap_or(1)
}

/// A non-negative integer status field (absent means 0, as Kubernetes omits zeros).
pub fn status_count(object: &Value, field: &str) -> i64 {
    i64_at(object, &["status", field]).unwrap_or(0)
}

/// The uid of the controller named in `ownerReferences`, if any.
pub fn controller_uid(object: &Value) -> Option<&str> {
    at(object, &["metadata", "ownerReferences"])?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .and_then(|r| r.get("uid"))
        .and_then(Value::as_str)
}

/// An ownerReference naming `owner` as the controller, as the controllers write it.
pub fn owner_reference(owner: &Value) -> Value {
    serde_json::json!({
        "apiVersion": owner.get("apiVersion").cloned().unwrap_or(Value::Null),
        "blockOwnerDeletion": true,
        "controller": true,
        "kind": owner.get("kind").cloned().unwrap_or(Value::Null),
        "name": name(owner),
        "uid": uid(owner),
    })
}

/// An int-or-percent (`maxSurge: 1`, `maxUnavailable: "25%"`) against `total`, rounded up or
/// down as Kubernetes does for surge (up) and unavailability (down). Unreadable values count 0.
pub fn scaled_int_or_percent(value: Option<&Value>, total: i64, round_up: bool) -> i64 {
    match value {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => {
            let Some(percent) = s
                .strip_suffix('%')
                .and_then(|p| p.trim().parse::<i64>().ok())
            else {
                return s.parse::<i64>().unwrap_or(0);
            };
            let scaled = percent * total;
            if round_up {
                (scaled + 99).div_euclid(100)
            } else {
                scaled.div_euclid(100)
            }
        }
        _ => 0,
    }
}

/// A time as the API server writes it: RFC 3339 in UTC, whole seconds.
pub fn format_time(time: Timestamp) -> String {
    time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A time as written by [`format_time`] (or any RFC 3339 time).
pub fn parse_time(text: &str) -> Option<Timestamp> {
    text.parse().ok()
}

/// Whether a JSON value is "empty" as Go's `omitempty` sees it, so we omit the same fields.
pub fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Number(n) => n.as_i64() == Some(0),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn percentages_round_like_kubernetes() {
        // 25 % of 3 is 0.75: surge rounds up to 1, unavailability down to 0.
        assert_eq!(scaled_int_or_percent(Some(&json!("25%")), 3, true), 1);
        assert_eq!(scaled_int_or_percent(Some(&json!("25%")), 3, false), 0);
        assert_eq!(scaled_int_or_percent(Some(&json!("50%")), 3, true), 2);
        assert_eq!(scaled_int_or_percent(Some(&json!(2)), 3, true), 2);
        assert_eq!(scaled_int_or_percent(None, 3, true), 0);
    }

    #[test]
    fn times_are_whole_seconds_in_utc() {
        let t: Timestamp = "2026-11-22T02:59:06.789Z".parse().unwrap();
        assert_eq!(format_time(t), "2026-11-22T02:59:06Z");
        assert_eq!(
            parse_time("2026-11-22T02:59:06Z")
                .map(format_time)
                .as_deref(),
            Some("2026-11-22T02:59:06Z")
        );
    }

    #[test]
    fn finds_the_controller_owner() {
        let pod = json!({"metadata": {"ownerReferences": [
            {"uid": "a", "controller": false}, {"uid": "b", "controller": true}]}});
        assert_eq!(controller_uid(&pod), Some("b"));
    }
}
