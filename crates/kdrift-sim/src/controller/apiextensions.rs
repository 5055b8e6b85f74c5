//! What the apiextensions server writes to a CustomResourceDefinition's status once it serves
//! the kind: the accepted names, `NamesAccepted` and `Established`, and the stored versions.
use serde_json::{Value, json};

/// The status `crd` should have, or `None` when it has it already.
pub fn definition_status(crd: &Value, now: &str) -> Option<Value> {
    let names = crd.pointer("/spec/names")?.clone();
    let status = crd.get("status");
    let condition = |kind: &str| {
        status
            .and_then(|s| s.get("conditions"))
            .and_then(Value::as_array)
            .and_then(|c| c.iter().find(|c| c["type"] == kind))
    };
    let stored: Vec<Value> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v["storage"] == json!(true))
        .filter_map(|v| v.get("name").cloned())
        .collect();
    let mut versions: Vec<Value> = status
        .and_then(|s| s.get("storedVersions"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for version in stored {
        if !versions.contains(&version) {
            versions.push(version);
        }
    }
    let established = |kind: &str, reason: &str, message: &str| {
        let since = condition(kind)
            .and_then(|c| c.get("lastTransitionTime"))
            .cloned()
            .unwrap_or_else(|| json!(now));
        json!({"lastTransitionTime": since, "message": message, "reason": reason, "status": "True", "type": kind})
    };
    let wanted = json!({
        "acceptedNames": names,
        "conditions": [
            established("NamesAccepted", "NoConflicts", "no conflicts found"),
            established("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        ],
        "storedVersions": versions,
    });
    (status != Some(&wanted)).then_some(wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_definition_is_established_once() {
        let crd = json!({"spec": {"names": {"kind": "Widget", "plural": "widgets", "listKind": "WidgetList", "singular": "widget"},
            "versions": [{"name": "v1", "served": true, "storage": true}]}});
        let status = definition_status(&crd, "2026-11-23T23:00:00Z");
        let Some(status) = status else {
            unreachable!("a new definition gets a status")
        };
        assert_eq!(status["conditions"][1]["type"], json!("Established"));
        assert_eq!(status["storedVersions"], json!(["v1"]));
        let mut done = crd.clone();
        done["status"] = status;
        assert_eq!(definition_status(&done, "2026-11-24T00:00:00Z"), None);
    }
}
