//! `kdrift demo --serve`: run the demo cluster until interrupted, with a kubeconfig for it.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cli::DemoArgs;

use crate::sim::server::Scenario;

/// Why serving failed, worded for the person at the terminal.
#[derive(Debug, thiserror::Error)]
enum ServeError {
    #[error(transparent)]
    Scenario(#[from] crate::sim::scenario::UnknownScenario),
    #[error(transparent)]
    Sim(#[from] crate::sim::SimError),
    #[error("cannot write the kubeconfig to {path}: {source}")]
    Kubeconfig {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Workdir(#[from] super::demo::DemoError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("cannot listen for signals: {0}")]
    Signal(#[source] std::io::Error),
    #[error(
        "--port {0} names one port, and --clusters serves several: leave --port out (each cluster takes a free port; the kubeconfig names them)"
    )]
    Port(u16),
}

pub fn run(args: &DemoArgs) -> ExitCode {
    match serve(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kdrift: {e}");
            ExitCode::from(2)
        }
    }
}

fn write_kubeconfig(path: &Path, yaml: &str) -> Result<(), ServeError> {
    std::fs::write(path, yaml).map_err(|source| ServeError::Kubeconfig {
        path: path.to_path_buf(),
        source,
    })
}

/// Where the kubeconfig goes: `--kubeconfig-out`, else a file in a temporary folder removed on
/// exit (the folder, held by the caller until then).
fn kubeconfig_path(
    args: &DemoArgs,
) -> Result<(std::path::PathBuf, Option<tempfile::TempDir>), ServeError> {
    if let Some(path) = &args.kubeconfig_out {
        return Ok((path.clone(), None));
    }
    let dir = tempfile::Builder::new()
        .prefix("kdrift-demo-")
        .tempdir()
        .map_err(|source| ServeError::Kubeconfig {
            path: std::env::temp_dir(),
            source,
        })?;
    Ok((dir.path().join("kubeconfig"), Some(dir)))
}

/// The demo clusters served: one, or a fleet (`--clusters N`, the scenario on prod-eu alone),
/// each with its name in the kubeconfig (`None`: the one cluster's own kubeconfig).
fn serve(args: &DemoArgs) -> Result<(), ServeError> {
    use crate::sim::scenario::fleet;
    let scenario: Scenario = args.scenario.parse()?;
    let several = args.clusters > 1;
    if several && args.port != 0 {
        return Err(ServeError::Port(args.port));
    }
    // The demo manifests, in --workdir or a temporary repository removed on exit, so that
    // `kdrift check`, `kubectl drift` and `kubectl apply` have them wherever kdrift is
    // installed; a fleet's have a folder per cluster.
    let (names, files) = super::demo::demo_files(args.clusters);
    let manifests: Vec<(&str, &str)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    let workdir = super::demo::prepare_workdir(args.workdir.as_deref(), &manifests)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    runtime.block_on(async {
        // Listen for signals before anything else, so an early ctrl-c still exits cleanly.
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .map_err(ServeError::Signal)?;
        let servers =
            super::demo::start_clusters(&names, args.port, scenario, &workdir.path).await?;
        // Without --kubeconfig-out the file lives in a temporary folder removed on exit.
        let (path, temp) = kubeconfig_path(args)?;
        let urls: Vec<(String, String)> = servers
            .iter()
            .map(|(name, server)| (name.clone().unwrap_or_default(), server.url()))
            .collect();
        write_kubeconfig(&path, &super::demo::clusters_kubeconfig(&servers))?;
        let mut said = String::new();
        for (name, url) in &urls {
            if !several {
                said.push_str(&format!("kdrift demo cluster serving on {url}\n"));
                continue;
            }
            let plays = if name == fleet::INCIDENT_CLUSTER {
                format!(" (scenario {})", args.scenario)
            } else {
                String::new()
            };
            said.push_str(&format!(
                "kdrift demo cluster {name} serving on {url}{plays}\n"
            ));
        }
        let check = if several {
            "kdrift check -A --all-contexts"
        } else {
            "kubectl drift check -A"
        };
        said.push_str(&format!(
            "export KUBECONFIG={}\nmanifests (a git repository): {}\ntry: cd {} && {check}\n",
            path.display(),
            workdir.path.display(),
            shlex::try_quote(&workdir.path.to_string_lossy())
                .unwrap_or_else(|_| workdir.path.to_string_lossy())
        ));
        // A reader that stops reading (`| head -1`) must not end the clusters it was told of.
        let mut stdout = std::io::stdout();
        let _ = std::io::Write::write_all(&mut stdout, said.as_bytes());
        let _ = std::io::Write::flush(&mut stdout);
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
        for (_, server) in servers {
            server.shutdown().await;
        }
        drop(temp);
        drop(workdir);
        Ok(())
    })
}
