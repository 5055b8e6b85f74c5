//! On the demo cluster: what the server fills in because of a live change (a Service's
//! `externalTrafficPolicy` for `type: NodePort`, the affinity timeout for `sessionAffinity:
//! ClientIP`) is not drift; the change itself is.
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
      targetPort: 8080
";

#[test]
fn a_type_and_affinity_changed_live_are_two_fields_not_their_defaults() {
    let c = Cluster::start();
    let repo = Repo::with_files(&[("edge.yaml", EDGE)]);
    c.apply("edge.yaml", EDGE);
    let check = kdrift(&c, &repo, &["check", "-n", "shop", "-o", "json"]);
    assert_eq!(check.code, 0, "{check:?}");

    c.ok(&[
        "patch",
        "service/edge",
        "-n",
        "shop",
        "--type=merge",
        "-p",
        r#"{"spec":{"type":"NodePort","sessionAffinity":"ClientIP"}}"#,
    ]);
    let live = c.get_json("service/edge", "shop");
    assert_eq!(live["spec"]["externalTrafficPolicy"], "Cluster", "{live}");
    assert_eq!(
        live["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"], 10800,
        "{live}"
    );
    let check = kdrift(&c, &repo, &["check", "-n", "shop", "-o", "json"]);
    assert_eq!(check.code, 1, "{check:?}");
    let fields: Vec<(String, String, String)> = drifted_fields(&check.json())
        .into_iter()
        .map(|[key, class, path, manager, ..]| (key, format!("{class} {path}"), manager))
        .collect();
    let row = |what: &str| {
        (
            "service/shop/edge".to_owned(),
            what.to_owned(),
            "kubectl-patch".to_owned(),
        )
    };
    assert_eq!(
        fields,
        [
            row("added-live spec.sessionAffinity"),
            row("added-live spec.type")
        ],
        "{check:?}"
    );
}
