//! Helm releases in the index: each release's manifest (what helm applied) is parsed as the
//! desired state of the objects it names, in the release's namespace where one names none, and
//! held under the release's source (`helm:NS/RELEASE rev N (chart NAME-VERSION)`) in place of
//! a file. Releases come from the cluster (`cluster/helm.rs`) and are set again whenever their
//! records change; the files of the checkout are untouched by it.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::parse::{ParsedFile, parse_file_sharing};
use super::tree::Names;
use super::{ManifestIndex, ObjectKey, Problem};
use crate::helm::{Release, Releases};

/// The objects of one release's manifest, marked as the release's.
pub fn release_objects(release: &Arc<Release>, names: &mut Names) -> ParsedFile {
    let source: Arc<Path> = Arc::from(PathBuf::from(release.source()).as_path());
    let mut parsed = parse_file_sharing(
        &source,
        &Arc::from(release.manifest.as_str()),
        &release.namespace,
        names,
    );
    for object in &mut parsed.objects {
        let mut body = object.body.to_value();
        release.as_applied(&mut body);
        object.body = names.pack(&body);
        object.helm = Some(Arc::clone(release));
        // No text of it is on disk: the span reads nothing, and no digest matches it.
        object.doc_span = 0..0;
        object.digest = 0;
    }
    parsed
}

impl ManifestIndex {
    /// Sets the cluster's Helm releases (replacing those set before) and returns the keys whose
    /// desired state may have changed: those of the releases before and now.
    pub fn set_releases(&mut self, releases: &Releases) -> Vec<ObjectKey> {
        let mut touched: Vec<ObjectKey> = Vec::new();
        for path in std::mem::take(&mut self.helm_files) {
            if let Some(parsed) = self.files.remove(&path) {
                touched.extend(parsed.objects.into_iter().map(|o| o.key));
            }
        }
        let mut names = Names::default();
        self.helm_pending.clear();
        for release in &releases.releases {
            if let Some(pending) = &release.pending {
                let parsed = release_objects(pending, &mut names);
                self.helm_pending.extend(
                    parsed
                        .objects
                        .into_iter()
                        .map(|object| (object.key.clone(), object)),
                );
            }
            let parsed = release_objects(release, &mut names);
            let path = PathBuf::from(release.source());
            self.helm_files.insert(path.clone());
            self.files.insert(path, parsed);
        }
        self.helm_problems = releases
            .problems
            .iter()
            .map(|line| match line.split_once(": ") {
                Some((record, reason)) => Problem::Skipped {
                    file: PathBuf::from(record),
                    reason: format!("a Helm release record that does not decode: {reason}"),
                },
                None => Problem::Skipped {
                    file: PathBuf::from("helm"),
                    reason: line.clone(),
                },
            })
            .chain(releases.unread.iter().map(|why| Problem::Skipped {
                file: PathBuf::from("helm"),
                reason: why.clone(),
            }))
            .collect();
        self.releases = releases.releases.clone();
        self.rebuild();
        touched.extend(
            self.helm_files
                .iter()
                .filter_map(|path| self.files.get(path))
                .flat_map(|parsed| parsed.objects.iter().map(|o| o.key.clone())),
        );
        touched.sort();
        touched.dedup();
        touched
    }

    /// The object `key` as the revision helm is applying now sets it (a release
    /// `pending-upgrade` or `pending-rollback`), if helm is at work on its release.
    pub fn helm_pending(&self, key: &ObjectKey) -> Option<&super::ManifestObject> {
        self.helm_pending.get(key)
    }

    /// True when `path` holds a Helm release's objects rather than a file of the checkout.
    pub fn is_release(&self, path: &Path) -> bool {
        self.helm_files.contains(path)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::helm::{ChartMeta, Status};

    fn release(revision: u64, manifest: &str) -> Arc<Release> {
        Arc::new(Release {
            name: "web".into(),
            namespace: "shop".into(),
            revision,
            status: Status::Deployed,
            description: String::new(),
            last_deployed: None,
            chart: ChartMeta {
                name: "web".into(),
                version: "1.0.0".into(),
                app_version: None,
            },
            config: serde_json::json!({}),
            manifest: manifest.into(),
            hooks: Vec::new(),
            apply_method: None,
            newer: None,
            pending: None,
        })
    }

    const MANIFEST: &str = "---\n# Source: web/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n---\n# Source: web/templates/other.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: elsewhere\n";

    #[test]
    fn a_release_s_objects_take_its_namespace_unless_they_name_one() {
        let mut index = ManifestIndex::default();
        let touched = index.set_releases(&Releases {
            releases: vec![release(2, MANIFEST)],
            problems: Vec::new(),
            unread: Vec::new(),
        });
        let keys: Vec<String> = touched.iter().map(|k| k.to_string()).collect();
        assert_eq!(keys.len(), 2, "{keys:?}");
        let web = index
            .get(&ObjectKey::new("apps", "Deployment", "shop", "web"))
            .unwrap();
        assert_eq!(
            web.file.display().to_string(),
            "helm:shop/web rev 2 (chart web-1.0.0)"
        );
        assert_eq!(web.line, 3);
        assert_eq!(web.helm.as_ref().unwrap().revision, 2);
        assert!(web.read_text().is_none());
        assert!(
            index
                .get(&ObjectKey::new("", "ConfigMap", "elsewhere", "settings"))
                .is_some()
        );
    }

    #[test]
    fn a_new_revision_replaces_the_old_and_touches_both() {
        let mut index = ManifestIndex::default();
        index.set_releases(&Releases {
            releases: vec![release(1, MANIFEST)],
            problems: Vec::new(),
            unread: Vec::new(),
        });
        let only_web =
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n";
        let touched = index.set_releases(&Releases {
            releases: vec![release(2, only_web)],
            problems: Vec::new(),
            unread: Vec::new(),
        });
        assert_eq!(
            touched.len(),
            2,
            "the ConfigMap left the release: {touched:?}"
        );
        assert_eq!(index.len(), 1);
        let web = index
            .get(&ObjectKey::new("apps", "Deployment", "shop", "web"))
            .unwrap();
        assert_eq!(web.body.to_value()["spec"]["replicas"], 3);
    }

    #[test]
    fn a_record_that_does_not_decode_is_a_problem_naming_it() {
        let mut index = ManifestIndex::default();
        index.set_releases(&Releases {
            releases: Vec::new(),
            problems: vec![
                "secret/shop/sh.helm.release.v1.web.v3: its gzip stream is broken".into(),
            ],
            unread: Vec::new(),
        });
        let problems: Vec<String> = index.problems().iter().map(|p| p.to_string()).collect();
        assert_eq!(
            problems,
            [
                "secret/shop/sh.helm.release.v1.web.v3: skipped: a Helm release record that does not decode: its gzip stream is broken"
            ]
        );
    }
}
