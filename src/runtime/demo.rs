//! `kdrift demo`: the simulated cluster in-process, the demo manifests in a fresh git repository
//! (so accepting a change never edits the project's own files), then the live view on it.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::app::Flash;
use crate::cli::{CommonArgs, DemoArgs};
use crate::cluster::client::connect;
use crate::sim::scenario::{DEMO_MANIFESTS, DEMO_REPO_URL};
use crate::sim::server::{Scenario, SimConfig, SimServer, Timings};

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("workdir \"{}\" is not empty: pass a new or empty folder to --workdir", .0.display())]
    WorkdirNotEmpty(PathBuf),
    #[error("cannot write \"{}\": {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot run git in \"{}\": {source} (is git installed?)", dir.display())]
    GitMissing {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`git {args}` failed in \"{}\": {stderr}", dir.display())]
    Git {
        dir: PathBuf,
        args: String,
        stderr: String,
    },
}

/// The manifests' git repository; a temporary one is deleted when this is dropped.
pub struct Workdir {
    pub path: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

/// Copy `manifests` (relative path, contents) into `dir` (created; must be empty) or a temporary
/// folder, and make it a git repository with one commit and the remote `origin` the demo's
/// Argo CD Application names ([`DEMO_REPO_URL`]; nothing is pushed to it).
pub fn prepare_workdir(
    dir: Option<&Path>,
    manifests: &[(&str, &str)],
) -> Result<Workdir, DemoError> {
    let (path, temp) = match dir {
        Some(d) => {
            if d.exists() {
                let non_empty = std::fs::read_dir(d)
                    .map_err(|source| DemoError::Write {
                        path: d.to_path_buf(),
                        source,
                    })?
                    .next()
                    .is_some();
                if non_empty {
                    return Err(DemoError::WorkdirNotEmpty(d.to_path_buf()));
                }
            }
            (d.to_path_buf(), None)
        }
        None => {
            let t = tempfile::Builder::new()
                .prefix("kdrift-demo-")
                .tempdir()
                .map_err(|source| DemoError::Write {
                    path: std::env::temp_dir(),
                    source,
                })?;
            (t.path().to_path_buf(), Some(t))
        }
    };
    for (rel, text) in manifests {
        let file = path.join(rel);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|source| DemoError::Write {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(&file, text).map_err(|source| DemoError::Write { path: file, source })?;
    }
    // On `main`, the branch the demo's Flux GitRepository follows (whatever the user's
    // `init.defaultBranch`).
    git(&path, &["init", "-q", "-b", "main"])?;
    git(&path, &["add", "-A"])?;
    // A fallback identity only when the user has none, so their own identity applies otherwise.
    // It is set in this throwaway repository (not for one command), so that accepting from the
    // demo commits for a user who never configured git too.
    if !has_identity(&path) {
        git(&path, &["config", "user.name", "kdrift"])?;
        git(&path, &["config", "user.email", "kdrift@localhost"])?;
    }
    // The demo's first commit must never wait on a signing prompt.
    let commit = [
        "-c",
        "commit.gpgsign=false",
        "commit",
        "-q",
        "-m",
        "kdrift demo manifests",
    ];
    git(&path, &commit)?;
    git(&path, &["remote", "add", "origin", DEMO_REPO_URL])?;
    Ok(Workdir { path, _temp: temp })
}

/// The demo cluster's GitOps controllers read the workdir's commits as the demo repository's:
/// its HEAD stands for the pushed branch.
pub fn gitops_repos(workdir: &Path) -> std::collections::BTreeMap<String, PathBuf> {
    [(DEMO_REPO_URL.to_string(), workdir.to_path_buf())]
        .into_iter()
        .collect()
}

fn git_command(dir: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null());
    cmd
}

fn has_identity(dir: &Path) -> bool {
    ["user.name", "user.email"].iter().all(|key| {
        git_command(dir)
            .args(["config", key])
            .output()
            .is_ok_and(|o| o.status.success() && !o.stdout.trim_ascii().is_empty())
    })
}

fn git(dir: &Path, args: &[&str]) -> Result<(), DemoError> {
    let out = git_command(dir)
        .args(args)
        .output()
        .map_err(|source| DemoError::GitMissing {
            dir: dir.to_path_buf(),
            source,
        })?;
    if out.status.success() {
        return Ok(());
    }
    Err(DemoError::Git {
        dir: dir.to_path_buf(),
        args: args.join(" "),
        stderr: String::from_utf8_lossy(&out.stderr)
            .trim()
            .replace('\n', " "),
    })
}

/// Start the demo cluster and the live view on it; the cluster stops when the view quits.
pub fn run(common: &CommonArgs, demo: &DemoArgs) -> ExitCode {
    if demo.clusters > 1 {
        eprintln!(
            "kdrift: demo --clusters {} needs --serve: the live view shows one context at a time (several in one table is not built yet); run `kdrift demo --serve --clusters {}`, then `kdrift check -A --all-contexts` or `kdrift --context prod-eu -A` in the manifests folder it prints",
            demo.clusters, demo.clusters
        );
        return ExitCode::from(super::EXIT_ERROR);
    }
    super::tune_allocator();
    let (_log, log_problem) = super::start_logging(common);
    let fail = |e: &dyn std::fmt::Display| {
        tracing::error!(error = %e, "demo cannot start");
        eprintln!("kdrift: {e}");
        ExitCode::from(super::EXIT_ERROR)
    };
    let scenario: Scenario = match demo.scenario.parse() {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let rt = match crate::cluster::tokio_runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(&e),
    };
    let workdir = match prepare_workdir(demo.workdir.as_deref(), DEMO_MANIFESTS) {
        Ok(w) => w,
        Err(e) => return fail(&e),
    };
    rt.block_on(async {
        let config = SimConfig {
            port: demo.port,
            scenario,
            seed: true,
            timings: Timings::default(),
            gitops_repos: gitops_repos(&workdir.path),
            fleet_cluster: None,
        };
        let server = match SimServer::start(config).await {
            Ok(s) => s,
            Err(e) => return fail(&e),
        };
        // The kubeconfig lets the real kubectl drive the same cluster while kdrift watches it.
        let kubeconfig = demo
            .kubeconfig_out
            .clone()
            .unwrap_or_else(|| workdir.path.with_extension("kubeconfig"));
        if let Err(source) = std::fs::write(&kubeconfig, server.kubeconfig_yaml()) {
            server.shutdown().await;
            return fail(&DemoError::Write {
                path: kubeconfig,
                source,
            });
        }
        let mut args = common.clone();
        args.kubeconfig = Some(kubeconfig.clone());
        args.context = Vec::new();
        if args.namespace.is_none() {
            args.all_namespaces = true;
        }
        args.manifests = Some(workdir.path.clone());
        args.manifests_is_checkout = true;
        let conn = match connect(&args.connection()).await {
            Ok(c) => c,
            Err(e) => {
                server.shutdown().await;
                return fail(&e);
            }
        };
        tracing::info!(url = %server.url(), workdir = %workdir.path.display(), "demo started");
        let notice = match log_problem {
            Some(text) => Flash { text, error: true },
            None => Flash {
                text: format!(
                    "demo cluster {} · kubectl --kubeconfig {} · manifests in {}",
                    server.url(),
                    kubeconfig.display(),
                    workdir.path.display()
                ),
                error: false,
            },
        };
        let code = super::tty::run(&args, conn, Some(notice)).await;
        server.shutdown().await;
        if demo.kubeconfig_out.is_none() {
            let _ = std::fs::remove_file(&kubeconfig);
        }
        code
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const FILES: &[(&str, &str)] = &[
        ("shop/web.yaml", "kind: Deployment\n"),
        ("ns.yaml", "kind: Namespace\n"),
    ];

    #[test]
    fn workdir_is_a_git_repository_with_one_commit_of_the_manifests() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("demo");
        let wd = prepare_workdir(Some(&dir), FILES).unwrap();
        assert_eq!(
            std::fs::read_to_string(wd.path.join("shop/web.yaml")).unwrap(),
            "kind: Deployment\n"
        );
        let log = git_command(&wd.path)
            .args(["log", "--oneline"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 1);
        let origin = git_command(&wd.path)
            .args(["remote", "get-url", "origin"])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&origin.stdout).trim(),
            DEMO_REPO_URL
        );
        let status = git_command(&wd.path)
            .args(["status", "--porcelain"])
            .output()
            .unwrap();
        assert!(
            status.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&status.stdout)
        );
    }

    #[test]
    fn non_empty_workdir_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine.txt"), "keep").unwrap();
        let err = prepare_workdir(Some(dir.path()), FILES)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("not empty"), "{err}");
        assert!(!dir.path().join(".git").exists());
    }

    #[test]
    fn temporary_workdir_goes_away_when_dropped() {
        let wd = prepare_workdir(None, FILES).unwrap();
        let path = wd.path.clone();
        assert!(path.join(".git").exists());
        drop(wd);
        assert!(!path.exists());
    }
}
