//! `managedFields` field sets (`fieldsV1`): parse, build from an object, set algebra.
//!
//! - [`path`]: path elements (`f:`, `k:`, `v:`, `i:`) and [`FieldPath`].
//! - this module: [`FieldSet`], its `fieldsV1` form and set algebra.
//! - [`build`]: field sets from objects, as a server records a create, an update or an apply.
//! - [`entry`]: [`ManagedFieldsEntry`] and [`owners`].
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::schema::{ListType, Schema, Shape};

pub mod build;
mod defaults;
pub mod entry;
pub mod path;

pub use build::Comparison;
pub use defaults::default_without;
pub use entry::{ManagedFieldsEntry, Operation, owners, owners_in};
pub use path::{FieldPath, PathElement};

/// Why a `fieldsV1` or `managedFields` value could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FieldsError {
    #[error("fieldsV1: bad path element \"{element}\": {reason}")]
    BadElement { element: String, reason: String },
    #[error("fieldsV1 at \"{path}\": expected an object, found {found}")]
    NotAnObject { path: String, found: String },
    #[error("managedFields[{index}]: {reason}")]
    BadEntry { index: usize, reason: String },
}

/// Whether a value at `schema` is owned as a whole, its parts (`next` the first of them) with it.
fn owned_whole(schema: Schema, next: &PathElement) -> bool {
    match schema.shape() {
        Shape::Scalar => true,
        Shape::List => schema.list_type() == ListType::Atomic,
        Shape::Struct | Shape::Map => schema.is_atomic(),
        // Without a schema lists are atomic and maps granular.
        Shape::Unknown => schema.is_atomic() || matches!(next, PathElement::Index(_)),
    }
}

/// The elements of `path` one of which a set that [owns](FieldSet::owns) it in an object of
/// schema `root` holds as a member: the last, or one above it that is owned whole. A
/// `fieldsV1` text that names none of them cannot own `path` (a test without reading it).
pub fn owning_elements(root: Schema, path: &FieldPath) -> Vec<&PathElement> {
    let elements = path.elements();
    let mut schema = root;
    let mut out = Vec::new();
    for (i, element) in elements.iter().enumerate() {
        schema = match element {
            PathElement::Field(name) => schema.field(name),
            _ => schema.item(),
        };
        match elements.get(i + 1) {
            Some(next) if owned_whole(schema, next) => out.push(element),
            Some(_) => {}
            None => out.push(element),
        }
    }
    out
}

/// A set of field paths, as `fieldsV1` records them. A path is a *member* when the manager owns
/// that field, list item or set member itself; *children* hold the paths below it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet {
    members: BTreeSet<PathElement>,
    /// Never holds an empty set.
    children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    pub fn new() -> FieldSet {
        FieldSet::default()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Add `path` as a member (the empty path is ignored: the root is never owned).
    pub fn insert(&mut self, path: &FieldPath) {
        self.insert_elements(path.elements());
    }

    fn insert_elements(&mut self, elements: &[PathElement]) {
        match elements {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self
                .children
                .entry(first.clone())
                .or_default()
                .insert_elements(rest),
        }
    }

    /// Whether `path` is a member.
    pub fn contains(&self, path: &FieldPath) -> bool {
        let mut set = self;
        match path.elements().split_last() {
            None => false,
            Some((last, parents)) => {
                for element in parents {
                    match set.children.get(element) {
                        Some(child) => set = child,
                        None => return false,
                    }
                }
                set.members.contains(last)
            }
        }
    }

    /// Whether this set owns `path` in an object whose kind's schema is `root`: it is a member,
    /// or lies under a member that is atomic in the schema (`f:selector` owns everything inside
    /// the selector).
    pub fn owns(&self, root: Schema, path: &FieldPath) -> bool {
        if self.contains(path) {
            return true;
        }
        let mut schema = root;
        let mut set = self;
        let elements = path.elements();
        for (i, element) in elements.iter().enumerate() {
            schema = match element {
                PathElement::Field(name) => schema.field(name),
                _ => schema.item(),
            };
            if let Some(next) = elements.get(i + 1)
                && set.members.contains(element)
                && owned_whole(schema, next)
            {
                return true;
            }
            match set.children.get(element) {
                Some(child) => set = child,
                None => return false,
            }
        }
        false
    }

    /// The set below `path` (empty if nothing is recorded there).
    pub fn child(&self, path: &FieldPath) -> FieldSet {
        let mut set = self;
        for element in path.elements() {
            match set.children.get(element) {
                Some(child) => set = child,
                None => return FieldSet::new(),
            }
        }
        set.clone()
    }

    /// Whether this set holds `path` or any path under it.
    pub fn touches(&self, path: &FieldPath) -> bool {
        self.contains(path) || !self.child(path).is_empty()
    }

    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.add(other);
        out
    }

    /// Add the members of `other` to `self` in place (as [`FieldSet::union`]).
    pub fn add(&mut self, other: &FieldSet) {
        self.members.extend(other.members.iter().cloned());
        for (element, child) in &other.children {
            match self.children.get_mut(element) {
                Some(mine) => mine.add(child),
                None => {
                    self.children.insert(element.clone(), child.clone());
                }
            }
        }
    }

    /// Members of `self` that are not members of `other` (children compared recursively).
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let mut children = BTreeMap::new();
        for (element, child) in &self.children {
            let rest = match other.children.get(element) {
                Some(theirs) => child.difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                children.insert(element.clone(), rest);
            }
        }
        FieldSet { members, children }
    }

    /// Remove the members of `other` from `self` in place (as [`FieldSet::difference`]).
    pub fn subtract(&mut self, other: &FieldSet) {
        if other.is_empty() {
            return;
        }
        self.members.retain(|m| !other.members.contains(m));
        self.children.retain(|element, child| {
            if let Some(theirs) = other.children.get(element) {
                child.subtract(theirs);
            }
            !child.is_empty()
        });
    }

    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.intersection(&other.members).cloned().collect();
        let mut children = BTreeMap::new();
        for (element, child) in &self.children {
            if let Some(theirs) = other.children.get(element) {
                let both = child.intersection(theirs);
                if !both.is_empty() {
                    children.insert(element.clone(), both);
                }
            }
        }
        FieldSet { members, children }
    }

    /// This set without `path` and everything under it.
    pub fn without_subtree(&self, path: &FieldPath) -> FieldSet {
        let mut out = self.clone();
        out.remove_subtree(path.elements());
        out
    }

    fn remove_subtree(&mut self, elements: &[PathElement]) {
        match elements {
            [] => *self = FieldSet::new(),
            [last] => {
                self.members.remove(last);
                self.children.remove(last);
            }
            [first, rest @ ..] => {
                if let Some(child) = self.children.get_mut(first) {
                    child.remove_subtree(rest);
                    if child.is_empty() {
                        self.children.remove(first);
                    }
                }
            }
        }
    }

    /// Every member path, in the order a server writes them (a path before those under it).
    pub fn paths(&self) -> Vec<FieldPath> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out, false);
        out
    }

    /// Member paths with nothing recorded under them: the fields, list items and set members
    /// owned as a whole.
    pub fn leaves(&self) -> Vec<FieldPath> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out, true);
        out
    }

    fn collect(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<FieldPath>, leaves_only: bool) {
        for (element, is_member, child) in self.entries() {
            prefix.push(element.clone());
            if is_member && (!leaves_only || child.is_none()) {
                out.push(FieldPath(prefix.clone()));
            }
            if let Some(child) = child {
                child.collect(prefix, out, leaves_only);
            }
            prefix.pop();
        }
    }

    /// Members and children merged in order: (element, is a member, set below it).
    fn entries(&self) -> Vec<(&PathElement, bool, Option<&FieldSet>)> {
        let mut out: Vec<(&PathElement, bool, Option<&FieldSet>)> = Vec::new();
        let mut members = self.members.iter().peekable();
        let mut children = self.children.iter().peekable();
        loop {
            match (members.peek(), children.peek()) {
                (Some(m), Some((c, set))) => match (*m).cmp(*c) {
                    std::cmp::Ordering::Less => {
                        out.push((*m, true, None));
                        members.next();
                    }
                    std::cmp::Ordering::Greater => {
                        out.push((*c, false, Some(*set)));
                        children.next();
                    }
                    std::cmp::Ordering::Equal => {
                        out.push((*c, true, Some(*set)));
                        members.next();
                        children.next();
                    }
                },
                (Some(m), None) => {
                    out.push((*m, true, None));
                    members.next();
                }
                (None, Some((c, set))) => {
                    out.push((*c, false, Some(*set)));
                    children.next();
                }
                (None, None) => break,
            }
        }
        out
    }

    /// Read a `fieldsV1` value.
    pub fn from_fields_v1(value: &Value) -> Result<FieldSet, FieldsError> {
        let object = value.as_object().ok_or_else(|| FieldsError::NotAnObject {
            path: String::new(),
            found: value.to_string(),
        })?;
        FieldSet::parse(object, "")
    }

    fn parse(object: &Map<String, Value>, at: &str) -> Result<FieldSet, FieldsError> {
        let mut set = FieldSet::new();
        for (text, value) in object {
            if text == "." {
                continue;
            }
            let element = PathElement::parse(text)?;
            let path = format!("{at}{element}");
            let inner = value.as_object().ok_or_else(|| FieldsError::NotAnObject {
                path: path.clone(),
                found: value.to_string(),
            })?;
            if inner.is_empty() || inner.contains_key(".") {
                set.members.insert(element.clone());
            }
            let child = FieldSet::parse(inner, &path)?;
            if !child.is_empty() {
                set.children.insert(element, child);
            }
        }
        Ok(set)
    }

    /// The `fieldsV1` value, exactly as a server writes it: elements in order, `.` first where a
    /// member also has paths under it.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.emit(false))
    }

    fn emit(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        for (element, is_member, child) in self.entries() {
            let inner = match child {
                Some(child) => child.emit(is_member),
                None => Map::new(),
            };
            out.insert(element.to_fields_key(), Value::Object(inner));
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn set(v: Value) -> FieldSet {
        FieldSet::from_fields_v1(&v).unwrap()
    }

    fn kset() -> FieldSet {
        set(json!({
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},
                "f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {
                    ".": {}, "f:image": {}, "f:name": {}
                }}}}
            }
        }))
    }

    #[test]
    fn round_trips_the_reference_managed_fields_byte_for_byte() {
        for file in [
            "deploy-after-client-apply.json",
            "deploy-after-set-env-and-resources.json",
            "pods.json",
        ] {
            let text = std::fs::read_to_string(format!(
                "{}/../../testdata/kubernetes-1.20/{file}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap();
            let object: Value = serde_json::from_str(&text).unwrap();
            let objects = match object.get("items") {
                Some(Value::Array(items)) => items.clone(),
                _ => vec![object],
            };
            for object in objects {
                for entry in object["metadata"]["managedFields"].as_array().unwrap() {
                    let fields = &entry["fieldsV1"];
                    let parsed = FieldSet::from_fields_v1(fields).unwrap();
                    assert_eq!(
                        serde_json::to_string(&parsed.to_fields_v1()).unwrap(),
                        serde_json::to_string(fields).unwrap(),
                        "{file}"
                    );
                }
            }
        }
    }

    #[test]
    fn contains_and_owns() {
        let s = kset();
        let replicas = FieldPath::fields(&["spec", "replicas"]);
        assert!(s.contains(&replicas));
        assert!(!s.contains(&FieldPath::fields(&["spec"])));
        let match_labels = FieldPath::fields(&["spec", "selector", "matchLabels", "app"]);
        assert!(!s.contains(&match_labels));
        assert!(
            s.owns(crate::schema::builtin_kind("Deployment"), &match_labels),
            "an atomic selector owns everything under it"
        );
        let mut labels = FieldSet::new();
        labels.insert(&FieldPath::fields(&["metadata", "labels"]));
        assert!(
            !labels.owns(
                crate::schema::builtin_kind("Deployment"),
                &FieldPath::fields(&["metadata", "labels", "app"])
            ),
            "a granular map left without entries owns none"
        );
        let web = FieldPath::fields(&["spec", "template", "spec", "containers"])
            .child(PathElement::parse(r#"k:{"name":"web"}"#).unwrap());
        assert!(s.contains(&web));
        assert!(
            !s.owns(
                crate::schema::builtin_kind("Deployment"),
                &web.child(PathElement::field("env"))
            ),
            "owning an item is not owning its fields"
        );
        assert!(s.owns(
            crate::schema::builtin_kind("Deployment"),
            &web.child(PathElement::field("image"))
        ));
        assert!(s.touches(&FieldPath::fields(&["spec", "template"])));
    }

    #[test]
    fn algebra() {
        let a = kset();
        let b = set(json!({"f:spec": {"f:replicas": {}, "f:paused": {}}}));
        let union = a.union(&b);
        assert!(union.contains(&FieldPath::fields(&["spec", "paused"])));
        assert_eq!(union.paths().len(), a.paths().len() + 1);
        let diff = a.difference(&b);
        let mut in_place = a.clone();
        in_place.subtract(&b);
        assert_eq!(in_place, diff);
        assert!(!diff.contains(&FieldPath::fields(&["spec", "replicas"])));
        assert!(diff.contains(&FieldPath::fields(&["spec", "selector"])));
        assert_eq!(
            a.intersection(&b),
            set(json!({"f:spec": {"f:replicas": {}}}))
        );
        assert!(a.difference(&a).is_empty());
        assert!(
            a.difference(&a)
                .to_fields_v1()
                .as_object()
                .unwrap()
                .is_empty()
        );
        let no_template = a.without_subtree(&FieldPath::fields(&["spec", "template"]));
        assert_eq!(
            no_template,
            set(json!({"f:spec": {"f:replicas": {}, "f:selector": {}}}))
        );
    }

    #[test]
    fn paths_and_leaves_in_server_order() {
        let s = kset();
        let paths: Vec<String> = s.paths().iter().map(|p| p.to_string()).collect();
        assert_eq!(
            paths,
            [
                ".spec.replicas",
                ".spec.selector",
                r#".spec.template.spec.containers[name="web"]"#,
                r#".spec.template.spec.containers[name="web"].image"#,
                r#".spec.template.spec.containers[name="web"].name"#,
            ]
        );
        assert_eq!(s.leaves().len(), 4);
    }

    #[test]
    fn parse_errors_say_where() {
        let err = FieldSet::from_fields_v1(&json!({"f:spec": {"f:replicas": 3}})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "fieldsV1 at \".spec.replicas\": expected an object, found 3"
        );
        let err = FieldSet::from_fields_v1(&json!({"spec": {}})).unwrap_err();
        assert!(err.to_string().contains("\"spec\""), "{err}");
    }

    fn arb_element() -> impl Strategy<Value = PathElement> {
        prop_oneof![
            "[a-zA-Z][a-zA-Z0-9./-]{0,8}".prop_map(PathElement::Field),
            ("[a-z]{1,5}", 0..100i64).prop_map(|(n, v)| {
                let mut key = Map::new();
                key.insert("name".into(), json!(n));
                key.insert("port".into(), json!(v));
                PathElement::key(&key)
            }),
            "[a-z<&]{0,5}".prop_map(|s| PathElement::Value(json!(s))),
            (0..10usize).prop_map(PathElement::Index),
        ]
    }

    proptest! {
        #[test]
        fn fields_v1_round_trip(paths in prop::collection::vec(prop::collection::vec(arb_element(), 1..5), 0..20)) {
            let mut s = FieldSet::new();
            for p in &paths {
                s.insert(&FieldPath(p.clone()));
            }
            let written = s.to_fields_v1();
            let back = FieldSet::from_fields_v1(&written).unwrap();
            prop_assert_eq!(&back, &s);
            prop_assert_eq!(back.to_fields_v1(), written);
            for p in &paths {
                prop_assert!(back.contains(&FieldPath(p.clone())));
            }
        }
    }
}
