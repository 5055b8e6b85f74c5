//! For the headless tests: a copy of the demo manifests in a fresh git repository, and the
//! `kdrift` binary run against a demo cluster from it, as a user would type it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::{Cluster, copy_tree};

/// The demo manifests (the files the demo cluster is seeded from) in a git repository with one
/// commit, in a temporary folder.
pub struct Repo {
    pub dir: tempfile::TempDir,
}

impl Repo {
    /// The demo manifests less its Helm chart (`demo/search` and `.kdrift.yaml`'s `helm:`): a
    /// chart git holds must be rendered for a check to be green, and these tests run kdrift
    /// without helm (see [`command`]). The search release is still compared, with its record in
    /// the demo cluster as its desired state. Tests of the chart take [`Repo::demo_with_chart`]
    /// and the real helm.
    pub fn demo() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("demo"),
            dir.path(),
        );
        std::fs::remove_dir_all(dir.path().join("search")).unwrap();
        std::fs::write(
            dir.path().join(".kdrift.yaml"),
            "# The demo's settings less its chart (demo/search), left out of this copy.\n",
        )
        .unwrap();
        Repo::committed(dir)
    }

    /// The demo manifests whole, its chart included (for tests that run kdrift with helm).
    pub fn demo_with_chart() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("demo"),
            dir.path(),
        );
        Repo::committed(dir)
    }

    /// A repository of `files` (path, text), committed.
    pub fn with_files(files: &[(&str, &str)]) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Repo::committed(dir)
    }

    fn committed(dir: tempfile::TempDir) -> Repo {
        let repo = Repo { dir };
        repo.git(&["init", "--quiet", "--initial-branch=main"]);
        repo.git(&["config", "user.name", "On Call"]);
        repo.git(&["config", "user.email", "oncall@example.com"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "--quiet", "-m", "demo manifests"]);
        repo
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    pub fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.path(rel), text).unwrap();
    }

    /// Runs git in the repository (no global or system config); it must succeed. Returns stdout.
    pub fn git(&self, args: &[&str]) -> String {
        git_in(self.root(), args)
    }

    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_owned()
    }
}

/// Runs git in `dir` (no global or system config); it must succeed. Returns stdout.
pub fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What one run of `kdrift` gave.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The JSON on stdout; a check report (it has `schemaVersion`) is validated against the
    /// shipped schema first, so every test that reads a report also proves its shape.
    pub fn json(&self) -> Value {
        let value: Value = serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", self.stdout, self.stderr));
        if value.get("schemaVersion").is_some() {
            assert_valid_report(&value);
        }
        value
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

fn finish(out: Output) -> Run {
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The `kdrift` binary with a clean environment: no colour variables, git without the user's
/// configuration, `HOME` in a temporary folder, no helm (a test that renders charts names its
/// own `KDRIFT_HELM`), whatever helm the machine has on PATH.
pub fn command(home: &Path, cwd: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kdrift"));
    cmd.args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("KDRIFT_LOG", "off")
        .env_remove("NO_COLOR")
        .env_remove("KUBECONFIG")
        .env("KDRIFT_HELM", "/nonexistent/helm")
        // kdrift's state (its Secret digest key) under `HOME`, not the user's.
        .env_remove("XDG_STATE_HOME");
    cmd
}

/// `kdrift ARGS` run in the repository against the demo cluster.
pub fn kdrift(cluster: &Cluster, repo: &Repo, args: &[&str]) -> Run {
    kdrift_in(cluster, repo.root(), args)
}

/// `kdrift ARGS` run in `cwd` (a worktree, a superproject) against the demo cluster.
pub fn kdrift_in(cluster: &Cluster, cwd: &Path, args: &[&str]) -> Run {
    kdrift_at(&cluster.kubeconfig, cluster.dir.path(), cwd, args)
}

/// `kdrift ARGS` run in `cwd` against the cluster of `kubeconfig` (the demo's or another),
/// with `home` as HOME.
pub fn kdrift_at(kubeconfig: &Path, home: &Path, cwd: &Path, args: &[&str]) -> Run {
    let mut cmd = command(home, cwd, args);
    cmd.env("KUBECONFIG", kubeconfig);
    finish(cmd.output().unwrap())
}

/// `kdrift ARGS` with a chosen environment (for the error cases).
pub fn kdrift_env(home: &Path, cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Run {
    let mut cmd = command(home, cwd, args);
    for (name, value) in env {
        cmd.env(name, value);
    }
    finish(cmd.output().unwrap())
}

/// (object key, class, path, manager, operation, subresource) of every drifted field of a
/// `kdrift check -o json` report, sorted.
pub fn drifted_fields(report: &Value) -> Vec<[String; 6]> {
    let text = |v: &Value| v.as_str().unwrap_or("-").to_owned();
    let mut out: Vec<[String; 6]> = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|object| {
            object["items"].as_array().unwrap().iter().map(move |item| {
                [
                    text(&object["key"]),
                    text(&item["class"]),
                    text(&item["path"]),
                    text(&item["manager"]),
                    text(&item["operation"]),
                    text(&item["subresource"]),
                ]
            })
        })
        .collect();
    out.sort();
    out
}

/// The keys of the objects of a `kdrift check -o json` report with `status` (`missing`, …).
pub fn keys_with_status<'r>(report: &'r Value, status: &str) -> Vec<&'r str> {
    report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["status"] == status)
        .map(|o| o["key"].as_str().unwrap())
        .collect()
}

/// The JSON Schema of `kdrift check -o json`, as shipped in docs/.
pub fn report_schema() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/check-report.schema.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The shipped schema, compiled once per test binary.
pub fn report_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    VALIDATOR.get_or_init(|| {
        jsonschema::draft202012::new(&report_schema())
            .unwrap_or_else(|e| panic!("docs/check-report.schema.json is not a valid schema: {e}"))
    })
}

/// Panics with every violation when `report` does not follow docs/check-report.schema.json.
pub fn assert_valid_report(report: &Value) {
    let errors: Vec<String> = report_validator()
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the report does not follow docs/check-report.schema.json:\n{}\n{}",
        errors.join("\n"),
        serde_json::to_string_pretty(report).unwrap_or_default()
    );
}
