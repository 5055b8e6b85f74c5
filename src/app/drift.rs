//! Drift in the live view, as decisions only: each Deployment watch event's drift against its
//! manifest (the live extract is compared and dropped, never kept), missing and unmanaged rows,
//! manifest reloads (which ask the runtime to fetch the affected objects again). The `d` diff
//! view is [`super::diff`]'s.
use std::sync::Arc;

use super::changes::Verdict;
use super::ledger::ObjectEntry;
use super::{App, Command, DriftSummary, Screen};
use crate::cluster::live::{Fetched, LiveJson, LiveRow};
use crate::cluster::rows::{WorkloadKind, WorkloadRow};
use crate::cluster::watch::WatchUpdate;
use crate::drift::check::compare_in;
use crate::drift::{Attribution, Class, ObjectDrift, ObjectStatus};
use crate::manifest::ManifestIndex;
use crate::manifest::ObjectKey;
use crate::manifest::reload::FileChange;

/// `kubectl-set · 12m ago`; a write through a subresource names it: `kubectl (scale) · 3m ago`.
pub fn note_text(class: Class, attribution: &Attribution, now: jiff::Timestamp) -> String {
    let who = match (&attribution.manager, &attribution.subresource) {
        (Some(manager), Some(sub)) if !sub.is_empty() => format!("{manager} ({sub})"),
        (Some(manager), _) => manager.clone(),
        (None, _) => "manager unknown".to_owned(),
    };
    let mut text = match class {
        Class::Autoscaled => format!("autoscaled by {who}"),
        Class::Restarted => format!("restarted by {who}"),
        Class::InGit => format!("in git, pending helm upgrade · {who}"),
        Class::HelmUpgrading => format!("helm mid-upgrade, its pending revision sets this · {who}"),
        _ => who,
    };
    if let Some(age) = crate::drift::report::age(attribution.time.as_deref(), now) {
        text.push_str(" · ");
        text.push_str(&age);
    }
    text
}

/// The drift summary of a compared object, and the newest writer of its drifted fields.
pub fn summarize(drift: &ObjectDrift) -> (DriftSummary, Option<Attribution>) {
    let summary = match &drift.status {
        ObjectStatus::InSync => DriftSummary::InSync,
        ObjectStatus::Drifted => match drift.drift_count() {
            0 => DriftSummary::InSync,
            n => DriftSummary::Fields(n),
        },
        ObjectStatus::Missing => DriftSummary::Missing,
        ObjectStatus::Unmanaged => DriftSummary::Unmanaged,
        ObjectStatus::Error(e) => DriftSummary::Error(e.clone()),
    };
    let newest = drift
        .items
        .iter()
        .filter(|i| i.class.is_drift())
        .max_by(|a, b| a.attribution.time.cmp(&b.attribution.time))
        .map(|i| i.attribution.clone());
    (summary, newest)
}

/// Compares `live` with its manifest and, when the timeline takes a line of this event (`line`:
/// its version, and whether a list brought it), observes it with the drift found: the one
/// compare step of a watch event of any kind.
pub(super) fn compare_observed(
    changes: &mut super::changes::Changes,
    (index, manifest): (&ManifestIndex, &crate::manifest::ManifestObject),
    key: &ObjectKey,
    live: &crate::drift::LiveObject,
    line: Option<(crate::drift::live_changes::Version<'_>, bool)>,
) -> ObjectDrift {
    let drift = compare_in(index, manifest, live);
    if let Some((version, listed)) = line {
        let desired = crate::drift::changes::Desired {
            schema: live.schema,
            manifest: manifest.body.root(),
            drift: &drift,
        };
        changes.observe(key, live.schema, version, Some(&desired), listed);
    }
    drift
}

/// A live object of any kind as a watch event or a fetch brought it: what its extract is read
/// as (its kind's API version and kind), its key in the ledger, its JSON text.
pub(super) struct Arrived<'a> {
    pub api_version: &'a str,
    pub kind: &'a str,
    pub key: &'a ObjectKey,
    pub json: &'a LiveJson,
}

/// What brought a live object: a watch event (`listed`: a list did), or a fetch after its
/// desired state changed (no line on the timeline, no answer kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Via {
    Watch { listed: bool },
    Fetch,
}

impl App {
    pub(super) fn has_manifest(&self, key: &ObjectKey) -> bool {
        self.manifests
            .as_ref()
            .is_some_and(|index| index.get(key).is_some())
    }

    /// The ledger entry of a live object of any kind, `None` when a watch event changed
    /// nothing a compare reads (a status write: [`KeptInputs`](super::drift_inputs::KeptInputs))
    /// and its entry stands. Its extract is read from the JSON only when it has a manifest
    /// (about 30 µs) and dropped after the compare; the change timeline, when it is on, takes a
    /// line of each watch event, with a manifest or without. Without manifests the entry is not
    /// computed; without a manifest of its own, the object is unmanaged.
    pub(super) fn drift_of_live(&mut self, live: Arrived<'_>, via: Via) -> Option<ObjectEntry> {
        let Arrived {
            api_version,
            kind,
            key,
            json,
        } = live;
        let (watched, listed) = match via {
            Via::Watch { listed } => (true, listed),
            Via::Fetch => (false, false),
        };
        let timeline = watched && self.changes.enabled();
        let index = self.manifests.clone();
        let manifest = index.as_ref().and_then(|index| index.get(key));
        let without = match (&index, manifest) {
            (None, _) => Some(DriftSummary::NotComputed),
            (Some(_), None) => Some(DriftSummary::Unmanaged),
            (Some(_), Some(_)) => None,
        };
        // A scan of the text, not a parse: the timeline's version and what a compare reads.
        let version = (timeline || (watched && without.is_none()))
            .then(|| crate::drift::live_changes::Version::of_text(json.text()).ok())
            .flatten();
        let inputs = version
            .as_ref()
            .filter(|_| without.is_none())
            .map(crate::drift::live_changes::Version::drift_inputs);
        if !listed
            && let (Some(inputs), Some(version)) = (inputs, &version)
            && self.kept_drift(key, inputs)
            && (!timeline || self.changes.restamp(key, version))
        {
            self.drift_inputs.kept += 1;
            return None;
        }
        // The cluster's schemas once mapped, the built-in ones until then.
        let Self {
            kinds,
            changes,
            drift_inputs,
            ledger,
            ..
        } = self;
        // Its drift or desired state moved: its writes' lines say again whether git agrees.
        let moved = |summary: &DriftSummary| via == Via::Fetch || ledger.summary(key) != summary;
        let schemas = kinds
            .as_ref()
            .map_or(crate::schema::Schemas::builtin(), |k| &k.schemas);
        let version = version.filter(|_| timeline);
        if let Some(summary) = without {
            drift_inputs.forget(key);
            if summary == DriftSummary::Unmanaged && moved(&summary) {
                changes.rejudge(key, Verdict::not_in_git());
            }
            // No drift to read: the timeline's version alone.
            if let Some(version) = version {
                let schema = schemas.root(api_version, kind);
                changes.observe(key, schema, version, None, listed);
            }
            return Some(ObjectEntry::alone(summary));
        }
        let live = json
            .extract_as(api_version, kind, schemas)
            .map_err(|e| e.to_string());
        match (index.as_ref().zip(manifest), live) {
            (Some((index, manifest)), Ok(live)) => {
                let line = version.map(|version| (version, listed));
                // (Asked before this event's own line, which is said with this compare.)
                let had_written = changes.has_written(key);
                let drift = compare_observed(changes, (index, manifest), key, &live, line);
                // Its first compare since its start lines were said without a manifest.
                if changes.unjudged(key)
                    && let Ok(version) = crate::drift::live_changes::Version::of_text(json.text())
                {
                    let desired = crate::drift::changes::Desired {
                        schema: live.schema,
                        manifest: manifest.body.root(),
                        drift: &drift,
                    };
                    changes.judge(key, &version, &desired);
                }
                match inputs {
                    Some(inputs) => drift_inputs.compared(key, inputs),
                    None => drift_inputs.forget(key),
                }
                let (summary, newest) = summarize(&drift);
                if had_written && moved(&summary) {
                    let verdict = Verdict {
                        drifted: crate::drift::changes::drifted_paths(&drift),
                        desired: Some((live.schema, Arc::clone(index))),
                    };
                    changes.rejudge(key, verdict);
                }
                Some(ObjectEntry {
                    summary,
                    newest: newest.map(Box::new),
                    owners: crate::gitops::owners_of_json(live.body.get("metadata")),
                })
            }
            (_, Err(e)) => {
                drift_inputs.forget(key);
                Some(ObjectEntry::alone(DriftSummary::Error(format!(
                    "the live {kind} could not be read: {e}"
                ))))
            }
            (None, Ok(_)) => Some(ObjectEntry::alone(DriftSummary::NotComputed)),
        }
    }

    /// Watch events of objects whose drift answer was kept without reading the object
    /// (nothing a compare reads changed), since the app began.
    pub fn drift_kept(&self) -> u64 {
        self.drift_inputs.kept
    }

    /// Whether `key`'s last compare read `inputs` too and its entry still says what is live (an
    /// object a relist found gone is compared when it comes back).
    fn kept_drift(&self, key: &ObjectKey, inputs: u64) -> bool {
        self.drift_inputs.same(key, inputs)
            && self
                .ledger
                .get(key)
                .is_some_and(|entry| entry.summary != DriftSummary::Missing)
    }

    /// An object left the cluster (a watch deleted it, a relist did not bring it, a fetch found
    /// nothing): missing while a manifest in scope describes it, else forgotten.
    pub(super) fn gone(&mut self, key: ObjectKey) {
        self.drift_inputs.forget(&key);
        let has_manifest = self.has_manifest(&key);
        self.changes.deleted(&key, has_manifest);
        if has_manifest && self.object_in_scope(&key) {
            self.set_entry(&key, ObjectEntry::alone(DriftSummary::Missing));
        } else {
            self.ledger.remove(&key);
        }
    }

    /// Computes the drift of each watched workload as it arrives and returns the row updates
    /// for the cache; the objects' JSON is dropped here.
    pub fn drift_from_watch(
        &mut self,
        updates: Vec<WatchUpdate<LiveRow>>,
    ) -> Vec<WatchUpdate<WorkloadRow>> {
        let mut rows = Vec::with_capacity(updates.len());
        for update in updates {
            rows.push(match update {
                WatchUpdate::Apply(LiveRow { row, json }) => {
                    self.workload_arrived(&row.key, &json, false);
                    WatchUpdate::Apply(row)
                }
                WatchUpdate::InitApply(LiveRow { row, json }) => {
                    self.workload_arrived(&row.key, &json, true);
                    WatchUpdate::InitApply(row)
                }
                WatchUpdate::Delete(key) => {
                    self.ledger.superseded(&key);
                    self.gone(key.clone());
                    WatchUpdate::Delete(key)
                }
                WatchUpdate::Init => WatchUpdate::Init,
                WatchUpdate::InitDone => WatchUpdate::InitDone,
            });
        }
        rows
    }

    /// A workload's watch event (`listed`: a list brought it): its drift, in the ledger under
    /// its key, the row's own (its owners are on its row too).
    fn workload_arrived(&mut self, key: &ObjectKey, json: &LiveJson, listed: bool) {
        self.ledger.superseded(key);
        let arrived = Arrived {
            api_version: "apps/v1",
            kind: &key.kind,
            key,
            json,
        };
        if let Some(entry) = self.drift_of_live(arrived, Via::Watch { listed }) {
            self.set_entry(key, entry);
        }
    }

    /// Sets the ledger entry of `key`, keyed by the timeline's key of it when it is a new one.
    /// Whether it changed.
    pub(super) fn set_entry(&mut self, key: &ObjectKey, entry: ObjectEntry) -> bool {
        let Self {
            ledger, changes, ..
        } = self;
        ledger.set(key, entry, |key| changes.shared_key(key))
    }

    /// Every row with a manifest is fetched again and compared (the schemas changed).
    pub(crate) fn refetch_rows(&mut self) -> Vec<Command> {
        let fetch: Vec<ObjectKey> = self
            .cache
            .workloads
            .iter()
            .map(|e| e.row.key.clone())
            .filter(|key| self.has_manifest(key))
            .collect();
        self.fetch(fetch).into_iter().collect()
    }

    /// Ask for these objects' live state (their manifests changed, or the schemas), each in
    /// the version it is compared in (a workload's `apps/v1`, another's its manifest's), noting
    /// that they are asked.
    pub(super) fn fetch(&mut self, keys: Vec<ObjectKey>) -> Option<Command> {
        let mut wanted = Vec::with_capacity(keys.len());
        for key in keys {
            let Some(api_version) = self.compared_in(&key) else {
                continue;
            };
            self.ledger.asked(key.clone());
            wanted.push((key, api_version));
        }
        (!wanted.is_empty()).then_some(Command::Fetch(wanted))
    }

    /// Is `key` a row of its own in the table's missing list (in git, not in the cluster)?
    fn is_missing_row(&self, key: &ObjectKey) -> bool {
        self.cache.workloads.get(key).is_none()
            && self.ledger.summary(key) == &DriftSummary::Missing
    }

    /// The table lists missing objects as rows of their own: keep its list in step, looking at
    /// every ledger entry (after a list or a manifest change; watch events use
    /// [`App::sync_missing_keys`]).
    pub(crate) fn sync_missing_rows(&mut self) {
        let mut missing: Vec<ObjectKey> = self
            .ledger
            .iter()
            .filter(|(_, entry)| entry.summary == DriftSummary::Missing)
            .filter(|(key, _)| Self::is_row_kind(key) && self.cache.workloads.get(key).is_none())
            .map(|(key, _)| key.clone())
            .collect();
        missing.sort();
        if missing != self.table.missing {
            self.table.missing = missing;
            self.table.mark_stale();
        }
    }

    /// The same as [`App::sync_missing_rows`] for the keys of one watch batch only: the rest of
    /// the list cannot have changed, and a batch must not cost a scan of every row.
    pub(crate) fn sync_missing_keys<'k>(&mut self, keys: impl IntoIterator<Item = &'k ObjectKey>) {
        for key in keys {
            let wanted = self.is_missing_row(key);
            match (self.table.missing.binary_search(key), wanted) {
                (Err(at), true) => self.table.missing.insert(at, key.clone()),
                (Ok(at), false) => {
                    self.table.missing.remove(at);
                }
                _ => continue,
            }
            self.table.mark_stale();
        }
    }

    /// After a full list of the workloads (or a manifest load): [`App::reconcile_missing_of`]
    /// the table's kinds.
    pub fn reconcile_missing(&mut self) {
        self.reconcile_missing_of(Self::is_row_kind);
    }

    /// After a list of the kinds `of` picks (or a manifest load): their entries whose manifest
    /// went are dropped (a workload's whose row is live stays: unmanaged), and each of their
    /// manifests in scope that nothing live answers is missing — once its kind's first list
    /// ended (before, nothing of that kind is called missing).
    pub(super) fn reconcile_missing_of(&mut self, of: impl Fn(&ObjectKey) -> bool) {
        let Some(index) = self.manifests.clone() else {
            return;
        };
        let cache = &self.cache.workloads;
        self.ledger
            .retain(|key, _| !of(key) || index.get(key).is_some() || cache.get(key).is_some());
        for manifest in index.objects() {
            let key = &manifest.key;
            if of(key) && self.object_in_scope(key) && self.listed(key) && !self.is_live(key) {
                self.set_entry(key, ObjectEntry::alone(DriftSummary::Missing));
            }
        }
    }

    /// Whether the first list of `key`'s kind ended.
    fn listed(&self, key: &ObjectKey) -> bool {
        match WorkloadKind::of_key(key) {
            Some(kind) => self.cache.workloads.set(kind).is_synced(),
            None => self
                .objects
                .kinds
                .iter()
                .any(|(kind, listed)| *listed && kind.is_kind_of(key)),
        }
    }

    /// Whether `key` is in the cluster as last seen: a workload's row, another kind's entry
    /// (kept only while it has a manifest) that is not missing.
    fn is_live(&self, key: &ObjectKey) -> bool {
        match WorkloadKind::of_key(key) {
            Some(_) => self.cache.workloads.get(key).is_some(),
            None => self
                .ledger
                .get(key)
                .is_some_and(|entry| entry.summary != DriftSummary::Missing),
        }
    }

    /// The manifests were loaded: rows already listed are compared again (their live objects
    /// are fetched: none is kept), rows without a manifest are unmanaged.
    pub fn manifests_loaded(&mut self, index: Arc<ManifestIndex>) -> Vec<Command> {
        self.changes.set_keep(index.config.changes_keep);
        self.changes.compared = true;
        self.manifests = Some(index);
        // (Taken out while the index takes them: `change_manifests` borrows the app.) Without
        // releases the index is not touched: another holder of it would have it copied.
        match self.releases.take() {
            Some(releases) => {
                self.change_manifests(|index| index.set_releases(&releases));
                self.releases = Some(releases);
            }
            None => self.count_problems(),
        }
        self.drift_inputs.clear();
        self.dirty = true;
        let mut fetch = Vec::new();
        let keys: Vec<ObjectKey> = self
            .cache
            .workloads
            .iter()
            .map(|e| e.row.key.clone())
            .collect();
        for key in keys {
            if self.has_manifest(&key) {
                fetch.push(key);
            } else {
                self.changes.rejudge(&key, Verdict::not_in_git());
                self.set_entry(&key, ObjectEntry::alone(DriftSummary::Unmanaged));
            }
        }
        self.changes.judged();
        self.reconcile_missing();
        self.sync_missing_rows();
        let mut commands = self.map_kinds_if_new();
        if self.mapping {
            // Discovery's answer fetches every row with a manifest again (the schemas change):
            // fetching them now too would list and compare each twice at start.
            self.fetch_after_mapping |= !fetch.is_empty();
        } else {
            commands.extend(self.fetch(fetch));
        }
        commands.extend(self.render_charts());
        commands
    }

    /// Files changed on disk and were re-read: the objects they define (before or after) are
    /// fetched again to be compared with their new manifests.
    pub fn manifests_changed(&mut self, changes: Vec<FileChange>) -> Vec<Command> {
        let Some(index) = self.manifests.as_ref() else {
            return Vec::new();
        };
        let charts = Self::charts_concerned(
            index,
            changes.iter().filter_map(|change| match change {
                FileChange::File { path, .. } => Some(path.as_path()),
                _ => None,
            }),
        ) || changes.iter().any(|c| matches!(c, FileChange::Config(..)));
        // The app holds the only reference, so this does not copy the index.
        let all: Vec<ObjectKey> = self
            .change_manifests(|index| index.apply_changes(changes))
            .unwrap_or_default();
        let mut commands = self.desired_changed(all);
        if charts {
            commands.extend(self.render_charts());
        }
        commands
    }

    /// The Helm releases of the scope were read (again): their objects' desired state is set
    /// into the manifests, and what it touched is compared again.
    pub fn releases_changed(&mut self, releases: crate::helm::Releases) -> Vec<Command> {
        if self.releases.as_ref() == Some(&releases) {
            return Vec::new();
        }
        self.releases = Some(releases.clone());
        let Some(all) = self.change_manifests(|index| index.set_releases(&releases)) else {
            return Vec::new();
        };
        self.note_pending_upgrades();
        let mut commands = self.desired_changed(all);
        // A chart without a `.kdrift.yaml` entry renders with its release's values.
        commands.extend(self.render_charts());
        commands
    }

    /// The desired state of `all` changed (files re-read, releases set): their objects in
    /// scope are fetched again, in one command, to be compared with it — the workloads', and
    /// those of the other kinds watched; what lost its manifest is unmanaged (a live row) or
    /// forgotten.
    pub(super) fn desired_changed(&mut self, mut all: Vec<ObjectKey>) -> Vec<Command> {
        self.drift_inputs.clear();
        // A kind that is new to the manifests: map it (and watch it).
        let mut commands = self.map_kinds_if_new();
        all.sort();
        all.dedup();
        self.dirty = true;
        let mut fetch = Vec::new();
        for key in &all {
            let in_scope = self.object_in_scope(key);
            let watched = self.is_watched(key);
            if !in_scope {
                continue;
            }
            if self.has_manifest(key) {
                if watched {
                    fetch.push(key.clone());
                }
            } else {
                self.changes.rejudge(key, Verdict::not_in_git());
                if self.cache.workloads.get(key).is_some() {
                    self.set_entry(key, ObjectEntry::alone(DriftSummary::Unmanaged));
                } else {
                    // No manifest any more: an object still live is unmanaged, not listed.
                    self.ledger.remove(key);
                }
            }
        }
        self.changes.judged();
        if let Screen::Diff(view) = &self.screen
            && all.contains(&view.key)
            && let Some(manifest) = self.manifests.as_ref().and_then(|i| i.get(&view.key))
        {
            commands.push(Command::FetchDiff(
                view.key.clone(),
                manifest.api_version.to_string(),
            ));
        }
        commands.extend(self.fetch(fetch));
        self.sync_missing_rows();
        commands
    }

    /// Objects fetched after a manifest change (of any kind): compared, then dropped.
    pub fn fetched(&mut self, fetched: Vec<Fetched>) {
        for (key, result) in fetched {
            // An answer older than a watch event that came while it was on its way (that
            // event's drift is the newer: it was compared with the same manifests).
            if self.ledger.answered(&key) {
                continue;
            }
            self.fetched_one(key, result);
        }
        self.changes.judged();
        self.ledger.fetches_done();
        self.sync_missing_rows();
        self.dirty = true;
    }

    /// One object fetched after its desired state changed: compared, then dropped. An answer
    /// for a namespace or a kind no longer watched (after `:ns`) is dropped.
    fn fetched_one(&mut self, key: ObjectKey, result: Result<Option<LiveJson>, String>) {
        if !self.object_in_scope(&key) || !self.is_watched(&key) {
            return;
        }
        match result {
            Ok(Some(json)) => {
                let Some(api_version) = self.compared_in(&key) else {
                    return;
                };
                let arrived = Arrived {
                    api_version: &api_version,
                    kind: &key.kind,
                    key: &key,
                    json: &json,
                };
                if let Some(entry) = self.drift_of_live(arrived, Via::Fetch) {
                    self.set_entry(&key, entry);
                }
            }
            Ok(None) => self.gone(key),
            Err(e) => {
                self.drift_inputs.forget(&key);
                self.set_entry(&key, ObjectEntry::alone(DriftSummary::Error(e)));
            }
        }
    }

    /// Whether `key`'s kind is watched: a workload's (the table's), or another kind the
    /// manifests use, once mapped.
    pub(super) fn is_watched(&self, key: &ObjectKey) -> bool {
        Self::is_row_kind(key) || self.objects.kinds.keys().any(|k| k.is_kind_of(key))
    }

    /// The API version `key` is read and compared in: a workload's `apps/v1` (the table's),
    /// another kind's its manifest's.
    fn compared_in(&self, key: &ObjectKey) -> Option<String> {
        if Self::is_row_kind(key) {
            return Some("apps/v1".to_owned());
        }
        let manifest = self.manifests.as_ref()?.get(key)?;
        Some(manifest.api_version.to_string())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn attribution(manager: Option<&str>, subresource: Option<&str>) -> Attribution {
        Attribution {
            manager: manager.map(str::to_owned),
            operation: Some("Update".to_owned()),
            time: Some("2026-11-22T02:00:00Z".to_owned()),
            subresource: subresource.map(str::to_owned),
        }
    }

    #[test]
    fn notes_name_the_manager_its_subresource_and_the_age() {
        let now: jiff::Timestamp = "2026-11-22T02:12:30Z".parse().unwrap();
        let cases = [
            (
                Class::AddedLive,
                Some("kubectl-set"),
                None,
                "kubectl-set · 12m ago",
            ),
            (
                Class::Changed,
                Some("kubectl"),
                Some("scale"),
                "kubectl (scale) · 12m ago",
            ),
            (Class::Changed, None, None, "manager unknown · 12m ago"),
            (
                Class::Autoscaled,
                Some("horizontal-pod-autoscaler"),
                None,
                "autoscaled by horizontal-pod-autoscaler · 12m ago",
            ),
        ];
        for (class, manager, sub, want) in cases {
            assert_eq!(note_text(class, &attribution(manager, sub), now), want);
        }
    }
}
