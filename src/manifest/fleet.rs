//! `.kdrift.yaml`'s `contexts:`: one repository for several clusters, a folder (or several) per
//! kubeconfig context. A folder named for some context is read only for the context(s) naming
//! it; every folder no context names is shared by all. A context the map does not name reads
//! the shared folders only. Which folders were read, and why, is said per context
//! ([`ContextFolders::describe`]): `kdrift check` over several contexts prints it in each section.
use std::path::{Path, PathBuf};

use super::{Config, Problem};

/// The folders of the checkout this context reads apart from the shared ones, and those it
/// leaves out (other contexts' folders).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextFolders {
    /// The context's own folders (absolute, under the root), as `.kdrift.yaml` names them.
    pub own: Vec<PathBuf>,
    /// The folders of other contexts (absolute), minus this context's own.
    pub left_out: Vec<PathBuf>,
    /// `.kdrift.yaml` has a `contexts:` map (else nothing is left out, nothing said).
    pub mapped: bool,
    /// The context names the map has an entry for this one.
    pub named: bool,
}

impl ContextFolders {
    /// The folders of `context` under `root` from `config`'s `contexts:`; a folder that does not
    /// exist is a problem (of `config_file`) naming it.
    pub fn choose(
        root: &Path,
        config: &Config,
        context: Option<&str>,
        config_file: &Path,
        problems: &mut Vec<Problem>,
    ) -> ContextFolders {
        if config.contexts.is_empty() {
            return ContextFolders::default();
        }
        let mut chosen = ContextFolders {
            mapped: true,
            ..ContextFolders::default()
        };
        for entry in &config.contexts {
            let name = &entry.context;
            let mine = context == Some(name.as_str());
            chosen.named |= mine;
            for dir in &entry.folders {
                let path = super::kustomize::tree::normalize(&root.join(dir));
                if mine && !path.is_dir() {
                    problems.push(Problem::BadConfig {
                        file: config_file.to_path_buf(),
                        line: entry.line,
                        message: format!(
                            "contexts.{name}: folder {dir} does not exist under the manifests root"
                        ),
                    });
                }
                let list = if mine {
                    &mut chosen.own
                } else {
                    &mut chosen.left_out
                };
                if !list.contains(&path) {
                    list.push(path);
                }
            }
        }
        let own = chosen.own.clone();
        chosen.left_out.retain(|p| !own.contains(p));
        chosen
    }

    /// Whether `file` is read for this context: the deepest of the folders (own or left out)
    /// holding it decides; a file under none is shared.
    pub fn keeps(&self, file: &Path) -> bool {
        let depth = |dirs: &[PathBuf]| {
            dirs.iter()
                .filter(|d| file.starts_with(d))
                .map(|d| d.components().count())
                .max()
        };
        match (depth(&self.own), depth(&self.left_out)) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(own), Some(out)) => own >= out,
        }
    }

    /// What this context reads, for a note and a report section: `None` without a map.
    pub fn describe(&self, root: &Path, context: &str) -> Option<String> {
        if !self.mapped {
            return None;
        }
        let shown = |dirs: &[PathBuf]| {
            dirs.iter()
                .map(|d| super::kustomize::shown(root, d))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let left_out = if self.left_out.is_empty() {
            String::new()
        } else {
            format!("; left out: {}", shown(&self.left_out))
        };
        Some(if self.named {
            format!(
                "{} and the shared folders (from .kdrift.yaml contexts.{context}){left_out}",
                shown(&self.own)
            )
        } else {
            format!(
                "the shared folders only (.kdrift.yaml contexts has no entry for {context}){left_out}"
            )
        })
    }
}

impl super::ManifestIndex {
    /// Which manifests describe the cluster of `context`, and why, in one line: `--overlay`,
    /// `.kdrift.yaml`'s `kustomize.contexts` or `contexts`, the folders Argo CD Applications
    /// deploy here, `kustomize.roots`, else the whole checkout.
    pub fn source(&self, context: &str) -> String {
        let root = &self.root;
        let mut parts = Vec::new();
        if let Some(overlay) = &self.selection.overlay {
            parts.push(format!(
                "kustomize root {} (--overlay)",
                super::kustomize::shown(root, overlay)
            ));
        } else if let Some((_, roots)) = self
            .config
            .kustomize_contexts
            .iter()
            .find(|(name, _)| name == context)
        {
            parts.push(format!(
                "kustomize roots {} (from .kdrift.yaml kustomize.contexts.{context})",
                roots.join(", ")
            ));
        } else if let Some(roots) = &self.config.kustomize_roots {
            parts.push(format!(
                "kustomize roots {} (from .kdrift.yaml kustomize.roots)",
                roots.join(", ")
            ));
        }
        parts.extend(self.context_folders.describe(root, context));
        if !self.selection.apps.is_empty() {
            let apps: Vec<String> = self
                .selection
                .apps
                .iter()
                .map(|a| format!("{} → {}", a.app, super::kustomize::shown(root, &a.dir)))
                .collect();
            parts.push(format!(
                "the folders Argo CD Applications deploy to this cluster ({})",
                apps.join(", ")
            ));
        }
        if parts.is_empty() {
            parts.push(if root.join(super::config::CONFIG_FILE).is_file() {
                "the whole checkout (.kdrift.yaml names nothing for this context)".into()
            } else {
                "the whole checkout (no .kdrift.yaml maps folders to contexts)".into()
            });
        }
        format!("{}: {}", root.display(), parts.join("; "))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        let (config, problems) = super::super::config::parse(Path::new(".kdrift.yaml"), text);
        assert!(problems.is_empty(), "{problems:?}");
        config
    }

    #[test]
    fn a_context_reads_its_folders_and_the_shared_ones_never_another_contexts() {
        let root = tempfile::tempdir().unwrap();
        for dir in ["clusters/prod", "clusters/prod-eu", "clusters/staging"] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        let config = config(
            "contexts:\n  staging: clusters/staging\n  prod-eu: [clusters/prod, clusters/prod-eu]\n  prod-us: [clusters/prod, clusters/prod-us]\n",
        );
        let mut problems = Vec::new();
        let file = root.path().join(".kdrift.yaml");
        let eu =
            ContextFolders::choose(root.path(), &config, Some("prod-eu"), &file, &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        let at = |p: &str| root.path().join(p);
        assert!(eu.keeps(&at("shop/web.yaml")));
        assert!(eu.keeps(&at("clusters/prod/web.yaml")));
        assert!(eu.keeps(&at("clusters/prod-eu/web.yaml")));
        assert!(!eu.keeps(&at("clusters/prod-us/web.yaml")));
        assert!(!eu.keeps(&at("clusters/staging/web.yaml")));
        assert_eq!(
            eu.describe(root.path(), "prod-eu").unwrap(),
            "clusters/prod, clusters/prod-eu and the shared folders (from .kdrift.yaml contexts.prod-eu); left out: clusters/staging, clusters/prod-us"
        );

        // prod-us's folder does not exist: said, with the context and the folder.
        let us =
            ContextFolders::choose(root.path(), &config, Some("prod-us"), &file, &mut problems);
        assert_eq!(problems.len(), 1);
        let said = problems[0].to_string();
        assert!(
            said.contains("contexts.prod-us: folder clusters/prod-us does not exist"),
            "{said}"
        );
        assert_eq!(problems[0].place().1, Some(4), "the entry's line: {said}");
        assert!(!us.keeps(&at("clusters/prod-eu/web.yaml")));

        // A context the map does not name reads the shared folders only.
        let other = ContextFolders::choose(root.path(), &config, Some("dev"), &file, &mut problems);
        assert!(other.keeps(&at("shop/web.yaml")));
        assert!(!other.keeps(&at("clusters/prod/web.yaml")));
        assert!(
            other
                .describe(root.path(), "dev")
                .unwrap()
                .starts_with("the shared folders only")
        );

        // Without a map, every file is read and nothing is said.
        let none = ContextFolders::choose(
            root.path(),
            &Config::default(),
            Some("dev"),
            &file,
            &mut problems,
        );
        assert!(none.keeps(&at("clusters/prod/web.yaml")));
        assert_eq!(none.describe(root.path(), "dev"), None);
    }

    #[test]
    fn a_bad_contexts_entry_names_its_line() {
        let (_, problems) = super::super::config::parse(
            Path::new(".kdrift.yaml"),
            "appliers: [bot]\ncontexts:\n  staging: 3\n",
        );
        assert_eq!(problems.len(), 1);
        let text = problems[0].to_string();
        assert!(text.contains(":3"), "{text}");
        assert!(text.contains("contexts.staging must be a folder"), "{text}");
    }
}
