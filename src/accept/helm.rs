//! Accept into a chart's values: a live change of an object a Helm chart of the checkout renders
//! (directly, or through the release of it in the cluster) is written into the values file its
//! source names, as the value that makes the chart render the live value and nothing else.
//!
//! Which value: the leaves of the merged values (the chart's `values.yaml`, the source's files
//! and inline values) equal to the value the chart renders now are tried one by one, nearest
//! name first — each rendered with the live value laid over it — and the first under which the
//! object renders as live with every other field and object as before is kept. The edit of the
//! values file is then proved by rendering once more with the file as edited. When no value
//! maps to the field, the accept is refused naming the template file and line that produce it.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::AcceptError;
use crate::drift::{self, Class, DriftItem, LiveObject};
use crate::helm::chart::{self, ChartSpec};
use crate::manifest::charts::{deepest_step, template_line};
use crate::manifest::edit::{FieldEdit, FieldPath, PreparedEdit};
use crate::manifest::{ManifestIndex, ManifestObject, ObjectKey};

/// At most this many candidate values are rendered per field.
const MAX_TRIES: usize = 8;

fn refuse(key: &ObjectKey, reason: String) -> AcceptError {
    AcceptError::Kustomize {
        key: key.to_string(),
        reason,
    }
}

/// The chart render of `manifest`'s object: itself when a chart renders it, else the render of
/// the chart of its release.
pub fn chart_object<'i>(
    index: &'i ManifestIndex,
    manifest: &'i ManifestObject,
) -> Result<&'i ManifestObject, AcceptError> {
    if manifest.chart.is_some() {
        return Ok(manifest);
    }
    let source = manifest
        .helm
        .as_ref()
        .map(|r| r.source())
        .unwrap_or_default();
    index.chart_object(&manifest.key).ok_or_else(|| {
        refuse(
            &manifest.key,
            format!(
                "its desired state is {source}, and no chart of the checkout renders it: accept writes into a chart's values file, so put the chart in the manifests folder and name it and its values in .kdrift.yaml (helm.charts); nothing was written"
            ),
        )
    })
}

/// A render's objects by key (hooks left out, as helm keeps them out of a release).
fn objects(spec: &Arc<ChartSpec>, text: &str) -> HashMap<ObjectKey, Value> {
    let mut names = Default::default();
    crate::manifest::charts::objects_of(spec, &spec.key(), text, &mut names)
        .objects
        .into_iter()
        .map(|o| (o.key.clone(), o.body.to_value()))
        .collect()
}

/// The nested values that set `keys` to `value`.
fn nested(keys: &[String], value: &Value) -> Value {
    keys.iter().rev().fold(value.clone(), |inner, key| {
        let mut map = serde_json::Map::new();
        map.insert(key.clone(), inner);
        Value::Object(map)
    })
}

/// Template functions whose output changes from one render to the next.
const UNSTABLE: [&str; 12] = [
    "randAlphaNum",
    "randAlpha",
    "randNumeric",
    "randAscii",
    "randBytes",
    "uuidv4",
    "now",
    "lookup",
    "genCA",
    "genPrivateKey",
    "genSelfSignedCert",
    "genSignedCert",
];

/// Why no value can be proved, when two renders of the same chart and values differ: where they
/// differ, and the template functions that do that (`randAlphaNum`, `now`, `lookup`…) found in
/// its templates.
fn renders_differently(
    spec: &ChartSpec,
    described: &str,
    first: &HashMap<ObjectKey, Value>,
    second: &HashMap<ObjectKey, Value>,
) -> Option<String> {
    let (key, a, b) = first.iter().find_map(|(key, a)| match second.get(key) {
        Some(b) if a == b => None,
        Some(b) => Some((key.to_string(), a.clone(), b.clone())),
        None => Some((key.to_string(), a.clone(), Value::Null)),
    })?;
    let mut used: Vec<&str> = Vec::new();
    let mut files = Vec::new();
    let _ = collect_templates(&spec.dir.join("templates"), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for function in UNSTABLE {
            let called = text.match_indices(function).any(|(at, _)| {
                let after = text[at + function.len()..].chars().next();
                let before = text[..at].chars().next_back();
                !after.is_some_and(|c| c.is_alphanumeric())
                    && !before.is_some_and(|c| c.is_alphanumeric() || c == '.')
            });
            if called && !used.contains(&function) {
                used.push(function);
            }
        }
    }
    let functions = if used.is_empty() {
        String::new()
    } else {
        format!(" (its templates call {})", used.join(", "))
    };
    Some(format!(
        "{described} renders differently on every run{functions}: two renders of the same values differ at {key} ({}), so no value can be proved to render the live one; nothing was written",
        crate::manifest::edit::intended::first_difference(&a, &b)
    ))
}

/// The files under `dir`, recursively.
fn collect_templates(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_templates(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// Whether `after` is `before` with the `chosen` items' paths set to their live values and
/// nothing else changed: the object renders as live at those fields (compared as the drift
/// engine compares), every other field and every other object as before.
fn proves(
    key: &ObjectKey,
    before: &HashMap<ObjectKey, Value>,
    after: &HashMap<ObjectKey, Value>,
    chosen: &[&DriftItem],
    live: &LiveObject,
    config: &crate::manifest::Config,
) -> Result<(), String> {
    for (object, old) in before {
        let Some(new) = after.get(object) else {
            return Err(format!("it no longer renders {object}"));
        };
        if object != key {
            if new != old {
                return Err(format!("it changes {object} too"));
            }
            continue;
        }
        let now = drift::compare_values(key, new, live, config);
        if let Some(still) = now
            .items
            .iter()
            .find(|i| i.class.is_drift() && chosen.iter().any(|c| c.path == i.path))
        {
            return Err(format!(
                "{} still renders {}",
                still.path,
                drift::report::short_value(still.manifest.as_ref())
            ));
        }
        // Every other field as before: the new render with the chosen fields put back as they
        // were must be the old render.
        let mut restored = new.clone();
        for item in chosen {
            let steps = item.path.edit_path();
            let steps = steps.steps();
            match crate::manifest::edit::path::lookup(old, steps) {
                Some(was) => {
                    if let Some(at) = crate::manifest::edit::path::lookup_mut(&mut restored, steps)
                    {
                        *at = was.clone();
                    }
                }
                // A field added live: the old render has none, and the new one without it must
                // be the old one.
                None if item.class == Class::AddedLive => without_added(&mut restored, old, steps),
                None => return Err(format!("{} is not rendered by the chart", item.path)),
            }
        }
        if &restored != old {
            return Err(format!(
                "it changes other fields of {object} ({})",
                crate::manifest::edit::intended::first_difference(old, &restored)
            ));
        }
    }
    if let Some(extra) = after.keys().find(|k| !before.contains_key(*k)) {
        return Err(format!("it renders a new object {extra}"));
    }
    Ok(())
}

/// `render` without the field at `steps` that only it has, and without the maps that field alone
/// filled where `old` has them null or not at all (`limits: null` in the old render of a
/// `toYaml` block, `limits: {memory: 512Mi}` in the new one).
fn without_added(render: &mut Value, old: &Value, steps: &[crate::manifest::edit::PathStep]) {
    use crate::manifest::edit::path::{lookup, lookup_mut};
    let mut depth = steps.len();
    while let Some((crate::manifest::edit::PathStep::Key(name), parent)) =
        steps[..depth].split_last()
    {
        let Some(Value::Object(map)) = lookup_mut(render, parent) else {
            return;
        };
        map.shift_remove(name);
        if !map.is_empty() || parent.is_empty() {
            return;
        }
        match lookup(old, parent) {
            // The old render had the map (empty): as it was.
            Some(Value::Object(_)) => return,
            Some(was) => {
                let was = was.clone();
                if let Some(at) = lookup_mut(render, parent) {
                    *at = was;
                }
                return;
            }
            // Absent before: removed in turn, one level up.
            None => depth -= 1,
        }
    }
}

/// The values that a field added live under a `toYaml .Values.X` block would be set at: the
/// block's own values path and the rest of the field's path below the block's field
/// (`resources:` then `{{ toYaml .Values.resources | … }}`, a live `…resources.limits.memory`:
/// `resources.limits.memory`). `None` when no such block writes the field.
fn to_yaml_values(template: &Path, path: &crate::drift::path::DriftPath) -> Option<Vec<String>> {
    use crate::drift::path::PathStep;
    let text = std::fs::read_to_string(template).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let (index, at) = deepest_step(&lines, path.edit_path().steps())?;
    // On the field's line (`resources: {{ toYaml … }}`) or the next that is not blank.
    let block = std::iter::once(lines[at])
        .chain(
            lines[at + 1..]
                .iter()
                .copied()
                .find(|l| !l.trim().is_empty()),
        )
        .find_map(|line| {
            let after = &line[line.find("toYaml .Values.")? + "toYaml .Values.".len()..];
            let end = after
                .find(|c: char| !(c.is_alphanumeric() || c == '.' || c == '_'))
                .unwrap_or(after.len());
            Some(after[..end].to_owned())
        })?;
    let mut keys: Vec<String> = block.split('.').map(str::to_owned).collect();
    for step in &path.0[index + 1..] {
        match step {
            PathStep::Field(name) => keys.push(name.clone()),
            _ => return None,
        }
    }
    Some(keys)
}

/// The values file edit that makes the chart render `chosen` as live, proved by rendering:
/// the edit, and notes for the user (where the values come from, which value maps to which
/// field). Blocking: helm runs once per candidate, and twice more.
pub fn plan_and_prove(
    index: &ManifestIndex,
    manifest: &ManifestObject,
    chosen: &[&DriftItem],
    live: &LiveObject,
) -> Result<(PreparedEdit, Vec<String>), AcceptError> {
    let key = &manifest.key;
    let object = chart_object(index, manifest)?;
    let Some(spec) = object.chart.clone() else {
        return Err(refuse(key, "no chart renders it".to_owned()));
    };
    let root = &index.root;
    let Some(target) = spec.values_target() else {
        return Err(refuse(
            key,
            format!(
                "{}: its values are the release's in the cluster (helm get values), not a file of the checkout; name its values file in .kdrift.yaml (helm.charts) to accept into it; nothing was written",
                spec.describe(root)
            ),
        ));
    };
    let render = |spec: &ChartSpec| {
        crate::helm::render::render(spec).map_err(|e| {
            refuse(
                key,
                format!(
                    "cannot prove the accept by rendering {}: {e}",
                    spec.describe(root)
                ),
            )
        })
    };
    let before = objects(&spec, &render(&spec)?);
    let Some(rendered) = before.get(key) else {
        return Err(refuse(
            key,
            format!("{} does not render it", spec.describe(root)),
        ));
    };
    let template = object.file.to_path_buf();
    let mut values = chart::merged_values(&spec);
    let mut overrides: Vec<Candidate> = Vec::new();
    // The fields whose values are found so far: each next candidate is rendered over them, so
    // the proof of it expects them changed as well (a hotfix of several fields at once).
    let mut mapped: Vec<&DriftItem> = Vec::new();
    let mut notes = vec![format!(
        "{}; the values file is {}",
        spec.describe(root),
        shown(root, &target)
    )];
    for item in chosen {
        let no_value = |why: String| no_value(key, &spec, root, &template, item, why);
        let (candidates, now) =
            candidates_of(key, (&spec, root, &template), &values, rendered, item)?;
        let candidates = in_values_files(key, &spec, root, item, candidates, now, &no_value)?;
        let expected: Vec<&DriftItem> = mapped
            .iter()
            .copied()
            .chain(std::iter::once(*item))
            .collect();
        let found = first_proved(
            key,
            index,
            &spec,
            candidates,
            &overrides,
            (&before, &expected, live),
            &render,
        )?;
        let (candidate, value) = match found {
            Ok(found) => found,
            Err(tried) => {
                // A chart that renders differently each time fails every proof: say that instead.
                let again = objects(&spec, &render(&spec)?);
                if let Some(why) = renders_differently(&spec, &spec.describe(root), &before, &again)
                {
                    return Err(refuse(key, why));
                }
                return Err(no_value(format!("tried {}", tried.join(", "))));
            }
        };
        let was =
            crate::manifest::edit::path::lookup(&values, &candidate_steps(&candidate)).cloned();
        notes.push(format!(
            "{} comes from value {}: {} → {}",
            item.path,
            chart::set_path(&candidate),
            drift::report::short_value(was.as_ref().or(now)),
            drift::report::short_value(Some(&value))
        ));
        chart::merge(&mut values, &nested(&candidate, &value));
        overrides.push((candidate, value));
        mapped.push(item);
    }
    let prepared = values_edit(key, root, &target, &overrides)?;
    notes.push(prove_edited(
        key,
        index,
        &spec,
        &target,
        &prepared,
        (&before, chosen, live),
        &render,
    )?);
    Ok((prepared, notes))
}

/// A values path and the value it would be set to.
type Candidate = (Vec<String>, Value);

/// Why no value of the chart sets `item` alone, naming the template line that writes it.
fn no_value(
    key: &ObjectKey,
    spec: &ChartSpec,
    root: &Path,
    template: &Path,
    item: &DriftItem,
    why: String,
) -> AcceptError {
    let (line, text) = template_line(template, item.path.edit_path().steps());
    refuse(
        key,
        format!(
            "no value of {} sets {} alone ({why}): it is written by {}:{line}{}; edit the template, or revert the cluster to the release (--field PATH accepts other fields alone); nothing was written",
            spec.describe(root),
            item.path,
            shown(root, template),
            if text.is_empty() {
                String::new()
            } else {
                format!(" (`{text}`)")
            }
        ),
    )
}

/// The values that could set `item` to its live value (each to be proved by rendering), and
/// what the chart renders there now: a value whose rendering equals it, the part of a composed
/// string that differs, or the one path a `toYaml .Values…` block renders an added field from.
fn candidates_of<'r>(
    key: &ObjectKey,
    (spec, root, template): (&ChartSpec, &Path, &Path),
    values: &Value,
    rendered: &'r Value,
    item: &DriftItem,
) -> Result<(Vec<Candidate>, Option<&'r Value>), AcceptError> {
    let no_value = |why: String| no_value(key, spec, root, template, item, why);
    let field = item.path.last_field().unwrap_or_default();
    let block = (item.class == Class::AddedLive)
        .then(|| to_yaml_values(template, &item.path))
        .flatten();
    let live_value = match (item.class, item.live.as_ref(), &block) {
        (Class::Changed, Some(live_value), _) | (_, Some(live_value), Some(_)) => live_value,
        _ => {
            return Err(no_value(format!(
                "it is {}, and only a changed value, or one a `toYaml .Values…` block renders, maps to a value",
                item.class.name().replace('-', " ")
            )));
        }
    };
    if live_value.is_object() || live_value.is_array() {
        return Err(no_value("only a single value maps to a value".to_owned()));
    }
    let steps = item.path.edit_path();
    let now = crate::manifest::edit::path::lookup(rendered, steps.steps());
    let set = |keys: Vec<String>| (keys, live_value.clone());
    let candidates = match (&block, now) {
        // Added live under a `toYaml` block: the one values path that block would render it
        // from (proved like any other).
        (Some(keys), _) => vec![set(keys.clone())],
        (None, Some(now)) => {
            let mut found: Vec<_> = chart::candidates(values, now, field)
                .into_iter()
                .map(set)
                .collect();
            // A value of a composed string (`repository:tag`): the part that differs.
            if let (Some(rendered), Some(live)) = (now.as_str(), live_value.as_str()) {
                found.extend(chart::within(values, rendered, live, field));
            }
            found
        }
        (None, None) => return Err(no_value("the chart does not render it".to_owned())),
    };
    Ok((candidates, now))
}

/// The `candidates` a values file can set: one set over the values files (`set:`, an
/// Application's parameters, inline values) is named rather than tried, as an edit of the file
/// would render nothing; a refusal when none is left.
fn in_values_files(
    key: &ObjectKey,
    spec: &ChartSpec,
    root: &Path,
    item: &DriftItem,
    candidates: Vec<Candidate>,
    now: Option<&Value>,
    no_value: &dyn Fn(String) -> AcceptError,
) -> Result<Vec<Candidate>, AcceptError> {
    // A value set where the values file cannot change it (`set:`, an Application's
    // parameters, inline values) is named rather than tried: an edit would render nothing.
    let (outside, candidates): (Vec<_>, Vec<_>) = candidates
        .into_iter()
        .partition(|(keys, _)| chart::set_outside_files(spec, keys, root).is_some());
    if candidates.is_empty()
        && let Some((keys, _)) = outside.first()
    {
        let whose = chart::set_outside_files(spec, keys, root).unwrap_or_default();
        return Err(refuse(
            key,
            format!(
                "{} comes from value {}, which {whose} sets, outside the values files and over them: change it there (kdrift does not edit it), or revert the cluster to the release; nothing was written",
                item.path,
                chart::set_path(keys),
            ),
        ));
    }
    if candidates.is_empty() {
        return Err(no_value(format!(
            "no value is {}",
            drift::report::short_value(now)
        )));
    }
    Ok(candidates)
}

/// The first of `candidates` (values paths, each with the value to set) that, over `overrides`, renders the
/// `expected` fields as `live` has them and nothing else changed from `before`; else what each
/// of those tried gave.
fn first_proved(
    key: &ObjectKey,
    index: &ManifestIndex,
    spec: &Arc<ChartSpec>,
    candidates: Vec<Candidate>,
    overrides: &[(Vec<String>, Value)],
    (before, expected, live): (&HashMap<ObjectKey, Value>, &[&DriftItem], &LiveObject),
    render: &dyn Fn(&ChartSpec) -> Result<String, AcceptError>,
) -> Result<Proved, AcceptError> {
    let mut tried = Vec::new();
    for candidate in candidates.into_iter().take(MAX_TRIES) {
        let mut trial = (**spec).clone();
        let mut layered = Value::Object(Default::default());
        for (keys, value) in overrides.iter().chain(std::iter::once(&candidate)) {
            chart::merge(&mut layered, &nested(keys, value));
        }
        trial.inline_values.push(layered);
        let after = objects(spec, &render(&trial)?);
        match proves(key, before, &after, expected, live, &index.config) {
            Ok(()) => return Ok(Ok(candidate)),
            Err(why) => tried.push(format!("{} ({why})", chart::set_path(&candidate.0))),
        }
    }
    Ok(Err(tried))
}

/// The values path proved and the value it is set to, or what each candidate tried gave.
type Proved = Result<(Vec<String>, Value), Vec<String>>;

/// The edit path of a values path.
fn candidate_steps(keys: &[String]) -> Vec<crate::manifest::edit::PathStep> {
    keys.iter()
        .map(|k| crate::manifest::edit::PathStep::Key(k.clone()))
        .collect()
}

/// The edit of the values file `target` that sets each of `overrides` (a new file when there is
/// none).
fn values_edit(
    key: &ObjectKey,
    root: &Path,
    target: &Path,
    overrides: &[(Vec<String>, Value)],
) -> Result<PreparedEdit, AcceptError> {
    let edits: Vec<FieldEdit> = overrides
        .iter()
        .map(|(keys, value)| FieldEdit::Set {
            path: FieldPath::keys(&keys.iter().map(String::as_str).collect::<Vec<_>>()),
            value: value.clone(),
        })
        .collect();
    if target.is_file() {
        PreparedEdit::new(target, 0, &edits)
            .map_err(|e| refuse(key, format!("cannot edit {}: {e}", shown(root, target))))
    } else {
        let mut text = String::new();
        for (keys, value) in overrides {
            let mut doc: Value = serde_yaml::from_str(&text).unwrap_or(Value::Null);
            if doc.is_null() {
                doc = Value::Object(Default::default());
            }
            chart::merge(&mut doc, &nested(keys, value));
            text = serde_yaml::to_string(&doc).unwrap_or_default();
        }
        Ok(PreparedEdit::new_file(target, text))
    }
}

/// The proof of an accept into a chart's values: the chart rendered with the values file as
/// edited gives `live`'s values for `chosen` and changes nothing else of what it rendered
/// `before`. Its note.
fn prove_edited(
    key: &ObjectKey,
    index: &ManifestIndex,
    spec: &Arc<ChartSpec>,
    target: &Path,
    prepared: &PreparedEdit,
    (before, chosen, live): (&HashMap<ObjectKey, Value>, &[&DriftItem], &LiveObject),
    render: &dyn Fn(&ChartSpec) -> Result<String, AcceptError>,
) -> Result<String, AcceptError> {
    let root = &index.root;
    // The proof: the chart rendered with the values file as edited gives the live values and
    // changes nothing else.
    let scratch =
        tempfile::tempdir().map_err(|e| refuse(key, format!("cannot prove the accept: {e}")))?;
    let mut edited = (**spec).clone();
    let copy = scratch.path().join("values-edited.yaml");
    std::fs::write(&copy, &prepared.after)
        .map_err(|e| refuse(key, format!("cannot prove the accept: {e}")))?;
    if let Some(at) = edited.values_files.iter().position(|f| f == target) {
        edited.values_files[at] = copy;
    } else {
        // The chart's own values.yaml: the chart is copied with the file as edited.
        let chart_copy = scratch.path().join("chart");
        copy_dir(&spec.dir, &chart_copy).map_err(|e| {
            refuse(
                key,
                format!("cannot copy the chart to prove the accept: {e}"),
            )
        })?;
        let relative: PathBuf = target
            .strip_prefix(&spec.dir)
            .map_or_else(|_| PathBuf::from("values.yaml"), Path::to_path_buf);
        std::fs::write(chart_copy.join(relative), &prepared.after)
            .map_err(|e| refuse(key, format!("cannot prove the accept: {e}")))?;
        edited.dir = chart_copy;
    }
    let after = objects(&Arc::new(edited.clone()), &render(&edited)?);
    proves(key, before, &after, chosen, live, &index.config).map_err(|why| {
        refuse(
            key,
            format!("the chart rendered with {} as edited does not give the live values: {why}; nothing was written", shown(root, target)),
        )
    })?;
    Ok(format!(
        "proved: helm template with {} as edited renders {key} as live, and every other field and object as before",
        shown(root, target)
    ))
}

fn shown(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// Copies the folder `from` to `to` (a chart: small).
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::drift::path::DriftPath;

    #[test]
    fn the_template_line_is_the_one_that_writes_the_field_of_that_item() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("deployment.yaml");
        std::fs::write(
            &file,
            "spec:\n  replicas: {{ .Values.replicaCount }}\n  template:\n    spec:\n      containers:\n        - name: web\n          env:\n            - name: GREETING\n              value: {{ .Values.greeting }}\n            - name: LOG_LEVEL\n              value: {{ .Values.logLevel }}\n          resources:\n            {{- toYaml .Values.resources | nindent 12 }}\n",
        )
        .unwrap();
        let item = |name: &str| {
            let mut key = serde_json::Map::new();
            key.insert("name".into(), Value::String(name.into()));
            key
        };
        let container = DriftPath::default()
            .child("spec")
            .child("template")
            .child("spec")
            .child("containers")
            .item(item("web"), None);
        let env = container
            .child("env")
            .item(item("LOG_LEVEL"), None)
            .child("value");
        assert_eq!(
            template_line(&file, env.edit_path().steps()),
            (11, "value: {{ .Values.logLevel }}".to_owned())
        );
        let memory = container.child("resources").child("limits").child("memory");
        assert_eq!(
            template_line(&file, memory.edit_path().steps()),
            (12, "resources:".to_owned())
        );
        let replicas = DriftPath::default().child("spec").child("replicas");
        assert_eq!(template_line(&file, replicas.edit_path().steps()).0, 2);
        // A field added live under the `toYaml` block maps to the block's values below it.
        assert_eq!(
            to_yaml_values(&file, &memory),
            Some(vec!["resources".into(), "limits".into(), "memory".into()])
        );
        assert_eq!(to_yaml_values(&file, &env), None);
    }

    #[test]
    fn a_field_added_under_a_null_map_is_taken_out_with_the_map_it_filled() {
        use crate::manifest::edit::PathStep::Key;
        let old = serde_json::json!({"resources": {"limits": null, "requests": {"cpu": "1m"}}});
        let mut new = serde_json::json!({"resources": {"limits": {"memory": "512Mi"}, "requests": {"cpu": "1m"}}});
        let steps = [
            Key("resources".into()),
            Key("limits".into()),
            Key("memory".into()),
        ];
        without_added(&mut new, &old, &steps);
        assert_eq!(new, old);
        let old = serde_json::json!({"spec": {}});
        let mut new = serde_json::json!({"spec": {"a": {"b": 1}}});
        without_added(
            &mut new,
            &old,
            &[Key("spec".into()), Key("a".into()), Key("b".into())],
        );
        assert_eq!(new, old);
    }
}
