//! Label selectors that find the manifests' objects among many of their kind: `check` against a
//! big cluster reads its few hundred manifests' objects with a list or two by a label they carry
//! (`app in (cart,web,…)`) instead of one read by name each — a read costs the API server about
//! as much as a list that filters thousands of cached objects and returns a few hundred.
//!
//! The selector only finds: what it returns is each object as it is live, whatever its labels.
//! An object whose label was changed live, or that has none, or whose manifest's value is not a
//! valid label value, is read by name as before; so is every object a failed list leaves unread.
use std::collections::{BTreeMap, BTreeSet};

use crate::manifest::{ManifestObject, ObjectKey};

/// A label is worth a list when it finds at least this many manifests' objects; fewer are read
/// by name (a list costs a few reads).
pub const LIST_MIN: usize = 16;

/// The longest selector in one list call, counted as it is sent (`,`, `(`, `)` and `/` are three
/// bytes each in a URL): well under the 8 KB request line that proxies in front of API servers
/// commonly allow. More values make more calls.
const SELECTOR_BYTES: usize = 6_000;

/// Lists by one label: its key and the selectors (`key in (v1,v2,…)`) that together name every
/// value, and the objects each value should find.
#[derive(Debug, PartialEq, Eq)]
pub struct LabelPlan {
    pub key: String,
    pub selectors: Vec<String>,
    /// The manifests' objects the selectors should find.
    pub keys: BTreeSet<ObjectKey>,
}

/// The label of `manifests` (of one kind) that tells most of them apart, and the selectors that
/// find them; `None` when no label finds [`LIST_MIN`] of them.
pub fn plan<'m>(manifests: impl IntoIterator<Item = &'m ManifestObject>) -> Option<LabelPlan> {
    // For each label key: its values, and the objects carrying each.
    let mut by_key: BTreeMap<&str, BTreeMap<&str, Vec<&ObjectKey>>> = BTreeMap::new();
    for manifest in manifests {
        let Some(labels) = manifest
            .body
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(|l| l.fields())
        else {
            continue;
        };
        for (key, value) in labels {
            let Some(value) = value.as_str() else {
                continue;
            };
            if valid_key(key) && valid_value(value) && !value.is_empty() {
                by_key
                    .entry(key)
                    .or_default()
                    .entry(value)
                    .or_default()
                    .push(&manifest.key);
            }
        }
    }
    // Most distinct values first (a label that tells objects apart selects few others), then
    // most objects, then the key's name.
    let (key, values) = by_key.into_iter().max_by(|(ka, va), (kb, vb)| {
        let count = |v: &BTreeMap<&str, Vec<&ObjectKey>>| v.values().map(Vec::len).sum::<usize>();
        (va.len(), count(va))
            .cmp(&(vb.len(), count(vb)))
            .then_with(|| kb.cmp(ka))
    })?;
    let keys: BTreeSet<ObjectKey> = values.values().flatten().map(|k| (*k).clone()).collect();
    if keys.len() < LIST_MIN {
        return None;
    }
    Some(LabelPlan {
        key: key.to_string(),
        selectors: selectors(key, values.keys().copied()),
        keys,
    })
}

/// `key in (…)` selectors that together name every value, each at most [`SELECTOR_BYTES`] as
/// sent.
fn selectors<'v>(key: &str, values: impl Iterator<Item = &'v str>) -> Vec<String> {
    let head = format!("{key} in (");
    // Form-encoded as kube sends it: `/`, `(`, `)` and `,` as %XX, a space as `+`, the rest
    // of a valid key and value as it is.
    let sent = |text: &str| text.len() + 2 * text.matches(['/', '(', ')', ',']).count();
    let mut out = Vec::new();
    let mut current = String::new();
    // What `head`, `current` and the closing `)` take as sent.
    let mut size = 0;
    for value in values {
        if !current.is_empty() && size + 3 + value.len() > SELECTOR_BYTES {
            out.push(format!("{head}{current})"));
            current.clear();
        }
        if current.is_empty() {
            size = sent(&head) + 3;
        } else {
            current.push(',');
            size += 3;
        }
        current.push_str(value);
        size += value.len();
    }
    if !current.is_empty() {
        out.push(format!("{head}{current})"));
    }
    out
}

/// A label value the API server accepts: at most 63 characters, alphanumerics with `-`, `_` and
/// `.` inside (empty is valid, though not selected by here).
fn valid_value(value: &str) -> bool {
    value.is_empty() || valid_name(value)
}

/// `[prefix/]name`: a DNS subdomain prefix and a name as a label value, not empty.
fn valid_key(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => {
            !prefix.is_empty()
                && prefix.len() <= 253
                && prefix.split('.').all(|part| {
                    !part.is_empty()
                        && part.len() <= 63
                        && part
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                        && !part.starts_with('-')
                        && !part.ends_with('-')
                })
                && valid_name(name)
        }
        None => valid_name(key),
    }
}

/// 1–63 characters: alphanumerics, with `-`, `_` and `.` between them.
fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let inner = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.iter().all(inner)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn manifests(labels: &[(&str, &[(&str, &str)])]) -> Vec<ManifestObject> {
        let text: Vec<String> = labels
            .iter()
            .map(|(name, labels)| {
                let labels: String = labels
                    .iter()
                    .map(|(k, v)| format!("    \"{k}\": \"{v}\"\n"))
                    .collect();
                let labels = if labels.is_empty() {
                    String::new()
                } else {
                    format!("  labels:\n{labels}")
                };
                format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: shop\n{labels}"
                )
            })
            .collect();
        let file: std::sync::Arc<std::path::Path> = std::path::Path::new("m.yaml").into();
        let parsed = crate::manifest::parse::parse_file(&file, &text.join("---\n").into(), "shop");
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        parsed.objects
    }

    #[test]
    fn the_label_that_tells_most_objects_apart_is_chosen() {
        let names: Vec<String> = (0..20).map(|i| format!("app-{i:02}")).collect();
        let labels: Vec<(&str, Vec<(&str, &str)>)> = names
            .iter()
            .map(|n| {
                (
                    n.as_str(),
                    vec![("app", n.as_str()), ("team", "payments"), ("bad", "-x")],
                )
            })
            .collect();
        let labels: Vec<(&str, &[(&str, &str)])> =
            labels.iter().map(|(n, l)| (*n, l.as_slice())).collect();
        let objects = manifests(&labels);
        let plan = plan(&objects).expect("a plan");
        assert_eq!(plan.key, "app");
        assert_eq!(plan.keys.len(), 20);
        assert_eq!(plan.selectors.len(), 1);
        assert!(
            plan.selectors[0].starts_with("app in (app-00,app-01,"),
            "{plan:?}"
        );
        assert!(plan.selectors[0].ends_with(",app-19)"), "{plan:?}");
    }

    #[test]
    fn too_few_labelled_objects_are_read_by_name() {
        let mut labels: Vec<(String, Vec<(&str, String)>)> = (0..LIST_MIN - 1)
            .map(|i| (format!("a{i}"), vec![("app", format!("a{i}"))]))
            .collect();
        labels.extend((0..30).map(|i| (format!("b{i}"), vec![])));
        let labels: Vec<(&str, Vec<(&str, &str)>)> = labels
            .iter()
            .map(|(n, l)| {
                (
                    n.as_str(),
                    l.iter().map(|(k, v)| (*k, v.as_str())).collect(),
                )
            })
            .collect();
        let labels: Vec<(&str, &[(&str, &str)])> =
            labels.iter().map(|(n, l)| (*n, l.as_slice())).collect();
        assert_eq!(plan(&manifests(&labels)), None);
    }

    #[test]
    fn selectors_are_split_to_stay_short_and_name_every_value_once() {
        let values: Vec<String> = (0..2_000).map(|i| format!("service-{i:05}")).collect();
        let out = selectors("app.kubernetes.io/name", values.iter().map(String::as_str));
        assert!(out.len() > 1, "{} selector(s)", out.len());
        let mut named = Vec::new();
        for selector in &out {
            // As kube sends it: form-encoded, a space as '+'.
            let sent: usize = selector
                .bytes()
                .map(|b| match b {
                    b'/' | b'(' | b')' | b',' => 3,
                    _ => 1,
                })
                .sum();
            assert!(sent <= SELECTOR_BYTES, "{sent} bytes: {selector}");
            let inner = selector
                .strip_prefix("app.kubernetes.io/name in (")
                .and_then(|s| s.strip_suffix(')'))
                .expect("a set selector");
            named.extend(inner.split(',').map(str::to_owned));
        }
        assert_eq!(named, values);
    }

    #[test]
    fn label_keys_and_values_are_checked_as_the_server_does() {
        for good in ["app", "app.kubernetes.io/name", "a_b.c-d", "x/y"] {
            assert!(valid_key(good), "{good}");
        }
        for bad in [
            "",
            "/a",
            "a/",
            "-a",
            "a-",
            "Ex.com/a",
            &"a".repeat(64),
            "a b",
        ] {
            assert!(!valid_key(bad), "{bad}");
        }
        for good in ["", "v1.2_3-x", &"a".repeat(63)] {
            assert!(valid_value(good), "{good}");
        }
        for bad in ["-x", "x-", "a b", "a,b", "(a)", &"a".repeat(64)] {
            assert!(!valid_value(bad), "{bad}");
        }
    }
}
