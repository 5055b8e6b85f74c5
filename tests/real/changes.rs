//! `kdrift changes` and `kdrift blame` on the real server: the demo's `shop/cart` applied, then
//! `kubectl scale`, `set image`, `label` and a patch by another field manager. The timeline
//! lists each with the manager, operation and subresource the server recorded (a `/scale`
//! write with no time) and the rollout the image started; blame puts each on its field.

use crate::case::Case;
use crate::changes_util::{blamed as owners, line};

/// cart's rollout to revision 2, which changed its template to hold `brought`.
fn rollout_2<'a>(
    lines: &'a [serde_json::Value],
    cart: &str,
    brought: &str,
) -> &'a serde_json::Value {
    let rollout = line(
        lines,
        cart,
        "deployment-controller",
        "rollout to revision 2",
    );
    assert!(
        rollout["what"].as_str().unwrap().contains(brought),
        "{rollout}"
    );
    rollout
}

/// `kdrift changes --since 10m -o json` in the case's namespace: the lines, and cart's name.
fn timeline(c: &Case) -> (Vec<serde_json::Value>, String) {
    let run = c.kdrift_ns(&["changes", "--since", "10m", "-o", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let lines = run.json().as_array().unwrap().clone();
    (lines, format!("deployment/{}/cart", c.ns()))
}

#[test]
fn changes_and_blame_name_each_kubectl_write() {
    let Some(c) = Case::demo("changes", "shop", &["shop/cart.yaml"]) else {
        return;
    };
    c.ok(&["scale", "deployment/cart", "--replicas=4"]);
    c.ok(&[
        "set",
        "image",
        "deployment/cart",
        "cart=registry.example/shop/cart:9.9.9",
    ]);
    c.ok(&["label", "deployment/cart", "tier=web"]);
    c.ok(&[
        "patch",
        "deployment/cart",
        "--field-manager=hotfixer",
        "--type=merge",
        "-p",
        r#"{"spec":{"minReadySeconds":7}}"#,
    ]);
    c.rolled_out();

    let (lines, cart) = timeline(&c);
    let lines = lines.as_slice();
    let scale = line(lines, &cart, "kubectl (scale) Update", ".spec.replicas");
    assert_eq!(
        scale["time"],
        serde_json::Value::Null,
        "a /scale write has no time: {scale}"
    );
    assert_eq!(scale["git"], "drifted", "{scale}");
    let image = line(
        lines,
        &cart,
        "kubectl-set Update",
        ".spec.template.spec.containers[name=\"cart\"].image",
    );
    assert!(
        image["what"]
            .as_str()
            .unwrap()
            .contains("→ \"registry.example/shop/cart:9.9.9\""),
        "{image}"
    );
    assert!(image["time"].is_string(), "{image}");
    line(
        lines,
        &cart,
        "kubectl-label Update",
        ".metadata.labels.tier",
    );
    line(lines, &cart, "hotfixer Update", ".spec.minReadySeconds");
    rollout_2(lines, &cart, "→ registry.example/shop/cart:9.9.9");

    let run = c.kdrift_ns(&["blame", "deploy/cart", "-o", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let blame = run.json();
    let (replicas, git) = owners(&blame, ".spec.replicas");
    assert_eq!(replicas[0], "kubectl (scale)", "{replicas:?}");
    assert_eq!(git, "drifted");
    let (image, _) = owners(
        &blame,
        ".spec.template.spec.containers[name=\"cart\"].image",
    );
    assert_eq!(image[0], "kubectl-set", "{image:?}");
    assert_eq!(owners(&blame, ".metadata.labels.tier").0, ["kubectl-label"]);
    assert_eq!(owners(&blame, ".spec.minReadySeconds").0, ["hotfixer"]);
}

/// Issue 46 on the real server: after `kubectl rollout undo`, the rollback is the newest rollout
/// line, dated when it happened (the reused ReplicaSet's revision write, not its creation),
/// named a rollback, after the rollout it undid; that one changes from revision 1's template.
#[test]
fn a_rollback_is_dated_when_it_happened_and_follows_the_rollout_it_undoes() {
    let Some(c) = Case::demo("rollback", "shop", &["shop/cart.yaml"]) else {
        return;
    };
    // The API's times are in seconds: a second between the three rollouts orders them.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    c.ok(&[
        "set",
        "image",
        "deployment/cart",
        "cart=registry.example/shop/cart:bad-build",
    ]);
    c.rolled_out();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    c.ok(&["rollout", "undo", "deployment/cart"]);
    c.rolled_out();

    let (lines, cart) = timeline(&c);
    crate::changes_util::assert_rolled_back(
        &serde_json::Value::Array(lines),
        &cart,
        "registry.example/shop/cart:bad-build",
    );
}

/// `kubectl set env` adds an env var git does not have: `check` calls it drift, and so does the
/// rollout that brought it (it read `in sync`: its template was judged without the live
/// object's managedFields, where a field no manifest sets reads as the server's default).
#[test]
fn a_rollout_of_an_env_var_added_live_is_drifted() {
    let Some(c) = Case::demo("changes-env", "shop", &["shop/cart.yaml"]) else {
        return;
    };
    c.ok(&["set", "env", "deployment/cart", "ADDED=1"]);
    c.rolled_out();
    let (lines, cart) = timeline(&c);
    let lines = lines.as_slice();
    let env = line(lines, &cart, "kubectl-set Update", "env[name=\"ADDED\"]");
    assert_eq!(env["git"], "drifted", "{env}");
    let rollout = rollout_2(lines, &cart, "ADDED");
    assert_eq!(rollout["git"], "drifted", "{rollout}");
    let first = line(lines, &cart, "deployment-controller", "first revision 1");
    assert_eq!(first["git"], "in sync", "{first}");
}
