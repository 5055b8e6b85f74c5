//! The fault soak, short (issue 15, item 1): the bench's soak code (`benches/soak/`) with a
//! tenth of its objects and a dozen faults under a second (each kind twice), the cluster in this
//! process, and the watch timeout shortened so that a stalled watch is noticed in 7 s rather
//! than 30 s. Every round's comparison with fresh lists from the server must find no stale row.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../benches/common/child.rs"]
mod child;
#[path = "../benches/soak/cluster.rs"]
mod cluster;
#[path = "../benches/soak/compare.rs"]
mod compare;
#[path = "../benches/common/manifest.rs"]
mod manifest;
#[path = "../benches/common/measure.rs"]
mod measure;
#[path = "../benches/soak/run.rs"]
mod run;
#[path = "../benches/common/session.rs"]
mod session;

use cluster::{Population, SoakCluster};
use run::{Options, Side};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_soak_leaves_no_stale_row() {
    // Watches end after 2 s: a stalled one is given up after 7 s of silence.
    kdrift::cluster::watch::set_watch_timeout(2);
    let population = Population::SHORT;
    let options = Options {
        population,
        faults: 12,
        duration: None,
        seed: 15,
        short: true,
        memory_every: None,
        verbose: true,
        in_turn: true,
    };
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    run::write_manifests(&manifests, &population);
    let cluster = SoakCluster::start(population, options.seed).await;
    let url = cluster.server.url();
    let mut side = Side::InProcess(Box::new(cluster));
    let summary = run::soak(&options, &mut side, &url, &manifests).await;
    side.stop().await;
    run::report(&summary);
    assert_eq!(summary.faults, 12);
    assert_eq!(summary.checks, 12);
    assert_eq!(summary.stale_rows, 0, "{:#?}", summary.examples);
    assert!(summary.objects >= 100, "{summary:?}");
    assert!(summary.writes > 0);
}
