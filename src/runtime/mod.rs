//! The edge where IO happens: start-up in a fixed order (logging, connection, theme, terminal),
//! the one event loop, and shutdown.
//!
//! - [`event_loop`]: await one message, drain the rest, update, draw at most once per frame.
//! - [`fleet`]: the live view over several contexts, a loop of its own per context.
//! - [`terminal`]: entering, leaving, suspending and resuming the terminal.
//! - [`manifests`]: the manifests loaded off the UI thread, then watched on disk.
//! - [`accept`]: the accept view's reads, and its write + commit.
//! - [`revert`](mod@revert): the revert view's dry run and revert, on tasks.
//! - [`demo`]: `kdrift demo` — the simulated cluster and a git repository of its manifests.
//! - [`serve`]: `kdrift demo --serve` — the simulated cluster alone, until interrupted.
pub mod accept;
pub mod compare;
pub mod demo;
pub mod drive;
pub mod event_loop;
pub mod fleet;
pub mod manifests;
pub mod revert;
pub mod rollback;
pub mod serve;
pub mod terminal;
pub mod tty;

use std::process::ExitCode;

use crate::cli::{CommonArgs, DemoArgs};
use crate::cluster::client::connect;
use crate::logging;

/// Exit code for errors before the UI starts (kubectl diff's convention: >1 is an error).
pub const EXIT_ERROR: u8 = 2;

/// Keep resident memory close to what the rows need. A list response of hundreds of whole
/// objects is a big transient buffer: with a fixed mmap threshold it is mapped and unmapped
/// instead of fragmenting the heap (glibc otherwise raises the threshold after the first one).
/// One arena: a second one, for the worker threads that build rows, kept 19–21 MB resident for
/// 11.6 MB in use at 30,000 objects (its freed JSON texts left holes beside the rows); with one,
/// the whole is about 2 MB less (each thread's cache of small chunks keeps the lock rare).
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; called before any threads start.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Start logging (then install the Secret digest key); a failure is not fatal and is shown in the
/// status bar instead.
pub fn start_logging(common: &CommonArgs) -> (Option<logging::LogGuard>, Option<String>) {
    let started = match logging::init(common.log_level.as_deref()) {
        Ok(guard) => (Some(guard), None),
        Err(e) => (None, Some(format!("logging off: {e}"))),
    };
    // The key of the Secret digests, said in the log when it cannot be had.
    if let Err(e) = crate::drift::secret::install_key() {
        tracing::warn!(error = %e, "Secret digests use a key of this run alone");
    }
    started
}

/// `kdrift`: the live view on the cluster of the kubeconfig.
pub fn run_tui(common: &CommonArgs) -> ExitCode {
    // A `--manifests` that names no folder is a mistake the headless commands refuse: refused
    // here too, before the terminal is taken (else every row read `unmanaged`).
    if common.manifests.is_some()
        && let Err(e) = crate::commands::context::manifests_root(common)
    {
        eprintln!("kdrift: {e}");
        return ExitCode::from(EXIT_ERROR);
    }
    tune_allocator();
    let (_log, log_problem) = start_logging(common);
    let rt = match crate::cluster::tokio_runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kdrift: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    rt.block_on(async {
        match fleet_contexts(common) {
            Ok(Some(fleet)) => {
                let notice = log_problem.map(|text| crate::app::Flash { text, error: true });
                return tty::run_fleet(common, &fleet.watched, fleet.all, notice).await;
            }
            Ok(None) => {}
            Err(e) => {
                eprintln!("kdrift: {e}");
                return ExitCode::from(EXIT_ERROR);
            }
        }
        let conn = match connect(&common.connection()).await {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "cannot connect");
                eprintln!("kdrift: {e}");
                return ExitCode::from(EXIT_ERROR);
            }
        };
        tracing::info!(context = %conn.context, url = %conn.cluster_url, version = %conn.server_version, "connected");
        tty::run(common, conn, log_problem.map(|text| crate::app::Flash { text, error: true })).await
    })
}

/// The contexts of a live view over several (and every context of the kubeconfig), or `None`
/// for one: `--context` given more than once, `--all-contexts`, or — without `--context` — the
/// contexts `.kdrift.yaml`'s `contexts:` map names, when it names more than one the kubeconfig
/// has.
pub fn fleet_contexts(common: &CommonArgs) -> Result<Option<FleetContexts>, String> {
    let from_config = common.context.is_empty() && !common.all_contexts;
    if !common.several_contexts() && !from_config {
        return Ok(None);
    }
    let all = match crate::cluster::client::kubeconfig_contexts(&common.connection()) {
        Ok(all) => all,
        // One context alone says why it cannot connect as the single view does.
        Err(_) if from_config => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let contexts = if from_config {
        let Ok(root) = crate::commands::context::manifests_dir(common) else {
            return Ok(None);
        };
        let (config, _) = crate::manifest::config::load(&root);
        let named: Vec<String> = config
            .contexts
            .iter()
            .map(|entry| entry.context.clone())
            .filter(|name| all.contains(name))
            .collect();
        if named.len() < 2 {
            return Ok(None);
        }
        named
    } else {
        crate::commands::fleet::contexts(common)?
    };
    if let Some(unknown) = contexts.iter().find(|c| !all.contains(c)) {
        return Err(format!("no context \"{unknown}\" in the kubeconfig"));
    }
    Ok(Some(FleetContexts {
        watched: contexts,
        all,
    }))
}

/// The contexts a live view over several watches, and every context of the kubeconfig.
pub struct FleetContexts {
    pub watched: Vec<String>,
    pub all: Vec<String>,
}

/// `kdrift demo`: the simulated cluster in-process, its manifests in a fresh git repository,
/// then the live view on it.
pub fn run_demo(common: &CommonArgs, demo: &DemoArgs) -> ExitCode {
    demo::run(common, demo)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// A kubeconfig of contexts `names` and a manifests folder whose `.kdrift.yaml` is `config`.
    fn setup(names: &[&str], config: &str) -> (tempfile::TempDir, CommonArgs) {
        let dir = tempfile::tempdir().unwrap();
        let servers: Vec<(String, String)> = names
            .iter()
            .map(|n| (n.to_string(), "http://127.0.0.1:1".to_string()))
            .collect();
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(&kubeconfig, demo::fleet_kubeconfig(&servers, names[0])).unwrap();
        let manifests = dir.path().join("manifests");
        std::fs::create_dir_all(&manifests).unwrap();
        std::fs::write(manifests.join(".kdrift.yaml"), config).unwrap();
        let common = CommonArgs {
            kubeconfig: Some(kubeconfig),
            manifests: Some(manifests),
            ..CommonArgs::default()
        };
        (dir, common)
    }

    fn watched(common: &CommonArgs) -> Option<Vec<String>> {
        fleet_contexts(common).unwrap().map(|f| f.watched)
    }

    #[test]
    fn the_live_view_watches_the_contexts_kdrift_yaml_names_unless_told_which() {
        let config = "contexts:\n  staging: clusters/staging\n  prod-eu: clusters/prod-eu\n  gone: clusters/gone\n";
        let (_dir, common) = setup(&["staging", "prod-eu", "prod-us"], config);
        // The map's contexts the kubeconfig has, in the map's order.
        assert_eq!(
            watched(&common),
            Some(vec!["staging".to_owned(), "prod-eu".to_owned()])
        );
        // --context once: that context alone, as before.
        let one = CommonArgs {
            context: vec!["prod-us".into()],
            ..common.clone()
        };
        assert_eq!(watched(&one), None);
        let two = CommonArgs {
            context: vec!["prod-us".into(), "staging".into(), "prod-us".into()],
            ..common.clone()
        };
        assert_eq!(
            watched(&two),
            Some(vec!["prod-us".to_owned(), "staging".to_owned()])
        );
        let all = CommonArgs {
            all_contexts: true,
            ..common.clone()
        };
        assert_eq!(watched(&all).map(|w| w.len()), Some(3));
        let unknown = CommonArgs {
            context: vec!["staging".into(), "nope".into()],
            ..common
        };
        assert_eq!(
            fleet_contexts(&unknown).err().as_deref(),
            Some("no context \"nope\" in the kubeconfig")
        );
    }

    #[test]
    fn a_map_naming_one_context_of_the_kubeconfig_is_no_fleet() {
        let (_dir, common) = setup(
            &["staging", "prod-eu"],
            "contexts:\n  staging: clusters/staging\n",
        );
        assert_eq!(watched(&common), None);
    }
}
