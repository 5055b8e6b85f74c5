//! Lists in pages, each page as of the first one's resourceVersion, as etcd serves a continued
//! list: an object changed, created or deleted between two pages shows as it was at the first,
//! so that a client that watches from the list's resourceVersion misses nothing and sees nothing
//! newer than it. The objects as they were come from the history; a list continued from before
//! it is `410 Expired`, as a real server answers once etcd compacted that version.
use std::collections::BTreeMap;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use super::{Entry, EventType, Key, ListPage, Store};
use crate::error::ApiError;
use crate::resources::ResourceType;

/// What a real server says of a continue token whose version was compacted.
const CONTINUE_EXPIRED: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

impl Store {
    /// [`Store::list_page`] as of resourceVersion `at` (a continued list's first page's).
    pub fn list_page_at(
        &self,
        resource: ResourceType,
        namespace: Option<&str>,
        after: Option<&(String, String)>,
        limit: Option<usize>,
        filter: &dyn Fn(&Entry) -> bool,
        at: u64,
    ) -> Result<ListPage, ApiError> {
        let inner = self.lock();
        if at < inner.history_floor {
            return Err(ApiError::Gone(CONTINUE_EXPIRED.into()));
        }
        // The objects of `resource` changed since `at`, as they were then (`None`: absent).
        let mut then: BTreeMap<Key, Option<Arc<Entry>>> = BTreeMap::new();
        let changes = inner
            .history
            .iter()
            .rev()
            .take_while(|e| e.entry.resource_version > at);
        for event in changes.filter(|e| e.entry.resource == resource) {
            let before = match event.kind {
                EventType::Added => None,
                EventType::Modified | EventType::Deleted => event.previous.clone(),
            };
            // Newest first: the oldest change after `at` has the last word.
            then.insert(
                (
                    event.entry.namespace.to_string(),
                    event.entry.name.to_string(),
                ),
                before,
            );
        }
        let ns = namespace.filter(|_| resource.namespaced());
        let bounds = (start(after, ns), Bound::Unbounded);
        let mut snapshot: BTreeMap<Key, Arc<Entry>> = inner
            .objects
            .get(&resource)
            .map(|map| {
                map.range(bounds.clone())
                    .filter(|(key, _)| !then.contains_key(*key))
                    .map(|(key, entry)| (key.clone(), entry.clone()))
                    .collect()
            })
            .unwrap_or_default();
        snapshot.extend(
            then.into_iter()
                .filter_map(|(key, entry)| Some((key, entry?)))
                .filter(|(key, _)| bounds.contains(key)),
        );
        Ok(page(snapshot.range(bounds), ns, limit, filter, at))
    }
}

/// Where a page starts: after the key `after`, else at the namespace's first key.
pub(super) fn start(after: Option<&Key>, ns: Option<&str>) -> Bound<Key> {
    match (after, ns) {
        (Some(key), _) => Bound::Excluded(key.clone()),
        (None, Some(ns)) => Bound::Included((ns.to_string(), String::new())),
        (None, None) => Bound::Unbounded,
    }
}

/// The page of `entries` (in key order, from the page's start): those of namespace `ns`
/// matching `filter`, at most `limit`, and where the next page starts.
pub(super) fn page<'a>(
    entries: impl Iterator<Item = (&'a Key, &'a Arc<Entry>)>,
    ns: Option<&str>,
    limit: Option<usize>,
    filter: &dyn Fn(&Entry) -> bool,
    resource_version: u64,
) -> ListPage {
    let mut items: Vec<Arc<Entry>> = Vec::new();
    let mut continue_after = None;
    let mut remaining = 0;
    for ((entry_ns, _), entry) in entries {
        if ns.is_some_and(|ns| ns != entry_ns) {
            break;
        }
        if !filter(entry) {
            continue;
        }
        if continue_after.is_some() {
            remaining += 1;
        } else if limit.is_some_and(|l| items.len() >= l) {
            let last: &Arc<Entry> = items.last().unwrap_or(entry);
            continue_after = Some((last.namespace.to_string(), last.name.to_string()));
            remaining += 1;
        } else {
            items.push(entry.clone());
        }
    }
    ListPage {
        items,
        resource_version,
        continue_after,
        remaining,
    }
}
