//! Rendering a root with the user's kustomize: the `kustomize` binary on PATH, else
//! `kubectl kustomize` (`KDRIFT_KUSTOMIZE` names another program). Each object is rendered with
//! kustomize's origin annotation, on a temporary copy of the files the root reads (the user's
//! kustomization is never touched), so that it can be traced back to the file that defines it.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use super::tree::{FILE_NAMES, normalize};

/// The annotation kustomize writes with `buildMetadata: [originAnnotations]`.
pub const ORIGIN_ANNOTATION: &str = "config.kubernetes.io/origin";

/// How long one root may take to render.
const RENDER_LIMIT: Duration = Duration::from_secs(60);

/// The program that renders kustomizations, and its kustomize version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renderer {
    pub program: PathBuf,
    /// `kubectl kustomize DIR` rather than `kustomize build DIR`.
    pub via_kubectl: bool,
    /// kustomize's version as the program reports it (`v5.5.0`), if it does.
    pub version: Option<String>,
}

impl Renderer {
    /// `kustomize v5.5.0`, `kubectl kustomize (kustomize v5.5.0)`.
    pub fn describe(&self) -> String {
        let version = self.version.as_deref().unwrap_or("of unknown version");
        if self.via_kubectl {
            format!("kubectl kustomize (kustomize {version})")
        } else {
            format!("kustomize {version}")
        }
    }

    fn command(&self, dir: &Path) -> Command {
        let mut command = Command::new(&self.program);
        if self.via_kubectl {
            command.arg("kustomize");
        } else {
            command.arg("build");
        }
        command.arg(dir);
        command
    }
}

/// The first `v1.2.3` in `text`.
fn version_in(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    (0..bytes.len()).find_map(|at| {
        let rest = text.get(at..)?.strip_prefix('v')?;
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let version = &rest[..end];
        (version.matches('.').count() >= 2 && version.starts_with(|c: char| c.is_ascii_digit()))
            .then(|| format!("v{}", version.trim_end_matches('.')))
    })
}

/// `name` on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

fn detect() -> Result<Renderer, String> {
    let named = std::env::var_os("KDRIFT_KUSTOMIZE").filter(|v| !v.is_empty());
    let program = match named {
        Some(named) => {
            let named = PathBuf::from(named);
            if named.components().count() > 1 {
                named
            } else {
                on_path(&named.to_string_lossy()).ok_or_else(|| {
                    format!(
                        "KDRIFT_KUSTOMIZE names {}, which is not on PATH",
                        named.display()
                    )
                })?
            }
        }
        None => on_path("kustomize").or_else(|| on_path("kubectl")).ok_or(
            "neither kustomize nor kubectl is on PATH: install one to render the kustomize roots",
        )?,
    };
    let via_kubectl = program
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("kubectl"));
    let mut ask = Command::new(&program);
    if via_kubectl {
        ask.args(["version", "--client", "-o", "json"]);
    } else {
        ask.arg("version");
    }
    let version = crate::process::run_bounded(ask, Duration::from_secs(20))
        .ok()
        .and_then(|done| {
            if via_kubectl {
                let value: Value = serde_json::from_str(&done.stdout).ok()?;
                value
                    .get("kustomizeVersion")
                    .and_then(Value::as_str)
                    .and_then(version_in)
            } else {
                version_in(&done.stdout)
            }
        });
    Ok(Renderer {
        program,
        via_kubectl,
        version,
    })
}

/// The renderer of this process (looked for once).
pub fn renderer() -> Result<&'static Renderer, &'static str> {
    static RENDERER: OnceLock<Result<Renderer, String>> = OnceLock::new();
    RENDERER
        .get_or_init(detect)
        .as_ref()
        .map_err(String::as_str)
}

/// A root's rendered objects as YAML, and whether they carry origin annotations.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub text: String,
    /// With kustomize's origin annotations: the folder their paths are relative to.
    pub origins: Option<PathBuf>,
}

/// kustomize's own message, without the `Error: ` prefix and the usage kubectl prints after it.
fn message_of(stderr: &str) -> String {
    let text = stderr.trim();
    let text = text.strip_prefix("Error: ").unwrap_or(text);
    let text = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(6)
        .collect::<Vec<_>>()
        .join("\n");
    // kubectl logs its failure as `E1124 … run.go:72] "command failed" err="…"`.
    match text.find("err=\"") {
        Some(at) => text[at + 5..].trim_end_matches('"').replace("\\\"", "\""),
        None => text,
    }
}

/// Renders the kustomization in `root` (which reads `files`), with origins when it can.
pub fn render(
    renderer: &Renderer,
    root: &Path,
    files: &BTreeSet<PathBuf>,
) -> Result<Rendered, String> {
    match render_copy(renderer, root, files) {
        Ok(Some(text)) => {
            return Ok(Rendered {
                text,
                origins: Some(root.to_path_buf()),
            });
        }
        Ok(None) => {}
        Err(error) => tracing::debug!(root = %root.display(), %error, "render with origins failed"),
    }
    let done = crate::process::run_bounded(renderer.command(root), RENDER_LIMIT)
        .map_err(|e| format!("{} did not run: {e}", renderer.describe()))?;
    if done.ok {
        Ok(Rendered {
            text: done.stdout,
            origins: None,
        })
    } else {
        Err(message_of(&done.stderr))
    }
}

/// Renders every root of `roots` (each with the files it reads), on all cores, results in the
/// order of `roots`. kustomize's own start-up (its OpenAPI schema, read for every strategic-merge
/// patch) costs more than rendering a typical root, so roots are rendered several to a kustomize
/// run ([`render_batch`]), but those `alone` says (a kustomization that asks for `buildMetadata`
/// itself: in a batch only the batch's own counts); a batch that fails is rendered root by root,
/// so that each failure names its own root with kustomize's message.
pub fn render_roots(
    renderer: &Renderer,
    roots: &[(PathBuf, BTreeSet<PathBuf>)],
    alone: &(dyn Fn(&Path) -> bool + Sync),
) -> Vec<Result<Rendered, String>> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let (batchable, single): (Vec<usize>, Vec<usize>) =
        (0..roots.len()).partition(|&at| roots.len() > 1 && !alone(&roots[at].0));
    let per_batch = batchable.len().div_ceil(workers).max(2);
    let mut jobs: Vec<Vec<usize>> = batchable.chunks(per_batch).map(<[usize]>::to_vec).collect();
    jobs.extend(single.into_iter().map(|at| vec![at]));
    let work = |_: &mut (), job: &Vec<usize>| -> Vec<(usize, Result<Rendered, String>)> {
        if job.len() > 1 {
            let batch: Vec<&(PathBuf, BTreeSet<PathBuf>)> =
                job.iter().map(|&at| &roots[at]).collect();
            match render_batch(renderer, &batch) {
                Ok(rendered) => {
                    return job
                        .iter()
                        .copied()
                        .zip(rendered.into_iter().map(Ok))
                        .collect();
                }
                Err(error) => {
                    tracing::debug!(roots = job.len(), %error, "batch render failed; rendering root by root")
                }
            }
        }
        job.iter()
            .map(|&at| (at, render(renderer, &roots[at].0, &roots[at].1)))
            .collect()
    };
    let mut results: Vec<Option<Result<Rendered, String>>> =
        (0..roots.len()).map(|_| None).collect();
    for (at, result) in super::super::on_all_cores(&jobs, 2, work)
        .into_iter()
        .flatten()
    {
        results[at] = Some(result);
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not rendered".to_owned())))
        .collect()
}

/// Renders `roots` in one kustomize run: a [`Scratch`] copy of every file they read, and in it
/// a kustomization of our own that lists each root followed by a marker object, with
/// `sortOptions: fifo` (each root's objects stay together, before its marker) and
/// `originAnnotations`. The output is cut at the markers into each root's objects.
fn render_batch(
    renderer: &Renderer,
    roots: &[&(PathBuf, BTreeSet<PathBuf>)],
) -> Result<Vec<Rendered>, String> {
    let files: BTreeSet<PathBuf> = roots
        .iter()
        .flat_map(|(_, files)| files.iter().cloned())
        .collect();
    let dirs: Vec<PathBuf> = roots.iter().map(|(root, _)| root.clone()).collect();
    let scratch = Scratch::copy(&files, &dirs)?;
    // A folder name no repository has, so that nothing of the user's is shadowed.
    let token = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let batch = scratch.top.join(format!(".kdrift-batch-{token}"));
    let mut resources = Vec::new();
    for (at, root) in dirs.iter().enumerate() {
        let relative = root
            .strip_prefix(&scratch.top)
            .map_err(|_| format!("{} is outside the copied tree", root.display()))?;
        resources.push(Value::from(
            Path::new("..").join(relative).display().to_string(),
        ));
        let marker = format!("marker-{at}.yaml");
        scratch.write(
            &batch.join(&marker),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n",
                marker_name(&token, at)
            ),
        )?;
        resources.push(Value::from(marker));
    }
    let kustomization = serde_json::json!({
        "resources": resources,
        "sortOptions": {"order": "fifo"},
        "buildMetadata": ["originAnnotations"],
    });
    let text = serde_yaml::to_string(&kustomization).map_err(|e| e.to_string())?;
    scratch.write(&batch.join(FILE_NAMES[0]), &text)?;
    let limit = RENDER_LIMIT.saturating_mul(u32::try_from(roots.len()).unwrap_or(u32::MAX));
    let done = crate::process::run_bounded(renderer.command(&scratch.place(&batch)?), limit)
        .map_err(|e| e.to_string())?;
    if !done.ok {
        return Err(message_of(&done.stderr));
    }
    let mut rendered = Vec::with_capacity(roots.len());
    let mut text = String::new();
    for range in crate::manifest::edit::documents::split(&done.stdout) {
        let document = done.stdout.get(range).unwrap_or_default();
        let marker = marker_name(&token, rendered.len());
        if document
            .lines()
            .any(|l| l.trim() == format!("name: {marker}"))
        {
            rendered.push(Rendered {
                text: std::mem::take(&mut text),
                origins: Some(batch.clone()),
            });
            continue;
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("---\n");
        text.push_str(document);
    }
    if rendered.len() != roots.len() || !text.trim().is_empty() {
        return Err(format!(
            "the batch's markers: {} of {} found",
            rendered.len(),
            roots.len()
        ));
    }
    Ok(rendered)
}

fn marker_name(token: &str, at: usize) -> String {
    format!("kdrift-batch-marker-{token}-{at}")
}

/// The folder all of `paths` lie in.
fn common_folder<'p>(paths: impl Iterator<Item = &'p Path>) -> PathBuf {
    paths
        .fold(None::<PathBuf>, |common, dir| match common {
            None => Some(normalize(dir)),
            Some(common) => Some(
                common
                    .ancestors()
                    .find(|a| dir.starts_with(a))
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
            ),
        })
        .unwrap_or_default()
}

/// A temporary copy of the files some roots read, to render them with changes the user's tree
/// must not get (an accept's edits, before they are proved).
pub struct Scratch {
    dir: tempfile::TempDir,
    top: PathBuf,
}

impl Scratch {
    /// Copies `files` (those that exist) below a temporary folder, keeping their places relative
    /// to each other and to `roots`.
    pub fn copy(files: &BTreeSet<PathBuf>, roots: &[PathBuf]) -> Result<Scratch, String> {
        let top = common_folder(
            files
                .iter()
                .filter_map(|f| f.parent())
                .chain(roots.iter().map(PathBuf::as_path)),
        );
        let scratch = Scratch {
            dir: tempfile::tempdir().map_err(|e| e.to_string())?,
            top,
        };
        for file in files {
            if file.is_file() {
                let target = scratch.place(file)?;
                std::fs::copy(file, &target).map_err(|e| e.to_string())?;
            }
        }
        Ok(scratch)
    }

    /// Where `original` is in the copy (its folder made).
    fn place(&self, original: &Path) -> Result<PathBuf, String> {
        let relative = original
            .strip_prefix(&self.top)
            .map_err(|_| format!("{} is outside the copied tree", original.display()))?;
        let target = self.dir.path().join(relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        Ok(target)
    }

    /// Writes `text` as the copy of `original`.
    pub fn write(&self, original: &Path, text: &str) -> Result<(), String> {
        std::fs::write(self.place(original)?, text).map_err(|e| e.to_string())
    }

    /// Renders the copy of the root `root` (plain: no origin annotations).
    pub fn render(&self, renderer: &Renderer, root: &Path) -> Result<String, String> {
        let copied = self.place(&root.join(FILE_NAMES[0]))?;
        let dir = copied.parent().unwrap_or(self.dir.path());
        let done = crate::process::run_bounded(renderer.command(dir), RENDER_LIMIT)
            .map_err(|e| format!("{} did not run: {e}", renderer.describe()))?;
        if done.ok {
            Ok(done.stdout)
        } else {
            Err(message_of(&done.stderr))
        }
    }
}

/// Renders a copy of the files with `originAnnotations` added to the root's kustomization;
/// `Ok(None)` when the copy renders differently from the user's tree (a file kdrift did not
/// know the root reads).
fn render_copy(
    renderer: &Renderer,
    root: &Path,
    files: &BTreeSet<PathBuf>,
) -> Result<Option<String>, String> {
    let Some(file) = FILE_NAMES
        .iter()
        .map(|n| root.join(n))
        .find(|p| p.is_file())
    else {
        return Ok(None);
    };
    let text = crate::manifest::walk::read_manifest(&file)?;
    let mut value: Value = serde_yaml::from_str(&text).map_err(|e| e.to_string())?;
    let Some(map) = value.as_object_mut() else {
        return Ok(None);
    };
    let metadata = map
        .entry("buildMetadata")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Some(list) = metadata.as_array_mut() else {
        return Ok(None);
    };
    if list.iter().any(|v| v == "originAnnotations") {
        // The user asks for origins already: the rendered objects carry them live too.
        return Ok(None);
    }
    list.push(Value::from("originAnnotations"));
    let text = serde_yaml::to_string(&value).map_err(|e| e.to_string())?;
    let scratch = Scratch::copy(files, &[root.to_path_buf()])?;
    scratch.write(&file, &text)?;
    scratch.render(renderer, root).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_messages_are_read_as_programs_print_them() {
        assert_eq!(version_in("v5.5.0\n").as_deref(), Some("v5.5.0"));
        assert_eq!(
            version_in("{Version:kustomize/v4.5.7 GitCommit:abc}").as_deref(),
            Some("v4.5.7")
        );
        assert_eq!(version_in("dev"), None);
        assert_eq!(
            message_of(
                "E1124 13:04:17.305984   26054 run.go:72] \"command failed\" err=\"accumulating resources: 'x' must resolve to a file\"\n"
            ),
            "accumulating resources: 'x' must resolve to a file"
        );
        assert_eq!(message_of("Error: no such file\n"), "no such file");
    }
}
