//! The accept view as decisions only: `a` on a drifted row (or in its diff) asks the runtime for
//! the whole live object and the manifest file as it is on disk; the view lists the fields to
//! accept with checkboxes and the exact file diff that will be written, recomputed (purely, from
//! the text read) as fields are toggled; `enter` asks the runtime to write and commit, through
//! the same [`crate::accept`] sequence as `kdrift accept`.
use crate::manifest::ObjectKey;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Command, DriftSummary, Flash, Screen};
use crate::accept::{self, CommitPlan};
use crate::drift::{DriftItem, LiveObject, ObjectStatus, compare};
use crate::manifest::Config;
use crate::manifest::edit::{ContentHash, PreparedEdit};

/// A manifest file as the runtime read it for the accept view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileText {
    pub path: Arc<Path>,
    pub text: Arc<str>,
    /// The hash of the bytes read: the write refuses if the file no longer has them.
    pub hash: ContentHash,
}

/// Where a commit would go, as git says before anything is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitState {
    NotARepository,
    Repository {
        /// The current branch, `None` on a detached HEAD.
        branch: Option<String>,
        /// The manifest file has uncommitted changes (the accept will be refused).
        dirty: bool,
    },
    /// git could not be asked; the reason.
    Unknown(String),
}

/// What the runtime found for `Command::PrepareAccept`.
#[derive(Debug, Clone)]
pub struct AcceptFetched {
    pub key: ObjectKey,
    pub live: Result<Option<Box<LiveObject>>, String>,
    pub file: Result<FileText, String>,
    pub git: GitState,
    /// For a kustomize root's object, the other files its root reads, as read.
    pub others: Vec<FileText>,
    /// For a Helm release's object, the accept into its chart's values file as planned and
    /// proved (`file` is that values file).
    pub chart: Option<ChartPlan>,
}

/// An accept into a chart's values file, planned and proved by rendering (off the loop: helm
/// runs once per candidate value) for the fields `only` names, every field offered when `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartPlan {
    pub only: Option<Vec<String>>,
    /// The edit and the notes of the proof (which value maps to which field), or why none.
    pub planned: Result<(PreparedEdit, Vec<String>), String>,
}

/// The manifest index an accept into a kustomize tree is planned and proved with; compared by
/// identity (it is the app's own).
#[derive(Debug, Clone)]
pub struct SharedIndex(pub Arc<crate::manifest::ManifestIndex>);

impl PartialEq for SharedIndex {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SharedIndex {}

/// Everything the runtime needs to write and commit (`Command::Accept`).
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptRequest {
    /// The object, to fetch the live object again (in its manifest's `api_version`).
    pub key: ObjectKey,
    pub api_version: String,
    pub root: PathBuf,
    pub default_namespace: String,
    pub config: Config,
    pub prepared: PreparedEdit,
    /// Further files the accept writes (a kustomize tree's overlay and patch): one commit.
    pub more: Vec<PreparedEdit>,
    /// For a kustomize root's object: the index to prove the edits by rendering with.
    pub kustomize: Option<SharedIndex>,
    /// For a Helm release's object: the index whose chart render the live values are checked
    /// against again (the edit was proved when planned).
    pub chart: Option<SharedIndex>,
    /// The fields as shown: refused if a live value is no longer the one shown.
    pub chosen: Vec<DriftItem>,
    pub commit: CommitPlan,
}

impl AcceptRequest {
    /// Every file edit, the first one first.
    pub fn edits(&self) -> impl Iterator<Item = &PreparedEdit> {
        std::iter::once(&self.prepared).chain(&self.more)
    }
}

// Every field compares by total equality (JSON values, text); DriftItem just does not derive it.
impl Eq for AcceptRequest {}

/// One field of the list.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptField {
    pub item: DriftItem,
    pub checked: bool,
}

/// The file diff below the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preview {
    /// Nothing is checked.
    Nothing,
    Edit(PreparedEdit),
    /// A kustomize root's object: the edits of several files (overlay, patch, new patch).
    Files(Vec<PreparedEdit>),
    /// The edit was refused (the reason; nothing would be written).
    Refused(String),
    /// A chart's accept is being planned and proved by rendering.
    Proving,
}

/// The view once the live object and the file are in.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptForm {
    pub fields: Vec<AcceptField>,
    pub cursor: usize,
    pub file: FileText,
    /// The file relative to the manifests root, as git shows it.
    pub shown: String,
    /// The line of the object's document in the file.
    pub line: usize,
    pub document: usize,
    /// Where the commit goes, for the header.
    pub target: String,
    /// False outside a git repository: `enter` only writes the file.
    pub commits: bool,
    /// Said in the header when the accept will be refused before it is tried.
    pub warning: Option<String>,
    /// The manifests root, to name files as git shows them.
    pub root: Option<PathBuf>,
    /// The object.
    pub key: ObjectKey,
    pub preview: Preview,
    /// First diff line on screen.
    pub scroll: usize,
    /// `enter` was pressed; waiting for the runtime.
    pub committing: bool,
    /// For a kustomize root's object, the files its root reads (`file` among them), as read:
    /// the edit is planned over them (see [`crate::accept::kustomize`]).
    pub rendered: Option<Vec<FileText>>,
    /// For a Helm release's object, the notes of the proof of the planned edit (`Some`, maybe
    /// empty): the edit is planned by the runtime, again when a field is checked or unchecked.
    pub chart: Option<Vec<String>>,
}

/// What the accept view shows.
#[derive(Debug, Clone, PartialEq)]
pub enum AcceptContent {
    Loading,
    Ready(Box<AcceptForm>),
}

impl AcceptView {
    /// False when `enter` will only write the file (no git repository); true while loading.
    pub fn commits(&self) -> bool {
        match &self.content {
            AcceptContent::Ready(form) => form.commits,
            AcceptContent::Loading => true,
        }
    }
}

/// The `a` view of one object.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptView {
    pub key: ObjectKey,
    /// Opened from the diff view, which `esc` goes back to.
    pub from_diff: bool,
    pub content: AcceptContent,
}

impl Eq for AcceptView {}

impl AcceptForm {
    /// The files `enter` would write, as planned for the fields checked.
    pub fn written_files(&self) -> Vec<&Path> {
        match &self.preview {
            Preview::Edit(edit) => vec![edit.file.as_path()],
            Preview::Files(edits) => edits.iter().map(|e| e.file.as_path()).collect(),
            Preview::Nothing | Preview::Refused(_) | Preview::Proving => Vec::new(),
        }
    }

    fn chosen(&self) -> Vec<&DriftItem> {
        self.fields
            .iter()
            .filter(|f| f.checked)
            .map(|f| &f.item)
            .collect()
    }

    /// The diff for the checked fields, from the text read (pure).
    fn recompute(&mut self, index: Option<&crate::manifest::ManifestIndex>) {
        if self.chart.is_some() {
            // Planned by the runtime (see `super::accept_chart`).
            return;
        }
        let chosen = self.chosen();
        self.preview = if chosen.is_empty() {
            Preview::Nothing
        } else if let Some(files) = &self.rendered {
            let planned = index
                .and_then(|index| {
                    let manifest = index.get(&self.key)?;
                    let read = |path: &Path| {
                        files
                            .iter()
                            .find(|f| &*f.path == path)
                            .map(|f| f.text.to_string())
                    };
                    Some(accept::kustomize::plan(index, manifest, &chosen, &read))
                })
                .unwrap_or_else(|| {
                    Err(accept::AcceptError::Kustomize {
                        key: String::new(),
                        reason: "the manifests changed: open the view again".to_owned(),
                    })
                });
            match planned {
                Ok(edits) => {
                    let edits: Vec<PreparedEdit> =
                        edits.into_iter().filter(|e| !e.is_noop()).collect();
                    if edits.is_empty() {
                        Preview::Refused(
                            "the kustomize tree already says what is live: nothing to write"
                                .to_owned(),
                        )
                    } else {
                        Preview::Files(edits)
                    }
                }
                Err(e) => Preview::Refused(e.to_string()),
            }
        } else {
            match accept::prepare(
                &self.file.path,
                &self.file.text,
                self.file.hash,
                self.document,
                &chosen,
            ) {
                Ok(edit) => Preview::Edit(edit),
                Err(e) => Preview::Refused(e.to_string()),
            }
        };
        self.scroll = 0;
    }

    /// The diff lines, labelled with the file as git shows it.
    pub fn diff_text(&self) -> String {
        match &self.preview {
            Preview::Edit(edit) => edit.diff(&self.shown),
            Preview::Files(edits) => edits
                .iter()
                .map(|e| {
                    let name = self.root.as_deref().map_or_else(
                        || e.file.display().to_string(),
                        |r| accept::shown_path(r, &e.file),
                    );
                    e.diff(&name)
                })
                .collect(),
            _ => String::new(),
        }
    }
}

/// `text` about an object with no manifest, with the hint of a sparse checkout when `index`'s
/// notes say the checkout is one (a left-out manifest may define the object).
pub(super) fn with_sparse_hint(
    text: String,
    index: Option<&crate::manifest::ManifestIndex>,
) -> String {
    match index.and_then(|index| crate::manifest::sparse::hint_for_missing(&index.selection.notes))
    {
        Some(hint) => format!("{text}; {hint}"),
        None => text,
    }
}

pub(super) fn flash(app: &mut App, text: String) {
    app.flash = Some(Flash { text, error: true });
}

/// The header's commit target: the branch template of `.kdrift.yaml`, else the current branch.
/// What the header warns of before `enter` (a file with uncommitted changes, a detached HEAD).
pub(super) fn git_warning(git: &GitState, shown: &str, config: &Config) -> Option<String> {
    match git {
        GitState::Repository { dirty: true, .. } => Some(format!(
            "{shown} has uncommitted changes: enter will refuse; commit or stash them first"
        )),
        GitState::Unknown(e) => Some(format!("git: {e}")),
        // A commit on no branch is easily left behind: said before enter makes it.
        GitState::Repository { branch: None, .. } if config.accept_branch.is_none() => {
            Some(accept::DETACHED_HEAD.to_owned())
        }
        _ => None,
    }
}

pub(super) fn target_text(
    git: &GitState,
    config: &Config,
    key: &crate::manifest::ObjectKey,
) -> String {
    let template = config
        .accept_branch
        .as_deref()
        .map(|template| crate::git::branch_name(template, &key.kind, &key.namespace, &key.name));
    match (git, template) {
        (GitState::NotARepository, _) => {
            "no git repository: the file will only be written".to_owned()
        }
        (_, Some(branch)) => format!("commit on new branch {branch}"),
        (
            GitState::Repository {
                branch: Some(branch),
                ..
            },
            None,
        ) => format!("commit on {branch}"),
        (GitState::Repository { branch: None, .. }, None) => {
            "commit on the detached HEAD".to_owned()
        }
        (GitState::Unknown(_), None) => "commit on the current branch".to_owned(),
    }
}

impl App {
    /// `a`: open the accept view of `key` if it has drift to accept; otherwise say why not.
    pub fn open_accept(&mut self, key: ObjectKey, from_diff: bool) -> Vec<Command> {
        let object = key.to_string();
        let why_not = match self.drift_of_object(&key) {
            DriftSummary::Fields(_) => None,
            DriftSummary::InSync => Some(format!(
                "{object} is in sync with its manifest: nothing to accept"
            )),
            DriftSummary::Missing => Some(format!(
                "{object} is missing: it is not in the cluster, there is no live value to accept"
            )),
            DriftSummary::Unmanaged => {
                let text = format!(
                    "{object} has no manifest under the manifests folder: nothing to accept into"
                );
                Some(with_sparse_hint(text, self.manifests.as_deref()))
            }
            DriftSummary::NotComputed => Some(format!(
                "the drift of {object} is not known yet: try again in a moment"
            )),
            DriftSummary::Error(e) => Some(format!("{object} cannot be compared: {e}")),
        };
        if let Some(text) = why_not {
            flash(self, text);
            return Vec::new();
        }
        let file = self
            .manifests
            .as_ref()
            .and_then(|index| Some((index.get(&key)?, &index.root)));
        let Some((manifest, root)) = file else {
            flash(
                self,
                format!("{object} has no manifest: nothing to accept into"),
            );
            return Vec::new();
        };
        if manifest.helm.is_some() || manifest.chart.is_some() {
            return self.open_chart_accept(key, from_diff);
        }
        let others = match (&manifest.rendered, self.manifests.as_ref()) {
            (Some(kustomization), Some(index)) => kustomization
                .parent()
                .map(|dir| index.kustomize.files_of(dir).into_iter().collect())
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let command = Command::PrepareAccept {
            key: key.clone(),
            api_version: manifest.api_version.to_string(),
            file: manifest.file.to_path_buf(),
            root: root.clone(),
            others,
        };
        self.screen = Screen::Accept(Box::new(AcceptView {
            key,
            from_diff,
            content: AcceptContent::Loading,
        }));
        vec![command]
    }

    /// Back to where `a` was pressed.
    fn close_accept(&mut self) -> Vec<Command> {
        let Screen::Accept(view) = &self.screen else {
            return Vec::new();
        };
        if view.from_diff {
            let key = view.key.clone();
            // The diff is fetched again: after an accept it has changed.
            self.open_diff(key)
        } else {
            self.go_back();
            Vec::new()
        }
    }

    /// The live object and the file arrived: list the fields and preview the edit.
    pub fn accept_ready(&mut self, fetched: AcceptFetched) -> Vec<Command> {
        let waiting = matches!(&self.screen, Screen::Accept(view)
            if view.key == fetched.key && (view.content == AcceptContent::Loading
                || matches!(&view.content, AcceptContent::Ready(form)
                    if form.preview == Preview::Proving)));
        if !waiting {
            return Vec::new();
        }
        self.dirty = true;
        match self.accept_form(fetched) {
            Ok(form) => {
                if let Screen::Accept(view) = &mut self.screen {
                    view.content = AcceptContent::Ready(Box::new(form));
                }
                Vec::new()
            }
            Err(text) => {
                let commands = self.close_accept();
                flash(self, text);
                commands
            }
        }
    }

    fn accept_form(&self, fetched: AcceptFetched) -> Result<AcceptForm, String> {
        let object = fetched.key.to_string();
        let index = self
            .manifests
            .as_ref()
            .ok_or_else(|| "the manifests are still loading".to_owned())?;
        let live = fetched
            .live?
            .ok_or_else(|| format!("{object} is not in the cluster: nothing to accept"))?;
        let file = fetched.file?;
        if let Some(plan) = fetched.chart {
            return AcceptForm::of_chart(index, fetched.key, &live, file, &fetched.git, plan);
        }
        accept::not_duplicated(index, &fetched.key).map_err(|e| e.to_string())?;
        let rendered = index.get(&fetched.key).filter(|m| m.rendered.is_some());
        let manifest = match rendered {
            // A kustomize root's object: compared as rendered, accepted where values are set.
            Some(manifest) => manifest.clone(),
            None => accept::manifest_in(
                &file.path,
                &file.text,
                &fetched.key,
                &index.default_namespace,
            )
            .map_err(|e| e.to_string())?,
        };
        let drift = compare(&manifest, &live, &index.config);
        if let ObjectStatus::Error(e) = &drift.status {
            return Err(format!("{object} cannot be compared: {e}"));
        }
        let fields: Vec<AcceptField> = accept::offered(&drift)
            .into_iter()
            .map(|(item, checked)| AcceptField { item, checked })
            .collect();
        if fields.is_empty() {
            if drift.items.iter().any(|i| i.class.is_drift()) {
                // Only a Secret's values drift: they are never written to git.
                return Err(accept::select(&drift, &[])
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| format!("{object}: nothing to accept")));
            }
            return Err(format!(
                "{object} is in sync with its manifest now: nothing to accept"
            ));
        }
        let shown = accept::shown_path(&index.root, &file.path);
        let warning = git_warning(&fetched.git, &shown, &index.config);
        let rendered_files = rendered.map(|_| {
            let mut files = fetched.others;
            if !files.iter().any(|f| f.path == file.path) {
                files.push(file.clone());
            }
            files
        });
        let mut form = AcceptForm {
            fields,
            cursor: 0,
            target: target_text(&fetched.git, &index.config, &manifest.key),
            commits: !matches!(fetched.git, GitState::NotARepository),
            shown,
            line: manifest.line,
            document: manifest.document(),
            file,
            warning,
            preview: Preview::Nothing,
            scroll: 0,
            committing: false,
            root: Some(index.root.clone()),
            key: fetched.key.clone(),
            rendered: rendered_files,
            chart: None,
        };
        form.recompute(Some(index));
        Ok(form)
    }

    /// The runtime's answer to `Command::Accept`: close the view, say what happened.
    pub fn accepted(&mut self, key: ObjectKey, result: Result<String, String>) -> Vec<Command> {
        self.dirty = true;
        let showing = matches!(&self.screen, Screen::Accept(view) if view.key == key);
        let commands = if showing {
            self.close_accept()
        } else {
            Vec::new()
        };
        self.flash = Some(match result {
            Ok(text) => {
                // A GitOps controller reads the branch it watches, not this checkout.
                let after: Vec<String> = self
                    .reconcilers_of(&key)
                    .iter()
                    .filter_map(crate::gitops::Reconciler::after_accept)
                    .collect();
                let text = if after.is_empty() {
                    text
                } else {
                    format!("{text} — {}", after.join("; "))
                };
                Flash { text, error: false }
            }
            Err(text) => Flash { text, error: true },
        });
        commands
    }
}

/// Keys of the accept view: move, toggle, scroll the diff, accept, cancel.
pub fn accept_key(app: &mut App, key: KeyEvent) -> Vec<Command> {
    if key.code == KeyCode::Esc {
        return app.close_accept();
    }
    let page = app.table_height();
    let index = app.manifests.clone();
    let Screen::Accept(view) = &mut app.screen else {
        return Vec::new();
    };
    let AcceptContent::Ready(form) = &mut view.content else {
        return Vec::new();
    };
    if form.committing {
        return Vec::new();
    }
    let last = form.fields.len().saturating_sub(1);
    match key.code {
        KeyCode::Char('j') | KeyCode::Down => form.cursor = (form.cursor + 1).min(last),
        KeyCode::Char('k') | KeyCode::Up => form.cursor = form.cursor.saturating_sub(1),
        KeyCode::Char(' ') => {
            if let Some(field) = form.fields.get_mut(form.cursor) {
                field.checked = !field.checked;
                if form.chart.is_some() {
                    return form.plan_again(index);
                }
                form.recompute(index.as_deref());
            }
        }
        KeyCode::PageDown => {
            let lines = form.diff_text().lines().count();
            form.scroll = (form.scroll + page / 2).min(lines.saturating_sub(1));
        }
        KeyCode::PageUp => form.scroll = form.scroll.saturating_sub(page / 2),
        KeyCode::Enter => return enter(app),
        _ => {}
    }
    Vec::new()
}

/// `enter`: the checked fields, written and committed by the runtime.
fn enter(app: &mut App) -> Vec<Command> {
    let Some(index) = app.manifests.clone() else {
        return Vec::new();
    };
    let Screen::Accept(view) = &mut app.screen else {
        return Vec::new();
    };
    let AcceptContent::Ready(form) = &mut view.content else {
        return Vec::new();
    };
    let refusal = match &form.preview {
        Preview::Nothing => Some("nothing checked: space checks a field to accept".to_owned()),
        Preview::Refused(why) => Some(why.clone()),
        Preview::Proving => {
            Some("the accept is still being proved by rendering the chart".to_owned())
        }
        Preview::Edit(edit) if edit.is_noop() => Some(format!(
            "{} already says what is live: nothing to write",
            form.shown
        )),
        Preview::Edit(_) | Preview::Files(_) => None,
    };
    if let Some(text) = refusal {
        flash(app, text);
        return Vec::new();
    }
    let (prepared, more) = match &form.preview {
        Preview::Edit(prepared) => (prepared.clone(), Vec::new()),
        Preview::Files(edits) => match edits.split_first() {
            Some((first, rest)) => (first.clone(), rest.to_vec()),
            None => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    let kustomize = form
        .rendered
        .is_some()
        .then(|| SharedIndex(Arc::clone(&index)));
    let chart = form
        .chart
        .is_some()
        .then(|| SharedIndex(Arc::clone(&index)));
    let key = view.key.clone();
    let chosen = form.chosen();
    let commit = CommitPlan::new(&key, &chosen, None, &index.config);
    let api_version = index
        .get(&key)
        .map(|m| m.api_version.to_string())
        .unwrap_or_default();
    let request = AcceptRequest {
        key: view.key.clone(),
        api_version,
        root: index.root.clone(),
        default_namespace: index.default_namespace.clone(),
        config: index.config.clone(),
        prepared,
        more,
        kustomize,
        chart,
        chosen: chosen.into_iter().cloned().collect(),
        commit,
    };
    form.committing = true;
    vec![Command::Accept(Box::new(request))]
}
