//! The demo cluster serves every built-in kind of a current server and the custom resources of
//! the definitions created in it: each manifest of the objects captured from a real 1.36 server
//! (testdata/kubernetes-1.36/objects), applied with the real kubectl, is stored as that server
//! stored it — defaults, `managedFields` — and kubectl explains, lists and patches them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::{Cluster, kubectl_bin};
use serde_json::{Value, json};

const CAPTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/testdata/kubernetes-1.36/objects"
);

fn capture(name: &str) -> Value {
    let path = format!("{CAPTURES}/{name}.after-client-apply.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// What `kubectl apply` applied: the capture's `last-applied-configuration`.
fn manifest_of(capture: &Value) -> Value {
    let text =
        capture["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .as_str()
            .unwrap();
    serde_json::from_str(text).unwrap()
}

/// `kubectl wait` for the Widget definition to be established.
fn wait_established(c: &Cluster) {
    c.ok(&[
        "wait",
        "--for",
        "condition=established",
        "crd/widgets.example.com",
        "--timeout=30s",
    ]);
}

/// The fields of `kubectl-client-side-apply`'s entry.
fn applied_fields(object: &Value) -> Value {
    object["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "kubectl-client-side-apply")
        .map(|e| e["fieldsV1"].clone())
        .unwrap_or(Value::Null)
}

/// The object without what differs from cluster to cluster: metadata but its labels,
/// annotations and generation; status; the addresses a Service is allocated.
fn comparable(object: &Value) -> Value {
    let mut out = object.clone();
    let map = out.as_object_mut().unwrap();
    map.remove("status");
    let meta = map["metadata"].as_object().unwrap().clone();
    let kept: serde_json::Map<String, Value> = meta
        .into_iter()
        .filter(|(k, _)| matches!(k.as_str(), "labels" | "annotations" | "generation" | "name"))
        .collect();
    map.insert("metadata".into(), Value::Object(kept));
    if let Some(spec) = map.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("clusterIP");
        spec.remove("clusterIPs");
    }
    out
}

#[test]
fn each_kind_kubectl_applies_is_stored_as_a_current_server_stores_it() {
    let c = Cluster::start_with(false);
    c.ok(&["create", "namespace", "ref"]);
    for name in [
        "crd-widgets",
        "configmap-flags",
        "secret-db",
        "serviceaccount-web",
        "service-web",
        "statefulset-db",
        "daemonset-agent",
        "cronjob-report",
        "hpa-web",
        "ingress-web",
        "pdb-web",
        "widget-w1",
    ] {
        let expected = capture(name);
        let manifest = manifest_of(&expected);
        let file = c.file(&format!("{name}.json"), &manifest.to_string());
        c.ok(&["apply", "-f", file.to_str().unwrap()]);
        if name == "crd-widgets" {
            wait_established(&c);
        }
        let kind = manifest["kind"].as_str().unwrap().to_ascii_lowercase();
        let group = manifest["apiVersion"]
            .as_str()
            .unwrap()
            .rsplit_once('/')
            .map(|(g, _)| format!(".{g}"))
            .unwrap_or_default();
        let what = format!(
            "{kind}{group}/{}",
            manifest["metadata"]["name"].as_str().unwrap()
        );
        let live = c.get_json(&what, "ref");
        assert_eq!(
            comparable(&live),
            comparable(&expected),
            "{name}: stored otherwise than a 1.36 server stores it"
        );
        if kubectl_bin::minor() >= 21 {
            assert_eq!(
                applied_fields(&live),
                applied_fields(&expected),
                "{name}: kubectl-client-side-apply owns other fields than on a 1.36 server"
            );
        }
    }
    // What the server allocates and keeps: a cluster IP, then a node port on a switch.
    let service = c.get_json("service/web", "ref");
    let ip = service["spec"]["clusterIP"].as_str().unwrap().to_owned();
    assert_eq!(service["spec"]["clusterIPs"], json!([ip]));
    c.ok(&[
        "patch",
        "service/web",
        "-n",
        "ref",
        "-p",
        r#"{"spec":{"type":"NodePort"}}"#,
    ]);
    let service = c.get_json("service/web", "ref");
    assert_eq!(service["spec"]["clusterIP"], json!(ip));
    let node_port = service["spec"]["ports"][0]["nodePort"].as_i64().unwrap();
    assert!((30000..=32767).contains(&node_port), "{service}");
    assert_eq!(service["spec"]["externalTrafficPolicy"], json!("Cluster"));
}

#[test]
fn a_definition_makes_its_kind_served_explained_and_listed_until_it_is_deleted() {
    let c = Cluster::start_with(false);
    c.ok(&["create", "namespace", "ref"]);
    let crd = manifest_of(&capture("crd-widgets"));
    let file = c.file("crd.json", &crd.to_string());
    // Before the definition, kubectl cannot map the kind.
    let widget = manifest_of(&capture("widget-w1"));
    let widget_file = c.file("widget.json", &widget.to_string());
    let refused = c.fails(&["apply", "-f", widget_file.to_str().unwrap()]);
    assert!(
        refused.contains("Widget") && refused.contains("example.com"),
        "{refused}"
    );
    c.ok(&["apply", "-f", file.to_str().unwrap()]);
    wait_established(&c);
    c.ok(&["apply", "-f", widget_file.to_str().unwrap()]);
    let listed = c.ok(&["get", "wd", "-n", "ref"]);
    assert!(listed.lines().any(|l| l.starts_with("w1 ")), "{listed}");
    if kubectl_bin::minor() >= 27 {
        // kubectl explain reads the OpenAPI v3 document made from the definition.
        let explained = c.ok(&["explain", "widget.spec.ports"]);
        assert!(
            explained.contains("KIND:       Widget") && explained.contains("name\t<string>"),
            "{explained}"
        );
    }
    // A merge patch and a server-side apply by another manager, as on a real server.
    c.ok(&[
        "patch",
        "widget/w1",
        "-n",
        "ref",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"size":5}}"#,
    ]);
    let hotfix = c.file(
        "hotfix.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: ref\nspec:\n  ports:\n  - name: metrics\n    port: 9090\n  tags: [c]\n",
    );
    c.ok(&[
        "apply",
        "--server-side",
        "--field-manager=hotfixer",
        "-f",
        hotfix.to_str().unwrap(),
    ]);
    // kubectl hands the client-side apply's fields to hotfixer, whose apply then drops what
    // it no longer sets: as the 1.36 server did.
    let live = c.get_json("widget/w1", "ref");
    let path = format!("{CAPTURES}/widget-w1.after-out-of-band.json");
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    if kubectl_bin::minor() < 26 {
        // Before 1.26 kubectl hands nothing over: the set and the map list are merged.
        assert_eq!(live["spec"]["tags"], json!(["a", "b", "c"]));
        assert_eq!(live["spec"]["ports"].as_array().unwrap().len(), 2);
    } else {
        assert_eq!(live["spec"], expected["spec"]);
        let owners = |o: &Value| -> Vec<(String, Value)> {
            let mut all: Vec<(String, Value)> = o["metadata"]["managedFields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap().to_owned(),
                        e["fieldsV1"].clone(),
                    )
                })
                .collect();
            all.sort_by(|a, b| a.0.cmp(&b.0));
            all
        };
        assert_eq!(owners(&live), owners(&expected));
    }
    // A field the schema does not declare is refused under kubectl's strict validation, and
    // dropped without it (structural pruning).
    let extra = c.file(
        "extra.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w2\n  namespace: ref\nspec:\n  color: red\n  shape: round\n",
    );
    if kubectl_bin::minor() >= 25 {
        let refused = c.fails(&["apply", "-f", extra.to_str().unwrap()]);
        assert!(
            refused.contains("unknown field \"spec.shape\""),
            "{refused}"
        );
    }
    c.kubectl(&["apply", "--validate=false", "-f", extra.to_str().unwrap()]);
    assert_eq!(
        c.get_json("widget/w2", "ref")["spec"],
        json!({"color": "red"})
    );
    // Deleting the definition deletes its objects and stops serving the kind.
    c.ok(&["delete", "crd", "widgets.example.com"]);
    assert!(
        c.server
            .store()
            .resource_type_of("example.com/v1", "Widget")
            .is_none()
    );
    let gone = c.fails(&["get", "widgets", "-n", "ref"]);
    assert!(gone.contains("widgets"), "{gone}");
}
