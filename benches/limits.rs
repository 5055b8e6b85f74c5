//! Resource limits (issue 15, item 5): time and memory of kdrift on inputs at the edge of what
//! it should take. Each case runs in a child process of its own (so its peak resident memory is
//! its alone), three times; this process writes the inputs, serves the demo cluster (no
//! controllers: the figures are kdrift's) and prints the medians.
//!
//! - `files`: a manifests folder of 20,000 files: load; one file changed; every file changed (a
//!   branch switch) re-read and applied.
//! - `many-docs`, `one-doc`, `list`: one 9 MB manifest file of ~17,500 Deployment documents, of
//!   one ConfigMap with a 9 MB value, of a `kind: List` of ~16,000 items; and an 11 MB file, refused.
//! - `namespaces`: 5,000 namespaces, a Deployment in each: the live view's first and last row,
//!   resident memory, `:ns` until the picker lists them all, and the picker's frame.
//! - `event`: a 3 MB watch event (a 3 MB annotation, then a 3 MB env list) on a Deployment with a
//!   manifest: decode, event → frame, memory held after it.
//! - `containers`: a Deployment of 500 containers, one drifted: its row, detail view, drift and
//!   diff view (200×50), accept of a field of container 499.
//!
//! Run: `cargo bench --bench limits` (`-- CASE…` for some cases, `-- --once` for one run each).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/manifest.rs"]
mod manifest;
#[path = "common/measure.rs"]
mod measure;
#[path = "common/session.rs"]
mod session;

#[path = "limits/cases.rs"]
mod cases;
#[path = "limits/inputs.rs"]
mod inputs;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use kdrift::sim::SimServer;

const CASES: [&str; 7] = [
    "files",
    "many-docs",
    "one-doc",
    "list",
    "namespaces",
    "event",
    "containers",
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, case, dir] = args.as_slice()
        && flag == "--case"
    {
        kdrift::runtime::tune_allocator();
        cases::run(case, Path::new(dir));
        return;
    }
    let runs = if args.iter().any(|a| a == "--once") {
        1
    } else {
        3
    };
    let chosen: Vec<&str> = CASES
        .into_iter()
        .filter(|c| {
            let named: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
            named.is_empty() || named.iter().any(|a| a.as_str() == *c)
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let store = kdrift::sim::store::Store::new();
    inputs::seed(&store);
    let server = rt
        .block_on(SimServer::serve_store(store.clone(), 0))
        .unwrap();
    std::fs::write(
        dir.path().join("kubeconfig"),
        session::kubeconfig_for(&server.url()),
    )
    .unwrap();
    for case in &chosen {
        inputs::write(case, dir.path());
    }
    println!("-- limits: {runs} run(s) of each case, medians (min–max)");
    for case in chosen {
        // Labels in the order the case prints them; values of every run, and the unit.
        let mut order: Vec<String> = Vec::new();
        let mut figures: HashMap<String, (Vec<f64>, String)> = HashMap::new();
        for run in 0..runs {
            let mut child = Command::new(std::env::current_exe().unwrap())
                .args(["--case", case, dir.path().to_str().unwrap()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut to_child = child.stdin.take().unwrap();
            let lines = BufReader::new(child.stdout.take().unwrap()).lines();
            for line in lines.map_while(Result::ok) {
                let parts: Vec<&str> = line.split('\t').collect();
                match parts.as_slice() {
                    ["FIG", label, value, unit] => {
                        if !figures.contains_key(*label) {
                            order.push((*label).to_owned());
                        }
                        let entry = figures
                            .entry((*label).to_owned())
                            .or_insert_with(|| (Vec::new(), (*unit).to_owned()));
                        entry.0.push(value.parse().unwrap());
                    }
                    ["ASK", what] => {
                        let at = inputs::big_event(&store, what, dir.path());
                        writeln!(to_child, "{at}").unwrap();
                        to_child.flush().unwrap();
                    }
                    _ if run == 0 => println!("   {line}"),
                    _ => {}
                }
            }
            assert!(child.wait().unwrap().success(), "case {case} failed");
        }
        println!("{case}:");
        for label in order {
            let (mut values, unit) = figures.remove(&label).unwrap();
            values.sort_by(f64::total_cmp);
            let median = values[values.len() / 2];
            let range = if values.len() > 1 {
                format!(
                    "  ({}–{})",
                    short(values[0]),
                    short(values[values.len() - 1])
                )
            } else {
                String::new()
            };
            println!("   {label:<58} {:>10} {unit}{range}", short(median));
        }
    }
    rt.block_on(server.shutdown());
}

/// Four significant figures at most, as docs/limits.md quotes them.
fn short(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else if value >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}
