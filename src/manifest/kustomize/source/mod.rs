//! Where a rendered value comes from: the file and line that set a field of a kustomize root's
//! object — an overlay's `replicas:` or `images:` entry, a strategic-merge or JSON 6902 patch (in
//! a file or inline), a generator's literal or source file, a label or annotation a
//! kustomization adds — or, when none of them touches it, the resource document itself.
//!
//! It reads the kustomization files (never renders): from the root down to the kustomization
//! that lists the object's source file, each layer's transformers are looked at in the order
//! kustomize lets them win (the root's own first, then its components, then the layer below;
//! within a layer images, replicas, JSON patches, labels, patches, then the older
//! `patchesStrategicMerge`). Accept edits what this finds, and proves the edit by rendering
//! again, so a guess here can refuse an accept but never write a wrong one.
use std::path::{Path, PathBuf};

use serde_json::Value;

mod trace;

use super::tree::{FILE_NAMES, normalize};
use crate::manifest::edit::documents;
use crate::manifest::edit::path::{self as epath, FieldPath, PathStep};
use crate::manifest::lines::{Step, line_of};

/// Where a kustomization's patch is written: a file of its own, or inline in the kustomization
/// (`patches[index].patch`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchAt {
    File { document: usize },
    Inline { field: &'static str, index: usize },
}

/// What sets a rendered value.
#[derive(Debug, Clone, PartialEq)]
pub enum Setter {
    /// A value of the kustomization itself at `path` (`replicas[0].count`,
    /// `commonLabels.tier`, `configMapGenerator[1].literals[0]`).
    Entry {
        path: FieldPath,
        what: &'static str,
        /// For a generator literal: the key it sets (`KEY=VALUE`).
        literal: Option<String>,
    },
    /// `images[index]` of the kustomization.
    Image { index: usize },
    /// A strategic-merge patch; the field is at the drift path in the patch.
    Patch { at: PatchAt },
    /// A JSON 6902 `add`/`replace` operation (`op` of the list); the field is at `rest` within
    /// the operation's value.
    JsonPatch {
        at: PatchAt,
        op: usize,
        rest: FieldPath,
    },
    /// A generator's file source (`files: [key=path]`): the whole file is the value.
    GeneratorFile { key: String },
    /// A generator's env file: the line `KEY=VALUE`.
    EnvLine { key: String },
}

/// The place that sets a value: the file to show and edit, the line, what it is, and the
/// kustomization it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub file: PathBuf,
    /// 1-based.
    pub line: usize,
    pub setter: Setter,
    pub kustomization: PathBuf,
}

impl Source {
    /// Where it is, as reports show it.
    pub fn place(self) -> crate::manifest::Place {
        crate::manifest::Place {
            what: Some(self.what()),
            file: self.file,
            line: self.line,
        }
    }

    /// What sets it, as the reports say it: `replicas`, `images`, `patch`, …
    pub fn what(&self) -> &'static str {
        match &self.setter {
            Setter::Entry { what, .. } => what,
            Setter::Image { .. } => "images",
            Setter::Patch { .. } => "patch",
            Setter::JsonPatch { .. } => "JSON patch",
            Setter::GeneratorFile { .. } => "generator file",
            Setter::EnvLine { .. } => "generator env file",
        }
    }
}

/// One kustomization, read for tracing.
#[derive(Debug, Clone)]
pub struct Layer {
    pub file: PathBuf,
    pub dir: PathBuf,
    pub text: String,
    pub value: Value,
    /// Layers it includes as resources (folders), by position in [`Trace::layers`].
    resources: Vec<usize>,
    components: Vec<usize>,
    /// Resource files it lists.
    resource_files: Vec<PathBuf>,
    /// Its patches, the one that wins first (see [`Layer::read_patches`]).
    patches: Vec<Patch>,
    /// The generators' env files it reads, with their text.
    env_files: Vec<(PathBuf, String)>,
}

/// A patch of a layer: where it is written, its file (the kustomization for an inline one), its
/// text, and its `target` selector.
#[derive(Debug, Clone)]
struct Patch {
    at: PatchAt,
    file: PathBuf,
    text: String,
    target: Option<Value>,
}

impl Layer {
    fn items<'v>(&'v self, field: &str) -> impl DoubleEndedIterator<Item = (usize, &'v Value)> {
        self.value
            .get(field)
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .enumerate()
    }

    /// The patches, the one that wins first: `patches` (and `patchesJson6902`) from last to
    /// first, then `patchesStrategicMerge` from last to first. Patch files are read now.
    fn read_patches(&self) -> Vec<Patch> {
        let mut found = Vec::new();
        for field in ["patchesJson6902", "patches", "patchesStrategicMerge"] {
            let mut here = Vec::new();
            for (index, item) in self.items(field) {
                let (path, inline, target) = match item {
                    Value::String(text) if field == "patchesStrategicMerge" => {
                        if text.contains('\n') || text.contains(": ") {
                            (None, Some(text.clone()), None)
                        } else {
                            (Some(text.as_str()), None, None)
                        }
                    }
                    Value::Object(map) => (
                        map.get("path").and_then(Value::as_str),
                        map.get("patch").and_then(Value::as_str).map(str::to_owned),
                        map.get("target").cloned(),
                    ),
                    _ => continue,
                };
                match (path, inline) {
                    (Some(path), _) => {
                        let file = normalize(&self.dir.join(path));
                        if let Ok(text) = crate::manifest::walk::read_manifest(&file) {
                            here.push(Patch {
                                at: PatchAt::File { document: 0 },
                                file,
                                text,
                                target,
                            });
                        }
                    }
                    (None, Some(text)) => here.push(Patch {
                        at: PatchAt::Inline { field, index },
                        file: self.file.clone(),
                        text,
                        target,
                    }),
                    (None, None) => {}
                }
            }
            here.reverse();
            found.extend(here);
        }
        found
    }

    /// The env files of the generators, with their text.
    fn read_env_files(&self) -> Vec<(PathBuf, String)> {
        let mut files = Vec::new();
        for field in ["configMapGenerator", "secretGenerator"] {
            for (_, generator) in self.items(field) {
                let envs = generator
                    .get("envs")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .chain(generator.get("env"))
                    .filter_map(Value::as_str);
                for env in envs {
                    let file = normalize(&self.dir.join(env));
                    if let Ok(text) = crate::manifest::walk::read_manifest(&file) {
                        files.push((file, text));
                    }
                }
            }
        }
        files
    }

    /// 1-based line of `steps` in this kustomization.
    fn line(&self, steps: &[Step<'_>]) -> usize {
        line_of(&self.text, steps) + 1
    }
}

/// A root's kustomizations, read from disk, to find where values come from.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub layers: Vec<Layer>,
}

/// The object whose fields are traced: its kind, its rendered name, its source file, and the
/// rendered object.
#[derive(Debug, Clone)]
pub struct Traced<'a> {
    pub kind: &'a str,
    pub name: &'a str,
    pub source_file: &'a Path,
    pub rendered: &'a Value,
}

impl<'a> Traced<'a> {
    /// The rendered object `manifest`, whose body is `rendered`.
    pub fn of(manifest: &'a crate::manifest::ManifestObject, rendered: &'a Value) -> Traced<'a> {
        Traced {
            kind: &manifest.key.kind,
            name: &manifest.key.name,
            source_file: &manifest.file,
            rendered,
        }
    }

    /// True when a patch or entry naming `name` may be this object's: its name, or its name
    /// before a kustomization added a prefix, a suffix or a generator's hash.
    fn named(&self, name: &str) -> bool {
        !name.is_empty() && self.name.contains(name)
    }

    /// True when a patch target (`{kind, name, …}`) may select this object. A name written as a
    /// regular expression is taken to match: the proof by rendering decides.
    fn targeted(&self, target: &Value) -> bool {
        let kind_ok = target
            .get("kind")
            .and_then(Value::as_str)
            .is_none_or(|kind| kind == self.kind);
        let name_ok = target
            .get("name")
            .and_then(Value::as_str)
            .is_none_or(|name| {
                self.named(name) || name.contains(['*', '.', '[', '(', '|', '^', '$', '+', '?'])
            });
        kind_ok && name_ok
    }
}

/// The kustomization file of a folder.
fn kustomization_in(dir: &Path) -> Option<PathBuf> {
    FILE_NAMES.iter().map(|n| dir.join(n)).find(|p| p.is_file())
}

/// The steps of `path` that `value` has, each a key or an item's position in its list (for
/// [`line_of`]).
fn resolve<'p>(value: &Value, path: &'p [PathStep]) -> Vec<Step<'p>> {
    let mut steps = Vec::with_capacity(path.len());
    let mut at = value;
    for step in path {
        match step {
            PathStep::Key(name) => {
                steps.push(Step::Field(name));
                match at.get(name) {
                    Some(next) => at = next,
                    None => break,
                }
            }
            other => {
                let Some(list) = at.as_array() else { break };
                let Some(index) = epath::position(list, other) else {
                    break;
                };
                steps.push(Step::Item(index));
                at = &list[index];
            }
        }
    }
    steps
}

/// The JSON pointer segments of `path` in `value` (items by position), one per step that
/// resolves.
fn pointer_segments(value: &Value, path: &[PathStep]) -> Vec<String> {
    resolve(value, path)
        .into_iter()
        .map(|step| match step {
            Step::Field(name) => name.replace('~', "~0").replace('/', "~1"),
            Step::Item(index) => index.to_string(),
        })
        .collect()
}

/// One document of a YAML text: its position, value, its text and the 0-based line it starts at.
pub struct Document<'t> {
    pub index: usize,
    pub value: Value,
    pub text: &'t str,
    pub first_line: usize,
}

/// The documents of a YAML text that parse and are not empty.
pub fn documents_of(text: &str) -> Vec<Document<'_>> {
    documents::split(text)
        .into_iter()
        .enumerate()
        .filter_map(|(index, range)| {
            let piece = text.get(range.clone())?;
            let value: Value = serde_yaml::from_str(piece).ok()?;
            let first_line = text[..range.start].matches('\n').count();
            (!value.is_null()).then_some(Document {
                index,
                value,
                text: piece,
                first_line,
            })
        })
        .collect()
}

/// The repository and tag of an image reference (`reg:5000/app:1.2@sha256:…` →
/// (`reg:5000/app`, `1.2`, `sha256:…`)).
pub fn split_image(image: &str) -> (&str, Option<&str>, Option<&str>) {
    let (rest, digest) = match image.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (image, None),
    };
    let slash = rest.rfind('/').map_or(0, |at| at + 1);
    match rest[slash..].rfind(':') {
        Some(colon) => (
            &rest[..slash + colon],
            Some(&rest[slash + colon + 1..]),
            digest,
        ),
        None => (rest, None, digest),
    }
}

/// The generator a ConfigMap or Secret comes from in `layer`: (field, index, generator).
fn generator_of<'l>(
    layer: &'l Layer,
    object: &Traced<'_>,
) -> Option<(&'static str, usize, &'l Value)> {
    let field = match object.kind {
        "ConfigMap" => "configMapGenerator",
        "Secret" => "secretGenerator",
        _ => return None,
    };
    layer
        .items(field)
        .filter_map(|(index, generator)| {
            let name = generator.get("name").and_then(Value::as_str)?;
            object.named(name).then_some((index, generator, name.len()))
        })
        .max_by_key(|(_, _, len)| *len)
        .map(|(index, generator, _)| (field, index, generator))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A patch or env file that is a named pipe (or a device, or bigger than the manifest limit)
    /// is left out: reading it would wait for a writer forever, or never end.
    #[test]
    fn a_pipe_named_as_a_patch_or_env_file_is_left_out_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("kustomization.yaml"),
            "resources: [web.yaml]\npatches:\n- path: pipe.yaml\n- path: big.yaml\n\
             configMapGenerator:\n- name: settings\n  envs: [pipe.env]\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("web.yaml"), "kind: ConfigMap\n").unwrap();
        let big = std::fs::File::create(dir.path().join("big.yaml")).unwrap();
        big.set_len(crate::manifest::walk::MAX_FILE_BYTES + 1)
            .unwrap();
        for pipe in ["pipe.yaml", "pipe.env"] {
            let made = std::process::Command::new("mkfifo")
                .arg(dir.path().join(pipe))
                .status()
                .unwrap();
            assert!(made.success());
        }
        let root = dir.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(Trace::read(&root)));
        let trace = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the kustomization was read without waiting on the pipes");
        let layer = &trace.layers[0];
        assert!(layer.patches.is_empty(), "{:?}", layer.patches);
        assert!(layer.env_files.is_empty());
    }

    #[test]
    fn images_split_into_repository_tag_and_digest() {
        assert_eq!(split_image("nginx"), ("nginx", None, None));
        assert_eq!(split_image("nginx:1.25"), ("nginx", Some("1.25"), None));
        assert_eq!(
            split_image("reg:5000/team/app:2@sha256:ab"),
            ("reg:5000/team/app", Some("2"), Some("sha256:ab"))
        );
        assert_eq!(split_image("reg:5000/app"), ("reg:5000/app", None, None));
    }

    #[test]
    fn pointer_segments_put_items_at_their_position() {
        let value = json!({"spec": {"containers": [{"name": "a"}, {"name": "b", "image": "x"}]}});
        let path = FieldPath::keys(&["spec", "containers"])
            .item("name", "b")
            .key("image");
        assert_eq!(
            pointer_segments(&value, path.steps()),
            ["spec", "containers", "1", "image"]
        );
    }
}
