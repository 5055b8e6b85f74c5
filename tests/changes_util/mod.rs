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
