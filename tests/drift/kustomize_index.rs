//! Kustomize roots in the manifest index: found, rendered with the user's kustomize (kubectl
//! kustomize here), traced to the files that define each object, and the files below a
//! kustomization never read as manifests of their own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::kustomize_fixture;

use std::path::Path;

use kdrift::manifest::kustomize::Selection;
use kdrift::manifest::{ManifestIndex, ObjectKey, Problem};
use kustomize_fixture::DEPLOYMENT;

fn write(dir: &Path, file: &str, text: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
}

/// The shared tree, an unused component, and a plain folder beside them.
fn tree(dir: &Path) {
    for (path, text) in kustomize_fixture::FILES {
        write(dir, path, text);
    }
    write(
        dir,
        "components/unused/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [extra.yaml]\n",
    );
    write(
        dir,
        "components/unused/extra.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n",
    );
    write(
        dir,
        "plain/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n  namespace: tools\n",
    );
}

fn keys(index: &ManifestIndex) -> Vec<String> {
    let mut keys: Vec<String> = index.objects().map(|o| o.key.to_string()).collect();
    keys.sort();
    keys
}

fn errors(index: &ManifestIndex) -> Vec<String> {
    index
        .problems()
        .iter()
        .filter(|p| !p.is_note())
        .map(|p| p.to_string())
        .collect()
}

#[test]
fn roots_are_rendered_and_their_files_are_not_read_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    tree(dir);
    let index = ManifestIndex::load(dir, "default");
    assert!(errors(&index).is_empty(), "{:?}", index.problems());
    let keys = keys(&index);
    // The overlays' rendered objects and the plain file: not the base's raw objects, not the
    // unused component's ConfigMap, no duplicate of the patch.
    assert_eq!(keys.len(), 7, "{keys:?}");
    for expected in [
        "deployment/prod/web",
        "service/prod/web",
        "deployment/staging/stg-web",
        "service/staging/stg-web",
        "configmap/tools/plain",
    ] {
        assert!(keys.iter().any(|k| k == expected), "{expected}: {keys:?}");
    }
    assert!(
        keys.iter()
            .any(|k| k.starts_with("configmap/prod/web-config-")),
        "the generator's hash suffix: {keys:?}"
    );
    assert!(!keys.iter().any(|k| k.ends_with("/extra")), "{keys:?}");

    let web = index
        .objects()
        .find(|o| o.key.kind == "Deployment" && o.key.namespace == "prod")
        .unwrap();
    let body = web.body.to_value();
    assert_eq!(body["spec"]["replicas"], 4);
    assert_eq!(
        body["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );
    assert_eq!(body["metadata"]["labels"]["team"], "shop");
    assert!(
        body["metadata"].get("annotations").is_none(),
        "kdrift's origin annotation is removed: {body}"
    );
    // Traced to the base document that defines it, and marked as rendered by the prod root.
    assert_eq!(&*web.file, dir.join("base/deployment.yaml").as_path());
    assert_eq!(web.line, 1);
    assert_eq!(
        web.rendered.as_deref(),
        Some(dir.join("overlays/prod/kustomization.yaml").as_path())
    );
    let service = index
        .objects()
        .find(|o| o.key.kind == "Service" && o.key.namespace == "staging")
        .unwrap();
    assert_eq!(service.line, 19, "the Service's document in the base file");

    // The unused component is a note, not an error.
    let notes: Vec<String> = index
        .problems()
        .iter()
        .filter(|p| p.is_note())
        .map(|p| p.to_string())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("components/unused") && n.contains("no kustomize root uses")),
        "{notes:?}"
    );
}

#[test]
fn an_overlay_can_be_chosen_and_a_changed_file_renders_its_roots_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    tree(dir);
    let mut index = ManifestIndex::load_with(
        dir,
        "default",
        Selection {
            overlay: Some(dir.join("overlays/prod")),
            context: None,
            ..Selection::default()
        },
    );
    let keys_now = keys(&index);
    assert!(
        !keys_now.iter().any(|k| k.contains("staging")),
        "{keys_now:?}"
    );
    assert!(
        index
            .problems()
            .iter()
            .any(|p| p.to_string().contains("overlays/prod (from --overlay)")),
        "{:?}",
        index.problems()
    );

    // The base's replicas change nothing in prod (its overlay sets them); the image does.
    write(
        dir,
        "base/deployment.yaml",
        &DEPLOYMENT.replace("image: nginx:1.25", "image: httpd:2"),
    );
    let touched = index.reload_file(&dir.join("base/deployment.yaml"));
    assert!(
        touched.contains(&ObjectKey::new("apps", "Deployment", "prod", "web")),
        "{touched:?}"
    );
    let web = index
        .objects()
        .find(|o| o.key.kind == "Deployment")
        .unwrap();
    assert_eq!(
        web.body.to_value()["spec"]["template"]["spec"]["containers"][0]["image"],
        "httpd:2"
    );

    // .kdrift.yaml names roots when no overlay is given.
    write(
        dir,
        ".kdrift.yaml",
        "kustomize:\n  contexts:\n    kind-staging: overlays/staging\n",
    );
    let index = ManifestIndex::load_with(
        dir,
        "default",
        Selection {
            overlay: None,
            context: Some("kind-staging".into()),
            ..Selection::default()
        },
    );
    let keys_now = keys(&index);
    assert!(keys_now.iter().all(|k| !k.contains("prod")), "{keys_now:?}");
    assert!(
        keys_now.iter().any(|k| k.ends_with("stg-web")),
        "{keys_now:?}"
    );
}

#[test]
fn failures_remote_bases_and_cycles_are_named_and_the_rest_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    tree(dir);
    write(
        dir,
        "broken/kustomization.yaml",
        "resources:\n  - missing.yaml\n",
    );
    write(
        dir,
        "remote/kustomization.yaml",
        "resources:\n  - https://github.com/org/repo/deploy.yaml\n",
    );
    write(dir, "loop-a/kustomization.yaml", "resources: [../loop-b]\n");
    write(dir, "loop-b/kustomization.yaml", "resources: [../loop-a]\n");
    write(dir, "empty/kustomization.yaml", "resources: []\n");
    let index = ManifestIndex::load(dir, "default");
    let problems: Vec<String> = index.problems().iter().map(|p| p.to_string()).collect();
    let has = |needle: &str| problems.iter().any(|p| p.contains(needle));
    assert!(
        has("broken/kustomization.yaml: skipped:") && has("missing.yaml"),
        "{problems:?}"
    );
    assert!(
        has(
            "remote/kustomization.yaml: skipped: reads the remote https://github.com/org/repo/deploy.yaml"
        ),
        "{problems:?}"
    );
    assert!(has("include each other"), "{problems:?}");
    // A note, said as one where it is shown (not inside its own text).
    assert!(
        index.problems().iter().any(|p| p.is_note()
            && p.to_string()
                .ends_with("empty/kustomization.yaml: the kustomization renders no objects")),
        "{problems:?}"
    );
    assert_eq!(keys(&index).len(), 7, "the rest is still read");
    assert!(matches!(
        index
            .problems()
            .iter()
            .find(|p| p.to_string().contains("broken")),
        Some(Problem::Skipped { .. })
    ));
}

#[test]
fn two_roots_rendering_one_object_are_a_duplicate_with_the_way_out() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    tree(dir);
    write(
        dir,
        "overlays/prod-copy/kustomization.yaml",
        "namespace: prod\nresources:\n  - ../../base\n",
    );
    let index = ManifestIndex::load(dir, "default");
    let duplicates: Vec<String> = index
        .problems()
        .iter()
        .filter(|p| matches!(p, Problem::Duplicate { .. }))
        .map(|p| p.to_string())
        .collect();
    assert_eq!(duplicates.len(), 3, "{duplicates:?}");
    assert!(
        duplicates[0].contains("overlays/prod/kustomization.yaml:1")
            && duplicates[0].contains("overlays/prod-copy/kustomization.yaml:1")
            && duplicates[0].contains("pick one with --overlay DIR"),
        "{duplicates:?}"
    );
    // The root itself named as the overlay reads as ".".
    let index = ManifestIndex::load_with(
        &dir.join("overlays/prod"),
        "default",
        Selection {
            overlay: Some(dir.join("overlays/prod")),
            context: None,
            ..Selection::default()
        },
    );
    assert!(
        index.problems().iter().any(|p| p
            .to_string()
            .contains("kustomize roots rendered: . (from --overlay)")),
        "{:?}",
        index.problems()
    );
    // Its base lies outside the folder read, and is still traced to.
    let web = index
        .objects()
        .find(|o| o.key.kind == "Deployment")
        .unwrap();
    assert_eq!(&*web.file, dir.join("base/deployment.yaml").as_path());
}

/// Roots rendered several to a kustomize run give what each renders alone: the same objects,
/// each traced to the same file (the origins of a batch are relative to the batch's own folder).
/// A root that fails makes its batch fail, and is then named alone while the others render.
#[test]
fn roots_rendered_in_a_batch_are_what_each_renders_alone() {
    use kdrift::manifest::kustomize::render::{self, Rendered};
    use std::collections::BTreeSet;
    use std::path::PathBuf;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    tree(&root);
    write(
        &root,
        "overlays/broken/kustomization.yaml",
        "resources: [missing.yaml]\n",
    );
    let renderer = render::renderer().unwrap();
    let files = |dir: &str| -> BTreeSet<PathBuf> {
        let mut files = BTreeSet::new();
        for entry in walk(&root) {
            if entry.starts_with(root.join("base"))
                || entry.starts_with(root.join("components/team"))
                || entry.starts_with(root.join(dir))
            {
                files.insert(entry);
            }
        }
        files
    };
    let roots: Vec<(PathBuf, BTreeSet<PathBuf>)> =
        ["overlays/prod", "overlays/staging", "overlays/broken"]
            .iter()
            .map(|d| (root.join(d), files(d)))
            .collect();
    let objects = |root_dir: &Path, rendered: &Rendered| -> Vec<(String, String, String)> {
        let parsed = kdrift::manifest::kustomize::objects_of(
            root_dir,
            &root_dir.join("kustomization.yaml"),
            rendered,
            "default",
        );
        let mut out: Vec<(String, String, String)> = parsed
            .objects
            .iter()
            .map(|o| {
                (
                    o.key.to_string(),
                    serde_json::to_string(&o.body.to_value()).unwrap(),
                    format!("{}:{}", o.file.display(), o.line),
                )
            })
            .collect();
        out.sort();
        out
    };
    // Two roots: one kustomize run, whose origins are relative to the batch's folder.
    let together = render::render_roots(renderer, &roots[..2], &|_| false);
    assert_eq!(together.len(), 2);
    for ((dir, files), batched) in roots.iter().zip(&together) {
        let batched = batched.as_ref().unwrap();
        let alone = render::render(renderer, dir, files).unwrap();
        assert_ne!(
            batched.origins.as_deref(),
            Some(dir.as_path()),
            "rendered in a batch"
        );
        assert_eq!(alone.origins.as_deref(), Some(dir.as_path()));
        let (b, a) = (objects(dir, batched), objects(dir, &alone));
        assert!(!b.is_empty());
        assert_eq!(b, a, "{}", dir.display());
    }
    // A root that fails fails its batch: each is then rendered alone, the failure named.
    let mixed = [roots[0].clone(), roots[2].clone()];
    let results = render::render_roots(renderer, &mixed, &|_| false);
    let prod = results[0].as_ref().unwrap();
    assert_eq!(prod.origins.as_deref(), Some(roots[0].0.as_path()));
    assert_eq!(
        objects(&roots[0].0, prod).len(),
        objects(&roots[0].0, together[0].as_ref().unwrap()).len()
    );
    let broken = results[1].as_ref().unwrap_err();
    assert!(broken.contains("missing.yaml"), "{broken}");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
