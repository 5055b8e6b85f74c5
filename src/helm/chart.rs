//! A chart of the checkout and how it is rendered: the release name, namespace and values its
//! source gives (`.kdrift.yaml`'s `helm.charts`, an Argo CD Application's `helm` source, or the
//! release in the cluster made from the same chart, whose `config` values are used), and the
//! values merged as helm merges them, to find which value sets a rendered field.
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Where a chart's release name, namespace and values come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValuesSource {
    /// An entry of `.kdrift.yaml`'s `helm.charts`.
    Config { file: PathBuf, line: usize },
    /// An Argo CD Application's `helm` source.
    ArgoApp { app: String },
    /// A Flux HelmRelease whose chart is a path of a GitRepository (its `values` and
    /// `valuesFiles`).
    FluxHelmRelease { name: String },
    /// The release in the cluster made from this chart: its user-supplied values (`config`).
    Release {
        namespace: String,
        name: String,
        revision: u64,
    },
}

impl ValuesSource {
    /// How the output says where the values came from.
    pub fn describe(&self, root: &Path) -> String {
        match self {
            ValuesSource::Config { file, line } => format!(
                "values from {}:{line}",
                file.strip_prefix(root).unwrap_or(file).display()
            ),
            ValuesSource::ArgoApp { app } => format!("values from Argo CD app {app}'s helm source"),
            ValuesSource::FluxHelmRelease { name } => {
                format!("values from Flux HelmRelease {name}")
            }
            ValuesSource::Release {
                namespace,
                name,
                revision,
            } => format!("the values of release {namespace}/{name} rev {revision}"),
        }
    }
}

/// One chart to render: `helm template RELEASE DIR -n NAMESPACE -f VALUES… --set K=V…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartSpec {
    /// The chart's folder (absolute).
    pub dir: PathBuf,
    /// `name` and `version` of its `Chart.yaml`.
    pub name: String,
    pub version: String,
    pub release: String,
    pub namespace: String,
    /// Values files, absolute, in the order helm reads them (later ones win).
    pub values_files: Vec<PathBuf>,
    /// Values given inline (an Application's `values`, a release's `config`), after the files.
    pub inline_values: Vec<Value>,
    /// `--set` pairs, last.
    pub set: Vec<(String, String)>,
    /// The cluster's version, for `--kube-version` (a chart's `kubeVersion` is checked against it).
    pub kube_version: Option<String>,
    pub source: ValuesSource,
}

impl ChartSpec {
    /// `charts/web (release shop/web, values from .kdrift.yaml:4)`.
    pub fn describe(&self, root: &Path) -> String {
        format!(
            "chart {} (release {}/{}, {})",
            self.dir.strip_prefix(root).unwrap_or(&self.dir).display(),
            self.namespace,
            self.release,
            self.source.describe(root)
        )
    }

    /// The values file an accepted value is written into: the last values file the source
    /// names (an environment's), else the chart's own `values.yaml`. `None` when the values
    /// are not in the checkout (a release's `config`).
    pub fn values_target(&self) -> Option<PathBuf> {
        match self.source {
            ValuesSource::Release { .. } => None,
            _ => Some(
                self.values_files
                    .last()
                    .cloned()
                    .unwrap_or_else(|| self.dir.join("values.yaml")),
            ),
        }
    }

    /// The key of the index's files its rendered objects are held under.
    pub fn key(&self) -> PathBuf {
        self.dir.join("Chart.yaml")
    }
}

/// The name and version of the chart in `dir`, or why its `Chart.yaml` gives none: not there,
/// not YAML (the parser's words, with the line), or no `name`.
pub fn read_chart_meta(dir: &std::path::Path) -> Result<(String, String), String> {
    let file = dir.join("Chart.yaml");
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("{} cannot be read: {e}", file.display()))?;
    parse_chart_meta(&text).map_err(|why| format!("{}: {why}", file.display()))
}

/// `name` and `version` of a `Chart.yaml`'s text.
fn parse_chart_meta(text: &str) -> Result<(String, String), String> {
    let value: Value = serde_yaml::from_str(text).map_err(|e| format!("not YAML: {e}"))?;
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or("has no name")?
        .to_owned();
    let version = match value.get("version") {
        Some(Value::String(v)) => v.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    Ok((name, version))
}

/// `overlay` merged into `base` as helm merges values: maps key by key, anything else replaced;
/// a `null` removes the key.
pub fn merge(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                if value.is_null() {
                    base.remove(key);
                    continue;
                }
                match base.get_mut(key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge(existing, value)
                    }
                    _ => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, overlay) => *base = overlay.clone(),
    }
}

/// A `--set` path (`image.tag`, `a\.b.c`) as its keys.
pub fn set_keys(path: &str) -> Vec<String> {
    let mut keys = vec![String::new()];
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next()
                    && let Some(last) = keys.last_mut()
                {
                    last.push(next);
                }
            }
            '.' => keys.push(String::new()),
            other => {
                if let Some(last) = keys.last_mut() {
                    last.push(other)
                }
            }
        }
    }
    keys
}

/// A `--set` path for `keys` (dots in a key escaped).
pub fn set_path(keys: &[String]) -> String {
    keys.iter()
        .map(|k| k.replace('\\', "\\\\").replace('.', "\\."))
        .collect::<Vec<_>>()
        .join(".")
}

/// Where a source that wins over the values files sets the value at `keys` (or one above it):
/// `.kdrift.yaml`'s `set:`, an Argo CD Application's `parameters` or inline values, a Flux
/// HelmRelease's `values`. An edit of a values file there would change nothing rendered.
pub fn set_outside_files(spec: &ChartSpec, keys: &[String], root: &Path) -> Option<String> {
    let path = set_path(keys);
    let set = spec
        .set
        .iter()
        .find(|(k, _)| *k == path || path.starts_with(&format!("{k}.")));
    if let Some((k, v)) = set {
        let whose = match &spec.source {
            ValuesSource::Config { file, line } => format!(
                "the set: of {}:{line}",
                file.strip_prefix(root).unwrap_or(file).display()
            ),
            ValuesSource::ArgoApp { app } => format!("Argo CD app {app}'s helm.parameters"),
            other => other.describe(root),
        };
        return Some(format!("{whose} ({k}={v})"));
    }
    let inline = (1..=keys.len()).any(|len| {
        spec.inline_values
            .iter()
            .any(|values| lookup(values, &keys[..len]).is_some_and(|v| !v.is_object()))
    }) || spec
        .inline_values
        .iter()
        .any(|values| lookup(values, keys).is_some());
    inline.then(|| match &spec.source {
        ValuesSource::ArgoApp { app } => format!("Argo CD app {app}'s inline helm values"),
        ValuesSource::FluxHelmRelease { name } => format!("Flux HelmRelease {name}'s spec.values"),
        ValuesSource::Release {
            namespace, name, ..
        } => format!("the values of release {namespace}/{name} (helm get values)"),
        ValuesSource::Config { file, line } => format!(
            "the inline values of {}:{line}",
            file.strip_prefix(root).unwrap_or(file).display()
        ),
    })
}

/// The value at `keys` of `values`.
pub fn lookup<'v>(values: &'v Value, keys: &[String]) -> Option<&'v Value> {
    keys.iter().try_fold(values, |at, key| at.get(key))
}

/// Every scalar leaf of `values` equal to `value` (or to its text: a template may quote a
/// number), as key paths, those whose last key reads like `field` first (`replicaCount` for
/// `replicas`), then the shorter.
pub fn candidates(values: &Value, value: &Value, field: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = leaves(values)
        .into_iter()
        .filter(|(_, leaf)| same_scalar(leaf, value))
        .map(|(keys, _)| keys)
        .collect();
    let field = field.to_ascii_lowercase();
    let stem = field.trim_end_matches('s');
    out.sort_by_key(|keys| {
        let last = keys
            .last()
            .map(|k| k.to_ascii_lowercase())
            .unwrap_or_default();
        let near = !(last.contains(stem) || stem.contains(last.as_str()));
        (near, keys.len())
    });
    out
}

/// Every scalar of `values` (lists are not walked: a value path names no item), with its path.
fn leaves(values: &Value) -> Vec<(Vec<String>, &Value)> {
    fn walk<'v>(at: &'v Value, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, &'v Value)>) {
        match at {
            Value::Object(map) => {
                for (key, child) in map {
                    path.push(key.clone());
                    walk(child, path, out);
                    path.pop();
                }
            }
            Value::Array(_) => {}
            leaf => out.push((path.clone(), leaf)),
        }
    }
    let mut out = Vec::new();
    walk(values, &mut Vec::new(), &mut out);
    out
}

/// Values whose text a rendered string holds, each with the value that would make it render
/// `live` instead — the values of a composed string: `"{{ .Values.image.repository }}:{{
/// .Values.image.tag }}"` renders `ghcr.io/x/web:1.0`, live is `ghcr.io/x/web:1.1`, and
/// `image.tag` (`1.0`) is a candidate set to `1.1`. Each is still to be proved by rendering; the
/// longest texts come first (the most specific), then those named like `field`.
pub fn within(
    values: &Value,
    rendered: &str,
    live: &str,
    field: &str,
) -> Vec<(Vec<String>, Value)> {
    let field = field.to_ascii_lowercase();
    let mut out: Vec<(usize, bool, Vec<String>, Value)> = leaves(values)
        .into_iter()
        .filter_map(|(keys, leaf)| {
            let (text, number) = match leaf {
                Value::String(text) if !text.is_empty() => (text.clone(), false),
                Value::Number(n) => (n.to_string(), true),
                _ => return None,
            };
            let at = rendered.find(&text)?;
            let (before, after) = (&rendered[..at], &rendered[at + text.len()..]);
            let middle = live
                .strip_prefix(before)?
                .strip_suffix(after)
                .filter(|m| !m.is_empty() && *m != text)?;
            let value = match middle.parse::<serde_json::Number>() {
                Ok(n) if number => Value::Number(n),
                _ => Value::String(middle.to_owned()),
            };
            let last = keys
                .last()
                .map(|k| k.to_ascii_lowercase())
                .unwrap_or_default();
            let near = last.contains(&field) || field.contains(last.as_str());
            Some((text.len(), near, keys, value))
        })
        .collect();
    out.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then(a.2.len().cmp(&b.2.len()))
    });
    out.into_iter()
        .map(|(_, _, keys, value)| (keys, value))
        .collect()
}

/// Two scalars that render the same: equal, or a number and its text.
fn same_scalar(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::Number(n)) | (Value::Number(n), Value::String(x)) => {
            x == &n.to_string()
        }
        _ => a == b,
    }
}

/// The values `spec` renders with, before the `--set` pairs: the chart's `values.yaml`, then
/// each values file, then the inline values (IO: reads the files; an unreadable one is skipped,
/// the render says why).
pub fn merged_values(spec: &ChartSpec) -> Value {
    let mut values = Value::Object(Map::new());
    let read = |path: &Path| -> Option<Value> {
        let text = std::fs::read_to_string(path).ok()?;
        serde_yaml::from_str(&text).ok()
    };
    if let Some(defaults) = read(&spec.dir.join("values.yaml")) {
        merge(&mut values, &defaults);
    }
    for file in &spec.values_files {
        if let Some(file_values) = read(file) {
            merge(&mut values, &file_values);
        }
    }
    for inline in &spec.inline_values {
        merge(&mut values, inline);
    }
    values
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_chart_yaml_that_does_not_read_says_why_with_its_line() {
        assert_eq!(
            parse_chart_meta("apiVersion: v2\nname: web\nversion: 1.2.0\n"),
            Ok(("web".to_owned(), "1.2.0".to_owned()))
        );
        let bad = parse_chart_meta("apiVersion: v2\nname: [web\nversion: 1\n").unwrap_err();
        assert!(
            bad.starts_with("not YAML: ") && bad.contains("line"),
            "{bad}"
        );
        assert_eq!(
            parse_chart_meta("apiVersion: v2\n"),
            Err("has no name".to_owned())
        );
    }

    #[test]
    fn values_merge_as_helm_merges_them() {
        let mut base = json!({"image": {"repo": "a", "tag": "1"}, "replicaCount": 1, "gone": 2});
        merge(
            &mut base,
            &json!({"image": {"tag": "2"}, "replicaCount": 3, "gone": null}),
        );
        assert_eq!(
            base,
            json!({"image": {"repo": "a", "tag": "2"}, "replicaCount": 3})
        );
    }

    #[test]
    fn candidates_are_the_leaves_with_the_rendered_value_nearest_name_first() {
        let values = json!({"hpa": {"maxReplicas": 2}, "replicaCount": 2, "ui": {"port": "2"}});
        assert_eq!(
            candidates(&values, &json!(2), "replicas"),
            vec![
                vec!["replicaCount".to_owned()],
                vec!["hpa".to_owned(), "maxReplicas".to_owned()],
                vec!["ui".to_owned(), "port".to_owned()],
            ]
        );
    }

    #[test]
    fn values_within_a_composed_string_are_candidates_set_to_what_differs() {
        let values = json!({
            "image": {"repository": "ghcr.io/x/web", "tag": "1.0.3", "pullPolicy": "IfNotPresent"},
            "port": 9898,
            "ui": {"suffix": "3"}
        });
        let found = within(
            &values,
            "ghcr.io/x/web:1.0.3",
            "ghcr.io/x/web:1.0.2-crash",
            "image",
        );
        assert_eq!(
            found.first(),
            Some(&(
                vec!["image".to_owned(), "tag".to_owned()],
                json!("1.0.2-crash")
            )),
            "{found:?}"
        );
        // The repository is in the string but the live one does not end as it would.
        assert!(!found.iter().any(|(k, _)| k.last().unwrap() == "repository"));
        // A number stays a number.
        let found = within(&values, "--port=9898", "--port=9899", "args");
        assert_eq!(found, vec![(vec!["port".to_owned()], json!(9899))]);
        // Nothing differs: no candidate.
        assert!(
            within(
                &values,
                "ghcr.io/x/web:1.0.3",
                "ghcr.io/x/web:1.0.3",
                "image"
            )
            .is_empty()
        );
    }

    #[test]
    fn set_paths_escape_dots() {
        let keys = set_keys(r"podAnnotations.prometheus\.io/port");
        assert_eq!(keys, ["podAnnotations", "prometheus.io/port"]);
        assert_eq!(set_path(&keys), r"podAnnotations.prometheus\.io/port");
    }

    #[test]
    fn a_release_s_values_are_not_a_file_to_accept_into() {
        let spec = ChartSpec {
            dir: PathBuf::from("/repo/charts/web"),
            name: "web".into(),
            version: "1.0.0".into(),
            release: "web".into(),
            namespace: "shop".into(),
            values_files: vec![PathBuf::from("/repo/envs/prod.yaml")],
            inline_values: Vec::new(),
            set: Vec::new(),
            kube_version: None,
            source: ValuesSource::Config {
                file: PathBuf::from("/repo/.kdrift.yaml"),
                line: 3,
            },
        };
        assert_eq!(
            spec.values_target(),
            Some(PathBuf::from("/repo/envs/prod.yaml"))
        );
        assert_eq!(
            spec.describe(Path::new("/repo")),
            "chart charts/web (release shop/web, values from .kdrift.yaml:3)"
        );
        let from_release = ChartSpec {
            source: ValuesSource::Release {
                namespace: "shop".into(),
                name: "web".into(),
                revision: 2,
            },
            ..spec
        };
        assert_eq!(from_release.values_target(), None);
    }
}
