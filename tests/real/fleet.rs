//! kdrift over two real servers as two kubeconfig contexts: the demo's `shop/cart` applied into
//! one namespace on both, scaled by hand on the second. `check --context one --context two`
//! reports the second alone drifted (attributed as the server recorded the `/scale` write),
//! exit 1; `compare` names `spec.replicas`, each side's value and manager, git agreeing with
//! the first.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::case::{Case, moved};
use crate::headless_util::{assert_valid_report, drifted_fields};
use crate::server::{Real, second};

/// The cluster, user and namespace-less context of `kubeconfig`'s current context, renamed
/// `name`.
fn entries(kubeconfig: &Path, name: &str) -> (Value, Value, Value) {
    let config: Value =
        serde_yaml::from_str(&std::fs::read_to_string(kubeconfig).unwrap()).unwrap();
    let current = config["current-context"].as_str().unwrap();
    let context = config["contexts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == current)
        .unwrap();
    let named = |list: &str, wanted: &Value| {
        let mut found = config[list]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == *wanted)
            .unwrap()
            .clone();
        found["name"] = Value::from(name);
        found
    };
    let cluster = named("clusters", &context["context"]["cluster"]);
    let user = named("users", &context["context"]["user"]);
    let context = serde_json::json!({"name": name, "context": {"cluster": name, "user": name}});
    (cluster, user, context)
}

/// One kubeconfig with the contexts `one` and `two`.
fn merged(dir: &Path, one: &Real, two: &Real) -> PathBuf {
    let (c1, u1, x1) = entries(&one.kubeconfig, "one");
    let (c2, u2, x2) = entries(&two.kubeconfig, "two");
    let config = serde_json::json!({
        "apiVersion": "v1", "kind": "Config", "current-context": "one",
        "clusters": [c1, c2], "users": [u1, u2], "contexts": [x1, x2],
    });
    let path = dir.join("two-servers.kubeconfig");
    std::fs::write(&path, serde_yaml::to_string(&config).unwrap()).unwrap();
    path
}

#[test]
fn check_and_compare_over_two_real_servers() {
    let Some(c) = Case::demo("fleet", "shop", &["shop/cart.yaml"]) else {
        return;
    };
    let Some(two) = second() else {
        return;
    };
    // The same namespace and objects on the second server.
    two.ok(&["create", "namespace", c.ns()]);
    let began = Instant::now();
    while !two
        .kubectl(&["get", "serviceaccount", "default", "-n", c.ns()])
        .status
        .success()
    {
        assert!(began.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(200));
    }
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/shop/cart.yaml"))
            .unwrap();
    let file = c.file("cart-two.yaml", &moved(&text, "shop", c.ns()));
    two.ok(&["apply", "-n", c.ns(), "-f", file.to_str().unwrap()]);
    two.ok(&[
        "rollout",
        "status",
        "deploy/cart",
        "-n",
        c.ns(),
        "--timeout=120s",
    ]);
    two.ok(&["scale", "deploy/cart", "-n", c.ns(), "--replicas=4"]);
    let kubeconfig = merged(c.home.path(), c.real, two);
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["-n", c.ns(), "--context", "one", "--context", "two"]);
        crate::headless_util::kdrift_at(&kubeconfig, c.home.path(), c.repo.root(), &all)
    };

    let check = run(&["check", "-o", "json"]);
    assert_eq!(check.code, 1, "the worst of the two: {check:?}");
    let fleet: Value = serde_json::from_str(&check.stdout).unwrap();
    assert_valid_report(&fleet["contexts"]["one"]["report"]);
    assert_valid_report(&fleet["contexts"]["two"]["report"]);
    assert_eq!(fleet["contexts"]["one"]["exit_code"], 0, "{fleet:#}");
    assert_eq!(fleet["contexts"]["two"]["exit_code"], 1, "{fleet:#}");
    let fields = drifted_fields(&fleet["contexts"]["two"]["report"]);
    let key = format!("deployment/{}/cart", c.ns());
    assert!(
        fields
            .iter()
            .any(|f| f[0] == key && f[2] == "spec.replicas" && f[5] == "scale"),
        "{fields:?}"
    );

    let compare = run(&["compare", "deploy/cart", "-o", "json"]);
    assert_eq!(compare.code, 1, "{compare:?}");
    let compared: Value = serde_json::from_str(&compare.stdout).unwrap();
    let fields = compared["fields"].as_array().unwrap();
    let paths: Vec<&str> = fields.iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["spec.replicas"], "{compared:#}");
    let replicas = &fields[0];
    assert_eq!(replicas["values"]["two"]["value"], 4);
    assert_eq!(replicas["values"]["two"]["subresource"], "scale");
    assert_eq!(replicas["values"]["two"]["git"], "drifted");
    assert_eq!(replicas["values"]["one"]["git"], "in sync");
    assert_eq!(replicas["git_agrees_with"], serde_json::json!(["one"]));
}
