//! The decisions of a revert, without IO: the apply configuration sent for the manifest, which
//! fields added live are removed afterwards, the guarded JSON patch that removes them, and the
//! preview diff (live now → live after).
use std::cmp::Ordering;

use serde_json::{Map, Value, json};

use crate::drift::{Class, DriftPath, LiveObject, PathStep, compare};
use crate::manifest::{Config, ManifestObject};
use crate::schema::Schemas;

/// One field added live that the revert removes: where it is, the value it had when planned (the
/// removal is guarded by it) and who set it.
#[derive(Debug, Clone, PartialEq)]
pub struct Removal {
    pub path: DriftPath,
    pub value: Value,
    pub manager: Option<String>,
    /// A reordered list (`env`): not removed but put back in this order (the names of its items
    /// as the manifest has them); `value` is the live list it is planned from.
    pub order: Option<Vec<Value>>,
}

impl Removal {
    /// `spec.template.spec.containers[name=web].env[name=DEBUG]`, as the drift report prints it;
    /// `the order of …env` for a reordered list.
    pub fn label(&self) -> String {
        match self.order {
            Some(_) => format!("the order of {}", self.path),
            None => self.path.to_string(),
        }
    }

    /// What the revert does to it, for the preview: `removes …` or `restores the order of …`.
    pub fn preview_text(&self) -> String {
        let who = self.manager.as_deref().unwrap_or("an unknown manager");
        match self.order {
            Some(_) => format!(
                "restores {} as in git (reordered live by {who})",
                self.label()
            ),
            None => format!("removes {} (added live by {who})", self.label()),
        }
    }

    /// What the revert did to it: `removed …` or `restored the order of …`.
    pub fn done_text(&self) -> String {
        match self.order {
            Some(_) => format!("restored {}", self.label()),
            None => format!("removed {}", self.label()),
        }
    }
}

/// `list` with the items `order` names (by `name`) in that relative order, the others in place.
fn in_order(list: &Value, order: &[Value]) -> Value {
    let mut list = list.clone();
    if let Some(items) = list.as_array_mut() {
        crate::manifest::edit::intended::reorder(items, &crate::drift::diff::name_steps(order));
    }
    list
}

/// The server-side apply configuration: the manifest, with the namespace the key resolved to and,
/// when given, the resourceVersion the apply is conditional on (a 409 if the object changed).
/// Without `spec.replicas` when an autoscaler owns them: a revert must not fight it.
pub fn apply_config(
    manifest: &ManifestObject,
    resource_version: Option<&str>,
    autoscaled: bool,
) -> Value {
    let mut config = manifest.body.to_value();
    if autoscaled && let Some(spec) = config.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("replicas");
    }
    if let Some(root) = config.as_object_mut() {
        let meta = root
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            if !manifest.key.namespace.is_empty() {
                meta.insert(
                    "namespace".into(),
                    Value::String(manifest.key.namespace.to_string()),
                );
            }
            match resource_version {
                Some(rv) => meta.insert("resourceVersion".into(), Value::String(rv.to_owned())),
                None => meta.remove("resourceVersion"),
            };
        }
    }
    config
}

/// True when drift calls the live `spec.replicas` autoscaled (owned by the autoscaler).
pub fn autoscaled(
    manifest: &ManifestObject,
    object: &Value,
    config: &Config,
    schemas: &Schemas,
) -> bool {
    LiveObject::from_value(object.clone(), schemas).is_ok_and(|live| {
        compare(manifest, &live, config)
            .items
            .iter()
            .any(|item| item.class == Class::Autoscaled)
    })
}

/// The fields of `object` (the live object after the apply) that drift still calls added live:
/// set by an out-of-band manager and absent from the manifest. Server-side apply leaves them,
/// because they are not in the applied configuration.
pub fn removals(
    manifest: &ManifestObject,
    object: &Value,
    config: &Config,
    schemas: &Schemas,
) -> Vec<Removal> {
    let Ok(live) = LiveObject::from_value(object.clone(), schemas) else {
        return Vec::new();
    };
    let drift = compare(manifest, &live, config);
    drift
        .items
        .into_iter()
        .filter(|item| matches!(item.class, Class::AddedLive | Class::Reordered))
        .filter_map(|item| {
            let pointer = live_pointer(object, &item.path)?;
            let value = object.pointer(&pointer)?.clone();
            let order = match (item.class, item.manifest) {
                (Class::Reordered, Some(Value::Array(names))) => Some(names),
                _ => None,
            };
            Some(Removal {
                path: item.path,
                value,
                manager: item.attribution.manager,
                order,
            })
        })
        .collect()
}

/// The RFC 6901 pointer of `path` inside `object`, list items found by their merge key (or by
/// value for set lists), or `None` when the object does not have it.
pub fn live_pointer(object: &Value, path: &DriftPath) -> Option<String> {
    let mut node = object;
    let mut pointer = String::new();
    for step in &path.0 {
        let segment = match step {
            PathStep::Field(name) => {
                node = node.as_object()?.get(name)?;
                name.replace('~', "~0").replace('/', "~1")
            }
            PathStep::Item { key, .. } => {
                let items = node.as_array()?;
                let at = items.iter().position(|item| {
                    key.iter()
                        .all(|(field, want)| item.get(field).is_some_and(|v| same(v, want)))
                })?;
                node = items.get(at)?;
                at.to_string()
            }
            PathStep::Value(want) => {
                let items = node.as_array()?;
                let at = items.iter().position(|item| same(item, want))?;
                node = items.get(at)?;
                at.to_string()
            }
        };
        pointer.push('/');
        pointer.push_str(&segment);
    }
    Some(pointer)
}

/// Merge-key values compare as text too: a port may be `8080` live and `"8080"` in a path.
fn same(a: &Value, b: &Value) -> bool {
    a == b || (scalar(a).is_some() && scalar(a) == scalar(b))
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// What a removal patch does to one object.
#[derive(Debug, Clone, PartialEq)]
pub struct RemovalPatch {
    /// RFC 6902 operations: a `test` and a `remove` per field, list items from the last so that
    /// earlier indices stay right (a list changed meanwhile fails a `test`).
    pub operations: Value,
    /// The planned removals found in the object with the planned value.
    pub removed: Vec<Removal>,
    /// Planned removals whose value changed since they were planned: left alone, never clobbered.
    pub changed: Vec<Removal>,
}

impl RemovalPatch {
    pub fn is_empty(&self) -> bool {
        self.removed.is_empty()
    }
}

/// The guarded JSON patch removing `planned` from `object`. A field already gone is skipped; a
/// field whose value is no longer the planned one is kept (someone else changed it).
pub fn removal_patch(object: &Value, planned: &[Removal]) -> RemovalPatch {
    // Reorders first, each a `test` of the list and a `replace` in the manifest's order; the
    // removals are then found in the reordered object.
    let mut operations = Vec::new();
    let mut removed = Vec::new();
    let mut changed = Vec::new();
    let mut reordered = object.clone();
    for removal in planned {
        let Some(order) = &removal.order else {
            continue;
        };
        let Some(pointer) = live_pointer(&reordered, &removal.path) else {
            continue;
        };
        let Some(list) = reordered.pointer_mut(&pointer) else {
            continue;
        };
        if *list != removal.value {
            changed.push(removal.clone());
            continue;
        }
        let wanted = in_order(list, order);
        operations.push(json!({"op": "test", "path": pointer, "value": list.clone()}));
        operations.push(json!({"op": "replace", "path": pointer, "value": wanted.clone()}));
        *list = wanted;
        removed.push(removal.clone());
    }
    let object = &reordered;
    let mut found: Vec<(Vec<Segment>, String, &Removal)> = Vec::new();
    for removal in planned.iter().filter(|r| r.order.is_none()) {
        let Some(pointer) = live_pointer(object, &removal.path) else {
            continue;
        };
        match object.pointer(&pointer) {
            Some(value) if *value == removal.value => {
                found.push((segments(&pointer), pointer, removal));
            }
            Some(_) => changed.push(removal.clone()),
            None => {}
        }
    }
    // A field inside another removed field goes with it (its own test would see it gone).
    let pointers: Vec<String> = found.iter().map(|f| f.1.clone()).collect();
    found.retain(|(_, pointer, _)| {
        !pointers
            .iter()
            .any(|outer| pointer.starts_with(&format!("{outer}/")))
    });
    // Last first: removing item 3 before item 1 keeps both pointers right.
    found.sort_by(|a, b| compare_segments(&b.0, &a.0));
    // Guarded by the values, not the resourceVersion: the controller's status writes bump the
    // latter all through a rollout, and they do not touch what is removed.
    for (_, pointer, removal) in found {
        operations.push(json!({"op": "test", "path": pointer, "value": removal.value}));
        operations.push(json!({"op": "remove", "path": pointer}));
        removed.push(removal.clone());
    }
    RemovalPatch {
        operations: Value::Array(operations),
        removed,
        changed,
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Segment {
    Index(usize),
    Name(String),
}

fn segments(pointer: &str) -> Vec<Segment> {
    pointer
        .split('/')
        .skip(1)
        .map(|s| match s.parse::<usize>() {
            Ok(i) => Segment::Index(i),
            Err(_) => Segment::Name(s.to_owned()),
        })
        .collect()
}

fn compare_segments(a: &[Segment], b: &[Segment]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let order = match (x, y) {
            (Segment::Index(i), Segment::Index(j)) => i.cmp(j),
            (Segment::Name(m), Segment::Name(n)) => m.cmp(n),
            (Segment::Index(_), Segment::Name(_)) => Ordering::Less,
            (Segment::Name(_), Segment::Index(_)) => Ordering::Greater,
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

/// `object` with the operations of `patch` applied locally (the preview's "live after").
pub fn patched(object: &Value, patch: &RemovalPatch) -> Value {
    let mut out = object.clone();
    if let Ok(operations) = serde_json::from_value::<json_patch::Patch>(patch.operations.clone()) {
        // The tests were built from this very object, so they hold; on a failure keep `object`.
        if json_patch::patch(&mut out, &operations).is_err() {
            return object.clone();
        }
    }
    out
}

/// The part of an object a revert changes, as YAML for the preview: labels, annotations (less
/// the ones that are never drift) and every top-level field but its type, metadata and status
/// (`spec`, a ConfigMap's `data`, a Role's `rules`…); a Secret's values as digests. Also what
/// "changed since the preview" compares: status writes do not count.
pub fn relevant_yaml(object: &Value) -> String {
    let mut view = Map::new();
    let meta = object.get("metadata");
    let mut metadata = Map::new();
    if let Some(labels) = meta.and_then(|m| m.get("labels")) {
        metadata.insert("labels".into(), labels.clone());
    }
    if let Some(Value::Object(annotations)) = meta.and_then(|m| m.get("annotations")) {
        let kept: Map<String, Value> = annotations
            .iter()
            .filter(|(name, _)| {
                name.as_str() != "kubectl.kubernetes.io/last-applied-configuration"
                    && name.as_str() != "deployment.kubernetes.io/revision"
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !kept.is_empty() {
            metadata.insert("annotations".into(), Value::Object(kept));
        }
    }
    if !metadata.is_empty() {
        view.insert("metadata".into(), Value::Object(metadata));
    }
    for (name, value) in object.as_object().into_iter().flatten() {
        if !matches!(name.as_str(), "apiVersion" | "kind" | "metadata" | "status") {
            view.insert(name.clone(), value.clone());
        }
    }
    let mut view = Value::Object(view);
    let is_secret = object.get("kind").and_then(Value::as_str) == Some("Secret")
        && object.get("apiVersion").and_then(Value::as_str) == Some("v1");
    if is_secret {
        crate::drift::secret::mask_object(&mut view);
    }
    serde_yaml::to_string(&view).unwrap_or_default()
}

/// What a line of the preview is, so a screen can colour it without parsing text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreviewKind {
    /// `--- name (live now)` / `+++ name (after revert)`.
    Header,
    /// `@@ -3,7 +3,7 @@`.
    Hunk,
    Context,
    /// Live now, gone after the revert.
    Removed,
    /// After the revert, not live now.
    Added,
}

/// One line of the preview, with its `-`/`+`/` ` prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewLine {
    pub kind: PreviewKind,
    pub text: String,
}

/// The unified diff of the relevant YAML, live now → live after, with 3 lines of context, as
/// lines for the TUI or [`preview_diff`]. Empty when the revert changes nothing.
pub fn preview_lines(before: &Value, after: &Value, name: &str) -> Vec<PreviewLine> {
    let old = relevant_yaml(before);
    let new = relevant_yaml(after);
    if old == new {
        return Vec::new();
    }
    let diff = similar::TextDiff::from_lines(&old, &new);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("{name} (live now)"),
            &format!("{name} (after revert)"),
        )
        .to_string();
    text.lines()
        .map(|line| {
            let kind = if line.starts_with("+++ ") || line.starts_with("--- ") {
                PreviewKind::Header
            } else if line.starts_with("@@") {
                PreviewKind::Hunk
            } else if line.starts_with('+') {
                PreviewKind::Added
            } else if line.starts_with('-') {
                PreviewKind::Removed
            } else {
                PreviewKind::Context
            };
            PreviewLine {
                kind,
                text: line.to_owned(),
            }
        })
        .collect()
}

/// [`preview_lines`] as text, coloured with ANSI escapes when `colour`.
pub fn preview_diff(before: &Value, after: &Value, name: &str, colour: bool) -> String {
    let mut out = String::new();
    for line in preview_lines(before, after, name) {
        let text = crate::text::printable(&line.text);
        let paint = match line.kind {
            PreviewKind::Header => "\x1b[1m",
            PreviewKind::Hunk => "\x1b[36m",
            PreviewKind::Added => "\x1b[32m",
            PreviewKind::Removed => "\x1b[31m",
            PreviewKind::Context => "",
        };
        if colour && !paint.is_empty() {
            out.push_str(&format!("{paint}{text}\x1b[0m"));
        } else {
            out.push_str(&text);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn env_path(name: &str) -> DriftPath {
        let mut key = Map::new();
        key.insert("name".into(), json!("web"));
        let mut env_key = Map::new();
        env_key.insert("name".into(), json!(name));
        DriftPath::default()
            .child("spec")
            .child("template")
            .child("spec")
            .child("containers")
            .item(key, None)
            .child("env")
            .item(env_key, None)
    }

    fn object() -> Value {
        json!({
            "metadata": {"name": "web", "resourceVersion": "7"},
            "spec": {"template": {"spec": {"containers": [
                {"name": "side"},
                {"name": "web", "env": [
                    {"name": "A", "value": "1"},
                    {"name": "B", "value": "2"},
                    {"name": "C", "value": "3"}
                ]}
            ]}}}
        })
    }

    fn removal(name: &str, value: Value) -> Removal {
        Removal {
            path: env_path(name),
            value,
            manager: Some("kubectl-set".into()),
            order: None,
        }
    }

    #[test]
    fn pointers_find_list_items_by_merge_key() {
        assert_eq!(
            live_pointer(&object(), &env_path("C")).as_deref(),
            Some("/spec/template/spec/containers/1/env/2")
        );
        assert_eq!(live_pointer(&object(), &env_path("Z")), None);
    }

    #[test]
    fn removal_patch_guards_and_removes_later_items_first() {
        let planned = [
            removal("A", json!({"name": "A", "value": "1"})),
            removal("C", json!({"name": "C", "value": "3"})),
        ];
        let patch = removal_patch(&object(), &planned);
        let ops = patch.operations.as_array().unwrap();
        assert_eq!(
            ops[0],
            json!({"op": "test", "path": "/spec/template/spec/containers/1/env/2", "value": {"name": "C", "value": "3"}})
        );
        let removes: Vec<&str> = ops
            .iter()
            .filter(|o| o["op"] == "remove")
            .map(|o| o["path"].as_str().unwrap())
            .collect();
        assert_eq!(
            removes,
            [
                "/spec/template/spec/containers/1/env/2",
                "/spec/template/spec/containers/1/env/0"
            ]
        );
        let after = patched(&object(), &patch);
        let env = after
            .pointer("/spec/template/spec/containers/1/env")
            .unwrap();
        assert_eq!(env, &json!([{"name": "B", "value": "2"}]));
    }

    #[test]
    fn a_field_inside_another_removed_field_goes_with_it() {
        let mut outer = DriftPath::default()
            .child("spec")
            .child("template")
            .child("spec")
            .child("containers");
        let mut key = Map::new();
        key.insert("name".into(), json!("web"));
        outer = outer.item(key, None).child("env");
        let env = object()
            .pointer("/spec/template/spec/containers/1/env")
            .unwrap()
            .clone();
        let planned = [
            removal("B", json!({"name": "B", "value": "2"})),
            Removal {
                path: outer,
                value: env,
                manager: None,
                order: None,
            },
        ];
        let patch = removal_patch(&object(), &planned);
        assert_eq!(patch.removed.len(), 1);
        let after = patched(&object(), &patch);
        assert!(
            after
                .pointer("/spec/template/spec/containers/1/env")
                .is_none()
        );
    }

    #[test]
    fn a_field_changed_since_the_plan_is_kept() {
        let planned = [removal("B", json!({"name": "B", "value": "old"}))];
        let patch = removal_patch(&object(), &planned);
        assert!(patch.is_empty());
        assert_eq!(patch.changed.len(), 1);
        assert_eq!(patched(&object(), &patch), object());
    }

    #[test]
    fn preview_diff_shows_live_now_and_after() {
        let before = object();
        let mut after = object();
        after["spec"]["template"]["spec"]["containers"][1]["env"]
            .as_array_mut()
            .unwrap()
            .remove(1);
        let text = preview_diff(&before, &after, "deployment/web", false);
        assert!(
            text.lines()
                .any(|l| l.starts_with('-') && l.contains("value:") && l.contains('2')),
            "{text}"
        );
        assert!(
            !text
                .lines()
                .any(|l| l.starts_with('+') && !l.starts_with("+++")),
            "{text}"
        );
        assert!(text.contains("deployment/web (after revert)"), "{text}");
        assert!(preview_diff(&before, &before, "x", false).is_empty());
        let kinds: Vec<PreviewKind> = preview_lines(&before, &after, "deployment/web")
            .iter()
            .map(|l| l.kind)
            .filter(|k| matches!(k, PreviewKind::Added | PreviewKind::Removed))
            .collect();
        assert_eq!(kinds, [PreviewKind::Removed, PreviewKind::Removed]);
        let coloured = preview_diff(&before, &after, "deployment/web", true);
        assert!(coloured.contains("\x1b[31m-"), "{coloured}");
    }
}
