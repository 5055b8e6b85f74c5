//! Several kubeconfig contexts in one live view: one [`App`] per context (its own cache,
//! manifests, drift and views, as when it is watched alone) and the fleet's table over all of
//! them, its rows keyed by (context, object).
//!
//! The fleet holds no rows of its own: the table merges the contexts' sorted tables on the fly
//! (by place, then key, then the order the contexts were given), so that the same Deployment of
//! several clusters sits on adjacent rows. A key on the table goes to the context of the selected
//! row, which is then the *lead*: `enter`, `d`, `a`, `r` open that context's own view (shown
//! until it goes back to its table), and the filter, sort and kind it takes are copied to the
//! others. Which contexts are watched is the runtime's (`:ctx NAME`, `:ctx +NAME`, `:ctx -NAME`
//! arrive as commands of the lead).
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use std::ops::Bound;

use super::compare::{CompareKey, CompareView};
use super::drift_list::{DriftListView, DriftRow};
use super::{App, Command, Message, Screen, update};
use crate::cluster::watch::WatchHealth;
use crate::manifest::ObjectKey;

/// How a context's connection stands, beside its watchers' health (which its [`App`] keeps).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    Connecting,
    Connected,
    /// The connection could not be made: the error, as `kdrift check` words it.
    Unreachable(String),
}

/// One context as the fleet's table and status bar see it.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    pub context: &'a str,
    pub link: &'a Link,
    pub app: &'a App,
}

/// The state of the fleet's table: selection, scroll, and which context's view shows.
#[derive(Debug, Clone, Default)]
pub struct Fleet {
    /// The context whose own view shows (detail, diff, accept, revert, logs, `:drift`…), by
    /// index; `None` while the fleet's table shows.
    pub focus: Option<usize>,
    /// The context the last key went to: its prompt, help and message show over the table.
    pub lead: usize,
    pub selected: usize,
    pub offset: usize,
    /// The selected row (context index, key), kept while rows move under it.
    selected_row: Option<(usize, ObjectKey)>,
    /// `:drift` over every context, while it shows (its place is kept while a view opened from
    /// it shows).
    pub drift_list: Option<DriftListView>,
    /// The rows on screen (context index, key) from `offset`, found by [`Fleet::refresh`].
    window: Vec<(usize, ObjectKey)>,
    /// `c`: one object compared across the contexts, while it shows (over the table or
    /// `:drift`, which `esc` goes back to).
    pub compare: Option<CompareView>,
    /// Each context's drifted objects (by context name, in the order of the apps), counted
    /// again only for an app that changed since the last frame: the status bar's total.
    drifted: Vec<(String, usize)>,
}

impl Fleet {
    /// Whether a view of `contexts` contexts is the one context's own, as when it is watched
    /// alone: its table, keys and status bar (no comparison or list over several left open).
    pub fn alone(&self, contexts: usize) -> bool {
        contexts == 1 && self.compare.is_none() && self.drift_list.is_none()
    }

    /// Keeps [`Fleet::drifted`] in step: an app that changed since the last frame (or that
    /// is new at its place) is counted again, the others keep their count.
    fn count_drifted(&mut self, apps: &[&App]) {
        self.drifted.truncate(apps.len());
        for (i, app) in apps.iter().enumerate() {
            match self.drifted.get_mut(i) {
                Some((context, count)) if *context == app.context => {
                    if app.dirty {
                        *count = app.drifted_count();
                    }
                }
                Some(slot) => *slot = (app.context.clone(), app.drifted_count()),
                None => self
                    .drifted
                    .push((app.context.clone(), app.drifted_count())),
            }
        }
    }

    /// The drifted objects of every context, as of the last [`Fleet::refresh`].
    pub fn drifted(&self) -> usize {
        self.drifted.iter().map(|(_, n)| n).sum()
    }
}

/// The `:drift` rows of every context: (context index, row), by kind, namespace and name, then
/// in the order the contexts were given.
pub fn drift_rows(apps: &[&App]) -> Vec<(usize, DriftRow)> {
    let mut rows: Vec<(usize, DriftRow)> = apps
        .iter()
        .enumerate()
        .flat_map(|(i, app)| app.drift_rows().into_iter().map(move |row| (i, row)))
        .collect();
    rows.sort_by(|(i, a), (j, b)| {
        (&a.key.kind, &a.key.namespace, &a.key.name, i).cmp(&(
            &b.key.kind,
            &b.key.namespace,
            &b.key.name,
            j,
        ))
    });
    rows
}

/// After a key or a message: a context's view that went back to its table gives the screen back
/// to the fleet's table, and one that went back to its `:drift` list to the fleet's list of
/// every context (several watched).
pub fn settle(fleet: &mut Fleet, apps: &mut [&mut App]) {
    let several = apps.len() > 1;
    for (i, app) in apps.iter_mut().enumerate() {
        if several && matches!(app.screen, Screen::DriftList(_)) {
            app.screen = Screen::Table;
            app.back.clear();
            app.dirty = true;
            fleet.drift_list.get_or_insert_with(DriftListView::default);
            if fleet.focus == Some(i) {
                fleet.focus = None;
            }
        }
    }
    if let Some(i) = fleet.focus
        && apps
            .get(i)
            .is_none_or(|app| matches!(app.screen, Screen::Table) && app.prompt.is_none())
    {
        fleet.focus = None;
    }
}

/// Before a frame: while several contexts are watched, each table's filter matches its
/// context's name too (`/prod-eu`), as the CONTEXT column shows it; with one, it does not.
pub fn name_contexts(apps: &mut [&mut App]) {
    let several = apps.len() > 1;
    for app in apps.iter_mut() {
        let context = several.then(|| app.context.clone());
        app.table.set_context(context.as_deref());
    }
}

/// After a frame's messages: what a context other than the one shown said (an error, an accept's
/// result, a watch that failed) moves to the status line shown, named by its context, so that
/// it is not lost in a context whose status line is not on screen. The newest one wins, as
/// within one context.
pub fn gather_messages(fleet: &Fleet, apps: &mut [&mut App]) {
    let Some(last) = apps.len().checked_sub(1) else {
        return;
    };
    let shown = fleet.focus.unwrap_or(fleet.lead).min(last);
    for i in 0..apps.len() {
        if i == shown {
            continue;
        }
        if let Some(flash) = apps[i].flash.take() {
            let text = format!("{}: {}", apps[i].context, flash.text);
            let to = &mut *apps[shown];
            to.flash = Some(super::Flash {
                text,
                error: flash.error,
            });
            to.dirty = true;
        }
    }
}

/// A context's state in a word, and whether it is bad: its connection, then its watchers'.
pub fn state_of(link: &Link, app: &App) -> (&'static str, bool) {
    match link {
        Link::Connecting => ("connecting", false),
        Link::Unreachable(_) => ("unreachable", true),
        Link::Connected => match app.overall_health() {
            WatchHealth::Connected => ("connected", false),
            WatchHealth::Syncing => ("syncing", false),
            WatchHealth::Reconnecting { .. } => ("reconnecting", true),
            WatchHealth::Forbidden { .. } => ("forbidden", true),
        },
    }
}

/// Before a frame: a `:ctx` picker open in any context lists which contexts are watched and the
/// state of each (`links[i]` is the connection of `apps[i]`).
pub fn show_states(apps: &mut [&mut App], links: &[&Link]) {
    let open = apps.iter().any(
        |app| matches!(&app.screen, Screen::Pick(p) if p.kind == super::picker::PickKind::Context),
    );
    if !open {
        return;
    }
    let states: Vec<(String, &'static str, bool)> = apps
        .iter()
        .zip(links)
        .map(|(app, link)| {
            let (state, bad) = state_of(link, app);
            (app.context.clone(), state, bad)
        })
        .collect();
    for app in apps.iter_mut() {
        if let Screen::Pick(picker) = &mut app.screen
            && picker.kind == super::picker::PickKind::Context
            && picker.watched != states
        {
            picker.watched = states.clone();
            app.dirty = true;
        }
    }
}

/// A key on the fleet's `:drift` list: move, `esc` back to the table, `d`/`enter`, `a`, `r` on
/// the selected object in its own context (whose view then shows). `None` when the key is not
/// the list's (a prompt, help, quit).
fn drift_list_key(
    fleet: &mut Fleet,
    apps: &mut [&mut App],
    key: KeyEvent,
) -> Option<Vec<(usize, Command)>> {
    let view = fleet.drift_list.as_mut()?;
    let rows = {
        let shown: Vec<&App> = apps.iter().map(|a| &**a).collect();
        drift_rows(&shown)
    };
    let last = rows.len().saturating_sub(1);
    view.cursor = view.cursor.min(last);
    let page = apps.first().map_or(1, |a| a.table_height());
    match key.code {
        KeyCode::Esc => fleet.drift_list = None,
        KeyCode::Char('c') => {
            let (_, row) = rows.get(view.cursor)?.clone();
            return Some(open_compare(fleet, apps, row.key));
        }
        KeyCode::Char('d' | 'a' | 'r') | KeyCode::Enter => {
            let (i, row) = rows.get(view.cursor)?.clone();
            let app = &mut *apps[i];
            // The context's own list, on the same object, takes the key.
            let cursor = app
                .drift_rows()
                .iter()
                .position(|r| r.key == row.key)
                .unwrap_or(0);
            app.back.clear();
            app.screen = Screen::DriftList(Box::new(DriftListView { cursor, scroll: 0 }));
            let commands = update(app, Message::Key(key));
            fleet.lead = i;
            if !matches!(app.screen, Screen::DriftList(_)) {
                fleet.focus = Some(i);
            }
            settle(fleet, apps);
            return Some(commands.into_iter().map(|c| (i, c)).collect());
        }
        code if super::scroll::scroll_key(code, &mut view.cursor, last, page) => {
            if view.cursor < view.scroll {
                view.scroll = view.cursor;
            } else if view.cursor >= view.scroll + page {
                view.scroll = view.cursor + 1 - page;
            }
        }
        _ => return None,
    }
    Some(Vec::new())
}

/// A row's place in its context's table: its rank, then its key.
type Item = super::table::Place;

/// Merges runs sorted by place, one per context, into one order: ties (the same place in several
/// contexts) go to the context given first. `backward`: runs sorted the other way, merged into
/// the reverse of that order.
fn merge<'a, I: Iterator<Item = &'a Item>>(
    mut runs: Vec<I>,
    backward: bool,
) -> impl Iterator<Item = (usize, &'a Item)> {
    let mut heads: Vec<Option<&'a Item>> = runs.iter_mut().map(Iterator::next).collect();
    std::iter::from_fn(move || {
        let candidates = heads
            .iter()
            .enumerate()
            .filter_map(|(i, head)| head.map(|h| (i, h)));
        // `min_by` keeps the first of equals, `max_by` the last: the reverse of the same order.
        let (i, item) = if backward {
            candidates.max_by(|a, b| a.1.cmp(b.1))?
        } else {
            candidates.min_by(|a, b| a.1.cmp(b.1))?
        };
        heads[i] = runs[i].next();
        Some((i, item))
    })
}

/// Every row of every context's table, merged in display order: (context index, place).
fn ranked_rows<'a>(apps: &[&'a App]) -> impl Iterator<Item = (usize, &'a Item)> + use<'a> {
    let runs = apps
        .iter()
        .map(|app| app.table.ranked_in((Bound::Unbounded, Bound::Unbounded)))
        .collect();
    merge(runs, false)
}

/// The rows of every context's table, merged in display order: (context index, key).
pub fn rows<'a>(apps: &[&'a App]) -> impl Iterator<Item = (usize, &'a ObjectKey)> + use<'a> {
    ranked_rows(apps).map(|(i, item)| (i, &item.1.0))
}

/// Each context's rows before `item` of context `at` in the merged order (`before`), or from it
/// on: the same place in a context given earlier comes before the row, in a later one after it.
fn runs<'a>(
    apps: &[&'a App],
    at: usize,
    item: &'a Item,
    before: bool,
) -> Vec<impl DoubleEndedIterator<Item = &'a Item> + use<'a>> {
    apps.iter()
        .enumerate()
        .map(|(j, app)| {
            let range = match (before, j < at) {
                (true, true) => (Bound::Unbounded, Bound::Included(item)),
                (true, false) => (Bound::Unbounded, Bound::Excluded(item)),
                (false, true) => (Bound::Excluded(item), Bound::Unbounded),
                (false, false) => (Bound::Included(item), Bound::Unbounded),
            };
            app.table.ranked_in(range)
        })
        .collect()
}

/// The merged rows from `item` of context `at` on (it first), in display order.
fn rows_from<'a>(
    apps: &[&'a App],
    at: usize,
    item: &'a Item,
) -> impl Iterator<Item = (usize, &'a Item)> + use<'a> {
    merge(runs(apps, at, item, false), false)
}

/// The merged rows before `item` of context `at`, nearest first.
fn rows_before<'a>(
    apps: &[&'a App],
    at: usize,
    item: &'a Item,
) -> impl Iterator<Item = (usize, &'a Item)> + use<'a> {
    let runs = runs(apps, at, item, true)
        .into_iter()
        .map(Iterator::rev)
        .collect();
    merge(runs, true)
}

/// The index of `item` of context `at` in the merged table: the rows before it in each context
/// counted (no merge).
fn position(apps: &[&App], at: usize, item: &Item) -> usize {
    runs(apps, at, item, true)
        .into_iter()
        .map(Iterator::count)
        .sum()
}

/// How many rows the fleet's table shows.
pub fn len(apps: &[&App]) -> usize {
    apps.iter().map(|app| app.table.len()).sum()
}

impl Fleet {
    /// The selected row, found again among `apps`' rows (rows move as their contexts' watch
    /// events arrive), the scroll that keeps it on screen and the rows on screen; call before
    /// drawing. A frame costs a count of the rows before the selected one in each context and a
    /// merge of the rows on screen, not a merge of every row down to the selection.
    pub fn refresh(&mut self, apps: &[&App]) {
        self.count_drifted(apps);
        let total = len(apps);
        let height = apps.first().map_or(1, |app| app.table_height()).max(1);
        let found = self.selected_row.as_ref().and_then(|(i, key)| {
            let app = apps.get(*i)?;
            Some((*i, app.table.place_of(&app.cache, key)?))
        });
        let (at, item) = match found {
            Some((at, item)) => {
                self.selected = position(apps, at, item);
                (at, item)
            }
            // No row selected yet, or it went: the row now at the selected index.
            None => {
                self.selected = self.selected.min(total.saturating_sub(1));
                match ranked_rows(apps).nth(self.selected) {
                    Some(row) => row,
                    None => {
                        self.selected_row = None;
                        self.offset = 0;
                        self.window.clear();
                        return;
                    }
                }
            }
        };
        self.selected_row = Some((at, item.1.0.clone()));
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + height {
            self.offset = self.selected + 1 - height;
        }
        self.offset = self.offset.min(total.saturating_sub(height));
        let above = self.selected.saturating_sub(self.offset);
        // Into the last frame's window, whose room is kept: a still frame allocates none.
        self.window.clear();
        self.window.extend(
            rows_before(apps, at, item)
                .take(above)
                .map(|(i, item)| (i, item.1.0.clone())),
        );
        self.window.reverse();
        // A row or two more than the table's height: the drawing takes what fits.
        self.window.extend(
            rows_from(apps, at, item)
                .take(height + 2 - above)
                .map(|(i, item)| (i, item.1.0.clone())),
        );
    }

    /// The rows on screen from [`Self::offset`], as the last [`Self::refresh`] found them.
    pub fn window(&self) -> &[(usize, ObjectKey)] {
        &self.window
    }

    /// The selected row: its context's index and its key.
    pub fn selected_row(&self) -> Option<&(usize, ObjectKey)> {
        self.selected_row.as_ref()
    }

    fn move_by(&mut self, apps: &[&App], delta: isize) {
        let total = len(apps);
        if total == 0 {
            return;
        }
        self.selected = self.selected.saturating_add_signed(delta).min(total - 1);
        self.selected_row = rows(apps)
            .nth(self.selected)
            .map(|(i, key)| (i, key.clone()));
        self.refresh(apps);
    }

    /// The context at `index` stopped being watched: indices after it move down one.
    pub fn removed(&mut self, index: usize) {
        let shift = |i: usize| if i > index { i - 1 } else { i };
        self.focus = match self.focus {
            Some(i) if i == index => None,
            other => other.map(shift),
        };
        self.lead = if self.lead == index {
            0
        } else {
            shift(self.lead)
        };
        self.selected_row = match self.selected_row.take() {
            Some((i, _)) if i == index => None,
            Some((i, key)) => Some((shift(i), key)),
            None => None,
        };
    }
}

/// A key on the fleet: moves the fleet's selection, or goes to one context's app (the focused
/// one, else the lead while its prompt or help is open, else the selected row's). Returns the
/// commands of each context by index.
pub fn handle_key(
    fleet: &mut Fleet,
    apps: &mut [&mut App],
    key: KeyEvent,
) -> Vec<(usize, Command)> {
    if apps.is_empty() {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let quits = key.code == KeyCode::Char('q') || (ctrl && key.code == KeyCode::Char('c'));
        return if quits {
            vec![(0, Command::Quit)]
        } else {
            Vec::new()
        };
    }
    fleet.lead = fleet.lead.min(apps.len() - 1);
    let target = match fleet.focus {
        Some(i) if i < apps.len() => i,
        // One context: the key is its own, as when it is watched alone.
        _ if fleet.alone(apps.len()) => 0,
        _ => {
            let lead = &apps[fleet.lead];
            let busy = lead.prompt.is_some() || lead.help || !matches!(lead.screen, Screen::Table);
            if !busy
                && fleet.compare.is_some()
                && let Some(commands) = compare_key(fleet, apps, key)
            {
                return commands;
            }
            if !busy
                && fleet.drift_list.is_none()
                && key.code == KeyCode::Char('c')
                && key.modifiers.is_empty()
            {
                let shown: Vec<&App> = apps.iter().map(|a| &**a).collect();
                fleet.refresh(&shown);
                let Some((_, row)) = fleet.selected_row.clone() else {
                    return Vec::new();
                };
                return open_compare(fleet, apps, row);
            }
            if !busy
                && fleet.drift_list.is_some()
                && let Some(commands) = drift_list_key(fleet, apps, key)
            {
                return commands;
            }
            if !busy && fleet.drift_list.is_none() {
                let shown: Vec<&App> = apps.iter().map(|a| &**a).collect();
                if let Some(delta) = navigation(key, shown[0].table_height() as isize) {
                    fleet.move_by(&shown, delta);
                    // A key clears the message shown, as in one context.
                    for app in apps.iter_mut() {
                        app.flash = None;
                    }
                    return Vec::new();
                }
                fleet.refresh(&shown);
                if let Some((i, row)) = fleet.selected_row.clone() {
                    // The row's own table selects it, so that the key acts on it.
                    apps[i].table.select(row);
                    fleet.lead = i;
                }
            }
            fleet.lead
        }
    };
    let commands = update(&mut *apps[target], Message::Key(key));
    // The message shown (another context's, moved to this status line) goes with the key, as
    // in one context; one the key raised is the target's own.
    for (i, app) in apps.iter_mut().enumerate() {
        if i != target {
            app.flash = None;
        }
    }
    // One filter, sort and kind for the whole table.
    let (filter, sort, kind) = {
        let t = &apps[target].table;
        (t.filter.clone(), t.sort, t.kind)
    };
    for (i, app) in apps.iter_mut().enumerate() {
        if i != target
            && (app.table.filter != filter || app.table.sort != sort || app.table.kind != kind)
        {
            app.table.filter = filter.clone();
            app.table.sort = sort;
            app.table.kind = kind;
            app.table.mark_stale();
            app.dirty = true;
        }
    }
    let own_view = !matches!(apps[target].screen, Screen::Table);
    fleet.focus = own_view.then_some(target);
    fleet.lead = target;
    settle(fleet, apps);
    commands.into_iter().map(|c| (target, c)).collect()
}

/// `c`: compare `key` across every context watched; each reads it on its own connection (the
/// runtime sends [`Command::Compare`] to all of them). With one context, says what it needs.
fn open_compare(fleet: &mut Fleet, apps: &mut [&mut App], key: ObjectKey) -> Vec<(usize, Command)> {
    let lead = fleet.lead.min(apps.len().saturating_sub(1));
    if apps.len() < 2 {
        if let Some(app) = apps.get_mut(lead) {
            app.flash = Some(super::Flash {
                text: super::keys::COMPARE_NEEDS.to_owned(),
                error: false,
            });
            app.dirty = true;
        }
        return Vec::new();
    }
    // The apiVersion of its manifest in any context, else the group's usual one.
    let api_version = apps
        .iter()
        .find_map(|app| Some(app.manifests.as_ref()?.get(&key)?.api_version.to_string()))
        .or_else(|| match key.group.as_str() {
            "" => Some("v1".to_owned()),
            "apps" => Some("apps/v1".to_owned()),
            _ => None,
        });
    let Some(api_version) = api_version else {
        if let Some(app) = apps.get_mut(lead) {
            app.flash = Some(super::Flash {
                text: format!(
                    "cannot compare {key}: no context has a manifest that gives its apiVersion"
                ),
                error: true,
            });
            app.dirty = true;
        }
        return Vec::new();
    };
    for app in apps.iter_mut() {
        app.flash = None;
    }
    let contexts = apps.iter().map(|app| app.context.clone()).collect();
    fleet.compare = Some(CompareView::new(key.clone(), api_version.clone(), contexts));
    vec![(lead, Command::Compare { key, api_version })]
}

/// A key while the compare view shows: scroll, `esc` back, `ctrl-r` read again. `None` for the
/// fleet's usual keys (`q`, `?`, `:`, ctrl-c, ctrl-z); other keys do nothing there.
fn compare_key(
    fleet: &mut Fleet,
    apps: &mut [&mut App],
    key: KeyEvent,
) -> Option<Vec<(usize, Command)>> {
    let page = apps.first().map_or(1, |a| a.table_height());
    let view = fleet.compare.as_mut()?;
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let answer = view.key(key, page);
    if answer != CompareKey::Pass {
        // A key clears the message shown, as on the table.
        for app in apps.iter_mut() {
            app.flash = None;
        }
    }
    match answer {
        CompareKey::Done => Some(Vec::new()),
        CompareKey::Close => {
            fleet.compare = None;
            Some(Vec::new())
        }
        CompareKey::Reread => {
            view.reread();
            let command = Command::Compare {
                key: view.key.clone(),
                api_version: view.api_version.clone(),
            };
            Some(vec![(fleet.lead, command)])
        }
        CompareKey::Pass if ctrl || matches!(key.code, KeyCode::Char('q' | '?' | ':')) => None,
        CompareKey::Pass => Some(Vec::new()),
    }
}

/// How far a key moves the fleet's selection, if it is a moving key (`page` rows a page).
fn navigation(key: KeyEvent, page: isize) -> Option<isize> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    Some(match key.code {
        KeyCode::Char('j') | KeyCode::Down => 1,
        KeyCode::Char('k') | KeyCode::Up => -1,
        KeyCode::Char('g') | KeyCode::Home => isize::MIN,
        KeyCode::Char('G') | KeyCode::End => isize::MAX,
        KeyCode::PageDown => page,
        KeyCode::Char('f') if ctrl => page,
        KeyCode::PageUp => -page,
        KeyCode::Char('b') if ctrl => -page,
        _ => return None,
    })
}

#[cfg(test)]
#[path = "fleet_tests.rs"]
mod tests;
