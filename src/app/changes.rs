//! The change timeline the live view holds, and its `:changes` view. At start it has, for every
//! object the table's and the objects' watchers bring (their JSON is already there: no list of
//! its own), the lines `kdrift changes` prints for that object's `managedFields` entries; then
//! each watch event that changed more than `status` adds a line
//! ([`crate::drift::live_changes`]): the fields old → new and the manager whose entry moved. A
//! ring: past `changes.keep` lines (`.kdrift.yaml`, default 10,000) the oldest go, and the view
//! says how many went. `changes.keep: 0` turns it off (no object is read for it).
//!
//! A line is small (about 220 bytes with the ring's own): its object is the key shared with the
//! object's previous version, its writer, manager, field and text are one shared copy per
//! distinct value, its time a timestamp; the object's name is written when the view shows it.
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::{App, Command, ManifestKey, Screen};
use crate::cluster::live::LiveJson;
use crate::drift::LiveObject;
use crate::drift::changes::{Agrees, Change, Desired, entry_lines};
use crate::drift::live_changes::{self, EntryStamp, LiveChange, Prior, Version};
use crate::managed_fields::FieldPath;
use crate::manifest::config::CHANGES_KEEP_DEFAULT;
use crate::packed::Names;
use crate::schema::{Schema, Schemas};
use crossterm::event::{KeyCode, KeyEvent};
use jiff::Timestamp;

/// One line of the timeline, with the object it is about: what a [`Change`] says, held small.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Shared with the object's previous version and its other lines.
    pub key: Arc<ManifestKey>,
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
    /// The first field the line names (where `enter` opens the diff).
    pub field: Option<Arc<FieldPath>>,
}

impl Line {
    pub fn time(&self) -> Option<Timestamp> {
        self.time
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

/// One shared copy of each distinct value the lines repeat (writers, managers, field paths).
/// Values no line holds any more are let go when the set has doubled since it was last swept.
#[derive(Debug)]
struct Interned<T: ?Sized + Ord> {
    set: BTreeSet<Arc<T>>,
    swept_at: usize,
}

impl<T: ?Sized + Ord> Clone for Interned<T> {
    fn clone(&self) -> Self {
        Interned {
            set: self.set.clone(),
            swept_at: self.swept_at,
        }
    }
}

impl<T: ?Sized + Ord> Default for Interned<T> {
    fn default() -> Self {
        Interned {
            set: BTreeSet::new(),
            swept_at: 0,
        }
    }
}

impl<T: ?Sized + Ord> Interned<T> {
    fn get(&mut self, value: &T, make: impl FnOnce(&T) -> Arc<T>) -> Arc<T> {
        if let Some(shared) = self.set.get(value) {
            return Arc::clone(shared);
        }
        if self.set.len() >= 2 * self.swept_at.max(256) {
            self.set.retain(|v| Arc::strong_count(v) > 1);
            self.swept_at = self.set.len();
        }
        let shared = make(value);
        self.set.insert(Arc::clone(&shared));
        shared
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
    priors: BTreeMap<Arc<ManifestKey>, Prior>,
    /// The field names of the packed previous versions.
    names: Names,
    /// The last sync each Argo CD Application or Flux Kustomization reported (its time and
    /// words), so that a line is said once per sync, not per status write.
    syncs: HashMap<ManifestKey, Box<str>>,
    /// Writers, managers and line texts.
    words: Interned<str>,
    fields: Interned<FieldPath>,
    /// Stamps the lines of events the server gave no time (tests freeze it).
    pub frozen: Option<Timestamp>,
    /// The `:changes` view's place while a diff or accept opened from it shows.
    pub parked: Option<ChangesView>,
    /// The manifests are read: a line without a manifest is "not in git", not "not compared".
    pub compared: bool,
    /// `:changes` was opened: every line is said in full as it comes.
    opened: bool,
}

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
            words: Interned::default(),
            fields: Interned::default(),
            frozen: None,
            parked: None,
            compared: false,
            opened: false,
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
        key: Arc<ManifestKey>,
        mut change: Change,
        manager: &str,
        field: Option<&FieldPath>,
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
            field: field.map(|f| self.fields.get(f, |f| Arc::new(f.clone()))),
        };
        self.lines.insert(Slot(line));
        self.trim();
    }

    /// A start line of `key` whose fields are read when the view is first opened.
    fn push_unread(&mut self, key: Arc<ManifestKey>, entry: &EntryStamp<'_>) {
        if self.keep == 0 {
            return;
        }
        if self.opened {
            let line = match read_entry(&key, entry) {
                Ok((change, field)) => (change, field),
                Err(e) => (unread_change(&key, entry, &e), None),
            };
            self.push(key, line.0, entry.manager, line.1.as_ref());
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
            field: None,
        };
        self.lines.insert(Slot(line));
        self.trim();
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
            line.field = field.map(|f| self.fields.get(&f, |f| Arc::new(f.clone())));
            self.lines.insert(Slot(line));
        }
    }

    fn trim(&mut self) {
        while self.lines.len() > self.keep {
            self.lines.pop_first();
            self.dropped += 1;
        }
    }

    fn push_live(&mut self, key: Arc<ManifestKey>, line: LiveChange) {
        self.push(key, line.change, &line.manager, line.field.as_ref());
    }

    /// A watch event of `key` (its [`Version`]): compared with the version before it, else
    /// (`listed`: from a list, the first sight of it) its entries' lines, else (a new object)
    /// a line that it was created.
    pub fn observe(
        &mut self,
        key: &ManifestKey,
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
    pub fn restamp(&mut self, key: &ManifestKey, version: &Version<'_>) -> bool {
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
    pub fn observe_sync(&mut self, key: &ManifestKey, text: &str) {
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
    pub fn deleted(&mut self, key: &ManifestKey, in_git: bool) {
        self.syncs.remove(key);
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
    pub fn shared_key(&self, key: &ManifestKey) -> Arc<ManifestKey> {
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
    key: &ManifestKey,
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
fn unread_change(key: &ManifestKey, entry: &EntryStamp<'_>, error: &str) -> Change {
    Change {
        time: entry.time.map(str::to_owned),
        object: key.to_string(),
        who: entry.who.clone(),
        what: format!("(its fields cannot be read: {error})"),
        git: Agrees::NotInGit,
        writer: None,
    }
}

/// Reads a watched object's drift extract and (when the timeline is on) the timeline's
/// [`Version`], which borrows the JSON: a scan of the text, not a second parse.
pub(crate) fn read_live<'a>(
    json: &'a LiveJson,
    api_version: &str,
    kind: &str,
    schemas: &Schemas,
    timeline: bool,
) -> (Result<LiveObject, String>, Option<Version<'a>>) {
    let live = json
        .extract_as(api_version, kind, schemas)
        .map_err(|e| e.to_string());
    let version = if timeline {
        Version::of_text(json.text()).ok()
    } else {
        None
    };
    (live, version)
}

/// The `:changes` view: where it is and what it is narrowed to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChangesView {
    pub cursor: usize,
    /// First row on screen.
    pub scroll: usize,
    /// `K`: lines of this kind only (as the object names it: `deployment`).
    pub kind: Option<String>,
    /// `M`: lines of this manager only.
    pub manager: Option<String>,
    /// `/`: lines whose object, writer or fields hold this text (any case).
    pub text: String,
}

impl ChangesView {
    fn shows(&self, line: &Line, namespace: Option<&str>) -> bool {
        namespace.is_none_or(|ns| line.key.namespace.as_ref() == ns)
            && self
                .kind
                .as_deref()
                .is_none_or(|k| line.key.kind.eq_ignore_ascii_case(k))
            && self.manager.as_deref().is_none_or(|m| *line.manager == *m)
            && (self.text.is_empty() || {
                let needle = self.text.to_lowercase();
                [&*line.object(), &*line.who, line.what()]
                    .iter()
                    .any(|t| t.to_lowercase().contains(&needle))
            })
    }

    /// What the filters say, for the title: `kind=deployment manager=kubectl /web`.
    pub fn filters(&self) -> String {
        let mut parts = Vec::new();
        if let Some(k) = &self.kind {
            parts.push(format!("kind={k}"));
        }
        if let Some(m) = &self.manager {
            parts.push(format!("manager={m}"));
        }
        if !self.text.is_empty() {
            parts.push(format!("/{}", self.text));
        }
        parts.join(" ")
    }
}

/// The next value after `current` among `values` (sorted, deduplicated), then none again.
fn cycle(values: Vec<String>, current: &Option<String>) -> Option<String> {
    match current {
        None => values.into_iter().next(),
        Some(c) => values.into_iter().find(|v| v > c),
    }
}

/// What the view says under its lines when the ring dropped some, or when it is off.
pub fn ring_note(changes: &Changes) -> Option<String> {
    if !changes.enabled() {
        return Some("the timeline is off (changes.keep: 0 in .kdrift.yaml)".to_owned());
    }
    (changes.dropped > 0).then(|| {
        format!(
            "{} older line{} dropped: {} are kept (changes.keep in .kdrift.yaml)",
            thousands(changes.dropped),
            if changes.dropped == 1 { "" } else { "s" },
            thousands(changes.keep as u64)
        )
    })
}

/// "1,234" (the view's counts).
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl App {
    /// The lines `view` shows, newest first: of the watched namespace, then its filters.
    pub fn change_rows<'a>(&'a self, view: &ChangesView) -> Vec<&'a Line> {
        let namespace = self.scope.as_namespace();
        self.changes
            .newest_first()
            .filter(|l| view.shows(l, namespace))
            .collect()
    }

    /// `:changes`: open the timeline (where it was left, if a view opened from it showed).
    pub fn open_changes(&mut self) -> Vec<Command> {
        let commands = self.close_detail();
        self.changes.read_all();
        let view = self.changes.parked.take().unwrap_or_default();
        self.screen = Screen::Changes(Box::new(view));
        self.from_list = false;
        self.dirty = true;
        commands
    }

    /// Leave the view for a view of one of its lines' objects, keeping its place.
    fn park_changes(&mut self) {
        if let Screen::Changes(view) = &self.screen {
            self.changes.parked = Some((**view).clone());
            self.from_list = false;
        }
    }
}

/// Keys of `:changes`: move, `enter`/`d` the object's diff (at the line's field), `a` accept,
/// `r` revert, `K`/`M` the next kind/manager filter, `esc` clears the filters, then back.
pub fn changes_key(app: &mut App, key: KeyEvent) -> Vec<Command> {
    let page = app.table_height();
    let Screen::Changes(view) = &app.screen else {
        return Vec::new();
    };
    let (selected, count, kinds, managers) = {
        let rows = app.change_rows(view);
        let selected = rows
            .get(view.cursor.min(rows.len().saturating_sub(1)))
            .map(|l| (ManifestKey::clone(&l.key), l.field.as_deref().cloned()));
        let namespace = app.scope.as_namespace();
        let all = ChangesView::default();
        let mut kinds: Vec<String> = app
            .changes
            .newest_first()
            .filter(|l| all.shows(l, namespace))
            .map(|l| l.key.kind.to_ascii_lowercase())
            .collect();
        kinds.sort();
        kinds.dedup();
        let mut managers: Vec<String> = app
            .changes
            .newest_first()
            .filter(|l| all.shows(l, namespace) && !l.manager.is_empty())
            .map(|l| l.manager.to_string())
            .collect();
        managers.sort();
        managers.dedup();
        (selected, rows.len(), kinds, managers)
    };
    let Screen::Changes(view) = &mut app.screen else {
        return Vec::new();
    };
    let last = count.saturating_sub(1);
    view.cursor = view.cursor.min(last);
    match key.code {
        KeyCode::Esc if !view.filters().is_empty() => {
            view.kind = None;
            view.manager = None;
            view.text.clear();
            view.cursor = 0;
            view.scroll = 0;
        }
        KeyCode::Esc => {
            app.screen = Screen::Table;
            app.changes.parked = None;
        }
        KeyCode::Char('K') => {
            view.kind = cycle(kinds, &view.kind);
            view.cursor = 0;
            view.scroll = 0;
        }
        KeyCode::Char('M') => {
            view.manager = cycle(managers, &view.manager);
            view.cursor = 0;
            view.scroll = 0;
        }
        KeyCode::Char('d') | KeyCode::Enter => {
            if let Some((key, field)) = selected {
                app.park_changes();
                return app.open_diff_at(key, field);
            }
        }
        KeyCode::Char('a') if !app.readonly => {
            if let Some((key, _)) = selected {
                app.park_changes();
                let commands = app.open_accept(key, false);
                if !matches!(app.screen, Screen::Accept(_)) {
                    // Nothing to accept: the view stays, with the reason in the status bar.
                    app.changes.parked = None;
                }
                return commands;
            }
        }
        KeyCode::Char('r') if !app.readonly => {
            if let Some((key, _)) = selected {
                return app.open_revert(key);
            }
        }
        code => {
            if super::scroll::scroll_key(code, &mut view.cursor, last, page) {
                if view.cursor < view.scroll {
                    view.scroll = view.cursor;
                } else if view.cursor >= view.scroll + page {
                    view.scroll = view.cursor + 1 - page;
                }
            }
        }
    }
    Vec::new()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn push(changes: &mut Changes, time: &str, name: &str) {
        // (pushed with `compared` false, their git reads "not compared")
        let change = Change {
            time: Some(time.to_owned()),
            object: format!("deployment/shop/{name}"),
            who: "kubectl-edit Update".to_owned(),
            what: ".spec.replicas: 1 → 2".to_owned(),
            git: Agrees::Drifted,
            writer: None,
        };
        let key = Arc::new(ManifestKey::new("apps", "Deployment", "shop", name));
        changes.push(key, change, "kubectl-edit", None);
    }

    #[test]
    fn the_ring_keeps_the_newest_lines_and_counts_the_dropped() {
        let mut changes = Changes::default();
        changes.set_keep(Some(3));
        for (i, minute) in [10, 12, 11, 13, 14].iter().enumerate() {
            push(
                &mut changes,
                &format!("2026-01-01T10:{minute}:00Z"),
                &format!("w{i}"),
            );
        }
        assert_eq!(changes.len(), 3);
        assert_eq!(changes.dropped, 2);
        // The oldest by time went (10:10, 10:11), not the first to arrive.
        let names: Vec<&str> = changes
            .newest_first()
            .map(|l| l.key.name.as_ref())
            .collect();
        assert_eq!(names, ["w4", "w3", "w1"]);
        // A smaller keep drops at once; 0 keeps nothing and reads nothing.
        changes.set_keep(Some(1));
        assert_eq!((changes.len(), changes.dropped), (1, 4));
        changes.set_keep(Some(0));
        assert!(!changes.enabled());
        push(&mut changes, "2026-01-01T11:00:00Z", "late");
        assert_eq!((changes.len(), changes.dropped), (0, 5));
        assert_eq!(
            ring_note(&changes).as_deref(),
            Some("the timeline is off (changes.keep: 0 in .kdrift.yaml)")
        );
    }

    #[test]
    fn a_sync_is_one_line_however_many_status_writes_report_it() {
        let mut changes = Changes::default();
        let key = ManifestKey::new("argoproj.io", "Application", "argocd", "shop");
        let app = |finished: &str, revision: &str, health: &str| {
            serde_json::json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                "metadata": {"name": "shop", "namespace": "argocd"},
                "status": {"health": {"status": health}, "operationState": {
                    "phase": "Succeeded", "finishedAt": finished,
                    "operation": {"initiatedBy": {"automated": true}},
                    "syncResult": {"revision": revision}}}})
            .to_string()
        };
        changes.observe_sync(&key, &app("2026-01-01T10:00:00Z", "abc123", "Progressing"));
        // Another status write (health) of the same sync: no second line.
        changes.observe_sync(&key, &app("2026-01-01T10:00:00Z", "abc123", "Healthy"));
        assert_eq!(changes.len(), 1);
        // Never synced: no line.
        let fresh = ManifestKey::new("argoproj.io", "Application", "argocd", "new");
        changes.observe_sync(
            &fresh,
            r#"{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"new"},"status":{}}"#,
        );
        assert_eq!(changes.len(), 1);
        // The next sync: a line, newest first, by Argo CD's controller.
        changes.observe_sync(&key, &app("2026-01-01T10:05:00Z", "def456", "Healthy"));
        let lines: Vec<(&str, &str)> = changes
            .newest_first()
            .map(|l| (l.what(), &*l.manager))
            .collect();
        assert_eq!(
            lines,
            [
                (
                    "automated sync to revision def456: Succeeded",
                    "argocd-application-controller"
                ),
                (
                    "automated sync to revision abc123: Succeeded",
                    "argocd-application-controller"
                )
            ]
        );
    }

    fn listed(changes: &mut Changes, name: &str) {
        let text = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "shop", "managedFields": [
                {"manager": "kubectl", "operation": "Update", "subresource": "scale",
                 "time": "2026-01-01T10:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:spec": {"f:replicas": {}}}},
                {"manager": "helm", "operation": "Update", "time": "2026-01-01T09:00:00Z",
                 "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:a": {},
                 "f:b": {}}}, "f:spec": {"f:paused": {}}}}]},
            "spec": {"replicas": 2, "paused": false}})
        .to_string();
        let version = Version::of_text(&text).unwrap();
        let key = ManifestKey::new("apps", "Deployment", "shop", name);
        let schema = Schemas::builtin().root("apps/v1", "Deployment");
        changes.observe(&key, schema, version, None, true);
    }

    fn said(changes: &Changes) -> Vec<(String, String, String, Option<String>)> {
        changes
            .newest_first()
            .map(|l| {
                (
                    l.object(),
                    l.who.to_string(),
                    l.what().to_owned(),
                    l.field.as_ref().map(|f| f.to_string()),
                )
            })
            .collect()
    }

    #[test]
    fn start_lines_without_a_manifest_read_their_fields_when_the_view_opens() {
        let mut changes = Changes {
            compared: true,
            ..Changes::default()
        };
        listed(&mut changes, "web");
        // Time, object and writer at once; the fields wait for the view.
        let before: Vec<_> = said(&changes)
            .into_iter()
            .map(|l| (l.0, l.1, l.2))
            .collect();
        assert_eq!(
            before,
            [
                (
                    "deployment/shop/web".into(),
                    "kubectl (scale) Update".into(),
                    String::new()
                ),
                (
                    "deployment/shop/web".into(),
                    "helm Update".into(),
                    String::new()
                ),
            ]
        );
        changes.read_all();
        let expected = [
            (
                "deployment/shop/web".to_owned(),
                "kubectl (scale) Update".to_owned(),
                ".spec.replicas".to_owned(),
                Some(".spec.replicas".to_owned()),
            ),
            (
                "deployment/shop/web".to_owned(),
                "helm Update".to_owned(),
                ".metadata.labels.a, .metadata.labels.b, .spec.paused".to_owned(),
                Some(".metadata.labels.a".to_owned()),
            ),
        ];
        assert_eq!(said(&changes), expected);
        assert!(changes.newest_first().all(|l| l.git == Agrees::NotInGit));
        // Once opened, a listed object's lines are said as they come.
        let mut later = Changes {
            compared: true,
            ..Changes::default()
        };
        later.read_all();
        listed(&mut later, "web");
        assert_eq!(said(&later), expected);
    }

    #[test]
    fn a_time_seen_is_cut_to_the_second_as_the_server_cuts_its_own() {
        let changes = Changes {
            frozen: Some("2026-11-27T00:35:12.9Z".parse().unwrap()),
            ..Changes::default()
        };
        // A write the server made later in that second reads :12; so must this one, so that
        // arrival order decides between them.
        assert_eq!(changes.seen(), "2026-11-27T00:35:12Z");
    }

    #[test]
    fn the_view_says_how_many_lines_were_dropped() {
        let mut changes = Changes::default();
        assert_eq!(ring_note(&changes), None);
        changes.set_keep(Some(2_000));
        for i in 0..3_001 {
            push(
                &mut changes,
                &format!("2026-01-01T10:00:{:02}Z", i % 60),
                &format!("w{i}"),
            );
        }
        assert_eq!(
            ring_note(&changes).as_deref(),
            Some("1,001 older lines dropped: 2,000 are kept (changes.keep in .kdrift.yaml)")
        );
    }

    #[test]
    fn counts_have_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
