//! The manifests of a git checkout: load every YAML file under a root, index the Kubernetes
//! objects by [`ObjectKey`] with file, document and line, and list the problems met on the way.
//!
//! - [`walk`]: which files are read (and which are skipped, with a reason).
//! - [`parse`]: one file's documents into [`ManifestObject`]s.
//! - [`lines`]: the line of a field inside a document.
//! - [`tree`]: a manifest's body packed in one allocation ([`tree::Packed`]), read in place.
//! - [`edit`]: format-preserving edits of one document (accept).
//! - [`config`]: `.kdrift.yaml` (ignore rules, extra appliers, kustomize roots).
//! - [`fleet`]: `.kdrift.yaml`'s `contexts:`, the folders that describe one cluster.
//! - [`kustomize`]: kustomize roots, rendered with the user's kustomize; the files they read are
//!   not manifests of their own.
//! - [`sparse`]: manifests a sparse checkout leaves out (in git, not on disk).
//! - `shared`: one parse of a file for every load under way that reads it (a fleet's contexts).
//! - [`helm`]: Helm releases in the cluster, their manifests indexed as desired state.
//! - [`charts`]: Helm charts of the checkout, rendered with the user's helm as their source says.
pub mod charts;
pub mod config;
mod coverage;
pub mod edit;
pub mod fleet;
pub mod helm;
pub mod key;
pub mod kustomize;
pub mod lines;
pub mod parse;
mod problem;
pub mod reload;
mod shared;
pub mod sparse;
pub mod tree;
pub mod walk;

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use config::{Config, IgnoreRule};
pub use key::{ObjectKey, SharedStr};
pub use problem::Problem;

/// One Kubernetes object from a manifest file.
#[derive(Debug, Clone)]
pub struct ManifestObject {
    pub key: ObjectKey,
    pub api_version: SharedStr,
    pub file: Arc<Path>,
    /// Position of the document in its file, from 0 ([`ManifestObject::document`]). The
    /// position, span, first line and list item are held as `u32` (read as `usize`): tens of
    /// thousands of objects are held, and a manifest file is far below 4 GB (past it, the
    /// saturated span reads no text: the document's line is what is said).
    pub doc_index: u32,
    /// 1-based line of the document's first content line.
    pub line: usize,
    /// This document's bytes in the file, and the 0-based line they start at. The text itself
    /// is not kept (thousands of manifests are held): it is read again when a field's line is
    /// asked for, and `digest` tells whether it is still the text that was parsed.
    pub doc_span: Range<u32>,
    pub doc_first_line: u32,
    pub digest: u64,
    /// The document's content, packed (see [`tree`]): `body.root()` reads it in place,
    /// `body.to_value()` gives a `Value`.
    pub body: tree::Packed,
    /// For an item of a `kind: List` document, its position in `items` (kubectl applies each).
    pub item: Option<u32>,
    /// For an object of a kustomize root's output, the root's kustomization file: `body` is the
    /// rendered object, and `file`/`line` the document it comes from (see [`kustomize`]).
    pub rendered: Option<Arc<Path>>,
    /// For an object of a Helm release's manifest, the release: `file` is then its source
    /// (`helm:NS/RELEASE rev N (chart NAME-VERSION)`), `line` the line in the manifest, and no
    /// text of it is on disk.
    pub helm: Option<Arc<crate::helm::Release>>,
    /// For an object a chart of the checkout renders, the chart and how it was rendered:
    /// `file` is then its template (from helm's `# Source:` line), `rendered` the chart's key.
    pub chart: Option<Arc<crate::helm::chart::ChartSpec>>,
}

#[cfg(test)]
thread_local! {
    /// Bytes hashed by [`digest`] on this thread: tests count reading, not time.
    pub(crate) static DIGESTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A digest of a document's text, to notice that its file changed since it was parsed.
pub fn digest(text: &str) -> u64 {
    #[cfg(test)]
    DIGESTED.with(|n| n.set(n.get() + text.len()));
    let mut hasher = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(text, &mut hasher);
    std::hash::Hasher::finish(&hasher)
}

/// `n` as held in a [`ManifestObject`] (saturated: see [`ManifestObject::doc_index`]).
pub fn held(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl ManifestObject {
    /// Position of the document in its file, from 0.
    pub fn document(&self) -> usize {
        self.doc_index as usize
    }

    /// This document's bytes in the file.
    pub fn span(&self) -> Range<usize> {
        self.doc_span.start as usize..self.doc_span.end as usize
    }

    /// The 0-based line the document's bytes start at.
    pub fn first_line(&self) -> usize {
        self.doc_first_line as usize
    }

    /// For an item of a `kind: List` document, its position in `items`.
    pub fn list_item(&self) -> Option<usize> {
        self.item.map(|i| i as usize)
    }

    /// The document's own text, read from its file; `None` if the file can no longer be read
    /// or has changed since it was parsed.
    pub fn read_text(&self) -> Option<String> {
        let text = std::fs::read_to_string(&self.file).ok()?;
        let document = text.get(self.span())?;
        (digest(document) == self.digest).then(|| document.to_owned())
    }

    /// The file and line of the node at `path` (see [`ManifestObject::line_of`]).
    pub fn place(&self, path: &[lines::Step<'_>]) -> Place {
        Place {
            file: self.file.to_path_buf(),
            line: self.line_of(path),
            what: None,
        }
    }

    /// 1-based line in the file of the node at `path` (or of its nearest ancestor written in
    /// block style), for reports, diffs and accept. Reads the file again; if it changed since it
    /// was parsed, the line of the document is the best answer left.
    pub fn line_of(&self, path: &[lines::Step<'_>]) -> usize {
        let Some(text) = self.read_text() else {
            return self.line;
        };
        match self.list_item() {
            Some(item) => {
                let mut steps = vec![lines::Step::Field("items"), lines::Step::Item(item)];
                steps.extend_from_slice(path);
                self.first_line() + lines::line_of(&text, &steps) + 1
            }
            None => self.first_line() + lines::line_of(&text, path) + 1,
        }
    }
}

/// Where a field's value is written: the file, the 1-based line, and for a kustomize root's
/// object what sets it there (`replicas`, `patch`, `resource`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub file: PathBuf,
    pub line: usize,
    pub what: Option<&'static str>,
}

impl Place {
    fn relative<'a>(file: &'a Path, root: &Path) -> &'a Path {
        match file.strip_prefix(root) {
            Ok(relative) if !relative.as_os_str().is_empty() => relative,
            _ => file,
        }
    }

    /// The place as the terminal shows it: see [`shown_path`].
    pub fn shown_here(&self) -> String {
        match std::env::current_dir() {
            Ok(here) => self.shown(&here),
            Err(_) => self.shown(Path::new("")),
        }
    }

    /// `apps/web.yaml:8`, `overlays/prod/kustomization.yaml:12 (replicas)`; the file relative
    /// to `root`.
    pub fn shown(&self, root: &Path) -> String {
        let file = Place::relative(&self.file, root).display();
        match self.what {
            Some(what) => format!("{file}:{} ({what})", self.line),
            None => format!("{file}:{}", self.line),
        }
    }
}

/// How a manifest file is named on the terminal: relative to the current directory when it is
/// below it (`demo/shop/cart.yaml`, as the user typed `--manifests demo`), else absolute.
pub fn shown_path(path: &Path) -> String {
    match std::env::current_dir() {
        Ok(here) => Place::relative(path, &here).display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// Whether the manifest writes its namespace (a kustomize root's `namespace:` writes it too).
fn written_namespace(object: &ManifestObject) -> bool {
    object
        .body
        .get("metadata")
        .and_then(|m| m.get("namespace"))
        .and_then(tree::NodeRef::as_str)
        .is_some_and(|ns| !ns.is_empty())
}

/// All manifests under a root, by object key, with the problems met. Built from per-file results
/// so that one changed file can be re-read alone ([`ManifestIndex::reload_file`]).
#[derive(Debug, Clone, Default)]
pub struct ManifestIndex {
    pub root: PathBuf,
    pub default_namespace: String,
    pub config: Config,
    files: BTreeMap<PathBuf, parse::ParsedFile>,
    /// Where each key's manifest is: its file (shared with the object's own `file`) and position.
    /// An `IndexMap` sized once: its entries are one exact vector, where a `HashMap` of 30,000
    /// keys would hold 65,536 slots of them.
    objects: indexmap::IndexMap<ObjectKey, (Arc<Path>, usize)>,
    walk_problems: Vec<Problem>,
    config_problems: Vec<Problem>,
    /// The selection's notes (`Selection::notes`).
    selection_problems: Vec<Problem>,
    duplicate_problems: Vec<Problem>,
    /// The note on sub-folders read that `kubectl apply -f DIR` would not read.
    subfolder_problems: Vec<Problem>,
    /// What the cluster serves, by `apiVersion` and `kind`: whether the kind is namespaced, or
    /// why it is not served. Empty until [`ManifestIndex::set_kinds`].
    kinds: HashMap<(SharedStr, SharedStr), Result<bool, String>>,
    unserved_problems: Vec<Problem>,
    /// The kustomize roots, rendered; their objects are in `files` under each root's
    /// kustomization file.
    pub kustomize: kustomize::Kustomize,
    pub selection: kustomize::Selection,
    /// The folders `.kdrift.yaml`'s `contexts:` gives the selection's context, and those it
    /// leaves out ([`fleet`]).
    pub context_folders: fleet::ContextFolders,
    /// The Helm releases set from the cluster ([`ManifestIndex::set_releases`]); their objects
    /// are in `files` under the keys `helm_files` lists (each release's source).
    pub releases: Vec<Arc<crate::helm::Release>>,
    helm_files: std::collections::BTreeSet<PathBuf>,
    /// The objects of the revisions helm is applying now (`pending-upgrade`,
    /// `pending-rollback`), by key: not desired state, what helm is at work on.
    helm_pending: std::collections::HashMap<ObjectKey, ManifestObject>,
    helm_problems: Vec<Problem>,
    /// The chart folders of the checkout (their files are not plain manifests), and the keys of
    /// `files` their renders are held under ([`ManifestIndex::set_charts`]).
    pub charts_found: Vec<PathBuf>,
    chart_files: std::collections::BTreeSet<PathBuf>,
    chart_problems: Vec<Problem>,
    /// How often the key index was rebuilt: tests count work, not time.
    #[cfg(test)]
    rebuilds: usize,
}

/// What the cluster says of one `apiVersion` and `kind`: namespaced or not, or why it is not
/// served.
pub type KindScope = Result<bool, String>;

/// `work` over `items` on all cores (the machine may have only two; at most 8): each worker
/// takes every n-th item and keeps its own `S` (a name table, say). Fewer than `min_parallel`
/// items are done on this thread. Results come in no particular order.
pub(crate) fn on_all_cores<T: Sync, R: Send, S: Default>(
    items: &[T],
    min_parallel: usize,
    work: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(items.len().max(1));
    if workers == 1 || items.len() < min_parallel {
        let mut state = S::default();
        return items.iter().map(|item| work(&mut state, item)).collect();
    }
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|worker| {
                scope.spawn(move || {
                    let mut state = S::default();
                    items
                        .iter()
                        .skip(worker)
                        .step_by(workers)
                        .map(|item| work(&mut state, item))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap_or_default())
            .collect()
    })
}

/// Parses files on all cores; each worker shares field names among the files it reads.
fn parse_files(
    files: Vec<PathBuf>,
    default_namespace: &str,
    selection: &kustomize::Selection,
) -> Vec<(PathBuf, parse::ParsedFile)> {
    let _shared = shared::LoadUnderWay::begin();
    on_all_cores(&files, 64, |names: &mut tree::Names, path: &PathBuf| {
        let parsed = match walk::read_manifest(path) {
            Ok(text) => shared::parse(
                path,
                text,
                selection.namespace_or(path, default_namespace),
                names,
            ),
            Err(reason) => parse::ParsedFile {
                objects: Vec::new(),
                problems: vec![Problem::Skipped {
                    file: path.clone(),
                    reason,
                }],
            },
        };
        (path.clone(), parsed)
    })
}

impl ManifestIndex {
    /// Loads every manifest under `root` and its `.kdrift.yaml`. Never fails as a whole: what
    /// cannot be read is in [`ManifestIndex::problems`].
    pub fn load(root: &Path, default_namespace: &str) -> ManifestIndex {
        Self::load_with(root, default_namespace, kustomize::Selection::default())
    }

    /// [`ManifestIndex::load`] with the kustomize roots `selection` picks.
    pub fn load_with(
        root: &Path,
        default_namespace: &str,
        selection: kustomize::Selection,
    ) -> ManifestIndex {
        let mut index = ManifestIndex {
            root: root.to_path_buf(),
            default_namespace: default_namespace.to_owned(),
            selection,
            ..ManifestIndex::default()
        };
        index.reload_config();
        index.selection_problems = index
            .selection
            .notes
            .iter()
            .map(|message| Problem::Note {
                file: root.to_path_buf(),
                message: message.clone(),
            })
            .collect();
        let context = index.selection.context.clone();
        index.context_folders = fleet::ContextFolders::choose(
            root,
            &index.config,
            context.as_deref(),
            &root.join(config::CONFIG_FILE),
            &mut index.selection_problems,
        );
        if let Some(said) = context
            .as_deref()
            .and_then(|c| index.context_folders.describe(root, c))
        {
            index.selection_problems.push(Problem::Note {
                file: root.to_path_buf(),
                message: format!("manifests read: {said}"),
            });
        }
        let mut files = walk::manifest_files(root, &mut index.walk_problems);
        files.retain(|f| index.context_folders.keeps(f));
        // A chart's files are rendered by helm (`charts`), never read as manifests.
        let (charts, files) = charts::split_charts(files);
        index.charts_found = charts;
        let update = index.kustomize.update(
            root,
            &index.config,
            &index.selection,
            files,
            default_namespace,
        );
        index.files = parse_files(update.plain, default_namespace, &index.selection)
            .into_iter()
            .collect();
        index.files.extend(update.rendered);
        index.rebuild();
        index
    }

    fn reload_config(&mut self) {
        let (config, problems) = config::load(&self.root);
        self.config = config;
        self.config_problems = problems;
    }

    /// Re-reads one file after it changed, appeared or disappeared on disk (paths as the watcher
    /// reports them, under the root), and returns the keys whose manifest may have changed (their
    /// drift needs recomputing). Files the load would skip (`.git`, hidden folders) are ignored.
    pub fn reload_file(&mut self, path: &Path) -> Vec<ObjectKey> {
        if reload::concerns_kustomize(&self.root, &self.kustomize, path) {
            let mut kustomize = self.kustomize.clone();
            let change = reload::read_kustomize_change(
                &self.root,
                &self.default_namespace,
                &self.selection,
                &mut kustomize,
            );
            return self.apply_change(change);
        }
        if path == self.root.join(config::CONFIG_FILE) {
            self.reload_config();
            self.rebuild();
            return self.objects.keys().cloned().collect();
        }
        let mut touched: Vec<ObjectKey> = self
            .files
            .remove(path)
            .map(|f| f.objects.into_iter().map(|o| o.key).collect())
            .unwrap_or_default();
        if path.exists() && walk::is_watched(&self.root, path) && self.context_folders.keeps(path) {
            let (_, parsed) = parse_files(
                vec![path.to_path_buf()],
                &self.default_namespace,
                &self.selection,
            )
            .into_iter()
            .next()
            .unwrap_or_default();
            touched.extend(parsed.objects.iter().map(|o| o.key.clone()));
            self.files.insert(path.to_path_buf(), parsed);
        }
        self.rebuild();
        touched.sort();
        touched.dedup();
        touched
    }

    /// Tells the index what the cluster serves (from discovery): a manifest of a cluster-scoped
    /// kind has no namespace in its key (a custom resource's scope is known only from there), and
    /// a manifest of a kind the cluster does not serve is a problem naming its file and line.
    /// `scope` is asked once per `apiVersion` and `kind`; files read again later use the answers.
    pub fn set_kinds(&mut self, scope: impl Fn(&str, &str) -> KindScope) {
        let mut kinds = HashMap::new();
        for parsed in self.files.values() {
            for object in &parsed.objects {
                let id = (object.api_version.clone(), object.key.kind.clone());
                if let std::collections::hash_map::Entry::Vacant(slot) = kinds.entry(id) {
                    let (api_version, kind) = slot.key();
                    let answer = scope(api_version, kind);
                    slot.insert(answer);
                }
            }
        }
        self.kinds = kinds;
        self.rebuild();
    }

    /// Whether [`ManifestIndex::set_kinds`] knows `apiVersion` and `kind` (else the cluster's
    /// discovery should be read again: a definition may have been installed since).
    pub fn knows_kind(&self, api_version: &str, kind: &str) -> bool {
        self.kinds.contains_key(&(api_version.into(), kind.into()))
    }

    /// The `apiVersion`s and kinds of the manifests.
    pub fn kinds(&self) -> std::collections::BTreeSet<(String, String)> {
        self.files
            .values()
            .flat_map(|f| f.objects.iter())
            .map(|o| (o.api_version.to_string(), o.key.kind.to_string()))
            .collect()
    }

    /// Whether the manifest's kind is served (true until [`ManifestIndex::set_kinds`] says).
    pub fn is_served(&self, object: &ManifestObject) -> bool {
        !matches!(
            self.kinds
                .get(&(object.api_version.clone(), object.key.kind.clone())),
            Some(Err(_))
        )
    }

    /// Puts each object's key in the scope the cluster gives its kind (and none for a kind it
    /// does not serve, unless the manifest writes one).
    fn apply_scopes(&mut self) {
        self.unserved_problems.clear();
        let default_namespace = self.default_namespace.clone();
        for parsed in self.files.values_mut() {
            for object in &mut parsed.objects {
                match self
                    .kinds
                    .get(&(object.api_version.clone(), object.key.kind.clone()))
                {
                    Some(Ok(false)) => object.key.namespace = SharedStr::default(),
                    Some(Ok(true)) if object.key.namespace.is_empty() => {
                        let written = object
                            .body
                            .get("metadata")
                            .and_then(|m| m.get("namespace"))
                            .and_then(tree::NodeRef::as_str)
                            .filter(|ns| !ns.is_empty())
                            .map(SharedStr::from);
                        object.key.namespace =
                            written.unwrap_or_else(|| default_namespace.as_str().into());
                    }
                    Some(Err(message)) => {
                        // A kind the cluster does not serve has no known scope: a namespace the
                        // manifest does not write is not invented (`clusterissuer/self-signed`).
                        if !written_namespace(object) {
                            object.key.namespace = SharedStr::default();
                        }
                        self.unserved_problems.push(Problem::Unserved {
                            file: object.file.to_path_buf(),
                            line: object.line,
                            key: object.key.clone(),
                            message: message.clone(),
                        });
                    }
                    _ => {}
                }
            }
        }
    }

    /// The key of `files` an object is held under: its file, or its kustomize root's
    /// kustomization file for a rendered object.
    fn held_in(object: &ManifestObject) -> Arc<Path> {
        object
            .rendered
            .clone()
            .unwrap_or_else(|| object.file.clone())
    }

    /// Recomputes the key index and the duplicate problems from the per-file results.
    fn rebuild(&mut self) {
        #[cfg(test)]
        {
            self.rebuilds += 1;
        }
        self.apply_scopes();
        let count = self.files.values().map(|f| f.objects.len()).sum();
        self.objects = indexmap::IndexMap::with_capacity(count);
        self.duplicate_problems.clear();
        self.subfolder_problems = self.subfolder_note().into_iter().collect();
        // An Application's folder first: its objects are the ones Argo CD applies; so are a
        // Helm release's, which helm applied.
        let (mut ordered, rest): (Vec<_>, Vec<_>) = self.files.iter().partition(|(path, _)| {
            self.selection.app_of(path).is_some() || self.helm_files.contains(*path)
        });
        ordered.extend(rest);
        for (path, parsed) in ordered {
            for (at, object) in parsed.objects.iter().enumerate() {
                match self.objects.get(&object.key) {
                    // Git's render of a chart whose release is in the cluster: the release is
                    // the desired state, the render a pending upgrade (kept apart, no problem).
                    Some((first_path, _))
                        if object.chart.is_some()
                            && self.helm_files.contains(first_path.as_ref()) => {}
                    None => {
                        self.objects
                            .insert(object.key.clone(), (Self::held_in(object), at));
                    }
                    Some((first_path, first_at)) => {
                        // A rendered object is placed at its root's kustomization: two overlays
                        // rendering one object share their base's file and line.
                        let place = |o: &ManifestObject, path: &Path| match &o.rendered {
                            Some(kustomization) => (kustomization.to_path_buf(), 1),
                            None => (path.to_path_buf(), o.line),
                        };
                        let first = self
                            .files
                            .get(first_path.as_ref())
                            .and_then(|f| f.objects.get(*first_at))
                            .map_or((first_path.to_path_buf(), 0), |o| place(o, first_path));
                        self.duplicate_problems.push(Problem::Duplicate {
                            key: object.key.clone(),
                            first,
                            second: place(object, path),
                        });
                    }
                }
            }
        }
    }

    /// The manifest of `key`, if one exists.
    /// Where the field at `path` (`steps` for its line) of `manifest` is written: for a kustomize
    /// root's object the overlay entry, patch or generator that sets it, else the document.
    pub fn place_of(
        &self,
        manifest: &ManifestObject,
        path: &edit::FieldPath,
        steps: &[lines::Step<'_>],
    ) -> Place {
        if manifest.rendered.is_some()
            && let Some(source) = self.kustomize.source_of(manifest, path)
        {
            return source.place();
        }
        Place {
            what: manifest.rendered.is_some().then_some("resource"),
            ..manifest.place(steps)
        }
    }

    /// Whether `key`'s manifest here is read from `path`: its own file, or for a kustomize
    /// root's object any file its root reads.
    pub fn describes_from(&self, key: &ObjectKey, path: &Path) -> bool {
        let Some(manifest) = self.get(key) else {
            return false;
        };
        if *manifest.file == *path {
            return true;
        }
        manifest
            .rendered
            .as_deref()
            .and_then(Path::parent)
            .is_some_and(|dir| self.kustomize.files_of(dir).contains(path))
    }

    pub fn get(&self, key: &ObjectKey) -> Option<&ManifestObject> {
        let (path, at) = self.objects.get(key)?;
        self.files.get(path.as_ref())?.objects.get(*at)
    }

    /// Every indexed object (the first of duplicates), in file order.
    /// The objects the kustomize root with kustomization file `kustomization` renders.
    pub fn rendered_by(&self, kustomization: &Path) -> &[ManifestObject] {
        self.files
            .get(kustomization)
            .map_or(&[][..], |f| f.objects.as_slice())
    }

    pub fn objects(&self) -> impl Iterator<Item = &ManifestObject> {
        self.files
            .values()
            .flat_map(|f| f.objects.iter())
            .filter(|o| {
                self.get(&o.key)
                    .is_some_and(|first| std::ptr::eq(first, *o))
            })
    }

    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Every problem: config, skipped files, malformed YAML, duplicates.
    pub fn problems(&self) -> Vec<&Problem> {
        self.config_problems
            .iter()
            .chain(&self.selection_problems)
            .chain(&self.walk_problems)
            .chain(self.files.values().flat_map(|f| f.problems.iter()))
            .chain(&self.duplicate_problems)
            .chain(&self.subfolder_problems)
            .chain(&self.unserved_problems)
            .chain(&self.helm_problems)
            .chain(&self.chart_problems)
            .chain(self.kustomize.all_problems())
            .collect()
    }
}
