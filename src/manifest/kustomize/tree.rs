//! Reading kustomization files (never rendering them): which folders a kustomization includes
//! (resources and components that are folders), which files it reads (resources, patches,
//! generator sources, …), which references are remote, and from that the roots of a checkout and
//! the files each root reads.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use crate::manifest::Problem;
use crate::manifest::lines::{Step, line_in, line_of};

/// The file names kustomize reads as a folder's kustomization, in the order it looks for them.
pub const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// True for a kustomization file's name.
pub fn is_kustomization_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| FILE_NAMES.contains(&n))
}

/// One kustomization file, as far as kdrift needs it.
#[derive(Debug, Clone, Default)]
pub struct Kustomization {
    pub file: PathBuf,
    /// `kind: Component`: included by others, never a root.
    pub component: bool,
    /// Folders it includes (resources and components that are folders, `bases`).
    pub includes: Vec<PathBuf>,
    /// Files it reads (resources, patches, generator sources, replacements, configurations).
    pub reads: Vec<PathBuf>,
    /// Remote references (`github.com/…`, `https://…`): refused, kdrift works offline.
    pub remote: Vec<(String, usize)>,
    /// It asks for `buildMetadata` itself (the rendered objects carry those annotations).
    pub build_metadata: bool,
    /// A kustomization that is not a YAML mapping.
    pub problem: Option<Problem>,
}

/// Lexically resolves `.` and `..` (the path may not exist; symlinks are left as they are).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// A reference kustomize would fetch from the network: a URL, `git@…`, or `host.tld/org/repo`
/// that is no local path.
fn is_remote(dir: &Path, reference: &str) -> bool {
    if reference.contains("://") || reference.starts_with("git@") || reference.contains("?ref=") {
        return true;
    }
    let first = reference.split('/').next().unwrap_or_default();
    first.contains('.')
        && first != "."
        && first != ".."
        && reference.matches('/').count() >= 2
        && !dir.join(reference).exists()
}

/// The items of the list `field` of `value` (none when it is absent or not a list).
fn items<'v>(value: &'v Value, field: &str) -> impl Iterator<Item = &'v Value> {
    value
        .get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// Inline content (a patch or generator written in the kustomization) rather than a path.
fn is_inline(text: &str) -> bool {
    text.contains('\n') || text.trim_start().starts_with('{') || text.contains(": ")
}

impl Kustomization {
    /// Reads `file`'s references. A file that cannot be read or parsed keeps its problem; kustomize's
    /// own message comes when its root is rendered.
    pub fn read(file: &Path) -> Kustomization {
        match crate::manifest::walk::read_manifest(file) {
            Ok(text) => Kustomization::from_text(file, &text),
            Err(error) => Kustomization {
                file: file.to_path_buf(),
                problem: Some(Problem::Skipped {
                    file: file.to_path_buf(),
                    reason: format!("cannot read the kustomization: {error}"),
                }),
                ..Kustomization::default()
            },
        }
    }

    /// The references of `text`, the contents of the kustomization `file` (whose folder the
    /// references are relative to, and are looked up in).
    pub fn from_text(file: &Path, text: &str) -> Kustomization {
        let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
        let mut kustomization = Kustomization {
            file: file.to_path_buf(),
            ..Kustomization::default()
        };
        let value: Value = match serde_yaml::from_str(text) {
            Ok(Value::Object(map)) => Value::Object(map),
            Ok(Value::Null) => return kustomization,
            Ok(_) => {
                kustomization.problem = Some(Problem::Malformed {
                    file: file.to_path_buf(),
                    line: 1,
                    column: 0,
                    message: "a kustomization must be a mapping".to_owned(),
                });
                return kustomization;
            }
            Err(error) => {
                let (line, column) = error
                    .location()
                    .map_or((1, 0), |at| (at.line(), at.column()));
                kustomization.problem = Some(Problem::Malformed {
                    file: file.to_path_buf(),
                    line: line_in(text, line),
                    column,
                    message: error.to_string(),
                });
                return kustomization;
            }
        };
        kustomization.component = value.get("kind").and_then(Value::as_str) == Some("Component");
        kustomization.build_metadata = value.get("buildMetadata").is_some();
        // Folders or files: resources, bases, components.
        for field in ["resources", "bases", "components"] {
            for (at, reference) in items(&value, field).enumerate() {
                let Some(reference) = reference.as_str() else {
                    continue;
                };
                if is_remote(&dir, reference) {
                    let line = line_of(text, &[Step::Field(field), Step::Item(at)]) + 1;
                    kustomization.remote.push((reference.to_owned(), line));
                    continue;
                }
                let target = normalize(&dir.join(reference));
                if target.is_dir() {
                    kustomization.includes.push(target);
                } else {
                    kustomization.reads.push(target);
                }
            }
        }
        // Files named by path (inline content is not a file).
        let mut named: Vec<&str> = Vec::new();
        for field in [
            "crds",
            "configurations",
            "patchesStrategicMerge",
            "generators",
            "transformers",
            "validators",
        ] {
            named.extend(items(&value, field).filter_map(Value::as_str));
        }
        for field in ["patches", "patchesJson6902", "replacements"] {
            named.extend(items(&value, field).filter_map(|item| item.get("path")?.as_str()));
        }
        named.extend(value.pointer("/openapi/path").and_then(Value::as_str));
        for field in ["configMapGenerator", "secretGenerator"] {
            for generator in items(&value, field) {
                // `key=path` or `path`.
                named.extend(
                    items(generator, "files")
                        .filter_map(Value::as_str)
                        .map(|source| source.split_once('=').map_or(source, |(_, path)| path)),
                );
                named.extend(items(generator, "envs").filter_map(Value::as_str));
                named.extend(generator.get("env").and_then(Value::as_str));
            }
        }
        kustomization.reads.extend(
            named
                .into_iter()
                .filter(|reference| !reference.is_empty() && !is_inline(reference))
                .map(|reference| normalize(&dir.join(reference))),
        );
        kustomization
    }
}

/// Every kustomization of a checkout, by folder.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub kustomizations: BTreeMap<PathBuf, Kustomization>,
}

/// What a root reads, or why it cannot be rendered before kustomize is even asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Closure {
    /// Every file the root reads (kustomization files included), in path order.
    Files(BTreeSet<PathBuf>),
    /// Kustomizations including each other: the folders of the cycle, in order.
    Cycle(Vec<PathBuf>),
    /// A remote reference somewhere below: its kustomization file, line and text.
    Remote(PathBuf, usize, String),
}

impl Tree {
    /// Reads the kustomization `files` (found by the walk; the first of a folder's names wins, as
    /// in kustomize).
    pub fn read(files: &[PathBuf]) -> Tree {
        let mut kustomizations = BTreeMap::new();
        for file in files {
            let Some(dir) = file.parent() else { continue };
            let rank = |f: &Path| {
                FILE_NAMES
                    .iter()
                    .position(|n| f.file_name().is_some_and(|x| x == *n))
                    .unwrap_or(FILE_NAMES.len())
            };
            let better = kustomizations
                .get(dir)
                .is_none_or(|k: &Kustomization| rank(file) < rank(&k.file));
            if better {
                kustomizations.insert(dir.to_path_buf(), Kustomization::read(file));
            }
        }
        // Bases outside the folder walked (`../../base` of an overlay given as the root): read
        // too, so that what a root reads is known wherever it lies.
        let mut pending: Vec<PathBuf> = kustomizations
            .values()
            .flat_map(|k| k.includes.iter().cloned())
            .collect();
        while let Some(dir) = pending.pop() {
            if kustomizations.contains_key(&dir) {
                continue;
            }
            let Some(file) = FILE_NAMES.iter().map(|n| dir.join(n)).find(|f| f.is_file()) else {
                continue;
            };
            let kustomization = Kustomization::read(&file);
            pending.extend(kustomization.includes.iter().cloned());
            kustomizations.insert(dir, kustomization);
        }
        Tree { kustomizations }
    }

    /// The folders no other kustomization includes, components left out; or the folders
    /// `configured` names (relative to `root`), those that hold no kustomization being problems.
    pub fn roots(&self, root: &Path, configured: Option<&[String]>) -> (Vec<PathBuf>, Vec<String>) {
        if let Some(configured) = configured {
            let mut roots = Vec::new();
            let mut missing = Vec::new();
            for dir in configured {
                let dir = normalize(&root.join(dir));
                if self.kustomizations.contains_key(&dir) {
                    roots.push(dir);
                } else {
                    missing.push(dir.display().to_string());
                }
            }
            return (roots, missing);
        }
        let included: BTreeSet<&PathBuf> = self
            .kustomizations
            .values()
            .flat_map(|k| k.includes.iter())
            .collect();
        let roots = self
            .kustomizations
            .iter()
            .filter(|(dir, k)| !k.component && !included.contains(dir))
            .map(|(dir, _)| dir.clone())
            .collect();
        (roots, Vec::new())
    }

    /// Kustomizations that include each other with no root above them (`reached`: the files the
    /// roots read): never rendered, so each cycle is named.
    pub fn orphan_cycles(&self, reached: &BTreeSet<PathBuf>) -> Vec<Vec<PathBuf>> {
        let mut cycles: Vec<Vec<PathBuf>> = Vec::new();
        for (dir, k) in &self.kustomizations {
            if reached.contains(&k.file) || cycles.iter().any(|c| c.contains(dir)) {
                continue;
            }
            if let Closure::Cycle(cycle) = self.closure(dir) {
                cycles.push(cycle);
            }
        }
        cycles
    }

    /// Every file the kustomization in `dir` reads, following included folders.
    pub fn closure(&self, dir: &Path) -> Closure {
        let mut files = BTreeSet::new();
        let mut stack: Vec<PathBuf> = Vec::new();
        match self.visit(dir, &mut stack, &mut files) {
            Some(stop) => stop,
            None => Closure::Files(files),
        }
    }

    fn visit(
        &self,
        dir: &Path,
        stack: &mut Vec<PathBuf>,
        files: &mut BTreeSet<PathBuf>,
    ) -> Option<Closure> {
        if let Some(at) = stack.iter().position(|d| d == dir) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(dir.to_path_buf());
            return Some(Closure::Cycle(cycle));
        }
        // A folder without a kustomization: kustomize says so when it renders.
        let kustomization = self.kustomizations.get(dir)?;
        if let Some((reference, line)) = kustomization.remote.first() {
            return Some(Closure::Remote(
                kustomization.file.clone(),
                *line,
                reference.clone(),
            ));
        }
        if !files.insert(kustomization.file.clone()) {
            return None; // a base two overlays share: read once
        }
        files.extend(kustomization.reads.iter().cloned());
        stack.push(dir.to_path_buf());
        for included in &kustomization.includes {
            if let Some(stop) = self.visit(included, stack, files) {
                return Some(stop);
            }
        }
        stack.pop();
        None
    }

    /// The kustomization folder `file` is at or below (the nearest), if any: such a file is
    /// kustomize's to read, never a manifest of its own.
    pub fn owner_of(&self, file: &Path) -> Option<&Path> {
        file.ancestors().skip(1).find_map(|dir| {
            self.kustomizations
                .get_key_value(dir)
                .map(|(k, _)| k.as_path())
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn write(dir: &Path, file: &str, text: &str) -> PathBuf {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn roots_closures_components_and_remote_bases() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let base = write(
            d,
            "base/kustomization.yaml",
            "resources: [deploy.yaml]\nconfigMapGenerator:\n  - name: c\n    files: [conf=app.conf]\n    envs: [vars.env]\n",
        );
        write(d, "base/deploy.yaml", "kind: Deployment\n");
        let prod = write(
            d,
            "overlays/prod/kustomization.yaml",
            "resources:\n  - ../../base\ncomponents: [../../comp]\npatches:\n  - path: patch.yaml\n  - patch: |-\n      - op: add\n",
        );
        let comp = write(
            d,
            "comp/kustomization.yaml",
            "kind: Component\npatchesStrategicMerge: [p.yaml]\n",
        );
        let unused = write(d, "unused/kustomization.yaml", "kind: Component\n");
        let remote = write(
            d,
            "remote/kustomization.yaml",
            "resources:\n  - ok.yaml\n  - github.com/org/repo/deploy?ref=v1\n",
        );
        let tree = Tree::read(&[base, prod.clone(), comp, unused, remote.clone()]);
        let (roots, _) = tree.roots(d, None);
        assert_eq!(roots, [d.join("overlays/prod"), d.join("remote")]);
        let Closure::Files(files) = tree.closure(&d.join("overlays/prod")) else {
            panic!()
        };
        let names: Vec<_> = files
            .iter()
            .map(|f| f.strip_prefix(d).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "base/app.conf",
                "base/deploy.yaml",
                "base/kustomization.yaml",
                "base/vars.env",
                "comp/kustomization.yaml",
                "comp/p.yaml",
                "overlays/prod/kustomization.yaml",
                "overlays/prod/patch.yaml"
            ]
        );
        assert_eq!(
            tree.closure(&d.join("remote")),
            Closure::Remote(remote, 3, "github.com/org/repo/deploy?ref=v1".into())
        );
        assert_eq!(
            tree.owner_of(&d.join("unused/x.yaml")),
            Some(d.join("unused").as_path())
        );
        assert_eq!(tree.owner_of(&d.join("plain/x.yaml")), None);
        let (named, missing) = tree.roots(d, Some(&["overlays/prod".into(), "nope".into()]));
        assert_eq!(named, [d.join("overlays/prod")]);
        assert_eq!(missing, [d.join("nope").display().to_string()]);
    }

    #[test]
    fn a_cycle_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let a = write(d, "a/kustomization.yaml", "resources: [../b]\n");
        let b = write(d, "b/kustomization.yaml", "resources: [../a]\n");
        let tree = Tree::read(&[a, b]);
        let (roots, _) = tree.roots(d, None);
        assert!(roots.is_empty());
        let cycles = tree.orphan_cycles(&BTreeSet::new());
        assert_eq!(cycles, [vec![d.join("a"), d.join("b"), d.join("a")]]);
    }
}
