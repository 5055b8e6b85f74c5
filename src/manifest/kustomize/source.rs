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
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

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

impl Trace {
    /// The generator of the kustomization `file` that makes `object`: its list
    /// (`configMapGenerator`, `secretGenerator`) and its `name:`.
    pub fn generator_named(
        &self,
        object: &Traced<'_>,
        file: &Path,
    ) -> Option<(&'static str, String)> {
        let layer = self.layers.iter().find(|l| l.file == file)?;
        let (field, _, generator) = generator_of(layer, object)?;
        let name = generator.get("name").and_then(Value::as_str)?;
        Some((field, name.to_owned()))
    }

    /// Reads the kustomization of `root` (a folder) and every one it includes.
    pub fn read(root: &Path) -> Trace {
        let mut trace = Trace::default();
        let mut seen = BTreeSet::new();
        trace.read_layer(&normalize(root), &mut seen);
        trace
    }

    fn read_layer(&mut self, dir: &Path, seen: &mut BTreeSet<PathBuf>) -> Option<usize> {
        if let Some(at) = self.layers.iter().position(|l| l.dir == dir) {
            return Some(at);
        }
        if !seen.insert(dir.to_path_buf()) {
            return None;
        }
        let file = kustomization_in(dir)?;
        let text = crate::manifest::walk::read_manifest(&file).ok()?;
        let value: Value = serde_yaml::from_str(&text).ok()?;
        let at = self.layers.len();
        self.layers.push(Layer {
            file,
            dir: dir.to_path_buf(),
            text,
            value: value.clone(),
            resources: Vec::new(),
            components: Vec::new(),
            resource_files: Vec::new(),
            patches: Vec::new(),
            env_files: Vec::new(),
        });
        let references = |field: &str| -> Vec<PathBuf> {
            value
                .get(field)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|r| normalize(&dir.join(r)))
                .collect()
        };
        let mut resources = Vec::new();
        let mut files = Vec::new();
        for target in references("resources")
            .into_iter()
            .chain(references("bases"))
        {
            if target.is_dir() {
                resources.extend(self.read_layer(&target, seen));
            } else {
                files.push(target);
            }
        }
        let mut components = Vec::new();
        for target in references("components") {
            if target.is_dir() {
                components.extend(self.read_layer(&target, seen));
            }
        }
        let layer = &mut self.layers[at];
        layer.resources = resources;
        layer.components = components;
        layer.resource_files = files;
        layer.patches = layer.read_patches();
        layer.env_files = layer.read_env_files();
        Some(at)
    }

    /// The layers from the root to the one whose resources (or generators) give `source`.
    fn path_to(&self, at: usize, source: &Path, seen: &mut Vec<usize>) -> Option<Vec<usize>> {
        if seen.contains(&at) {
            return None;
        }
        seen.push(at);
        let layer = self.layers.get(at)?;
        if layer.file == source || layer.resource_files.iter().any(|f| f == source) {
            return Some(vec![at]);
        }
        for &child in layer.resources.iter().chain(&layer.components) {
            if let Some(mut path) = self.path_to(child, source, seen) {
                path.insert(0, at);
                return Some(path);
            }
        }
        None
    }

    /// The layers whose transformers apply to `object`, the one that wins first: each layer on
    /// the way from the root to the source, preceded by its components not on that way.
    fn candidates(&self, source: &Path) -> Vec<usize> {
        if self.layers.is_empty() {
            return Vec::new();
        }
        let path = self
            .path_to(0, source, &mut Vec::new())
            .unwrap_or_else(|| vec![0]);
        let mut order = Vec::new();
        for &at in &path {
            self.push_with_components(at, &path, &mut order);
        }
        order
    }

    fn push_with_components(&self, at: usize, path: &[usize], order: &mut Vec<usize>) {
        if order.contains(&at) {
            return;
        }
        order.push(at);
        for &component in self.layers[at].components.iter().rev() {
            if !path.contains(&component) {
                self.push_with_components(component, path, order);
            }
        }
    }

    /// The place that sets `path` of `object`, or `None` when no kustomization touches it (the
    /// resource document sets it, or nothing does).
    pub fn locate(&self, object: &Traced<'_>, path: &FieldPath) -> Option<Source> {
        self.candidates(object.source_file)
            .into_iter()
            .find_map(|at| self.in_layer(&self.layers[at], object, path))
    }

    /// The root's kustomization, where a patch for a value no file sets goes.
    pub fn root(&self) -> Option<&Layer> {
        self.layers.first()
    }

    /// A strategic-merge patch file of the root's kustomization that selects `object` by its
    /// kind and name: (file, document), where a field added live is written.
    pub fn patch_for(&self, object: &Traced<'_>) -> Option<(PathBuf, usize)> {
        let root = self.root()?;
        root.patches.iter().find_map(|patch| {
            if patch.target.is_some() || !matches!(patch.at, PatchAt::File { .. }) {
                return None;
            }
            documents_of(&patch.text).into_iter().find_map(|document| {
                let kind = document.value.get("kind").and_then(Value::as_str);
                let name = document
                    .value
                    .pointer("/metadata/name")
                    .and_then(Value::as_str);
                (kind == Some(object.kind) && name.is_some_and(|n| object.named(n)))
                    .then(|| (patch.file.clone(), document.index))
            })
        })
    }

    fn in_layer(&self, layer: &Layer, object: &Traced<'_>, path: &FieldPath) -> Option<Source> {
        let steps = path.steps();
        let keys: Vec<Option<&str>> = steps
            .iter()
            .map(|s| match s {
                PathStep::Key(k) => Some(k.as_str()),
                _ => None,
            })
            .collect();
        let entry = |entry_path: FieldPath, what: &'static str, literal: Option<String>| {
            let line = layer.line(&resolve(&layer.value, entry_path.steps()));
            Source {
                file: layer.file.clone(),
                line,
                setter: Setter::Entry {
                    path: entry_path,
                    what,
                    literal,
                },
                kustomization: layer.file.clone(),
            }
        };
        // images: the container image whose repository the entry renames to or keeps.
        let is_image = steps.len() >= 3
            && keys.last() == Some(&Some("image"))
            && matches!(
                keys[steps.len() - 3],
                Some("containers" | "initContainers" | "ephemeralContainers")
            );
        if is_image
            && let Some(image) = epath::lookup(object.rendered, steps).and_then(Value::as_str)
        {
            let (repository, ..) = split_image(image);
            let found = layer.items("images").rev().find(|(_, entry)| {
                let name = entry.get("name").and_then(Value::as_str);
                let new_name = entry.get("newName").and_then(Value::as_str);
                new_name.or(name) == Some(repository)
            });
            if let Some((index, _)) = found {
                let line = layer.line(&[Step::Field("images"), Step::Item(index)]);
                return Some(Source {
                    file: layer.file.clone(),
                    line,
                    setter: Setter::Image { index },
                    kustomization: layer.file.clone(),
                });
            }
        }
        if keys == [Some("spec"), Some("replicas")] {
            let found = layer.items("replicas").rev().find(|(_, entry)| {
                entry
                    .get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| object.named(n))
            });
            if let Some((index, _)) = found {
                let entry_path = FieldPath(vec![
                    PathStep::Key("replicas".into()),
                    PathStep::Index(index),
                    PathStep::Key("count".into()),
                ]);
                return Some(entry(entry_path, "replicas", None));
            }
        }
        if let Some(found) = self.json_patches(layer, object, path) {
            return Some(found);
        }
        // Labels and annotations every object of the layer gets.
        if let [
            Some("metadata"),
            Some(map @ ("labels" | "annotations")),
            Some(name),
        ] = keys[..]
        {
            let field = if map == "labels" {
                "commonLabels"
            } else {
                "commonAnnotations"
            };
            if layer.value.get(field).and_then(|m| m.get(name)).is_some() {
                let entry_path = FieldPath(vec![
                    PathStep::Key(field.into()),
                    PathStep::Key(name.into()),
                ]);
                return Some(entry(entry_path, field, None));
            }
            if map == "labels" {
                let found = layer
                    .items("labels")
                    .rev()
                    .find(|(_, l)| l.get("pairs").and_then(|p| p.get(name)).is_some());
                if let Some((index, _)) = found {
                    let entry_path = FieldPath(vec![
                        PathStep::Key("labels".into()),
                        PathStep::Index(index),
                        PathStep::Key("pairs".into()),
                        PathStep::Key(name.into()),
                    ]);
                    return Some(entry(entry_path, "labels", None));
                }
            }
        }
        if let Some(found) = self.strategic_patches(layer, object, path) {
            return Some(found);
        }
        self.generated(layer, object, path)
    }

    fn json_patches(&self, layer: &Layer, object: &Traced<'_>, path: &FieldPath) -> Option<Source> {
        let segments = pointer_segments(object.rendered, path.steps());
        for patch in &layer.patches {
            let Some(target) = &patch.target else {
                continue;
            };
            if !object.targeted(target) {
                continue;
            }
            let Ok(Value::Array(ops)) = serde_yaml::from_str::<Value>(&patch.text) else {
                continue;
            };
            for (op_index, op) in ops.iter().enumerate().rev() {
                if !matches!(
                    op.get("op").and_then(Value::as_str),
                    Some("add" | "replace")
                ) {
                    continue;
                }
                let Some(pointer) = op.get("path").and_then(Value::as_str) else {
                    continue;
                };
                let op_segments: Vec<&str> = pointer.split('/').skip(1).collect();
                let covers = op_segments.len() <= segments.len()
                    && op_segments.iter().zip(&segments).all(|(a, b)| a == b)
                    && op_segments.len() <= path.steps().len();
                if !covers {
                    continue;
                }
                let rest = FieldPath(path.steps()[op_segments.len()..].to_vec());
                let Some(value) = op.get("value") else {
                    continue;
                };
                if epath::lookup(value, rest.steps()).is_none() {
                    continue;
                }
                let mut steps = vec![Step::Item(op_index), Step::Field("value")];
                steps.extend(resolve(value, rest.steps()));
                let line = patch_line(layer, &patch.at, &patch.text, &steps);
                return Some(Source {
                    file: patch.file.clone(),
                    line,
                    setter: Setter::JsonPatch {
                        at: patch.at.clone(),
                        op: op_index,
                        rest,
                    },
                    kustomization: layer.file.clone(),
                });
            }
        }
        None
    }
}

/// The line of `steps` in a patch's text, in its file or inline in the kustomization.
fn patch_line(layer: &Layer, at: &PatchAt, text: &str, steps: &[Step<'_>]) -> usize {
    match at {
        PatchAt::File { .. } => line_of(text, steps) + 1,
        PatchAt::Inline { field, index } => {
            // The block scalar's text starts on the line after `patch: |`.
            let key_line = match *field {
                "patchesStrategicMerge" => layer.line(&[Step::Field(field), Step::Item(*index)]),
                _ => layer.line(&[Step::Field(field), Step::Item(*index), Step::Field("patch")]),
            };
            key_line + 1 + line_of(text, steps)
        }
    }
}

impl Trace {
    fn strategic_patches(
        &self,
        layer: &Layer,
        object: &Traced<'_>,
        path: &FieldPath,
    ) -> Option<Source> {
        for patch in &layer.patches {
            for document in documents_of(&patch.text) {
                let value = &document.value;
                if !value.is_object() {
                    continue;
                }
                let kind = value.get("kind").and_then(Value::as_str);
                let name = value.pointer("/metadata/name").and_then(Value::as_str);
                let selected = match &patch.target {
                    Some(target) => object.targeted(target),
                    None => kind == Some(object.kind) && name.is_some_and(|n| object.named(n)),
                };
                if !selected || epath::lookup(value, path.steps()).is_none() {
                    continue;
                }
                let steps = resolve(value, path.steps());
                let at = match &patch.at {
                    PatchAt::File { .. } => PatchAt::File {
                        document: document.index,
                    },
                    inline => inline.clone(),
                };
                let line = document.first_line + patch_line(layer, &at, document.text, &steps);
                return Some(Source {
                    file: patch.file.clone(),
                    line,
                    setter: Setter::Patch { at },
                    kustomization: layer.file.clone(),
                });
            }
        }
        None
    }

    /// A generated ConfigMap's or Secret's `data` key: a literal, a source file, an env line.
    fn generated(&self, layer: &Layer, object: &Traced<'_>, path: &FieldPath) -> Option<Source> {
        let [PathStep::Key(map), PathStep::Key(key)] = path.steps() else {
            return None;
        };
        if map != "data" && map != "binaryData" && map != "stringData" {
            return None;
        }
        let (field, index, generator) = generator_of(layer, object)?;
        let list = |name: &str| -> Vec<&str> {
            generator
                .get(name)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect()
        };
        for (at, literal) in list("literals").into_iter().enumerate().rev() {
            if literal
                .split_once('=')
                .is_some_and(|(k, _)| k.trim() == key)
            {
                let entry_path = FieldPath(vec![
                    PathStep::Key(field.into()),
                    PathStep::Index(index),
                    PathStep::Key("literals".into()),
                    PathStep::Index(at),
                ]);
                let line = layer.line(&resolve(&layer.value, entry_path.steps()));
                return Some(Source {
                    file: layer.file.clone(),
                    line,
                    setter: Setter::Entry {
                        path: entry_path,
                        what: "generator literal",
                        literal: Some(key.clone()),
                    },
                    kustomization: layer.file.clone(),
                });
            }
        }
        for source in list("files").into_iter().rev() {
            let (name, file) = match source.split_once('=') {
                Some((name, file)) => (name.trim().to_owned(), file.trim()),
                None => (
                    Path::new(source)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    source,
                ),
            };
            if name == *key {
                return Some(Source {
                    file: normalize(&layer.dir.join(file)),
                    line: 1,
                    setter: Setter::GeneratorFile { key: key.clone() },
                    kustomization: layer.file.clone(),
                });
            }
        }
        let mut envs = list("envs");
        envs.extend(generator.get("env").and_then(Value::as_str));
        for env in envs.into_iter().rev() {
            let file = normalize(&layer.dir.join(env));
            let Some((_, text)) = layer.env_files.iter().find(|(f, _)| *f == file) else {
                continue;
            };
            let found = text.lines().position(|line| {
                line.split_once('=')
                    .is_some_and(|(k, _)| k.trim() == key && !line.trim_start().starts_with('#'))
            });
            if let Some(at) = found {
                return Some(Source {
                    file: file.clone(),
                    line: at + 1,
                    setter: Setter::EnvLine { key: key.clone() },
                    kustomization: layer.file.clone(),
                });
            }
        }
        None
    }
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
