//! What the manifests folder gave, said where it is not what one expects: nothing read at all
//! (and why), and the sub-folders read that `kubectl apply -f DIR` would not read.
use std::collections::BTreeMap;

use super::{ManifestIndex, Problem};

/// At most this many sub-folders are named in the note; the others are counted.
const NAMED_FOLDERS: usize = 6;

impl ManifestIndex {
    /// When no object was read at all, why, as the end of a sentence: `3 files are Helm
    /// templates (kdrift reads manifests as they are written; render the chart to a folder)`;
    /// `None` when some object was read.
    pub fn nothing_read(&self) -> Option<String> {
        if !self.is_empty() {
            return None;
        }
        let problems = self.problems();
        let templates = problems
            .iter()
            .filter(|p| matches!(p, Problem::Template { .. }))
            .count();
        let unreadable = problems.iter().filter(|p| !p.is_note()).count();
        let mut why = Vec::new();
        if !self.charts_found.is_empty() {
            why.push(format!(
                "{} Helm chart(s) found, none rendered (a chart is rendered as a release in the cluster, an Argo CD Application, a Flux HelmRelease or .kdrift.yaml's helm.charts names it, and none does)",
                self.charts_found.len()
            ));
        }
        if templates > 0 {
            why.push(format!(
                "{templates} file(s) are Helm templates, which kdrift does not render (it reads manifests as they are written: render the chart into a folder and pass --manifests DIR)"
            ));
        }
        if unreadable > 0 {
            why.push(format!(
                "{unreadable} problem(s) kept files from being read (see the problems)"
            ));
        }
        if why.is_empty() {
            why.push("it holds no YAML file with a Kubernetes object".to_owned());
        }
        Some(why.join("; "))
    }

    /// kdrift reads a folder with its sub-folders, as `kubectl apply -R -f DIR` does; without
    /// `-R` kubectl reads only the files directly in it. A note names the sub-folders whose files
    /// gave objects, so a folder kubectl would not apply is seen (a `tests/` or `examples/`
    /// folder shows up as missing objects otherwise, with no word why). Kustomize roots' and
    /// GitOps-mapped folders' files are read as their tool reads them, and are not counted.
    pub(super) fn subfolder_note(&self) -> Option<Problem> {
        let mut folders: BTreeMap<String, usize> = BTreeMap::new();
        for (path, parsed) in &self.files {
            let plain = parsed.objects.iter().all(|o| o.rendered.is_none());
            if parsed.objects.is_empty() || !plain || self.selection.app_of(path).is_some() {
                continue;
            }
            let Ok(relative) = path.strip_prefix(&self.root) else {
                continue;
            };
            let mut parts = relative.components();
            let (Some(first), Some(_)) = (parts.next(), parts.next()) else {
                continue;
            };
            *folders
                .entry(first.as_os_str().to_string_lossy().into_owned())
                .or_default() += 1;
        }
        if folders.is_empty() {
            return None;
        }
        let files: usize = folders.values().sum();
        let mut named: Vec<String> = folders
            .keys()
            .take(NAMED_FOLDERS)
            .map(|f| format!("{f}/"))
            .collect();
        if folders.len() > NAMED_FOLDERS {
            named.push(format!("and {} more", folders.len() - NAMED_FOLDERS));
        }
        Some(Problem::Note {
            file: self.root.clone(),
            message: format!(
                "{files} manifest file(s) in sub-folders ({}) are read, as kubectl apply -R -f reads a folder; kubectl apply -f DIR without -R would not read them",
                named.join(", ")
            ),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::path::Path;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn config_map(name: &str) -> String {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n")
    }

    /// A folder read with its sub-folders says so, naming them; a flat folder says nothing.
    #[test]
    fn sub_folders_kubectl_would_not_read_are_named_in_a_note() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "top.yaml", &config_map("top"));
        let flat = ManifestIndex::load(dir.path(), "default");
        assert!(flat.problems().is_empty(), "{:?}", flat.problems());

        write(dir.path(), "tests/fixture.yaml", &config_map("fixture"));
        write(dir.path(), "apps/web/deploy.yaml", &config_map("web"));
        write(dir.path(), "apps/api.yaml", &config_map("api"));
        write(dir.path(), "docs/readme.yaml", "just: yaml\n");
        let index = ManifestIndex::load(dir.path(), "default");
        let notes: Vec<String> = index
            .problems()
            .iter()
            .filter(|p| p.is_note())
            .map(|p| p.to_string())
            .collect();
        assert_eq!(
            notes,
            [format!(
                "{}: 3 manifest file(s) in sub-folders (apps/, tests/) are read, as kubectl apply -R -f reads a folder; kubectl apply -f DIR without -R would not read them",
                dir.path().display()
            )]
        );
    }
}
