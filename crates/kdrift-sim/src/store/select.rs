//! Label selectors (equality- and set-based) and field selectors as a real server parses them,
//! and the selectable fields the store indexes per object.
use serde_json::Value;

use super::Entry;
use crate::error::ApiError;
use crate::resources::ResourceType;

/// The fields beyond `metadata.name`/`metadata.namespace` a real server lets you select on.
fn selectable_fields(resource: ResourceType) -> &'static [&'static str] {
    match (resource.group(), resource.kind()) {
        ("", "Pod") => &[
            "status.phase",
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "status.podIP",
        ],
        ("", "Event") => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        ("", "Namespace") => &["status.phase"],
        ("apps", "ReplicaSet") => &["status.replicas"],
        ("", "Secret") => &["type"],
        ("batch", "Job") => &["status.successful"],
        _ => &[],
    }
}

/// The selectable fields of `object`, for [`Entry::fields`].
pub fn entry_fields(resource: ResourceType, object: &Value) -> Box<[(&'static str, Box<str>)]> {
    selectable_fields(resource)
        .iter()
        .filter_map(|path| {
            let pointer = if *path == "source" {
                "/source/component".to_string()
            } else {
                format!("/{}", path.replace('.', "/"))
            };
            let value = match object.pointer(&pointer)? {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return None,
            };
            Some((*path, value.into_boxed_str()))
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq)]
enum LabelReq {
    Exists(String),
    NotExists(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

/// A parsed `labelSelector`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector {
    reqs: Vec<LabelReq>,
}

impl LabelSelector {
    /// Parse `app=web,tier!=db,env in (a,b),!legacy`.
    pub fn parse(text: &str) -> Result<LabelSelector, ApiError> {
        let mut reqs = Vec::new();
        for part in split_top_level(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            reqs.push(parse_requirement(part).ok_or_else(|| {
                ApiError::BadRequest(format!(
                    "unable to parse requirement: found '{part}', expected: identifier"
                ))
            })?);
        }
        Ok(LabelSelector { reqs })
    }

    pub fn is_empty(&self) -> bool {
        self.reqs.is_empty()
    }

    pub fn matches(&self, labels: &[(Box<str>, Box<str>)]) -> bool {
        let get = |key: &str| labels.iter().find(|(k, _)| &**k == key).map(|(_, v)| &**v);
        self.reqs.iter().all(|req| match req {
            LabelReq::Exists(k) => get(k).is_some(),
            LabelReq::NotExists(k) => get(k).is_none(),
            LabelReq::In(k, values) => get(k).is_some_and(|v| values.iter().any(|x| x == v)),
            LabelReq::NotIn(k, values) => get(k).is_none_or(|v| !values.iter().any(|x| x == v)),
        })
    }
}

/// Split on commas outside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn parse_set(rest: &str) -> Option<Vec<String>> {
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(
        inner
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect(),
    )
}

fn parse_requirement(part: &str) -> Option<LabelReq> {
    if let Some(key) = part.strip_prefix('!') {
        let key = key.trim();
        return valid_key(key).then(|| LabelReq::NotExists(key.to_string()));
    }
    for (op, negate) in [("!=", true), ("==", false), ("=", false)] {
        if let Some((k, v)) = part.split_once(op) {
            let (k, v) = (k.trim(), v.trim());
            if !valid_key(k) {
                return None;
            }
            let values = vec![v.to_string()];
            return Some(if negate {
                LabelReq::NotIn(k.into(), values)
            } else {
                LabelReq::In(k.into(), values)
            });
        }
    }
    let mut words = part.splitn(2, char::is_whitespace);
    let key = words.next()?.trim();
    let rest = words.next().unwrap_or("").trim();
    if !valid_key(key) {
        return None;
    }
    if rest.is_empty() {
        return Some(LabelReq::Exists(key.to_string()));
    }
    if let Some(set) = rest.strip_prefix("notin") {
        return parse_set(set).map(|v| LabelReq::NotIn(key.to_string(), v));
    }
    if let Some(set) = rest.strip_prefix("in") {
        return parse_set(set).map(|v| LabelReq::In(key.to_string(), v));
    }
    None
}

/// A parsed `fieldSelector`: `metadata.name=web,status.phase!=Running`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector {
    reqs: Vec<(String, bool, String)>,
}

impl FieldSelector {
    pub fn parse(resource: ResourceType, text: &str) -> Result<FieldSelector, ApiError> {
        let mut reqs = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, true, v)
            } else {
                return Err(ApiError::BadRequest(format!(
                    "invalid selector: '{text}'; can't understand '{part}'"
                )));
            };
            let field = field.trim();
            if !matches!(field, "metadata.name" | "metadata.namespace")
                && !selectable_fields(resource).contains(&field)
            {
                return Err(ApiError::BadRequest(format!(
                    "field label not supported: {field}"
                )));
            }
            reqs.push((field.to_string(), equal, value.trim().to_string()));
        }
        Ok(FieldSelector { reqs })
    }

    pub fn is_empty(&self) -> bool {
        self.reqs.is_empty()
    }

    pub fn matches(&self, entry: &Entry) -> bool {
        self.reqs.iter().all(|(field, equal, value)| {
            let actual: &str = match field.as_str() {
                "metadata.name" => &entry.name,
                "metadata.namespace" => &entry.namespace,
                other => entry
                    .fields
                    .iter()
                    .find(|(f, _)| *f == other)
                    .map(|(_, v)| &**v)
                    .unwrap_or(""),
            };
            (actual == value) == *equal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Vec<(Box<str>, Box<str>)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn equality_and_set_based_selectors_match_as_kubectl_expects() {
        let l = labels(&[("app", "web"), ("tier", "front")]);
        let yes = [
            "app=web",
            "app==web",
            "tier!=db",
            "app in (web,api)",
            "env notin (prod)",
            "app",
            "!env",
            "app=web,tier in (front)",
        ];
        for s in yes {
            assert!(
                LabelSelector::parse(s)
                    .map(|sel| sel.matches(&l))
                    .unwrap_or(false),
                "{s} should match"
            );
        }
        let no = [
            "app=api",
            "tier!=front",
            "app notin (web)",
            "env",
            "!app",
            "app=web,tier=back",
        ];
        for s in no {
            assert!(
                !LabelSelector::parse(s)
                    .map(|sel| sel.matches(&l))
                    .unwrap_or(true),
                "{s} should not match"
            );
        }
    }

    #[test]
    fn a_malformed_selector_is_a_bad_request() {
        assert!(matches!(
            LabelSelector::parse("app in web"),
            Err(ApiError::BadRequest(_))
        ));
        assert!(
            matches!(FieldSelector::parse(ResourceType::DEPLOYMENT, "spec.replicas=3"), Err(ApiError::BadRequest(m)) if m.contains("spec.replicas"))
        );
    }
}
