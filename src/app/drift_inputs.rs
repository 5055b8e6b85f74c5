//! What each object's last drift compare read (a workload's or another kind's), kept as a hash
//! ([`Version::drift_inputs`](crate::drift::live_changes::Version::drift_inputs)): a watch
//! event that leaves it as it was (a write to `status` alone: a rollout's progress, a
//! controller's bookkeeping) keeps the object's drift answer without reading the object into an
//! extract or comparing it. A write to any field of the object, or one that moves an entry
//! owning more than `status`, is compared as before: an added-live label is drift too.
use std::collections::HashMap;

use crate::manifest::ObjectKey;

#[derive(Debug, Clone, Default)]
pub struct KeptInputs {
    /// Each compared object's inputs hash, against the manifests and schemas of now.
    seen: HashMap<ObjectKey, u64>,
    /// Watch events whose drift was kept without a compare (for the tests and benches).
    pub kept: u64,
}

impl KeptInputs {
    /// Whether `key`'s last compare read these same inputs.
    pub fn same(&self, key: &ObjectKey, inputs: u64) -> bool {
        self.seen.get(key) == Some(&inputs)
    }

    /// `key` was compared from `inputs`.
    pub fn compared(&mut self, key: &ObjectKey, inputs: u64) {
        match self.seen.get_mut(key) {
            Some(kept) => *kept = inputs,
            None => {
                self.seen.insert(key.clone(), inputs);
            }
        }
    }

    /// `key`'s drift was set another way (deleted, fetched, not comparable): its next event is
    /// compared.
    pub fn forget(&mut self, key: &ObjectKey) {
        self.seen.remove(key);
    }

    /// What a compare reads beside the object changed (manifests, schemas, the context):
    /// every object's next event is compared.
    pub fn clear(&mut self) {
        self.seen.clear();
    }
}
