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

use super::{App, Command, Message, Screen, update};
use crate::cluster::rows::ObjectKey;

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
}

/// The rows of every context's table, merged in display order: (context index, key).
pub fn rows<'a>(apps: &[&'a App]) -> impl Iterator<Item = (usize, &'a ObjectKey)> + use<'a> {
    let mut tables: Vec<_> = apps.iter().map(|app| app.table.ranked()).collect();
    let mut heads: Vec<_> = tables.iter_mut().map(Iterator::next).collect();
    std::iter::from_fn(move || {
        // The first of the smallest: ties go to the context given first.
        let (i, item) = heads
            .iter()
            .enumerate()
            .filter_map(|(i, head)| head.map(|h| (i, h)))
            .min_by(|a, b| a.1.cmp(b.1))?;
        heads[i] = tables[i].next();
        Some((i, &item.1))
    })
}

/// How many rows the fleet's table shows.
pub fn len(apps: &[&App]) -> usize {
    apps.iter().map(|app| app.table.len()).sum()
}

impl Fleet {
    /// The selected row, found again among `apps`' rows (rows move as their contexts' watch
    /// events arrive), and the scroll that keeps it on screen; call before drawing.
    pub fn refresh(&mut self, apps: &[&App]) {
        let total = len(apps);
        if let Some(row) = &self.selected_row
            && let Some(at) = rows(apps).position(|(i, key)| i == row.0 && *key == row.1)
        {
            self.selected = at;
        }
        self.selected = self.selected.min(total.saturating_sub(1));
        self.selected_row = rows(apps)
            .nth(self.selected)
            .map(|(i, key)| (i, key.clone()));
        let height = apps.first().map_or(1, |app| app.table_height()).max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + height {
            self.offset = self.selected + 1 - height;
        }
        self.offset = self.offset.min(total.saturating_sub(height));
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
        _ => {
            let lead = &apps[fleet.lead];
            let busy = lead.prompt.is_some() || lead.help || !matches!(lead.screen, Screen::Table);
            if !busy {
                let shown: Vec<&App> = apps.iter().map(|a| &**a).collect();
                if let Some(delta) = navigation(key, shown[0].table_height() as isize) {
                    fleet.move_by(&shown, delta);
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
    commands.into_iter().map(|c| (target, c)).collect()
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
