//! Rendering a chart of the checkout with the user's `helm` (`KDRIFT_HELM` names another
//! program): `helm template RELEASE CHART --namespace NS -f VALUES… --set K=V…`, as the chart's
//! source says (see [`super::chart`]). One bounded process per chart ([`crate::process`]), no
//! Go templates of kdrift's own; a chart that fails to render names the chart and helm's words.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use super::chart::ChartSpec;

/// How long one chart may take to render.
const RENDER_LIMIT: Duration = Duration::from_secs(60);

/// The most of a chart's render kdrift reads: as much as of one manifest file (the manifests'
/// `MAX_FILE_BYTES`, 10 MiB); a render past it is stopped and named as a problem.
pub const MAX_RENDER_BYTES: u64 = 10 * 1024 * 1024;

/// The `helm` kdrift runs, and its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Helm {
    pub program: PathBuf,
    /// `v3.17.2`, as `helm version --short` says it (without the commit).
    pub version: Option<String>,
}

impl Helm {
    /// `helm v3.17.2`.
    pub fn describe(&self) -> String {
        format!(
            "helm {}",
            self.version.as_deref().unwrap_or("of unknown version")
        )
    }
}

/// Why a chart did not render.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error("{}", no_helm())]
    NoHelm,
    #[error("helm template failed: {0}")]
    Failed(String),
    #[error("cannot run {program}: {reason}")]
    Run { program: String, reason: String },
    #[error("cannot write its values for helm: {0}")]
    Values(String),
}

/// Why there is no helm, and what to do: `KDRIFT_HELM` named a program that is not there, or
/// no `helm` is on PATH.
fn no_helm() -> String {
    match std::env::var_os("KDRIFT_HELM").filter(|v| !v.is_empty()) {
        Some(named) => format!(
            "KDRIFT_HELM names {:?}, which is not a file: point it at helm, or unset it to use the helm on PATH",
            named.to_string_lossy()
        ),
        None => {
            "no helm on PATH to render it: install helm (or set KDRIFT_HELM to its path)".into()
        }
    }
}

/// `name` on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

fn detect() -> Option<Helm> {
    let program = match std::env::var_os("KDRIFT_HELM").filter(|v| !v.is_empty()) {
        // A named program that is not there is no helm (said as such, not as a failed render).
        Some(named) => Some(PathBuf::from(named)).filter(|p| p.is_file())?,
        None => on_path("helm")?,
    };
    let mut command = Command::new(&program);
    command.args(["version", "--short"]);
    let version = crate::process::run_bounded(command, Duration::from_secs(10))
        .ok()
        .filter(|f| f.ok)
        .and_then(|f| {
            let first = f.stdout.split_whitespace().next()?.to_owned();
            Some(first.split('+').next().unwrap_or(&first).to_owned())
        });
    Some(Helm { program, version })
}

/// The helm of this process (looked for once).
pub fn helm() -> Option<&'static Helm> {
    static FOUND: OnceLock<Option<Helm>> = OnceLock::new();
    FOUND.get_or_init(detect).as_ref()
}

/// The arguments of `helm template` for `spec`, its values written as files into `scratch`
/// (the release's own values and inline values are JSON files, which helm reads as YAML).
pub fn template_args(spec: &ChartSpec, scratch: &Path) -> Result<Vec<String>, RenderError> {
    let mut args = vec![
        "template".to_owned(),
        spec.release.clone(),
        spec.dir.display().to_string(),
        "--namespace".to_owned(),
        spec.namespace.clone(),
    ];
    if let Some(version) = &spec.kube_version {
        args.push("--kube-version".to_owned());
        args.push(version.clone());
    }
    for file in &spec.values_files {
        args.push("--values".to_owned());
        args.push(file.display().to_string());
    }
    for (at, inline) in spec.inline_values.iter().enumerate() {
        let file = scratch.join(format!("values-{at}.json"));
        let text = serde_json::to_string(inline).map_err(|e| RenderError::Values(e.to_string()))?;
        std::fs::write(&file, text).map_err(|e| RenderError::Values(e.to_string()))?;
        args.push("--values".to_owned());
        args.push(file.display().to_string());
    }
    for (key, value) in &spec.set {
        args.push("--set".to_owned());
        args.push(format!("{key}={value}"));
    }
    Ok(args)
}

/// `helm template` of `spec`: the rendered documents as helm prints them (each after its
/// `# Source: CHART/templates/x.yaml` line).
pub fn render(spec: &ChartSpec) -> Result<String, RenderError> {
    let helm = helm().ok_or(RenderError::NoHelm)?;
    render_with(helm, spec)
}

/// [`render`] with a given `helm`.
pub fn render_with(helm: &Helm, spec: &ChartSpec) -> Result<String, RenderError> {
    let scratch = tempfile::tempdir().map_err(|e| RenderError::Values(e.to_string()))?;
    let mut command = Command::new(&helm.program);
    command.args(template_args(spec, scratch.path())?);
    // helm reads no kubeconfig for `template`, and must not write a cache in the user's home.
    command
        .env("HELM_CACHE_HOME", scratch.path().join("cache"))
        .env("HELM_CONFIG_HOME", scratch.path().join("config"))
        .env("HELM_DATA_HOME", scratch.path().join("data"));
    match crate::process::run_capped(command, RENDER_LIMIT, MAX_RENDER_BYTES) {
        Ok(finished) if finished.ok => Ok(finished.stdout),
        Ok(finished) => Err(RenderError::Failed(helm_words(&finished.stderr))),
        Err(e) => Err(RenderError::Run {
            program: helm.program.display().to_string(),
            reason: e.to_string(),
        }),
    }
}

/// helm's error, in one line (`Error: …` without the prefix, its first lines).
fn helm_words(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let text = lines.join("; ");
    let text = text.strip_prefix("Error: ").unwrap_or(&text);
    let mut words: String = text.chars().take(600).collect();
    if words.len() < text.len() {
        words.push('…');
    }
    words
}

/// The template each rendered document came from: for each 0-based line a document of `text`
/// starts at, the `CHART/templates/x.yaml` of its `# Source:` comment.
pub fn sources(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter_map(|(at, line)| {
            line.strip_prefix("# Source: ")
                .map(|source| (at, source.trim().to_owned()))
        })
        .collect()
}

/// The file of the chart at `dir` that a `# Source:` path names (`CHART/templates/x.yaml`:
/// the first step is the chart's own name; a subchart's are under `charts/`).
pub fn source_file(dir: &Path, source: &str) -> PathBuf {
    match source.split_once('/') {
        Some((_, rest)) => dir.join(rest),
        None => dir.join(source),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn helm_s_error_is_one_line_without_its_prefix() {
        assert_eq!(
            helm_words("Error: template: web/templates/x.yaml:3:5: bad\n\nUse --debug\n"),
            "template: web/templates/x.yaml:3:5: bad; Use --debug"
        );
    }

    #[test]
    fn a_source_comment_names_the_template_in_the_chart_folder() {
        let text = "---\n# Source: web/templates/a.yaml\nkind: A\n---\n# Source: web/charts/db/templates/b.yaml\nkind: B\n";
        assert_eq!(
            sources(text),
            [
                (1, "web/templates/a.yaml".to_owned()),
                (4, "web/charts/db/templates/b.yaml".to_owned())
            ]
        );
        assert_eq!(
            source_file(Path::new("/c/web"), "web/charts/db/templates/b.yaml"),
            Path::new("/c/web/charts/db/templates/b.yaml")
        );
    }
}
