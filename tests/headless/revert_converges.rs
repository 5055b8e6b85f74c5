//! One `kdrift revert` leaves no drift: a nested field added live goes with the parents its
//! removal leaves empty (`securityContext: {capabilities: {}}`, `sessionAffinityConfig:
//! {clientIP: {}}` would be new drift, owned by whoever added the field), unless the manifest
//! sets that parent, even to `{}`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::headless_util;

use common::Cluster;
use headless_util::{Repo, kdrift};

const WEB: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: registry.example/shop/web:1.0
        - name: side
          image: registry.example/shop/side:1.0
          # Set in git, though empty: a revert keeps it.
          securityContext: {}
";

const EDGE: &str = "apiVersion: v1
kind: Service
metadata:
  name: edge
  namespace: shop
spec:
  selector:
    app: web
  ports:
    - name: http
      port: 80
      targetPort: 8080
";

#[test]
fn one_revert_removes_the_field_with_the_parents_it_empties() {
    let c = Cluster::start();
    let repo = Repo::with_files(&[("web.yaml", WEB), ("edge.yaml", EDGE)]);
    c.apply("web.yaml", WEB);
    c.apply("edge.yaml", EDGE);
    c.ok(&[
        "patch",
        "deployment/web",
        "-n",
        "shop",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[
            {"name":"web","securityContext":{"capabilities":{"add":["NET_ADMIN"]}}},
            {"name":"side","securityContext":{"capabilities":{"drop":["ALL"]}}}]}}}}"#,
    ]);
    c.ok(&[
        "patch",
        "service/edge",
        "-n",
        "shop",
        "--type=merge",
        "-p",
        r#"{"spec":{"sessionAffinity":"ClientIP","sessionAffinityConfig":{"clientIP":{"timeoutSeconds":300}}}}"#,
    ]);
    let check = kdrift(&c, &repo, &["check", "-n", "shop"]);
    assert_eq!(check.code, 1, "{check:?}");

    let web = kdrift(&c, &repo, &["revert", "deploy/web", "-n", "shop", "--yes"]);
    assert_eq!(web.code, 0, "{web:?}");
    let edge = kdrift(&c, &repo, &["revert", "svc/edge", "-n", "shop", "--yes"]);
    assert_eq!(edge.code, 0, "{edge:?}");

    let check = kdrift(&c, &repo, &["check", "-n", "shop"]);
    assert_eq!(check.code, 0, "in sync after one revert each: {check:?}");
    assert!(
        web.stdout.contains(
            "removed spec.template.spec.containers[name=web].securityContext.capabilities.add and the spec.template.spec.containers[name=web].securityContext it leaves empty"
        ),
        "{web:?}"
    );
    let live = c.get_json("deployment/web", "shop");
    let containers = &live["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[0].get("securityContext"), None, "{live}");
    assert_eq!(
        containers[1]["securityContext"],
        serde_json::json!({}),
        "{live}"
    );
    let service = c.get_json("service/edge", "shop");
    assert_eq!(service["spec"]["sessionAffinity"], "None", "{service}");
    assert_eq!(
        service["spec"].get("sessionAffinityConfig"),
        None,
        "{service}"
    );
}
