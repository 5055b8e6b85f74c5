//! The `:drift` view, as k9s shows a resource view: every object of any kind that is drifted,
//! missing or in error — kind, namespace, name, its drift, the newest writer of its drifted
//! fields and when — sorted by kind, namespace and name; `d`, `a` and `r` act on the selected one,
//! and the views they open come back here.
use crate::manifest::ObjectKey;
use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Command, DriftSummary, Screen};
use crate::drift::Attribution;

/// Where the list is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DriftListView {
    pub cursor: usize,
    /// First row on screen.
    pub scroll: usize,
}

/// One row of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriftRow {
    pub key: ObjectKey,
    pub summary: DriftSummary,
    pub newest: Option<Attribution>,
}

/// Whether a drift needs the operator: drifted fields, missing, or not comparable.
pub fn needs_attention(summary: &DriftSummary) -> bool {
    matches!(
        summary,
        DriftSummary::Fields(_) | DriftSummary::Missing | DriftSummary::Error(_)
    )
}

impl App {
    /// Every object that is drifted, missing or in error, of every kind, in order.
    pub fn drift_rows(&self) -> Vec<DriftRow> {
        let mut rows: Vec<DriftRow> = self
            .ledger
            .iter()
            .filter(|(_, entry)| needs_attention(&entry.summary))
            .map(|(key, entry)| DriftRow {
                key: key.clone(),
                summary: entry.summary.clone(),
                newest: entry.newest.as_deref().cloned(),
            })
            .collect();
        rows.sort_by(|a, b| {
            (&a.key.kind, &a.key.namespace, &a.key.name).cmp(&(
                &b.key.kind,
                &b.key.namespace,
                &b.key.name,
            ))
        });
        rows
    }

    /// How many objects of every kind are drifted or missing (the status bar's count).
    pub fn drifted_count(&self) -> usize {
        let counts =
            |s: &DriftSummary| matches!(s, DriftSummary::Fields(_) | DriftSummary::Missing);
        self.ledger
            .iter()
            .filter(|(_, e)| counts(&e.summary))
            .count()
    }

    /// `:drift`: open the list (where it was left, when a view opened from it shows).
    pub fn open_drift_list(&mut self) -> Vec<Command> {
        let view = self.back.iter().rev().find_map(|screen| match screen {
            Screen::DriftList(view) => Some(view.clone()),
            _ => None,
        });
        let commands = self.close_detail();
        self.back.clear();
        self.screen = Screen::DriftList(view.unwrap_or_default());
        self.dirty = true;
        commands
    }
}

/// Keys of the `:drift` view: move, `d`/`enter` diff, `a` accept, `r` revert, `esc` back.
pub fn drift_list_key(app: &mut App, key: KeyEvent) -> Vec<Command> {
    let rows = app.drift_rows();
    let page = app.table_height();
    let Screen::DriftList(view) = &mut app.screen else {
        return Vec::new();
    };
    let last = rows.len().saturating_sub(1);
    view.cursor = view.cursor.min(last);
    let selected = rows.get(view.cursor).map(|r| r.key.clone());
    match key.code {
        KeyCode::Esc => {
            app.screen = Screen::Table;
            app.back.clear();
        }
        KeyCode::Char('d') | KeyCode::Enter => {
            if let Some(key) = selected {
                // The list's place is kept under the view.
                app.back.push(app.screen.clone());
                return app.open_diff(key);
            }
        }
        KeyCode::Char('a') if !app.readonly => {
            if let Some(key) = selected {
                app.back.push(app.screen.clone());
                let commands = app.open_accept(key, false);
                if !matches!(app.screen, Screen::Accept(_)) {
                    // Nothing to accept: the list stays, with the reason in the status bar.
                    app.back.pop();
                }
                return commands;
            }
        }
        KeyCode::Char('r') if !app.readonly => {
            if let Some(key) = selected {
                return app.open_revert(key);
            }
        }
        code => {
            if super::scroll::scroll_key(code, &mut view.cursor, last, page) {
                // Keep the cursor on screen.
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
