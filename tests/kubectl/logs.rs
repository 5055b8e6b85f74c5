//! The real kubectl reading the demo cluster's container logs: `kubectl logs` with `--tail`,
//! `--timestamps`, `-c`, `-p` and `-f`, a crashing image's exception, and the errors a real
//! server gives for containers that have none.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::time::{Duration, Instant};

use common::{Cluster, eventually};
use serde_json::Value;

const PATIENCE: Duration = Duration::from_secs(60);

/// A pod of `app` in `namespace` whose first container is running, once there is one.
fn running_pod(c: &Cluster, namespace: &str, selector: &str) -> String {
    let mut name = String::new();
    assert!(
        eventually(PATIENCE, || {
            let out = c.kubectl(&["get", "pods", "-n", namespace, "-l", selector, "-o", "json"]);
            let list: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            let found = list["items"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| p["status"]["containerStatuses"][0]["state"]["running"].is_object());
            if let Some(p) = found {
                name = p["metadata"]["name"].as_str().unwrap().to_string();
            }
            found.is_some()
        }),
        "no running pod for {selector}"
    );
    name
}

const TWO_CONTAINERS: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: two\n  namespace: default\nspec:\n  containers:\n  - name: web\n    image: registry.example/web:1.0\n  - name: proxy\n    image: registry.example/proxy:2.4\n";

#[test]
fn logs_show_the_containers_lines_with_tail_timestamps_and_container() {
    let c = Cluster::start();
    let pod = running_pod(&c, "shop", "app.kubernetes.io/name=cart");
    let all = c.ok(&["logs", "-n", "shop", &pod]);
    let lines: Vec<&str> = all.lines().collect();
    assert_eq!(lines[0], "INFO starting cart 0.9.7", "{all}");
    assert_eq!(lines[3], "INFO ready to serve requests");
    let tail = c.ok(&["logs", "-n", "shop", &pod, "--tail", "2"]);
    assert_eq!(tail.lines().count(), 2, "{tail}");
    let stamped = c.ok(&["logs", "-n", "shop", &pod, "--timestamps", "--tail", "1"]);
    let (time, text) = stamped.trim_end().split_once(' ').unwrap();
    assert!(time.parse::<jiff::Timestamp>().is_ok(), "{stamped}");
    // The pod keeps logging: the stamped line is among the lines read after it, not
    // necessarily among those read before.
    let later = c.ok(&["logs", "-n", "shop", &pod]);
    assert!(later.contains(text), "{text} is one of the lines");
    // The start-up lines are older than a second once the pod has run a while.
    std::thread::sleep(Duration::from_millis(1500));
    let recent = c.ok(&["logs", "-n", "shop", &pod, "--since=1s"]);
    assert!(!recent.contains("INFO starting"), "{recent}");
    assert!(recent.lines().count() < all.lines().count() + 4, "{recent}");
    let limited = c.ok(&["logs", "-n", "shop", &pod, "--limit-bytes", "10"]);
    assert_eq!(limited, "INFO start");
    let previous = c.fails(&["logs", "-n", "shop", &pod, "-p"]);
    assert_eq!(
        previous.trim(),
        format!(
            "Error from server (BadRequest): previous terminated container \"cart\" in pod \"{pod}\" not found"
        )
    );

    c.apply("two.yaml", TWO_CONTAINERS);
    running_pod(&c, "default", "!nothing");
    let proxy = c.ok(&["logs", "two", "-c", "proxy"]);
    assert_eq!(proxy.lines().next(), Some("INFO starting proxy 2.4"));
    // Without a container, the API answers as a real server does (kubectl itself would pick
    // the first and say so).
    let raw = c.fails(&["get", "--raw", "/api/v1/namespaces/default/pods/two/log"]);
    assert!(
        raw.contains("a container name must be specified for pod two, choose one of: [web proxy]"),
        "{raw}"
    );
    let raw = c.fails(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/pods/two/log?container=db",
    ]);
    assert!(
        raw.contains("container db is not valid for pod two"),
        "{raw}"
    );
}

#[test]
fn a_crashing_image_logs_its_exception_now_and_as_previous() {
    let c = Cluster::start();
    c.ok(&[
        "set",
        "image",
        "-n",
        "shop",
        "deployment/checkout",
        "checkout=registry.example/shop/checkout:3.2.0-crash",
    ]);
    let mut pod = String::new();
    assert!(
        eventually(PATIENCE, || {
            let out = c.kubectl(&["get", "pods", "-n", "shop", "-o", "json"]);
            let list: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            let found = list["items"].as_array().into_iter().flatten().find(|p| {
                p["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 1
            });
            if let Some(p) = found {
                pod = p["metadata"]["name"].as_str().unwrap().to_string();
            }
            found.is_some()
        }),
        "no crashed checkout pod"
    );
    let now = c.ok(&["logs", "-n", "shop", &pod]);
    let previous = c.ok(&["logs", "-n", "shop", &pod, "--previous"]);
    assert_eq!(now, previous, "a container in back-off shows its last run");
    let lines: Vec<&str> = now.lines().collect();
    assert_eq!(lines[0], "INFO starting checkout 3.2.0-crash");
    assert_eq!(lines[3], "ERROR unhandled exception, exiting");
    assert!(lines[4].starts_with("Exception in thread \"main\" java.lang.NullPointerException"));
    assert!(lines[5].starts_with("\tat com.example.checkout."));

    // An image that cannot be pulled has no log yet.
    c.ok(&[
        "set",
        "image",
        "-n",
        "shop",
        "deployment/cart",
        "cart=registry.example/shop/cart:0.9.8-missing",
    ]);
    let mut message = String::new();
    assert!(
        eventually(PATIENCE, || {
            let out = c.kubectl(&["get", "pods", "-n", "shop", "-o", "json"]);
            let list: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            let Some(p) = list["items"].as_array().into_iter().flatten().find(|p| {
                p["status"]["containerStatuses"][0]["image"]
                    == "registry.example/shop/cart:0.9.8-missing"
                    && p["status"]["containerStatuses"][0]["state"]["waiting"].is_object()
            }) else {
                return false;
            };
            let name = p["metadata"]["name"].as_str().unwrap();
            message = String::from_utf8_lossy(&c.kubectl(&["logs", "-n", "shop", name]).stderr)
                .into_owned();
            message.contains("is waiting to start: image can't be pulled")
                || message.contains("is waiting to start: trying and failing to pull image")
        }),
        "{message}"
    );
    assert!(
        message.starts_with("Error from server (BadRequest): container \"cart\" in pod \"cart-"),
        "{message}"
    );
}

#[test]
fn logs_follow_streams_until_the_pod_is_deleted() {
    let c = Cluster::start();
    let pod = running_pod(&c, "shop", "app.kubernetes.io/name=frontend");
    let (mut child, rx) = c.spawn_lines(&[
        "logs",
        "-n",
        "shop",
        &pod,
        "-f",
        "--tail",
        "0",
        "--request-timeout=0",
    ]);
    // New request lines arrive as time passes.
    let first = rx.recv_timeout(PATIENCE).unwrap();
    let second = rx.recv_timeout(PATIENCE).unwrap();
    assert!(
        first.contains(" /") && second.contains(" /"),
        "{first} / {second}"
    );
    c.ok(&["delete", "pod", "-n", "shop", &pod, "--wait=false"]);
    let started = Instant::now();
    let ended = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > PATIENCE {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = child.kill();
    assert!(
        ended.is_some_and(|s| s.success()),
        "kubectl logs -f did not end: {ended:?}"
    );
}

/// The log of a pod in a namespace RBAC forbids (asked for directly: kubectl logs would be
/// refused the pod itself first).
#[test]
fn a_forbidden_namespace_forbids_its_logs() {
    let c = Cluster::start();
    let pod = running_pod(&c, "shop", "app.kubernetes.io/name=cart");
    c.server.faults().forbid_namespace("shop");
    let err = c.fails(&[
        "get",
        "--raw",
        &format!("/api/v1/namespaces/shop/pods/{pod}/log"),
    ]);
    assert!(
        err.contains(&format!(
            "pods \"{pod}\" is forbidden: User \"kdrift-demo\" cannot get resource \"pods/log\" in API group \"\" in the namespace \"shop\""
        )),
        "{err}"
    );
}
