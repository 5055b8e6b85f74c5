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

/// Starts the demo fleet's clusters `names` (seeded, each with its own folder; the scenario on
/// [`crate::sim::scenario::fleet::INCIDENT_CLUSTER`] alone), their GitOps controllers reading
/// `workdir`. On an error, those already started are shut down.
pub async fn start_fleet(
    names: &[String],
    scenario: Scenario,
    workdir: &Path,
) -> Result<Vec<(String, SimServer)>, crate::sim::SimError> {
    use crate::sim::scenario::fleet::INCIDENT_CLUSTER;
    let mut servers = Vec::new();
    for name in names {
        let config = SimConfig {
            port: 0,
            scenario: if name == INCIDENT_CLUSTER {
                scenario
            } else {
                Scenario::None
            },
            seed: true,
            timings: Timings::default(),
            gitops_repos: gitops_repos(workdir),
            fleet_cluster: Some(name.clone()),
        };
        match SimServer::start(config).await {
            Ok(server) => servers.push((name.clone(), server)),
            Err(e) => {
                for (_, server) in servers {
                    server.shutdown().await;
                }
                return Err(e);
            }
        }
    }
    Ok(servers)
}

/// The demo's clusters: the fleet `names` (`--clusters N`, each on a free port), or, with no
/// names, the one demo cluster (on `port`, 0 for a free one). Each is named for the kubeconfig
/// (`None`: the one cluster, which writes its own).
pub async fn start_clusters(
    names: &[String],
    port: u16,
    scenario: Scenario,
    workdir: &Path,
) -> Result<Vec<(Option<String>, SimServer)>, crate::sim::SimError> {
    if !names.is_empty() {
        let servers = start_fleet(names, scenario, workdir).await?;
        return Ok(servers
            .into_iter()
            .map(|(name, server)| (Some(name), server))
            .collect());
    }
    let config = SimConfig {
        port,
        scenario,
        seed: true,
        timings: Timings::default(),
        gitops_repos: gitops_repos(workdir),
        fleet_cluster: None,
    };
    Ok(vec![(None, SimServer::start(config).await?)])
}

/// The kubeconfig of the demo's clusters ([`start_clusters`]): the one cluster's own, or a
/// context per cluster of the fleet, the one the scenario plays on current.
pub fn clusters_kubeconfig(servers: &[(Option<String>, SimServer)]) -> String {
    match servers {
        [(None, server)] => server.kubeconfig_yaml(),
        _ => {
            let urls: Vec<(String, String)> = servers
                .iter()
                .map(|(name, server)| (name.clone().unwrap_or_default(), server.url()))
                .collect();
            use crate::sim::scenario::fleet::INCIDENT_CLUSTER;
            let current = match urls.iter().any(|(name, _)| name == INCIDENT_CLUSTER) {
                true => INCIDENT_CLUSTER,
                false => urls.first().map_or("", |(name, _)| name.as_str()),
            };
            fleet_kubeconfig(&urls, current)
        }
    }
}

/// The demo's cluster names (none for the one cluster) and manifests: a folder per cluster of
/// a fleet, or the one demo's tree.
pub fn demo_files(clusters: u8) -> (Vec<String>, Vec<(String, String)>) {
    use crate::sim::scenario::fleet;
    if clusters > 1 {
        let names = fleet::cluster_names(usize::from(clusters));
        let files = fleet::fleet_manifests(&names);
        (names, files)
    } else {
        let files = DEMO_MANIFESTS
            .iter()
            .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
            .collect();
        (Vec::new(), files)
    }
}

/// A kubeconfig with a cluster, context and user per (name, URL), `current` the current
/// context; each context's namespace `default`, as the one-cluster demo's.
pub fn fleet_kubeconfig(servers: &[(String, String)], current: &str) -> String {
    let mut clusters = String::new();
    let mut contexts = String::new();
    let mut users = String::new();
    for (name, url) in servers {
        clusters.push_str(&format!("- name: {name}\n  cluster:\n    server: {url}\n"));
        contexts.push_str(&format!(
            "- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n    namespace: default\n"
        ));
        users.push_str(&format!("- name: {name}\n  user: {{}}\n"));
    }
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n{clusters}contexts:\n{contexts}current-context: {current}\nusers:\n{users}preferences: {{}}\n"
    )
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

/// Start the demo cluster (or `--clusters N` of them) and the live view on it; the clusters
/// stop when the view quits.
pub fn run(common: &CommonArgs, demo: &DemoArgs) -> ExitCode {
    super::tune_allocator();
    let (_log, log_problem) = super::start_logging(common);
    let scenario: Scenario = match demo.scenario.parse() {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    if demo.clusters > 1 && demo.port != 0 {
        return fail(&format!(
            "--port {} names one port, and --clusters serves several: leave --port out",
            demo.port
        ));
    }
    let rt = match crate::cluster::tokio_runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(&e),
    };
    let (names, files) = demo_files(demo.clusters);
    let manifests: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let workdir = match prepare_workdir(demo.workdir.as_deref(), &manifests) {
        Ok(w) => w,
        Err(e) => return fail(&e),
    };
    rt.block_on(async {
        let servers = match start_clusters(&names, demo.port, scenario, &workdir.path).await {
            Ok(servers) => servers,
            Err(e) => return fail(&e),
        };
        // The kubeconfig lets the real kubectl drive the same clusters while kdrift watches.
        let kubeconfig = demo
            .kubeconfig_out
            .clone()
            .unwrap_or_else(|| workdir.path.with_extension("kubeconfig"));
        let code = match std::fs::write(&kubeconfig, clusters_kubeconfig(&servers)) {
            Err(source) => fail(&DemoError::Write {
                path: kubeconfig.clone(),
                source,
            }),
            Ok(()) => {
                let mut args = common.clone();
                args.kubeconfig = Some(kubeconfig.clone());
                args.context = names.clone();
                if args.namespace.is_none() {
                    args.all_namespaces = true;
                }
                args.manifests = Some(workdir.path.clone());
                args.manifests_is_checkout = true;
                let notice = match log_problem {
                    Some(text) => Flash { text, error: true },
                    None => Flash {
                        text: demo_notice(&servers, &kubeconfig, &workdir.path),
                        error: false,
                    },
                };
                tracing::info!(clusters = servers.len(), workdir = %workdir.path.display(), "demo started");
                watch(&args, &names, notice).await
            }
        };
        for (_, server) in servers {
            server.shutdown().await;
        }
        if demo.kubeconfig_out.is_none() {
            let _ = std::fs::remove_file(&kubeconfig);
        }
        code
    })
}

/// Why the demo cannot start, said and logged; the exit code.
fn fail(e: &dyn std::fmt::Display) -> ExitCode {
    tracing::error!(error = %e, "demo cannot start");
    eprintln!("kdrift: {e}");
    ExitCode::from(super::EXIT_ERROR)
}

/// The live view on the demo's clusters: the one cluster, connected first; every cluster of a
/// fleet (`names`) in one table.
async fn watch(args: &CommonArgs, names: &[String], notice: Flash) -> ExitCode {
    if !names.is_empty() {
        return super::tty::run_fleet(args, names, names.to_vec(), Some(notice)).await;
    }
    match connect(&args.connection()).await {
        Ok(conn) => super::tty::run(args, conn, Some(notice)).await,
        Err(e) => fail(&e),
    }
}

/// The status bar's first word on the demo: where the clusters serve, how to drive them with
/// kubectl, where the manifests are.
fn demo_notice(
    servers: &[(Option<String>, SimServer)],
    kubeconfig: &Path,
    workdir: &Path,
) -> String {
    use crate::sim::scenario::fleet::INCIDENT_CLUSTER;
    match servers {
        [(None, server)] => format!(
            "demo cluster {} · kubectl --kubeconfig {} · manifests in {}",
            server.url(),
            kubeconfig.display(),
            workdir.display()
        ),
        _ => {
            let names: Vec<&str> = servers
                .iter()
                .filter_map(|(name, _)| name.as_deref())
                .collect();
            format!(
                "demo fleet of {} clusters ({}) in one table · the incident is on {INCIDENT_CLUSTER} · :ctx NAME watches one · kubectl --kubeconfig {} · manifests in {}",
                names.len(),
                names.join(", "),
                kubeconfig.display(),
                workdir.display()
            )
        }
    }
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
