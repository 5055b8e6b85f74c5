//! Helm charts in the checkout: a folder with a `Chart.yaml` is never read as plain manifests;
//! it is rendered with the user's `helm template` as its source says (`.kdrift.yaml`'s
//! `helm.charts`, an Argo CD Application's `helm` source, or the release in the cluster made
//! from the same chart, with that release's values), and its objects are indexed as the chart's. Three states are kept apart: where a
//! release of the chart is in the cluster its manifest is the desired state of the live objects
//! (`manifest/helm.rs`), and git's render differing from it is a pending upgrade
//! ([`ManifestIndex::pending_upgrades`]), not drift.
//!
//! ```yaml
//! # .kdrift.yaml
//! helm:
//!   charts:
//!     - path: charts/web            # the chart folder, under the manifests root
//!       release: web                # default: the chart's name
//!       namespace: shop             # default: the namespace in use
//!       values: [envs/prod/web.yaml] # values files, under the manifests root, in order
//!       set: {image.tag: "1.2.3"}   # --set pairs (optional)
//! ```
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::lines::{Step, line_of};
use super::parse::{ParsedFile, parse_file_sharing};
use super::tree::Names;
use super::{ManifestIndex, ObjectKey, Problem};

mod pending;
mod template;

use crate::helm::chart::{ChartSpec, ValuesSource};
use crate::helm::render::RenderError;
use pending::differences;
pub use template::{deepest_step, field_place, template_line, template_line_in};

/// One entry of `.kdrift.yaml`'s `helm.charts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartEntry {
    /// The chart folder, relative to the manifests root.
    pub path: String,
    pub release: Option<String>,
    pub namespace: Option<String>,
    /// Values files, relative to the manifests root.
    pub values: Vec<String>,
    pub set: Vec<(String, String)>,
    /// 1-based line of the entry.
    pub line: usize,
}

/// Parses `helm:` of `.kdrift.yaml` (`text`, named `file`).
pub fn parse_config(value: &Value, text: &str, file: &Path) -> (Vec<ChartEntry>, Vec<Problem>) {
    let mut entries = Vec::new();
    let mut problems = Vec::new();
    let problem = |steps: &[Step<'_>], message: String| Problem::BadConfig {
        file: file.to_path_buf(),
        line: line_of(text, steps) + 1,
        message,
    };
    let charts = match value {
        Value::Null => return (entries, problems),
        Value::Object(map) => {
            if let Some(unknown) = map.keys().find(|k| k.as_str() != "charts") {
                problems.push(problem(
                    &[Step::Field("helm"), Step::Field(unknown)],
                    format!("unknown key \"{unknown}\" in helm (expected charts)"),
                ));
            }
            match map.get("charts") {
                None | Some(Value::Null) => return (entries, problems),
                Some(Value::Array(charts)) => charts,
                Some(_) => {
                    problems.push(problem(
                        &[Step::Field("helm"), Step::Field("charts")],
                        "helm.charts must be a list of charts, each with a \"path\"".to_owned(),
                    ));
                    return (entries, problems);
                }
            }
        }
        _ => {
            problems.push(problem(
                &[Step::Field("helm")],
                "\"helm\" must be a mapping with \"charts\"".to_owned(),
            ));
            return (entries, problems);
        }
    };
    for (at, chart) in charts.iter().enumerate() {
        let steps = [Step::Field("helm"), Step::Field("charts"), Step::Item(at)];
        match parse_entry(chart) {
            Ok(mut entry) => {
                entry.line = line_of(text, &steps) + 1;
                entries.push(entry);
            }
            Err(message) => problems.push(problem(&steps, message)),
        }
    }
    (entries, problems)
}

fn parse_entry(chart: &Value) -> Result<ChartEntry, String> {
    const KEYS: [&str; 5] = ["path", "release", "namespace", "values", "set"];
    let Some(map) = chart.as_object() else {
        return Err("a chart must be a mapping with \"path\"".to_owned());
    };
    if let Some(unknown) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "unknown key \"{unknown}\" in a chart (expected {})",
            KEYS.join(", ")
        ));
    }
    let text = |key: &str| -> Result<Option<String>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(other) => Err(format!("a chart's \"{key}\" must be a name, not {other}")),
        }
    };
    let path =
        text("path")?.ok_or("a chart needs \"path\": its folder under the manifests root")?;
    let values = match map.get("values") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(one)) => vec![one.clone()],
        Some(Value::Array(files)) => files
            .iter()
            .map(|f| f.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or("a chart's \"values\" must be a list of files")?,
        Some(_) => return Err("a chart's \"values\" must be a list of files".to_owned()),
    };
    let set = match map.get("set") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(pairs)) => pairs
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), v)
            })
            .collect(),
        Some(_) => return Err("a chart's \"set\" must map value paths to values".to_owned()),
    };
    Ok(ChartEntry {
        path,
        release: text("release")?,
        namespace: text("namespace")?,
        values,
        set,
        line: 0,
    })
}

/// The chart folders among the manifest files (`Chart.yaml`'s folders), and the files that are
/// no manifests of their own because they are in one.
pub fn split_charts(files: Vec<PathBuf>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut charts: Vec<PathBuf> = files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "Chart.yaml"))
        .filter_map(|f| f.parent().map(Path::to_path_buf))
        .collect();
    charts.sort();
    // A subchart (under charts/ of another) is its parent's.
    let tops: Vec<PathBuf> = charts
        .iter()
        .filter(|c| !charts.iter().any(|o| o != *c && c.starts_with(o)))
        .cloned()
        .collect();
    let plain = files
        .into_iter()
        .filter(|f| !tops.iter().any(|c| f.starts_with(c)))
        .collect();
    (tops, plain)
}

/// What to render: each chart folder as `.kdrift.yaml` says, else as each release in the
/// cluster made from the chart of that name (its values); a chart no source names is said
/// and left unrendered.
pub fn specs(index: &ManifestIndex, kube_version: Option<&str>) -> (Vec<ChartSpec>, Vec<Problem>) {
    let mut specs = Vec::new();
    let mut problems = Vec::new();
    let root = &index.root;
    let config_file = root.join(super::config::CONFIG_FILE);
    for entry in &index.config.helm_charts {
        let dir = super::kustomize::tree::normalize(&root.join(&entry.path));
        // A chart a sparse checkout leaves out is in git, not on disk: said by the sparse
        // checkout's note, as every file it leaves out.
        let left_out = || {
            !dir.exists()
                && crate::git::not_checked_out(root)
                    .unwrap_or_default()
                    .iter()
                    .any(|file| file.starts_with(&dir))
        };
        if !index.charts_found.contains(&dir) && !left_out() {
            problems.push(Problem::BadConfig {
                file: config_file.clone(),
                line: entry.line,
                message: format!(
                    "helm chart \"{}\": no Chart.yaml in that folder of the manifests",
                    entry.path
                ),
            });
        }
    }
    for dir in &index.charts_found {
        let (name, version) = match crate::helm::chart::read_chart_meta(dir) {
            Ok(meta) => meta,
            Err(why) => {
                problems.push(Problem::Skipped {
                    file: dir.join("Chart.yaml"),
                    reason: format!("not read as a chart: {why}"),
                });
                continue;
            }
        };
        let configured: Vec<&ChartEntry> = index
            .config
            .helm_charts
            .iter()
            .filter(|e| super::kustomize::tree::normalize(&root.join(&e.path)) == *dir)
            .collect();
        let base = |release: String, namespace: String, source| ChartSpec {
            dir: dir.clone(),
            name: name.clone(),
            version: version.clone(),
            release,
            namespace,
            values_files: Vec::new(),
            inline_values: Vec::new(),
            set: Vec::new(),
            kube_version: kube_version.map(str::to_owned),
            source,
        };
        if !configured.is_empty() {
            for entry in configured {
                let mut spec = base(
                    entry.release.clone().unwrap_or_else(|| name.clone()),
                    entry
                        .namespace
                        .clone()
                        .unwrap_or_else(|| index.default_namespace.clone()),
                    ValuesSource::Config {
                        file: config_file.clone(),
                        line: entry.line,
                    },
                );
                spec.values_files = entry
                    .values
                    .iter()
                    .map(|v| super::kustomize::tree::normalize(&root.join(v)))
                    .collect();
                spec.set = entry.set.clone();
                specs.push(spec);
            }
            continue;
        }
        let from_apps: Vec<&ChartSpec> = index
            .selection
            .charts
            .iter()
            .filter(|c| c.dir == *dir)
            .collect();
        if !from_apps.is_empty() {
            for chart in from_apps {
                specs.push(ChartSpec {
                    kube_version: kube_version.map(str::to_owned),
                    ..chart.clone()
                });
            }
            continue;
        }
        let releases: Vec<_> = index
            .releases
            .iter()
            .filter(|r| r.chart.name == name)
            .collect();
        if releases.is_empty() {
            problems.push(Problem::Note {
                file: dir.clone(),
                message: format!(
                    "Helm chart {name} is not rendered: no release of it is in the cluster and no helm.charts entry of .kdrift.yaml names its release, namespace and values"
                ),
            });
            continue;
        }
        for release in releases {
            let mut spec = base(
                release.name.clone(),
                release.namespace.clone(),
                ValuesSource::Release {
                    namespace: release.namespace.clone(),
                    name: release.name.clone(),
                    revision: release.revision,
                },
            );
            spec.inline_values = vec![release.config.clone()];
            specs.push(spec);
        }
    }
    (specs, problems)
}

/// The charts of `index` rendered as their sources say (blocking: one `helm template` each):
/// what [`ManifestIndex::set_charts`] takes. `check` and the live view render through here.
pub fn render(
    index: &ManifestIndex,
    kube_version: Option<&str>,
) -> (Vec<ChartRender>, Vec<Problem>) {
    if !index.has_charts() {
        return (Vec::new(), Vec::new());
    }
    let (specs, problems) = specs(index, kube_version);
    (render_all(specs), problems)
}

/// A chart rendered, or why not.
#[derive(Debug, Clone)]
pub struct ChartRender {
    pub spec: Arc<ChartSpec>,
    pub result: Result<String, RenderError>,
}

/// Renders every chart (IO: one `helm template` each, on all cores).
pub fn render_all(specs: Vec<ChartSpec>) -> Vec<ChartRender> {
    super::on_all_cores(&specs, 2, |_: &mut (), spec: &ChartSpec| ChartRender {
        spec: Arc::new(spec.clone()),
        result: crate::helm::render::render(spec),
    })
}

/// The key of the index's files a render is held under: the chart's `Chart.yaml`, with the
/// release when one chart renders for several.
fn render_key(spec: &ChartSpec, several: bool) -> PathBuf {
    if several {
        PathBuf::from(format!(
            "{} (release {}/{})",
            spec.key().display(),
            spec.namespace,
            spec.release
        ))
    } else {
        spec.key()
    }
}

/// The objects of a chart's rendered `text`, each placed at its template (`# Source:`).
pub fn objects_of(spec: &Arc<ChartSpec>, key: &Path, text: &str, names: &mut Names) -> ParsedFile {
    let key: Arc<Path> = Arc::from(key);
    let mut parsed = parse_file_sharing(&key, &Arc::from(text), &spec.namespace, names);
    // Hooks are run by helm, not kept in the release: never desired state.
    parsed.objects.retain(|o| {
        o.body
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get(crate::helm::HOOK_ANNOTATION))
            .is_none()
    });
    let sources = crate::helm::render::sources(text);
    for object in &mut parsed.objects {
        let source = sources
            .iter()
            .rev()
            .find(|(line, _)| *line < object.line)
            .map(|(_, source)| source.clone());
        if let Some(source) = source {
            object.file = Arc::from(crate::helm::render::source_file(&spec.dir, &source));
        }
        object.line = 1;
        object.doc_span = 0..0;
        object.doc_first_line = 0;
        object.digest = 0;
        object.item = None;
        object.rendered = Some(Arc::clone(&key));
        object.chart = Some(Arc::clone(spec));
        // helm installs a chart with its label and release annotations on every object; Argo CD
        // renders charts with helm template and applies them without.
        if !matches!(spec.source, ValuesSource::ArgoApp { .. }) {
            let mut body = object.body.to_value();
            crate::helm::Release::add_metadata(&spec.release, &spec.namespace, &mut body);
            object.body = names.pack(&body);
        }
    }
    parsed
}

/// One object whose git render differs from the release in the cluster: a `helm upgrade` of
/// the checkout would change it.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingUpgrade {
    pub key: ObjectKey,
    /// `chart charts/web (release shop/web, values from …)`.
    pub chart: String,
    /// The release's source, `helm:NS/RELEASE rev N (chart NAME-VERSION)`.
    pub release: String,
    /// What changes: `(path, release's value, git's value)`; empty with `change` set for a
    /// whole object.
    pub fields: Vec<(String, Option<Value>, Option<Value>)>,
    /// `added by the upgrade`, `removed by the upgrade`, or empty for changed fields.
    pub change: &'static str,
}

impl ManifestIndex {
    /// Sets the charts' renders (replacing those set before) and returns the keys whose desired
    /// state may have changed. A chart that did not render is a problem naming it and helm's
    /// words (helm missing or failing alike: git is unread there); the rest is compared.
    pub fn set_charts(
        &mut self,
        renders: Vec<ChartRender>,
        problems: Vec<Problem>,
    ) -> Vec<ObjectKey> {
        let mut touched = Vec::new();
        for path in std::mem::take(&mut self.chart_files) {
            if let Some(parsed) = self.files.remove(&path) {
                touched.extend(parsed.objects.into_iter().map(|o| o.key));
            }
        }
        self.chart_problems = problems;
        let mut per_dir: BTreeMap<PathBuf, usize> = BTreeMap::new();
        for render in &renders {
            *per_dir.entry(render.spec.dir.clone()).or_default() += 1;
        }
        let mut names = Names::default();
        for render in renders {
            let spec = &render.spec;
            let several = per_dir.get(&spec.dir).is_some_and(|n| *n > 1);
            let shown = spec.describe(&self.root);
            match render.result {
                Ok(text) => {
                    let key = render_key(spec, several);
                    let parsed = objects_of(spec, &key, &text, &mut names);
                    touched.extend(parsed.objects.iter().map(|o| o.key.clone()));
                    self.chart_problems.push(Problem::Note {
                        file: spec.dir.clone(),
                        message: format!(
                            "rendered {shown} with {}: {} objects",
                            crate::helm::render::helm()
                                .map_or_else(|| "helm".to_owned(), |h| h.describe()),
                            parsed.objects.len()
                        ),
                    });
                    self.chart_files.insert(key.clone());
                    self.files.insert(key, parsed);
                }
                // A chart not rendered is git's desired state unread: never a green check,
                // whether helm is missing or failed.
                Err(error) => self.chart_problems.push(Problem::Unrendered {
                    file: spec.dir.clone(),
                    reason: format!("{shown} not rendered: {error}"),
                    namespace: spec.namespace.clone(),
                }),
            }
        }
        self.rebuild();
        touched.sort();
        touched.dedup();
        touched
    }

    /// Whether the checkout has charts to render (found, or named by `.kdrift.yaml`).
    pub fn has_charts(&self) -> bool {
        !self.charts_found.is_empty() || !self.config.helm_charts.is_empty()
    }

    /// Whether a change of `path` may change a chart's render: a file of a chart's folder, or
    /// a values file `.kdrift.yaml` or an Application names.
    pub fn concerns_charts(&self, path: &Path) -> bool {
        self.charts_found.iter().any(|dir| path.starts_with(dir))
            || self
                .config
                .helm_charts
                .iter()
                .flat_map(|entry| &entry.values)
                .any(|v| super::kustomize::tree::normalize(&self.root.join(v)) == path)
            || self
                .selection
                .charts
                .iter()
                .flat_map(|chart| &chart.values_files)
                .any(|v| v == path)
    }

    /// The chart render of `key` (git's desired state for a release's object), if a chart of
    /// the checkout renders it.
    pub fn chart_object(&self, key: &ObjectKey) -> Option<&super::ManifestObject> {
        self.chart_files
            .iter()
            .filter_map(|path| self.files.get(path))
            .flat_map(|parsed| parsed.objects.iter())
            .find(|o| o.key == *key)
    }

    /// Git's render of a release's object as helm would apply it (with the label and release
    /// annotations helm adds), when a chart of the checkout renders that release: what
    /// `helm upgrade` would put live.
    pub fn git_render_as_applied(&self, key: &ObjectKey) -> Option<Value> {
        let object = self.chart_object(key)?;
        let spec = object.chart.as_ref()?;
        let release = self
            .releases
            .iter()
            .find(|r| r.name == spec.release && r.namespace == spec.namespace)?;
        let mut git = object.body.to_value();
        release.as_applied(&mut git);
        Some(git)
    }

    /// Where git's render of a chart differs from the release of it in the cluster: each
    /// object the upgrade would change, add or remove.
    pub fn pending_upgrades(&self) -> Vec<PendingUpgrade> {
        let mut out = Vec::new();
        for parsed in self.chart_files.iter().filter_map(|p| self.files.get(p)) {
            let Some(spec) = parsed.objects.first().and_then(|o| o.chart.clone()) else {
                continue;
            };
            let Some(release) = self
                .releases
                .iter()
                .find(|r| r.name == spec.release && r.namespace == spec.namespace)
            else {
                continue;
            };
            let chart = spec.describe(&self.root);
            for object in &parsed.objects {
                let mut git = object.body.to_value();
                release.as_applied(&mut git);
                match self.get(&object.key).filter(|o| o.helm.is_some()) {
                    Some(released) => {
                        let mut fields = Vec::new();
                        let schema = crate::schema::Schemas::builtin()
                            .root(&object.api_version, &object.key.kind);
                        differences(
                            schema,
                            &released.body.to_value(),
                            &git,
                            &mut Vec::new(),
                            &mut fields,
                        );
                        if object.key.is_secret() {
                            // A Secret's values are never shown: only which fields change.
                            let hidden = || Some(Value::String("(secret value)".to_owned()));
                            for (_, release, git) in &mut fields {
                                *release = release.as_ref().and(hidden());
                                *git = git.as_ref().and(hidden());
                            }
                        }
                        if !fields.is_empty() {
                            out.push(PendingUpgrade {
                                key: object.key.clone(),
                                chart: chart.clone(),
                                release: release.source(),
                                fields,
                                change: "",
                            });
                        }
                    }
                    None => out.push(PendingUpgrade {
                        key: object.key.clone(),
                        chart: chart.clone(),
                        release: release.source(),
                        fields: Vec::new(),
                        change: "added by the upgrade",
                    }),
                }
            }
            let source = PathBuf::from(release.source());
            if let Some(released) = self.files.get(&source) {
                for object in &released.objects {
                    if !parsed.objects.iter().any(|o| o.key == object.key) {
                        out.push(PendingUpgrade {
                            key: object.key.clone(),
                            chart: chart.clone(),
                            release: release.source(),
                            fields: Vec::new(),
                            change: "removed by the upgrade",
                        });
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn files_in_a_chart_folder_are_not_plain_manifests() {
        let files = vec![
            PathBuf::from("/r/apps/web.yaml"),
            PathBuf::from("/r/charts/web/Chart.yaml"),
            PathBuf::from("/r/charts/web/values.yaml"),
            PathBuf::from("/r/charts/web/templates/deployment.yaml"),
            PathBuf::from("/r/charts/web/charts/db/Chart.yaml"),
        ];
        let (charts, plain) = split_charts(files);
        assert_eq!(charts, [PathBuf::from("/r/charts/web")]);
        assert_eq!(plain, [PathBuf::from("/r/apps/web.yaml")]);
    }

    #[test]
    fn the_config_names_charts_and_bad_entries_say_their_line() {
        let text = "helm:\n  charts:\n    - path: charts/web\n      release: web\n      namespace: shop\n      values: [envs/prod.yaml]\n      set: {replicaCount: 3}\n    - release: nope\n";
        let value: Value = serde_yaml::from_str(text).unwrap();
        let (entries, problems) = parse_config(&value["helm"], text, Path::new("/r/.kdrift.yaml"));
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].path, "charts/web");
        assert_eq!(entries[0].values, ["envs/prod.yaml"]);
        assert_eq!(
            entries[0].set,
            [("replicaCount".to_owned(), "3".to_owned())]
        );
        assert_eq!(entries[0].line, 3);
        assert_eq!(problems.len(), 1);
        assert_eq!(
            problems[0].to_string(),
            "/r/.kdrift.yaml:8: a chart needs \"path\": its folder under the manifests root"
        );
    }

    #[test]
    fn a_keyed_list_is_compared_by_key_and_named_as_drift_names_it() {
        let deployment = crate::schema::Schemas::builtin().root("apps/v1", "Deployment");
        let with = |level: &str, extra: bool| {
            let mut env = vec![serde_json::json!({"name": "LOG_LEVEL", "value": level})];
            if extra {
                env.insert(0, serde_json::json!({"name": "NEW", "value": "1"}));
            }
            serde_json::json!({"spec": {"template": {"spec": {"containers": [
                {"name": "side", "image": "s:1"},
                {"name": "web", "image": "w:1", "env": env,
                 "ports": [{"containerPort": 8080, "protocol": "TCP"}]}
            ]}}}})
        };
        let mut out = Vec::new();
        differences(
            deployment,
            &with("info", false),
            &with("debug", true),
            &mut Vec::new(),
            &mut out,
        );
        let paths: Vec<&str> = out.iter().map(|(p, _, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.template.spec.containers[name=web].env[name=LOG_LEVEL].value",
                "spec.template.spec.containers[name=web].env[name=NEW]",
            ]
        );
    }

    #[test]
    fn differences_name_each_path_with_both_values() {
        let mut out = Vec::new();
        differences(
            crate::schema::Schema::UNKNOWN,
            &serde_json::json!({"spec": {"replicas": 2, "x": [1, 2]}, "gone": 1}),
            &serde_json::json!({"spec": {"replicas": 3, "x": [1, 2]}, "new": 1}),
            &mut Vec::new(),
            &mut out,
        );
        assert_eq!(
            out,
            vec![
                ("spec.replicas".to_owned(), Some(2.into()), Some(3.into())),
                ("gone".to_owned(), Some(1.into()), None),
                ("new".to_owned(), None, Some(1.into())),
            ]
        );
    }
}
