//! Where a chart's template writes a field: the template line (each field by its `name:` line,
//! each list item by a line naming its key), and the line of the environment's values file that
//! sets the value the line reads — for a refusal that names it, and `check -o github`.
use std::path::Path;

use serde_json::Value;

use super::super::edit::PathStep;
use super::super::lines::{Step, line_of};
use crate::helm::chart::ChartSpec;

/// The line of `template` (a chart's file) that writes the field at `path`, 1-based, and its
/// text: the path followed down the template, each field by its `name:` line and each list item
/// by a line naming its key (`- name: LOG_LEVEL`), from where the step before was found; the
/// deepest step found (a `toYaml` block renders the fields below its own line).
pub fn template_line(template: &Path, path: &[PathStep]) -> (usize, String) {
    template_line_in(&std::fs::read_to_string(template).unwrap_or_default(), path)
}

/// [`template_line`] in a template's text already read (several fields of one object).
pub fn template_line_in(text: &str, path: &[PathStep]) -> (usize, String) {
    let lines: Vec<&str> = text.lines().collect();
    match deepest_step(&lines, path) {
        Some((_, at)) => (at + 1, lines[at].trim().to_owned()),
        None => (1, String::new()),
    }
}

/// Where the checkout says a release object's field at `path`: the line of the environment's
/// values file (of `spec`, the last that sets it: helm's order) that sets the value the template
/// line writing the field reads (`.Values.X` alone on that line; the field's steps below it for
/// a `toYaml .Values.X` block), else that template line of `template` (its `text`).
pub fn field_place(
    spec: &ChartSpec,
    template: &Path,
    text: &str,
    path: &[PathStep],
) -> crate::manifest::Place {
    let lines: Vec<&str> = text.lines().collect();
    let found = deepest_step(&lines, path);
    let at_template = crate::manifest::Place {
        file: template.to_path_buf(),
        line: found.map_or(1, |(_, at)| at + 1),
        what: Some("template"),
    };
    let Some((step, at)) = found else {
        return at_template;
    };
    let Some(reference) = values_reference(lines[at]) else {
        return at_template;
    };
    let below: Vec<String> = path[step + 1..]
        .iter()
        .map_while(|s| match s {
            PathStep::Key(name) => Some(name.clone()),
            _ => None,
        })
        .collect();
    // `toYaml .Values.resources` at `resources:`: the field is `resources.limits.memory`.
    let keys: Vec<String> = if below.len() == path.len() - step - 1 {
        reference.iter().cloned().chain(below).collect()
    } else {
        reference
    };
    for file in spec.values_files.iter().rev() {
        let Ok(values_text) = std::fs::read_to_string(file) else {
            continue;
        };
        let Ok(values) = serde_yaml::from_str::<Value>(&values_text) else {
            continue;
        };
        let sets = keys
            .iter()
            .try_fold(&values, |node, key| node.get(key))
            .is_some();
        if sets {
            let steps: Vec<Step<'_>> = keys.iter().map(|k| Step::Field(k)).collect();
            return crate::manifest::Place {
                file: file.clone(),
                line: line_of(&values_text, &steps) + 1,
                what: Some("values"),
            };
        }
    }
    at_template
}

/// The one `.Values.X.Y` a template line reads (`["X", "Y"]`); `None` for none or several.
fn values_reference(line: &str) -> Option<Vec<String>> {
    let mut found: Option<Vec<String>> = None;
    for (at, _) in line.match_indices(".Values.") {
        let rest = &line[at + ".Values.".len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        let keys: Vec<String> = rest[..end]
            .split('.')
            .filter(|k| !k.is_empty())
            .map(str::to_owned)
            .collect();
        if keys.is_empty() || found.as_ref().is_some_and(|f| *f != keys) {
            return None;
        }
        found = Some(keys);
    }
    found
}

/// The deepest step of `path` found down the template's `lines` ([`template_line`]): its index
/// in the path and its line (0-based).
pub fn deepest_step(lines: &[&str], path: &[PathStep]) -> Option<(usize, usize)> {
    let mut found: Option<(usize, usize)> = None;
    for (index, step) in path.iter().enumerate() {
        let from = found.map_or(0, |(_, line)| line);
        let at = match step {
            PathStep::Key(name) => {
                let wanted = format!("{name}:");
                let field = |line: &&str| {
                    let line = line.trim_start().trim_start_matches("- ");
                    line.starts_with(&wanted)
                };
                lines[from..].iter().position(field)
            }
            PathStep::Item(key) => lines[from..].iter().position(|line| {
                key.values().any(|v| {
                    v.as_str().is_some_and(|v| line.contains(v)) || line.contains(&v.to_string())
                })
            }),
            PathStep::Value(_) | PathStep::Index(_) => None,
        };
        if let Some(at) = at {
            found = Some((index, from + at));
        }
    }
    found
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_template_line_reading_one_value_names_it_and_several_name_none() {
        let keys = |line| values_reference(line);
        assert_eq!(
            keys("  replicas: {{ .Values.replicaCount }}"),
            Some(vec!["replicaCount".to_owned()])
        );
        assert_eq!(
            keys("{{- toYaml .Values.resources | nindent 12 }}"),
            Some(vec!["resources".to_owned()])
        );
        assert_eq!(
            keys(r#"image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}""#),
            None
        );
        assert_eq!(keys("name: {{ .Release.Name }}"), None);
    }
}
