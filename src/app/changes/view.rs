//! The `:changes` view: what it is narrowed to, its rows, its keys, and the ring's notes.
use super::{Changes, Line};
use crate::app::{App, Command, Screen};
use crate::manifest::ObjectKey;
use crossterm::event::{KeyCode, KeyEvent};

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

    /// `:changes`: open the timeline (where it was left, when a view opened from it shows).
    pub fn open_changes(&mut self) -> Vec<Command> {
        let view = self.back.iter().rev().find_map(|screen| match screen {
            Screen::Changes(view) => Some(view.clone()),
            _ => None,
        });
        let commands = self.close_detail();
        self.back.clear();
        self.changes.read_all();
        self.screen = Screen::Changes(view.unwrap_or_default());
        self.dirty = true;
        commands
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
            .map(|l| (ObjectKey::clone(&l.key), l.field().cloned()));
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
            app.back.clear();
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
                // The view's place is kept under the diff.
                app.back.push(app.screen.clone());
                return app.open_diff_at(key, field);
            }
        }
        KeyCode::Char('a') if !app.readonly => {
            if let Some((key, _)) = selected {
                app.back.push(app.screen.clone());
                let commands = app.open_accept(key, false);
                if !matches!(app.screen, Screen::Accept(_)) {
                    // Nothing to accept: the view stays, with the reason in the status bar.
                    app.back.pop();
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
            if crate::app::scroll::scroll_key(code, &mut view.cursor, last, page) {
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
