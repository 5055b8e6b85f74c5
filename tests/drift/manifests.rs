//! Loading a manifests folder as a user keeps one: nested folders, `.git`, hidden folders,
//! symlinks, binary and huge files, malformed YAML, duplicates, `.kdrift.yaml`, and re-reading
//! one changed file.
use std::fs;
use std::path::Path;

use kdrift::manifest::{ManifestIndex, ObjectKey, Problem};

fn deployment(name: &str, namespace: Option<&str>) -> String {
    let ns = namespace
        .map(|ns| format!("  namespace: {ns}\n"))
        .unwrap_or_default();
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n{ns}spec:\n  replicas: 1\n"
    )
}

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

fn keys(index: &ManifestIndex) -> Vec<String> {
    let mut keys: Vec<String> = index.objects().map(|o| o.key.to_string()).collect();
    keys.sort();
    keys
}

#[test]
fn loads_yaml_recursively_and_skips_what_is_not_a_manifest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "apps/web.yaml", &deployment("web", Some("shop")));
    write(
        root,
        "apps/deep/er/api.yml",
        &format!(
            "{}---\n{}",
            deployment("api", None),
            deployment("worker", Some("jobs"))
        ),
    );
    write(
        root,
        "notes.yaml",
        "title: not a kubernetes object\nitems: [1, 2]\n",
    );
    write(root, "README.md", &deployment("readme", None));
    write(root, ".git/config.yaml", &deployment("in-git", None));
    write(root, ".hidden/x.yaml", &deployment("hidden", None));
    fs::write(root.join("binary.yaml"), b"apiVersion: v1\0\x01\x02").expect("write");
    let big = fs::File::create(root.join("huge.yaml")).expect("create");
    big.set_len(11 * 1024 * 1024).expect("set_len");
    let outside = tempfile::tempdir().expect("tempdir");
    write(outside.path(), "secret.yaml", &deployment("outside", None));
    std::os::unix::fs::symlink(outside.path().join("secret.yaml"), root.join("link.yaml"))
        .expect("symlink");
    std::os::unix::fs::symlink(root.join("apps/web.yaml"), root.join("apps/alias.yaml"))
        .expect("symlink");

    let index = ManifestIndex::load(root, "team");
    // The in-root symlink is web.yaml itself: one file, not a duplicate of its object.
    assert_eq!(
        keys(&index),
        [
            "deployment/jobs/worker",
            "deployment/shop/web",
            "deployment/team/api"
        ]
    );
    let api = index
        .get(&ObjectKey::new("apps", "Deployment", "team", "api"))
        .expect("api");
    assert_eq!(
        (
            api.file.ends_with("apps/deep/er/api.yml"),
            api.document(),
            api.line
        ),
        (true, 0, 1)
    );
    let worker = index
        .get(&ObjectKey::new("apps", "Deployment", "jobs", "worker"))
        .expect("worker");
    assert_eq!((worker.document(), worker.line), (1, 8));

    let problems: Vec<String> = index.problems().iter().map(|p| p.to_string()).collect();
    let has = |needle: &str| problems.iter().any(|p| p.contains(needle));
    assert!(has("binary.yaml: skipped: binary file"), "{problems:?}");
    assert!(
        has(
            "huge.yaml: skipped: 11534336 bytes (11.0 MiB), over the 10 MiB limit on a manifest file"
        ),
        "{problems:?}"
    );
    assert!(
        has("link.yaml: skipped: symlink leaves the manifests folder"),
        "{problems:?}"
    );
    assert!(!has("is also defined at"), "{problems:?}");
    // And a note that sub-folders were read, as kubectl apply -R reads them.
    assert!(
        has("in sub-folders (") && has("kubectl apply -f DIR without -R would not read them"),
        "{problems:?}"
    );
    assert_eq!(problems.len(), 4, "{problems:?}");
    let web = index
        .get(&ObjectKey::new("apps", "Deployment", "shop", "web"))
        .expect("web");
    assert!(
        web.file.ends_with("apps/web.yaml"),
        "the file, not the link"
    );
}

#[test]
fn malformed_yaml_is_named_with_file_and_line_and_the_rest_loads() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "ok.yaml", &deployment("ok", None));
    write(
        dir.path(),
        "bad.yaml",
        &format!(
            "{}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {{a: [b}}\n",
            deployment("first", None)
        ),
    );
    let index = ManifestIndex::load(dir.path(), "default");
    assert_eq!(
        keys(&index),
        ["deployment/default/first", "deployment/default/ok"]
    );
    let problems = index.problems();
    let [Problem::Malformed { file, line, .. }] = problems.as_slice() else {
        panic!("{problems:?}")
    };
    assert!(file.ends_with("bad.yaml"));
    assert_eq!(*line, 12, "{}", problems[0]);
}

#[test]
fn the_same_object_in_two_files_names_both_places() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.yaml", &deployment("web", None));
    write(
        dir.path(),
        "b.yaml",
        &format!("# copy\n\n{}", deployment("web", Some("default"))),
    );
    let index = ManifestIndex::load(dir.path(), "default");
    let problems = index.problems();
    let [Problem::Duplicate { key, first, second }] = problems.as_slice() else {
        panic!("{problems:?}")
    };
    assert_eq!(key.to_string(), "deployment/default/web");
    assert!(first.0.ends_with("a.yaml") && first.1 == 1);
    assert!(second.0.ends_with("b.yaml") && second.1 == 3);
    assert!(index.get(key).is_some_and(|o| o.file.ends_with("a.yaml")));
}

#[test]
fn reloading_one_file_updates_the_index_and_names_the_touched_objects() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.yaml", &deployment("web", None));
    write(dir.path(), "b.yaml", &deployment("api", None));
    let mut index = ManifestIndex::load(dir.path(), "default");
    let a = dir.path().join("a.yaml");

    write(dir.path(), "a.yaml", &deployment("web2", None));
    let touched: Vec<String> = index
        .reload_file(&a)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        touched,
        ["deployment/default/web", "deployment/default/web2"]
    );
    assert_eq!(
        keys(&index),
        ["deployment/default/api", "deployment/default/web2"]
    );

    fs::remove_file(&a).expect("rm");
    index.reload_file(&a);
    assert_eq!(keys(&index), ["deployment/default/api"]);

    write(dir.path(), "new/c.yaml", &deployment("api", None));
    index.reload_file(&dir.path().join("new/c.yaml"));
    let problems = index.problems();
    let not_notes: Vec<_> = problems.iter().filter(|p| !p.is_note()).collect();
    assert_eq!(not_notes.len(), 1, "a duplicate now: {problems:?}");
    // new/ is a sub-folder: said in a note.
    assert_eq!(problems.len(), 2, "{problems:?}");

    write(
        dir.path(),
        ".kdrift.yaml",
        "appliers: [bot]\nignore:\n- paths: [nope]\n",
    );
    index.reload_file(&dir.path().join(".kdrift.yaml"));
    assert_eq!(index.config.appliers, ["bot"]);
    assert!(
        index
            .problems()
            .iter()
            .any(|p| matches!(p, Problem::BadConfig { line: 3, .. })),
        "{:?}",
        index.problems()
    );
}

/// A manifest named by `generateName` alone cannot be paired with a live object: it is not
/// compared, and a note says so, naming its line, instead of a silent skip.
#[test]
fn a_generate_name_manifest_is_noted_not_skipped_silently() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "jobs.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: migrate-\nspec: {}\n",
    );
    let index = ManifestIndex::load(dir.path(), "default");
    assert!(keys(&index).is_empty());
    let notes: Vec<String> = index
        .problems()
        .iter()
        .filter(|p| p.is_note())
        .map(|p| p.to_string())
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].ends_with(
            "jobs.yaml: line 1: the Job with generateName \"migrate-\" and no name is not compared: the server names it when it is created (kubectl create; kubectl apply refuses it), so no live object can be matched to it"
        ),
        "{notes:?}"
    );
}
