//! The soak itself: kdrift's real loop (on a TestBackend) against the soak's cluster, round
//! after round: the writer changes objects while a fault is applied, then the fault is lifted
//! and the writes stop; from then the app's state is compared with fresh lists until they agree
//! (the recovery time), and once more after a quiet period (the check, which counts the stale
//! rows). Recovery is timed from the end of the fault, or for a stalled watch (which nothing
//! ends but kdrift's own timeout) from its start.

#![allow(dead_code)] // the bench and the short test each use part of it

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kdrift::app::App;
use kdrift::cli::CommonArgs;
use kdrift::cluster::client::connect;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::cluster::{Fault, Population, Rng, SoakCluster};
use super::compare::{Latest, Stale, View, expected, seen, stale};
use super::measure::{heap_mb, rss_mb};
use super::session;

/// How a soak runs.
#[derive(Debug, Clone)]
pub struct Options {
    pub population: Population,
    /// Stop after this many faults…
    pub faults: usize,
    /// …or, when set, after this long (whatever the count).
    pub duration: Option<Duration>,
    pub seed: u64,
    /// The test's: faults under a second, a shorter quiet period.
    pub short: bool,
    /// Print resident memory this often (besides at the start and the end).
    pub memory_every: Option<Duration>,
    /// Print a line per round.
    pub verbose: bool,
    /// Every kind of fault in turn (the test's), rather than at random.
    pub in_turn: bool,
}

impl Options {
    /// Writes before the fault.
    fn lead(&self) -> Duration {
        Duration::from_millis(if self.short { 300 } else { 1_000 })
    }

    /// No writes, no faults, this long after a fault ends before the check.
    fn quiet(&self) -> Duration {
        Duration::from_millis(if self.short { 1_000 } else { 3_000 })
    }
}

/// The end of a stalled watch's recovery budget: kube-runtime gives up on a silent watch after
/// its `timeoutSeconds` (the longest a watcher asks for) plus 5 s.
fn stall_notice() -> Duration {
    Duration::from_secs(u64::from(kdrift::cluster::watch::watch_timeout_max_secs()) + 5)
}

/// Past this without agreeing, a round's differing rows count as stale.
fn give_up_after(fault: &Fault) -> Duration {
    match fault {
        Fault::StallWatches => stall_notice() + Duration::from_secs(20),
        _ => Duration::from_secs(20),
    }
}

/// What a soak found.
#[derive(Debug, Default)]
pub struct Summary {
    pub faults: usize,
    pub checks: usize,
    /// Rows that differed from the server at a check (or when a round gave up).
    pub stale_rows: usize,
    /// Rounds that did not agree before giving up.
    pub unrecovered: usize,
    /// The longest recovery per fault kind.
    pub longest: BTreeMap<&'static str, Duration>,
    /// Every recovery, for medians.
    pub recoveries: Vec<Duration>,
    /// Some stale rows, as found (for the report).
    pub examples: Vec<Stale>,
    pub writes: usize,
    /// Resident memory (MB) of this process: after the first sync, then as sampled, at the end.
    pub rss: Vec<(Duration, f64)>,
    /// The objects compared at the last check.
    pub objects: usize,
}

impl Summary {
    pub fn longest_recovery(&self) -> Duration {
        self.longest.values().copied().max().unwrap_or_default()
    }

    /// `faults N, checks N, stale rows N, longest recovery X s`
    pub fn line(&self) -> String {
        format!(
            "faults {}, checks {}, stale rows {}, longest recovery {:.1} s",
            self.faults,
            self.checks,
            self.stale_rows,
            self.longest_recovery().as_secs_f64()
        )
    }
}

/// The cluster side: in this process (the test) or in a child process (the bench).
pub enum Side {
    InProcess(Box<SoakCluster>),
    Child(Box<ChildCluster>),
}

/// The cluster's process and its stdin and stdout.
pub struct ChildCluster {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Side {
    /// Starts `soak --serve-cluster POPULATION SEED` (the bench's own binary) and reads its URL.
    pub async fn child(population: Population, seed: u64) -> (Side, String) {
        let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
            .args(["--serve-cluster", population.name(), &seed.to_string()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let line = stdout.next_line().await.unwrap().unwrap();
        let url = line.strip_prefix("URL ").unwrap().to_string();
        let child = ChildCluster {
            child,
            stdin,
            stdout,
        };
        (Side::Child(Box::new(child)), url)
    }

    /// One round; returns when the fault started and ended, and the writes made.
    async fn round(&mut self, fault: &Fault, lead: Duration) -> (Instant, Instant, usize) {
        match self {
            Side::InProcess(cluster) => {
                let times = cluster.round(fault, lead).await;
                let end = Instant::now();
                (end - times.since_start, end, times.writes)
            }
            Side::Child(child) => {
                let ChildCluster { stdin, stdout, .. } = child.as_mut();
                let line = format!("round {} {}\n", lead.as_millis(), fault.to_line());
                stdin.write_all(line.as_bytes()).await.unwrap();
                stdin.flush().await.unwrap();
                let reply = stdout.next_line().await.unwrap().unwrap();
                let end = Instant::now();
                let words: Vec<&str> = reply.split_whitespace().collect();
                let ["done", since, writes] = words.as_slice() else {
                    panic!("the cluster answered {reply:?}");
                };
                let since = Duration::from_millis(since.parse().unwrap());
                (end - since, end, writes.parse().unwrap())
            }
        }
    }

    /// Resident memory of the cluster's process (MB), when it is another process.
    fn child_rss(&self) -> Option<f64> {
        let Side::Child(child) = self else {
            return None;
        };
        let child = &child.child;
        let text = std::fs::read_to_string(format!("/proc/{}/statm", child.id()?)).ok()?;
        let pages: f64 = text.split_whitespace().nth(1)?.parse().ok()?;
        Some(pages * 4096.0 / 1e6)
    }

    pub async fn stop(self) {
        match self {
            Side::InProcess(cluster) => cluster.server.shutdown().await,
            Side::Child(child) => {
                let ChildCluster {
                    mut child,
                    mut stdin,
                    ..
                } = *child;
                let _ = stdin.write_all(b"quit\n").await;
                let _ = child.wait().await;
            }
        }
    }
}

/// Writes a manifest per seeded object under `root` (a folder per namespace) and the
/// `.kdrift.yaml` that trusts the soak's applier.
pub fn write_manifests(root: &Path, population: &Population) {
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(root.join(".kdrift.yaml"), "appliers: [soak-apply]\n").unwrap();
    for object in population.objects() {
        let folder = root.join(&object.namespace);
        std::fs::create_dir_all(&folder).unwrap();
        let file = folder.join(format!("{}.yaml", object.name));
        std::fs::write(file, object.manifest()).unwrap();
    }
}

/// What the frame probe keeps: the app's state at the last frame, and its watchers' health (to
/// say what they thought when rows are found stale).
#[derive(Default)]
struct Probe {
    latest: Latest,
    health: String,
}

fn on_frame(probe: &mut Probe, app: &App, _since: Duration) {
    probe.latest = Arc::new(seen(app));
    probe.health = format!("{:?}", app.health);
}

/// What the server holds of a stale row's object (its resourceVersion and status), and what the
/// app's watchers say, for the report.
async fn explain(
    ctx: &kdrift::commands::context::Context,
    probe: &Arc<Mutex<Probe>>,
    differ: &[Stale],
) {
    for stale in differ.iter().take(3) {
        let resource = kdrift::cluster::live::workload_resource(
            kdrift::cluster::rows::WorkloadKind::of_row(&stale.key),
        );
        let api: kube::Api<kube::api::DynamicObject> =
            kube::Api::namespaced_with(ctx.conn.client.clone(), &stale.key.namespace, &resource);
        let server = match api.get_opt(&stale.key.name).await {
            Ok(Some(o)) => format!(
                "resourceVersion {:?}, status {}",
                o.metadata.resource_version,
                o.data
                    .get("status")
                    .map_or(String::new(), |s| s.to_string())
            ),
            Ok(None) => "not found".into(),
            Err(e) => e.to_string(),
        };
        let listed = super::compare::LISTED
            .lock()
            .ok()
            .and_then(|l| l.get(&stale.key).cloned())
            .unwrap_or_else(|| "not listed".into());
        println!("      stale {stale:?}\n        listed: {listed}\n        server: {server}");
    }
    println!(
        "        the app's watchers: {}",
        probe.lock().unwrap().health
    );
}

/// One comparison: a fresh list (on its own task, so the loop is not held up), then the app's
/// latest state.
async fn compare_once(
    ctx: &Arc<kdrift::commands::context::Context>,
    probe: &Arc<Mutex<Probe>>,
) -> Result<(Vec<Stale>, usize), String> {
    let ctx = ctx.clone();
    let server: View = tokio::spawn(async move { expected(&ctx).await })
        .await
        .map_err(|e| e.to_string())??;
    let app = probe.lock().unwrap().latest.clone();
    Ok((stale(&server, &app), server.len()))
}

/// Compares every `every` until the two agree (`Ok` with when) or `until` passes (`Err` with the
/// last differences).
async fn agree_by(
    ctx: &Arc<kdrift::commands::context::Context>,
    probe: &Arc<Mutex<Probe>>,
    until: Instant,
    every: Duration,
) -> Result<(Instant, usize), Vec<Stale>> {
    let mut last = Vec::new();
    loop {
        match compare_once(ctx, probe).await {
            Ok((differ, objects)) if differ.is_empty() => return Ok((Instant::now(), objects)),
            Ok((differ, _)) => last = differ,
            // A list may fail right after a restart (a pooled connection the server closed).
            Err(e) => eprintln!("   (comparison failed, again: {e})"),
        }
        if Instant::now() >= until {
            return Err(last);
        }
        tokio::time::sleep(every).await;
    }
}

/// Runs the soak with the cluster `side` serving at `url`, kdrift reading the manifests under
/// `manifests` (written by [`write_manifests`]).
pub async fn soak(options: &Options, side: &mut Side, url: &str, manifests: &Path) -> Summary {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, session::kubeconfig_for(url)).unwrap();
    let common = CommonArgs {
        kubeconfig: Some(kubeconfig),
        all_namespaces: true,
        manifests: Some(manifests.to_path_buf()),
        ..CommonArgs::default()
    };
    let ctx = Arc::new(kdrift::commands::context::open(&common).await.unwrap());
    let conn = connect(&common.connection()).await.unwrap();
    let probe = Arc::new(Mutex::new(Probe::default()));
    let start = Instant::now();
    let mut summary = Summary::default();
    let script = async {
        let every = Duration::from_millis(250);
        let first = agree_by(&ctx, &probe, start + Duration::from_secs(300), every).await;
        let (synced, objects) = first.unwrap_or_else(|differ| {
            panic!(
                "the first sync never agreed with the server: {} rows differ, e.g. {:?}",
                differ.len(),
                differ.first()
            )
        });
        summary.objects = objects;
        println!(
            "   first sync agrees with the server after {:.1} s ({objects} workloads and manifests)",
            (synced - start).as_secs_f64()
        );
        let began = Instant::now();
        summary.rss.push((Duration::ZERO, rss_mb()));
        print_memory("start", Duration::ZERO, rss_mb(), side.child_rss());
        let mut next_sample = options.memory_every.map(|e| began + e);
        let mut rng = Rng::new(options.seed ^ 0x5EED);
        loop {
            let done = match options.duration {
                Some(d) => began.elapsed() >= d,
                None => summary.faults >= options.faults,
            };
            if done {
                break;
            }
            let turn = options.in_turn.then_some(summary.faults);
            let fault = Fault::random(&mut rng, &options.population, options.short, turn);
            let (fault_start, fault_end, writes) = side.round(&fault, options.lead()).await;
            summary.faults += 1;
            summary.writes += writes;
            let from = match fault {
                Fault::StallWatches => fault_start,
                _ => fault_end,
            };
            let until = from + give_up_after(&fault);
            let recovered = agree_by(&ctx, &probe, until, Duration::from_millis(100)).await;
            let outcome = match recovered {
                Ok((at, _)) => {
                    let took = at.saturating_duration_since(from);
                    summary.recoveries.push(took);
                    let longest = summary.longest.entry(fault.kind()).or_default();
                    *longest = (*longest).max(took);
                    // The check: after the quiet period, allowing a moment for changes the
                    // controllers make meanwhile to reach both sides.
                    tokio::time::sleep_until((fault_end + options.quiet()).into()).await;
                    summary.checks += 1;
                    let check =
                        agree_by(&ctx, &probe, Instant::now() + Duration::from_secs(3), every)
                            .await;
                    match check {
                        Ok((_, objects)) => {
                            summary.objects = objects;
                            format!("recovered in {:.2} s", took.as_secs_f64())
                        }
                        Err(differ) => {
                            explain(&ctx, &probe, &differ).await;
                            summary.stale_rows += differ.len();
                            summary.examples.extend(differ.iter().take(3).cloned());
                            format!(
                                "recovered in {:.2} s, then {} stale rows at {}",
                                took.as_secs_f64(),
                                differ.len(),
                                jiff::Timestamp::now()
                            )
                        }
                    }
                }
                Err(differ) => {
                    explain(&ctx, &probe, &differ).await;
                    summary.checks += 1;
                    summary.unrecovered += 1;
                    summary.stale_rows += differ.len();
                    summary.examples.extend(differ.iter().take(3).cloned());
                    format!(
                        "NOT recovered: {} stale rows at {}",
                        differ.len(),
                        jiff::Timestamp::now()
                    )
                }
            };
            if options.verbose {
                println!(
                    "   {:>4} {:<60} {writes:>3} writes  {outcome}",
                    summary.faults,
                    format!("{fault:?}")
                );
            }
            if let Some(at) = next_sample
                && Instant::now() >= at
            {
                let rss = rss_mb();
                summary.rss.push((began.elapsed(), rss));
                print_memory("", began.elapsed(), rss, side.child_rss());
                next_sample = options.memory_every.map(|e| at + e);
            }
        }
        let rss = rss_mb();
        summary.rss.push((began.elapsed(), rss));
        print_memory("end", began.elapsed(), rss, side.child_rss());
    };
    session::drive(&common, conn, start, probe.clone(), on_frame, script).await;
    summary
}

fn print_memory(label: &str, at: Duration, rss: f64, child: Option<f64>) {
    let child = child.map_or(String::new(), |c| {
        format!("; the cluster's process {c:.1} MB")
    });
    println!(
        "   resident memory {label:<5} {:>7.1} min: {rss:.1} MB (heap in use {:.1} MB){child}",
        at.as_secs_f64() / 60.0,
        heap_mb()
    );
}

/// The summary, by fault kind, and some stale rows if any.
pub fn report(summary: &Summary) {
    println!("{}", summary.line());
    let mut recoveries = summary.recoveries.clone();
    recoveries.sort();
    if let Some(median) = recoveries.get(recoveries.len() / 2) {
        println!(
            "   recovery median {:.2} s over {} rounds; {} writes; {} rounds not recovered",
            median.as_secs_f64(),
            recoveries.len(),
            summary.writes,
            summary.unrecovered
        );
    }
    for kind in Fault::KINDS {
        if let Some(longest) = summary.longest.get(kind) {
            println!(
                "   longest recovery after {kind:<20} {:.2} s",
                longest.as_secs_f64()
            );
        }
    }
    for example in summary.examples.iter().take(10) {
        println!("   stale: {example:?}");
    }
}
