//! The change timeline the live view holds, and its `:changes` view. At start it has, for every
//! object the table's and the objects' watchers bring (their JSON is already there: no list of
//! its own), the lines `kdrift changes` prints for that object's `managedFields` entries; then
//! each watch event that changed more than `status` adds a line
//! ([`crate::drift::live_changes`]): the fields old → new and the manager whose entry moved. A
//! ring: past `changes.keep` lines (`.kdrift.yaml`, default 10,000) the oldest go, and the view
//! says how many went. `changes.keep: 0` turns it off (no object is read for it).
//!
//! A line is small (about 240 bytes with the ring's own): its object is the key shared with the
//! object's previous version, its writer, manager, field, a write's field list and its text are
//! one shared copy per distinct value, its time a timestamp; the object's name is written when
//! the view shows it. Whether git agrees is said again when the object's drift or desired state
//! moves ([`Changes::rejudge`]).
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::drift::changes::{Agrees, Change, Desired, agrees_with, entry_lines};
use crate::drift::live_changes::{self, EntryStamp, LiveChange, Prior, Version};
use crate::managed_fields::FieldPath;
use crate::manifest::ObjectKey;
use crate::manifest::config::CHANGES_KEEP_DEFAULT;
use crate::packed::Names;
use crate::schema::Schema;
use jiff::Timestamp;

/// One line of the timeline, with the object it is about: what a [`Change`] says, held small.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Shared with the object's previous version and its other lines.
    pub key: Arc<ObjectKey>,
    /// `None` for a write the server gave no time (a v1.36 `/scale` write read at start).
    time: Option<Timestamp>,
    /// Arrival order, between lines of one time.
    seq: u64,
    /// `kubectl (scale) Update`.
    pub who: Arc<str>,
    /// The manager alone (`kubectl`), for the filter.
    pub manager: Arc<str>,
    what: What,
    pub git: Agrees,
    /// The fields it names: a write's line every field it changed, a start line the first
    /// (where `enter` opens the diff). One shared copy per distinct list.
    fields: Option<Arc<[FieldPath]>>,
    /// A write's line: whether git agrees is said again from its fields when the object's drift
    /// or desired state moves ([`Changes::rejudge`]).
    written: bool,
    /// A start line said without the object's desired state (its list came before the
    /// manifests or its Helm release's record): said again once it is compared
    /// ([`Changes::judge`]).
    unjudged: bool,
}

impl Line {
    pub fn time(&self) -> Option<Timestamp> {
        self.time
    }

    /// The first field it names (where `enter` opens the diff).
    pub fn field(&self) -> Option<&FieldPath> {
        self.fields.as_deref().and_then(<[FieldPath]>::first)
    }

    /// The object as a line names it: `deployment/shop/web`.
    pub fn object(&self) -> String {
        self.key.to_string()
    }

    /// The fields it names (a start line's are read when `:changes` is first opened).
    pub fn what(&self) -> &str {
        match &self.what {
            What::Said(text) => text,
            What::Unread(_) => "",
        }
    }
}

/// What a line says, or, for a line at start of an object without a manifest until the view
/// is first opened, its entry's `fieldsV1` text: reading every entry's fields at start was
/// most of the timeline's cost there, and most timelines are never opened. Both are one shared
/// copy per distinct text: objects made alike (one chart's, one generator's) have the same
/// entries, field for field, so a start of 10,000 lines holds a few texts, not 10,000
/// (6.6 MB of `fieldsV1` at 30,000 objects before).
#[derive(Debug, Clone, PartialEq)]
enum What {
    Said(Arc<str>),
    Unread(Arc<str>),
}

/// The ring orders lines by (time, arrival): a line without a time sorts first, so it is the
/// first to go.
#[derive(Debug, Clone, PartialEq)]
struct Slot(Line);

impl Eq for Slot {}

impl Ord for Slot {
    fn cmp(&self, other: &Slot) -> std::cmp::Ordering {
        (self.0.time, self.0.seq).cmp(&(other.0.time, other.0.seq))
    }
}

impl PartialOrd for Slot {
    fn partial_cmp(&self, other: &Slot) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The lines, the previous version of each object, and the view's place while another view
/// opened from it shows.
#[derive(Debug, Clone)]
pub struct Changes {
    keep: usize,
    lines: BTreeSet<Slot>,
    seq: u64,
    /// Lines dropped to keep `keep`.
    pub dropped: u64,
    /// A B-tree, not a hash table: at 30,000 objects a table has 65,536 slots of 48 bytes, most
    /// of them empty (3.2 MB); the tree's nodes hold ~2.8 MB (heaptrack at sync).
    priors: BTreeMap<Arc<ObjectKey>, Prior>,
    /// The field names of the packed previous versions.
    names: Names,
    /// The last sync each Argo CD Application or Flux Kustomization reported (its time and
    /// words), so that a line is said once per sync, not per status write.
    syncs: HashMap<ObjectKey, Box<str>>,
    /// One shared copy of each writer, manager, line text and field list the lines repeat.
    words: crate::intern::Interner<str>,
    fields: crate::intern::Interner<[FieldPath]>,
    /// Stamps the lines of events the server gave no time (tests freeze it).
    pub frozen: Option<Timestamp>,
    /// The manifests are read: a line without a manifest is "not in git", not "not compared".
    pub compared: bool,
    /// `:changes` was opened: every line is said in full as it comes.
    opened: bool,
    /// The objects whose start lines were said without their desired state.
    unjudged: BTreeSet<Arc<ObjectKey>>,
    /// Start lines said again ([`Changes::judge`]), put in at [`Changes::judged`].
    judged: Vec<(Arc<ObjectKey>, Vec<Said>)>,
    /// What git says now of objects whose drift or desired state moved ([`Changes::rejudge`]),
    /// said of their lines at [`Changes::judged`]: by the key the lines share (a batch holds a
    /// few, and a line is matched by its key's address, not its text).
    rejudged: Vec<(Arc<ObjectKey>, Verdict)>,
    /// How many write lines of each object the ring holds, by its shared key's address: a
    /// verdict on an object with none (most: a write's own line is said as it comes) costs no
    /// pass over the ring.
    written: HashMap<*const ObjectKey, u32>,
}

/// What git says of an object now: its drifted fields and its desired state (`None`: no
/// manifest describes it), from which a write's line says whether git agrees with it.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub drifted: Vec<FieldPath>,
    pub desired: Option<(crate::schema::Schema, Arc<crate::manifest::ManifestIndex>)>,
}

impl Verdict {
    /// No manifest describes the object.
    pub fn not_in_git() -> Verdict {
        Verdict {
            drifted: Vec::new(),
            desired: None,
        }
    }

    fn agrees(&self, key: &ObjectKey, paths: &[FieldPath]) -> Agrees {
        let manifest = self
            .desired
            .as_ref()
            .and_then(|(schema, index)| Some((*schema, index.get(key)?.body.root())));
        agrees_with(paths, &self.drifted, manifest)
    }
}

/// A line as [`Changes::push`] takes it: what it says, the manager, the field it opens at.
type Said = (Change, String, Option<FieldPath>);

impl Default for Changes {
    fn default() -> Changes {
        Changes {
            keep: CHANGES_KEEP_DEFAULT,
            lines: BTreeSet::new(),
            seq: 0,
            dropped: 0,
            priors: BTreeMap::new(),
            names: Names::default(),
            syncs: HashMap::new(),
            words: Default::default(),
            fields: Default::default(),
            frozen: None,
            compared: false,
            opened: false,
            unjudged: BTreeSet::new(),
            judged: Vec::new(),
            rejudged: Vec::new(),
            written: HashMap::new(),
        }
    }
}

impl Changes {
    /// Whether the timeline reads watch events (`changes.keep` is not 0).
    pub fn enabled(&self) -> bool {
        self.keep > 0
    }

    pub fn keep(&self) -> usize {
        self.keep
    }

    /// `changes.keep` of the manifests' `.kdrift.yaml` (`None`: the default).
    pub fn set_keep(&mut self, keep: Option<usize>) {
        self.keep = keep.unwrap_or(CHANGES_KEEP_DEFAULT);
        if self.keep == 0 {
            self.priors = BTreeMap::new();
            self.names = Names::default();
            self.unjudged = BTreeSet::new();
        }
        self.trim();
    }

    /// Everything goes (another cluster).
    pub fn clear(&mut self) {
        let (keep, frozen, compared, opened) = (self.keep, self.frozen, self.compared, self.opened);
        *self = Changes::default();
        self.keep = keep;
        self.frozen = frozen;
        self.compared = compared;
        self.opened = opened;
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Newest first.
    pub fn newest_first(&self) -> impl Iterator<Item = &Line> {
        self.lines.iter().rev().map(|slot| &slot.0)
    }

    /// The time an event without a time of its own was seen, cut to the second as a server
    /// records managedFields times (rounded up, a write seen at :12.6 would sort after one the
    /// server made at :12.9 and wrote as :12).
    fn seen(&self) -> String {
        let now = self.frozen.unwrap_or_else(Timestamp::now);
        now.round(
            jiff::TimestampRound::new()
                .smallest(jiff::Unit::Second)
                .mode(jiff::RoundMode::Trunc),
        )
        .unwrap_or(now)
        .to_string()
    }

    /// Adds the line `change` says of `key` (whose name is the line's object), by `manager`,
    /// opened at `field`.
    pub fn push(
        &mut self,
        key: Arc<ObjectKey>,
        change: Change,
        manager: &str,
        field: Option<&FieldPath>,
    ) {
        let fields = field.map(std::slice::from_ref).unwrap_or_default();
        self.push_line(key, change, manager, fields, false, false);
    }

    fn push_line(
        &mut self,
        key: Arc<ObjectKey>,
        mut change: Change,
        manager: &str,
        fields: &[FieldPath],
        unjudged: bool,
        written: bool,
    ) {
        // The ring shows `what` and keeps the manager beside the line: a write's field list is
        // `kdrift changes -o json`'s, not worth its heap in thousands of lines.
        change.writer = None;
        if self.keep == 0 {
            return;
        }
        self.seq += 1;
        let line = Line {
            key,
            // Server times are RFC 3339 and read; one that is not is kept as no time.
            time: change.time.as_deref().and_then(|t| t.parse().ok()),
            seq: self.seq,
            who: self.words.get(&change.who, |w| w.into()),
            manager: self.words.get(manager, |w| w.into()),
            what: What::Said(self.words.get(&change.what, |w| w.into())),
            git: if self.compared {
                change.git
            } else {
                Agrees::NotCompared
            },
            fields: (!fields.is_empty()).then(|| self.fields.get(fields, |f| Arc::from(f))),
            written: written && !fields.is_empty(),
            unjudged,
        };
        if line.written {
            *self.written.entry(Arc::as_ptr(&line.key)).or_default() += 1;
        }
        self.lines.insert(Slot(line));
        self.trim();
    }

    /// A start line of `key` whose fields are read when the view is first opened.
    fn push_unread(&mut self, key: Arc<ObjectKey>, entry: &EntryStamp<'_>) {
        if self.keep == 0 {
            return;
        }
        self.unjudged.insert(Arc::clone(&key));
        if self.opened {
            let line = match read_entry(&key, entry) {
                Ok((change, field)) => (change, field),
                Err(e) => (unread_change(&key, entry, &e), None),
            };
            let fields = line.1.as_slice();
            self.push_line(key, line.0, entry.manager, fields, true, false);
            return;
        }
        self.seq += 1;
        let line = Line {
            key,
            time: entry.time.and_then(|t| t.parse().ok()),
            seq: self.seq,
            who: self.words.get(&entry.who, |w| w.into()),
            manager: self.words.get(entry.manager, |w| w.into()),
            what: What::Unread(self.words.get(entry.fields, |w| w.into())),
            git: if self.compared {
                Agrees::NotInGit
            } else {
                Agrees::NotCompared
            },
            fields: None,
            written: false,
            unjudged: true,
        };
        self.lines.insert(Slot(line));
        self.trim();
    }

    /// Whether `key`'s start lines were said without its desired state.
    pub fn unjudged(&self, key: &ObjectKey) -> bool {
        self.unjudged.contains(key)
    }

    /// `key` is compared with its desired state, which its start lines were said without (its
    /// list came before the manifests or its Helm release's record): they are said again from
    /// `version`'s entries, each with whether git agrees, as `kdrift changes` says them — put in
    /// at [`Changes::judged`], in one pass over the ring for every object of a batch.
    pub fn judge(&mut self, key: &ObjectKey, version: &Version<'_>, desired: &Desired<'_>) {
        let Some(key) = self.unjudged.take(key) else {
            return;
        };
        let entries = version.entries().unwrap_or_default();
        let said = entry_lines(&key.to_string(), &entries, Some(desired))
            .into_iter()
            .zip(&entries)
            .map(|((change, field), entry)| (change, entry.manager.clone(), field))
            .collect();
        self.judged.push((key, said));
    }

    /// The start lines [`Changes::judge`] said again replace those said without a desired
    /// state (an object whose start lines the ring let go gets none back).
    pub fn judged(&mut self) {
        self.said_again();
        if self.judged.is_empty() {
            return;
        }
        let judged = std::mem::take(&mut self.judged);
        // Each object of the batch by its key, and whether the ring still held a line of it.
        let at: HashMap<&ObjectKey, usize> = judged
            .iter()
            .enumerate()
            .map(|(i, (key, _))| (&**key, i))
            .collect();
        let mut found = vec![false; judged.len()];
        self.lines.retain(
            |Slot(line)| match at.get(&*line.key).filter(|_| line.unjudged) {
                Some(&i) => {
                    found[i] = true;
                    false
                }
                None => true,
            },
        );
        for ((key, said), found) in judged.into_iter().zip(found) {
            if !found {
                continue;
            }
            for (change, manager, field) in said {
                self.push(Arc::clone(&key), change, &manager, field.as_ref());
            }
        }
    }

    /// `key` was compared (its drift or desired state moved, or it has no manifest now): its
    /// writes' lines say again whether git agrees ("whether git agrees now"), as do its lines
    /// said before the manifests were read when none describes it — at [`Changes::judged`], in
    /// one pass over the ring for every object of a batch. Start lines are said again only
    /// through [`Changes::judge`]: their entry may own a map whose fields another owns.
    pub fn rejudge(&mut self, key: &ObjectKey, verdict: Verdict) {
        if !self.enabled() || !self.compared {
            return;
        }
        // Its lines hold the key its previous version does: none without one.
        let Some((shared, _)) = self.priors.get_key_value(key) else {
            return;
        };
        self.rejudged.push((Arc::clone(shared), verdict));
    }

    /// The lines of the objects [`Changes::rejudge`] was told of, said again.
    fn said_again(&mut self) {
        if self.rejudged.is_empty() {
            return;
        }
        let mut verdicts = std::mem::take(&mut self.rejudged);
        // By address; of an object told of twice, the later word stands (the sort is stable).
        verdicts.sort_by_key(|(key, _)| Arc::as_ptr(key));
        verdicts.dedup_by(|later, earlier| {
            let same = Arc::ptr_eq(&later.0, &earlier.0);
            if same {
                std::mem::swap(later, earlier);
            }
            same
        });
        let moved: Vec<(Slot, Agrees)> = self
            .lines
            .iter()
            .filter_map(|slot| {
                let line = &slot.0;
                let at = verdicts
                    .binary_search_by_key(&Arc::as_ptr(&line.key), |(key, _)| Arc::as_ptr(key))
                    .ok()?;
                let verdict = &verdicts[at].1;
                let git = match &line.fields {
                    Some(paths) if line.written => verdict.agrees(&line.key, paths),
                    _ if line.git == Agrees::NotCompared && verdict.desired.is_none() => {
                        Agrees::NotInGit
                    }
                    _ => return None,
                };
                (git != line.git).then(|| (slot.clone(), git))
            })
            .collect();
        for (slot, git) in moved {
            self.lines.remove(&slot);
            let Slot(mut line) = slot;
            line.git = git;
            self.lines.insert(Slot(line));
        }
    }

    /// `:changes` opens: the start lines' fields are read (once; later lines come in full).
    pub fn read_all(&mut self) {
        self.opened = true;
        let unread: Vec<Slot> = self
            .lines
            .iter()
            .filter(|slot| matches!(slot.0.what, What::Unread(_)))
            .cloned()
            .collect();
        for Slot(mut line) in unread {
            self.lines.remove(&Slot(line.clone()));
            let What::Unread(fields) = &line.what else {
                continue;
            };
            let entry = EntryStamp {
                who: line.who.to_string(),
                manager: &line.manager,
                time: None,
                fields,
            };
            let (what, field) = match read_entry(&line.key, &entry) {
                Ok((change, field)) => (change.what, field),
                Err(e) => (unread_change(&line.key, &entry, &e).what, None),
            };
            line.what = What::Said(self.words.get(&what, |w| w.into()));
            line.fields =
                field.map(|f| self.fields.get(std::slice::from_ref(&f), |f| Arc::from(f)));
            self.lines.insert(Slot(line));
        }
    }

    fn trim(&mut self) {
        while self.lines.len() > self.keep {
            if let Some(Slot(line)) = self.lines.pop_first()
                && line.written
                && let Some(count) = self.written.get_mut(&Arc::as_ptr(&line.key))
            {
                *count -= 1;
                if *count == 0 {
                    self.written.remove(&Arc::as_ptr(&line.key));
                }
            }
            self.dropped += 1;
        }
    }

    /// Whether the ring holds a write line of `key` (before the event now compared adds one).
    pub fn has_written(&self, key: &ObjectKey) -> bool {
        self.priors
            .get_key_value(key)
            .is_some_and(|(shared, _)| self.written.contains_key(&Arc::as_ptr(shared)))
    }

    fn push_live(&mut self, key: Arc<ObjectKey>, line: LiveChange) {
        self.push_line(key, line.change, &line.manager, &line.paths, false, true);
    }

    /// A watch event of `key` (its [`Version`]): compared with the version before it, else
    /// (`listed`: from a list, the first sight of it) its entries' lines, else (a new object)
    /// a line that it was created.
    pub fn observe(
        &mut self,
        key: &ObjectKey,
        schema: Schema,
        version: Version<'_>,
        desired: Option<&Desired<'_>>,
        listed: bool,
    ) {
        if !self.enabled() {
            return;
        }
        // Only status or server metadata changed (most events): no line, nothing parsed or
        // packed.
        if let Some(before) = self.priors.get_mut(key)
            && before.unchanged(&version)
        {
            before.restamp(&version);
            return;
        }
        let (key, before) = match self.priors.get_key_value(key) {
            Some((shared, before)) => (Arc::clone(shared), Some(before)),
            None => (Arc::new(key.clone()), None),
        };
        match before {
            Some(before) => {
                let seen = self.seen();
                if let Some(line) = live_changes::live_change(
                    &key.to_string(),
                    schema,
                    before,
                    &version,
                    desired,
                    &seen,
                ) {
                    self.push_live(Arc::clone(&key), line);
                }
            }
            // No manifest: nothing to compare, so the fields can wait for the view.
            None if listed && desired.is_none() => {
                for entry in version.entry_stamps() {
                    self.push_unread(Arc::clone(&key), &entry);
                }
            }
            None if listed => {
                let entries = version.entries().unwrap_or_default();
                for ((change, field), entry) in entry_lines(&key.to_string(), &entries, desired)
                    .into_iter()
                    .zip(&entries)
                {
                    self.push(Arc::clone(&key), change, &entry.manager, field.as_ref());
                }
            }
            None => {
                let line = live_changes::created(&key.to_string(), &version, desired, &self.seen());
                self.push_live(Arc::clone(&key), line);
            }
        }
        let prior = Prior::of(&version, &mut self.names);
        self.priors.insert(key, prior);
    }

    /// `version` of `key` changed nothing a line names ([`Prior::unchanged`]): its entries
    /// are taken, as [`Changes::observe`] takes them, and true is said. False when it did, or
    /// when there is no previous version to tell (then it must be observed).
    ///
    /// [`Prior::unchanged`]: crate::drift::live_changes::Prior::unchanged
    pub fn restamp(&mut self, key: &ObjectKey, version: &Version<'_>) -> bool {
        match self.priors.get_mut(key) {
            Some(before) if before.unchanged(version) => {
                before.restamp(version);
                true
            }
            _ => false,
        }
    }

    /// A watch event of an Argo CD Application or Flux Kustomization (its whole JSON text,
    /// `status` included): a line for its last sync ([`history::sync_line`]) when it is not
    /// the one already said. At start this is the sync the object last reported, as `kdrift
    /// changes` lists it.
    ///
    /// [`history::sync_line`]: crate::drift::history::sync_line
    pub fn observe_sync(&mut self, key: &ObjectKey, text: &str) {
        if !self.enabled() {
            return;
        }
        let Some(change) = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .as_ref()
            .and_then(crate::drift::history::sync_line)
        else {
            return;
        };
        let said: Box<str> =
            format!("{} {}", change.time.as_deref().unwrap_or(""), change.what).into();
        if self.syncs.get(key) == Some(&said) {
            return;
        }
        self.syncs.insert(key.clone(), said);
        let who = change.who.clone();
        self.push(Arc::new(key.clone()), change, &who, None);
    }

    /// `key` was deleted (`in_git`: a manifest still describes it).
    pub fn deleted(&mut self, key: &ObjectKey, in_git: bool) {
        self.syncs.remove(key);
        self.unjudged.remove(key);
        let Some((key, _)) = self.priors.remove_entry(key) else {
            return;
        };
        if !self.enabled() {
            return;
        }
        let line = live_changes::deleted(&key.to_string(), in_git, &self.seen());
        self.push_live(key, line);
    }

    /// `key` as the timeline holds it (the key of its previous version), else a new one: the
    /// drift entries share it, where a copy would be 64 bytes more in each of their slots.
    pub fn shared_key(&self, key: &ObjectKey) -> Arc<ObjectKey> {
        match self.priors.get_key_value(key) {
            Some((shared, _)) => Arc::clone(shared),
            None => Arc::new(key.clone()),
        }
    }

    /// Bytes held by the previous versions (for the benches).
    pub fn prior_bytes(&self) -> usize {
        self.priors.values().map(Prior::heap_bytes).sum()
    }
}

/// The line of a start entry without a manifest, its fields read from their text.
fn read_entry(
    key: &ObjectKey,
    entry: &EntryStamp<'_>,
) -> Result<(Change, Option<FieldPath>), String> {
    let fields: serde_json::Value =
        serde_json::from_str(entry.fields).map_err(|e| e.to_string())?;
    let fields =
        crate::managed_fields::FieldSet::from_fields_v1(&fields).map_err(|e| e.to_string())?;
    let one = crate::managed_fields::ManagedFieldsEntry {
        manager: entry.manager.to_owned(),
        operation: crate::managed_fields::Operation::Update,
        api_version: String::new(),
        time: entry.time.map(str::to_owned),
        subresource: None,
        fields,
    };
    let (mut change, field) = entry_lines(&key.to_string(), std::slice::from_ref(&one), None)
        .into_iter()
        .next()
        .ok_or("no line")?;
    change.who = entry.who.clone();
    Ok((change, field))
}

/// A start line whose entry's fields could not be read says so.
fn unread_change(key: &ObjectKey, entry: &EntryStamp<'_>, error: &str) -> Change {
    Change {
        time: entry.time.map(str::to_owned),
        object: key.to_string(),
        who: entry.who.clone(),
        what: format!("(its fields cannot be read: {error})"),
        git: Agrees::NotInGit,
        writer: None,
    }
}

mod view;
pub use view::{ChangesView, changes_key, ring_note, thousands};

#[cfg(test)]
mod tests;
