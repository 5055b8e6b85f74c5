//! The kustomization reader: a kustomization file's references (`Kustomization::from_text`), the
//! tree of a checkout's kustomizations, and the trace from a rendered value to the entry that
//! sets it, all read from a folder holding the input as `root/kustomization.yaml` next to a
//! resource, a patch and a base.
use std::path::PathBuf;

use kdrift::manifest::edit::FieldPath;
use kdrift::manifest::kustomize::source::{Trace, Traced};
use kdrift::manifest::kustomize::tree::{Kustomization, Tree};
use serde_json::json;

use super::assert_line_in;

/// The folder the input is written into: `root/` (the input's kustomization, a Deployment, a
/// strategic-merge patch, an env file) and `base/` (a kustomization and its Deployment).
pub struct KustomizeFolder {
    dir: tempfile::TempDir,
}

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.27
";

const PATCH: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
";

impl KustomizeFolder {
    pub fn new() -> std::io::Result<KustomizeFolder> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().join("root");
        let base = dir.path().join("base");
        std::fs::create_dir_all(&root)?;
        std::fs::create_dir_all(&base)?;
        std::fs::write(root.join("deployment.yaml"), DEPLOYMENT)?;
        std::fs::write(root.join("patch.yaml"), PATCH)?;
        std::fs::write(root.join("app.env"), "A=1\nB=two\n")?;
        std::fs::write(base.join("deployment.yaml"), DEPLOYMENT)?;
        std::fs::write(
            base.join("kustomization.yaml"),
            "resources: [deployment.yaml]\nreplicas:\n- name: web\n  count: 4\n",
        )?;
        Ok(KustomizeFolder { dir })
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }
}

/// Any kustomization text gives references or a problem (on a line of the text), never a panic;
/// a traced value's source in the kustomization is on one of its lines.
pub fn kustomization(folder: &KustomizeFolder, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let root = folder.root();
    let file = root.join("kustomization.yaml");
    if std::fs::write(&file, text).is_err() {
        return;
    }
    let kustomization = Kustomization::from_text(&file, text);
    for (reference, line) in &kustomization.remote {
        assert_line_in(text, *line, &format!("remote reference {reference:?}"));
    }
    if let Some(problem) = &kustomization.problem
        && let (_, Some(line)) = problem.place()
    {
        assert_line_in(text, line, problem);
    }

    let base = folder.dir.path().join("base").join("kustomization.yaml");
    let tree = Tree::read(&[file.clone(), base]);
    let (roots, _) = tree.roots(folder.dir.path(), None);
    for found in &roots {
        tree.closure(found);
    }

    let trace = Trace::read(&root);
    let rendered = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "prod-web", "namespace": "shop", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:1.27", "env": [{"name": "A", "value": "1"}]}
        ]}}}
    });
    let source_file = root.join("deployment.yaml");
    let traced = Traced {
        kind: "Deployment",
        name: "prod-web",
        source_file: &source_file,
        rendered: &rendered,
    };
    let containers =
        FieldPath::keys(&["spec", "template", "spec", "containers"]).item("name", "web");
    let paths = [
        FieldPath::keys(&["spec", "replicas"]),
        containers.clone().key("image"),
        containers.key("env").item("name", "A").key("value"),
        FieldPath::keys(&["metadata", "labels", "app"]),
        FieldPath::keys(&["metadata", "namespace"]),
        FieldPath::keys(&["metadata", "annotations", "note"]),
    ];
    for path in &paths {
        if let Some(source) = trace.locate(&traced, path) {
            assert!(
                source.line >= 1,
                "{path}: line 0 of {}",
                source.file.display()
            );
            if source.file == file {
                assert_line_in(text, source.line, &format!("the source of {path}"));
            }
        }
    }
    trace.patch_for(&traced);
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings-5f7c"}, "data": {"A": "1"}});
    let traced = Traced {
        kind: "ConfigMap",
        name: "settings-5f7c",
        source_file: &file,
        rendered: &config_map,
    };
    if let Some(source) = trace.locate(&traced, &FieldPath::keys(&["data", "A"]))
        && source.file == file
    {
        assert_line_in(text, source.line, &"the source of data.A");
    }
}
