//! `kdrift logs TYPE/NAME` against the demo cluster: the newest unready pod's log of a
//! Deployment, a StatefulSet and a DaemonSet, the crashed run with `-p`, and every refusal said
//! plainly with exit 2.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::headless_util;

use std::time::Duration;

use common::{Cluster, eventually};
use headless_util::{Repo, Run, kdrift};

const PATIENCE: Duration = Duration::from_secs(60);

fn logs(c: &Cluster, repo: &Repo, args: &[&str]) -> Run {
    let mut all = vec!["logs"];
    all.extend_from_slice(args);
    kdrift(c, repo, &all)
}

#[test]
fn logs_print_the_newest_unready_pods_log_and_the_crash_with_p() {
    let c = Cluster::start();
    let repo = Repo::demo();
    let mut cart = logs(&c, &repo, &["deploy/cart", "-n", "shop"]);
    assert!(
        eventually(PATIENCE, || {
            cart = logs(&c, &repo, &["deploy/cart", "-n", "shop"]);
            cart.code == 0 && cart.stdout.contains("INFO ready to serve requests")
        }),
        "{cart:?}"
    );
    assert!(cart.stdout.starts_with("INFO starting cart"), "{cart:?}");
    assert!(cart.stderr.contains("container cart"), "{cart:?}");
    let tail = logs(&c, &repo, &["deployment/cart", "-n", "shop", "--tail", "2"]);
    assert_eq!(tail.stdout.lines().count(), 2, "{tail:?}");

    // The StatefulSet's and the DaemonSet's pods, by their matchLabels.
    for (target, ns) in [("sts/ledger-db", "payments"), ("ds/node-agent", "platform")] {
        let mut run = logs(&c, &repo, &[target, "-n", ns]);
        assert!(
            eventually(PATIENCE, || {
                run = logs(&c, &repo, &[target, "-n", ns]);
                run.code == 0 && run.stdout.contains("INFO starting")
            }),
            "{target}: {run:?}"
        );
    }

    c.ok(&[
        "set",
        "image",
        "-n",
        "shop",
        "deployment/checkout",
        "checkout=registry.example/shop/checkout:3.2.0-crash",
    ]);
    let mut crash = logs(&c, &repo, &["deploy/checkout", "-n", "shop", "-p"]);
    assert!(
        eventually(PATIENCE, || {
            crash = logs(&c, &repo, &["deploy/checkout", "-n", "shop", "-p"]);
            // Until the new pod's first crash, there is no previous log to print.
            crash.code == 0 && crash.stdout.contains("Exception")
        }),
        "{crash:?}"
    );
    assert!(crash.stderr.contains("(not ready)"), "{crash:?}");
    assert!(
        crash
            .stdout
            .contains("Exception in thread \"main\" java.lang.NullPointerException"),
        "{crash:?}"
    );
}

#[test]
fn each_refusal_is_said_plainly_with_exit_2() {
    let c = Cluster::start();
    let repo = Repo::demo();
    let missing = logs(&c, &repo, &["deploy/nope", "-n", "shop"]);
    assert_eq!(missing.code, 2, "{missing:?}");
    assert!(
        missing
            .stderr
            .contains("no deployment shop/nope in namespace \"shop\""),
        "{missing:?}"
    );
    let svc = logs(&c, &repo, &["svc/cart", "-n", "shop"]);
    assert_eq!(svc.code, 2);
    assert!(
        svc.stderr.contains("Deployment, StatefulSet or DaemonSet"),
        "{svc:?}"
    );

    let mut container = logs(&c, &repo, &["deploy/cart", "-n", "shop", "-c", "db"]);
    assert!(
        eventually(PATIENCE, || {
            container = logs(&c, &repo, &["deploy/cart", "-n", "shop", "-c", "db"]);
            container.stderr.contains("not found in pod")
        }),
        "{container:?}"
    );
    assert_eq!(container.code, 2);
    assert!(
        container.stderr.contains("its containers are cart"),
        "{container:?}"
    );

    c.server.faults().forbid_resource("", "pods/log");
    let forbidden = logs(&c, &repo, &["deploy/cart", "-n", "shop"]);
    assert_eq!(forbidden.code, 2, "{forbidden:?}");
    assert!(
        forbidden
            .stderr
            .contains("cannot get resource \"pods/log\"")
            && forbidden.stderr.contains("HTTP 403"),
        "{forbidden:?}"
    );
    // Only the log is refused: the pods still list.
    c.ok(&["get", "pods", "-n", "shop"]);

    c.ok(&["scale", "-n", "shop", "deployment/frontend", "--replicas=0"]);
    let mut none = logs(&c, &repo, &["deploy/frontend", "-n", "shop"]);
    assert!(
        eventually(PATIENCE, || {
            none = logs(&c, &repo, &["deploy/frontend", "-n", "shop"]);
            none.stderr.contains("has no pods")
        }),
        "{none:?}"
    );
    assert_eq!(none.code, 2);
}
