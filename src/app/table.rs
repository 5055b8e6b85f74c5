//! The Deployment table's derived state: the filtered rows in display order, the selection and
//! the scroll offset.
//!
//! The order is kept incrementally: a `BTreeSet` of (sort rank, key) that each watch event
//! updates in O(log n) — a row's place by phase or by last change moves only when that row
//! changes, and ages ticking move nothing. A frame reads only the rows on screen. The whole set
//! is rebuilt only when the sort or filter changes or a relist ends.
use std::cmp::Reverse;
use std::collections::BTreeSet;
use std::ops::Bound;

use jiff::Timestamp;

use super::cache::{ClusterCache, WorkloadEntry};
use crate::cluster::rows::WorkloadKind;
use crate::manifest::ObjectKey;
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

/// Where a row goes under the current sort, before its key breaks ties (so rows of one phase, or
/// of one time, stay in name order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Rank {
    /// Objects in git and not in the cluster come after the live rows, by key.
    missing: bool,
    phase: u8,
    newest_first: Reverse<Option<Timestamp>>,
}

const MISSING: Rank = Rank {
    missing: true,
    phase: 0,
    newest_first: Reverse(None),
};

/// A row's key in the table's order: namespace, then name, then kind (kubectl's `get -A` order;
/// the key's own order puts the kind first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByName(pub ObjectKey);

impl Ord for ByName {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let (a, b) = (&self.0, &other.0);
        (&a.namespace, &a.name)
            .cmp(&(&b.namespace, &b.name))
            .then_with(|| WorkloadKind::of_key(a).cmp(&WorkloadKind::of_key(b)))
            .then_with(|| a.cmp(b))
    }
}

impl PartialOrd for ByName {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A row's place in a table: its rank, then its key.
pub type Place = (Rank, ByName);

/// A range of places in a table: where it starts and where it ends.
pub type PlaceRange<'a> = (Bound<&'a Place>, Bound<&'a Place>);

/// What the table needs to know of one row to place it: computed before and after an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    rank: Rank,
    /// It passes the filter.
    shown: bool,
    stuck: bool,
}

#[derive(Debug, Clone, Default)]
pub struct TableView {
    pub sort: SortBy,
    /// The `/` filter (case-insensitive; matches namespace/name or phase).
    pub filter: String,
    /// The kind shown (`:deploy`, `:sts`, `:ds`), or every workload kind (`:workloads`).
    pub kind: Option<WorkloadKind>,
    /// The rows shown, in order.
    order: BTreeSet<Place>,
    pub selected: usize,
    /// Index of the first row on screen.
    pub offset: usize,
    selected_key: Option<ObjectKey>,
    stale: bool,
    /// Rows moved since the last refresh: find the selected row's index again.
    moved: bool,
    pub stuck: usize,
    /// Objects in git and not in the cluster (missing): listed after the live rows, sorted.
    pub missing: Vec<ObjectKey>,
    /// In a view over several contexts, this table's context: the filter matches its name too
    /// (`/prod-eu` keeps that cluster's rows), as it matches the CONTEXT column shown.
    context: Option<String>,
}

impl TableView {
    /// Rebuild the order before the next frame.
    pub fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// The context the filter also matches (`None` when one context is watched: its name is not
    /// on the rows); the rows are placed again when it changes.
    pub fn set_context(&mut self, context: Option<&str>) {
        if self.context.as_deref() != context {
            self.context = context.map(str::to_owned);
            self.stale = true;
        }
    }

    /// The filter matches this table's context's name: every row passes it.
    fn context_matches(&self, needle: &str) -> bool {
        self.context
            .as_deref()
            .is_some_and(|c| contains_ignore_case(c, needle))
    }

    /// How a row is placed under the current sort and filter.
    pub fn placement(&self, e: &WorkloadEntry) -> Placement {
        let rank = match self.sort {
            SortBy::Name => Rank::default(),
            SortBy::Phase => Rank {
                phase: e.rollout.phase.rank(),
                ..Rank::default()
            },
            SortBy::Age => Rank {
                newest_first: Reverse(e.row.last_change),
                ..Rank::default()
            },
        };
        let needle = self.filter.trim().to_ascii_lowercase();
        let shown = self.kind.is_none_or(|k| k == e.row.kind())
            && (needle.is_empty() || matches_filter(e, &needle) || self.context_matches(&needle));
        Placement {
            rank,
            shown,
            stuck: matches!(e.rollout.phase, RolloutPhase::Stuck { .. }),
        }
    }

    /// One row came (`before` = None), went (`after` = None) or changed; `before` must have been
    /// computed with [`Self::placement`] under the same sort and filter.
    pub fn row_changed(
        &mut self,
        key: &ObjectKey,
        before: Option<Placement>,
        after: Option<Placement>,
    ) {
        if self.stale || before == after {
            return;
        }
        self.stuck = (self.stuck + usize::from(after.is_some_and(|p| p.stuck)))
            .saturating_sub(usize::from(before.is_some_and(|p| p.stuck)));
        if let Some(b) = before.filter(|b| b.shown) {
            self.order.remove(&(b.rank, ByName(key.clone())));
        }
        if let Some(a) = after.filter(|a| a.shown) {
            self.order.insert((a.rank, ByName(key.clone())));
        }
        self.moved = true;
    }

    pub fn reset_selection(&mut self) {
        self.selected = 0;
        self.offset = 0;
        self.selected_key = None;
    }

    /// How many rows are shown (after the filter).
    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The keys of rows `start..start + count`, in order (costs the rows skipped, not the table).
    pub fn window(&self, start: usize, count: usize) -> impl Iterator<Item = &ObjectKey> {
        self.order.iter().skip(start).take(count).map(|(_, k)| &k.0)
    }

    pub fn key_at(&self, index: usize) -> Option<&ObjectKey> {
        self.window(index, 1).next()
    }

    pub fn selected_key(&self) -> Option<&ObjectKey> {
        self.key_at(self.selected)
    }

    /// The rows shown with their places, in order: the fleet's table merges the tables of its
    /// contexts by these ([`super::fleet`]).
    pub fn ranked(&self) -> impl Iterator<Item = &Place> {
        self.order.iter()
    }

    /// The place of row `key` in the order shown, if it is shown.
    pub fn place_of(&self, cache: &ClusterCache, key: &ObjectKey) -> Option<&Place> {
        let rank = match cache.workloads.get(key) {
            Some(entry) => self.placement(entry).rank,
            None => MISSING,
        };
        self.order.get(&(rank, ByName(key.clone())))
    }

    /// The rows shown from place `from` to place `to`, in order.
    pub fn ranked_in<'a>(
        &'a self,
        (from, to): PlaceRange<'a>,
    ) -> impl DoubleEndedIterator<Item = &'a Place> {
        self.order.range::<Place, _>((from, to))
    }

    /// Select the row of `key` (its index is found at the next [`Self::refresh`]).
    pub fn select(&mut self, key: ObjectKey) {
        self.selected_key = Some(key);
        self.moved = true;
    }

    /// Move the selection by `delta` rows (clamped), remembering the row by key so it stays
    /// selected while rows are re-sorted under it.
    pub fn move_by(&mut self, delta: isize) {
        if self.order.is_empty() {
            return;
        }
        let last = self.order.len() - 1;
        self.selected = self.selected.saturating_add_signed(delta).min(last);
        self.selected_key = self.key_at(self.selected).cloned();
    }

    pub fn select_first(&mut self) {
        self.move_by(isize::MIN);
    }

    pub fn select_last(&mut self) {
        self.move_by(isize::MAX);
    }

    /// Rebuild the order if stale, then keep the selection on its row and on screen.
    pub fn refresh(&mut self, cache: &ClusterCache, height: usize) {
        if self.stale {
            self.stale = false;
            self.rebuild(cache);
            self.moved = true;
        }
        if self.moved {
            self.moved = false;
            let found = self.selected_key.as_ref().and_then(|key| {
                let rank = match cache.workloads.get(key) {
                    Some(entry) => self.placement(entry).rank,
                    None => MISSING,
                };
                let item = (rank, ByName(key.clone()));
                self.order
                    .contains(&item)
                    .then(|| self.order.range(..item).count())
            });
            match found {
                Some(i) => self.selected = i,
                // The selected row went: the selection stays where it was, on another row.
                None => self.selected_key = None,
            }
        }
        self.selected = self.selected.min(self.order.len().saturating_sub(1));
        if self.selected_key.is_none() {
            self.selected_key = self.key_at(self.selected).cloned();
        }
        let height = height.max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + height {
            self.offset = self.selected + 1 - height;
        }
        self.offset = self.offset.min(self.order.len().saturating_sub(height));
    }

    fn rebuild(&mut self, cache: &ClusterCache) {
        let mut stuck = 0;
        let mut order = BTreeSet::new();
        for e in cache.workloads.iter() {
            let place = self.placement(e);
            stuck += usize::from(place.stuck);
            if place.shown {
                order.insert((place.rank, ByName(e.row.key.clone())));
            }
        }
        self.stuck = stuck;
        let needle = self.filter.trim().to_ascii_lowercase();
        for k in &self.missing {
            let shown = self.kind.is_none_or(|kind| kind == WorkloadKind::of_row(k))
                && (needle.is_empty()
                    || self.context_matches(&needle)
                    || contains_ignore_case(&k.name, &needle)
                    || contains_ignore_case(&k.namespace, &needle)
                    || "missing".contains(needle.as_str()));
            if shown {
                order.insert((MISSING, ByName(k.clone())));
            }
        }
        self.order = order;
    }
}

fn matches_filter(e: &WorkloadEntry, needle: &str) -> bool {
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
    use crate::cluster::rows::{ConditionRow, WorkloadRow};
    use crate::cluster::watch::WatchUpdate;
    use jiff::Timestamp;

    fn deploy(ns: &str, name: &str, stuck: bool, changed_secs: i64) -> WorkloadRow {
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
        WorkloadRow {
            key: crate::cluster::rows::WorkloadKind::Deployment.key(ns, name),
            generation: 1,
            observed_generation: 1,
            desired: 2,
            replicas: 2,
            updated: 2,
            ready: 2,
            available: 2,
            paused: false,
            owners: Vec::new(),
            facts: Default::default(),
            conditions,
            revision: Some(1),
            images: vec![],
            created: None,
            last_change: Some(Timestamp::from_second(changed_secs).unwrap()),
        }
    }

    fn cache(rows: Vec<WorkloadRow>) -> ClusterCache {
        let mut c = ClusterCache::default();
        for r in rows {
            c.workloads
                .set_mut(WorkloadKind::Deployment)
                .apply(WatchUpdate::Apply(r.into()));
        }
        c
    }

    fn names(t: &TableView) -> Vec<String> {
        t.window(0, usize::MAX)
            .map(|k| format!("{}/{}", k.namespace, k.name))
            .collect()
    }

    /// Apply one update as the app does: the row moves in the table's order.
    fn apply(c: &mut ClusterCache, t: &mut TableView, u: WatchUpdate<WorkloadEntry>) {
        let key = match &u {
            WatchUpdate::Apply(e) | WatchUpdate::InitApply(e) => e.row.key.clone(),
            WatchUpdate::Delete(k) => k.clone(),
            _ => unreachable!("the tests send rows only"),
        };
        let before = c.workloads.get(&key).map(|e| t.placement(e));
        c.workloads.set_mut(WorkloadKind::Deployment).apply(u);
        let after = c.workloads.get(&key).map(|e| t.placement(e));
        t.row_changed(&key, before, after);
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
        apply(
            &mut c,
            &mut t,
            WatchUpdate::Apply(deploy("shop", "web", true, 100).into()),
        );
        t.refresh(&c, 10);
        assert_eq!(t.stuck, 2);
        assert_eq!(names(&t), ["auth/login", "shop/cart", "shop/web"]);
        // Sorted by phase, the same change moves the row.
        t.sort = SortBy::Phase;
        t.mark_stale();
        t.refresh(&c, 10);
        assert_eq!(names(&t), ["shop/cart", "shop/web", "auth/login"]);
        apply(
            &mut c,
            &mut t,
            WatchUpdate::Apply(deploy("auth", "login", true, 300).into()),
        );
        t.refresh(&c, 10);
        assert_eq!(names(&t), ["auth/login", "shop/cart", "shop/web"]);
        assert_eq!(t.stuck, 3);
    }

    #[test]
    fn under_age_sort_a_change_moves_only_its_row_and_the_selection_follows() {
        let mut c = sample();
        let mut t = TableView {
            sort: SortBy::Age,
            ..TableView::default()
        };
        t.mark_stale();
        t.refresh(&c, 10);
        assert_eq!(names(&t), ["auth/login", "shop/web", "shop/cart"]);
        t.move_by(1); // shop/web
        apply(
            &mut c,
            &mut t,
            WatchUpdate::Apply(deploy("shop", "cart", false, 400).into()),
        );
        t.refresh(&c, 10);
        assert_eq!(names(&t), ["shop/cart", "auth/login", "shop/web"]);
        assert_eq!(&*t.selected_key().unwrap().name, "web");
        assert_eq!(t.selected, 2);
        apply(
            &mut c,
            &mut t,
            WatchUpdate::Delete(
                crate::cluster::rows::WorkloadKind::Deployment.key("auth", "login"),
            ),
        );
        t.refresh(&c, 10);
        assert_eq!(names(&t), ["shop/cart", "shop/web"]);
        assert_eq!((t.selected, t.stuck), (1, 0));
    }

    #[test]
    fn a_filtered_row_leaves_and_joins_as_it_changes() {
        let mut c = sample();
        let mut t = TableView {
            filter: "stuck".into(),
            ..TableView::default()
        };
        t.mark_stale();
        t.refresh(&c, 10);
        assert_eq!(names(&t), ["shop/cart"]);
        apply(
            &mut c,
            &mut t,
            WatchUpdate::Apply(deploy("shop", "web", true, 100).into()),
        );
        apply(
            &mut c,
            &mut t,
            WatchUpdate::Apply(deploy("shop", "cart", false, 50).into()),
        );
        t.refresh(&c, 10);
        assert_eq!(names(&t), ["shop/web"]);
    }

    proptest::proptest! {
        /// Whatever the updates, the order kept event by event is the order a rebuild makes.
        #[test]
        fn incremental_order_equals_a_rebuild(
            sort in 0..3u8,
            filter in proptest::sample::select(vec!["", "a", "stuck", "n1/"]),
            updates in proptest::collection::vec((0..4u8, 0..6u8, proptest::bool::ANY, 0..5i64, proptest::bool::ANY), 0..40),
        ) {
            let sort = [SortBy::Name, SortBy::Phase, SortBy::Age][usize::from(sort)];
            let mut c = ClusterCache::default();
            let mut t = TableView { sort, filter: filter.into(), ..TableView::default() };
            for (ns, name, stuck, secs, delete) in updates {
                let (ns, name) = (format!("n{ns}"), format!("d{name}"));
                let u = if delete {
                    WatchUpdate::Delete(crate::cluster::rows::WorkloadKind::Deployment.key(&ns, &name))
                } else {
                    WatchUpdate::Apply(deploy(&ns, &name, stuck, secs).into())
                };
                apply(&mut c, &mut t, u);
            }
            t.refresh(&c, 10);
            let mut fresh = TableView { sort, filter: filter.into(), ..TableView::default() };
            fresh.mark_stale();
            fresh.refresh(&c, 10);
            proptest::prop_assert_eq!(names(&t), names(&fresh));
            proptest::prop_assert_eq!(t.stuck, fresh.stuck);
        }
    }
}
