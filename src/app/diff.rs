//! The `d` diff view, as decisions only: opening it asks the runtime for the whole live object,
//! the answer is compared with the manifest (a release's object with git's chart render too) and
//! drawn as an annotated diff; keys scroll, move between drifted fields and fetch again.
use crate::manifest::ObjectKey;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{App, Command, Screen};
use crate::cluster::live::FetchedObject;
use crate::drift::check::compare_in;
use crate::drift::diff::{DiffLine, diff_lines};
use crate::drift::{Attribution, Class};

/// Lines of context around each change in the diff view.
const DIFF_CONTEXT: usize = 3;

/// What the diff view shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffContent {
    /// The whole object is being fetched.
    Loading,
    /// The diff lines and, for each drift item, its class and attribution (notes are written at
    /// drawing time, so that ages stay current).
    Ready {
        lines: Vec<DiffLine>,
        items: Vec<(Class, Attribution)>,
        /// Where the manifest is: `path:line`.
        place: String,
    },
    /// Nothing to compare, with the reason (no manifest, not in the cluster, fetch failed).
    Unavailable(String),
}

/// The `d` view of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffView {
    pub key: ObjectKey,
    pub content: DiffContent,
    /// First line on screen.
    pub scroll: usize,
    /// The field to show first when the diff arrives (opened from a `:changes` line), if it
    /// is drifted.
    pub focus: Option<crate::managed_fields::FieldPath>,
}

impl DiffView {
    /// Line indexes where a drifted field's lines start, in order.
    pub fn field_starts(&self) -> Vec<usize> {
        let DiffContent::Ready { lines, .. } = &self.content else {
            return Vec::new();
        };
        let mut starts = Vec::new();
        let mut previous = None;
        for (at, line) in lines.iter().enumerate() {
            if line.item.is_some() && line.item != previous {
                starts.push(at);
            }
            previous = line.item;
        }
        starts
    }

    fn line_count(&self) -> usize {
        match &self.content {
            DiffContent::Ready { lines, .. } => lines.len(),
            _ => 0,
        }
    }
}

impl App {
    /// `d`: open the diff of `key`, fetching its whole live object.
    pub fn open_diff(&mut self, key: ObjectKey) -> Vec<Command> {
        self.open_diff_at(key, None)
    }

    /// Open the diff of `key` scrolled to the drifted field at or around `focus`, once it
    /// arrives (the top when that field is not drifted).
    pub fn open_diff_at(
        &mut self,
        key: ObjectKey,
        focus: Option<crate::managed_fields::FieldPath>,
    ) -> Vec<Command> {
        let manifest = self.manifests.as_ref().map(|i| i.get(&key));
        let (content, commands) = match manifest {
            None => (
                DiffContent::Unavailable("the manifests are still loading".to_owned()),
                Vec::new(),
            ),
            Some(None) => (
                DiffContent::Unavailable(format!(
                    "no manifest for {} \"{}\" in \"{}\" under the manifests folder (unmanaged)",
                    key.kind, key.name, key.namespace
                )),
                Vec::new(),
            ),
            Some(Some(manifest)) => (
                DiffContent::Loading,
                vec![Command::FetchDiff(
                    key.clone(),
                    manifest.api_version.to_string(),
                )],
            ),
        };
        self.screen = Screen::Diff(Box::new(DiffView {
            key,
            content,
            scroll: 0,
            focus,
        }));
        commands
    }

    /// Fetch the open diff's live object again (ctrl-r, or back from a revert made from it):
    /// the diff on screen is replaced when it arrives.
    pub fn refetch_diff(&mut self) -> Vec<Command> {
        let Screen::Diff(view) = &self.screen else {
            return Vec::new();
        };
        let Some(manifest) = self.manifests.as_ref().and_then(|i| i.get(&view.key)) else {
            return Vec::new();
        };
        vec![Command::FetchDiff(
            view.key.clone(),
            manifest.api_version.to_string(),
        )]
    }

    /// The whole live object of the open diff arrived: compare, draw, drop.
    pub fn diff_fetched(&mut self, (key, result): FetchedObject) {
        let Screen::Diff(view) = &self.screen else {
            return;
        };
        if view.key != key {
            return;
        }
        let index = self.manifests.as_ref();
        let manifest = index.and_then(|index| Some((index.get(&key)?, index)));
        // The first diff line of the drift item at or around the focus (a `:changes` line's field).
        let mut focus_at = None;
        let content = match (manifest, result) {
            (None, _) => DiffContent::Unavailable("the manifest is gone".to_owned()),
            (Some(_), Err(e)) => DiffContent::Unavailable(e),
            (Some((manifest, _)), Ok(None)) => DiffContent::Unavailable(format!(
                "missing: {}:{} defines it, the cluster does not have it",
                manifest.file.display(),
                manifest.line
            )),
            (Some((manifest, manifests)), Ok(Some(live))) => {
                let drift = compare_in(manifests, manifest, &live);
                let place = format!("{}:{}", manifest.file.display(), manifest.line);
                let body = manifest.body.to_value();
                let mut lines = diff_lines(&body, &drift, &place, self.now, DIFF_CONTEXT);
                if let Some(sources) =
                    index.and_then(|index| crate::drift::diff::sources_of(index, manifest, &drift))
                {
                    crate::drift::diff::name_sources(&mut lines, &sources);
                }
                crate::drift::diff::place_hunks(
                    index.map(|i| i.as_ref()),
                    manifest,
                    &drift,
                    &mut lines,
                );
                let items = drift
                    .items
                    .iter()
                    .map(|i| (i.class, i.attribution.clone()))
                    .collect();
                if let Some(focus) = &view.focus {
                    let item = drift.items.iter().position(|i| {
                        let path = crate::drift::owners::field_path(&i.path);
                        path.starts_with(focus) || focus.starts_with(&path)
                    });
                    focus_at = item.and_then(|n| lines.iter().position(|l| l.item == Some(n)));
                }
                self.set_object_drift(&key, &drift);
                DiffContent::Ready {
                    lines,
                    items,
                    place,
                }
            }
        };
        if let Screen::Diff(view) = &mut self.screen {
            view.content = content;
            // A refresh keeps the place, as far as the new diff reaches; the focus is shown
            // once, with two lines above it for context.
            if let (Some(at), Some(_)) = (focus_at, view.focus.take()) {
                view.scroll = at.saturating_sub(2);
            }
            view.scroll = view.scroll.min(view.line_count().saturating_sub(1));
        }
        self.dirty = true;
    }
}

/// Keys of the diff view: scroll, move between drifted fields, refresh (ctrl-r), back.
pub fn diff_key(app: &mut App, key: KeyEvent) -> Vec<Command> {
    let page = app.table_height();
    let Screen::Diff(view) = &mut app.screen else {
        return Vec::new();
    };
    let last = view.line_count().saturating_sub(1);
    let starts = view.field_starts();
    match key.code {
        KeyCode::Esc => app.go_back(),
        // The field shown at the top is the current one: keep two lines above it for context.
        KeyCode::Char('n') | KeyCode::Char(']') => {
            if let Some(next) = starts.iter().find(|s| s.saturating_sub(2) > view.scroll) {
                view.scroll = next.saturating_sub(2);
            }
        }
        KeyCode::Char('N') | KeyCode::Char('[') => {
            if let Some(prev) = starts
                .iter()
                .rev()
                .find(|s| s.saturating_sub(2) < view.scroll)
            {
                view.scroll = prev.saturating_sub(2);
            }
        }
        // `r` reverts (keys.rs); ctrl-r fetches again, as k9s refreshes.
        KeyCode::Char('r')
            if key.modifiers.contains(KeyModifiers::CONTROL)
                && view.content != DiffContent::Loading
                && app.manifests.is_some() =>
        {
            return app.refetch_diff();
        }
        code => {
            super::scroll::scroll_key(code, &mut view.scroll, last, page);
        }
    }
    Vec::new()
}
