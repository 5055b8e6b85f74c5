//! Rows that stall: a StatefulSet or DaemonSet without progress for [`STALL_AFTER`] turns
//! stuck (they have no progress deadline of their own), and the pods of rows short of ready ones
//! are asked why.
//!
//! [`STALL_AFTER`]: crate::rollout::workloads::STALL_AFTER
use jiff::Timestamp;

use super::App;
use crate::manifest::ObjectKey;

/// A row whose rollout stalled or lacks ready pods: its pods are asked why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stalled {
    pub key: ObjectKey,
    pub desired: i32,
    pub ready: i32,
}

impl App {
    /// Rows whose rollout made no progress until now are stuck (StatefulSets and DaemonSets,
    /// which have no progress deadline of their own). Before each frame.
    pub(super) fn expire_stalls(&mut self) -> Vec<Stalled> {
        let mut stalled = Vec::new();
        while let Some((deadline, key)) = self.stalls.first().cloned()
            && deadline <= self.now
        {
            self.stalls.pop_first();
            let Some(entry) = self.cache.workloads.get_mut(&key) else {
                continue;
            };
            let before = self.table.placement(entry);
            if entry.mark_stalled(self.now) {
                let after = self.table.placement(entry);
                self.table.row_changed(&key, Some(before), Some(after));
                self.dirty = true;
                entry.asked = Some(self.now);
                stalled.push(Stalled {
                    key,
                    desired: entry.row.desired,
                    ready: entry.row.ready,
                });
            }
        }
        stalled
    }

    /// What the pods of rows short of ready ones say: the row shows it beside its phase, and a
    /// stalled row's stuck reason becomes the pods' state (`stuck: CrashLoopBackOff`).
    pub(super) fn stalls_explained(&mut self, explained: Vec<(ObjectKey, Option<String>)>) {
        for (key, why) in explained {
            let Some(entry) = self.cache.workloads.get_mut(&key) else {
                continue;
            };
            let before = self.table.placement(entry);
            if entry.pods_why != why {
                self.dirty = true;
            }
            entry.pods_why = why;
            if entry.mark_stalled(self.now) {
                let after = self.table.placement(entry);
                self.table.row_changed(&key, Some(before), Some(after));
                self.dirty = true;
            }
        }
    }

    /// When the next row stalls, if one may (the loop wakes then to show it).
    pub fn next_stall(&self) -> Option<Timestamp> {
        self.stalls.first().map(|(at, _)| *at)
    }
}
