//! Several kubeconfig contexts at once: `kdrift check --context a --context b` (one section per
//! context, checked concurrently, exit the worst, JSON keyed by context), and the demo fleet
//! `kdrift demo --serve --clusters 3` it is tried on.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::demo_helm;
use crate::headless_util;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::Cluster;
use headless_util::{Repo, Run, assert_valid_report, drifted_fields, kdrift_at, kdrift_env};
use serde_json::Value;

/// A kubeconfig of `contexts` (name, server URL), each with its own cluster and user.
fn kubeconfig(dir: &Path, contexts: &[(&str, String)]) -> PathBuf {
    let mut text = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, url) in contexts {
        text.push_str(&format!("- name: {name}\n  cluster:\n    server: {url}\n"));
    }
    text.push_str("contexts:\n");
    for (name, _) in contexts {
        text.push_str(&format!(
            "- name: {name}\n  context:\n    cluster: {name}\n    user: u\n"
        ));
    }
    text.push_str(&format!(
        "current-context: {}\nusers:\n- name: u\n  user: {{}}\n",
        contexts[0].0
    ));
    let path = dir.join("fleet-kubeconfig");
    std::fs::write(&path, text).unwrap();
    path
}

/// The section of `context` in a fleet report, its report checked against the schema.
fn section<'r>(fleet: &'r Value, context: &str) -> &'r Value {
    let section = &fleet["contexts"][context];
    assert!(section.is_object(), "no section {context}: {fleet:#}");
    assert_valid_report(&section["report"]);
    section
}

#[test]
fn check_over_several_contexts_reports_each_and_a_stalled_cluster_costs_only_its_own_time() {
    let a = Cluster::start();
    let b = Cluster::start();
    let repo = Repo::demo();
    // a: an out-of-band scale. b: the shop namespace is forbidden.
    a.ok(&["scale", "deployment/frontend", "-n", "shop", "--replicas=5"]);
    b.server.faults().forbid_namespace("shop");
    // Two API servers that accept connections and never answer: each costs the 5 s
    // reachability timeout. Checked one after the other, they would cost 10 s.
    let hole1 = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hole2 = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = |l: &std::net::TcpListener| format!("http://{}", l.local_addr().unwrap());
    let home = tempfile::tempdir().unwrap();
    let config = kubeconfig(
        home.path(),
        &[
            ("a", a.server.url()),
            ("b", b.server.url()),
            ("hole1", url(&hole1)),
            ("hole2", url(&hole2)),
        ],
    );
    let args = [
        "check",
        "-A",
        "--context",
        "a",
        "--context",
        "b",
        "--context",
        "hole1",
        "--context",
        "hole2",
        "-o",
        "json",
    ];
    let started = Instant::now();
    let run = kdrift_at(&config, home.path(), repo.root(), &args);
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(9),
        "the two silent servers were waited for one after the other ({took:?}): {run:?}"
    );
    assert_eq!(run.code, 2, "the worst of the contexts: {run:?}");
    let fleet: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(fleet["exit_code"], 2);
    let order: Vec<&String> = fleet["contexts"].as_object().unwrap().keys().collect();
    assert_eq!(order, ["a", "b", "hole1", "hole2"], "in the order asked");

    let sa = section(&fleet, "a");
    assert_eq!(sa["exit_code"], 1, "{sa:#}");
    assert_eq!(sa["cluster"], format!("{}/", a.server.url()));
    assert!(
        sa["source"]
            .as_str()
            .unwrap()
            .ends_with(": the whole checkout (.kdrift.yaml names nothing for this context)"),
        "{sa:#}"
    );
    let fields = drifted_fields(&sa["report"]);
    assert!(
        fields
            .iter()
            .any(|f| f[0] == "deployment/shop/frontend" && f[2] == "spec.replicas"),
        "{fields:?}"
    );

    let sb = section(&fleet, "b");
    assert_eq!(sb["exit_code"], 2, "{sb:#}");
    let errors = sb["report"]["errors"].to_string();
    assert!(errors.contains("forbidden"), "{errors}");
    assert!(drifted_fields(&sb["report"]).is_empty(), "b has no drift");

    for hole in ["hole1", "hole2"] {
        let s = section(&fleet, hole);
        assert_eq!(s["exit_code"], 2);
        assert_eq!(s["cluster"], Value::Null);
        let errors = s["report"]["errors"].to_string();
        assert!(errors.contains("did not answer within 5s"), "{errors}");
    }
    assert!(run.stderr.contains("kdrift: [hole1] API server"), "{run:?}");

    // The text report: a heading per context, then one line for the fleet.
    let args: Vec<&str> = ["check", "-A", "--context", "a", "--context", "b"].to_vec();
    let text = kdrift_at(&config, home.path(), repo.root(), &args);
    assert_eq!(text.code, 2, "{text:?}");
    assert!(
        text.stdout.starts_with(&format!(
            "== context a ({}/)\n   manifests: ",
            a.server.url()
        )),
        "{text:?}"
    );
    assert!(
        text.stdout
            .contains(&format!("\n== context b ({}/)\n", b.server.url())),
        "{text:?}"
    );
    assert!(
        text.stdout.ends_with("2 contexts: a drift, b error\n"),
        "{text:?}"
    );
    drop((hole1, hole2));
}

#[test]
fn the_commands_on_one_object_refuse_several_contexts() {
    let home = tempfile::tempdir().unwrap();
    for args in [
        &["diff", "deploy/web", "--context", "a", "--context", "b"][..],
        &["accept", "deploy/web", "--context", "a", "--context", "b"],
        &["revert", "deploy/web", "--all-contexts"],
        &["logs", "deploy/web", "--context", "a", "--context", "b"],
        &["demo", "--context", "a", "--context", "b"],
    ] {
        let run = kdrift_at(Path::new("/nonexistent"), home.path(), home.path(), args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(
            run.stderr.contains("acts on one context"),
            "{args:?}: {run:?}"
        );
        assert!(run.stdout.is_empty(), "{run:?}");
    }
    let run = kdrift_at(
        Path::new("/nonexistent"),
        home.path(),
        home.path(),
        &["check", "--all-contexts", "--context", "a"],
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("cannot be used with"), "{run:?}");

    // --all-contexts of a kubeconfig without contexts: said, exit 2, the JSON shape kept.
    let empty = home.path().join("empty-kubeconfig");
    std::fs::write(
        &empty,
        "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n",
    )
    .unwrap();
    let run = kdrift_at(
        &empty,
        home.path(),
        home.path(),
        &["check", "--all-contexts", "-o", "json"],
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("has no contexts: --all-contexts has nothing to check"),
        "{run:?}"
    );
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_valid_report(&report);
}

/// `kdrift demo --serve --clusters N` in a child process: killed when dropped.
pub struct Fleet {
    child: Child,
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
    pub workdir: PathBuf,
}

impl Fleet {
    pub fn start(clusters: u8, scenario: &str) -> Fleet {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        let workdir = dir.path().join("repo");
        let mut child = Command::new(env!("CARGO_BIN_EXE_kdrift"))
            .args(["demo", "--serve", "--clusters", &clusters.to_string()])
            .args(["--scenario", scenario])
            .arg("--kubeconfig-out")
            .arg(&kubeconfig)
            .arg("--workdir")
            .arg(&workdir)
            .env("HOME", dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("KDRIFT_LOG", "off")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        // Read on a thread to the end: the lines after the kubeconfig's are still printed, and
        // a closed pipe would end the demo.
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        loop {
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok(line) if line.starts_with("export KUBECONFIG=") => break,
                Ok(_) => {}
                Err(e) => panic!("the fleet did not start: {e}"),
            }
        }
        Fleet {
            child,
            dir,
            kubeconfig,
            workdir,
        }
    }

    /// `kdrift ARGS` in the fleet's repository, whose demo chart is rendered with the test
    /// run's helm when it has one (see `demo_helm`).
    pub fn kdrift(&self, args: &[&str]) -> Run {
        let helm = demo_helm::kdrift_helm();
        kdrift_env(
            self.dir.path(),
            &self.workdir,
            args,
            &[("KUBECONFIG", &self.kubeconfig), ("KDRIFT_HELM", &helm)],
        )
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_demo_fleet_serves_three_clusters_from_one_repository_and_the_incident_drifts_prod_eu_only() {
    let fleet = Fleet::start(3, "incident");
    let config = std::fs::read_to_string(&fleet.kubeconfig).unwrap();
    for name in ["staging", "prod-eu", "prod-us"] {
        assert!(
            config.contains(&format!("- name: {name}\n  context:")),
            "{config}"
        );
    }
    // The incident's first step (the checkout image) comes 5 s in, on prod-eu.
    let deadline = Instant::now() + Duration::from_secs(60);
    let fleet_report = loop {
        let run = fleet.kdrift(&["check", "-A", "--all-contexts", "-o", "json"]);
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        let eu = &report["contexts"]["prod-eu"];
        if eu["report"]["summary"]["drifted"].as_u64() > Some(0) {
            assert_eq!(eu["exit_code"], demo_helm::expected(1), "{run:?}");
            assert_eq!(run.code, demo_helm::expected(1), "{run:?}");
            break report;
        }
        assert!(Instant::now() < deadline, "prod-eu never drifted: {run:?}");
        std::thread::sleep(Duration::from_millis(500));
    };
    for name in ["staging", "prod-us"] {
        let s = section(&fleet_report, name);
        assert_eq!(
            s["exit_code"],
            demo_helm::expected(0),
            "{name} plays no incident: {s:#}"
        );
    }
    let eu = section(&fleet_report, "prod-eu");
    let fields = drifted_fields(&eu["report"]);
    assert!(
        fields.iter().any(|f| f[0] == "deployment/shop/checkout"),
        "{fields:?}"
    );
    // Each context reads its own folder and the shared ones, never another cluster's.
    for name in ["staging", "prod-eu", "prod-us"] {
        let s = section(&fleet_report, name);
        let source = s["source"].as_str().unwrap();
        assert!(
            source.contains(&format!(
                "clusters/{name} and the shared folders (from .kdrift.yaml contexts.{name})"
            )),
            "{source}"
        );
        let gateway = s["report"]["objects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["key"] == "deployment/payments/gateway")
            .unwrap_or_else(|| panic!("{name} has no gateway: {s:#}"));
        // prod-eu's is scaled by hand 8 s in, which this check may already see.
        if name != "prod-eu" {
            assert_eq!(gateway["status"], "in-sync", "{gateway:#}");
        }
        assert!(
            gateway["file"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/clusters/{name}/gateway.yaml")),
            "{gateway:#}"
        );
    }

    // compare: the checkout's image differs on prod-eu alone, and git agrees with the others.
    let run = fleet.kdrift(&[
        "compare",
        "deploy/checkout",
        "-n",
        "shop",
        "--all-contexts",
        "-o",
        "json",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    let compared: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(compared["object"], "deployment/shop/checkout");
    let fields = compared["fields"].as_array().unwrap();
    let image = fields
        .iter()
        .find(|f| f["path"] == "spec.template.spec.containers[name=checkout].image")
        .unwrap_or_else(|| panic!("{compared:#}"));
    assert_eq!(
        image["values"]["prod-eu"]["value"],
        "registry.example/shop/checkout:3.2.0-crash"
    );
    assert_eq!(image["values"]["prod-eu"]["manager"], "kubectl-set");
    assert_eq!(image["values"]["prod-eu"]["git"], "drifted");
    assert_eq!(
        image["values"]["prod-us"]["value"],
        "registry.example/shop/checkout:3.1.0"
    );
    assert_eq!(image["values"]["prod-us"]["git"], "in sync");
    assert_eq!(
        image["git_agrees_with"],
        serde_json::json!(["staging", "prod-us"])
    );

    // Each cluster's own gateway: replicas and region differ, each as its own manifest says.
    let run = fleet.kdrift(&[
        "compare",
        "deploy/gateway",
        "-n",
        "payments",
        "--context",
        "staging",
        "--context",
        "prod-us",
        "-o",
        "json",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    let compared: Value = serde_json::from_str(&run.stdout).unwrap();
    let paths: Vec<&str> = compared["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "spec.replicas",
            "spec.template.spec.containers[name=gateway].env[name=REGION].value"
        ]
    );
    assert_eq!(compared["fields"][0]["values"]["staging"]["value"], 1);
    assert_eq!(compared["fields"][0]["values"]["prod-us"]["value"], 3);
    assert!(
        compared["contexts"]["prod-us"]["manifest"]["file"]
            .as_str()
            .unwrap()
            .ends_with("clusters/prod-us/gateway.yaml")
    );

    // Two clusters the incident leaves alone: the same, exit 0, in text too.
    let run = fleet.kdrift(&[
        "compare",
        "deploy/checkout",
        "-n",
        "shop",
        "--context",
        "staging",
        "--context",
        "prod-us",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .ends_with("deployment/shop/checkout: the same in every cluster that has it\n"),
        "{run:?}"
    );

    // One context is not a comparison; an object no cluster has is an error.
    let run = fleet.kdrift(&[
        "compare",
        "deploy/checkout",
        "-n",
        "shop",
        "--context",
        "prod-eu",
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("compare needs two contexts or more"),
        "{run:?}"
    );
    let run = fleet.kdrift(&["compare", "deploy/nope", "-n", "shop", "--all-contexts"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stdout
            .ends_with("deployment/shop/nope is in none of these clusters\n"),
        "{run:?}"
    );

    // The fleet's own step: prod-eu's gateway scaled by hand. Its accept goes into prod-eu's
    // folder and nowhere else.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let run = fleet.kdrift(&[
            "diff",
            "deploy/gateway",
            "-n",
            "payments",
            "--context",
            "prod-eu",
        ]);
        if run.code == 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "prod-eu's gateway never drifted: {run:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let before = headless_util::git_in(&fleet.workdir, &["rev-parse", "HEAD"]);
    let run = fleet.kdrift(&[
        "accept",
        "deploy/gateway",
        "-n",
        "payments",
        "--context",
        "prod-eu",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let changed = headless_util::git_in(
        &fleet.workdir,
        &["diff", "--name-only", before.trim(), "HEAD"],
    );
    assert_eq!(changed, "clusters/prod-eu/gateway.yaml\n");
    let text =
        std::fs::read_to_string(fleet.workdir.join("clusters/prod-eu/gateway.yaml")).unwrap();
    assert!(text.contains("  replicas: 5\n"), "{text}");
    let run = fleet.kdrift(&["check", "-n", "payments", "--all-contexts"]);
    assert_eq!(run.code, 0, "{run:?}");
}

/// Argo CD on one cluster (a hub) deploying to another: the hub's Application whose
/// `destination.server` is the other context's API server says which folder describes that
/// cluster, and in which namespace (its manifests name none) — in `check` over both contexts,
/// as Argo CD applies it there. The hub's own section reads that folder as a plain one.
#[test]
fn a_hubs_application_for_another_context_maps_that_contexts_folder() {
    let repo = Repo::demo();
    repo.git(&[
        "remote",
        "add",
        "origin",
        kdrift::sim::scenario::DEMO_REPO_URL,
    ]);
    for entry in std::fs::read_dir(repo.path("payments")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("  namespace: payments\n", "")).unwrap();
    }
    let hub = Cluster::start_gitops(repo.root(), Duration::from_secs(600));
    let spoke = Cluster::start();
    // The spoke runs no Argo CD of its own. Its ledger was synced by the hub's (its tracking
    // id), then scaled out of band.
    spoke.ok(&["delete", "application", "shop", "-n", "argocd"]);
    spoke.ok(&[
        "annotate",
        "deploy/ledger",
        "-n",
        "payments",
        "argocd.argoproj.io/tracking-id=payments-eu:apps/Deployment:payments/ledger",
    ]);
    spoke.ok(&["scale", "deploy/ledger", "-n", "payments", "--replicas=7"]);
    hub.apply(
        "argocd",
        &format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: payments-eu\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: {}\n    path: payments\n  destination:\n    server: {}\n    namespace: payments\n  syncPolicy:\n    automated:\n      selfHeal: true\n",
            kdrift::sim::scenario::DEMO_REPO_URL,
            spoke.server.url()
        ),
    );
    let home = tempfile::tempdir().unwrap();
    let config = kubeconfig(
        home.path(),
        &[("hub", hub.server.url()), ("spoke", spoke.server.url())],
    );
    let args = [
        "check",
        "-A",
        "--context",
        "hub",
        "--context",
        "spoke",
        "-o",
        "json",
    ];
    let run = kdrift_at(&config, home.path(), repo.root(), &args);
    let fleet: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    let status = |section: &Value, key: &str| {
        section["report"]["objects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["key"] == key)
            .map(|o| o["status"].as_str().unwrap().to_owned())
    };
    let spoke_section = section(&fleet, "spoke");
    assert_eq!(
        status(spoke_section, "deployment/payments/ledger").as_deref(),
        Some("drifted"),
        "{spoke_section:#}\n{}",
        run.stderr
    );
    assert_eq!(
        status(spoke_section, "deployment/payments/payments-api").as_deref(),
        Some("in-sync"),
    );
    // Who will undo it: the hub's Application, read there.
    let ledger = spoke_section["report"]["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["key"] == "deployment/payments/ledger")
        .unwrap();
    let reconciler = &ledger["reconciler"];
    assert_eq!(reconciler["name"], "payments-eu", "{ledger:#}");
    assert_eq!(reconciler["namespace"], "argocd");
    assert_eq!(reconciler["selfHeal"], true, "{ledger:#}");
    assert_eq!(status(spoke_section, "deployment/default/ledger"), None);
    let source = spoke_section["source"].as_str().unwrap();
    assert!(
        source.contains("argocd/payments-eu (context hub) → payments"),
        "{source}"
    );
    let notes = spoke_section["report"]["notes"].to_string();
    assert!(
        notes.contains(
            "manifests from Argo CD apps: argocd/payments-eu (context hub) → payments (directory)"
        ),
        "{notes}"
    );
    // On the hub, Argo CD deploys payments/ nowhere: a plain folder, in `default`.
    let hub_section = section(&fleet, "hub");
    assert_eq!(
        status(hub_section, "deployment/default/ledger").as_deref(),
        Some("missing"),
        "{hub_section:#}"
    );
    assert!(
        !hub_section["source"]
            .as_str()
            .unwrap()
            .contains("payments-eu"),
        "{hub_section:#}"
    );
    // The demo's Argo CD left the other cluster's Application alone.
    assert!(
        hub.get_json("application/payments-eu", "argocd")["status"]["sync"].is_null(),
        "{}",
        hub.get_json("application/payments-eu", "argocd")
    );
}
