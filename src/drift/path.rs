//! The path of a drifted field: display (`spec.template.spec.containers[name=web].image`),
//! JSON pointer, `fieldsV1` keys, manifest line steps and ignore-rule matching.
use std::fmt;

use serde_json::{Map, Value};

use crate::manifest::lines::Step;

/// One step into an object.
#[derive(Debug, Clone, PartialEq)]
pub enum PathStep {
    /// A field of a struct or a key of a map.
    Field(String),
    /// An item of a keyed list, by its key fields (`{"name":"web"}`), with its position in the
    /// manifest's list when the manifest has it.
    Item {
        key: Map<String, Value>,
        index: Option<usize>,
    },
    /// An item of a set list (`v:<value>` in `fieldsV1`).
    Value(Value),
}

/// A path from the object's root.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DriftPath(pub Vec<PathStep>);

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

impl DriftPath {
    pub fn child(&self, name: &str) -> DriftPath {
        let mut steps = self.0.clone();
        steps.push(PathStep::Field(name.to_owned()));
        DriftPath(steps)
    }

    pub fn item(&self, key: Map<String, Value>, index: Option<usize>) -> DriftPath {
        let mut steps = self.0.clone();
        steps.push(PathStep::Item { key, index });
        DriftPath(steps)
    }

    pub fn value(&self, value: Value) -> DriftPath {
        let mut steps = self.0.clone();
        steps.push(PathStep::Value(value));
        DriftPath(steps)
    }

    /// True when the path is exactly these field names (`["spec", "replicas"]`).
    pub fn is_fields(&self, names: &[&str]) -> bool {
        self.0.len() == names.len()
            && self
                .0
                .iter()
                .zip(names)
                .all(|(step, name)| matches!(step, PathStep::Field(f) if f == name))
    }

    /// The last field name, if the path ends in a field.
    pub fn last_field(&self) -> Option<&str> {
        match self.0.last() {
            Some(PathStep::Field(name)) => Some(name),
            _ => None,
        }
    }

    /// The field name one step up (`limits` for `...resources.limits.memory`).
    pub fn parent_field(&self) -> Option<&str> {
        match self.0.len().checked_sub(2).and_then(|at| self.0.get(at)) {
            Some(PathStep::Field(name)) => Some(name),
            _ => None,
        }
    }

    /// The same steps as an edit path (accept edits the field the drift names).
    pub fn edit_path(&self) -> crate::manifest::edit::FieldPath {
        use crate::manifest::edit::PathStep as Edit;
        crate::manifest::edit::FieldPath(
            self.0
                .iter()
                .map(|step| match step {
                    PathStep::Field(name) => Edit::Key(name.clone()),
                    PathStep::Item { key, .. } => Edit::Item(key.clone()),
                    PathStep::Value(value) => Edit::Value(value.clone()),
                })
                .collect(),
        )
    }

    /// RFC 6901 pointer, items by their first key value (`/spec/template/spec/containers/web`).
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        for step in &self.0 {
            out.push('/');
            let text = match step {
                PathStep::Field(name) => name.clone(),
                PathStep::Item { key, .. } => {
                    key.values().next().map(scalar_text).unwrap_or_default()
                }
                PathStep::Value(value) => scalar_text(value),
            };
            out.push_str(&text.replace('~', "~0").replace('/', "~1"));
        }
        out
    }

    /// The steps for [`crate::manifest::ManifestObject::line_of`]: stops at the first item the
    /// manifest does not have.
    pub fn line_steps(&self) -> Vec<Step<'_>> {
        let mut steps = Vec::with_capacity(self.0.len());
        for step in &self.0 {
            match step {
                PathStep::Field(name) => steps.push(Step::Field(name)),
                PathStep::Item {
                    index: Some(index), ..
                } => steps.push(Step::Item(*index)),
                PathStep::Item { index: None, .. } | PathStep::Value(_) => break,
            }
        }
        steps
    }

    /// True when an ignore rule's decoded pointer covers this path: each rule step matches a
    /// field name, an item's key value or manifest position, or is `*`; the rule may stop early.
    pub fn is_under(&self, rule: &[String]) -> bool {
        rule.len() <= self.0.len()
            && rule.iter().zip(&self.0).all(|(want, step)| {
                want == "*"
                    || match step {
                        PathStep::Field(name) => name == want,
                        PathStep::Item { key, index } => {
                            key.values().any(|v| scalar_text(v) == *want)
                                || index.is_some_and(|i| i.to_string() == *want)
                        }
                        PathStep::Value(value) => scalar_text(value) == *want,
                    }
            })
    }
}

/// `spec.template.spec.containers[name=web].env[name=EXTRA]`, `spec.ports[port=80,protocol=TCP]`.
impl fmt::Display for DriftPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (at, step) in self.0.iter().enumerate() {
            match step {
                PathStep::Field(name) if name.contains(['.', '/', '[']) => write!(f, "[{name:?}]")?,
                PathStep::Field(name) => {
                    if at > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?;
                }
                PathStep::Item { key, .. } => {
                    f.write_str("[")?;
                    for (i, (name, value)) in key.iter().enumerate() {
                        let sep = if i > 0 { "," } else { "" };
                        write!(f, "{sep}{name}={}", scalar_text(value))?;
                    }
                    f.write_str("]")?;
                }
                PathStep::Value(value) => write!(f, "[{}]", scalar_text(value))?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn display_pointer_and_ignore_matching() {
        let path = DriftPath::default()
            .child("spec")
            .child("template")
            .child("spec")
            .child("containers")
            .item(key(json!({"name": "web"})), Some(1))
            .child("env")
            .item(key(json!({"name": "EXTRA"})), None);
        assert_eq!(
            path.to_string(),
            "spec.template.spec.containers[name=web].env[name=EXTRA]"
        );
        assert_eq!(
            path.pointer(),
            "/spec/template/spec/containers/web/env/EXTRA"
        );
        let rule = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(path.is_under(&rule(&[
            "spec",
            "template",
            "spec",
            "containers",
            "web",
            "env"
        ])));
        assert!(path.is_under(&rule(&["spec", "template", "spec", "containers", "1"])));
        assert!(path.is_under(&rule(&[
            "spec",
            "*",
            "spec",
            "containers",
            "*",
            "env",
            "EXTRA"
        ])));
        assert!(!path.is_under(&rule(&["spec", "template", "spec", "containers", "api"])));
        assert!(!path.is_under(&rule(&["spec", "replicas"])));

        let annotation = DriftPath::default()
            .child("metadata")
            .child("annotations")
            .child("example.com/owner");
        assert_eq!(
            annotation.to_string(),
            "metadata.annotations[\"example.com/owner\"]"
        );
        assert_eq!(
            annotation.pointer(),
            "/metadata/annotations/example.com~1owner"
        );
        assert!(annotation.is_under(&rule(&["metadata", "annotations", "example.com/owner"])));
    }
}
