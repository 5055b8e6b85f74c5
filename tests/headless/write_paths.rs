//! Every way kubectl writes an object, against the demo cluster, then `kdrift check`, `accept`
//! and `revert` as an operator runs them: check reports exactly the fields the write changed,
//! with their manager; accepting it into git, or reverting the cluster to git, ends in sync.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::headless_util;

use common::{Cluster, kubectl_bin};
use headless_util::{Repo, drifted_fields, kdrift};

const CART: &str = "deployment/shop/cart";
const CONTAINER: &str = "spec.template.spec.containers[name=cart]";

/// (class, path, manager, operation, subresource) of one drifted field of cart.
type Field = (
    &'static str,
    String,
    &'static str,
    &'static str,
    &'static str,
);

fn field(class: &'static str, path: &str, manager: &'static str, operation: &'static str) -> Field {
    (class, path.to_owned(), manager, operation, "-")
}

/// The drifted fields of cart in a `check -o json` report.
fn cart_fields(c: &Cluster, repo: &Repo) -> (i32, Vec<[String; 5]>) {
    let check = kdrift(c, repo, &["check", "-A", "-o", "json"]);
    let fields = drifted_fields(&check.json())
        .into_iter()
        .filter(|f| f[0] == CART)
        .map(|[_, class, path, manager, operation, sub]| [class, path, manager, operation, sub])
        .collect();
    (check.code, fields)
}

fn expected(fields: &[Field]) -> Vec<[String; 5]> {
    let mut out: Vec<[String; 5]> = fields
        .iter()
        .map(|(class, path, manager, operation, sub)| {
            [class, path.as_str(), manager, operation, sub].map(|s| s.to_string())
        })
        .collect();
    out.sort();
    out
}

/// `kubectl patch deployment/cart` of `patch_type` (`strategic`, `json`).
fn patch_cart(c: &Cluster, patch_type: &str, patch: &str) {
    c.ok(&[
        "patch",
        "deployment/cart",
        "-n",
        "shop",
        &format!("--type={patch_type}"),
        "-p",
        patch,
    ]);
}

fn assert_in_sync(c: &Cluster, repo: &Repo, after: &str) {
    let check = kdrift(c, repo, &["check", "-A"]);
    assert_eq!(check.code, 0, "in sync after {after}: {check:?}");
}

/// Make the write, check that exactly `fields` drift; accept them into git (in sync); put git
/// back, revert the cluster to it (in sync).
fn settle(write: impl Fn(&Cluster, &Repo), fields: &[Field]) {
    let c = Cluster::start();
    let repo = Repo::demo();
    assert_in_sync(&c, &repo, "the seed");
    write(&c, &repo);
    assert_eq!(cart_fields(&c, &repo), (1, expected(fields)));

    let accept = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(accept.code, 0, "{accept:?}");
    assert_in_sync(&c, &repo, "the accept");

    repo.git(&["reset", "--quiet", "--hard", "HEAD~1"]);
    assert_eq!(
        cart_fields(&c, &repo),
        (1, expected(fields)),
        "git put back"
    );
    let revert = kdrift(&c, &repo, &["revert", "deploy/cart", "-n", "shop", "--yes"]);
    assert_eq!(revert.code, 0, "{revert:?}");
    assert_in_sync(&c, &repo, "the revert");
}

#[test]
fn client_side_apply_of_a_modified_copy() {
    settle(
        |c, repo| {
            // The Deployment's labels (the first of the file's objects).
            let copy = repo
                .read("shop/cart.yaml")
                .replacen(
                    "    app.kubernetes.io/part-of: shop\nspec:",
                    "    app.kubernetes.io/part-of: shop\n    laptop: \"yes\"\nspec:",
                    1,
                )
                .replace(
                    "            - name: CART_TTL\n              value: 72h\n",
                    "            - name: CART_TTL\n              value: 72h\n            - name: LAPTOP\n              value: \"1\"\n",
                );
            let file = c.file("cart-copy.yaml", &copy);
            c.ok(&["apply", "-f", file.to_str().unwrap()]);
        },
        &[
            field(
                "added-live",
                "metadata.labels.laptop",
                "kubectl-client-side-apply",
                "Update",
            ),
            field(
                "added-live",
                &format!("{CONTAINER}.env[name=LAPTOP]"),
                "kubectl-client-side-apply",
                "Update",
            ),
        ],
    );
}

#[test]
fn server_side_apply_by_another_field_manager() {
    settle(
        |c, _| {
            let partial = c.file(
                "hotfix.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cart\n  namespace: shop\n  labels:\n    hot: fix\nspec:\n  minReadySeconds: 30\n  template:\n    spec:\n      containers:\n        - name: cart\n          env:\n            - name: DEBUG\n              value: \"true\"\n",
            );
            // kubectl first moves the client-side apply's fields to hotfixer, then applies
            // again; a real server refuses that second apply (the selector would go), and the
            // object keeps what the first apply wrote.
            let mut args = vec![
                "apply",
                "--server-side",
                "--field-manager=hotfixer",
                "-f",
                partial.to_str().unwrap(),
            ];
            // Before 1.25 kubectl validates on the client, where a partial config lacks the
            // required selector.
            if kubectl_bin::minor() < 25 {
                args.push("--validate=false");
            }
            let _ = c.kubectl(&args);
        },
        &[
            field("added-live", "metadata.labels.hot", "hotfixer", "Apply"),
            field("added-live", "spec.minReadySeconds", "hotfixer", "Apply"),
            field(
                "added-live",
                &format!("{CONTAINER}.env[name=DEBUG]"),
                "hotfixer",
                "Apply",
            ),
        ],
    );
}

#[test]
fn patch_of_a_field_the_server_defaults() {
    // Reverting removes the field; the server fills its default in again, as kdrift's write.
    settle(
        |c, _| {
            patch_cart(
                c,
                "strategic",
                r#"{"spec":{"strategy":{"rollingUpdate":{"maxSurge":"50%"}}}}"#,
            );
        },
        &[field(
            "added-live",
            "spec.strategy.rollingUpdate.maxSurge",
            "kubectl-patch",
            "Update",
        )],
    );
}

#[test]
fn edit_a_value() {
    settle(
        |c, _| {
            let out = c.edit(
                "deployment/cart",
                "shop",
                "sed -i 's/cpu: 50m/cpu: 75m/' \"$1\"",
            );
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        },
        &[field(
            "changed",
            &format!("{CONTAINER}.resources.requests.cpu"),
            "kubectl-edit",
            "Update",
        )],
    );
}

#[test]
fn set_image_and_set_env() {
    settle(
        |c, _| {
            c.ok(&[
                "set",
                "image",
                "deployment/cart",
                "-n",
                "shop",
                "cart=registry.example/shop/cart:0.9.8",
            ]);
            c.ok(&["set", "env", "deployment/cart", "-n", "shop", "VERBOSE=1"]);
        },
        &[
            field(
                "changed",
                &format!("{CONTAINER}.image"),
                "kubectl-set",
                "Update",
            ),
            field(
                "added-live",
                &format!("{CONTAINER}.env[name=VERBOSE]"),
                "kubectl-set",
                "Update",
            ),
        ],
    );
}

#[test]
fn scale() {
    settle(
        |c, _| {
            c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=4"]);
        },
        &[(
            "changed",
            "spec.replicas".to_owned(),
            "kubectl",
            "Update",
            "scale",
        )],
    );
}

#[test]
fn label_and_annotate() {
    settle(
        |c, _| {
            c.ok(&["label", "deployment/cart", "-n", "shop", "tier=web"]);
            c.ok(&["annotate", "deployment/cart", "-n", "shop", "note=hotfix"]);
        },
        &[
            field(
                "added-live",
                "metadata.annotations.note",
                "kubectl-annotate",
                "Update",
            ),
            field(
                "added-live",
                "metadata.labels.tier",
                "kubectl-label",
                "Update",
            ),
        ],
    );
}

#[test]
fn replace() {
    settle(
        |c, _| {
            // Without its resourceVersion: the controller's status writes would make it stale.
            let live: String = c
                .ok(&["get", "deployment/cart", "-n", "shop", "-o", "yaml"])
                .lines()
                .filter(|l| !l.trim_start().starts_with("resourceVersion:"))
                .map(|l| format!("{l}\n"))
                .collect();
            let file = c.file(
                "cart-replace.yaml",
                &live.replacen("replicas: 2", "replicas: 3", 1),
            );
            // kubectl fills in the resourceVersion it reads just before its PUT, so a status
            // write by the deployment controller in between is a 409, as on a real server:
            // try again, as a person would.
            let args = ["replace", "-f", file.to_str().unwrap()];
            let mut out = c.kubectl(&args);
            for _ in 0..4 {
                let stderr = String::from_utf8_lossy(&out.stderr);
                if out.status.success() || !stderr.contains("the object has been modified") {
                    break;
                }
                out = c.kubectl(&args);
            }
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "kubectl replace failed: {stderr}");
        },
        &[field(
            "changed",
            "spec.replicas",
            "kubectl-replace",
            "Update",
        )],
    );
}

#[test]
fn rollout_restart_is_a_restart_not_drift() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&["rollout", "restart", "deployment/cart", "-n", "shop"]);
    let check = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(check.code, 0, "a restart is not drift: {check:?}");
    let restarted: Vec<_> = drifted_fields(&check.json())
        .into_iter()
        .filter(|f| f[0] == CART)
        .collect();
    assert_eq!(restarted.len(), 1, "{restarted:?}");
    assert_eq!(restarted[0][1], "restarted");
    assert_eq!(restarted[0][3], "kubectl-rollout");
}

#[test]
fn env_vars_added_between_others_go_where_they_are_live() {
    // Accepted in their live places (not appended, not sorted): `settle` checks that the
    // object is in sync afterwards, which it is not when the env order differs.
    settle(
        |c, _| {
            patch_cart(
                c,
                "json",
                r#"[{"op":"add","path":"/spec/template/spec/containers/0/env/1","value":{"name":"V10","value":"10"}},
                    {"op":"add","path":"/spec/template/spec/containers/0/env/0","value":{"name":"V2","value":"2"}}]"#,
            );
        },
        &[
            field(
                "added-live",
                &format!("{CONTAINER}.env[name=V10]"),
                "kubectl-patch",
                "Update",
            ),
            field(
                "added-live",
                &format!("{CONTAINER}.env[name=V2]"),
                "kubectl-patch",
                "Update",
            ),
        ],
    );
}

#[test]
fn env_vars_in_another_order_are_reordered() {
    settle(
        |c, _| {
            patch_cart(
                c,
                "json",
                r#"[{"op":"move","from":"/spec/template/spec/containers/0/env/1","path":"/spec/template/spec/containers/0/env/0"}]"#,
            );
        },
        // A reorder changes no value, so the server records no manager for it.
        &[field("reordered", &format!("{CONTAINER}.env"), "-", "-")],
    );
}
