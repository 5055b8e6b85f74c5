//! The decisions of a revert, without IO: the apply configuration sent for the manifest, which
//! fields added live are removed afterwards, the guarded JSON patch that removes them, and the
//! preview diff (live now → live after).
use std::cmp::Ordering;

use serde_json::{Map, Value, json};

use crate::drift::owners::{field_path, lookup};
use crate::drift::{Class, DriftPath, LiveObject, PathStep, compare};
use crate::manifest::{Config, ManifestObject};
use crate::schema::{Schema, Schemas};

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
    /// The fields added live whose removal leaves `path` empty, when `path` is such a parent
    /// (`spec.sessionAffinityConfig` for `…clientIP.timeoutSeconds`); empty when `path` is the
    /// field added live itself.
    pub emptied_by: Vec<DriftPath>,
}

impl Removal {
    /// `spec.template.spec.containers[name=web].env[name=DEBUG]`, as the drift report prints it;
    /// `the order of …env` for a reordered list.
    pub fn label(&self) -> String {
        match (&self.order, self.emptied_by.as_slice()) {
            (Some(_), _) => format!("the order of {}", self.path),
            (None, []) => self.path.to_string(),
            (None, [field]) => format!("{field} and the {} it leaves empty", self.path),
            (None, fields) => {
                let fields: Vec<String> = fields.iter().map(DriftPath::to_string).collect();
                format!(
                    "{} and the {} they leave empty",
                    fields.join(", "),
                    self.path
                )
            }
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
/// Without `spec.replicas` when an autoscaler owns them: a revert must not fight it. Without
/// the fields `keep` names either (left as they are live): a field changed live is owned by whoever
/// changed it, so leaving it out of the configuration leaves it alone.
pub fn apply_config(
    manifest: &ManifestObject,
    resource_version: Option<&str>,
    autoscaled: bool,
    keep: &[Kept],
) -> Value {
    let mut config = manifest.body.to_value();
    if autoscaled && let Some(spec) = config.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("replicas");
    }
    without_kept(&mut config, keep);
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

/// A drifted field a revert leaves as it is live, and why (said in the preview).
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    pub path: DriftPath,
    pub why: String,
    /// The live value to apply at `path` rather than leave the field out, for a field the
    /// reverting field manager owns alone (helm's, mid-upgrade): left out of helm's
    /// configuration, the server would remove it.
    pub applied: Option<Value>,
}

impl Kept {
    /// `leaves spec.replicas as it is live: …`, for the preview.
    pub fn preview_text(&self) -> String {
        format!("leaves {} as it is live: {}", self.path, self.why)
    }

    /// Would touching `path` touch this field: is `path` this field, inside it, or a parent of
    /// it (a removal widened to the parent it empties)?
    pub fn covers(&self, path: &DriftPath) -> bool {
        path.0.starts_with(&self.path.0) || self.path.0.starts_with(&path.0)
    }
}

/// `config` without the kept fields. A null on the way (`limits: null` in a chart's render) would
/// remove a kept field with its parent: that parent is left out instead.
pub(super) fn without_kept(config: &mut Value, keep: &[Kept]) {
    for kept in keep {
        if let Some(value) = &kept.applied
            && put_path(config, &kept.path, value.clone())
        {
            continue;
        }
        let null_parent = (1..kept.path.0.len())
            .map(|len| DriftPath(kept.path.0[..len].to_vec()))
            .find(|parent| {
                live_pointer(config, parent).and_then(|p| config.pointer(&p)) == Some(&Value::Null)
            });
        remove_path(config, null_parent.as_ref().unwrap_or(&kept.path));
    }
}

/// `value` with `new` at `path`: the field or list item there replaced, or added (objects made
/// on the way for fields; a list item added at the end of its list). False when `path` cannot
/// be reached (a list item on the way that `value` lacks).
pub(super) fn put_path(value: &mut Value, path: &DriftPath, new: Value) -> bool {
    if let Some(pointer) = live_pointer(value, path)
        && let Some(slot) = value.pointer_mut(&pointer)
    {
        *slot = new;
        return true;
    }
    let Some((last, on_the_way)) = path.0.split_last() else {
        return false;
    };
    let mut node = value;
    for step in on_the_way {
        node = match step {
            PathStep::Field(name) => {
                let Some(map) = node.as_object_mut() else {
                    return false;
                };
                let child = map
                    .entry(name.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                if child.is_null() {
                    *child = Value::Object(Map::new());
                }
                child
            }
            PathStep::Item { .. } | PathStep::Value(_) => {
                let partial = DriftPath(vec![step.clone()]);
                let Some(pointer) = live_pointer(node, &partial) else {
                    return false;
                };
                match node.pointer_mut(&pointer) {
                    Some(child) => child,
                    None => return false,
                }
            }
        };
    }
    match (last, node) {
        (PathStep::Field(name), Value::Object(map)) => {
            map.insert(name.clone(), new);
            true
        }
        (PathStep::Item { .. } | PathStep::Value(_), Value::Array(items)) => {
            items.push(new);
            true
        }
        _ => false,
    }
}

/// `value` without what `path` names (a field, or a list item found by its key), if it has it.
pub(super) fn remove_path(value: &mut Value, path: &DriftPath) {
    let Some(pointer) = live_pointer(value, path) else {
        return;
    };
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    match value.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.shift_remove(&last.replace("~1", "/").replace("~0", "~"));
        }
        Some(Value::Array(items)) => {
            if let Ok(at) = last.parse::<usize>()
                && at < items.len()
            {
                items.remove(at);
            }
        }
        _ => {}
    }
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
    let planned = drift
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
                emptied_by: Vec::new(),
            })
        })
        .collect();
    with_emptied_parents(live.schema, manifest, object, planned)
}

/// `planned` with each removal widened to the highest parent it leaves empty (together with the
/// others) that the manifest does not set, even to `{}`: an emptied parent left behind
/// (`sessionAffinityConfig: {clientIP: {}}`, `securityContext: {capabilities: {}}`) is still
/// owned by the manager that added the field, so it is new drift and would need another revert,
/// and a server may refuse it. Removals that empty one parent become one removal of it.
fn with_emptied_parents(
    root: Schema,
    manifest: &ManifestObject,
    object: &Value,
    planned: Vec<Removal>,
) -> Vec<Removal> {
    // The object without what is planned, and without each emptied parent once it is taken.
    let mut after = patched(object, &removal_patch(object, &planned));
    let mut out: Vec<Removal> = Vec::with_capacity(planned.len());
    for removal in planned {
        let mut target = removal.path.clone();
        while removal.order.is_none() && target.0.len() >= 2 {
            let parent = DriftPath(target.0[..target.0.len() - 1].to_vec());
            // A map or list field; a list item keeps its key fields, so it is never emptied.
            let is_field = matches!(parent.0.last(), Some(PathStep::Field(_)));
            if !is_field || lookup(root, &field_path(&parent), manifest.body.root()).is_some() {
                break;
            }
            let Some(value) = live_pointer(&after, &parent).and_then(|p| after.pointer_mut(&p))
            else {
                break;
            };
            if let (Some(PathStep::Field(child)), Value::Object(map)) =
                (target.0.last(), &mut *value)
                && target != removal.path
            {
                map.shift_remove(child);
            }
            let emptied = match value {
                Value::Object(map) => map.is_empty(),
                Value::Array(list) => list.is_empty(),
                _ => false,
            };
            if !emptied {
                break;
            }
            target = parent;
        }
        if target == removal.path {
            out.push(removal);
            continue;
        }
        if let Some(merged) = out.iter_mut().find(|r| r.path == target) {
            merged.emptied_by.push(removal.path);
            continue;
        }
        let Some(value) = live_pointer(object, &target).and_then(|p| object.pointer(&p)) else {
            out.push(removal);
            continue;
        };
        out.push(Removal {
            value: value.clone(),
            manager: removal.manager,
            order: None,
            emptied_by: vec![removal.path],
            path: target,
        });
    }
    out
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
pub(super) fn same(a: &Value, b: &Value) -> bool {
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

/// One JSON patch from `live` to `end` (the object as both steps of a revert leave it), for the
/// server's dry run of the end state: the fields the server keeps for itself (managedFields,
/// resourceVersion, generation, status) are left as `live` has them, so the operations are the
/// revert's content alone. The server then does what it does on the real steps, such as
/// dropping a Service's `nodePort`s when its `type` goes back to ClusterIP.
pub fn end_patch(live: &Value, end: &Value) -> Value {
    let mut end = end.clone();
    for (parent, key) in [
        (&["metadata"][..], "managedFields"),
        (&["metadata"][..], "resourceVersion"),
        (&["metadata"][..], "generation"),
        (&[][..], "status"),
    ] {
        let at = |v: &Value| {
            parent
                .iter()
                .try_fold(v, |v, step| v.get(step))
                .and_then(|v| v.get(key))
                .cloned()
        };
        let kept = at(live);
        let Some(map) = parent
            .iter()
            .try_fold(&mut end, |v, step| v.get_mut(*step))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        match kept {
            Some(value) => map.insert(key.to_owned(), value),
            None => map.remove(key),
        };
    }
    serde_json::to_value(json_patch::diff(live, &end)).unwrap_or(Value::Array(Vec::new()))
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
    in_order_of(object, &mut out);
    out
}

/// The keys of each map of `value` in the order `original` has them: a removal swaps the last
/// key into the removed one's place, which the preview would show as moved lines.
pub fn in_order_of(original: &Value, value: &mut Value) {
    match (original, value) {
        (Value::Object(before), Value::Object(map)) => {
            let mut taken = std::mem::take(map);
            for (key, old) in before {
                if let Some(mut child) = taken.shift_remove(key) {
                    in_order_of(old, &mut child);
                    map.insert(key.clone(), child);
                }
            }
            map.extend(taken);
        }
        (Value::Array(before), Value::Array(items)) if before.len() == items.len() => {
            for (old, item) in before.iter().zip(items) {
                in_order_of(old, item);
            }
        }
        _ => {}
    }
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
/// lines for the TUI or [`preview_diff`]; `action` names what is done (`+++ NAME (after
/// revert)`). Empty when the revert changes nothing.
pub fn preview_lines(before: &Value, after: &Value, name: &str, action: &str) -> Vec<PreviewLine> {
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
            &format!("{name} (after {action})"),
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
pub fn preview_diff(
    before: &Value,
    after: &Value,
    name: &str,
    action: &str,
    colour: bool,
) -> String {
    let mut out = String::new();
    for line in preview_lines(before, after, name, action) {
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
#[path = "plan_tests.rs"]
mod tests;
