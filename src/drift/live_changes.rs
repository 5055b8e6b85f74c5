//! The live part of the change timeline: each watch event of an object compared with the version
//! before it, as one line (the fields that changed, old → new, and the manager whose
//! `managedFields` entry moved). What is kept of the version before ([`Prior`]) is small: the
//! object's text less its `status`, `managedFields` and what is never drift, and each entry's
//! manager and time. A write that changes only `status` (a rollout's progress) makes no line.
use serde_json::{Map, Value};

use crate::managed_fields::{Comparison, FieldPath, ManagedFieldsEntry, Operation, owners_in};
use crate::schema::Schema;

use super::changes::{Agrees, Change, Desired, agrees, who_of};

/// Fields a line names at most (the rest counted), as `kdrift changes` does.
const SHOWN_FIELDS: usize = 6;
/// A value longer than this is cut (with `…`) in a line.
const VALUE_CHARS: usize = 48;

/// One version of a watched object as the timeline reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    /// The object without `status`, `managedFields` and what is never drift (server metadata,
    /// the revision and last-applied annotations).
    pub body: Value,
    pub entries: Vec<ManagedFieldsEntry>,
}

impl Version {
    /// Reads a version from the object as parsed (with or without its `status`).
    pub fn of(object: &Value) -> Result<Version, String> {
        let entries = ManagedFieldsEntry::read(object)
            .map_err(|e| format!("its managedFields cannot be read: {e}"))?;
        let mut body = Map::new();
        for (name, value) in object.as_object().into_iter().flatten() {
            match name.as_str() {
                "status" => {}
                "metadata" => {
                    let meta: Map<String, Value> = value
                        .as_object()
                        .into_iter()
                        .flatten()
                        .filter(|(n, _)| n.as_str() != "managedFields")
                        .map(|(n, v)| (n.clone(), v.clone()))
                        .collect();
                    body.insert(name.clone(), Value::Object(meta));
                }
                _ => {
                    body.insert(name.clone(), value.clone());
                }
            }
        }
        let mut body = Value::Object(body);
        super::live::strip_server_fields(&mut body);
        Ok(Version { body, entries })
    }
}

/// What the timeline keeps of an object's last version to compare the next one with.
#[derive(Debug, Clone, PartialEq)]
pub struct Prior {
    /// [`Version::body`] as compact JSON (a parsed tree takes several times the room).
    body: Box<str>,
    stamps: Box<[Stamp]>,
}

/// An entry's identity and time: it moved when its time changed or it is new.
#[derive(Debug, Clone, PartialEq)]
struct Stamp {
    manager: Box<str>,
    operation: Operation,
    subresource: Option<Box<str>>,
    time: Option<Box<str>>,
}

impl Stamp {
    fn is(&self, entry: &ManagedFieldsEntry) -> bool {
        *self.manager == *entry.manager
            && self.operation == entry.operation
            && self.subresource.as_deref() == entry.subresource.as_deref()
            && self.time.as_deref() == entry.time.as_deref()
    }
}

impl Prior {
    pub fn of(version: &Version) -> Prior {
        Prior {
            body: version.body.to_string().into_boxed_str(),
            stamps: version
                .entries
                .iter()
                .map(|e| Stamp {
                    manager: e.manager.as_str().into(),
                    operation: e.operation,
                    subresource: e.subresource.as_deref().map(Box::from),
                    time: e.time.as_deref().map(Box::from),
                })
                .collect(),
        }
    }

    /// The bytes it holds on the heap (for the benches).
    pub fn heap_bytes(&self) -> usize {
        self.body.len()
            + self.stamps.len() * std::mem::size_of::<Stamp>()
            + self
                .stamps
                .iter()
                .map(|s| {
                    s.manager.len()
                        + s.subresource.as_deref().map_or(0, str::len)
                        + s.time.as_deref().map_or(0, str::len)
                })
                .sum::<usize>()
    }
}

/// A timeline line with what the live view filters and opens it by.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveChange {
    pub change: Change,
    /// The manager alone (`kubectl`), without subresource and operation, for the filter.
    pub manager: String,
    /// The first field the line names, where `enter` opens the diff.
    pub field: Option<FieldPath>,
}

fn value_text(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "(none)".to_owned();
    };
    let text = value.to_string();
    if text.chars().count() <= VALUE_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(VALUE_CHARS - 1).collect();
    cut.push('…');
    cut
}

fn newest<'a>(
    entries: impl Iterator<Item = &'a ManagedFieldsEntry>,
) -> Option<&'a ManagedFieldsEntry> {
    // RFC 3339 times of one server sort as text; an entry without one is oldest.
    entries.max_by(|a, b| a.time.cmp(&b.time))
}

/// The line of one watch event: `after` (with `after_prior`, its [`Prior`]) compared with the
/// version before it. `None` when nothing but `status` or server metadata changed. The writer is
/// the manager whose entry moved (new, or a new time) and owns a changed field, else any whose
/// entry moved, else the owner of the first changed field (a v1.36 server records no time for a
/// `/scale` write, so a second `kubectl scale` moves nothing). The line's time is the moved
/// entry's, else `seen` (when the event arrived).
pub fn live_change(
    object: &str,
    schema: Schema,
    before: &Prior,
    after: &Version,
    after_prior: &Prior,
    desired: Option<&Desired<'_>>,
    seen: &str,
) -> Option<LiveChange> {
    if before.body == after_prior.body {
        return None;
    }
    let old: Value = serde_json::from_str(&before.body).ok()?;
    let comparison = Comparison::of(schema, Some(&old), &after.body);
    let mut paths = comparison.modified.leaves();
    paths.extend(comparison.added.leaves());
    paths.extend(comparison.removed.leaves());
    paths.sort();
    paths.dedup();
    if paths.is_empty() {
        return None;
    }
    let moved = || {
        after
            .entries
            .iter()
            .filter(|e| !before.stamps.iter().any(|s| s.is(e)))
    };
    let moved_writer = newest(moved().filter(|e| paths.iter().any(|p| e.fields.touches(p))))
        .or_else(|| newest(moved()));
    let writer = moved_writer.or_else(|| {
        paths
            .iter()
            .find_map(|p| owners_in(schema, &after.entries, p).into_iter().last())
    });
    let time = moved_writer
        .and_then(|w| w.time.clone())
        .unwrap_or_else(|| seen.to_owned());
    let mut shown: Vec<String> = paths
        .iter()
        .take(SHOWN_FIELDS)
        .map(|p| {
            format!(
                "{p}: {} → {}",
                value_text(p.lookup(schema, &old)),
                value_text(p.lookup(schema, &after.body))
            )
        })
        .collect();
    if paths.len() > SHOWN_FIELDS {
        shown.push(format!("(+{} more)", paths.len() - SHOWN_FIELDS));
    }
    Some(LiveChange {
        change: Change {
            time: Some(time),
            object: object.to_owned(),
            who: writer.map_or_else(|| "(manager unknown)".to_owned(), who_of),
            what: shown.join(", "),
            git: agrees(&paths, desired),
        },
        manager: writer.map_or_else(String::new, |w| w.manager.clone()),
        field: paths.first().cloned(),
    })
}

/// The line of an object that appeared after the timeline began: created by its newest writer.
pub fn created(
    object: &str,
    after: &Version,
    desired: Option<&Desired<'_>>,
    seen: &str,
) -> LiveChange {
    let writer = newest(after.entries.iter());
    let git = match desired {
        None => Agrees::NotInGit,
        Some(d) if d.drift.items.iter().any(|i| i.class.is_drift()) => Agrees::Drifted,
        Some(_) => Agrees::InSync,
    };
    LiveChange {
        change: Change {
            time: Some(
                writer
                    .and_then(|w| w.time.clone())
                    .unwrap_or_else(|| seen.to_owned()),
            ),
            object: object.to_owned(),
            who: writer.map_or_else(|| "(manager unknown)".to_owned(), who_of),
            what: "created".to_owned(),
            git,
        },
        manager: writer.map_or_else(String::new, |w| w.manager.clone()),
        field: None,
    }
}

/// The line of an object deleted while watched (the API does not say who deleted it); git
/// disagrees when a manifest still describes it.
pub fn deleted(object: &str, in_git: bool, seen: &str) -> LiveChange {
    LiveChange {
        change: Change {
            time: Some(seen.to_owned()),
            object: object.to_owned(),
            who: "(not recorded)".to_owned(),
            what: "deleted".to_owned(),
            git: if in_git {
                Agrees::Drifted
            } else {
                Agrees::NotInGit
            },
        },
        manager: String::new(),
        field: None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(web: &str, replicas: u64, entries: Value) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "7",
                "managedFields": entries},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [
                {"name": "sidecar", "image": "proxy:1"},
                {"name": "web", "image": web}]}}},
            "status": {"readyReplicas": 1}
        })
    }

    fn schema() -> Schema {
        crate::schema::Schemas::builtin().root("apps/v1", "Deployment")
    }

    fn apply_entry() -> Value {
        json!({"manager": "kubectl-client-side-apply", "operation": "Update",
            "apiVersion": "apps/v1", "time": "2026-01-01T10:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
                "k:{\"name\":\"sidecar\"}": {".": {}, "f:image": {}, "f:name": {}},
                "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}})
    }

    #[test]
    fn a_keyed_list_item_is_named_by_its_key_with_old_and_new_and_the_manager_that_moved() {
        let before = Version::of(&deployment("shop/web:1.0", 2, json!([apply_entry()]))).unwrap();
        let set = json!({"manager": "kubectl-set", "operation": "Update", "apiVersion": "apps/v1",
            "time": "2026-01-01T11:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {
                "k:{\"name\":\"web\"}": {"f:image": {}}}}}}}});
        let after =
            Version::of(&deployment("shop/web:1.1", 2, json!([apply_entry(), set]))).unwrap();
        let line = live_change(
            "deployment/shop/web",
            schema(),
            &Prior::of(&before),
            &after,
            &Prior::of(&after),
            None,
            "2026-01-01T11:00:01Z",
        )
        .unwrap();
        assert_eq!(
            line.change.what,
            ".spec.template.spec.containers[name=\"web\"].image: \"shop/web:1.0\" → \"shop/web:1.1\""
        );
        assert_eq!(line.change.who, "kubectl-set Update");
        assert_eq!(line.manager, "kubectl-set");
        assert_eq!(line.change.time.as_deref(), Some("2026-01-01T11:00:00Z"));
        assert_eq!(line.change.git, Agrees::NotInGit);
        assert_eq!(
            line.field.unwrap().to_string(),
            ".spec.template.spec.containers[name=\"web\"].image"
        );
    }

    #[test]
    fn a_second_scale_moves_no_entry_and_is_the_owners_at_the_time_seen() {
        let scale = json!({"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1",
            "subresource": "scale", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:replicas": {}}}});
        let before =
            Version::of(&deployment("a:1", 3, json!([apply_entry(), scale.clone()]))).unwrap();
        let after = Version::of(&deployment("a:1", 5, json!([apply_entry(), scale]))).unwrap();
        let line = live_change(
            "deployment/shop/web",
            schema(),
            &Prior::of(&before),
            &after,
            &Prior::of(&after),
            None,
            "2026-01-01T12:00:00Z",
        )
        .unwrap();
        assert_eq!(line.change.what, ".spec.replicas: 3 → 5");
        // Both own it; the entry listed last (the newest write) is the writer.
        assert_eq!(line.change.who, "kubectl (scale) Update");
        assert_eq!(line.change.time.as_deref(), Some("2026-01-01T12:00:00Z"));
    }

    #[test]
    fn a_status_only_event_makes_no_line() {
        let mut object = deployment("a:1", 3, json!([apply_entry()]));
        let before = Version::of(&object).unwrap();
        object["status"]["readyReplicas"] = json!(3);
        object["metadata"]["resourceVersion"] = json!("8");
        let after = Version::of(&object).unwrap();
        assert!(
            live_change(
                "d",
                schema(),
                &Prior::of(&before),
                &after,
                &Prior::of(&after),
                None,
                "t"
            )
            .is_none()
        );
    }
}
