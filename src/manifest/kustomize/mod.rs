//! Kustomize in the manifests: every folder with a kustomization that no other includes is a
//! root (components never are, or the roots `.kdrift.yaml` / `--overlay` name), rendered with
//! the user's kustomize ([`render`]); its output, not the files below it, is what the live
//! objects are compared with. Files a kustomization owns are never read as manifests of their
//! own. A root is rendered again only when the content of a file it reads changes.
//!
//! - [`tree`]: reading kustomization files: roots, what each reads, remote references, cycles.
//! - [`render`]: the renderer, and rendering with kustomize's origin annotations.
//! - [`source`]: which file and line set a rendered value (what accept edits).
pub mod render;
pub mod source;
pub mod tree;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::edit::FieldPath;
use super::parse::{ParsedFile, parse_file, parse_file_sharing};
use super::tree::Names;
use super::{Config, ManifestObject, Problem};
pub use tree::{Closure, Tree, is_kustomization_name};

/// Which roots the user chose for this run: `--overlay`, the kubeconfig context (for
/// `.kdrift.yaml`'s `kustomize.contexts`), and the folders Argo CD Applications deploy from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub overlay: Option<PathBuf>,
    pub context: Option<String>,
    /// The folders Argo CD Applications deploy here from the checkout (see [`AppFolder`]).
    pub apps: Vec<AppFolder>,
    /// What choosing them found, said as notes of the manifests root (which Application mapped
    /// which folder, which could not be).
    pub notes: Vec<String>,
    /// The Helm charts of the checkout Argo CD Applications render (`manifest::charts`).
    pub charts: Vec<crate::helm::chart::ChartSpec>,
}

/// A folder an Argo CD Application deploys to this cluster from the checkout
/// (`crate::gitops::source`): its objects are read as Argo CD reads them (rendered when it is a
/// kustomize root; objects without a namespace in the destination's) and come before the same
/// objects defined elsewhere in the checkout, which is read as always.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppFolder {
    /// The Application, `argocd/shop`.
    pub app: String,
    /// The folder (absolute, under the manifests root).
    pub dir: PathBuf,
    /// Rendered with kustomize (it holds a kustomization), else read as a plain directory.
    pub kustomize: bool,
    /// A plain directory's sub-folders are read too (`directory.recurse`; Argo CD's default is
    /// the folder alone).
    pub recurse: bool,
    /// `destination.namespace`: the namespace of its objects that set none.
    pub namespace: Option<String>,
}

impl Selection {
    /// The Application folder `path` belongs to: a file directly in a plain directory (or below
    /// it, with `recurse`), anything in a kustomize root; the deepest when folders nest.
    pub fn app_of(&self, path: &Path) -> Option<&AppFolder> {
        self.apps
            .iter()
            .filter(|f| {
                if f.kustomize || f.recurse {
                    path.starts_with(&f.dir)
                } else {
                    path.parent() == Some(f.dir.as_path())
                }
            })
            .max_by_key(|f| f.dir.components().count())
    }

    /// The namespace of the objects in `path` that set none: its Application's destination,
    /// else `default`.
    pub fn namespace_or<'a>(&'a self, path: &Path, default: &'a str) -> &'a str {
        self.app_of(path)
            .and_then(|f| f.namespace.as_deref())
            .unwrap_or(default)
    }
}

/// One rendered root: what it read (and a digest of all of it), and its objects.
#[derive(Debug, Clone)]
struct RootState {
    digest: u64,
    files: BTreeSet<PathBuf>,
    /// Its kustomizations and patches, read when it was rendered: where values come from.
    trace: Arc<source::Trace>,
}

/// What [`Kustomize::update`] found: the manifest files that are not kustomize's, the roots
/// rendered now as (kustomization file, objects), and the kustomization files of the roots whose
/// objects from before still hold.
#[derive(Debug, Clone, Default)]
pub struct Update {
    pub plain: Vec<PathBuf>,
    pub rendered: Vec<(PathBuf, ParsedFile)>,
    pub kept: BTreeSet<PathBuf>,
}

/// The kustomize side of a manifest index.
#[derive(Debug, Clone, Default)]
pub struct Kustomize {
    pub tree: Tree,
    /// Root folders rendered, in path order.
    pub roots: Vec<PathBuf>,
    /// Every root of the tree, chosen or not (an accept must not change what another renders).
    pub all_roots: Vec<PathBuf>,
    state: BTreeMap<PathBuf, RootState>,
    /// Problems of the kustomize side: roots that failed, remote bases, cycles, unused files.
    pub problems: Vec<Problem>,
    /// Per root, problems of its render (kept while the root's files do not change).
    root_problems: BTreeMap<PathBuf, Vec<Problem>>,
    /// The renderer, once a root was rendered (`kubectl kustomize (kustomize v5.5.0)`).
    pub renderer: Option<String>,
}

/// A digest of the paths and contents of `files` (a missing file counts as missing). `read`
/// holds the digest of each file read so far: a base many roots share is read once.
fn digest_of(files: &BTreeSet<PathBuf>, read: &mut HashMap<PathBuf, u64>) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    for file in files {
        file.hash(&mut hasher);
        let content = *read.entry(file.clone()).or_insert_with(|| {
            let mut hasher = std::hash::DefaultHasher::new();
            crate::manifest::walk::read_manifest(file)
                .ok()
                .hash(&mut hasher);
            hasher.finish()
        });
        content.hash(&mut hasher);
    }
    hasher.finish()
}

/// The problem of kustomizations that include each other (`cycle`, folders in order).
fn cycle_problem(tree: &Tree, root: &Path, cycle: &[PathBuf]) -> Problem {
    let list: Vec<String> = cycle.iter().map(|d| shown(root, d)).collect();
    Problem::Skipped {
        file: kustomization_file(tree, &cycle[0]),
        reason: format!(
            "kustomizations include each other ({}): not rendered",
            list.join(" → ")
        ),
    }
}

/// The kustomization file of a root folder.
fn kustomization_file(tree: &Tree, root: &Path) -> PathBuf {
    tree.kustomizations
        .get(root)
        .map_or_else(|| root.join(tree::FILE_NAMES[0]), |k| k.file.clone())
}

/// `path` relative to `base` (`.` for `base` itself), as notes and accept name roots.
pub fn shown(base: &Path, path: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
        Ok(relative) => relative.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// The folder given, as a note names it (its own name: `.` reads badly in a note about it).
fn shown_dir(root: &Path) -> String {
    root.file_name().map_or_else(
        || root.display().to_string(),
        |name| format!("{}/", name.to_string_lossy()),
    )
}

impl Kustomize {
    /// The roots to render under `root`: `--overlay`, else the context's entry of
    /// `kustomize.contexts`, else `kustomize.roots`, else the folder itself when it is a
    /// kustomization (as `kubectl apply -k` reads it), else every root of the tree; with a note
    /// saying which was used when the user chose.
    fn choose_roots(
        &mut self,
        root: &Path,
        config: &Config,
        selection: &Selection,
        config_file: &Path,
    ) -> Vec<PathBuf> {
        let chosen: Option<(Vec<String>, String)> = selection
            .overlay
            .as_ref()
            .map(|overlay| {
                let relative = overlay
                    .strip_prefix(root)
                    .unwrap_or(overlay)
                    .display()
                    .to_string();
                (vec![relative], "--overlay".to_owned())
            })
            .or_else(|| {
                let context = selection.context.as_deref()?;
                config
                    .kustomize_contexts
                    .iter()
                    .find(|(name, _)| name == context)
                    .map(|(_, roots)| {
                        (
                            roots.clone(),
                            format!(".kdrift.yaml kustomize.contexts for context {context}"),
                        )
                    })
            })
            .or_else(|| {
                config
                    .kustomize_roots
                    .clone()
                    .map(|roots| (roots, ".kdrift.yaml kustomize.roots".to_owned()))
            });
        let Some((names, why)) = chosen else {
            // A folder that is itself a kustomization is rendered as `kubectl apply -k DIR`
            // renders it: alone; the kustomizations below it that it does not use are noted.
            let top = tree::normalize(root);
            if selection.apps.is_empty()
                && self
                    .tree
                    .kustomizations
                    .get(&top)
                    .is_some_and(|k| !k.component)
            {
                self.note_unused_roots(root, &top);
                return vec![top];
            }
            // An Application's kustomization is rendered even when another includes it.
            let mut roots = self.tree.roots(root, None).0;
            for app in selection.apps.iter().filter(|f| f.kustomize) {
                if self.tree.kustomizations.contains_key(&app.dir) && !roots.contains(&app.dir) {
                    roots.push(app.dir.clone());
                }
            }
            roots.sort();
            return roots;
        };
        let (roots, missing) = self.tree.roots(root, Some(&names));
        for dir in missing {
            self.problems.push(Problem::BadConfig {
                file: config_file.to_path_buf(),
                line: 1,
                message: format!("kustomize root {dir} ({why}) holds no kustomization"),
            });
        }
        let list: Vec<String> = roots.iter().map(|r| shown(root, r)).collect();
        if !list.is_empty() {
            self.problems.push(Problem::Note {
                file: root.to_path_buf(),
                message: format!("kustomize roots rendered: {} (from {why})", list.join(", ")),
            });
        }
        roots
    }

    /// With `top` (the folder given) the one root: a note for each kustomization that would be
    /// a root of its own but that `top` does not use (an example, a test variant).
    fn note_unused_roots(&mut self, root: &Path, top: &Path) {
        let used = match self.tree.closure(top) {
            Closure::Files(files) => files,
            Closure::Cycle(_) | Closure::Remote(..) => return,
        };
        for dir in self.tree.roots(root, None).0 {
            let file = kustomization_file(&self.tree, &dir);
            if dir == top || used.contains(&file) {
                continue;
            }
            self.problems.push(Problem::Note {
                file,
                message: format!(
                    "not rendered: {} is itself a kustomization, rendered alone as `kubectl apply -k` renders it, and does not use this one (--overlay {} renders this one instead)",
                    shown_dir(root),
                    shown(root, &dir)
                ),
            });
        }
    }

    /// Reads the kustomizations among `files` (every file the walk found) and renders the roots
    /// whose files changed since the last call (all on the first).
    pub fn update(
        &mut self,
        root: &Path,
        config: &Config,
        selection: &Selection,
        files: Vec<PathBuf>,
        default_namespace: &str,
    ) -> Update {
        let (kustomization_files, others): (Vec<PathBuf>, Vec<PathBuf>) =
            files.into_iter().partition(|f| is_kustomization_name(f));
        self.tree = Tree::read(&kustomization_files);
        self.problems.clear();
        if self.tree.kustomizations.is_empty() {
            self.roots.clear();
            self.state.clear();
            self.root_problems.clear();
            return Update {
                plain: others,
                ..Update::default()
            };
        }
        self.problems.extend(
            self.tree
                .kustomizations
                .values()
                .filter_map(|k| k.problem.clone()),
        );
        let config_file = root.join(super::config::CONFIG_FILE);
        self.roots = self.choose_roots(root, config, selection, &config_file);
        self.all_roots = self.tree.roots(root, None).0;

        // What each root reads; the roots to render are those whose files changed.
        let mut read_by_roots: BTreeSet<PathBuf> = BTreeSet::new();
        let mut to_render: Vec<(PathBuf, BTreeSet<PathBuf>, u64)> = Vec::new();
        let mut state = BTreeMap::new();
        let mut root_problems = BTreeMap::new();
        let mut rendered = Vec::new();
        let mut kept = BTreeSet::new();
        let mut digests = HashMap::new();
        for dir in &self.roots {
            let kustomization = kustomization_file(&self.tree, dir);
            match self.tree.closure(dir) {
                Closure::Files(files) => {
                    read_by_roots.extend(files.iter().cloned());
                    let digest = digest_of(&files, &mut digests);
                    if self.state.get(dir).is_some_and(|s| s.digest == digest) {
                        kept.insert(kustomization);
                        if let Some(problems) = self.root_problems.remove(dir) {
                            root_problems.insert(dir.clone(), problems);
                        }
                        let trace = self
                            .state
                            .get(dir)
                            .map(|s| Arc::clone(&s.trace))
                            .unwrap_or_default();
                        state.insert(
                            dir.clone(),
                            RootState {
                                digest,
                                files,
                                trace,
                            },
                        );
                    } else {
                        to_render.push((dir.clone(), files, digest));
                    }
                }
                Closure::Cycle(cycle) => {
                    self.problems.push(cycle_problem(&self.tree, root, &cycle));
                }
                Closure::Remote(file, line, reference) => {
                    self.problems.push(Problem::Skipped {
                        file: kustomization,
                        reason: format!(
                            "reads the remote {reference} ({}:{line}): kdrift renders offline, from the checkout only — vendor it into the repository or compare with --manifests on a folder without it",
                            shown(root, &file)
                        ),
                    });
                }
            }
        }
        for cycle in self.tree.orphan_cycles(&read_by_roots) {
            self.problems.push(cycle_problem(&self.tree, root, &cycle));
        }
        if !to_render.is_empty() {
            match render::renderer() {
                Ok(renderer) => {
                    self.renderer = Some(renderer.describe());
                    // A kustomize run is a process of its own: the roots render on all cores.
                    // Taken out of `to_render`: the renderer exists, so this arm uses them all.
                    let (roots, digests): (Vec<(PathBuf, BTreeSet<PathBuf>)>, Vec<u64>) =
                        std::mem::take(&mut to_render)
                            .into_iter()
                            .map(|(dir, files, digest)| ((dir, files), digest))
                            .unzip();
                    let tree = &self.tree;
                    // In the order of `roots`.
                    let outputs = render::render_roots(renderer, &roots, &|dir: &Path| {
                        tree.kustomizations
                            .get(dir)
                            .is_some_and(|k| k.build_metadata)
                    });
                    // (on_all_cores returns its results worker by worker: keyed by root.)
                    let traces: HashMap<PathBuf, Arc<source::Trace>> =
                        super::on_all_cores(&roots, 8, |_: &mut (), (dir, _)| {
                            (dir.clone(), Arc::new(source::Trace::read(dir)))
                        })
                        .into_iter()
                        .collect();
                    for (((dir, files), digest), result) in
                        roots.into_iter().zip(digests).zip(outputs)
                    {
                        let trace = traces.get(&dir).cloned().unwrap_or_default();
                        let kustomization = kustomization_file(&self.tree, &dir);
                        let namespace = selection.namespace_or(&dir, default_namespace);
                        let (objects, problems) =
                            root_objects(&dir, &kustomization, result, namespace, renderer);
                        rendered.push((kustomization, objects));
                        root_problems.insert(dir.clone(), problems);
                        state.insert(
                            dir,
                            RootState {
                                digest,
                                files,
                                trace,
                            },
                        );
                    }
                }
                Err(message) => {
                    for (dir, ..) in &to_render {
                        self.problems.push(Problem::Skipped {
                            file: kustomization_file(&self.tree, dir),
                            reason: format!("not rendered: {message}"),
                        });
                    }
                }
            }
        }
        self.state = state;
        self.root_problems = root_problems;

        let plain = self.plain_files(others, &read_by_roots);
        Update {
            plain,
            rendered,
            kept,
        }
    }

    /// The files of `others` that are manifests of their own: those below no kustomization.
    /// Those below one are kustomize's, read by a root (`read_by_roots`) or by none — a
    /// component no root uses, a file no kustomization lists, a root left out by a choice of
    /// roots — which is noted.
    fn plain_files(
        &mut self,
        others: Vec<PathBuf>,
        read_by_roots: &BTreeSet<PathBuf>,
    ) -> Vec<PathBuf> {
        // Files below a kustomization are kustomize's: read by a root, or by none (a component
        // no root uses, a file no kustomization lists) — never manifests of their own.
        let mut plain = Vec::new();
        let mut unused: BTreeMap<PathBuf, usize> = BTreeMap::new();
        for file in others {
            match self.tree.owner_of(&file) {
                None => plain.push(file),
                Some(owner) => {
                    if !read_by_roots.contains(&file) {
                        *unused.entry(owner.to_path_buf()).or_default() += 1;
                    }
                }
            }
        }
        // The roots left out by a choice (--overlay, .kdrift.yaml) are used, just not now: what
        // only they read is said to be theirs, not "unused".
        let left_out: Vec<&PathBuf> = self
            .all_roots
            .iter()
            .filter(|r| !self.roots.contains(r))
            .collect();
        let mut read_by_left_out: BTreeSet<PathBuf> = BTreeSet::new();
        if !unused.is_empty() {
            for dir in &left_out {
                if let Closure::Files(files) = self.tree.closure(dir) {
                    read_by_left_out.extend(files);
                }
            }
        }
        for (dir, count) in unused {
            let file = kustomization_file(&self.tree, &dir);
            let message = if read_by_roots.contains(&file) {
                format!(
                    "{count} YAML file(s) below this kustomization are not in it: not read (kustomize build would not read them either)"
                )
            } else if left_out.contains(&&dir) {
                format!(
                    "a kustomize root left out by the choice of roots (see the roots rendered): its {count} YAML file(s) are not read"
                )
            } else if read_by_left_out.contains(&file) {
                format!(
                    "used only by kustomize roots left out by the choice of roots (see the roots rendered): its {count} YAML file(s) are not read"
                )
            } else {
                format!(
                    "no kustomize root uses this kustomization: its {count} YAML file(s) are not read"
                )
            };
            self.problems.push(Problem::Note { file, message });
        }
        plain
    }

    /// The roots whose files include `path` (a file the watcher saw change), or every root when
    /// `path` is a kustomization or lies below one (the tree itself may have changed).
    pub fn concerns(&self, path: &Path) -> bool {
        is_kustomization_name(path)
            || self.tree.owner_of(path).is_some()
            || self.state.values().any(|s| s.files.contains(path))
    }

    /// The files the root `dir` reads (rendered or not).
    pub fn files_of(&self, dir: &Path) -> BTreeSet<PathBuf> {
        match self.state.get(dir) {
            Some(state) => state.files.clone(),
            None => match self.tree.closure(dir) {
                Closure::Files(files) => files,
                _ => BTreeSet::new(),
            },
        }
    }

    /// Every root of the tree (rendered or not: `--overlay` chooses what is compared, not what
    /// an accept may change) that reads `file`.
    pub fn roots_reading(&self, file: &Path) -> Vec<PathBuf> {
        let reads = |dir: &Path| match self.state.get(dir) {
            Some(state) => state.files.contains(file),
            None => matches!(self.tree.closure(dir), Closure::Files(files) if files.contains(file)),
        };
        self.all_roots
            .iter()
            .chain(&self.roots)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .filter(|dir| reads(dir))
            .cloned()
            .collect()
    }

    /// The kustomizations of the root that rendered `manifest`, as read when it was rendered.
    pub fn trace_of(&self, manifest: &ManifestObject) -> Option<&source::Trace> {
        let root = manifest.rendered.as_deref()?.parent()?;
        self.state.get(root).map(|s| &*s.trace)
    }

    /// Where `path` of the rendered object `manifest` is set, when a kustomization (an overlay's
    /// entry, a patch, a generator) sets it; `None` for a field of the resource document.
    pub fn source_of(&self, manifest: &ManifestObject, path: &FieldPath) -> Option<source::Source> {
        let trace = self.trace_of(manifest)?;
        let rendered = manifest.body.to_value();
        trace.locate(&source::Traced::of(manifest, &rendered), path)
    }

    /// Every problem of the kustomize side.
    pub fn all_problems(&self) -> impl Iterator<Item = &Problem> {
        self.problems
            .iter()
            .chain(self.root_problems.values().flatten())
    }
}

/// The objects of a root's rendered output, each traced to the document that defines it (from
/// its origin annotation, then removed), and marked as rendered from `kustomization`.
pub fn objects_of(
    root: &Path,
    kustomization: &Path,
    rendered: &render::Rendered,
    default_namespace: &str,
) -> ParsedFile {
    let kustomization: Arc<Path> = Arc::from(kustomization);
    let mut names = Names::default();
    let mut parsed = parse_file_sharing(
        &kustomization,
        &Arc::from(rendered.text.as_str()),
        default_namespace,
        &mut names,
    );
    let mut sources: HashMap<PathBuf, ParsedFile> = HashMap::new();
    for object in &mut parsed.objects {
        let origin = match &rendered.origins {
            Some(_) => super::tree::remove_annotation(
                &mut object.body,
                render::ORIGIN_ANNOTATION,
                &mut names,
            ),
            None => None,
        };
        let base = rendered.origins.as_deref().unwrap_or(root);
        let origin: Option<Value> = origin
            .as_ref()
            .and_then(|o| o.as_str())
            .and_then(|text| serde_yaml::from_str(text).ok());
        let source = origin.as_ref().and_then(|o| {
            o.get("path")
                .or_else(|| o.get("configuredIn"))
                .and_then(Value::as_str)
                .map(|p| tree::normalize(&base.join(p)))
        });
        trace_to_source(
            object,
            source,
            &kustomization,
            default_namespace,
            &mut sources,
        );
        object.rendered = Some(Arc::clone(&kustomization));
    }
    parsed
}

/// Points `object`'s file, document and line at the document of `source` that defines it (same
/// kind, the longest name the rendered name contains: prefixes and suffixes are kustomize's), or
/// at the start of `source` (a generator's kustomization) when none does.
fn trace_to_source(
    object: &mut ManifestObject,
    source: Option<PathBuf>,
    kustomization: &Arc<Path>,
    default_namespace: &str,
    sources: &mut HashMap<PathBuf, ParsedFile>,
) {
    let file = source.unwrap_or_else(|| kustomization.to_path_buf());
    let parsed = sources.entry(file.clone()).or_insert_with(|| {
        crate::manifest::walk::read_manifest(&file)
            .map(|text| {
                parse_file(
                    &Arc::from(file.as_path()),
                    &Arc::from(text),
                    default_namespace,
                )
            })
            .unwrap_or_default()
    });
    let defining = parsed
        .objects
        .iter()
        .filter(|o| o.key.kind == object.key.kind && object.key.name.contains(&*o.key.name))
        .max_by_key(|o| (o.key.name == object.key.name, o.key.name.len()));
    match defining {
        Some(found) => {
            object.file = Arc::clone(&found.file);
            object.doc_index = found.doc_index;
            object.line = found.line;
            object.doc_span = found.doc_span.clone();
            object.doc_first_line = found.doc_first_line;
            object.digest = found.digest;
            object.item = found.item;
        }
        None => {
            object.file = Arc::from(file.as_path());
            object.doc_index = 0;
            object.line = 1;
            object.doc_span = 0..0;
            object.doc_first_line = 0;
            // No document of the file is this object's: its text is never read back.
            object.digest = 0;
            object.item = None;
        }
    }
}

/// The objects a root rendered and its problems (a root that renders nothing is noted), or the
/// renderer's failure.
fn root_objects(
    dir: &Path,
    kustomization: &Path,
    result: Result<render::Rendered, String>,
    namespace: &str,
    renderer: &render::Renderer,
) -> (ParsedFile, Vec<Problem>) {
    match result {
        Ok(output) => {
            let mut parsed = objects_of(dir, kustomization, &output, namespace);
            let mut problems = std::mem::take(&mut parsed.problems);
            if parsed.objects.is_empty() {
                problems.push(Problem::Note {
                    file: kustomization.to_path_buf(),
                    message: "the kustomization renders no objects".to_owned(),
                });
            }
            (parsed, problems)
        }
        Err(message) => (
            ParsedFile::default(),
            vec![Problem::Skipped {
                file: kustomization.to_path_buf(),
                reason: format!("{} failed: {message}", renderer.describe()),
            }],
        ),
    }
}
