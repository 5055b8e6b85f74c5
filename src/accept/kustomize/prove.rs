//! The proof of a kustomize accept: a copy of the tree with the edits applied is rendered again,
//! and the accept is refused unless the object now renders as the live values accepted and no
//! other object of any root changed.
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::super::AcceptError;
use super::refuse;
use crate::drift::{self, DriftItem, LiveObject};
use crate::manifest::edit::PreparedEdit;
use crate::manifest::{ManifestIndex, ManifestObject};

/// The files every root that reads one of `edited` reads, and those roots (folders).
fn affected(
    index: &ManifestIndex,
    manifest: &ManifestObject,
    edited: &[PreparedEdit],
) -> Vec<PathBuf> {
    let mut roots: BTreeSet<PathBuf> = BTreeSet::new();
    if let Some(root) = manifest.rendered.as_deref().and_then(Path::parent) {
        roots.insert(root.to_path_buf());
    }
    for edit in edited {
        roots.extend(index.kustomize.roots_reading(&edit.file));
    }
    roots.into_iter().collect()
}

/// A root's rendered objects by key, parsed as the index parses them.
fn objects_by_key(
    index: &ManifestIndex,
    root: &Path,
    text: &str,
) -> HashMap<crate::manifest::ObjectKey, ManifestObject> {
    let kustomization = root.join(crate::manifest::kustomize::tree::FILE_NAMES[0]);
    crate::manifest::parse::parse_file(
        &Arc::from(kustomization.as_path()),
        &Arc::from(text),
        &index.default_namespace,
    )
    .objects
    .into_iter()
    .map(|o| (o.key.clone(), o))
    .collect()
}

/// Renders a copy of the tree before and after `edits`, and refuses unless `manifest`'s object
/// now renders with the live values of `chosen` (compared with `live` as the drift is, every
/// other field as before) and every other object of every root that reads an edited file —
/// chosen for comparison or not — renders as before. Returns a note for the user. Blocking:
/// kustomize runs twice per affected root.
pub fn prove(
    index: &ManifestIndex,
    manifest: &ManifestObject,
    edits: &[PreparedEdit],
    chosen: &[DriftItem],
    live: &LiveObject,
) -> Result<Vec<String>, AcceptError> {
    let key = manifest.key.to_string();
    let roots = affected(index, manifest, edits);
    let mut files: BTreeSet<PathBuf> = BTreeSet::new();
    for root in &roots {
        files.extend(index.kustomize.files_of(root));
    }
    files.extend(edits.iter().map(|e| e.file.clone()));
    let renderer = crate::manifest::kustomize::render::renderer()
        .map_err(|e| refuse(&key, format!("cannot prove the edit by rendering: {e}")))?;
    let scratch = crate::manifest::kustomize::render::Scratch::copy(&files, &roots)
        .map_err(|e| refuse(&key, format!("cannot copy the tree to prove the edit: {e}")))?;
    let shown = |root: &Path| crate::manifest::kustomize::shown(&index.root, root);
    let render_all = |scratch: &crate::manifest::kustomize::render::Scratch| {
        crate::manifest::on_all_cores(&roots, 2, |_: &mut (), root: &PathBuf| {
            (root.clone(), scratch.render(renderer, root))
        })
        .into_iter()
        .collect::<HashMap<PathBuf, Result<String, String>>>()
    };
    let before = render_all(&scratch);
    for edit in edits {
        scratch
            .write(&edit.file, &edit.after)
            .map_err(|e| refuse(&key, format!("cannot prove the edit: {e}")))?;
    }
    let after = render_all(&scratch);
    let target_root = manifest.rendered.as_deref().and_then(Path::parent);
    let mut renames = Vec::new();
    for root in &roots {
        let mut referrers: Vec<String> = Vec::new();
        let name = shown(root);
        let (Some(before), Some(after)) = (before.get(root), after.get(root)) else {
            continue;
        };
        let after = after.as_ref().map_err(|message| {
            refuse(
                &key,
                format!("with the edit, {name} no longer renders: {message}"),
            )
        })?;
        // A root that did not render before is not made worse by the edit.
        let Ok(before) = before else { continue };
        let before = objects_by_key(index, root, before);
        let after = objects_by_key(index, root, after);
        let is_target_root = Some(root.as_path()) == target_root;
        // A generated object named by its content (the hash suffix) renders under a new name.
        let renamed = if is_target_root && !after.contains_key(&manifest.key) {
            renamed_by_hash(&manifest.key, &before, &after)
        } else {
            None
        };
        for (object, old) in &before {
            let is_target = is_target_root && *object == manifest.key;
            let found = match (after.get(object), renamed) {
                (Some(new), _) => Some(new),
                (None, Some(renamed)) if is_target => after.get(renamed),
                _ => None,
            };
            let Some(new) = found else {
                return Err(refuse(
                    &key,
                    format!(
                        "with the edit, {name} no longer renders {object}; nothing was written"
                    ),
                ));
            };
            if is_target {
                let wrong = not_as_live(old, new, live, chosen, renamed.is_some(), &index.config);
                if !wrong.is_empty() {
                    return Err(refuse(
                        &key,
                        format!(
                            "with the edit, {name} would render {} differently from what is live; nothing was written",
                            wrong.join(", ")
                        ),
                    ));
                }
                continue;
            }
            let old = old.body.to_value();
            let new = new.body.to_value();
            // A referrer of the renamed object names it by its new name, and changes no more.
            let expected = match renamed {
                Some(renamed) => with_name_replaced(&old, &manifest.key.name, &renamed.name),
                None => old.clone(),
            };
            if expected != new {
                return Err(refuse(
                    &key,
                    format!(
                        "the edit would also change {object} as {name} renders it; nothing was written"
                    ),
                ));
            }
            if old != new {
                referrers.push(object.to_string());
            }
        }
        if let Some(renamed) = renamed {
            renames.push(format!(
                "kustomize names {} by its content: with the edit it is {} (was {}){}. The cluster changes when {name} is applied (kubectl apply -k {name})",
                manifest.key.kind,
                renamed.name,
                manifest.key.name,
                match referrers.len() {
                    0 => String::new(),
                    1 => format!("; {} refers to it by the new name", referrers[0]),
                    _ => format!("; {} refer to it by the new name", referrers.join(", ")),
                }
            ));
        }
        if let Some(extra) = after
            .keys()
            .find(|k| !before.contains_key(*k) && Some(*k) != renamed)
        {
            return Err(refuse(
                &key,
                format!(
                    "with the edit, {name} would render a new object {extra}; nothing was written"
                ),
            ));
        }
    }
    let list: Vec<String> = roots.iter().map(|r| shown(r)).collect();
    if renames.is_empty() {
        return Ok(vec![format!(
            "proved by rendering {} before and after the edit: {key} renders as live, nothing else changed",
            list.join(", ")
        )]);
    }
    let mut notes = vec![format!(
        "proved by rendering {} before and after the edit: {key} renders as live under its new name, nothing else changed but the references to it",
        list.join(", ")
    )];
    notes.extend(renames);
    Ok(notes)
}

/// The fields of the target as it renders `new` (after the edit) that are not what they should
/// be: an accepted field not as live, or another field changed from its render `old` (a rename
/// by content hash aside).
fn not_as_live(
    old: &crate::manifest::ManifestObject,
    new: &crate::manifest::ManifestObject,
    live: &LiveObject,
    chosen: &[DriftItem],
    renamed: bool,
    config: &crate::manifest::Config,
) -> Vec<String> {
    let was = drift::compare(old, live, config);
    let now = drift::compare(new, live, config);
    now.items
        .iter()
        .filter(|i| i.class.is_drift())
        .filter(|i| !renamed || i.path.to_string() != "metadata.name")
        .filter(|i| {
            chosen.iter().any(|c| c.path == i.path)
                || !was
                    .items
                    .iter()
                    .any(|w| w.path == i.path && w.manifest == i.manifest && w.live == i.live)
        })
        .map(|i| i.path.to_string())
        .collect()
}

/// The object of `after` that `key` became when its generator's hash suffix changed: same
/// group, kind and namespace, the same name before the suffix, and new in `after`.
fn renamed_by_hash<'a>(
    key: &crate::manifest::ObjectKey,
    before: &HashMap<crate::manifest::ObjectKey, ManifestObject>,
    after: &'a HashMap<crate::manifest::ObjectKey, ManifestObject>,
) -> Option<&'a crate::manifest::ObjectKey> {
    let stem = hash_stem(&key.name)?;
    let mut candidates = after.keys().filter(|k| {
        !before.contains_key(*k)
            && k.group == key.group
            && k.kind == key.kind
            && k.namespace == key.namespace
            && hash_stem(&k.name) == Some(stem)
    });
    let found = candidates.next()?;
    candidates.next().is_none().then_some(found)
}

/// `name` without kustomize's content hash suffix (`-` and 10 characters of its alphabet).
pub(super) fn hash_stem(name: &str) -> Option<&str> {
    let (stem, suffix) = name.rsplit_once('-')?;
    (suffix.len() == 10
        && suffix
            .bytes()
            .all(|b| b"bcdfghjkmnpqrstvwxz2456789".contains(&b)))
    .then_some(stem)
}

/// `value` with every string equal to `from` replaced by `to` (a referrer's names of an object).
pub(super) fn with_name_replaced(value: &Value, from: &str, to: &str) -> Value {
    match value {
        Value::String(s) if s == from => Value::String(to.to_owned()),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| with_name_replaced(v, from, to))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), with_name_replaced(v, from, to)))
                .collect(),
        ),
        other => other.clone(),
    }
}
