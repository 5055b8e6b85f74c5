//! The live view's figures (issue 3, point 9), printed as medians and p99s.
//!
//! Pure part: frame cost at 10,000 rows, the cost of applying a 1,000-event burst, memory held by
//! slim rows. Live part (`client`, `cluster`): kdrift's real loop against a demo cluster in a
//! child process — time to first row and full sync, memory at steady state and during a relist,
//! event→frame latency and CPU under 1,000 events/s, idle CPU.
//!
//! Run: `cargo bench --bench live` (`-- --quick`: fewer rounds, 10 s idle; `-- --pure`: no cluster;
//! `-- --workloads`: 2,000 StatefulSets and 2,000 DaemonSets beside the Deployments).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/child.rs"]
mod child;
#[path = "live/client.rs"]
mod client;
#[path = "live/cluster.rs"]
mod cluster;
#[path = "common/measure.rs"]
mod measure;
#[path = "common/session.rs"]
mod session;

use std::time::{Duration, Instant};

use jiff::Timestamp;
use kdrift::app::{App, Message, update};
use kdrift::cluster::client::NamespaceScope;
use kdrift::cluster::rows::{ConditionRow, WorkloadRow};
use kdrift::cluster::watch::{ClusterEvent, ClusterMessage, WatchUpdate};
use kdrift::ui::theme::Theme;
use measure::rss_mb;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

pub const DEPLOYMENTS: usize = 10_000;
pub const NAMESPACES: usize = 500;
pub use cluster::PER_WORKLOAD_KIND;

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i]
}

fn report(name: &str, samples: &mut [Duration]) {
    let med = percentile(samples, 0.5);
    let p99 = percentile(samples, 0.99);
    println!(
        "{name:<48} median {:>9.3} ms   p99 {:>9.3} ms   (n={})",
        ms(med),
        ms(p99),
        samples.len()
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn deployment(i: usize, replicas: i32) -> WorkloadRow {
    let now = Timestamp::now();
    WorkloadRow {
        key: kdrift::cluster::rows::WorkloadKind::Deployment
            .key(&format!("ns-{:03}", i % NAMESPACES), &format!("app-{i:05}")),
        generation: 1,
        observed_generation: 1,
        desired: replicas,
        replicas,
        updated: replicas,
        ready: replicas,
        available: replicas,
        paused: false,
        owners: Vec::new(),
        facts: Default::default(),
        conditions: vec![
            ConditionRow {
                kind: "Available".into(),
                status: "True".into(),
                reason: "MinimumReplicasAvailable".into(),
                message: "Deployment has minimum availability.".into(),
                last_update: Some(now),
            },
            ConditionRow {
                kind: "Progressing".into(),
                status: "True".into(),
                reason: "NewReplicaSetAvailable".into(),
                message: format!("ReplicaSet \"app-{i:05}-5d8f7\" has successfully progressed."),
                last_update: Some(now),
            },
        ],
        revision: Some(1),
        images: vec![format!("registry.example/app-{i:05}:1.0").into()],
        created: Some(now),
        last_change: Some(now),
    }
}

fn filled_app() -> App {
    let mut app = App::new("bench", vec![], NamespaceScope::All, Timestamp::now());
    let rows: Vec<_> = (0..DEPLOYMENTS)
        .map(|i| WatchUpdate::InitApply(deployment(i, 3)))
        .collect();
    let mut updates = vec![WatchUpdate::Init];
    updates.extend(rows);
    updates.push(WatchUpdate::InitDone);
    update(
        &mut app,
        cluster(ClusterEvent::Workloads(
            kdrift::cluster::rows::WorkloadKind::Deployment,
            updates,
        )),
    );
    update(
        &mut app,
        Message::Resize {
            width: 200,
            height: 50,
        },
    );
    app
}

fn cluster(event: ClusterEvent) -> Message {
    Message::Cluster(ClusterMessage { epoch: 0, event })
}

fn pure_figures(rounds: usize) {
    println!("-- pure: {DEPLOYMENTS} Deployments in {NAMESPACES} namespaces, 200x50 terminal");
    let theme = Theme::default_theme();
    let mut app = filled_app();
    let mut term = Terminal::new(TestBackend::new(200, 50)).unwrap();

    let mut idle = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        app.prepare_frame();
        term.draw(|f| kdrift::ui::render(&app, &theme, f)).unwrap();
        idle.push(t.elapsed());
    }
    report("frame (no row changed)", &mut idle);

    let mut after_burst = Vec::with_capacity(rounds);
    let mut burst_cost = Vec::with_capacity(rounds);
    for r in 0..rounds {
        let burst: Vec<_> = (0..1000)
            .map(|k| {
                WatchUpdate::Apply(deployment(
                    (r * 1000 + k * 7) % DEPLOYMENTS,
                    3 + (r % 3) as i32,
                ))
            })
            .collect();
        let t = Instant::now();
        update(
            &mut app,
            cluster(ClusterEvent::Workloads(
                kdrift::cluster::rows::WorkloadKind::Deployment,
                burst,
            )),
        );
        burst_cost.push(t.elapsed());
        let t = Instant::now();
        app.prepare_frame();
        term.draw(|f| kdrift::ui::render(&app, &theme, f)).unwrap();
        after_burst.push(t.elapsed());
    }
    report("apply a burst of 1,000 Deployment events", &mut burst_cost);
    report("frame after the burst (table rebuilt)", &mut after_burst);

    for key in ["P", "A"] {
        update(
            &mut app,
            Message::Key(crossterm::event::KeyEvent::from(
                crossterm::event::KeyCode::Char(key.chars().next().unwrap()),
            )),
        );
        let mut sorted = Vec::with_capacity(rounds);
        for r in 0..rounds {
            let burst = vec![WatchUpdate::Apply(deployment(r % DEPLOYMENTS, 4))];
            update(
                &mut app,
                cluster(ClusterEvent::Workloads(
                    kdrift::cluster::rows::WorkloadKind::Deployment,
                    burst,
                )),
            );
            let t = Instant::now();
            app.prepare_frame();
            term.draw(|f| kdrift::ui::render(&app, &theme, f)).unwrap();
            sorted.push(t.elapsed());
        }
        report(
            &format!("frame after an event, sorted by {key}"),
            &mut sorted,
        );
    }
}

fn memory_figures() {
    let before = rss_mb();
    let app = filled_app();
    let after_deploy = rss_mb();
    println!(
        "-- memory (RSS): before {before:.1} MB; after {DEPLOYMENTS} Deployment rows {after_deploy:.1} MB (+{:.1} MB, {:.0} bytes a row); pods and ReplicaSets are held for one namespace only, while its detail view is open",
        after_deploy - before,
        (after_deploy - before) * 1e6 / DEPLOYMENTS as f64
    );
    std::hint::black_box(&app);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--serve-store") {
        cluster::serve();
        return;
    }
    // As the kdrift binary does at start-up.
    kdrift::runtime::tune_allocator();
    let quick = args.iter().any(|a| a == "--quick");
    let rounds = if quick { 50 } else { 300 };
    // The live part first, so its memory figures are not inflated by the pure part's rows.
    if !args.iter().any(|a| a == "--pure") {
        let workloads = args.iter().any(|a| a == "--workloads");
        client::live_figures(if quick { 10 } else { 60 }, workloads);
    }
    memory_figures();
    pure_figures(rounds);
}
