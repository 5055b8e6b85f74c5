//! `kdrift changes` and `kdrift blame` on the real server: the demo's `shop/cart` applied, then
//! `kubectl scale`, `set image`, `label` and a patch by another field manager. The timeline
//! lists each with the manager, operation and subresource the server recorded (a `/scale`
//! write with no time) and the rollout the image started; blame puts each on its field.

use serde_json::Value;

use crate::case::Case;

fn line<'a>(lines: &'a [Value], object: &str, who: &str, field: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| {
            l["object"] == object && l["who"] == who && l["what"].as_str().unwrap().contains(field)
        })
        .unwrap_or_else(|| {
            panic!(
                "no line of {object} by {who} on {field}:\n{}",
                serde_json::to_string_pretty(lines).unwrap()
            )
        })
}

fn owners(blame: &Value, path: &str) -> (Vec<String>, String) {
    let field = blame["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("no field {path} in {blame:#}"));
    let owners = field["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| match o["subresource"].as_str() {
            Some(sub) => format!("{} ({sub})", o["manager"].as_str().unwrap()),
            None => o["manager"].as_str().unwrap().to_owned(),
        })
        .collect();
    (owners, field["git"].as_str().unwrap_or("-").to_owned())
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

    let run = c.kdrift_ns(&["changes", "--since", "10m", "-o", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let lines = run.json();
    let lines = lines.as_array().unwrap();
    let cart = format!("deployment/{}/cart", c.ns());
    let scale = line(lines, &cart, "kubectl (scale) Update", ".spec.replicas");
    assert_eq!(
        scale["time"],
        Value::Null,
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
    let rollout = line(
        lines,
        &cart,
        "deployment-controller",
        "rollout to revision 2",
    );
    assert!(
        rollout["what"]
            .as_str()
            .unwrap()
            .contains("→ registry.example/shop/cart:9.9.9"),
        "{rollout}"
    );

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
