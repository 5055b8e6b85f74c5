//! The `r` revert view, as decisions only: which rows may be reverted (and why not), the
//! server-side dry run asked of the runtime, the preview shown, the confirmation, and the outcome
//! (the detail view of the Deployment, to watch the rollout back). Every answer carries the id of
//! the view that asked, so an answer for a view already closed is dropped.
use crate::manifest::ObjectKey;
use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Command, DriftSummary, Flash, Screen};
use crate::cluster::revert::{Preview, RevertError};
use crate::manifest::ManifestObject;
use crate::revert::plan::PreviewLine;

/// A field added live that the revert removes, as shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemovalShown {
    /// `spec.template.spec.containers[name=web].env[name=DEBUG]`.
    pub label: String,
    pub manager: Option<String>,
    /// What the revert does to it: `removes … (added live by …)`.
    pub text: String,
}

/// What the dry run says a revert will do, in the form the screen needs (the runtime keeps the
/// [`Preview`] itself, to execute exactly what was shown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewShown {
    /// `deployment/shop/web`.
    pub object: String,
    /// Live now → live after, as a unified diff.
    pub lines: Vec<PreviewLine>,
    pub removals: Vec<RemovalShown>,
    /// An autoscaler owns `spec.replicas`: the revert leaves them alone.
    pub autoscaled: bool,
    /// Why a hand-scaled `spec.replicas` is left as it is (an autoscaler scales the object).
    pub replicas_note: Option<String>,
    /// The live object already is what the revert would make it.
    pub changes_nothing: bool,
    /// Drifted fields the revert leaves as they are live, each said (`leaves … as it is live:
    /// git already holds this value …`).
    pub kept: Vec<String>,
}

impl PreviewShown {
    pub fn from_preview(preview: &Preview) -> PreviewShown {
        PreviewShown {
            object: preview.object.clone(),
            lines: preview.lines(),
            removals: preview
                .removals
                .iter()
                .map(|r| RemovalShown {
                    label: r.label(),
                    manager: r.manager.clone(),
                    text: r.preview_text(),
                })
                .collect(),
            autoscaled: preview.autoscaled,
            replicas_note: preview.replicas_note.clone(),
            changes_nothing: preview.changes_nothing(),
            kept: preview.kept.iter().map(|k| k.preview_text()).collect(),
        }
    }
}

/// What a revert did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevertDone {
    /// The object reverted.
    pub key: ObjectKey,
    /// Labels of the fields added live that were removed.
    pub removed: Vec<String>,
    /// Labels of fields planned for removal that someone else changed meanwhile: left as they are.
    pub kept: Vec<String>,
}

/// Where the revert view is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevertStage {
    /// The server-side dry run is running.
    DryRun,
    /// The preview, waiting for `y`/`enter` or `esc`.
    Ready(PreviewShown),
    /// Confirmed; the apply and the removal are running.
    Reverting(PreviewShown),
    /// The dry run or the revert failed, with the error as the headless command words it.
    Failed(String),
}

/// The `r` view of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevertView {
    /// Answers for another id belong to a view closed since.
    pub id: u64,
    pub key: ObjectKey,
    /// Where the manifest is: `path:line`.
    pub place: String,
    pub stage: RevertStage,
    /// First preview line on screen.
    pub scroll: usize,
}

/// What a revert applies, as the headless command and the view say it: `path:line` of a
/// manifest; for a kustomize root's object, the root that renders it (what is applied is its
/// rendering, not the resource file it starts from), then that file.
pub fn place(manifest: &ManifestObject) -> String {
    let file = format!("{}:{}", manifest.file.display(), manifest.line);
    match &manifest.rendered {
        Some(kustomization) => format!("what {} renders, from {file}", kustomization.display()),
        None => file,
    }
}

/// The headless wording for an object whose revert would change nothing.
pub fn nothing_to_revert(object: &str, place: &str) -> String {
    format!("{object} is in sync with {place}: nothing to revert")
}

/// The wording for a revert that would change nothing but leaves a hand-scaled `spec.replicas`
/// to the autoscaler (`note`: why, see [`crate::cluster::revert::Preview::replicas_note`]).
pub fn only_replicas_left(object: &str, place: &str, note: &str) -> String {
    format!("{object} differs from {place} only in spec.replicas, and the revert {note}")
}

/// The headless wording for an object without a manifest.
pub fn no_manifest(object: &str, root: &std::path::Path) -> String {
    format!(
        "no manifest for {object} under \"{}\" (pass --manifests DIR, or -n NS for another namespace)",
        root.display()
    )
}

/// A field the revert removes, as the headless command and the view list it.
/// The flash after a revert.
pub fn reverted_text(object: &str, place: &str) -> String {
    format!("reverted {object} to the manifest ({place})")
}

impl App {
    /// `r` on `key`: open the revert view and ask for the dry run, or say why there is nothing to
    /// revert. Read-only: nothing happens (the key is not offered).
    pub fn open_revert(&mut self, key: ObjectKey) -> Vec<Command> {
        if self.readonly {
            return Vec::new();
        }
        let object = key.clone();
        let refuse = |app: &mut App, text: String| {
            app.flash = Some(Flash { text, error: true });
            Vec::new()
        };
        let Some(index) = &self.manifests else {
            return refuse(self, "the manifests are still loading".to_owned());
        };
        let Some(manifest) = index.get(&object) else {
            let text = no_manifest(&object.to_string(), &index.root);
            let text = super::accept::with_sparse_hint(text, Some(index.as_ref()));
            return refuse(self, text);
        };
        let place = place(manifest);
        // In sync as last seen; while a watch reconnects that may be stale, so the server is
        // asked (its dry run answers, or says it cannot be reached).
        let seen = !matches!(
            self.overall_health(),
            crate::cluster::watch::WatchHealth::Reconnecting { .. }
        );
        match self.drift_of_object(&key) {
            DriftSummary::InSync if seen => {
                let text = nothing_to_revert(&object.to_string(), &place);
                self.flash = Some(Flash { text, error: false });
                return Vec::new();
            }
            DriftSummary::Missing => {
                let text = RevertError::missing(manifest).to_string();
                return refuse(self, text);
            }
            _ => {}
        }
        self.revert_seq += 1;
        let id = self.revert_seq;
        let view = Screen::Revert(Box::new(RevertView {
            id,
            key: key.clone(),
            place,
            stage: RevertStage::DryRun,
            scroll: 0,
        }));
        // A revert previewed again replaces its view; it goes back where that one would.
        match self.screen {
            Screen::Revert(_) => self.screen = view,
            _ => self.open_over(view),
        }
        vec![Command::PreviewRevert { id, key }]
    }

    /// The dry run answered: show it, if its view is still open.
    pub fn revert_previewed(
        &mut self,
        id: u64,
        result: Result<PreviewShown, String>,
    ) -> Vec<Command> {
        let Screen::Revert(view) = &mut self.screen else {
            return Vec::new();
        };
        if view.id != id || view.stage != RevertStage::DryRun {
            return Vec::new();
        }
        view.stage = match result {
            Ok(preview) => RevertStage::Ready(preview),
            Err(error) => RevertStage::Failed(error),
        };
        view.scroll = 0;
        self.dirty = true;
        Vec::new()
    }

    /// The revert answered. Done: the Deployment's detail opens, to watch the rollout back. The
    /// outcome is flashed even when its view was closed meanwhile: it happened.
    pub fn reverted(&mut self, id: u64, result: Result<RevertDone, String>) -> Vec<Command> {
        self.dirty = true;
        let open = match &self.screen {
            Screen::Revert(view) if view.id == id => Some(view.key.clone()),
            _ => None,
        };
        match result {
            Err(error) => {
                if let Screen::Revert(view) = &mut self.screen
                    && open.is_some()
                {
                    view.stage = RevertStage::Failed(error);
                    view.scroll = 0;
                } else {
                    self.flash = Some(Flash {
                        text: error,
                        error: true,
                    });
                }
                Vec::new()
            }
            Ok(done) => {
                let object = done.key.clone();
                let place = self
                    .manifests
                    .as_ref()
                    .and_then(|index| index.get(&object))
                    .map(place)
                    .unwrap_or_else(|| "its manifest".to_owned());
                let mut text = reverted_text(&object.to_string(), &place);
                if !done.removed.is_empty() {
                    text.push_str(&format!("; removed {}", done.removed.join(", ")));
                }
                let error = !done.kept.is_empty();
                if error {
                    text.push_str(&format!(
                        "; kept {}: someone else changed it after the preview (press r to see it)",
                        done.kept.join(", ")
                    ));
                }
                // A Deployment's detail opens, to watch its rollout back; another kind's view
                // closes to where it was opened from.
                let commands = match open.clone().filter(Self::is_row_kind) {
                    Some(row) => self.open_detail(row),
                    None if open.is_some() => {
                        if let Screen::Revert(_) = &self.screen {
                            self.go_back();
                        }
                        // Back in the diff the revert was made from: it shows the object as it
                        // is now, not as it was before the revert.
                        if let Screen::Diff(view) = &mut self.screen {
                            view.content = super::diff::DiffContent::Loading;
                        }
                        self.refetch_diff()
                    }
                    None => Vec::new(),
                };
                // After open_detail, which leaves the flash alone.
                self.flash = Some(Flash { text, error });
                commands
            }
        }
    }
}

/// Keys of the revert view: confirm, cancel, scroll, preview again after a failure.
pub fn revert_key(app: &mut App, key: KeyEvent) -> Vec<Command> {
    let page = app.table_height();
    let Screen::Revert(view) = &mut app.screen else {
        return Vec::new();
    };
    let last = match &view.stage {
        RevertStage::Ready(p) | RevertStage::Reverting(p) => p.lines.len().saturating_sub(1),
        _ => 0,
    };
    match key.code {
        KeyCode::Esc => app.go_back(),
        KeyCode::Char('q') => return vec![Command::Quit],
        KeyCode::Char('?') => app.help = true,
        KeyCode::Char('y') | KeyCode::Enter => {
            if let RevertStage::Ready(preview) = &view.stage
                && !preview.changes_nothing
            {
                view.stage = RevertStage::Reverting(preview.clone());
                return vec![Command::Revert {
                    id: view.id,
                    key: view.key.clone(),
                }];
            }
        }
        KeyCode::Char('r') if matches!(view.stage, RevertStage::Failed(_)) => {
            let key = view.key.clone();
            return app.open_revert(key);
        }
        code => {
            super::scroll::scroll_key(code, &mut view.scroll, last, page);
        }
    }
    Vec::new()
}
