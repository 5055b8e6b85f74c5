//! The walk of a root's kustomizations that finds the file and line setting a rendered field:
//! layer by layer from the root down, each layer's transformers in the order kustomize lets them
//! win (see the parent module).
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::super::tree::normalize;
use super::*;
use crate::manifest::edit::path::{self as epath, FieldPath, PathStep};
use crate::manifest::lines::{Step, line_of};

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
pub(super) fn patch_line(layer: &Layer, at: &PatchAt, text: &str, steps: &[Step<'_>]) -> usize {
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
