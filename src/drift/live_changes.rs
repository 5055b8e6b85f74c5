//! The live part of the change timeline: each watch event of an object compared with the version
//! before it, as one line (the fields that changed, old → new, and the manager whose
//! `managedFields` entry moved). What is kept of the version before ([`Prior`]) is small: the
//! object's text less its `status`, `managedFields` and what is never drift, cut from the
//! event's own text (no parse of the object), held packed ([`crate::packed`]) with a hash of
//! that text, and a hash of each entry. A write that changes only `status` (a rollout's
//! progress) makes no line and costs a scan of the text and its hash: the previous version is
//! unpacked and the new one parsed only when they differ.
use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use std::hash::{Hash, Hasher};

use crate::managed_fields::{
    Comparison, FieldPath, FieldSet, ManagedFieldsEntry, Operation, PathElement, owning_elements,
};
use crate::schema::Schema;

use super::changes::{Agrees, Change, Desired, agrees};
use super::normalize::{Place, never_drift};
use crate::packed::{Names, Packed};

/// Fields a line names at most (the rest counted), as `kdrift changes` does.
const SHOWN_FIELDS: usize = 6;
/// A value longer than this is cut (with `…`) in a line.
const VALUE_CHARS: usize = 48;

/// One version of a watched object as the timeline reads it, from the event's JSON text.
#[derive(Debug, Clone)]
pub struct Version<'a> {
    /// The object without `status`, `managedFields` and what is never drift (server metadata,
    /// the revision and last-applied annotations), as JSON text: the event's own bytes for
    /// every field kept, so two versions compare as text.
    pub body: String,
    /// Each `managedFields` entry's identity and time, its fields' text unread.
    stamps: Vec<EntryText<'a>>,
    /// `metadata.managedFields` as the event has it, read in full only for the lines of an
    /// object first listed with a manifest.
    managed_fields: Option<&'a RawValue>,
    /// The last client-side apply's annotation, which the body leaves out but a drift compare
    /// reads ([`Version::drift_inputs`]).
    last_applied: Option<&'a RawValue>,
}

/// One `managedFields` entry as an event has it: its identity and time read, its fields left
/// as text (read only for the entry a line names), and a hash of all of it (what a
/// [`Prior`] keeps to tell an entry that moved).
#[derive(Debug, Clone)]
struct EntryText<'a> {
    manager: Cow<'a, str>,
    operation: Operation,
    subresource: Option<Cow<'a, str>>,
    time: Option<Cow<'a, str>>,
    fields: Option<&'a RawValue>,
    stamp: u64,
}

impl EntryText<'_> {
    fn who(&self) -> String {
        super::changes::who(&self.manager, self.subresource.as_deref(), self.operation)
    }

    /// Whether it owns nothing but `status` (or nothing): a drift compare leaves such an entry
    /// out (`drift::live::entry_of`). Its fields' top level is scanned, not read.
    fn status_only(&self) -> bool {
        self.fields.is_some_and(|fields| {
            members(fields.get()).is_ok_and(|m| m.iter().all(|(name, _)| name == "f:status"))
        })
    }

    /// Whether its fields' text may name one of `elements` (false only when it names none:
    /// a search of the text, not a read; an element whose key the text might escape counts as
    /// named).
    fn may_name(&self, elements: &[&PathElement]) -> bool {
        let Some(text) = self.fields else {
            return false;
        };
        elements.iter().any(|element| match element {
            PathElement::Field(name)
                if name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b)) =>
            {
                text.get().contains(&format!("\"f:{name}\""))
            }
            _ => true,
        })
    }

    /// Its fields read (`None` when their text cannot be read: the line goes without them).
    fn field_set(&self) -> Option<FieldSet> {
        let Some(text) = self.fields else {
            return Some(FieldSet::new());
        };
        let value: Value = serde_json::from_str(text.get()).ok()?;
        FieldSet::from_fields_v1(&value).ok()
    }
}

/// What a line at start says of one `managedFields` entry before its fields are read.
pub struct EntryStamp<'a> {
    /// `kubectl (scale) Update`.
    pub who: String,
    pub manager: &'a str,
    pub time: Option<&'a str>,
    /// The entry's `fieldsV1` as JSON text (`{}` when it has none).
    pub fields: &'a str,
}

/// A JSON object's members in their order, each value's text unread. A name with escapes is
/// unescaped (owned); the others borrow the text.
struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

struct Name<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> Visitor<'de> for Text {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(Text)
    }
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> Visitor<'de> for Object {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(Name(name)) = map.next_key()? {
                    members.push((name, map.next_value::<&'de RawValue>()?));
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(Object)
    }
}

/// An entry's identity and time as the event has it (its fields left unread).
#[derive(Deserialize)]
struct StampText<'a> {
    #[serde(borrow, default)]
    manager: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    operation: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    subresource: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    time: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "fieldsV1")]
    fields: Option<&'a RawValue>,
}

fn push_name(out: &mut String, name: &str) {
    if name
        .chars()
        .any(|c| c == '"' || c == '\\' || c.is_control())
    {
        out.push_str(&Value::from(name).to_string());
    } else {
        out.push('"');
        out.push_str(name);
        out.push('"');
    }
}

fn members(text: &str) -> Result<Vec<(Cow<'_, str>, &RawValue)>, String> {
    serde_json::from_str::<Members>(text)
        .map(|Members(m)| m)
        .map_err(|e| format!("its text cannot be read: {e}"))
}

/// Starts a member of an object being written: a comma before all but the first.
fn member(out: &mut String, first: &mut bool, name: &str) {
    if !std::mem::take(first) {
        out.push(',');
    }
    push_name(out, name);
    out.push(':');
}

fn read_stamps(list: &RawValue) -> Result<Vec<EntryText<'_>>, String> {
    let texts: Option<Vec<StampText<'_>>> = serde_json::from_str(list.get())
        .map_err(|e| format!("its managedFields cannot be read: {e}"))?;
    texts
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let operation = match s.operation.as_deref() {
                Some("Apply") => Operation::Apply,
                Some("Update") => Operation::Update,
                Some(other) => {
                    return Err(format!(
                        "its managedFields cannot be read: entry {i}: operation \"{other}\" is neither \"Apply\" nor \"Update\""
                    ));
                }
                None => {
                    return Err(format!(
                        "its managedFields cannot be read: entry {i}: no \"operation\""
                    ));
                }
            };
            let mut hash = std::hash::DefaultHasher::new();
            (
                &s.manager,
                operation.as_str(),
                &s.subresource,
                &s.time,
                s.fields.map(RawValue::get),
            )
                .hash(&mut hash);
            Ok(EntryText {
                manager: s.manager.unwrap_or_default(),
                operation,
                subresource: s.subresource.filter(|s| !s.is_empty()),
                time: s.time,
                fields: s.fields,
                stamp: hash.finish(),
            })
        })
        .collect()
}

impl<'a> Version<'a> {
    /// Reads a version from the object's JSON text (with or without its `status`): the text
    /// is scanned, not parsed into a tree.
    pub fn of_text(text: &'a str) -> Result<Version<'a>, String> {
        let top = Place::default();
        let meta_place = top.child("metadata");
        let annotations_place = meta_place.child("annotations");
        let mut managed_fields = None;
        let mut last_applied = None;
        let mut body = String::with_capacity(text.len() / 2);
        body.push('{');
        let mut first = true;
        for (name, value) in members(text)? {
            let name = &*name;
            if name == "status"
                || (never_drift(top, name) && !matches!(name, "apiVersion" | "kind"))
            {
                continue;
            }
            member(&mut body, &mut first, name);
            if name != "metadata" || !value.get().starts_with('{') {
                body.push_str(value.get());
                continue;
            }
            body.push('{');
            let mut first = true;
            for (name, value) in members(value.get())? {
                let name = &*name;
                if name == "managedFields" {
                    managed_fields = Some(value);
                    continue;
                }
                if never_drift(meta_place, name) {
                    continue;
                }
                member(&mut body, &mut first, name);
                if name != "annotations" || !value.get().starts_with('{') {
                    body.push_str(value.get());
                    continue;
                }
                body.push('{');
                let mut first = true;
                for (name, value) in members(value.get())? {
                    if !never_drift(annotations_place, &name) {
                        member(&mut body, &mut first, &name);
                        body.push_str(value.get());
                    } else if name == super::live::LAST_APPLIED {
                        last_applied = Some(value);
                    }
                }
                body.push('}');
            }
            body.push('}');
        }
        body.push('}');
        let stamps = match managed_fields {
            None => Vec::new(),
            Some(list) => read_stamps(list)?,
        };
        Ok(Version {
            body,
            stamps,
            managed_fields,
            last_applied,
        })
    }

    /// A hash of all a drift compare of this version reads: the body, the last client-side
    /// apply's annotation, and each `managedFields` entry that owns more than `status`, in
    /// their order. Two versions of an object with the same hash have the same drift
    /// against an unchanged manifest: a write to `status` alone, or one whose only trace beside
    /// the body is a status entry's time, needs no compare.
    pub fn drift_inputs(&self) -> u64 {
        let mut hash = std::hash::DefaultHasher::new();
        self.body.hash(&mut hash);
        self.last_applied.map(RawValue::get).hash(&mut hash);
        // In their order (which entry a compare finds first may depend on it); a status
        // entry moved among them changes nothing.
        for entry in self.stamps.iter().filter(|e| !e.status_only()) {
            entry.stamp.hash(&mut hash);
        }
        hash.finish()
    }

    /// The entries as a line at start names them, their fields unread.
    pub fn entry_stamps(&self) -> impl Iterator<Item = EntryStamp<'_>> {
        self.stamps.iter().map(|s| EntryStamp {
            who: s.who(),
            manager: &s.manager,
            time: s.time.as_deref(),
            fields: s.fields.map_or("{}", |f| f.get()),
        })
    }

    /// The `managedFields` entries in full (their fields read): only for a line.
    pub fn entries(&self) -> Result<Vec<ManagedFieldsEntry>, String> {
        let Some(list) = self.managed_fields else {
            return Ok(Vec::new());
        };
        let value: Value = serde_json::from_str(list.get())
            .map_err(|e| format!("its managedFields cannot be read: {e}"))?;
        ManagedFieldsEntry::parse_list(&value)
            .map_err(|e| format!("its managedFields cannot be read: {e}"))
    }

    /// The body as a tree (for the comparison of a line).
    fn tree(&self) -> Option<Value> {
        serde_json::from_str(&self.body).ok()
    }
}
/// What the timeline keeps of an object's last version to compare the next one with: its
/// body packed ([`Packed`]: about 40 % of the text) and a hash of the text, so that the next
/// version is compared without unpacking, and unpacked only when it differs (a write's line).
#[derive(Debug, Clone, PartialEq)]
pub struct Prior {
    /// A hash of [`Version::body`]'s text.
    hash: u64,
    /// [`Version::body`], packed (`None` if it could not be: the next version makes no line).
    body: Option<Packed>,
    /// A hash of each `managedFields` entry (identity, time and fields): an entry of the next
    /// version whose hash is not here moved.
    stamps: Box<[u64]>,
}

fn body_hash(body: &str) -> u64 {
    let mut hash = std::hash::DefaultHasher::new();
    body.hash(&mut hash);
    hash.finish()
}

impl Prior {
    /// What is kept of `version`, its field names numbered in `names`.
    pub fn of(version: &Version<'_>, names: &mut Names) -> Prior {
        Prior {
            hash: body_hash(&version.body),
            body: Packed::of_text(&version.body, names),
            stamps: version.stamps.iter().map(|s| s.stamp).collect(),
        }
    }

    /// Whether `version` changed nothing a line names (only `status` or server metadata).
    pub fn unchanged(&self, version: &Version<'_>) -> bool {
        self.hash == body_hash(&version.body)
    }

    /// Takes the entries of `version`, whose body is this one's ([`Prior::unchanged`]): the
    /// body is not packed again.
    pub fn restamp(&mut self, version: &Version<'_>) {
        if self.stamps.len() != version.stamps.len()
            || self
                .stamps
                .iter()
                .zip(&version.stamps)
                .any(|(a, b)| *a != b.stamp)
        {
            self.stamps = version.stamps.iter().map(|s| s.stamp).collect();
        }
    }

    /// The bytes it holds on the heap (for the benches).
    pub fn heap_bytes(&self) -> usize {
        self.body.as_ref().map_or(0, Packed::len) + std::mem::size_of_val(&*self.stamps)
    }
}

/// A timeline line with what the live view filters and opens it by.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveChange {
    pub change: Change,
    /// The manager alone (`kubectl`), without subresource and operation, for the filter.
    pub manager: String,
    /// The fields the write changed, all of them (its text names the first few): whether git
    /// agrees with the line is said again from them when the object's desired state or drift
    /// moves. The first is where `enter` opens the diff. None for a creation or a deletion.
    pub paths: Vec<FieldPath>,
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

/// Copies of the two trees less the members equal in both (through objects; a list that
/// differs is kept whole): every field that changed, with both its values, is still there.
fn differing(old: &Value, new: &Value) -> (Value, Value) {
    let (Value::Object(a), Value::Object(b)) = (old, new) else {
        return (old.clone(), new.clone());
    };
    let (mut left, mut right) = (Map::new(), Map::new());
    for (name, x) in a {
        match b.get(name) {
            Some(y) if x == y => {}
            Some(y) => {
                let (l, r) = differing(x, y);
                left.insert(name.clone(), l);
                right.insert(name.clone(), r);
            }
            None => {
                left.insert(name.clone(), x.clone());
            }
        }
    }
    for (name, y) in b {
        if !a.contains_key(name) {
            right.insert(name.clone(), y.clone());
        }
    }
    (Value::Object(left), Value::Object(right))
}

/// The fields of entry `i`, read once.
fn read_set<'s>(
    sets: &'s mut [Option<Option<FieldSet>>],
    entries: &[EntryText<'_>],
    i: usize,
) -> Option<&'s FieldSet> {
    sets[i]
        .get_or_insert_with(|| entries[i].field_set())
        .as_ref()
}

/// Of the entries at `among`, the one with the newest time (the last of equals).
fn newest(entries: &[EntryText<'_>], among: impl Iterator<Item = usize>) -> Option<usize> {
    // RFC 3339 times of one server sort as text; an entry without one is oldest.
    among.max_by(|&a, &b| entries[a].time.cmp(&entries[b].time))
}

/// The line of one watch event: `after` compared with the version before it. `None` when nothing but `status` or server metadata changed. The writer is
/// the manager whose entry moved (new, or a new time) and owns a changed field, else any whose
/// entry moved, else the owner of the first changed field (a v1.36 server records no time for a
/// `/scale` write, so a second `kubectl scale` moves nothing). The line's time is the moved
/// entry's, else `seen` (when the event arrived).
pub fn live_change(
    object: &str,
    schema: Schema,
    before: &Prior,
    after: &Version<'_>,
    desired: Option<&Desired<'_>>,
    seen: &str,
) -> Option<LiveChange> {
    if before.unchanged(after) {
        return None;
    }
    let old: Value = before.body.as_ref()?.unpack()?;
    let new = after.tree()?;
    // The comparison walks only what differs; values are looked up in the whole trees (an
    // atomic map's line shows all of it).
    let (old_cut, new_cut) = differing(&old, &new);
    let comparison = Comparison::of(schema, Some(&old_cut), &new_cut);
    let mut paths = comparison.modified.leaves();
    paths.extend(comparison.added.leaves());
    paths.extend(comparison.removed.leaves());
    paths.sort();
    paths.dedup();
    if paths.is_empty() {
        return None;
    }
    // Only the entries that moved (new, or a new time or fields: usually one) have their
    // fields read; the others only when no moved entry names the writer. An entry whose fields
    // cannot be read is passed over.
    let entries = &after.stamps;
    let mut sets: Vec<Option<Option<FieldSet>>> = vec![None; entries.len()];
    let moved: Vec<usize> = (0..entries.len())
        .filter(|&i| !before.stamps.contains(&entries[i].stamp))
        .collect();
    let touching: Vec<usize> = moved
        .iter()
        .copied()
        .filter(|&i| {
            paths.iter().any(|p| {
                let last = p.elements().last().into_iter().collect::<Vec<_>>();
                entries[i].may_name(&last)
                    && read_set(&mut sets, entries, i).is_some_and(|set| set.touches(p))
            })
        })
        .collect();
    let moved_writer =
        newest(entries, touching.into_iter()).or_else(|| newest(entries, moved.iter().copied()));
    // Else the owner listed last (the newest write) of the first changed field that has one.
    let writer = moved_writer.or_else(|| {
        paths.iter().find_map(|p| {
            let owning = owning_elements(schema, p);
            (0..entries.len()).rev().find(|&i| {
                entries[i].may_name(&owning)
                    && read_set(&mut sets, entries, i).is_some_and(|set| set.owns(schema, p))
            })
        })
    });
    let writer = writer.map(|i| &entries[i]);
    let time = moved_writer
        .and_then(|i| entries[i].time.as_deref())
        .unwrap_or(seen)
        .to_owned();
    let mut shown: Vec<String> = paths
        .iter()
        .take(SHOWN_FIELDS)
        .map(|p| {
            format!(
                "{p}: {} → {}",
                value_text(p.lookup(schema, &old)),
                value_text(p.lookup(schema, &new))
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
            who: writer.map_or_else(|| "(manager unknown)".to_owned(), EntryText::who),
            what: shown.join(", "),
            git: agrees(&paths, desired),
            writer: None,
        },
        manager: writer.map_or_else(String::new, |w| w.manager.to_string()),
        paths,
    })
}

/// The line of an object that appeared after the timeline began: created by its newest writer.
pub fn created(
    object: &str,
    after: &Version<'_>,
    desired: Option<&Desired<'_>>,
    seen: &str,
) -> LiveChange {
    let writer = newest(&after.stamps, 0..after.stamps.len()).map(|i| &after.stamps[i]);
    let git = match desired {
        None => Agrees::NotInGit,
        Some(d) if d.drift.items.iter().any(|i| i.class.is_drift()) => Agrees::Drifted,
        Some(_) => Agrees::InSync,
    };
    LiveChange {
        change: Change {
            time: Some(
                writer
                    .and_then(|w| w.time.as_deref())
                    .unwrap_or(seen)
                    .to_owned(),
            ),
            object: object.to_owned(),
            who: writer.map_or_else(|| "(manager unknown)".to_owned(), EntryText::who),
            what: "created".to_owned(),
            git,
            writer: None,
        },
        manager: writer.map_or_else(String::new, |w| w.manager.to_string()),
        paths: Vec::new(),
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
            writer: None,
        },
        manager: String::new(),
        paths: Vec::new(),
    }
}

#[cfg(test)]
#[path = "live_changes_tests.rs"]
mod tests;
