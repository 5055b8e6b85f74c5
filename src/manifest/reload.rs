//! Re-reading changed files in two halves, so that the live view keeps IO out of its pure
//! update: [`read_change`] reads and parses one file (IO, on the runtime's side), and
//! [`ManifestIndex::apply_change`] puts the result into the index (pure, in the app).
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::kustomize::{Kustomize, Selection, is_kustomization_name};
use super::parse::{self, ParsedFile};
use super::{Config, ManifestIndex, ObjectKey, Problem, config, walk};

/// One file as it is now on disk, ready to replace its old version in the index.
#[derive(Debug, Clone)]
pub enum FileChange {
    /// `.kdrift.yaml` changed: every object's drift may change.
    Config(Config, Vec<Problem>),
    /// A manifest file changed, appeared (`Some`) or disappeared or is no longer watched (`None`).
    File {
        path: PathBuf,
        parsed: Option<ParsedFile>,
    },
    /// A file a kustomization reads (or a kustomization, or `.kdrift.yaml` with kustomizations
    /// about) changed: the kustomize side as it is now.
    Kustomize(Box<KustomizeChange>),
}

/// The kustomize side read again: roots re-rendered where their files changed, and the manifest
/// files that are plain now.
#[derive(Debug, Clone)]
pub struct KustomizeChange {
    pub kustomize: Kustomize,
    pub config: Config,
    pub config_problems: Vec<Problem>,
    pub walk_problems: Vec<Problem>,
    /// Every manifest file that is not kustomize's.
    pub plain: std::collections::BTreeSet<PathBuf>,
    /// Plain files the kustomize side held before (the index has not read them).
    pub parsed: Vec<(PathBuf, ParsedFile)>,
    /// Roots rendered now, by kustomization file.
    pub rendered: Vec<(PathBuf, ParsedFile)>,
    /// Roots whose objects from before still hold.
    pub kept: std::collections::BTreeSet<PathBuf>,
}

/// Whether a change to `path` concerns the kustomize side `kustomize` knows.
pub fn concerns_kustomize(root: &Path, kustomize: &Kustomize, path: &Path) -> bool {
    kustomize.concerns(path)
        || (path == root.join(config::CONFIG_FILE) && !kustomize.tree.kustomizations.is_empty())
}

/// Reads the kustomize side again (IO: walks the folder, renders the roots whose files changed);
/// `kustomize` is the state from before and becomes the state now.
pub fn read_kustomize_change(
    root: &Path,
    default_namespace: &str,
    selection: &Selection,
    kustomize: &mut Kustomize,
) -> FileChange {
    let (config, config_problems) = config::load(root);
    let mut walk_problems = Vec::new();
    let mut files = walk::manifest_files(root, &mut walk_problems);
    // Other contexts' folders stay out, as at the first load (its problems were said then).
    let folders = super::fleet::ContextFolders::choose(
        root,
        &config,
        selection.context.as_deref(),
        &root.join(config::CONFIG_FILE),
        &mut Vec::new(),
    );
    files.retain(|f| folders.keeps(f));
    let before = kustomize.tree.clone();
    let update = kustomize.update(root, &config, selection, files, default_namespace);
    let released: Vec<PathBuf> = update
        .plain
        .iter()
        .filter(|f| before.owner_of(f).is_some())
        .cloned()
        .collect();
    let parsed = super::parse_files(released, default_namespace, selection);
    FileChange::Kustomize(Box::new(KustomizeChange {
        kustomize: kustomize.clone(),
        config,
        config_problems,
        walk_problems,
        plain: update.plain.into_iter().collect(),
        parsed,
        rendered: update.rendered,
        kept: update.kept,
    }))
}

/// Reads `path` (as the file watcher reports it) under the manifests `root`. Never fails: an
/// unreadable file becomes a `Skipped` problem, malformed YAML a `Malformed` one.
pub fn read_change(
    root: &Path,
    default_namespace: &str,
    selection: &Selection,
    path: &Path,
) -> FileChange {
    if path == root.join(config::CONFIG_FILE) {
        let (config, problems) = config::load(root);
        return FileChange::Config(config, problems);
    }
    let (config, _) = config::load(root);
    let folders = super::fleet::ContextFolders::choose(
        root,
        &config,
        selection.context.as_deref(),
        &root.join(config::CONFIG_FILE),
        &mut Vec::new(),
    );
    let read = path.exists() && walk::is_watched(root, path) && folders.keeps(path);
    let parsed = read.then(|| match walk::read_manifest(path) {
        Ok(text) => parse::parse_file(
            &Arc::from(path),
            &Arc::from(text),
            selection.namespace_or(path, default_namespace),
        ),
        Err(reason) => ParsedFile {
            objects: Vec::new(),
            problems: vec![Problem::Skipped {
                file: path.to_path_buf(),
                reason,
            }],
        },
    });
    FileChange::File {
        path: path.to_path_buf(),
        parsed,
    }
}

impl ManifestIndex {
    /// Puts a re-read file into the index and returns the keys whose manifest may have changed
    /// (defined in the old or the new version of the file; every key for a config change).
    pub fn apply_change(&mut self, change: FileChange) -> Vec<ObjectKey> {
        self.apply_changes(vec![change])
    }

    /// [`ManifestIndex::apply_change`] for a burst of changes (a `git checkout` of another
    /// branch changes every file): the key index is rebuilt once, not once a file.
    pub fn apply_changes(&mut self, changes: Vec<FileChange>) -> Vec<ObjectKey> {
        let mut touched = Vec::new();
        let mut every_key = false;
        // Files read now: their keys are taken after the rebuild, scoped as the cluster says.
        let mut read = Vec::new();
        for change in changes {
            match change {
                FileChange::Kustomize(change) => {
                    let change = *change;
                    every_key |= change.config != self.config;
                    self.config = change.config;
                    self.config_problems = change.config_problems;
                    self.walk_problems = change.walk_problems;
                    self.kustomize = change.kustomize;
                    let gone: Vec<PathBuf> = self
                        .files
                        .keys()
                        .filter(|path| {
                            !self.helm_files.contains(*path) && !self.chart_files.contains(*path)
                        })
                        .filter(|path| {
                            if is_kustomization_name(path) {
                                !change.kept.contains(*path)
                            } else {
                                !change.plain.contains(*path)
                            }
                        })
                        .cloned()
                        .collect();
                    for path in gone {
                        if let Some(parsed) = self.files.remove(&path) {
                            touched.extend(parsed.objects.into_iter().map(|o| o.key));
                        }
                    }
                    for (path, parsed) in change.parsed.into_iter().chain(change.rendered) {
                        touched.extend(parsed.objects.iter().map(|o| o.key.clone()));
                        self.files.insert(path, parsed);
                    }
                }
                FileChange::Config(config, problems) => {
                    self.config = config;
                    self.config_problems = problems;
                    every_key = true;
                }
                // A file of a chart is helm's to render, never a manifest of its own.
                FileChange::File { path, .. }
                    if self.charts_found.iter().any(|c| path.starts_with(c)) => {}
                FileChange::File { path, parsed } => {
                    if let Some(old) = self.files.remove(&path) {
                        touched.extend(old.objects.into_iter().map(|o| o.key));
                    }
                    if let Some(parsed) = parsed {
                        self.files.insert(path.clone(), parsed);
                        read.push(path);
                    }
                }
            }
        }
        self.rebuild();
        for path in read {
            if let Some(file) = self.files.get(&path) {
                touched.extend(file.objects.iter().map(|o| o.key.clone()));
            }
        }
        if every_key {
            touched.extend(self.objects.keys().cloned());
        }
        touched.sort();
        touched.dedup();
        touched
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  replicas: 2\n";

    #[test]
    fn a_file_edited_broken_and_deleted_updates_objects_and_problems() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("web.yaml");
        std::fs::write(&file, DEPLOY).unwrap();
        let mut index = ManifestIndex::load(dir.path(), "default");
        let key = ObjectKey::new("apps", "Deployment", "shop", "web");
        assert_eq!(
            index.get(&key).unwrap().body.to_value()["spec"]["replicas"],
            2
        );

        std::fs::write(&file, DEPLOY.replace("replicas: 2", "replicas: 5")).unwrap();
        let touched = index.apply_change(read_change(
            dir.path(),
            "default",
            &Selection::default(),
            &file,
        ));
        assert_eq!(touched, vec![key.clone()]);
        assert_eq!(
            index.get(&key).unwrap().body.to_value()["spec"]["replicas"],
            5
        );

        std::fs::write(&file, "spec: [unclosed\n").unwrap();
        let touched = index.apply_change(read_change(
            dir.path(),
            "default",
            &Selection::default(),
            &file,
        ));
        assert_eq!(touched, vec![key.clone()]);
        assert!(index.get(&key).is_none());
        let problems: Vec<String> = index.problems().iter().map(|p| p.to_string()).collect();
        assert!(
            problems
                .iter()
                .any(|p| p.contains("web.yaml:2") && p.contains("malformed")),
            "{problems:?}"
        );

        std::fs::remove_file(&file).unwrap();
        let touched = index.apply_change(read_change(
            dir.path(),
            "default",
            &Selection::default(),
            &file,
        ));
        assert!(touched.is_empty());
        assert!(index.problems().is_empty());
    }

    #[test]
    fn a_burst_of_changed_files_rebuilds_the_index_once() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = (0..50)
            .map(|i| {
                let file = dir.path().join(format!("web{i}.yaml"));
                std::fs::write(&file, DEPLOY.replace("name: web", &format!("name: web{i}")))
                    .unwrap();
                file
            })
            .collect();
        let mut index = ManifestIndex::load(dir.path(), "default");
        let rebuilds = index.rebuilds;
        let changes = files
            .iter()
            .map(|file| {
                let text = std::fs::read_to_string(file).unwrap();
                std::fs::write(file, text.replace("replicas: 2", "replicas: 5")).unwrap();
                read_change(dir.path(), "default", &Selection::default(), file)
            })
            .collect();
        let touched = index.apply_changes(changes);
        assert_eq!(touched.len(), 50);
        // One rebuild of the key index for the burst, not one per file (50 × 50 objects).
        assert_eq!(index.rebuilds - rebuilds, 1);
        for i in 0..50 {
            let key = ObjectKey::new("apps", "Deployment", "shop", &format!("web{i}"));
            assert_eq!(
                index.get(&key).unwrap().body.to_value()["spec"]["replicas"],
                5
            );
        }
    }
}
