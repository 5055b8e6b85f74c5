//! Drift in the live view, as decisions only: each Deployment watch event's drift against its
//! manifest (the live extract is compared and dropped, never kept), missing and unmanaged rows,
//! manifest reloads (which ask the runtime to fetch the affected objects again). The `d` diff
//! view is [`super::diff`]'s.
use std::sync::Arc;

use super::{App, Command, DriftSummary, ManifestKey, Screen};
use crate::cluster::live::{Fetched, LiveJson, LiveRow};
use crate::cluster::rows::{ObjectKey, WorkloadKind, WorkloadRow};
use crate::cluster::watch::WatchUpdate;
use crate::drift::check::compare_in;
use crate::drift::{Attribution, Class, ObjectDrift, ObjectStatus};
use crate::manifest::ManifestIndex;
use crate::manifest::reload::FileChange;

/// The manifest key of a table row.
/// Shares the row key's namespace and name and the interned group and kind: the timeline keeps
/// one such key per workload, and copies would be four small allocations each.
pub fn manifest_key(key: &ObjectKey) -> crate::manifest::ObjectKey {
    use crate::manifest::SharedStr;
    crate::manifest::ObjectKey {
        group: SharedStr::interned("apps"),
        kind: SharedStr::interned(key.kind.kind()),
        namespace: SharedStr::from(Arc::clone(&key.namespace)),
        name: SharedStr::from(Arc::clone(&key.name)),
    }
}

/// The row key of a manifest, when it is of a kind the table shows (a workload).
pub fn row_key(key: &crate::manifest::ObjectKey) -> Option<ObjectKey> {
    WorkloadKind::of_kind(&key.group, &key.kind)
        .map(|kind| ObjectKey::workload(kind, key.namespace.as_str(), key.name.as_str()))
}

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

/// A Deployment's drift summary and the newest writer of its drifted fields.
type RowDrift = (DriftSummary, Option<Attribution>);

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

pub(super) fn summary_of(drift: &ObjectDrift) -> RowDrift {
    summarize(drift)
}

fn alone(summary: DriftSummary) -> RowDrift {
    (summary, None)
}

impl App {
    /// True when `key`'s namespace is watched (a manifest elsewhere is neither missing nor shown).
    fn in_scope(&self, key: &ObjectKey) -> bool {
        self.scope
            .as_namespace()
            .is_none_or(|ns| ns == key.namespace.as_ref())
    }

    /// The drift of one fetched live object (its JSON text) against its manifest (pure): the
    /// extract is read here and dropped after the compare.
    fn drift_of_fetched(&self, key: &ObjectKey, json: &LiveJson) -> RowDrift {
        let Some(index) = &self.manifests else {
            return alone(DriftSummary::NotComputed);
        };
        let Some(manifest) = index.get(&manifest_key(key)) else {
            return alone(DriftSummary::Unmanaged);
        };
        let schemas = self
            .kinds
            .as_ref()
            .map_or(crate::schema::Schemas::builtin(), |k| &k.schemas);
        match json.extract_as("apps/v1", key.kind.kind(), schemas) {
            Ok(live) => summary_of(&compare_in(index, manifest, &live)),
            Err(e) => alone(DriftSummary::Error(format!(
                "the live object could not be read: {e}"
            ))),
        }
    }

    fn has_manifest(&self, key: &ObjectKey) -> bool {
        self.manifests
            .as_ref()
            .is_some_and(|index| index.get(&manifest_key(key)).is_some())
    }

    /// The drift of a watched workload: its extract is read from the JSON only when it has a
    /// manifest (about 30 µs), and not even then when the event changed nothing a compare reads
    /// (a status write: [`KeptInputs`](super::drift_inputs::KeptInputs)); the others cost
    /// nothing here but the change timeline's line (when it is on), which reads every one
    /// (`listed`: a list brought it).
    fn drift_of_json(&mut self, key: &ObjectKey, json: &LiveJson, listed: bool) -> RowDrift {
        let timeline = self.changes.enabled();
        let index = self.manifests.clone();
        let object = manifest_key(key);
        let manifest = index.as_ref().and_then(|index| index.get(&object));
        let without = match (&index, manifest) {
            (None, _) => Some(DriftSummary::NotComputed),
            (Some(_), None) => Some(DriftSummary::Unmanaged),
            (Some(_), Some(_)) => None,
        };
        // A scan of the text, not a parse: the timeline's version and what a compare reads.
        let version = (timeline || without.is_none())
            .then(|| crate::drift::live_changes::Version::of_text(json.text()).ok())
            .flatten();
        if without.is_some() {
            self.drift_inputs.forget(key);
        }
        let inputs = version
            .as_ref()
            .filter(|_| without.is_none())
            .map(crate::drift::live_changes::Version::drift_inputs);
        if !listed
            && let (Some(inputs), Some(version)) = (inputs, &version)
            && let Some(kept) = self.kept_drift(key, inputs)
            && (!timeline || self.changes.restamp(&object, version))
        {
            self.drift_inputs.kept += 1;
            return kept;
        }
        // The cluster's schemas once mapped, the built-in ones until then.
        let Self {
            kinds,
            changes,
            drift_inputs,
            ..
        } = self;
        let schemas = kinds
            .as_ref()
            .map_or(crate::schema::Schemas::builtin(), |k| &k.schemas);
        let schema = schemas.root("apps/v1", key.kind.kind());
        let version = version.filter(|_| timeline);
        if let Some(summary) = without {
            // No drift to read: the timeline's version alone.
            if let Some(version) = version {
                changes.observe(&object, schema, version, None, listed);
            }
            return alone(summary);
        }
        let live = json
            .extract_as("apps/v1", key.kind.kind(), schemas)
            .map_err(|e| e.to_string());
        match (index.as_ref().zip(manifest), live) {
            (Some((index, manifest)), Ok(live)) => {
                let drift = compare_in(index, manifest, &live);
                if let Some(version) = version {
                    let desired = crate::drift::changes::Desired {
                        schema,
                        manifest: manifest.body.root(),
                        drift: &drift,
                    };
                    changes.observe(&object, schema, version, Some(&desired), listed);
                }
                match inputs {
                    Some(inputs) => drift_inputs.compared(key, inputs),
                    None => drift_inputs.forget(key),
                }
                summary_of(&drift)
            }
            (_, Err(e)) => {
                drift_inputs.forget(key);
                alone(DriftSummary::Error(format!(
                    "the live object could not be read: {e}"
                )))
            }
            (None, Ok(_)) => alone(DriftSummary::NotComputed),
        }
    }

    /// Watch events of workloads whose drift answer was kept without reading the object
    /// (nothing a compare reads changed), since the app began.
    pub fn drift_kept(&self) -> u64 {
        self.drift_inputs.kept
    }

    /// The drift answer `key` has, when its last compare read `inputs` too and its row is
    /// still there (a row dropped by a relist is compared when it comes back).
    fn kept_drift(&self, key: &ObjectKey, inputs: u64) -> Option<RowDrift> {
        if !self.drift_inputs.same(key, inputs) || self.cache.workloads.get(key).is_none() {
            return None;
        }
        let summary = self.drift.get(key)?.clone();
        Some((summary, self.newest.get(key).cloned()))
    }

    /// Computes the drift of each watched Deployment as it arrives and returns the row updates
    /// for the cache; the objects' JSON is dropped here.
    pub fn drift_from_watch(
        &mut self,
        updates: Vec<WatchUpdate<LiveRow>>,
    ) -> Vec<WatchUpdate<WorkloadRow>> {
        let mut rows = Vec::with_capacity(updates.len());
        for update in updates {
            rows.push(match update {
                WatchUpdate::Apply(LiveRow { row, json }) => {
                    self.superseded(&row.key);
                    let summary = self.drift_of_json(&row.key, &json, false);
                    self.set_drift(row.key.clone(), summary);
                    WatchUpdate::Apply(row)
                }
                WatchUpdate::InitApply(LiveRow { row, json }) => {
                    self.superseded(&row.key);
                    let summary = self.drift_of_json(&row.key, &json, true);
                    self.set_drift(row.key.clone(), summary);
                    WatchUpdate::InitApply(row)
                }
                WatchUpdate::Delete(key) => {
                    self.superseded(&key);
                    self.drift_inputs.forget(&key);
                    let in_git = self.has_manifest(&key);
                    self.changes.deleted(&manifest_key(&key), in_git);
                    if in_git {
                        self.set_drift(key.clone(), alone(DriftSummary::Missing));
                    } else {
                        self.drift.remove(&key);
                        self.newest.remove(&key);
                    }
                    WatchUpdate::Delete(key)
                }
                WatchUpdate::Init => WatchUpdate::Init,
                WatchUpdate::InitDone => WatchUpdate::InitDone,
            });
        }
        rows
    }

    pub(super) fn set_drift(&mut self, key: ObjectKey, (summary, newest): RowDrift) {
        match newest {
            Some(newest) => {
                self.newest.insert(key.clone(), newest);
            }
            None => {
                self.newest.remove(&key);
            }
        }
        if summary == DriftSummary::NotComputed {
            self.drift.remove(&key);
        } else if self.drift.get(&key) != Some(&summary) {
            self.drift.insert(key, summary);
        }
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
        if fetch.is_empty() {
            Vec::new()
        } else {
            vec![self.fetch_live(fetch)]
        }
    }

    /// Ask for these rows' live objects (their manifests changed), noting that they are asked.
    fn fetch_live(&mut self, keys: Vec<ObjectKey>) -> Command {
        for key in &keys {
            self.fetching.insert(key.clone(), false);
        }
        Command::FetchLive(keys)
    }

    /// A watch event of `key` came: an answer to a fetch asked before it is older than the row.
    fn superseded(&mut self, key: &ObjectKey) {
        if let Some(superseded) = self.fetching.get_mut(key) {
            *superseded = true;
        }
    }

    /// Is `key` a row of its own in the table's missing list (in git, not in the cluster)?
    fn is_missing_row(&self, key: &ObjectKey) -> bool {
        self.drift.get(key) == Some(&DriftSummary::Missing)
            && self.cache.workloads.get(key).is_none()
    }

    /// The table lists missing objects as rows of their own: keep its list in step, looking at
    /// every drift entry (after a list or a manifest change; watch events use
    /// [`App::sync_missing_keys`]).
    pub(crate) fn sync_missing_rows(&mut self) {
        let mut missing: Vec<ObjectKey> = self
            .drift
            .keys()
            .filter(|k| self.is_missing_row(k))
            .cloned()
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

    /// After a full list (or a manifest load): every Deployment manifest in scope without a row
    /// is missing, and entries with neither row nor manifest go.
    pub fn reconcile_missing(&mut self) {
        let Some(index) = self.manifests.clone() else {
            return;
        };
        let cache = &self.cache.workloads;
        self.drift
            .retain(|key, _| cache.get(key).is_some() || index.get(&manifest_key(key)).is_some());
        for manifest in index.objects() {
            let Some(key) = row_key(&manifest.key) else {
                continue;
            };
            // A kind is missing nothing before its first list ended.
            let listed = self.cache.workloads.set(key.kind).is_synced();
            if listed && self.in_scope(&key) && self.cache.workloads.get(&key).is_none() {
                self.drift.insert(key, DriftSummary::Missing);
            }
        }
    }

    /// The manifests were loaded: rows already listed are compared again (their live objects
    /// are fetched: none is kept), rows without a manifest are unmanaged.
    pub fn manifests_loaded(&mut self, mut index: Arc<ManifestIndex>) -> Vec<Command> {
        if let Some(releases) = &self.releases {
            Arc::make_mut(&mut index).set_releases(releases);
        }
        self.changes.set_keep(index.config.changes_keep);
        self.changes.compared = true;
        self.manifests = Some(index);
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
                self.drift.insert(key, DriftSummary::Unmanaged);
            }
        }
        self.reconcile_missing();
        self.sync_missing_rows();
        let mut commands = self.map_kinds_if_new();
        if self.mapping {
            // Discovery's answer fetches every row with a manifest again (the schemas change):
            // fetching them now too would list and compare each twice at start.
            self.fetch_after_mapping |= !fetch.is_empty();
        } else if !fetch.is_empty() {
            commands.push(self.fetch_live(fetch));
        }
        commands.extend(self.render_charts());
        commands
    }

    /// Files changed on disk and were re-read: the objects they define (before or after) are
    /// fetched again to be compared with their new manifests.
    pub fn manifests_changed(&mut self, changes: Vec<FileChange>) -> Vec<Command> {
        let Some(index) = self.manifests.as_mut() else {
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
        let index = Arc::make_mut(index);
        let all: Vec<ManifestKey> = index.apply_changes(changes);
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
        let Some(index) = self.manifests.as_mut() else {
            return Vec::new();
        };
        let all = Arc::make_mut(index).set_releases(&releases);
        self.note_pending_upgrades();
        let mut commands = self.desired_changed(all);
        // A chart without a `.kdrift.yaml` entry renders with its release's values.
        commands.extend(self.render_charts());
        commands
    }

    /// The desired state of `all` changed (files re-read, releases set): their objects are
    /// fetched again to be compared with it.
    pub(super) fn desired_changed(&mut self, all: Vec<ManifestKey>) -> Vec<Command> {
        self.drift_inputs.clear();
        let mut commands = self.objects_touched(&all);
        // A kind that is new to the manifests: map it (and watch it).
        commands.extend(self.map_kinds_if_new());
        let mut touched: Vec<ObjectKey> = all.iter().filter_map(row_key).collect();
        touched.sort();
        touched.dedup();
        touched.retain(|key| self.in_scope(key));
        self.dirty = true;
        let mut fetch = Vec::new();
        for key in touched {
            if self.has_manifest(&key) {
                fetch.push(key);
            } else if self.cache.workloads.get(&key).is_some() {
                self.drift.insert(key, DriftSummary::Unmanaged);
            } else {
                self.drift.remove(&key);
            }
        }
        if let Screen::Diff(view) = &self.screen
            && all.contains(&view.key)
            && let Some(manifest) = self.manifests.as_ref().and_then(|i| i.get(&view.key))
        {
            commands.push(Command::FetchDiff(
                view.key.clone(),
                manifest.api_version.to_string(),
            ));
        }
        if !fetch.is_empty() {
            commands.push(self.fetch_live(fetch));
        }
        self.sync_missing_rows();
        commands
    }

    /// Objects fetched after a manifest change: compared, then dropped.
    pub fn live_fetched(&mut self, fetched: Vec<Fetched>) {
        for (key, result) in fetched {
            // An answer for a namespace no longer watched (after `:ns`), or one older than a
            // watch event that came while it was on its way (that event's drift is the newer:
            // it was compared with the same manifests).
            if self.fetching.remove(&key) == Some(true) || !self.in_scope(&key) {
                continue;
            }
            self.drift_inputs.forget(&key);
            let summary = match result {
                Ok(Some(json)) => self.drift_of_fetched(&key, &json),
                Ok(None) if self.has_manifest(&key) => alone(DriftSummary::Missing),
                Ok(None) => alone(DriftSummary::NotComputed),
                Err(e) => alone(DriftSummary::Error(e)),
            };
            self.set_drift(key, summary);
        }
        // The start's fetch of every row filled this map: its table is not kept once empty.
        if self.fetching.is_empty() {
            self.fetching.shrink_to_fit();
        }
        self.sync_missing_rows();
        self.dirty = true;
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
