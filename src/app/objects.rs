//! Objects of every kind the manifests use but Deployments (the table's own): their drift as
//! their watch events arrive (the extract is compared and dropped, never kept), the missing ones
//! once their kind's first list ended, and the mapping of the manifests' kinds through discovery
//! that comes first (which kinds the cluster serves, their schemas).
use crate::manifest::ObjectKey;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::drift::{Via, summarize};
use super::ledger::ObjectEntry;
use super::{App, Command, DriftSummary, Flash};
use crate::cluster::kinds::ServedKind;
use crate::cluster::live::LiveKinds;
use crate::cluster::watch::{ObjectKind, ObjectRow, WatchHealth, WatchUpdate};
use crate::drift::ObjectDrift;

/// The objects of the watched kinds and their watchers' state.
#[derive(Debug, Clone, Default)]
pub struct Objects {
    /// The kinds watched, and whether each one's first list has ended (before, nothing of that
    /// kind is called missing).
    pub kinds: BTreeMap<Arc<ObjectKind>, bool>,
    /// The keys with a manifest seen by a relist under way, per kind (the others are gone).
    relisting: BTreeMap<Arc<ObjectKind>, BTreeSet<ObjectKey>>,
    /// Lists ended so far, all kinds (the runtime gives freed memory back after each).
    pub lists_done: u64,
}

/// The kinds discovery and the OpenAPI gave for the manifests' kinds.
#[derive(Debug, Clone)]
pub struct MappedKinds {
    pub kinds: LiveKinds,
    /// Where the schemas did not come from the cluster.
    pub notices: Vec<String>,
}

impl App {
    /// Whether `key` is of one of the table's kinds (the workloads).
    pub fn is_row_kind(key: &ObjectKey) -> bool {
        crate::cluster::rows::WorkloadKind::of_kind(&key.group, &key.kind).is_some()
    }

    /// The manifests' kinds (Deployments aside) in the namespace scope, to ask discovery about.
    fn manifest_kinds(&self) -> BTreeSet<(String, String)> {
        self.manifests
            .as_ref()
            .map(|index| index.kinds())
            .unwrap_or_default()
    }

    /// The manifests arrived or changed: map their kinds if some are new (once at a time: an
    /// answer under way is looked at again when it comes).
    pub(crate) fn map_kinds_if_new(&mut self) -> Vec<Command> {
        let Some(index) = &self.manifests else {
            return Vec::new();
        };
        let kinds = self.manifest_kinds();
        let known = kinds.iter().all(|(v, k)| index.knows_kind(v, k));
        if self.mapping || (known && self.kinds.is_some()) {
            return Vec::new();
        }
        self.mapping = true;
        vec![Command::MapKinds(kinds)]
    }

    /// Discovery answered: the manifests' keys take the scope the cluster gives their kinds,
    /// the schemas are the cluster's, and every served kind (Deployments aside) is watched.
    pub fn kinds_mapped(&mut self, mapped: Result<MappedKinds, String>) -> Vec<Command> {
        self.dirty = true;
        self.mapping = false;
        let fetch_rows = std::mem::take(&mut self.fetch_after_mapping);
        let mapped = match mapped {
            Ok(mapped) => mapped,
            Err(e) => {
                self.flash = Some(Flash {
                    text: format!("only the workloads are compared: {e}"),
                    error: true,
                });
                // The rows the manifests loaded for are compared with the built-in schemas.
                return if fetch_rows {
                    self.refetch_rows()
                } else {
                    Vec::new()
                };
            }
        };
        if let Some(notice) = mapped.notices.first() {
            self.flash = Some(Flash {
                text: notice.clone(),
                error: false,
            });
        }
        let served = mapped.kinds.served.clone();
        self.change_manifests(|index| crate::cluster::kinds::map_kinds(index, &served));
        self.kinds = Some(mapped.kinds);
        self.drift_inputs.clear();
        let watched = self.kinds_to_watch();
        let tags: BTreeSet<Arc<ObjectKind>> = watched
            .iter()
            .map(|k| Arc::new(ObjectKind::of(k)))
            .collect();
        // Kinds no longer watched lose their entries; the others keep theirs until relisted.
        self.objects.kinds.retain(|k, _| tags.contains(k));
        self.ledger
            .retain(|key, _| Self::is_row_kind(key) || tags.iter().any(|k| k.is_kind_of(key)));
        self.health
            .retain(|w, _| !matches!(w, super::Watcher::Objects(k) if !tags.contains(k)));
        for tag in tags {
            self.objects.kinds.entry(tag.clone()).or_insert(false);
            self.health
                .entry(super::Watcher::Objects(tag))
                .or_insert(WatchHealth::Syncing);
        }
        // The Deployments, read so far with the built-in schemas, are compared again.
        let mut commands = self.refetch_rows();
        commands.push(Command::WatchObjects(watched));
        // Kinds that came with a reload while discovery was under way.
        commands.extend(self.map_kinds_if_new());
        commands
    }

    /// The served kinds of the manifests to watch: every one but Deployments; cluster-scoped
    /// ones only when every namespace is watched (as `kdrift check -n` leaves them out).
    fn kinds_to_watch(&self) -> Vec<ServedKind> {
        let (Some(index), Some(kinds)) = (&self.manifests, &self.kinds) else {
            return Vec::new();
        };
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for manifest in index.objects() {
            if Self::is_row_kind(&manifest.key) || !index.is_served(manifest) {
                continue;
            }
            let Some(kind) = kinds.served.get(&manifest.api_version, &manifest.key.kind) else {
                continue;
            };
            if !kind.namespaced && self.scope.as_namespace().is_some() {
                continue;
            }
            if seen.insert((kind.group.clone(), kind.kind.clone())) {
                out.push(kind.clone());
            }
        }
        out
    }

    /// Whether a manifest of `key` is in the namespace scope (cluster-scoped ones when every
    /// namespace is watched).
    pub(super) fn object_in_scope(&self, key: &ObjectKey) -> bool {
        match self.scope.as_namespace() {
            None => true,
            Some(ns) => key.namespace == ns,
        }
    }

    /// A batch of watch events of one kind: each object with a manifest is compared.
    pub fn apply_objects(
        &mut self,
        kind: Arc<ObjectKind>,
        updates: Vec<WatchUpdate<ObjectRow>>,
    ) -> bool {
        if !self.objects.kinds.contains_key(&kind) {
            return false;
        }
        // Whether anything a screen shows moved: an entry's drift, writer or owners (the status
        // bar's counts, `:drift`), a list's start or end, or a line on the timeline while it is
        // open. Churn of objects without a manifest, or writes that leave the drift as it was
        // (a controller's status, an annotation kdrift ignores), draws no frame.
        let mut changed = matches!(self.screen, super::Screen::Changes(_));
        for update in updates {
            match update {
                WatchUpdate::Init => {
                    changed = true;
                    self.objects.relisting.insert(kind.clone(), BTreeSet::new());
                }
                WatchUpdate::Apply(row) | WatchUpdate::InitApply(row) => {
                    // The manifest's own key is kept: it shares its strings with the index,
                    // where a new key would scatter small allocations that outlive the list.
                    let Some(key) = self
                        .manifests
                        .as_ref()
                        .and_then(|index| index.get(&row.key).map(|m| m.key.clone()))
                    else {
                        continue;
                    };
                    if let Some(seen) = self.objects.relisting.get_mut(&kind) {
                        seen.insert(key.clone());
                    }
                    self.ledger.superseded(&key);
                    let listed = self.objects.relisting.contains_key(&kind);
                    if crate::drift::history::is_sync_kind(&kind.group, &kind.kind) {
                        self.changes.observe_sync(&key, row.json.text());
                    }
                    let arrived = super::drift::Arrived {
                        api_version: &kind.api_version,
                        kind: &kind.kind,
                        key: &key,
                        json: &row.json,
                    };
                    // (`None`: the entry stands, nothing a compare reads changed.)
                    if let Some(entry) = self.drift_of_live(arrived, Via::Watch { listed }) {
                        super::note_owners(
                            &mut self.owners_asked,
                            &mut self.owners_pending,
                            &entry.owners,
                        );
                        changed |= self.set_entry(&key, entry);
                    }
                }
                WatchUpdate::Delete(key) => {
                    changed = true;
                    self.ledger.superseded(&key);
                    self.gone(key);
                }
                WatchUpdate::InitDone => {
                    changed = true;
                    let seen = self.objects.relisting.remove(&kind).unwrap_or_default();
                    let gone: Vec<ObjectKey> = self
                        .ledger
                        .iter()
                        .filter(|&(key, entry)| {
                            kind.is_kind_of(key)
                                && entry.summary != DriftSummary::Missing
                                && !seen.contains(key)
                        })
                        .map(|(key, _)| key.clone())
                        .collect();
                    for key in gone {
                        self.gone(key);
                    }
                    self.objects.kinds.insert(kind.clone(), true);
                    self.objects.lists_done += 1;
                    self.reconcile_missing_of(|key| kind.is_kind_of(key));
                }
            }
        }
        changed
    }

    /// The health of one kind's watcher.
    pub fn object_health(&mut self, kind: Arc<ObjectKind>, health: WatchHealth) -> bool {
        if !self.objects.kinds.contains_key(&kind) {
            return false;
        }
        self.health
            .insert(super::Watcher::Objects(kind), health.clone())
            != Some(health)
    }

    /// The drift of any object: a workload's row, or an object of a watched kind.
    pub fn drift_of_object(&self, key: &ObjectKey) -> DriftSummary {
        self.ledger.summary(key).clone()
    }

    /// The GitOps owners of an object (a row's or a watched object's), as their reconcilers when
    /// read (else as not read yet).
    pub fn reconcilers_of(&self, key: &ObjectKey) -> Vec<crate::gitops::Reconciler> {
        let owners: Vec<crate::gitops::Owner> = match Self::is_row_kind(key) {
            true => self
                .cache
                .workloads
                .get(key)
                .map(|e| e.row.owners.clone())
                .unwrap_or_default(),
            false => self
                .ledger
                .get(key)
                .map(|e| e.owners.clone())
                .unwrap_or_default(),
        };
        owners
            .into_iter()
            .filter(|owner| self.claims(owner))
            .map(|owner| match self.reconcilers.get(&owner) {
                Some(r) => r.clone(),
                None => crate::gitops::Reconciler {
                    owner,
                    policy: Err("reading it…".into()),
                    found_in: None,
                },
            })
            .collect()
    }

    /// When the newest of an object's drifted fields was changed, if its writer said.
    pub fn drift_changed_at(&self, key: &ObjectKey) -> Option<jiff::Timestamp> {
        let time = self.ledger.get(key)?.newest.as_ref()?.time.clone();
        time?.parse().ok()
    }

    /// Remember the drift of an object computed elsewhere (the diff view), of a workload or a
    /// watched kind, while it has an entry or a manifest.
    pub(crate) fn set_object_drift(&mut self, key: &ObjectKey, drift: &ObjectDrift) {
        if !self.ledger.contains(key) && !self.has_manifest(key) {
            return;
        }
        let (summary, newest) = summarize(drift);
        // The owners are the watched object's (the diff's drift does not carry them).
        let owners = self
            .ledger
            .get(key)
            .map(|e| e.owners.clone())
            .unwrap_or_default();
        self.set_entry(
            key,
            ObjectEntry {
                summary,
                newest: newest.map(Box::new),
                owners,
            },
        );
    }
}
