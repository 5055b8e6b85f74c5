//! Which record of each release is read: from the labels helm puts on every record (`name`,
//! `version`, `status`), without decoding any. The deployed revision is the release's desired
//! state; a newer failed or pending revision is said beside it. A release with no deployed
//! revision (its first install failed, or is still running) is read at its newest revision, shown
//! with that status.
use std::collections::BTreeMap;

use super::record::{Status, Storage};

/// The most records of one release looked at: helm keeps 10 by default (`--history-max`), and
/// 0 means unlimited; past this the newest are kept.
pub const MAX_REVISIONS: usize = 1000;

/// A record as its labels and name describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordMeta {
    pub storage: Storage,
    /// The Secret's or ConfigMap's name: `sh.helm.release.v1.NAME.vN`.
    pub object: String,
    /// Where the record is kept (helm keeps it in the release's namespace).
    pub namespace: String,
    pub release: String,
    pub revision: u64,
    pub status: Status,
}

impl RecordMeta {
    /// The record's description from its object's name and labels; `None` when they are not a
    /// Helm release record's (no `owner=helm`, or neither label nor name gives the release and
    /// revision).
    pub fn from_labels(
        storage: Storage,
        object: &str,
        namespace: &str,
        labels: &BTreeMap<String, String>,
    ) -> Option<RecordMeta> {
        if labels.get("owner").map(String::as_str) != Some("helm") {
            return None;
        }
        let from_name = object
            .strip_prefix("sh.helm.release.v1.")
            .and_then(|rest| rest.rsplit_once(".v"))
            .and_then(|(name, revision)| Some((name.to_owned(), revision.parse().ok()?)));
        let release = labels
            .get("name")
            .cloned()
            .or_else(|| from_name.as_ref().map(|(n, _)| n.clone()))?;
        let revision = labels
            .get("version")
            .and_then(|v| v.parse().ok())
            .or(from_name.map(|(_, r)| r))?;
        Some(RecordMeta {
            storage,
            object: object.to_owned(),
            namespace: namespace.to_owned(),
            release,
            revision,
            status: Status::parse(labels.get("status").map_or("", String::as_str)),
        })
    }

    /// `secret/NS/NAME`: the record as an error message names it.
    pub fn describe(&self) -> String {
        format!(
            "{}/{}/{}",
            self.storage.resource(),
            self.namespace,
            self.object
        )
    }
}

/// The record to read for one release, and what its history says besides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub record: RecordMeta,
    /// A revision newer than the one read that is not deployed (failed, pending): `(revision,
    /// status)`.
    pub newer: Option<(u64, Status)>,
    /// That newer revision's record when helm is at work on it (`pending-upgrade`,
    /// `pending-rollback`): its manifest is what helm is applying now.
    pub pending: Option<RecordMeta>,
    /// How many records the release has (of those listed).
    pub revisions: usize,
}

/// One record per release (namespace, name): its newest deployed revision, else its newest.
/// Records of a release kept by both drivers are told apart by storage, as helm keeps them
/// apart. Uninstalled releases (`helm uninstall --keep-history`) are left out.
pub fn choose(records: Vec<RecordMeta>) -> Vec<Chosen> {
    let mut by_release: BTreeMap<(String, String, Storage), Vec<RecordMeta>> = BTreeMap::new();
    for record in records {
        by_release
            .entry((
                record.namespace.clone(),
                record.release.clone(),
                record.storage,
            ))
            .or_default()
            .push(record);
    }
    let mut chosen = Vec::new();
    for (_, mut history) in by_release {
        history.sort_by_key(|r| std::cmp::Reverse(r.revision));
        history.truncate(MAX_REVISIONS);
        let revisions = history.len();
        let Some(newest) = history.first() else {
            continue;
        };
        if matches!(newest.status, Status::Uninstalled | Status::Uninstalling) {
            continue;
        }
        let deployed = history.iter().find(|r| r.status == Status::Deployed);
        let (record, newer) = match deployed {
            Some(deployed) if deployed.revision == newest.revision => (deployed.clone(), None),
            Some(deployed) => (
                deployed.clone(),
                Some((newest.revision, newest.status.clone())),
            ),
            None => (newest.clone(), None),
        };
        let pending = newer
            .as_ref()
            .filter(|(_, status)| {
                matches!(status, Status::PendingUpgrade | Status::PendingRollback)
            })
            .map(|_| newest.clone());
        chosen.push(Chosen {
            record,
            newer,
            pending,
            revisions,
        });
    }
    chosen
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn meta(release: &str, revision: u64, status: &str) -> RecordMeta {
        let labels: BTreeMap<String, String> = [
            ("owner", "helm"),
            ("name", release),
            ("status", status),
            ("version", &revision.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        RecordMeta::from_labels(
            Storage::Secret,
            &format!("sh.helm.release.v1.{release}.v{revision}"),
            "shop",
            &labels,
        )
        .unwrap()
    }

    #[test]
    fn a_revision_helm_is_at_work_on_is_kept_beside_the_deployed_one() {
        let chosen = choose(vec![
            meta("web", 1, "deployed"),
            meta("web", 2, "pending-upgrade"),
            meta("db", 1, "deployed"),
            meta("db", 2, "failed"),
        ]);
        let web = chosen.iter().find(|c| c.record.release == "web").unwrap();
        assert_eq!(web.record.revision, 1);
        assert_eq!(web.pending.as_ref().map(|p| p.revision), Some(2));
        let db = chosen.iter().find(|c| c.record.release == "db").unwrap();
        assert_eq!(db.pending, None, "a failed revision is not helm at work");
    }

    #[test]
    fn the_newest_deployed_revision_is_read_and_a_newer_failure_said() {
        let chosen = choose(vec![
            meta("web", 1, "superseded"),
            meta("web", 2, "deployed"),
            meta("web", 3, "failed"),
            meta("db", 1, "deployed"),
        ]);
        assert_eq!(chosen.len(), 2);
        let web = chosen.iter().find(|c| c.record.release == "web").unwrap();
        assert_eq!(web.record.revision, 2);
        assert_eq!(web.newer, Some((3, Status::Failed)));
        assert_eq!(web.revisions, 3);
        let db = chosen.iter().find(|c| c.record.release == "db").unwrap();
        assert_eq!((db.record.revision, &db.newer), (1, &None));
    }

    #[test]
    fn a_release_never_deployed_is_read_at_its_newest_revision() {
        let chosen = choose(vec![
            meta("web", 1, "failed"),
            meta("web", 2, "pending-install"),
        ]);
        assert_eq!(chosen[0].record.revision, 2);
        assert_eq!(chosen[0].record.status, Status::PendingInstall);
    }

    #[test]
    fn uninstalled_releases_and_foreign_objects_are_left_out() {
        assert!(choose(vec![meta("web", 1, "uninstalled")]).is_empty());
        let labels = BTreeMap::from([("name".to_owned(), "web".to_owned())]);
        assert_eq!(
            RecordMeta::from_labels(Storage::Secret, "web", "shop", &labels),
            None
        );
    }

    #[test]
    fn the_name_gives_release_and_revision_when_labels_do_not() {
        let labels = BTreeMap::from([("owner".to_owned(), "helm".to_owned())]);
        let meta = RecordMeta::from_labels(
            Storage::ConfigMap,
            "sh.helm.release.v1.my.app.v12",
            "shop",
            &labels,
        )
        .unwrap();
        assert_eq!((meta.release.as_str(), meta.revision), ("my.app", 12));
        assert_eq!(
            meta.describe(),
            "configmap/shop/sh.helm.release.v1.my.app.v12"
        );
    }

    #[test]
    fn two_hundred_revisions_are_chosen_from_without_decoding() {
        let mut records: Vec<RecordMeta> = (1..200).map(|r| meta("web", r, "superseded")).collect();
        records.push(meta("web", 200, "deployed"));
        let chosen = choose(records);
        assert_eq!(chosen[0].record.revision, 200);
        assert_eq!(chosen[0].revisions, 200);
    }
}
