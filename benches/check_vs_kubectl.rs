//! `kdrift check` against `kubectl diff` on the same 1,000 Deployment manifests and the same demo
//! cluster (issue 4, point 9): kubectl asks the server for one dry run per object, kdrift lists
//! once and compares locally. The cluster is filled with `kubectl apply -R -f` (as a team would),
//! then the 100 Deployments of one namespace are scaled out of band, so both tools report drift.
//! Each tool runs five times in turn; the medians and their ratio are printed.
//!
//! Run: `cargo bench --bench check_vs_kubectl` (needs the real kubectl at /usr/bin/kubectl).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use kdrift::sim::server::{Scenario, SimConfig, SimServer, Timings};

#[path = "common/manifest.rs"]
mod manifest;

const DEPLOYMENTS: usize = 1_000;
const NAMESPACES: usize = 10;
const RUNS: usize = 5;
const KUBECTL: &str = "/usr/bin/kubectl";

fn manifest(i: usize) -> String {
    let (name, ns) = (format!("app-{i:04}"), format!("team-{}", i % NAMESPACES));
    manifest::deployment_yaml(&name, &ns, 2, "1.4.2")
}

fn write_manifests(dir: &Path) {
    let namespaces: String = (0..NAMESPACES)
        .map(|n| format!("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-{n}\n"))
        .collect();
    std::fs::write(dir.join("namespaces.yaml"), namespaces).unwrap();
    for i in 0..DEPLOYMENTS {
        let folder = dir.join(format!("team-{}", i % NAMESPACES));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(format!("app-{i:04}.yaml")), manifest(i)).unwrap();
    }
}

/// Runs `program` with `args`; its exit code, how long it took and the last line it printed.
fn timed(program: &str, args: &[&str], env: &[(&str, &Path)]) -> (Option<i32>, Duration, String) {
    let started = Instant::now();
    let mut command = Command::new(program);
    command.args(args);
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    let took = started.elapsed();
    if !matches!(out.status.code(), Some(0 | 1)) {
        panic!(
            "{program} {args:?}: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default().to_owned();
    (out.status.code(), took, last)
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn main() {
    if !Path::new(KUBECTL).exists() {
        println!("check_vs_kubectl: {KUBECTL} not found (Debian: kubernetes-client); skipped");
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime
        .block_on(SimServer::start(SimConfig {
            port: 0,
            scenario: Scenario::None,
            seed: false,
            timings: Timings::fast(),
        }))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let manifests = dir.path().join("manifests");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&manifests).unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig_yaml()).unwrap();
    write_manifests(&manifests);
    let env = [
        ("KUBECONFIG", kubeconfig.as_path()),
        ("HOME", home.as_path()),
    ];
    let m = manifests.to_str().unwrap();

    println!(
        "-- check_vs_kubectl: {DEPLOYMENTS} Deployments in {NAMESPACES} namespaces, one file each"
    );
    let (_, applied, _) = timed(KUBECTL, &["apply", "-R", "-f", m], &env);
    println!("   kubectl apply -R -f: {:.2} s", applied.as_secs_f64());
    timed(
        KUBECTL,
        &[
            "scale",
            "deployment",
            "--all",
            "-n",
            "team-0",
            "--replicas=3",
        ],
        &env,
    );

    let kdrift = env!("CARGO_BIN_EXE_kdrift");
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let mut codes = (None, None);
    let mut summary = String::new();
    for _ in 0..RUNS {
        let (code, took, last) = timed(kdrift, &["check", "-A", "--manifests", m], &env);
        codes.0 = code;
        summary = last;
        ours.push(took);
        let (code, took, _) = timed(KUBECTL, &["diff", "-R", "-f", m], &env);
        codes.1 = code;
        theirs.push(took);
    }
    let (ours, theirs) = (median(ours), median(theirs));
    println!(
        "kdrift check -A        median {:>7.3} s  (exit {:?}; {summary})",
        ours.as_secs_f64(),
        codes.0
    );
    println!(
        "kubectl diff -R -f     median {:>7.3} s  (exit {:?})",
        theirs.as_secs_f64(),
        codes.1
    );
    println!(
        "ratio                  kubectl diff takes {:.1}× as long ({RUNS} runs each, interleaved)",
        theirs.as_secs_f64() / ours.as_secs_f64()
    );
    runtime.block_on(server.shutdown());
}
