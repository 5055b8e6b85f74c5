//! A merge key with a defaulted member (`port` + `protocol` of a Service, `containerPort` +
//! `protocol` of a container) where the manifest leaves `protocol: TCP` out, as most do: a port
//! changed live is one changed item in check and diff, accept edits the manifest's item in place
//! (also through `--field`), and one revert ends with exactly the manifest's port, through
//! objects the server accepts (the demo cluster refuses two ports of one name, as a real one).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::headless_util;

use common::Cluster;
use headless_util::{Repo, drifted_fields, kdrift};

const EDGE: &str = "apiVersion: v1
kind: Service
metadata:
  name: edge
  namespace: shop
spec:
  selector:
    app: edge
  ports:
    - name: http
      port: 80
      # The pods' port.
      targetPort: 8080
";

const WEB: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: edge
  namespace: shop
spec:
  replicas: 1
  selector:
    matchLabels: {app: edge}
  template:
    metadata:
      labels: {app: edge}
    spec:
      containers:
        - name: web
          image: registry.example/shop/web:1.0
          ports:
            - name: http
              containerPort: 8080
";

/// `(object, class path, manager)` of a `check -o json` report.
fn fields(report: &serde_json::Value) -> Vec<(String, String, String)> {
    drifted_fields(report)
        .into_iter()
        .map(|[key, class, path, manager, ..]| (key, format!("{class} {path}"), manager))
        .collect()
}

/// The lines of a unified diff that were added or removed (without the file headers).
fn changed_lines(diff: &str) -> Vec<&str> {
    diff.lines()
        .filter(|l| l.starts_with(['+', '-']) && !l.starts_with("+++") && !l.starts_with("---"))
        .collect()
}

fn patch_ports(c: &Cluster, service_port: u16, container_port: u16) {
    c.ok(&[
        "patch",
        "service/edge",
        "-n",
        "shop",
        "--type=json",
        "-p",
        &format!(r#"[{{"op":"replace","path":"/spec/ports/0/port","value":{service_port}}}]"#),
    ]);
    c.ok(&[
        "patch",
        "deployment/edge",
        "-n",
        "shop",
        "--type=json",
        "-p",
        &format!(
            r#"[{{"op":"replace","path":"/spec/template/spec/containers/0/ports/0/containerPort","value":{container_port}}}]"#
        ),
    ]);
}

#[test]
fn a_port_changed_live_is_one_item_accepted_in_place_and_reverted_in_one_step() {
    let c = Cluster::start();
    let repo = Repo::with_files(&[("edge.yaml", EDGE), ("web.yaml", WEB)]);
    c.apply("edge.yaml", EDGE);
    c.apply("web.yaml", WEB);
    patch_ports(&c, 81, 8081);

    // One changed item each, attributed to who changed it.
    let check = kdrift(&c, &repo, &["check", "-n", "shop", "-o", "json"]);
    assert_eq!(check.code, 1, "{check:?}");
    let row = |key: &str, what: &str| (key.to_owned(), what.to_owned(), "kubectl-patch".to_owned());
    assert_eq!(
        fields(&check.json()),
        [
            row(
                "deployment/shop/edge",
                "changed spec.template.spec.containers[name=web].ports[containerPort=8080,protocol=TCP]"
            ),
            row(
                "service/shop/edge",
                "changed spec.ports[port=80,protocol=TCP]"
            ),
        ],
        "{check:?}"
    );
    let diff = kdrift(&c, &repo, &["diff", "svc/edge", "-n", "shop"]);
    assert_eq!(
        changed_lines(&diff.stdout),
        ["-    port: 80", "+    port: 81"],
        "the port alone, no protocol the manifest leaves out: {diff:?}"
    );

    // Accept of the one field: the manifest's item edited in place, its comment kept.
    let accept = kdrift(
        &c,
        &repo,
        &[
            "accept",
            "svc/edge",
            "-n",
            "shop",
            "--field",
            "spec.ports[port=80,protocol=TCP]",
        ],
    );
    assert_eq!(accept.code, 0, "{accept:?}");
    assert_eq!(
        changed_lines(&repo.git(&["show", "--format=", "HEAD"])),
        ["-      port: 80", "+      port: 81"],
        "{accept:?}"
    );
    assert!(repo.read("edge.yaml").contains("# The pods' port."));
    let message = repo.git(&["log", "-1", "--format=%B"]);
    assert!(
        message.contains(
            r#"spec.ports[port=80,protocol=TCP]: {"name":"http","port":80,"targetPort":8080} → {"name":"http","port":81,"targetPort":8080}"#
        ),
        "{message}"
    );
    let accept = kdrift(&c, &repo, &["accept", "deploy/edge", "-n", "shop"]);
    assert_eq!(accept.code, 0, "{accept:?}");
    assert_eq!(
        changed_lines(&repo.git(&["show", "--format=", "HEAD"])),
        [
            "-              containerPort: 8080",
            "+              containerPort: 8081"
        ],
        "{accept:?}"
    );
    let check = kdrift(&c, &repo, &["check", "-n", "shop"]);
    assert_eq!(check.code, 0, "in sync after the accepts: {check:?}");

    // Changed again live, and reverted: one step each, to exactly the manifest's ports.
    patch_ports(&c, 82, 8082);
    for what in ["svc/edge", "deploy/edge"] {
        let revert = kdrift(&c, &repo, &["revert", what, "-n", "shop", "--yes"]);
        assert_eq!(revert.code, 0, "{revert:?}");
    }
    let service = c.get_json("service/edge", "shop");
    assert_eq!(
        service["spec"]["ports"],
        serde_json::json!([{"name": "http", "port": 81, "protocol": "TCP", "targetPort": 8080}]),
        "{service}"
    );
    let deployment = c.get_json("deployment/edge", "shop");
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["ports"],
        serde_json::json!([{"name": "http", "containerPort": 8081, "protocol": "TCP"}]),
        "{deployment}"
    );
    let check = kdrift(&c, &repo, &["check", "-n", "shop"]);
    assert_eq!(check.code, 0, "in sync after one revert: {check:?}");
}
