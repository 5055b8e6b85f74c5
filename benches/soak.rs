//! Fault soak (issue 15, items 1 and 5): kdrift's real loop against a demo cluster (a child
//! process, controllers on) of 1,000 Deployments, 100 StatefulSets and 10 DaemonSets in 20
//! namespaces, each with a manifest, while a writer changes them at random (scale, set image,
//! set env, delete, create, namespace delete) and a fault is applied each round (dropped
//! watches, API restart, 410 on watch, 403 on a namespace then lifted, latency 0–2 s, a stalled
//! watch). After each round the app's rows, counts, phases and drift are compared with fresh
//! lists from the server; prints `faults N, checks N, stale rows N, longest recovery X s`, and
//! this process's resident memory at the start, every `--memory-every` minutes and at the end.
//!
//! Run: `cargo bench --bench soak` (200 faults; `-- --faults N`; `-- --minutes M` runs for M
//! minutes instead, e.g. `--minutes 1440` for the 24-hour run; `-- --seed S` repeats a run;
//! `-- --verbose` prints each round; `KDRIFT_LOG=debug` writes kdrift's log to its usual file).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/child.rs"]
mod child;
#[path = "soak/cluster.rs"]
mod cluster;
#[path = "soak/compare.rs"]
mod compare;
#[path = "common/manifest.rs"]
mod manifest;
#[path = "common/measure.rs"]
mod measure;
#[path = "soak/run.rs"]
mod run;
#[path = "common/session.rs"]
mod session;

use std::time::Duration;

use cluster::Population;
use run::{Options, Side};

/// The value after `flag`, parsed; exits with a message when it does not parse.
fn value<T: std::str::FromStr>(args: &[String], flag: &str) -> Option<T> {
    let at = args.iter().position(|a| a == flag)?;
    let Some(text) = args.get(at + 1) else {
        eprintln!("{flag} needs a value");
        std::process::exit(2);
    };
    match text.parse() {
        Ok(v) => Some(v),
        Err(_) => {
            eprintln!("{flag} {text:?}: not a number");
            std::process::exit(2);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--serve-cluster") {
        let population = Population::by_name(&args[at + 1]).unwrap();
        cluster::serve(population, args[at + 2].parse().unwrap());
        return;
    }
    let minutes: Option<f64> = value(&args, "--minutes");
    let seed: u64 = value(&args, "--seed").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_secs())
    });
    let duration = minutes.map(|m| Duration::from_secs_f64(m * 60.0));
    let options = Options {
        population: Population::BENCH,
        faults: value(&args, "--faults").unwrap_or(200),
        duration,
        seed,
        short: false,
        memory_every: Some(match duration {
            Some(d) => (d / 6).max(Duration::from_secs(60)),
            None => Duration::from_secs(300),
        }),
        verbose: args.iter().any(|a| a == "--verbose"),
        in_turn: false,
    };
    let p = options.population;
    let what = match duration {
        Some(d) => format!("for {:.0} min", d.as_secs_f64() / 60.0),
        None => format!("{} faults", options.faults),
    };
    println!(
        "-- soak: {} Deployments, {} StatefulSets, {} DaemonSets in {} namespaces on {} nodes, a manifest each; {what}; seed {seed}",
        p.deployments, p.statefulsets, p.daemonsets, p.namespaces, p.nodes
    );
    kdrift::runtime::tune_allocator();
    // KDRIFT_LOG=debug: kdrift's log (its watchers' errors and relists) in its usual file.
    let _log =
        std::env::var_os(kdrift::logging::LOG_ENV).and_then(|_| kdrift::logging::init(None).ok());
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    run::write_manifests(&manifests, &p);
    let rt = kdrift::cluster::tokio_runtime().unwrap();
    rt.block_on(async {
        let (mut side, url) = Side::child(p, seed).await;
        let summary = run::soak(&options, &mut side, &url, &manifests).await;
        side.stop().await;
        run::report(&summary);
    });
}
