//! What the `kdrift changes` and `kdrift blame` tests read from their JSON, shared by the
//! demo's tests and the real-server tier's.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::Value;

/// The timeline line of `object` by `who` whose `what` mentions `field`.
pub fn line<'a>(lines: &'a [Value], object: &str, who: &str, field: &str) -> &'a Value {
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

/// The owners (`manager (subresource)`) and git state blame gives `path`.
pub fn blamed(blame: &Value, path: &str) -> (Vec<String>, String) {
    let fields = blame["fields"].as_array().unwrap();
    let field = fields
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

/// The timeline of a Deployment rolled out to `bad` (an image) and rolled back with `kubectl
/// rollout undo`: newest first the rollback (dated when it happened, named one), the bad
/// rollout (after the first revision, not "first revision 2"), the first revision; git, which
/// holds the good image, agrees with the rollback and the first, not the bad one.
pub fn assert_rolled_back(lines: &Value, object: &str, bad: &str) {
    let rollouts: Vec<&Value> = lines
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["object"] == object && l["who"] == "deployment-controller")
        .collect();
    let whats: Vec<&str> = rollouts
        .iter()
        .map(|l| l["what"].as_str().unwrap())
        .collect();
    assert_eq!(rollouts.len(), 3, "{whats:#?}");
    assert!(
        whats[0].starts_with("rollback to revision 3 (replicaset/")
            && whats[0].contains("the template of revision 1")
            && whats[0].contains(&format!("{bad} → ")),
        "{whats:#?}"
    );
    assert!(
        whats[1].starts_with("rollout to revision 2 (") && whats[1].contains(&format!("→ {bad}")),
        "{whats:#?}"
    );
    assert!(whats[2].starts_with("first revision 1 ("), "{whats:#?}");
    let times: Vec<&str> = rollouts
        .iter()
        .map(|l| l["time"].as_str().unwrap())
        .collect();
    assert!(times[0] > times[1] && times[1] > times[2], "{times:?}");
    let git: Vec<&str> = rollouts
        .iter()
        .map(|l| l["git"].as_str().unwrap())
        .collect();
    assert_eq!(git, ["in sync", "drifted", "in sync"], "{whats:#?}");
}
