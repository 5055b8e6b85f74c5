//! The fleet's compare view (`c` on a row of several contexts' table or `:drift`): one object as
//! every watched cluster has it — the fields that differ, each cluster's value with its manager
//! and time, and which clusters' manifests agree — as `kdrift compare` prints it
//! ([`crate::drift::fleet`]). Each context reads the object on its own connection
//! ([`Command::Compare`](super::Command::Compare)); the view fills in as the answers arrive, so a
//! slow or unreachable cluster holds up only its own line.
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::drift::fleet::{ColumnState, Compared, LineKind, Reading, compare_readings};
use crate::manifest::ObjectKey;

/// Where one context's reading stands.
#[derive(Debug, Clone)]
pub enum Column {
    Reading,
    Read(Box<Reading>),
    Failed(String),
}

/// The compare view of one object over the contexts watched when it opened.
#[derive(Debug, Clone)]
pub struct CompareView {
    pub key: ObjectKey,
    /// The `apiVersion` each cluster is asked in.
    pub api_version: String,
    /// Each context watched, in the fleet's order, with its reading.
    pub columns: Vec<(String, Column)>,
    /// The comparison, once every context answered.
    compared: Option<Compared>,
    pub scroll: usize,
}

/// What a key on the compare view asks of the fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareKey {
    /// Handled (moved, or not the view's).
    Done,
    /// `esc`: back to the table or `:drift`.
    Close,
    /// `ctrl-r`: read every context again.
    Reread,
    /// Not the view's (`q`, `?`, `:`): the fleet's usual handling.
    Pass,
}

impl CompareView {
    pub fn new(key: ObjectKey, api_version: String, contexts: Vec<String>) -> CompareView {
        CompareView {
            key,
            api_version,
            columns: contexts.into_iter().map(|c| (c, Column::Reading)).collect(),
            compared: None,
            scroll: 0,
        }
    }

    /// Every context is to be read again (`ctrl-r`): their lines say `reading…` until then.
    pub fn reread(&mut self) {
        for (_, column) in &mut self.columns {
            *column = Column::Reading;
        }
        self.compared = None;
    }

    /// The answer of `context` for `key` (an answer for another object, or from a context not
    /// compared, is dropped).
    pub fn read(&mut self, context: &str, key: &ObjectKey, result: Result<Box<Reading>, String>) {
        if *key != self.key {
            return;
        }
        let Some((_, column)) = self.columns.iter_mut().find(|(c, _)| c == context) else {
            return;
        };
        *column = match result {
            Ok(reading) => Column::Read(reading),
            Err(e) => Column::Failed(e),
        };
        let contexts: Vec<&str> = self.columns.iter().map(|(c, _)| c.as_str()).collect();
        let readings: Vec<Option<&Reading>> = self
            .columns
            .iter()
            .map(|(_, column)| match column {
                Column::Read(reading) => Some(&**reading),
                _ => None,
            })
            .collect();
        self.compared = compare_readings(&contexts, &readings);
    }

    /// Whether every context answered.
    pub fn complete(&self) -> bool {
        !self
            .columns
            .iter()
            .any(|(_, column)| matches!(column, Column::Reading))
    }

    /// How many fields differ, once known.
    pub fn differ(&self) -> Option<usize> {
        self.compared.as_ref().map(|c| c.found.len())
    }

    /// The view's lines, as `kdrift compare` words them.
    pub fn lines(&self, now: jiff::Timestamp) -> Vec<(LineKind, String)> {
        let columns: Vec<(&str, ColumnState<'_>)> = self
            .columns
            .iter()
            .map(|(context, column)| {
                let state = match column {
                    Column::Reading => ColumnState::Reading,
                    Column::Read(reading) => ColumnState::Read(reading),
                    Column::Failed(e) => ColumnState::Failed(e),
                };
                (context.as_str(), state)
            })
            .collect();
        crate::drift::fleet::comparison_lines(&columns, self.compared.as_ref(), now)
    }

    /// A key while the view shows; `page` rows a page.
    pub fn key(&mut self, key: KeyEvent, page: usize) -> CompareKey {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        // The lines' count does not depend on the time they are worded at.
        let last = self
            .lines(jiff::Timestamp::UNIX_EPOCH)
            .len()
            .saturating_sub(page.max(1));
        self.scroll = self.scroll.min(last);
        match key.code {
            KeyCode::Esc => CompareKey::Close,
            KeyCode::Char('r') if ctrl => CompareKey::Reread,
            code if super::scroll::scroll_key(code, &mut self.scroll, last, page) => {
                CompareKey::Done
            }
            _ => CompareKey::Pass,
        }
    }
}
