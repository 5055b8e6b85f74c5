//! The live view over a fleet (issue 32's performance point), printed as figures: N demo
//! clusters (default 10) of W Deployments each (default 1,000), every one with its manifest,
//! watched by one kdrift (`FleetSession::drive` on a TestBackend). The clusters are served by a
//! child process, so that the memory and CPU figures are kdrift's alone.
//!
//! Figures: the first rows of every context, every row of every context listed and compared
//! with its manifest, resident memory then, idle CPU, event → frame (a marker scale in one
//! context, seen on its row) under 100 label writes/s spread over the clusters and under 100 a
//! second in every cluster (the wording), and the same in the other contexts while one
//! cluster's watches are stalled (the sim's `faults().stall_watches()`; the bench checks that
//! the stalled cluster's rows really stop moving). Beside the live part, the cost of one frame of
//! the merged table (10 contexts' rows, no cluster) with the first row selected and the last.
//!
//! Each figure is printed as soon as it is known: a phase that never ends (a context whose rows
//! never all compare) says which context is short, instead of holding back every line.
//!
//! Run: `cargo bench --bench fleet` (`-- --quick`: 3 clusters of 300, shorter phases;
//! `-- --clusters N --workloads W`; `-- --timeline`: when each context reached each step of
//! its start, and kdrift's log on stderr; `-- --frame-interval MS`: the loop's shortest time
//! between two frames under churn, 16 ms unless given).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/child.rs"]
mod child;
#[path = "common/manifest.rs"]
mod manifest;
#[path = "common/measure.rs"]
mod measure;

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};
use kdrift::app::fleet::{Fleet, Member};
use kdrift::app::{App, Message};
use kdrift::cli::CommonArgs;
use kdrift::cluster::rows::WorkloadRow;
use kdrift::manifest::ObjectKey;
use kdrift::runtime::drive::Frontend;
use kdrift::runtime::event_loop::Event;
use kdrift::sim::SimServer;
use kdrift::sim::resources::ResourceType;
use kdrift::sim::store::{Patch, Store, WriteOptions};
use kdrift::ui::theme::Theme;
use measure::{cpu_time, rss_mb};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

const NAMESPACES: usize = 20;
/// The Deployments of each cluster the markers scale (the churn leaves them alone).
const MARKERS: usize = 10;
/// Label writes a second spread over all the clusters (the load the figures are given at).
const SPREAD: usize = 100;

fn namespace(i: usize) -> String {
    format!("ns-{:02}", i % NAMESPACES)
}

fn name(i: usize) -> String {
    format!("app-{i:05}")
}

fn arg(flag: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `fleet --serve-fleet N --of W`: N stores of W Deployments (each its manifest, as applied),
/// each served; says their URLs, then obeys stdin without answering: `churn RATE SECONDS`
/// (RATE label writes a second spread over the clusters, on a task; says `done` at the end),
/// `scale C I R`, `stall C`, `quit`.
fn serve(clusters: usize, workloads: usize) {
    let rt = child::runtime();
    rt.block_on(async {
        let mut stores = Vec::new();
        let mut servers = Vec::new();
        for _ in 0..clusters {
            let store = Store::new();
            // Made days ago: ages change by the day, so an idle screen has nothing to redraw.
            store.set_clock_behind(3 * 86_400);
            let opts = WriteOptions::manager("kubectl-client-side-apply");
            for n in 0..NAMESPACES.min(workloads) {
                let ns = json!({"metadata": {"name": namespace(n)}});
                store.create(ResourceType::NAMESPACE, ns, &opts).unwrap();
            }
            let status = WriteOptions::status("kube-controller-manager");
            for i in 0..workloads {
                let text = manifest::deployment_yaml(&name(i), &namespace(i), 3, "1.4.2");
                let doc: serde_json::Value = serde_yaml::from_str(&text).unwrap();
                store.create(ResourceType::DEPLOYMENT, doc, &opts).unwrap();
                let s = json!({"status": {"observedGeneration": 1, "replicas": 3,
                    "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3}});
                let (ns, n) = (namespace(i), name(i));
                store
                    .patch(ResourceType::DEPLOYMENT, &ns, &n, &Patch::Merge(s), &status)
                    .unwrap();
            }
            store.set_clock_behind(0);
            servers.push(SimServer::serve_store(store.clone(), 0).await.unwrap());
            stores.push(store);
        }
        let urls: Vec<String> = servers.iter().map(SimServer::url).collect();
        let mut rx = child::serving(&urls.join(" "));
        let opts = WriteOptions::manager("bench-churn");
        while let Some(line) = rx.recv().await {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["churn", rate, secs] => {
                    // RATE writes a second over all the clusters, in turn.
                    let (per_second, secs): (u64, u64) =
                        (rate.parse().unwrap(), secs.parse().unwrap());
                    let (stores, opts) = (stores.clone(), opts.clone());
                    tokio::spawn(async move {
                        let start = Instant::now();
                        for k in 0..per_second * secs {
                            let due = start + Duration::from_micros(k * 1_000_000 / per_second);
                            tokio::time::sleep_until(due.into()).await;
                            let i = MARKERS + (k as usize * 7919) % (workloads - MARKERS);
                            let patch = Patch::Merge(
                                json!({"metadata": {"labels": {"bench-t": k.to_string()}}}),
                            );
                            let (ns, n) = (namespace(i), name(i));
                            stores[k as usize % stores.len()]
                                .patch(ResourceType::DEPLOYMENT, &ns, &n, &patch, &opts)
                                .unwrap();
                        }
                        println!("done");
                        std::io::stdout().flush().unwrap();
                    });
                }
                ["scale", c, i, r] => {
                    let (c, i, r): (usize, usize, i64) =
                        (c.parse().unwrap(), i.parse().unwrap(), r.parse().unwrap());
                    let patch = Patch::Merge(json!({"spec": {"replicas": r}}));
                    let (ns, n) = (namespace(i), name(i));
                    stores[c]
                        .patch(ResourceType::DEPLOYMENT, &ns, &n, &patch, &opts)
                        .unwrap();
                }
                ["stall", c] => servers[c.parse::<usize>().unwrap()]
                    .faults()
                    .stall_watches(),
                ["quit"] => break,
                _ => {}
            }
        }
        for server in servers {
            server.shutdown().await;
        }
    });
}

#[derive(Default)]
struct Stats {
    workloads: usize,
    first_rows: Option<Duration>,
    all_compared: Option<Duration>,
    /// Marker scales in flight: (context index, key, replicas, sent).
    markers: Vec<(usize, ObjectKey, i32, Instant)>,
    latencies: Vec<Duration>,
    /// The replicas each context's row of the first Deployment shows (the stall check).
    first_desired: Vec<i32>,
    /// Each context's rows and the rows whose drift is known, at the last frame.
    progress: Vec<(usize, usize)>,
    /// `--timeline`: when each context first showed rows, held its manifests, knew its kinds,
    /// had every row compared (from the start), printed once every row is compared.
    timeline: Option<Vec<[Option<Duration>; 4]>>,
    /// Frames drawn until every row was compared.
    frames: usize,
}

struct Probe {
    start: Instant,
    stats: Arc<Mutex<Stats>>,
}

impl Frontend<TestBackend> for Probe {
    fn suspend(&mut self, _t: &mut Terminal<TestBackend>) -> std::io::Result<()> {
        Ok(())
    }

    fn after_frame(&mut self, _fleet: &Fleet, members: &[Member<'_>]) {
        let mut s = self.stats.lock().unwrap();
        let since = self.start.elapsed();
        if s.first_rows.is_none() && members.iter().all(|m| !m.app.cache.workloads.is_empty()) {
            s.first_rows = Some(since);
        }
        let want = s.workloads;
        if s.all_compared.is_none() {
            s.progress = members
                .iter()
                .map(|m| {
                    let known = m.app.ledger.rows().count();
                    (m.app.cache.workloads.len(), known)
                })
                .collect();
            if s.progress.iter().all(|p| *p == (want, want)) {
                s.all_compared = Some(since);
            }
        }
        if s.all_compared.is_none() {
            s.frames += 1;
        }
        if let Some(timeline) = s.timeline.as_mut() {
            timeline.resize(members.len(), [None; 4]);
            for (m, marks) in members.iter().zip(timeline.iter_mut()) {
                let now = [
                    !m.app.cache.workloads.is_empty(),
                    m.app.manifests.is_some(),
                    m.app.kinds.is_some(),
                    m.app.cache.workloads.len() == want && m.app.ledger.rows().count() == want,
                ];
                for (mark, reached) in marks.iter_mut().zip(now) {
                    if reached && mark.is_none() {
                        *mark = Some(since);
                    }
                }
            }
        }
        let first = kdrift::cluster::rows::WorkloadKind::Deployment.key(&namespace(0), &name(0));
        s.first_desired = members
            .iter()
            .map(|m| {
                m.app
                    .cache
                    .workloads
                    .get(&first)
                    .map_or(-1, |e| e.row.desired)
            })
            .collect();
        let now = Instant::now();
        let mut seen = Vec::new();
        for (n, (c, key, replicas, sent)) in s.markers.iter().enumerate() {
            let shown = members[*c].app.cache.workloads.get(key);
            if shown.is_some_and(|e| e.row.desired == *replicas) {
                seen.push((n, now - *sent));
            }
        }
        for (n, latency) in seen.into_iter().rev() {
            s.markers.remove(n);
            s.latencies.push(latency);
        }
    }
}

fn ms_at(samples: &mut [Duration], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i].as_secs_f64() * 1000.0
}

/// The child's stdin (commands) and its `done` lines.
struct Clusters {
    stdin: ChildStdin,
    done: tokio::sync::mpsc::UnboundedReceiver<()>,
}

impl Clusters {
    fn say(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }
}

/// Marker scales, one every 100 ms in the contexts `on` in turn, while the clusters take `rate`
/// label writes a second between them for `secs`: the event → frame latencies seen, how many
/// markers were never seen, and the CPU used.
async fn churn_with_markers(
    clusters: &mut Clusters,
    stats: &Arc<Mutex<Stats>>,
    on: &[usize],
    rate: usize,
    secs: u64,
    round: &mut i32,
) -> (Vec<Duration>, usize, f64) {
    stats.lock().unwrap().latencies.clear();
    let cpu = cpu_time();
    let start = Instant::now();
    clusters.say(&format!("churn {rate} {secs}"));
    let mut k = 0;
    while start.elapsed() < Duration::from_secs(secs) {
        let (c, i) = (on[k % on.len()], k % MARKERS);
        k += 1;
        *round += 1;
        let replicas = 4 + (*round % 50);
        let key = kdrift::cluster::rows::WorkloadKind::Deployment.key(&namespace(i), &name(i));
        stats
            .lock()
            .unwrap()
            .markers
            .push((c, key, replicas, Instant::now()));
        clusters.say(&format!("scale {c} {i} {replicas}"));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    clusters.done.recv().await;
    let used = (cpu_time() - cpu).as_secs_f64() / start.elapsed().as_secs_f64() * 100.0;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut s = stats.lock().unwrap();
    let lost = s.markers.len();
    s.markers.clear();
    (std::mem::take(&mut s.latencies), lost, used)
}

fn main() {
    if std::env::args().any(|a| a == "--serve-fleet") {
        serve(arg("--serve-fleet", 10), arg("--of", 1000));
        return;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let (n, w) = if quick { (3, 300) } else { (10, 1000) };
    let (n, w) = (arg("--clusters", n), arg("--workloads", w));
    let (idle_secs, churn_secs) = if quick { (5, 6) } else { (10, 15) };
    // `--timeline`: when each context reached each step of its start, and kdrift's log
    // (`RUST_LOG`, default info) on stderr with times since the start.
    let timeline = std::env::args().any(|a| a == "--timeline");
    println!("fleet: {n} clusters × {w} Deployments, each with its manifest, in one kdrift");
    // As the kdrift binary does at start-up.
    kdrift::runtime::tune_allocator();
    let seeding = Instant::now();

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--serve-fleet", &n.to_string(), "--of", &w.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let urls: Vec<String> = line
        .trim()
        .strip_prefix("URL ")
        .unwrap()
        .split(' ')
        .map(str::to_owned)
        .collect();
    let (done_tx, done) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in stdout.lines() {
            if line.is_ok_and(|l| l == "done") && done_tx.send(()).is_err() {
                break;
            }
        }
    });
    let mut clusters = Clusters {
        stdin: child.stdin.take().unwrap(),
        done,
    };
    println!(
        "   clusters seeded and serving in {:.1} s (child process)",
        seeding.elapsed().as_secs_f64()
    );

    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..n).map(|c| format!("c{c}")).collect();
    let servers: Vec<(String, String)> = names.iter().cloned().zip(urls).collect();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        kdrift::runtime::demo::fleet_kubeconfig(&servers, "c0"),
    )
    .unwrap();
    let manifests = dir.path().join("manifests");
    for i in 0..w {
        let folder = manifests.join(namespace(i));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join(format!("{}.yaml", name(i))),
            manifest::deployment_yaml(&name(i), &namespace(i), 3, "1.4.2"),
        )
        .unwrap();
    }
    let common = CommonArgs {
        kubeconfig: Some(kubeconfig),
        manifests: Some(manifests),
        all_namespaces: true,
        ..CommonArgs::default()
    };

    let rt = child::runtime();
    rt.block_on(async {
        let stats = Arc::new(Mutex::new(Stats {
            workloads: w,
            timeline: timeline.then(Vec::new),
            ..Stats::default()
        }));
        // Its times count from here, as the figures do.
        if timeline {
            tracing_subscriber::fmt()
                .with_env_filter(
                    tracing_subscriber::EnvFilter::try_from_default_env()
                        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("kdrift=info")),
                )
                .with_timer(tracing_subscriber::fmt::time::uptime())
                .with_writer(std::io::stderr)
                .init();
        }
        let start = Instant::now();
        let mut session = kdrift::runtime::fleet::FleetSession::start(&common, &names, names.clone());
        let interval = arg(
            "--frame-interval",
            kdrift::runtime::event_loop::FRAME_INTERVAL.as_millis() as usize,
        );
        session.set_frame_interval(Duration::from_millis(interval as u64));
        println!("   frame interval under churn {interval} ms");
        let tx = session.sender();
        let mut probe = Probe {
            start,
            stats: stats.clone(),
        };
        let mut term = Terminal::new(TestBackend::new(200, 50)).unwrap();
        let theme = Theme::default_theme();
        let driver = session.drive(&mut term, &theme, &mut probe);
        let script = async {
            let deadline = start + Duration::from_secs(120);
            let secs = |d: Duration| format!("{:.3} s", d.as_secs_f64());
            let mut first_said = false;
            loop {
                let (first, all, progress) = {
                    let s = stats.lock().unwrap();
                    (s.first_rows, s.all_compared, s.progress.clone())
                };
                if let (Some(first), false) = (first, first_said) {
                    println!("first rows of every context            {}   (target ≤ 1 s)", secs(first));
                    first_said = true;
                }
                if let Some(all) = all {
                    println!("every row listed and compared          {}", secs(all));
                    let s = stats.lock().unwrap();
                    if let Some(timeline) = &s.timeline {
                        println!("   timeline ({} frames): context: rows shown / manifests held / kinds mapped / every row compared", s.frames);
                        let at = |d: &Option<Duration>| d.map_or("-".to_owned(), |d| format!("{:.3}", d.as_secs_f64()));
                        for (c, marks) in timeline.iter().enumerate() {
                            let marks: Vec<String> = marks.iter().map(at).collect();
                            println!("   c{c}: {}", marks.join(" / "));
                        }
                    }
                    break;
                }
                if Instant::now() > deadline {
                    if !first_said {
                        println!("first rows of every context            not reached in 120 s");
                    }
                    let short: Vec<String> = progress
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| **p != (w, w))
                        .map(|(c, (rows, known))| format!("c{c}: {rows} rows, {known} compared"))
                        .collect();
                    println!("every row listed and compared          not reached in 120 s; of {w} each: {}", short.join(", "));
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
            println!("resident memory, synced                {:.1} MB   (target ≤ 120 MB)", rss_mb());

            let cpu = cpu_time();
            let idle_start = Instant::now();
            tokio::time::sleep(Duration::from_secs(idle_secs)).await;
            let idle = (cpu_time() - cpu).as_secs_f64() / idle_start.elapsed().as_secs_f64() * 100.0;
            println!("idle CPU over {idle_secs} s                      {idle:.2} % of a core   (target ≤ 0.2 %)");

            let mut round = 0;
            let all: Vec<usize> = (0..n).collect();
            let say = |what: &str, lat: &mut Vec<Duration>, lost: usize, cpu: f64| {
                println!(
                    "event → frame, {what:<32} median {:>6.2} ms   p99 {:>6.2} ms   (n={}, {lost} not seen; CPU {cpu:.1} % of a core; target p99 ≤ 20 ms)",
                    ms_at(lat, 0.5),
                    ms_at(lat, 0.99),
                    lat.len()
                );
            };
            let (mut lat, lost, cpu) =
                churn_with_markers(&mut clusters, &stats, &all, SPREAD, churn_secs, &mut round).await;
            say(&format!("{SPREAD} writes/s over {n} clusters"), &mut lat, lost, cpu);
            let (mut lat, lost, cpu) =
                churn_with_markers(&mut clusters, &stats, &all, 100 * n, churn_secs, &mut round).await;
            say("100 writes/s in every cluster", &mut lat, lost, cpu);

            // One cluster stalled: the others' event → frame under the same load, before and
            // while c0's watches are open and silent.
            let others: Vec<usize> = (1..n).collect();
            let (mut base, base_lost, _) =
                churn_with_markers(&mut clusters, &stats, &others, SPREAD, churn_secs, &mut round).await;
            clusters.say("stall 0");
            tokio::time::sleep(Duration::from_millis(500)).await;
            // The stall took: a scale in c0 is not seen.
            let before = stats.lock().unwrap().first_desired[0];
            let probe = before + 100;
            clusters.say(&format!("scale 0 0 {probe}"));
            let (mut stalled, stalled_lost, _) =
                churn_with_markers(&mut clusters, &stats, &others, SPREAD, churn_secs, &mut round).await;
            let c0 = stats.lock().unwrap().first_desired[0];
            let held = if c0 == probe {
                "NOT stalled: c0 showed its scale".to_owned()
            } else {
                format!("c0 stalled: its scale to {probe} unseen after {churn_secs} s")
            };
            let (b50, s50) = (ms_at(&mut base, 0.5), ms_at(&mut stalled, 0.5));
            let (b99, s99) = (ms_at(&mut base, 0.99), ms_at(&mut stalled, 0.99));
            println!(
                "the other contexts, c0 stalled         median {s50:.2} ms against {b50:.2} ms ({:+.2}), p99 {s99:.2} against {b99:.2} ms ({:+.2})   (target +0 ms; n={} and {}, {stalled_lost} and {base_lost} not seen; {held})",
                s50 - b50,
                s99 - b99,
                stalled.len(),
                base.len()
            );
            tx.send(Event::App(Message::Key(KeyEvent::from(KeyCode::Char('q'))))).ok();
        };
        let (result, ()) = tokio::join!(driver, script);
        result.unwrap();
    });
    clusters.say("quit");
    let _ = child.wait();
    pure_frames(n, w, if quick { 50 } else { 300 });
}

/// A Deployment's row as the watcher decodes it: `i` of context `c`.
fn row(i: usize) -> WorkloadRow {
    WorkloadRow {
        key: kdrift::cluster::rows::WorkloadKind::Deployment.key(&namespace(i), &name(i)),
        generation: 1,
        observed_generation: 1,
        desired: 3,
        replicas: 3,
        updated: 3,
        ready: 3,
        available: 3,
        paused: false,
        owners: Vec::new(),
        facts: Default::default(),
        conditions: Vec::new(),
        revision: Some(1),
        images: vec![format!("registry.example/{}:1.4.2", name(i)).into()],
        created: None,
        last_change: None,
    }
}

/// The cost of one frame of the merged table (`n` contexts of `w` rows, no cluster, 200x50),
/// after one row of one context changed, with the first row selected and then the last: what
/// the table does per frame beside the rows it shows.
fn pure_frames(n: usize, w: usize, rounds: usize) {
    use kdrift::app::fleet::{Link, handle_key};
    use kdrift::app::update;
    use kdrift::cluster::client::NamespaceScope;
    use kdrift::cluster::rows::WorkloadKind;
    use kdrift::cluster::watch::{ClusterEvent, ClusterMessage, WatchUpdate};
    let names: Vec<String> = (0..n).map(|c| format!("c{c}")).collect();
    let batch = |updates| {
        Message::Cluster(ClusterMessage {
            epoch: 0,
            event: ClusterEvent::Workloads(WorkloadKind::Deployment, updates),
        })
    };
    let mut apps: Vec<App> = names
        .iter()
        .map(|c| {
            let mut app = App::new(
                c,
                names.clone(),
                NamespaceScope::All,
                jiff::Timestamp::now(),
            );
            let mut updates = vec![WatchUpdate::Init];
            updates.extend((0..w).map(|i| WatchUpdate::InitApply(row(i))));
            updates.push(WatchUpdate::InitDone);
            update(&mut app, batch(updates));
            update(
                &mut app,
                Message::Resize {
                    width: 200,
                    height: 50,
                },
            );
            app.prepare_frame();
            app
        })
        .collect();
    let links = vec![Link::Connected; n];
    let mut fleet = Fleet::default();
    let mut term = Terminal::new(TestBackend::new(200, 50)).unwrap();
    let theme = Theme::default_theme();
    println!(
        "-- one frame of the merged table: {n} contexts × {w} rows, 200x50, one row changed before each"
    );
    for (label, key) in [("first row selected", 'g'), ("last row selected", 'G')] {
        {
            let mut refs: Vec<&mut App> = apps.iter_mut().collect();
            handle_key(&mut fleet, &mut refs, KeyEvent::from(KeyCode::Char(key)));
        }
        let mut took = Vec::with_capacity(rounds);
        for r in 0..rounds {
            let c = r % n;
            let mut changed = row(MARKERS + r % (w - MARKERS));
            changed.desired = 3 + (r % 4) as i32;
            update(&mut apps[c], batch(vec![WatchUpdate::Apply(changed)]));
            let t = Instant::now();
            for app in &mut apps {
                app.prepare_frame();
            }
            let refs: Vec<&App> = apps.iter().collect();
            fleet.refresh(&refs);
            let members: Vec<Member<'_>> = apps
                .iter()
                .zip(&names)
                .zip(&links)
                .map(|((app, context), link)| Member { context, link, app })
                .collect();
            term.draw(|f| kdrift::ui::fleet::render_fleet(&fleet, &members, &theme, f))
                .unwrap();
            took.push(t.elapsed());
        }
        println!(
            "frame, {label:<20} median {:.3} ms   p99 {:.3} ms   (n={rounds})",
            ms_at(&mut took, 0.5),
            ms_at(&mut took, 0.99)
        );
    }
}
