//! The Deployment table's derived state: the filtered, sorted keys, the selection and the scroll
//! offset. Rebuilt at most once per frame, only when rows, sort or filter changed.
use std::cmp::Reverse;

use super::cache::{Change, ClusterCache, DeploymentEntry};
use crate::cluster::rows::ObjectKey;
use crate::rollout::RolloutPhase;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortBy {
    /// Namespace, then name.
    #[default]
    Name,
    /// Stuck first, then paused, progressing, scaling, complete; then by name.
    Phase,
    /// Most recent change first.
    Age,
}

impl SortBy {
    pub fn label(self) -> &'static str {
        match self {
            SortBy::Name => "name",
            SortBy::Phase => "phase",
            SortBy::Age => "age",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct TableView {
    pub sort: SortBy,
    /// The `/` filter (case-insensitive; matches namespace/name or phase).
    pub filter: String,
    /// Keys of the rows shown, in order.
    pub keys: Vec<ObjectKey>,
    pub selected: usize,
    /// Index of the first row on screen.
    pub offset: usize,
    selected_key: Option<ObjectKey>,
    stale: bool,
    /// Row values changed in place: the stuck count must be redone.
    recount: bool,
    pub stuck: usize,
    /// Objects in git and not in the cluster (missing): listed after the live rows, sorted.
    pub missing: Vec<ObjectKey>,
}

impl TableView {
    /// Rebuild the keys before the next frame.
    pub fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// Deployment rows changed: the key list must be rebuilt only if rows came or went, or the
    /// order or the filter depends on values (phase, age); otherwise only the stuck count moves.
    pub fn rows_changed(&mut self, change: Change) {
        match change {
            Change::Nothing => {}
            Change::Display => self.recount = true,
            Change::Membership => self.stale = true,
            Change::Values => {
                self.recount = true;
                if self.sort != SortBy::Name || !self.filter.trim().is_empty() {
                    self.stale = true;
                }
            }
        }
    }

    pub fn reset_selection(&mut self) {
        self.selected = 0;
        self.offset = 0;
        self.selected_key = None;
    }

    pub fn selected_key(&self) -> Option<&ObjectKey> {
        self.keys.get(self.selected)
    }

    /// Move the selection by `delta` rows (clamped), remembering the row by key so it stays
    /// selected while rows are re-sorted under it.
    pub fn move_by(&mut self, delta: isize) {
        if self.keys.is_empty() {
            return;
        }
        let last = self.keys.len() - 1;
        self.selected = self.selected.saturating_add_signed(delta).min(last);
        self.selected_key = self.keys.get(self.selected).cloned();
    }

    pub fn select_first(&mut self) {
        self.move_by(isize::MIN);
    }

    pub fn select_last(&mut self) {
        self.move_by(isize::MAX);
    }

    /// Rebuild the keys if stale, then keep the selection on its row and on screen.
    pub fn refresh(&mut self, cache: &ClusterCache, height: usize) {
        if self.stale {
            self.stale = false;
            self.recount = false;
            self.rebuild(cache);
            if let Some(key) = &self.selected_key
                && let Some(i) = self.keys.iter().position(|k| k == key)
            {
                self.selected = i;
            }
        }
        if self.recount {
            self.recount = false;
            self.stuck = cache
                .deployments
                .iter()
                .filter(|e| matches!(e.rollout.phase, RolloutPhase::Stuck { .. }))
                .count();
        }
        self.selected = self.selected.min(self.keys.len().saturating_sub(1));
        if self.selected_key.is_none() {
            self.selected_key = self.keys.get(self.selected).cloned();
        }
        let height = height.max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + height {
            self.offset = self.selected + 1 - height;
        }
        self.offset = self.offset.min(self.keys.len().saturating_sub(height));
    }

    fn rebuild(&mut self, cache: &ClusterCache) {
        let needle = self.filter.trim().to_ascii_lowercase();
        let mut stuck = 0;
        let mut rows: Vec<&DeploymentEntry> = Vec::with_capacity(cache.deployments.len());
        for e in cache.deployments.iter() {
            if matches!(e.rollout.phase, RolloutPhase::Stuck { .. }) {
                stuck += 1;
            }
            if needle.is_empty() || matches_filter(e, &needle) {
                rows.push(e);
            }
        }
        match self.sort {
            SortBy::Name => {}
            // Stable: rows of one phase keep name order.
            SortBy::Phase => rows.sort_by_key(|e| e.rollout.phase.rank()),
            SortBy::Age => rows.sort_by_key(|e| Reverse(e.row.last_change)),
        }
        self.stuck = stuck;
        self.keys = rows.into_iter().map(|e| e.row.key.clone()).collect();
        self.keys.extend(
            self.missing
                .iter()
                .filter(|k| {
                    needle.is_empty()
                        || contains_ignore_case(&k.name, &needle)
                        || contains_ignore_case(&k.namespace, &needle)
                        || "missing".contains(needle.as_str())
                })
                .cloned(),
        );
    }
}

fn matches_filter(e: &DeploymentEntry, needle: &str) -> bool {
    contains_ignore_case(&e.row.key.name, needle)
        || contains_ignore_case(&e.row.key.namespace, needle)
        || (needle.contains('/') && {
            let full = format!("{}/{}", e.row.key.namespace, e.row.key.name);
            contains_ignore_case(&full, needle)
        })
        || contains_ignore_case(&e.rollout.phase.label(), needle)
}

/// `needle` must be lowercase already; no allocation per row.
fn contains_ignore_case(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::cluster::rows::{ConditionRow, DeploymentRow};
    use crate::cluster::watch::WatchUpdate;
    use jiff::Timestamp;

    fn deploy(ns: &str, name: &str, stuck: bool, changed_secs: i64) -> DeploymentRow {
        let mut conditions = Vec::new();
        if stuck {
            conditions.push(ConditionRow {
                kind: "Progressing".into(),
                status: "False".into(),
                reason: "ProgressDeadlineExceeded".into(),
                message: String::new(),
                last_update: None,
            });
        }
        DeploymentRow {
            key: ObjectKey::new(ns, name),
            generation: 1,
            observed_generation: 1,
            desired: 2,
            replicas: 2,
            updated: 2,
            ready: 2,
            available: 2,
            paused: false,
            conditions,
            revision: Some(1),
            images: vec![],
            created: None,
            last_change: Some(Timestamp::from_second(changed_secs).unwrap()),
        }
    }

    fn cache(rows: Vec<DeploymentRow>) -> ClusterCache {
        let mut c = ClusterCache::default();
        for r in rows {
            c.deployments.apply(WatchUpdate::Apply(r.into()));
        }
        c
    }

    fn names(t: &TableView) -> Vec<String> {
        t.keys
            .iter()
            .map(|k| format!("{}/{}", k.namespace, k.name))
            .collect()
    }

    fn sample() -> ClusterCache {
        cache(vec![
            deploy("shop", "web", false, 100),
            deploy("shop", "cart", true, 50),
            deploy("auth", "login", false, 300),
        ])
    }

    #[test]
    fn sorts_by_name_phase_and_age() {
        let c = sample();
        let mut t = TableView::default();
        t.mark_stale();
        t.refresh(&c, 10);
        assert_eq!(names(&t), ["auth/login", "shop/cart", "shop/web"]);
        t.sort = SortBy::Phase;
        t.mark_stale();
        t.refresh(&c, 10);
        assert_eq!(names(&t), ["shop/cart", "auth/login", "shop/web"]);
        t.sort = SortBy::Age;
        t.mark_stale();
        t.refresh(&c, 10);
        assert_eq!(names(&t), ["auth/login", "shop/web", "shop/cart"]);
        assert_eq!(t.stuck, 1);
    }

    #[test]
    fn filter_matches_name_namespace_path_and_phase_ignoring_case() {
        let c = sample();
        let mut t = TableView::default();
        for (filter, expected) in [
            ("WEB", vec!["shop/web"]),
            ("shop", vec!["shop/cart", "shop/web"]),
            ("p/ca", vec!["shop/cart"]),
            ("stuck", vec!["shop/cart"]),
            ("nothing", vec![]),
        ] {
            t.filter = filter.into();
            t.mark_stale();
            t.refresh(&c, 10);
            assert_eq!(names(&t), expected, "filter {filter:?}");
        }
    }

    #[test]
    fn selection_follows_its_row_through_a_resort() {
        let c = sample();
        let mut t = TableView::default();
        t.mark_stale();
        t.refresh(&c, 10);
        t.move_by(2); // shop/web
        t.sort = SortBy::Age;
        t.mark_stale();
        t.refresh(&c, 10);
        assert_eq!(&*t.selected_key().unwrap().name, "web");
        assert_eq!(t.selected, 1);
    }

    #[test]
    fn offset_keeps_the_selection_on_screen() {
        let rows = (0..50)
            .map(|i| deploy("ns", &format!("d{i:02}"), false, i))
            .collect();
        let c = cache(rows);
        let mut t = TableView::default();
        t.mark_stale();
        t.refresh(&c, 10);
        t.select_last();
        t.refresh(&c, 10);
        assert_eq!((t.selected, t.offset), (49, 40));
        t.select_first();
        t.refresh(&c, 10);
        assert_eq!((t.selected, t.offset), (0, 0));
    }

    #[test]
    fn a_row_turning_stuck_in_place_updates_the_count_without_reordering() {
        let mut c = sample();
        let mut t = TableView::default();
        t.mark_stale();
        t.refresh(&c, 10);
        let change = c
            .deployments
            .apply(WatchUpdate::Apply(deploy("shop", "web", true, 100).into()));
        assert_eq!(change, Change::Values);
        t.rows_changed(change);
        t.refresh(&c, 10);
        assert_eq!(t.stuck, 2);
        assert_eq!(names(&t), ["auth/login", "shop/cart", "shop/web"]);
        // Sorted by phase, the same change moves the row.
        t.sort = SortBy::Phase;
        t.mark_stale();
        t.refresh(&c, 10);
        let change = c.deployments.apply(WatchUpdate::Apply(
            deploy("auth", "login", true, 300).into(),
        ));
        t.rows_changed(change);
        t.refresh(&c, 10);
        assert_eq!(names(&t), ["auth/login", "shop/cart", "shop/web"]);
        assert_eq!(t.stuck, 3);
    }
}
