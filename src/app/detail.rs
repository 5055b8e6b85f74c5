//! The detail of one Deployment, assembled from the cache for the screen: ReplicaSet revisions
//! (with what changed from the previous one), pods, recent events, conditions.
use std::collections::{BTreeMap, BTreeSet};

use super::cache::{ClusterCache, DeploymentEntry};
use crate::cluster::rows::{EventRow, ObjectKey, PodRow, ReplicaSetRow};

/// Events shown in the detail view, newest first.
pub const RECENT_EVENTS: usize = 12;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision<'a> {
    pub rs: &'a ReplicaSetRow,
    pub images: Vec<&'a str>,
    /// What this revision changed from the one before it (`image web: web:1 → web:2`).
    pub changes: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Detail<'a> {
    pub deployment: &'a DeploymentEntry,
    /// Newest revision first.
    pub revisions: Vec<Revision<'a>>,
    pub pods: Vec<&'a PodRow>,
    pub events: Vec<&'a EventRow>,
}

pub fn detail<'a>(cache: &'a ClusterCache, key: &ObjectKey) -> Option<Detail<'a>> {
    let deployment = cache.deployments.get(key)?;
    let mut sets: Vec<&ReplicaSetRow> = cache
        .replicasets
        .in_namespace(&key.namespace)
        .filter(|rs| rs.owner.as_deref() == Some(key.name.as_ref()))
        .collect();
    sets.sort_by_key(|rs| rs.revision.unwrap_or(0));
    let mut revisions: Vec<Revision> = Vec::with_capacity(sets.len());
    for (i, rs) in sets.iter().enumerate() {
        let changes = match i.checked_sub(1).and_then(|p| sets.get(p)) {
            Some(prev) => template_changes(&prev.template, &rs.template),
            None => Vec::new(),
        };
        let images = rs
            .template
            .iter()
            .filter(|(k, _)| k.starts_with("image "))
            .map(|(_, v)| v.as_str())
            .collect();
        revisions.push(Revision {
            rs,
            images,
            changes,
        });
    }
    revisions.reverse();
    let rs_names: BTreeSet<&str> = sets.iter().map(|rs| rs.key.name.as_ref()).collect();
    let mut pods: Vec<&PodRow> = cache
        .pods
        .in_namespace(&key.namespace)
        .filter(|p| p.owner.as_deref().is_some_and(|o| rs_names.contains(o)))
        .collect();
    pods.sort_by(|a, b| {
        b.created
            .cmp(&a.created)
            .then_with(|| a.key.name.cmp(&b.key.name))
    });
    let pod_names: BTreeSet<&str> = pods.iter().map(|p| p.key.name.as_ref()).collect();
    let mut events: Vec<&EventRow> = cache
        .events
        .in_namespace(&key.namespace)
        .filter(|e| match e.involved_kind.as_str() {
            "Deployment" => *e.involved_name == *key.name,
            "ReplicaSet" => rs_names.contains(e.involved_name.as_str()),
            "Pod" => pod_names.contains(e.involved_name.as_str()),
            _ => false,
        })
        .collect();
    events.sort_by_key(|e| std::cmp::Reverse(e.last_seen));
    events.truncate(RECENT_EVENTS);
    Some(Detail {
        deployment,
        revisions,
        pods,
        events,
    })
}

/// The template facts that differ between two revisions, one line each.
pub fn template_changes(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in after {
        match before.get(k) {
            Some(old) if old == v => {}
            Some(old) => out.push(format!("{k}: {old} → {v}")),
            None => out.push(format!("+ {k}: {v}")),
        }
    }
    for (k, old) in before {
        if !after.contains_key(k) {
            out.push(format!("- {k}: {old}"));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn facts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn changes_list_changed_added_and_removed_facts() {
        let before = facts(&[
            ("image web", "web:1"),
            ("env web A", "1"),
            ("limits web cpu", "1"),
        ]);
        let after = facts(&[
            ("image web", "web:2"),
            ("env web A", "1"),
            ("env web B", "2"),
        ]);
        assert_eq!(
            template_changes(&before, &after),
            [
                "+ env web B: 2",
                "image web: web:1 → web:2",
                "- limits web cpu: 1"
            ]
        );
    }
}
