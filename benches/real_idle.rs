//! Idle against a real Kubernetes API server (issue 35): kdrift's real loop (a 200x50
//! TestBackend) on realk8s holding 1,000 Deployments (100 with one replica, Running; 900 at
//! zero), 1,000 Services and 1,000 ConfigMaps in 40 namespaces, a manifest for each, while
//! nothing changes. Per window of `--seconds` (60): the loop's wake-ups and frames, the HTTP
//! requests kdrift sent (watches and others, counted on the client by `cluster::traffic`), and
//! this process's CPU (utime + stime), with the load average beside it; then the median of the
//! `--windows` (3) windows.
//!
//! The server: the realk8s that `KDRIFT_REALK8S_KUBECONFIG` names, else one started from
//! `../shared/realk8s` (stopped at the end), else the bench says why it cannot run and exits.
//! Objects are created with server-side apply (manager `bench`, 16 at a time) into namespaces
//! `idle-00`…`idle-39`, which are left in place on a named server (a second run finds them).
//!
//! Run: `cargo bench --bench real_idle` (`-- --seconds 30 --windows 1` for a short look).
//!
//! `-- --binary PATH` measures the live view as a user runs it instead: the kdrift binary at
//! PATH (`target/release/kdrift`) in a 200x50 pseudo-terminal on the same objects and
//! manifests, its CPU read from `/proc` per window; with `--kubectl PATH`, `kubectl get KIND -A
//! -w` beside it for each of the three kinds (kubectl watches one kind at a time), their CPU
//! summed. Windows begin once the objects' last change is over two minutes old (before that the
//! ages on screen count seconds and are drawn every second; that stretch is printed apart).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/manifest.rs"]
mod manifest;
#[path = "common/measure.rs"]
mod measure;
#[path = "../tests/pty/mod.rs"]
mod pty;
#[path = "common/real_apps.rs"]
mod real_apps;
#[path = "common/realk8s.rs"]
mod realk8s;
#[path = "common/session.rs"]
mod session;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kdrift::app::App;
use kdrift::cluster::client::connect;
use kdrift::cluster::traffic;
use kdrift::runtime::drive::wakeups_and_frames;

use measure::cpu_time;
use real_apps::{Apps, load_average};

const APPS: Apps = Apps {
    prefix: "idle",
    apps: 1_000,
    namespaces: 40,
    // Deployments with one replica (the others have none): two stand-in nodes hold 110 pods each.
    running: 100,
};

#[derive(Default)]
struct Stats {
    synced: bool,
}

/// Every Deployment row and every other object has its drift.
fn all_known(app: &App) -> bool {
    app.ledger.rows().count() >= APPS.apps
        && app.ledger.others().count() >= 2 * APPS.apps
        && !app.objects.kinds.is_empty()
        && app.objects.kinds.values().all(|listed| *listed)
}

fn on_frame(s: &mut Stats, app: &App, _since: Duration) {
    if !s.synced && all_known(app) {
        s.synced = true;
    }
}

fn value(args: &[String], flag: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == flag)
        .and_then(|at| args.get(at + 1))
        .map_or(default, |v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{flag} {v:?}: not a number"))
        })
}

/// One idle window's figures, per minute.
struct Window {
    wakeups: f64,
    frames: f64,
    watches: f64,
    others: f64,
    cpu_percent: f64,
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seconds = value(&args, "--seconds", 60);
    let windows = value(&args, "--windows", 3).max(1);
    let path = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|at| args.get(at + 1))
            .map(std::path::PathBuf::from)
    };
    let (binary, kubectl) = (path("--binary"), path("--kubectl"));
    let server = match realk8s::find() {
        Ok(server) => server,
        Err(why) => {
            println!("-- real_idle: cannot run: {why}");
            return;
        }
    };
    println!(
        "-- real_idle: {n} Deployments ({} with one pod, the rest at zero) + {n} headless Services + {n} ConfigMaps in {} namespaces, a manifest each, on {}",
        APPS.running,
        APPS.namespaces,
        server.origin,
        n = APPS.apps
    );
    kdrift::runtime::tune_allocator();
    let (_dir, root, common) = real_apps::checkout(&server.kubeconfig);
    let rt = kdrift::cluster::tokio_runtime().unwrap();
    rt.block_on(async {
        {
            let conn = connect(&common.connection()).await.unwrap();
            APPS.populate(&conn.client, &root).await;
        }
        // The objects' last change (their Deployments turning available) was about now.
        let settled = Instant::now();
        if let Some(binary) = &binary {
            let programs = Programs {
                kdrift: binary,
                kubectl: kubectl.as_deref(),
                kubeconfig: &server.kubeconfig,
                root: &root,
            };
            as_a_user_runs_it(&programs, seconds, windows, settled).await;
            return;
        }
        let start = Instant::now();
        let conn = connect(&common.connection()).await.unwrap();
        let stats = Arc::new(Mutex::new(Stats::default()));
        let script = async {
            while !stats.lock().unwrap().synced {
                tokio::time::sleep(Duration::from_millis(20)).await;
                assert!(start.elapsed() < Duration::from_secs(300), "drift never complete");
            }
            println!(
                "every object's drift known {:.2} s after connecting",
                start.elapsed().as_secs_f64()
            );
            // Let the first lists' aftermath settle (memory released, ages drawn).
            tokio::time::sleep(Duration::from_secs(5)).await;
            let mut figures = Vec::new();
            for w in 1..=windows {
                let (wake0, frames0) = wakeups_and_frames();
                let sent0 = traffic::sent();
                let cpu0 = cpu_time();
                let t = Instant::now();
                tokio::time::sleep(Duration::from_secs(seconds)).await;
                let cpu = cpu_time() - cpu0;
                let wall = t.elapsed().as_secs_f64();
                let (wake1, frames1) = wakeups_and_frames();
                let sent = traffic::sent().since(sent0);
                let per_minute = |n: u64| n as f64 * 60.0 / wall;
                let window = Window {
                    wakeups: per_minute(wake1 - wake0),
                    frames: per_minute(frames1 - frames0),
                    watches: per_minute(sent.watches),
                    others: per_minute(sent.others),
                    cpu_percent: cpu.as_secs_f64() / wall * 100.0,
                };
                println!(
                    "window {w}: {:>5.1} wake-ups/min, {:>5.1} frames/min, {:>5.1} requests/min ({:.1} watches, {:.1} others), CPU {:.3} % of a core over {wall:.0} s; load {}",
                    window.wakeups,
                    window.frames,
                    window.watches + window.others,
                    window.watches,
                    window.others,
                    window.cpu_percent,
                    load_average()
                );
                figures.push(window);
            }
            println!(
                "idle, median of {windows}: {:.1} wake-ups/min, {:.1} frames/min, {:.1} requests/min ({:.1} watches, {:.1} others), CPU {:.3} % of a core (target ≤ 0.05 %)",
                median(figures.iter().map(|f| f.wakeups).collect()),
                median(figures.iter().map(|f| f.frames).collect()),
                median(figures.iter().map(|f| f.watches + f.others).collect()),
                median(figures.iter().map(|f| f.watches).collect()),
                median(figures.iter().map(|f| f.others).collect()),
                median(figures.iter().map(|f| f.cpu_percent).collect()),
            );
        };
        session::drive(&common, conn, start, stats.clone(), on_frame, script).await;
    });
    drop(server);
}

/// What `--binary` runs.
struct Programs<'a> {
    kdrift: &'a std::path::Path,
    kubectl: Option<&'a std::path::Path>,
    kubeconfig: &'a std::path::Path,
    root: &'a std::path::Path,
}

/// A process's CPU so far (utime + stime, from `/proc/PID/stat`).
fn cpu_of(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<u64> = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse().ok())
        .collect();
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Duration::from_secs_f64(fields.iter().sum::<u64>() as f64 / ticks)
}

/// The kdrift binary in a 200x50 pseudo-terminal (its output read and dropped, as a terminal
/// would show it), and `kubectl get -w` beside it: each one's CPU per window, once both have
/// had 30 s to list and settle and the objects' last change (`settled`) is over two minutes
/// old. Until then the ages on screen count seconds and are drawn every second: that stretch
/// is measured apart (`ages in seconds`), not as idle.
async fn as_a_user_runs_it(programs: &Programs<'_>, seconds: u64, windows: u64, settled: Instant) {
    let mut cmd = portable_pty::CommandBuilder::new(programs.kdrift);
    cmd.args(["-A", "--manifests"]);
    cmd.arg(programs.root);
    cmd.arg("--kubeconfig");
    cmd.arg(programs.kubeconfig);
    cmd.env("TERM", "xterm-256color");
    // The terminal the tests run kdrift in; what it writes is counted and dropped.
    let mut term = pty::Pty::spawn(cmd, 50, 200);
    let mut drawn = 0u64;
    let mut count = |term: &pty::Pty| {
        drawn += term.output.try_iter().map(|b| b.len() as u64).sum::<u64>();
        drawn
    };
    let mut kubectl: Vec<std::process::Child> = programs
        .kubectl
        .map(|path| {
            ["deployments", "services", "configmaps"]
                .iter()
                .map(|kind| {
                    std::process::Command::new(path)
                        .args(["get", kind, "-A", "-w"])
                        .arg("--kubeconfig")
                        .arg(programs.kubeconfig)
                        .stdout(std::process::Stdio::null())
                        .spawn()
                        .unwrap()
                })
                .collect()
        })
        .unwrap_or_default();
    let kubectl_cpu = |kubectl: &mut Vec<std::process::Child>| {
        for k in kubectl.iter_mut() {
            if let Ok(Some(status)) = k.try_wait() {
                panic!("kubectl get -w ended: {status}");
            }
        }
        (!kubectl.is_empty()).then(|| kubectl.iter().map(|k| cpu_of(k.id())).sum::<Duration>())
    };
    let pid = term.child.process_id().unwrap();
    println!(
        "the kdrift binary {} (pid {pid}) in a 200x50 terminal{}; 30 s to list and settle, and until the objects changed over two minutes before",
        programs.kdrift.display(),
        match programs.kubectl {
            Some(path) => format!(
                ", `kubectl get KIND -A -w` for each kind ({}) beside it",
                path.display()
            ),
            None => String::new(),
        }
    );
    tokio::time::sleep(Duration::from_secs(30)).await;
    // Ages count seconds until two minutes after the last change (`ui::format::age`).
    let minutes_at = settled + Duration::from_secs(125);
    if let Some(left) = minutes_at
        .checked_duration_since(Instant::now())
        .filter(|left| *left >= Duration::from_secs(20))
    {
        let (k0, bytes0) = (cpu_of(pid), count(&term));
        let t = Instant::now();
        tokio::time::sleep(left).await;
        let wall = t.elapsed().as_secs_f64();
        println!(
            "ages in seconds (the objects changed {:.0}–{:.0} s before): kdrift {:.3} % of a core, {:.0} bytes drawn/min, over {wall:.0} s; not idle, not counted below",
            (t - settled).as_secs_f64(),
            (t - settled).as_secs_f64() + wall,
            (cpu_of(pid) - k0).as_secs_f64() / wall * 100.0,
            (count(&term) - bytes0) as f64 * 60.0 / wall,
        );
    }
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for w in 1..=windows {
        let (k0, c0, bytes0) = (cpu_of(pid), kubectl_cpu(&mut kubectl), count(&term));
        let t = Instant::now();
        tokio::time::sleep(Duration::from_secs(seconds)).await;
        let wall = t.elapsed().as_secs_f64();
        // A program that ended spends nothing: that would read as a fine figure.
        if let Ok(Some(status)) = term.child.try_wait() {
            panic!("kdrift ended: {status:?}");
        }
        let kdrift = (cpu_of(pid) - k0).as_secs_f64() / wall * 100.0;
        let bytes = count(&term) - bytes0;
        let beside = kubectl_cpu(&mut kubectl)
            .zip(c0)
            .map(|(c1, c0)| (c1 - c0).as_secs_f64() / wall * 100.0);
        println!(
            "window {w}: kdrift {kdrift:.3} % of a core, {:.0} bytes drawn/min{}, over {wall:.0} s; load {}",
            bytes as f64 * 60.0 / wall,
            beside.map_or(String::new(), |b| format!("; kubectl get -w {b:.3} %")),
            load_average()
        );
        ours.push(kdrift);
        theirs.extend(beside);
    }
    println!(
        "as a user runs it, median of {windows}: kdrift {:.3} % of a core (target ≤ 0.05 %){}",
        median(ours),
        if theirs.is_empty() {
            String::new()
        } else {
            format!("; kubectl get -w {:.3} %", median(theirs))
        }
    );
    let _ = term.child.kill();
    for k in &mut kubectl {
        let _ = k.kill();
    }
}
