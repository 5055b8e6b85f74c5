//! Re-reading changed files in two halves, so that the live view keeps IO out of its pure
//! update: [`read_change`] reads and parses one file (IO, on the runtime's side), and
//! [`ManifestIndex::apply_change`] puts the result into the index (pure, in the app).
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
}

/// Reads `path` (as the file watcher reports it) under the manifests `root`. Never fails: an
/// unreadable file becomes a `Skipped` problem, malformed YAML a `Malformed` one.
pub fn read_change(root: &Path, default_namespace: &str, path: &Path) -> FileChange {
    if path == root.join(config::CONFIG_FILE) {
        let (config, problems) = config::load(root);
        return FileChange::Config(config, problems);
    }
    let parsed =
        (path.exists() && walk::is_watched(root, path)).then(|| match walk::read_manifest(path) {
            Ok(text) => parse::parse_file(&Arc::from(path), &Arc::from(text), default_namespace),
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
        match change {
            FileChange::Config(config, problems) => {
                self.config = config;
                self.config_problems = problems;
                let mut all: Vec<ObjectKey> = self.objects.keys().cloned().collect();
                all.sort();
                all
            }
            FileChange::File { path, parsed } => {
                let mut touched: Vec<ObjectKey> = self
                    .files
                    .remove(&path)
                    .map(|f| f.objects.into_iter().map(|o| o.key).collect())
                    .unwrap_or_default();
                let read = parsed.is_some();
                if let Some(parsed) = parsed {
                    self.files.insert(path.clone(), parsed);
                }
                self.rebuild();
                // The new objects' keys as the cluster scopes them (rebuilt above).
                if read && let Some(file) = self.files.get(&path) {
                    touched.extend(file.objects.iter().map(|o| o.key.clone()));
                }
                touched.sort();
                touched.dedup();
                touched
            }
        }
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
        let touched = index.apply_change(read_change(dir.path(), "default", &file));
        assert_eq!(touched, vec![key.clone()]);
        assert_eq!(
            index.get(&key).unwrap().body.to_value()["spec"]["replicas"],
            5
        );

        std::fs::write(&file, "spec: [unclosed\n").unwrap();
        let touched = index.apply_change(read_change(dir.path(), "default", &file));
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
        let touched = index.apply_change(read_change(dir.path(), "default", &file));
        assert!(touched.is_empty());
        assert!(index.problems().is_empty());
    }
}
