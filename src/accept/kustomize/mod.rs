//! Accepting into a kustomize tree: each live value goes where the rendered value is set — the
//! overlay's `replicas:` or `images:` entry, the patch that sets the path (a file or inline, a
//! strategic-merge or JSON 6902 patch), a generator's literal or source file — or, for a field
//! of the resource document, into that document when only this root reads it. A field no file
//! sets (an env var added live), or one set by a base other roots share, goes into a
//! strategic-merge patch of the root's own kustomization: its patch file for the object, else a
//! new one named after the object, listed under `patches:`.
//!
//! [`plan`] is pure over the files' texts (the live view previews it as fields are toggled);
//! [`prove`] renders a copy of the tree with the edits applied and refuses unless the object now
//! renders as the live values accepted and no other object of any root changed (`prove.rs`).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

mod prove;

pub use prove::prove;

use super::{AcceptError, field_edit};
use crate::drift::{Class, DriftItem};
use crate::manifest::edit::{self, FieldEdit, FieldPath, PathStep, PreparedEdit};
use crate::manifest::kustomize::source::{
    Layer, PatchAt, Setter, Source, Trace, Traced, split_image,
};
use crate::manifest::{ManifestIndex, ManifestObject};

/// Why accepting into the kustomize tree was refused (nothing was written).
fn refuse(key: &str, reason: impl std::fmt::Display) -> AcceptError {
    AcceptError::Kustomize {
        key: key.to_owned(),
        reason: reason.to_string(),
    }
}

/// The edits of one file, gathered before they are applied.
#[derive(Default)]
struct FileChanges {
    /// Field edits by document.
    documents: BTreeMap<usize, Vec<FieldEdit>>,
    /// The whole new text (a generator's source file).
    whole: Option<String>,
}

/// An inline patch's edits: the kustomization, the list field and item, and the patch's edits.
type InlineKey = (PathBuf, &'static str, usize);

/// The string value of a live field, as a generator writes it.
fn live_text(item: &DriftItem, key: &str) -> Result<String, AcceptError> {
    match &item.live {
        Some(Value::String(text)) => Ok(text.clone()),
        Some(other) => Ok(other.to_string()),
        None => Err(refuse(
            key,
            format!(
                "{} was removed live; remove it from its generator by hand",
                item.path
            ),
        )),
    }
}

/// The edits of an `images:` entry that make it give the live image.
fn image_edits(entry: &Value, index: usize, live: &str) -> Vec<FieldEdit> {
    let at = |field: &str| {
        FieldPath(vec![
            PathStep::Key("images".into()),
            PathStep::Index(index),
            PathStep::Key(field.into()),
        ])
    };
    let field = |name: &str| entry.get(name).and_then(Value::as_str);
    let (repository, tag, digest) = split_image(live);
    let mut edits = Vec::new();
    if field("newName").or(field("name")) != Some(repository) {
        if field("name") == Some(repository) {
            edits.push(FieldEdit::Remove {
                path: at("newName"),
            });
        } else {
            edits.push(FieldEdit::Set {
                path: at("newName"),
                value: repository.into(),
            });
        }
    }
    for (name, value) in [("newTag", tag), ("digest", digest)] {
        match value {
            Some(value) => edits.push(FieldEdit::Set {
                path: at(name),
                value: value.into(),
            }),
            None if field(name).is_some() => edits.push(FieldEdit::Remove { path: at(name) }),
            None => {}
        }
    }
    edits
}

/// An edit as a strategic-merge patch writes it: a field removed live is `null` in the patch
/// (a list item removed live cannot be said that way).
fn patch_edit(key: &str, item: &DriftItem) -> Result<FieldEdit, AcceptError> {
    match field_edit(item) {
        FieldEdit::Remove { path } => match path.steps().last() {
            Some(PathStep::Key(_)) => Ok(FieldEdit::Set {
                path,
                value: Value::Null,
            }),
            _ => Err(refuse(
                key,
                format!(
                    "{} was removed live from a list a shared base sets; remove it there by hand, or revert",
                    item.path
                ),
            )),
        },
        other => Ok(other),
    }
}

/// The edit of a root's kustomization (`root`) that makes its generator `name` of `field` merge
/// `literals` (`KEY=VALUE`) into a generator of a base other roots share: its own entry for the
/// generator gets them (each replacing its key's literal), else a new `behavior: merge` entry.
fn generator_merge(root: &Value, field: &str, name: &str, literals: &[String]) -> FieldEdit {
    let key_of = |literal: &str| literal.split_once('=').map(|(k, _)| k.trim().to_owned());
    let entries = root.get(field).and_then(Value::as_array);
    let existing = entries.and_then(|list| {
        list.iter()
            .position(|g| g.get("name").and_then(Value::as_str) == Some(name))
    });
    if let (Some(list), Some(at)) = (entries, existing) {
        let mut merged: Vec<Value> = list[at]
            .get("literals")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for literal in literals {
            let key = key_of(literal);
            match merged
                .iter()
                .position(|l| l.as_str().and_then(key_of) == key)
            {
                Some(same) => merged[same] = literal.as_str().into(),
                None => merged.push(literal.as_str().into()),
            }
        }
        return FieldEdit::Set {
            path: FieldPath(vec![
                PathStep::Key(field.into()),
                PathStep::Index(at),
                PathStep::Key("literals".into()),
            ]),
            value: Value::Array(merged),
        };
    }
    let entry = serde_json::json!({"name": name, "behavior": "merge", "literals": literals});
    append_to(root, field, entry)
}

/// The edit that appends `entry` to the top-level list `field` of a kustomization (`root`),
/// making the list when it has none.
fn append_to(root: &Value, field: &str, entry: Value) -> FieldEdit {
    match root.get(field).and_then(Value::as_array).map(Vec::len) {
        Some(count) => FieldEdit::InsertItem {
            path: FieldPath(vec![PathStep::Key(field.into()), PathStep::Index(count)]),
            value: entry,
            after: count
                .checked_sub(1)
                .map(PathStep::Index)
                .into_iter()
                .collect(),
        },
        None => FieldEdit::Set {
            path: FieldPath(vec![PathStep::Key(field.into())]),
            value: Value::Array(vec![entry]),
        },
    }
}

/// kustomize merges a keyed list of a strategic-merge patch in the patch's order, with the items
/// only the base has after them. An item added live after items of the base would so render
/// first: the patch names those items before it (by their key alone, which changes nothing of
/// theirs), as far as the patch does not already list them.
fn keep_live_order(edits: Vec<FieldEdit>, rendered: &Value, patch: &Value) -> Vec<FieldEdit> {
    let mut patch = patch.clone();
    let mut out = Vec::new();
    for edit in edits {
        if let FieldEdit::InsertItem { path, after, .. } = &edit
            && let Some((PathStep::Item(_), parent)) = path.steps().split_last()
            && let Some(Value::Array(base)) = edit::path::lookup(rendered, parent)
        {
            for (at, step) in after.iter().enumerate().rev() {
                let PathStep::Item(key) = step else { continue };
                let listed = edit::path::lookup(&patch, parent)
                    .and_then(Value::as_array)
                    .is_some_and(|list| edit::path::position(list, step).is_some());
                if listed || edit::path::position(base, step).is_none() {
                    continue;
                }
                let mut steps = parent.to_vec();
                steps.push(step.clone());
                let placeholder = FieldEdit::InsertItem {
                    path: FieldPath(steps),
                    value: Value::Object(key.clone()),
                    after: after[at + 1..].to_vec(),
                };
                patch = edit::intended::apply(&patch, std::slice::from_ref(&placeholder));
                out.push(placeholder);
            }
        }
        patch = edit::intended::apply(&patch, std::slice::from_ref(&edit));
        out.push(edit);
    }
    out
}

/// The name of the object in its resource document (before prefixes and suffixes), which a
/// patch names it by.
fn source_name(manifest: &ManifestObject, read: &dyn Fn(&Path) -> Option<String>) -> String {
    read(&manifest.file)
        .and_then(|text| {
            let document = text.get(manifest.span())?;
            let value: Value = serde_yaml::from_str(document).ok()?;
            Some(value.pointer("/metadata/name")?.as_str()?.to_owned())
        })
        .unwrap_or_else(|| manifest.key.name.to_string())
}

/// A file name for a new patch of `kind`/`name` in `dir` that no file has yet.
fn new_patch_name(dir: &Path, kind: &str, name: &str, taken: &dyn Fn(&Path) -> bool) -> PathBuf {
    let stem = format!("{}-{}-patch", name, kind.to_ascii_lowercase());
    (1..)
        .map(|n| {
            if n == 1 {
                dir.join(format!("{stem}.yaml"))
            } else {
                dir.join(format!("{stem}-{n}.yaml"))
            }
        })
        .find(|candidate| !taken(candidate))
        .unwrap_or_else(|| dir.join(format!("{stem}.yaml")))
}

/// The file edits that write `chosen` live values where kustomize takes them from. `read`
/// gives a file's text as it is now (`None`: no such file). Pure.
pub fn plan(
    index: &ManifestIndex,
    manifest: &ManifestObject,
    chosen: &[&DriftItem],
    read: &dyn Fn(&Path) -> Option<String>,
) -> Result<Vec<PreparedEdit>, AcceptError> {
    let key = manifest.key.to_string();
    let trace = index
        .kustomize
        .trace_of(manifest)
        .ok_or_else(|| refuse(&key, "its kustomize root has not been read yet; try again"))?;
    let root = trace
        .root()
        .ok_or_else(|| refuse(&key, "its kustomize root cannot be read"))?;
    let rendered = manifest.body.to_value();
    let traced = Traced::of(manifest, &rendered);
    // The resource document is this root's alone, or shared with other roots.
    let readers = index.kustomize.roots_reading(&manifest.file);
    let planning = Planning {
        index,
        manifest,
        key: &key,
        trace,
        traced: &traced,
        own_resource: manifest.digest != 0 && readers.len() <= 1,
        read,
    };
    let mut gathered = Gathered::default();
    for item in chosen {
        planning.route(item, &mut gathered)?;
    }
    let Gathered {
        mut files,
        inline,
        leaf_patch,
        merges,
    } = gathered;
    planning.inline_patches(&mut files, inline)?;
    // A shared generator's values: the root's own entry for it, `behavior: merge`.
    for ((field, name), literals) in merges {
        let edit = generator_merge(&root.value, field, &name, &literals);
        document_edits(&mut files, &root.file, 0).push(edit);
    }
    // A field no file sets, or one a shared base sets: the root's own patch for the object.
    if !leaf_patch.is_empty() {
        planning.leaf_patch(&mut files, leaf_patch, &rendered, root)?;
    }
    prepare_files(files, read, &key)
}

/// The edits a plan gathers before they are written: by file and document, in inline patches,
/// in the root's own patch for the object, and merged into shared generators.
#[derive(Default)]
struct Gathered {
    files: BTreeMap<PathBuf, FileChanges>,
    inline: BTreeMap<InlineKey, Vec<FieldEdit>>,
    leaf_patch: Vec<FieldEdit>,
    merges: BTreeMap<(&'static str, String), Vec<String>>,
}

/// What planning one object's accept reads.
#[derive(Clone, Copy)]
struct Planning<'a> {
    index: &'a ManifestIndex,
    manifest: &'a ManifestObject,
    /// The object, as messages name it.
    key: &'a str,
    trace: &'a Trace,
    traced: &'a Traced<'a>,
    /// Its resource document is this root's alone (not generated, read by no other root).
    own_resource: bool,
    read: &'a dyn Fn(&Path) -> Option<String>,
}

impl Planning<'_> {
    /// Where one field's edit goes: the source that sets it, else this root's own resource
    /// document or patch, else (a value a shared file sets) this root's patch or generator.
    fn route(&self, item: &DriftItem, out: &mut Gathered) -> Result<(), AcceptError> {
        let Planning {
            index,
            manifest,
            key,
            trace,
            traced,
            own_resource,
            ..
        } = *self;
        let Gathered {
            files,
            leaf_patch,
            merges,
            ..
        } = out;
        let path = item.path.edit_path();
        let found = trace.locate(traced, &path);
        // A value set in a file other roots read too (a shared component or base overlay) is
        // overridden in this root's own patch instead: the other roots must render as before.
        let found = match found {
            Some(found) if index.kustomize.roots_reading(&found.file).len() > 1 => {
                // A shared generator's value: this root's own generator entry merges it.
                let generated = matches!(
                    found.setter,
                    Setter::Entry {
                        literal: Some(_),
                        ..
                    } | Setter::GeneratorFile { .. }
                        | Setter::EnvLine { .. }
                );
                if generated {
                    let (field, name) = trace
                        .generator_named(traced, &found.kustomization)
                        .ok_or_else(|| refuse(key, "its generator is gone"))?;
                    let Some(PathStep::Key(data_key)) = path.steps().last() else {
                        return Err(refuse(key, format!("{} is not a data key", item.path)));
                    };
                    let literal = format!("{data_key}={}", live_text(item, key)?);
                    merges.entry((field, name)).or_default().push(literal);
                } else {
                    leaf_patch.push(patch_edit(key, item)?);
                }
                return Ok(());
            }
            found => found,
        };
        let Some(found) = found else {
            if own_resource {
                files
                    .entry(manifest.file.to_path_buf())
                    .or_default()
                    .documents
                    .entry(manifest.document())
                    .or_default()
                    .push(field_edit(item));
            } else if manifest.digest == 0 {
                return Err(refuse(
                    key,
                    format!(
                        "{} is not set by any source of the generator that makes {key}; add it to the generator by hand",
                        item.path
                    ),
                ));
            } else {
                leaf_patch.push(patch_edit(key, item)?);
            }
            return Ok(());
        };
        self.at_source(item, &found, out)
    }

    /// The edit of the source `found` that sets `item`'s field: the entry, image, patch,
    /// generator file or env line.
    fn at_source(
        &self,
        item: &DriftItem,
        found: &Source,
        out: &mut Gathered,
    ) -> Result<(), AcceptError> {
        let Planning {
            key, trace, read, ..
        } = *self;
        let Gathered { files, inline, .. } = out;
        match &found.setter {
            Setter::Entry {
                path: entry,
                literal: Some(name),
                ..
            } => {
                let value = format!("{name}={}", live_text(item, key)?);
                document_edits(files, &found.file, 0).push(FieldEdit::Set {
                    path: entry.clone(),
                    value: value.into(),
                });
            }
            Setter::Entry { path: entry, .. } => {
                let edit = match &item.live {
                    Some(value) => FieldEdit::Set {
                        path: entry.clone(),
                        value: value.clone(),
                    },
                    None => FieldEdit::Remove {
                        path: entry.clone(),
                    },
                };
                document_edits(files, &found.file, 0).push(edit);
            }
            Setter::Image { index: at } => {
                let Some(Value::String(live)) = &item.live else {
                    return Err(refuse(key, format!("{} has no live image", item.path)));
                };
                let layer = trace
                    .layers
                    .iter()
                    .find(|l| l.file == found.file)
                    .ok_or_else(|| refuse(key, "its images entry is gone"))?;
                let entry = layer
                    .value
                    .get("images")
                    .and_then(|i| i.get(*at))
                    .cloned()
                    .unwrap_or(Value::Null);
                document_edits(files, &found.file, 0).extend(image_edits(&entry, *at, live));
            }
            Setter::Patch {
                at: PatchAt::File { document },
            } => document_edits(files, &found.file, *document).push(field_edit(item)),
            Setter::Patch {
                at: PatchAt::Inline { field, index: at },
            } => inline
                .entry((found.file.clone(), field, *at))
                .or_default()
                .push(field_edit(item)),
            Setter::JsonPatch { at, op, rest } => {
                let mut steps = vec![PathStep::Index(*op), PathStep::Key("value".into())];
                steps.extend(rest.steps().iter().cloned());
                let path = FieldPath(steps);
                let edit = match (&item.live, item.class) {
                    (Some(value), class) if class != Class::RemovedLive => FieldEdit::Set {
                        path,
                        value: value.clone(),
                    },
                    _ if !rest.steps().is_empty() => FieldEdit::Remove { path },
                    _ => {
                        return Err(refuse(
                            key,
                            format!(
                                "{} was removed live and a JSON patch adds it ({}:{}); remove the operation by hand",
                                item.path,
                                found.file.display(),
                                found.line
                            ),
                        ));
                    }
                };
                match at {
                    PatchAt::File { .. } => document_edits(files, &found.file, 0).push(edit),
                    PatchAt::Inline { field, index: at } => inline
                        .entry((found.file.clone(), field, *at))
                        .or_default()
                        .push(edit),
                }
            }
            Setter::GeneratorFile { .. } => {
                files.entry(found.file.clone()).or_default().whole = Some(live_text(item, key)?);
            }
            Setter::EnvLine { key: name } => {
                let value = live_text(item, key)?;
                let changes = files.entry(found.file.clone()).or_default();
                let text = match changes.whole.take() {
                    Some(text) => text,
                    None => read(&found.file).ok_or_else(|| {
                        refuse(key, format!("cannot read {}", found.file.display()))
                    })?,
                };
                let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
                if let Some(line) = lines.get_mut(found.line.saturating_sub(1)) {
                    *line = format!("{name}={value}");
                }
                let mut joined = lines.join("\n");
                if text.ends_with('\n') {
                    joined.push('\n');
                }
                changes.whole = Some(joined);
            }
        }
        Ok(())
    }

    /// Inline patches: the patch text edited as a document, then written back as the string.
    fn inline_patches(
        &self,
        files: &mut BTreeMap<PathBuf, FileChanges>,
        inline: BTreeMap<InlineKey, Vec<FieldEdit>>,
    ) -> Result<(), AcceptError> {
        let Planning { key, trace, .. } = *self;
        for ((file, field, at), edits) in inline {
            let layer = trace
                .layers
                .iter()
                .find(|l| l.file == file)
                .ok_or_else(|| refuse(key, "its inline patch is gone"))?;
            let (text, path) = match field {
                "patchesStrategicMerge" => (
                    layer.value.get(field).and_then(|l| l.get(at)),
                    FieldPath(vec![PathStep::Key(field.into()), PathStep::Index(at)]),
                ),
                _ => (
                    layer
                        .value
                        .get(field)
                        .and_then(|l| l.get(at))
                        .and_then(|p| p.get("patch")),
                    FieldPath(vec![
                        PathStep::Key(field.into()),
                        PathStep::Index(at),
                        PathStep::Key("patch".into()),
                    ]),
                ),
            };
            let text = text
                .and_then(Value::as_str)
                .ok_or_else(|| refuse(key, "its inline patch is gone"))?;
            let edited = edit::edit_document(text, 0, &edits).map_err(|e| {
                refuse(
                    key,
                    format!(
                        "the inline patch in {} cannot be edited: {e}",
                        file.display()
                    ),
                )
            })?;
            files
                .entry(file)
                .or_default()
                .documents
                .entry(0)
                .or_default()
                .push(FieldEdit::Set {
                    path,
                    value: edited.into(),
                });
        }
        Ok(())
    }

    /// The fields no file sets, or that a shared base sets: in the root's own patch for the
    /// object (a new patch file, listed in the root, when it has none).
    fn leaf_patch(
        &self,
        files: &mut BTreeMap<PathBuf, FileChanges>,
        leaf_patch: Vec<FieldEdit>,
        rendered: &Value,
        root: &Layer,
    ) -> Result<(), AcceptError> {
        let Planning {
            manifest,
            key,
            trace,
            traced,
            read,
            ..
        } = *self;
        match trace.patch_for(traced) {
            Some((file, document)) => {
                let patch = read(&file)
                    .and_then(|text| {
                        crate::manifest::kustomize::source::documents_of(&text)
                            .into_iter()
                            .find(|d| d.index == document)
                            .map(|d| d.value)
                    })
                    .unwrap_or_else(|| Value::Object(Map::new()));
                let leaf_patch = keep_live_order(leaf_patch, rendered, &patch);
                files
                    .entry(file)
                    .or_default()
                    .documents
                    .entry(document)
                    .or_default()
                    .extend(leaf_patch)
            }
            None => {
                let leaf_patch = keep_live_order(leaf_patch, rendered, &Value::Object(Map::new()));
                let name = source_name(manifest, read);
                let file = new_patch_name(&root.dir, &manifest.key.kind, &name, &|p| {
                    read(p).is_some() || files.contains_key(p)
                });
                let mut skeleton = Map::new();
                skeleton.insert("apiVersion".into(), manifest.api_version.to_string().into());
                skeleton.insert("kind".into(), manifest.key.kind.to_string().into());
                let mut metadata = Map::new();
                metadata.insert("name".into(), name.into());
                skeleton.insert("metadata".into(), Value::Object(metadata));
                let patch = edit::intended::apply(&Value::Object(skeleton), &leaf_patch);
                let text = serde_yaml::to_string(&patch).map_err(|e| refuse(key, e))?;
                let relative = file
                    .strip_prefix(&root.dir)
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                let entry: Value = serde_json::json!({ "path": relative });
                let list_edit = append_to(&root.value, "patches", entry);
                files
                    .entry(root.file.clone())
                    .or_default()
                    .documents
                    .entry(0)
                    .or_default()
                    .push(list_edit);
                files.entry(file).or_default().whole = Some(text);
            }
        }
        Ok(())
    }
}

/// Each file's new text: its document edits made, or its whole new text.
fn prepare_files(
    files: BTreeMap<PathBuf, FileChanges>,
    read: &dyn Fn(&Path) -> Option<String>,
    key: &str,
) -> Result<Vec<PreparedEdit>, AcceptError> {
    let mut prepared = Vec::new();
    for (file, changes) in files {
        let before = read(&file);
        if let Some(after) = changes.whole {
            prepared.push(match before {
                Some(before) => PreparedEdit::replace(&file, before, after),
                None => PreparedEdit::new_file(&file, after),
            });
            continue;
        }
        let before =
            before.ok_or_else(|| refuse(key, format!("cannot read {}", file.display())))?;
        let mut after = before.clone();
        for (document, edits) in changes.documents {
            after = edit::edit_document(&after, document, &edits).map_err(|source| {
                AcceptError::Prepare(edit::PrepareError::Edit {
                    file: file.clone(),
                    source,
                })
            })?;
        }
        prepared.push(PreparedEdit::replace(&file, before, after));
    }
    Ok(prepared)
}

/// The edits of document `document` of `file`.
fn document_edits<'f>(
    files: &'f mut BTreeMap<PathBuf, FileChanges>,
    file: &Path,
    document: usize,
) -> &'f mut Vec<FieldEdit> {
    files
        .entry(file.to_path_buf())
        .or_default()
        .documents
        .entry(document)
        .or_default()
}

#[cfg(test)]
mod tests;
