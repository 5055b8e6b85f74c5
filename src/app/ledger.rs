//! The drift ledger: the drift of every object the live view compares, workloads and objects of
//! every other kind alike, under the manifests' key. A workload (a table row) has an entry
//! whatever its drift — `unmanaged` is one — so that the table can show it; an object of another
//! kind only while it has a manifest (most of a cluster has none). The fetches asked after a
//! manifest change are noted here too, with whether a watch event overtook each.
use crate::manifest::ObjectKey;
use std::collections::HashMap;
use std::sync::Arc;

use super::DriftSummary;
use crate::drift::Attribution;

/// The drift of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectEntry {
    pub summary: DriftSummary,
    /// The newest writer of its drifted fields (for the `:drift` view); boxed, as most objects
    /// have none and tens of thousands of entries are held.
    pub newest: Option<Box<Attribution>>,
    /// The GitOps controllers its live object says own it (a workload's are on its row too).
    pub owners: Vec<crate::gitops::Owner>,
}

impl ObjectEntry {
    /// An entry that says `summary` alone (no writer, no owner known).
    pub fn alone(summary: DriftSummary) -> ObjectEntry {
        ObjectEntry {
            summary,
            newest: None,
            owners: Vec::new(),
        }
    }
}

/// Drift by object, and the fetches under way.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    /// Keyed by the timeline's own key of each object
    /// ([`super::changes::Changes::shared_key`]), whose strings are the index's.
    entries: HashMap<Arc<ObjectKey>, ObjectEntry>,
    /// Objects fetched after their manifest changed, and whether a watch event of theirs came
    /// since: the answer is then older than the entry and is dropped.
    fetching: HashMap<ObjectKey, bool>,
}

impl Ledger {
    pub fn get(&self, key: &ObjectKey) -> Option<&ObjectEntry> {
        self.entries.get(key)
    }

    /// The drift of `key`; not computed when it has no entry.
    pub fn summary(&self, key: &ObjectKey) -> &DriftSummary {
        const NOT_COMPUTED: &DriftSummary = &DriftSummary::NotComputed;
        self.entries.get(key).map_or(NOT_COMPUTED, |e| &e.summary)
    }

    pub fn contains(&self, key: &ObjectKey) -> bool {
        self.entries.contains_key(key)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&ObjectKey, &ObjectEntry)> {
        self.entries.iter().map(|(k, e)| (Arc::as_ref(k), e))
    }

    /// The entries of the table's rows (the workloads).
    pub fn rows(&self) -> impl Iterator<Item = &ObjectEntry> {
        self.iter()
            .filter(|(key, _)| super::App::is_row_kind(key))
            .map(|(_, entry)| entry)
    }

    /// The entries of the objects of other kinds.
    pub fn others(&self) -> impl Iterator<Item = &ObjectEntry> {
        self.iter()
            .filter(|(key, _)| !super::App::is_row_kind(key))
            .map(|(_, entry)| entry)
    }

    /// Sets `key`'s entry (a new key is made by `shared`); a summary not computed removes it.
    /// Whether the entry changed.
    pub fn set(
        &mut self,
        key: &ObjectKey,
        entry: ObjectEntry,
        shared: impl FnOnce(&ObjectKey) -> Arc<ObjectKey>,
    ) -> bool {
        if entry.summary == DriftSummary::NotComputed {
            return self.entries.remove(key).is_some();
        }
        match self.entries.get_mut(key) {
            Some(slot) if *slot == entry => false,
            Some(slot) => {
                *slot = entry;
                true
            }
            None => {
                self.entries.insert(shared(key), entry);
                true
            }
        }
    }

    /// Sets `key`'s drift to `summary` alone, under a key of its own (tests and benches set
    /// up the ledger so).
    pub fn set_summary(&mut self, key: &ObjectKey, summary: DriftSummary) {
        self.set(key, ObjectEntry::alone(summary), |key| {
            Arc::new(key.clone())
        });
    }

    pub fn remove(&mut self, key: &ObjectKey) -> Option<ObjectEntry> {
        self.entries.remove(key)
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&ObjectKey, &ObjectEntry) -> bool) {
        self.entries.retain(|k, e| keep(k, e));
    }

    /// `key`'s live object is asked for.
    pub fn asked(&mut self, key: ObjectKey) {
        self.fetching.insert(key, false);
    }

    /// A watch event of `key` came: an answer to a fetch asked before it is older than it.
    pub fn superseded(&mut self, key: &ObjectKey) {
        if let Some(superseded) = self.fetching.get_mut(key) {
            *superseded = true;
        }
    }

    /// The answer for `key` came: whether a watch event overtook it (it is then dropped).
    pub fn answered(&mut self, key: &ObjectKey) -> bool {
        self.fetching.remove(key) == Some(true)
    }

    /// The start's fetch of every row filled the table of fetches: it is not kept once empty.
    pub fn fetches_done(&mut self) {
        if self.fetching.is_empty() {
            self.fetching.shrink_to_fit();
        }
    }
}
