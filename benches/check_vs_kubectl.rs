//! `kdrift check` against `kubectl diff` on the same manifests and the same demo cluster (issue 4,
//! point 9; issue 11, point 8): kubectl asks the server for one dry run per object, kdrift lists
//! each kind once and compares locally. Two cases: 1,000 Deployments, and 5,000 objects of four
//! kinds (an application repository: Deployment, Service, ConfigMap and ServiceAccount per
//! application). The cluster is filled with `kubectl apply -R -f` (as a team would), then changed
//! out of band (scaled, labelled), so both tools report drift. Each tool runs five times in turn;
//! the medians and their ratio are printed.
//!
//! Run: `cargo bench --bench check_vs_kubectl` (`-- --mixed`: the 5,000 objects only; needs the
//! real kubectl at /usr/bin/kubectl).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/sim.rs"]
mod sim;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "common/manifest.rs"]
mod manifest;

const DEPLOYMENTS: usize = 1_000;
/// Applications of the mixed case: a Deployment, a Service, a ConfigMap and a ServiceAccount each.
const APPLICATIONS: usize = 1_250;
const NAMESPACES: usize = 10;
const RUNS: usize = 5;
const KUBECTL: &str = "/usr/bin/kubectl";

fn namespaces_file(dir: &Path, prefix: &str) {
    let namespaces: String = (0..NAMESPACES)
        .map(|n| format!("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {prefix}-{n}\n"))
        .collect();
    std::fs::write(dir.join("namespaces.yaml"), namespaces).unwrap();
}

/// 1,000 Deployments, one file each.
fn write_deployments(dir: &Path) {
    namespaces_file(dir, "team");
    for i in 0..DEPLOYMENTS {
        let (name, ns) = (format!("app-{i:04}"), format!("team-{}", i % NAMESPACES));
        let folder = dir.join(&ns);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join(format!("{name}.yaml")),
            manifest::deployment_yaml(&name, &ns, 2, "1.4.2"),
        )
        .unwrap();
    }
}

/// 5,000 objects of four kinds: per application a file with its Deployment, Service, ConfigMap
/// and ServiceAccount, as application repositories are laid out.
fn write_mixed(dir: &Path) {
    namespaces_file(dir, "shop");
    for i in 0..APPLICATIONS {
        let (name, ns) = (format!("svc-{i:04}"), format!("shop-{}", i % NAMESPACES));
        let folder = dir.join(&ns);
        std::fs::create_dir_all(&folder).unwrap();
        let text = [
            manifest::deployment_yaml(&name, &ns, 2, "1.4.2"),
            manifest::service_yaml(&name, &ns),
            manifest::configmap_yaml(&name, &ns, "false"),
            manifest::serviceaccount_yaml(&name, &ns),
        ]
        .join("---\n");
        std::fs::write(folder.join(format!("{name}.yaml")), text).unwrap();
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

/// Fills the cluster from `manifests` with `kubectl apply -R -f`, changes it with `drift` (kubectl
/// arguments), then times both tools on it, interleaved; prints the medians and their ratio.
fn compare(title: &str, manifests: &Path, drift: &[&[&str]], env: &[(&str, &Path)]) {
    let m = manifests.to_str().unwrap();
    println!("-- check_vs_kubectl: {title}");
    let (_, applied, _) = timed(KUBECTL, &["apply", "-R", "-f", m], env);
    println!("   kubectl apply -R -f: {:.2} s", applied.as_secs_f64());
    for args in drift {
        timed(KUBECTL, args, env);
    }
    let kdrift = env!("CARGO_BIN_EXE_kdrift");
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let mut codes = (None, None);
    let mut summary = String::new();
    for _ in 0..RUNS {
        let (code, took, last) = timed(kdrift, &["check", "-A", "--manifests", m], env);
        codes.0 = code;
        summary = last;
        ours.push(took);
        let (code, took, _) = timed(KUBECTL, &["diff", "-R", "-f", m], env);
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
}

fn main() {
    if !Path::new(KUBECTL).exists() {
        println!("check_vs_kubectl: {KUBECTL} not found (Debian: kubernetes-client); skipped");
        return;
    }
    let mixed_only = std::env::args().any(|a| a == "--mixed");
    let cluster = sim::InProcess::start();
    let dir = &cluster.dir;
    let env = cluster.env();
    if !mixed_only {
        let deployments = dir.path().join("deployments");
        std::fs::create_dir_all(&deployments).unwrap();
        write_deployments(&deployments);
        compare(
            &format!(
                "{DEPLOYMENTS} Deployments in {NAMESPACES} namespaces, one file each; the 100 of team-0 scaled"
            ),
            &deployments,
            &[&[
                "scale",
                "deployment",
                "--all",
                "-n",
                "team-0",
                "--replicas=3",
            ]],
            &env,
        );
    }
    let mixed = dir.path().join("mixed");
    std::fs::create_dir_all(&mixed).unwrap();
    write_mixed(&mixed);
    compare(
        &format!(
            "{} objects ({APPLICATIONS} each of Deployment, Service, ConfigMap, ServiceAccount) in {NAMESPACES} namespaces, one file per application; shop-0's Deployments scaled, shop-1's ConfigMaps labelled",
            4 * APPLICATIONS
        ),
        &mixed,
        &[
            &[
                "scale",
                "deployment",
                "--all",
                "-n",
                "shop-0",
                "--replicas=3",
            ],
            &["label", "configmap", "--all", "-n", "shop-1", "hotfix=1"],
        ],
        &env,
    );
    cluster.shutdown();
}
