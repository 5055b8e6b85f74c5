//! The live view over several contexts (`FleetSession::drive` on a TestBackend) against the demo
//! fleet served in-process (staging, prod-eu, prod-us: one kubeconfig, one manifests repository
//! with a folder per cluster): one table with a CONTEXT column, each context compared with its
//! own folder, an accept on a prod-eu row writing prod-eu's file only, `:ctx -NAME`, `+NAME` and
//! `NAME`, and a context that cannot be reached or whose watches stall delaying no other's rows.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_screen;

use std::path::PathBuf;

use crossterm::event::KeyCode;
use k8s_openapi::api::apps::v1::Deployment;
use kdrift::cli::CommonArgs;
use kdrift::cluster::client::{ConnectionSettings, connect};
use kdrift::sim::server::SimServer;
use kube::api::{Patch, PatchParams};
use live_screen::{key, keys, row_words, run_fleet, wait_for};

struct Fleet {
    servers: Vec<(String, SimServer)>,
    _dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    workdir: PathBuf,
    common: CommonArgs,
}

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The demo fleet of `demo --clusters 3` (no scenario), and the flags of a live view on all its
/// contexts and namespaces; `extra` contexts (name, URL) join the kubeconfig.
async fn fleet(extra: &[(&str, String)]) -> Fleet {
    let names = kdrift::sim::scenario::fleet::cluster_names(3);
    let dir = tempfile::tempdir().unwrap();
    let files = kdrift::sim::scenario::fleet::fleet_manifests(&names);
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let workdir =
        kdrift::runtime::demo::prepare_workdir(Some(&dir.path().join("manifests")), &files)
            .unwrap();
    let path = workdir.path.clone();
    git(&path, &["config", "user.name", "On Call"]);
    git(&path, &["config", "user.email", "oncall@example.com"]);
    git(&path, &["config", "commit.gpgsign", "false"]);
    let servers =
        kdrift::runtime::demo::start_fleet(&names, kdrift::sim::server::Scenario::None, &path)
            .await
            .unwrap();
    let mut urls: Vec<(String, String)> = servers
        .iter()
        .map(|(name, server)| (name.clone(), server.url()))
        .collect();
    urls.extend(extra.iter().map(|(n, u)| (n.to_string(), u.clone())));
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        kdrift::runtime::demo::fleet_kubeconfig(&urls, "prod-eu"),
    )
    .unwrap();
    let common = CommonArgs {
        kubeconfig: Some(kubeconfig.clone()),
        all_namespaces: true,
        manifests: Some(path.clone()),
        manifests_is_checkout: true,
        ..CommonArgs::default()
    };
    // The workdir's TempDir guard lives in `dir`'s folder: keep both alive.
    std::mem::forget(workdir);
    Fleet {
        servers,
        _dir: dir,
        kubeconfig,
        workdir: path,
        common,
    }
}

impl Fleet {
    async fn shutdown(self) {
        for (_, server) in self.servers {
            server.shutdown().await;
        }
    }

    /// Scale `namespace/name` on the cluster of `context`, as `kubectl scale` does.
    async fn scale(&self, context: &str, namespace: &str, name: &str, replicas: u32) {
        let conn = connect(&ConnectionSettings {
            kubeconfig: Some(self.kubeconfig.clone()),
            context: Some(context.to_owned()),
            namespace: None,
            all_namespaces: true,
            http2: false,
        })
        .await
        .unwrap();
        let api: kube::Api<Deployment> = kube::Api::namespaced(conn.client, namespace);
        api.patch_scale(
            name,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"replicas": replicas}})),
        )
        .await
        .unwrap();
    }
}

/// The words of the table row of `name` in `context`: CONTEXT, NAMESPACE, NAME, DESIRED… (the
/// KIND column left out).
fn row_of(screen: &str, context: &str, name: &str) -> Option<Vec<String>> {
    screen.lines().find_map(|line| {
        let mut words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == '│')
            .filter(|w| !w.is_empty())
            .collect();
        if matches!(words.get(2), Some(&("deploy" | "sts" | "ds"))) {
            words.remove(2);
        }
        (words.first() == Some(&context) && words.get(2) == Some(&name))
            .then(|| words.iter().map(|w| w.to_string()).collect())
    })
}

/// The DRIFT cell of a row (its last words: `in sync`, `1 field`).
fn drift_of(screen: &str, context: &str, name: &str) -> Option<String> {
    let words = row_of(screen, context, name)?;
    let n = words.len();
    Some(words[n.saturating_sub(2)..].join(" "))
}

fn contexts() -> Vec<String> {
    kdrift::sim::scenario::fleet::cluster_names(3)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_clusters_in_one_table_drift_on_prod_eu_only_and_its_accept_writes_its_folder() {
    let f = fleet(&[]).await;
    let fr = &f;
    let script = move |tx, text| async move {
        // The three gateways (in the order the contexts were given: the same place, then the
        // context); the second is prod-eu's.
        keys(&tx, "/payments/gateway\n");
        wait_for(&text, "every context's gateway, in sync", |s| {
            s.contains("CONTEXT")
                && contexts()
                    .iter()
                    .all(|c| drift_of(s, c, "gateway").as_deref() == Some("in sync"))
        })
        .await;
        // A context's rows can be in sync a moment before its last watcher has listed (its
        // state still `syncing`): wait for the states too.
        wait_for(&text, "every context connected", |s| {
            contexts()
                .iter()
                .all(|c| s.contains(&format!(" {c} connected")))
        })
        .await;
        {
            let s = text.lock().unwrap().clone();
            assert!(s.contains("workloads(all)[3/51] contexts[3]"), "{s}");
            // Each context's own folder: the gateway's replicas differ by cluster.
            let desired = |c: &str| row_of(&s, c, "gateway").unwrap()[3].clone();
            assert_eq!(
                (desired("staging"), desired("prod-eu"), desired("prod-us")),
                ("1".into(), "3".into(), "3".into()),
                "{s}"
            );
        }

        fr.scale("prod-eu", "payments", "gateway", 5).await;
        wait_for(&text, "prod-eu's gateway drifted, the others not", |s| {
            drift_of(s, "prod-eu", "gateway").as_deref() == Some("1 field")
                && drift_of(s, "staging", "gateway").as_deref() == Some("in sync")
                && drift_of(s, "prod-us", "gateway").as_deref() == Some("in sync")
        })
        .await;

        assert!(
            text.lock().unwrap().contains(" drifted 1 "),
            "the status bar counts prod-eu's"
        );
        // `c` compares the row's object across the three clusters, as `kdrift compare` does:
        // the replicas differ (prod-eu's drifted, git agreeing with the others) and so does
        // each cluster's own REGION (each as its folder says).
        keys(&tx, "c");
        wait_for(&text, "the gateway compared", |s| {
            s.contains("compare deployment/payments/gateway · 3 contexts · 2 fields differ")
        })
        .await;
        {
            let s = text.lock().unwrap().clone();
            let line = |start: &str| {
                s.lines()
                    .map(|l| l.trim_matches(|c: char| c == '│' || c.is_whitespace()))
                    .skip_while(|l| *l != "spec.replicas")
                    .find(|l| l.starts_with(start))
                    .unwrap_or_else(|| panic!("no line {start:?} under spec.replicas:\n{s}"))
                    .to_owned()
            };
            assert!(line("staging").starts_with("staging  1 "), "{s}");
            assert!(line("prod-eu").starts_with("prod-eu  5 "), "{s}");
            assert!(line("prod-eu").ends_with("git: drifted"), "{s}");
            assert!(line("prod-us").ends_with("git: in sync"), "{s}");
            assert_eq!(
                line("git agrees"),
                "git agrees with staging, prod-us",
                "{s}"
            );
            assert!(
                s.contains("spec.template.spec.containers[name=gateway].env[name=REGION].value"),
                "{s}"
            );
            assert!(s.contains("<ctrl-r> read again"), "{s}");
        }
        key(&tx, KeyCode::Esc);
        wait_for(&text, "back on the table from compare", |s| {
            drift_of(s, "prod-eu", "gateway").as_deref() == Some("1 field")
                && s.contains("<c> compare")
        })
        .await;
        // `:drift` lists the drift of every context, each row naming its context.
        keys(&tx, ":drift\n");
        let listed = |s: &str, context: &str| {
            s.lines().any(|l| {
                let w = row_words(l);
                w.first() == Some(&context) && w.contains(&"gateway") && w.contains(&"field")
            })
        };
        wait_for(&text, "prod-eu's gateway in the fleet's :drift", |s| {
            s.contains("drift(all contexts)[1]") && s.contains("CONTEXT") && listed(s, "prod-eu")
        })
        .await;
        keys(&tx, "a");
        wait_for(&text, "prod-eu's accept view", |s| {
            s.contains("accept deployment payments/gateway")
                && s.contains("[x] spec.replicas")
                && s.contains("3 → 5")
                && s.contains("clusters/prod-eu/gateway.yaml")
        })
        .await;
        assert!(
            !text.lock().unwrap().contains("this file also describes"),
            "prod-eu's own file describes no other cluster's gateway"
        );
        key(&tx, KeyCode::Enter);
        wait_for(&text, "the commit", |s| s.contains("committed ")).await;
        assert_eq!(
            git(&fr.workdir, &["show", "--name-only", "--format=", "HEAD"]),
            "clusters/prod-eu/gateway.yaml\n",
            "prod-eu's file alone"
        );
        wait_for(&text, "back on the fleet's :drift, now empty", |s| {
            s.contains("drift(all contexts)[0]")
        })
        .await;
        key(&tx, KeyCode::Esc);
        wait_for(&text, "back on the table, prod-eu's gateway in sync", |s| {
            drift_of(s, "prod-eu", "gateway").as_deref() == Some("in sync")
        })
        .await;

        // `:ctx -NAME` stops watching one, `+NAME` adds it again, `NAME` watches it alone.
        keys(&tx, ":ctx -prod-us\n");
        wait_for(&text, "prod-us gone", |s| {
            row_of(s, "prod-eu", "gateway").is_some()
                && row_of(s, "prod-us", "gateway").is_none()
                && !s.contains(" prod-us ")
        })
        .await;
        keys(&tx, ":ctx +prod-us\n");
        wait_for(&text, "prod-us back", |s| {
            row_of(s, "prod-us", "gateway").is_some() && s.contains(" prod-us connected")
        })
        .await;
        keys(&tx, ":ctx staging\n");
        // As a view of one context always looks: its own status bar.
        wait_for(&text, "staging alone, without a CONTEXT column", |s| {
            !s.contains("CONTEXT")
                && s.contains(" ctx  staging  ns ")
                && s.contains(" watch  connected ")
                && !s.contains("prod-eu")
                && s.lines().any(|l| row_words(l).get(1) == Some(&"gateway"))
                && s.contains("workloads(all)[1/17]")
        })
        .await;
        keys(&tx, "q");
    };
    run_fleet(&f.common, &contexts(), 160, 40, script).await;
    f.shutdown().await;
}

/// An accept whose file the other clusters read too (the repository's shared `shop/` folder)
/// says that their desired state changes with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accept_into_a_file_other_clusters_read_says_so() {
    let f = fleet(&[]).await;
    let fr = &f;
    let script = move |tx, text| async move {
        keys(&tx, "/shop/checkout\n");
        wait_for(&text, "every context's checkout", |s| {
            contexts()
                .iter()
                .all(|c| drift_of(s, c, "checkout").as_deref() == Some("in sync"))
        })
        .await;
        fr.scale("prod-eu", "shop", "checkout", 7).await;
        wait_for(&text, "prod-eu's checkout drifted", |s| {
            drift_of(s, "prod-eu", "checkout").as_deref() == Some("1 field")
        })
        .await;
        // From `:drift`, whose one row is prod-eu's checkout.
        keys(&tx, ":drift\n");
        wait_for(&text, "prod-eu's checkout in :drift", |s| {
            s.contains("drift(all contexts)[1]")
        })
        .await;
        keys(&tx, "a");
        wait_for(
            &text,
            "the accept view, saying who else reads the file",
            |s| {
                s.contains("accept deployment shop/checkout")
                    && s.contains("3 → 7")
                    && s.contains(
                        "this file also describes deployment shop/checkout in staging, prod-us",
                    )
            },
        )
        .await;
        key(&tx, KeyCode::Esc);
        keys(&tx, "q");
    };
    run_fleet(&f.common, &contexts(), 180, 40, script).await;
    f.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_context_and_a_stalled_one_hold_up_no_other_rows() {
    // An API server that accepts connections and never answers.
    let hole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", hole.local_addr().unwrap());
    let f = fleet(&[("hole", url)]).await;
    let fr = &f;
    let mut watched = contexts();
    watched.push("hole".into());
    let script = move |tx, text| async move {
        keys(&tx, "/payments/gateway\n");
        wait_for(&text, "the three clusters' rows while hole connects", |s| {
            contexts().iter().all(|c| row_of(s, c, "gateway").is_some())
        })
        .await;
        // staging's watches stall (open, silent): the others' writes still show at once.
        let staging = &fr.servers[0];
        assert_eq!(staging.0, "staging");
        // A fault stalls the watches open at that moment; rows can show (from the list) a
        // moment before the watch after it is open, so the fault is raised again until one is.
        let stalled = std::time::Instant::now();
        while staging.1.faults().stalled_watches() == 0 {
            assert!(
                stalled.elapsed() < live_screen::PATIENCE,
                "no watch stalled"
            );
            staging.1.faults().stall_watches();
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        fr.scale("prod-us", "payments", "gateway", 6).await;
        wait_for(
            &text,
            "prod-us's scale while staging's watches are stalled",
            |s| row_of(s, "prod-us", "gateway").is_some_and(|w| w[3] == "6"),
        )
        .await;
        assert!(
            staging.1.faults().stalled_watches() > 0,
            "staging's watches were still stalled when prod-us's row moved"
        );
        wait_for(&text, "hole unreachable, said with its error", |s| {
            s.contains(" hole unreachable") && s.contains("hole: unreachable: ")
        })
        .await;
        keys(&tx, "q");
    };
    run_fleet(&f.common, &watched, 160, 40, script).await;
    drop(hole);
    f.shutdown().await;
}

/// A view of staging alone (one context, as `kdrift --context staging` opens), `typed` once its
/// gateway shows, then the same view until its screen satisfies `cond`.
async fn grown_from_staging(f: &Fleet, typed: &str, what: &str, cond: impl Fn(&str) -> bool) {
    let common = f.common.for_context("staging");
    // The connection's 5 s timeout can pass on a loaded machine (the whole suite at once).
    let mut tries = 0;
    let conn = loop {
        match connect(&common.connection()).await {
            Ok(conn) => break conn,
            Err(e) if tries < 3 => {
                tries += 1;
                eprintln!("connecting again after: {e}");
            }
            Err(e) => panic!("cannot connect to staging: {e}"),
        }
    };
    let script = |tx, text| async move {
        wait_for(&text, "staging's gateway", |s| s.contains("gateway")).await;
        let s = text.lock().unwrap().clone();
        assert!(
            !s.contains("CONTEXT"),
            "one context has no CONTEXT column:\n{s}"
        );
        keys(&tx, typed);
        wait_for(&text, what, cond).await;
        keys(&tx, "q");
    };
    live_screen::run_on(conn, &common, 160, 40, script).await;
}

/// `:ctx +NAME` in a view of one context: the view goes on as the first context of a fleet's
/// table (the same loop), the filter typed before kept, the other context's rows joining it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_plus_name_turns_a_one_context_view_into_a_fleet() {
    let f = fleet(&[]).await;
    grown_from_staging(
        &f,
        "/gate\n:ctx +prod-eu\n",
        "gateway in staging and prod-eu, prod-eu's rows filtered too",
        |s| {
            row_of(s, "staging", "gateway").is_some()
                && row_of(s, "prod-eu", "gateway").is_some()
                && s.contains("contexts[2]")
                && row_of(s, "prod-eu", "checkout").is_none()
                && row_of(s, "staging", "checkout").is_none()
        },
    )
    .await;
    f.shutdown().await;
}

/// `:ctx +NAME` and more keys in one burst (typed, or pasted): the keys after it are the
/// table's over both, so the filter they type is every context's, the added one's included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_typed_after_ctx_plus_name_in_the_same_burst_go_to_the_fleet() {
    let f = fleet(&[]).await;
    grown_from_staging(
        &f,
        ":ctx +prod-eu\n/gate\n",
        "the gateway of both, every other row filtered out",
        |s| {
            row_of(s, "staging", "gateway").is_some()
                && row_of(s, "prod-eu", "gateway").is_some()
                && row_of(s, "prod-eu", "checkout").is_none()
                && row_of(s, "staging", "checkout").is_none()
                && s.contains(" prod-eu connected")
        },
    )
    .await;
    f.shutdown().await;
}

/// `:ctx NAME` to a context that cannot be reached leaves the view as it was (the one context
/// it watched, its rows, no CONTEXT column) and says why, as a switch that fails always has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_name_that_cannot_connect_leaves_the_view_as_it_was() {
    // A port nothing listens on: the connection is refused at once.
    let gone = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let f = fleet(&[("gone", gone)]).await;
    grown_from_staging(
        &f,
        ":ctx gone\n",
        "staging still shown, the switch's error said",
        |s| {
            s.contains(" ctx  staging  ns ")
                && !s.contains("CONTEXT")
                && s.contains("context \"gone\": ")
                && s.lines().any(|l| row_words(l).get(1) == Some(&"gateway"))
        },
    )
    .await;
    f.shutdown().await;
}

/// A context added after `:ns` watches the namespace the view shows, not every namespace as the
/// command line (`-A`) said.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_added_after_ns_watches_the_namespace_shown() {
    let f = fleet(&[]).await;
    let watched = vec!["staging".to_owned(), "prod-eu".to_owned()];
    let script = |tx, text| async move {
        wait_for(&text, "both contexts' gateway", |s| {
            row_of(s, "staging", "gateway").is_some() && row_of(s, "prod-eu", "gateway").is_some()
        })
        .await;
        keys(&tx, ":ns payments\n");
        wait_for(&text, "payments alone", |s| {
            row_of(s, "staging", "checkout").is_none()
                && row_of(s, "staging", "gateway").is_some()
                && row_of(s, "prod-eu", "gateway").is_some()
        })
        .await;
        keys(&tx, ":ctx +prod-us\n");
        wait_for(&text, "prod-us's gateway", |s| {
            row_of(s, "prod-us", "gateway").is_some() && s.contains(" prod-us connected")
        })
        .await;
        let s = text.lock().unwrap().clone();
        assert!(row_of(&s, "prod-us", "checkout").is_none(), "{s}");
        keys(&tx, "q");
    };
    run_fleet(&f.common, &watched, 160, 40, script).await;
    f.shutdown().await;
}
