//! The real kubectl against the demo cluster: what an operator types, and what the server
//! records (values, `managedFields` manager/operation/subresource as a 1.30+ server does).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::time::Duration;

use common::{Cluster, eventually, kubectl_bin, managed_entry, owns};
use serde_json::Value;

const PATIENCE: Duration = Duration::from_secs(60);

#[test]
fn get_prints_the_server_side_table_and_json() {
    let c = Cluster::start();
    let table = c.ok(&["get", "deployments", "-n", "shop"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]);
    assert!(table.lines().any(|l| l.starts_with("frontend ")), "{table}");

    // The controller creates pods just after start-up; on a loaded machine the first get may
    // come before them (kubectl then prints nothing on stdout and "No resources found" on
    // stderr).
    let mut pods = String::new();
    assert!(
        eventually(Duration::from_secs(60), || {
            let out = c.kubectl(&["get", "pods", "-n", "shop"]);
            assert!(out.status.success(), "{out:?}");
            pods = String::from_utf8(out.stdout).unwrap();
            !pods.trim().is_empty()
        }),
        "no pods in shop"
    );
    let header: Vec<&str> = pods.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]);

    let list: Value =
        serde_json::from_str(&c.ok(&["get", "deployments", "-n", "shop", "-o", "json"])).unwrap();
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["metadata"]["name"].as_str().unwrap())
        .collect();
    let stored: Vec<String> = c
        .server
        .store()
        .list(
            kdrift::sim::resources::ResourceType::DEPLOYMENT,
            Some("shop"),
        )
        .iter()
        .map(|d| d["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, stored);
    assert!(names.contains(&"frontend"));

    let missing = c.fails(&["get", "deployment", "nope", "-n", "shop"]);
    assert_eq!(
        missing.trim(),
        "Error from server (NotFound): deployments.apps \"nope\" not found"
    );
}

#[test]
fn get_watch_prints_a_change_as_it_happens() {
    let c = Cluster::start();
    let (mut child, rx) = c.spawn_lines(&[
        "get",
        "deployment",
        "frontend",
        "-n",
        "shop",
        "-w",
        "--request-timeout=90s",
    ]);
    // The first row arrives, then the scale shows up as a new row reading x/7.
    let first = rx.recv_timeout(PATIENCE).unwrap();
    assert!(first.starts_with("NAME"), "{first}");
    c.ok(&[
        "scale",
        "deployment",
        "frontend",
        "-n",
        "shop",
        "--replicas=7",
    ]);
    let seen = loop {
        match rx.recv_timeout(PATIENCE) {
            Ok(line) if line.starts_with("frontend") && line.contains("/7") => break Some(line),
            Ok(_) => continue,
            Err(_) => break None,
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        seen.is_some(),
        "kubectl get -w never printed the scaled Deployment"
    );
}

#[test]
fn scale_is_recorded_on_the_scale_subresource() {
    let c = Cluster::start();
    assert_eq!(
        c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"])
            .trim(),
        "deployment.apps/cart scaled"
    );
    let d = c.get_json("deployment/cart", "shop");
    assert_eq!(d["spec"]["replicas"], 5);
    // kubectl scale sends no fieldManager: a real server names the manager after the user
    // agent ("kubectl/v1.33.1 ..." → "kubectl") and records the scale subresource.
    let entries = d["metadata"]["managedFields"].as_array().unwrap();
    let entry = entries
        .iter()
        .find(|e| e["manager"] == "kubectl" && e["subresource"] == "scale")
        .unwrap_or_else(|| panic!("no scale entry in {entries:?}"));
    assert_eq!(entry["operation"], "Update");
    assert!(entry["fieldsV1"]["f:spec"]["f:replicas"].is_object());
}

#[test]
fn set_image_env_and_resources_are_owned_by_kubectl_set() {
    let c = Cluster::start();
    // Catalog's autoscaler raises it to its minimum first (a spec change too): wait for it.
    let mut before = Value::Null;
    assert!(
        eventually(PATIENCE, || {
            before = c.get_json("deployment/catalog", "shop");
            before["spec"]["replicas"] == 2
        }),
        "the autoscaler did not scale catalog to 2: {before}"
    );
    let generation = before["metadata"]["generation"].as_i64().unwrap();
    c.ok(&[
        "set",
        "image",
        "deployment/catalog",
        "-n",
        "shop",
        "catalog=registry.example/shop/catalog:9.9.9",
    ]);
    c.ok(&["set", "env", "deployment/catalog", "-n", "shop", "EXTRA=1"]);
    c.ok(&[
        "set",
        "resources",
        "deployment/catalog",
        "-n",
        "shop",
        "--limits=memory=512Mi",
    ]);
    let d = c.get_json("deployment/catalog", "shop");
    let container = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "registry.example/shop/catalog:9.9.9");
    assert!(
        container["env"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "EXTRA" && e["value"] == "1")
    );
    assert_eq!(container["resources"]["limits"]["memory"], "512Mi");
    let entry = managed_entry(&d, "kubectl-set");
    assert_eq!(entry["operation"], "Update");
    assert!(entry.get("subresource").is_none());
    let c0 = r#"k:{"name":"catalog"}"#;
    assert!(owns(
        &d,
        "kubectl-set",
        &[
            "f:spec",
            "f:template",
            "f:spec",
            "f:containers",
            c0,
            "f:image"
        ]
    ));
    assert!(owns(
        &d,
        "kubectl-set",
        &[
            "f:spec",
            "f:template",
            "f:spec",
            "f:containers",
            c0,
            "f:env",
            r#"k:{"name":"EXTRA"}"#
        ]
    ));
    assert!(owns(
        &d,
        "kubectl-set",
        &[
            "f:spec",
            "f:template",
            "f:spec",
            "f:containers",
            c0,
            "f:resources",
            "f:limits",
            "f:memory"
        ]
    ));
    assert_eq!(
        d["metadata"]["generation"],
        generation + 3,
        "three spec changes"
    );
}

#[test]
fn edit_with_an_editor_script_is_recorded_as_kubectl_edit() {
    let c = Cluster::start();
    let out = c.edit(
        "deployment/frontend",
        "shop",
        "sed -i 's/replicas: 2/replicas: 6/' \"$1\"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "deployment.apps/frontend edited"
    );
    let d = c.get_json("deployment/frontend", "shop");
    assert_eq!(d["spec"]["replicas"], 6);
    assert_eq!(managed_entry(&d, "kubectl-edit")["operation"], "Update");
    assert!(owns(&d, "kubectl-edit", &["f:spec", "f:replicas"]));
}

#[test]
fn merge_json_and_strategic_patches_apply_as_kubectl_patch() {
    let c = Cluster::start();
    c.ok(&[
        "patch",
        "deployment/cart",
        "-n",
        "shop",
        "--type=merge",
        "-p",
        r#"{"metadata":{"labels":{"tier":"backend"}}}"#,
    ]);
    c.ok(&[
        "patch",
        "deployment/cart",
        "-n",
        "shop",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/replicas","value":4}]"#,
    ]);
    let strategic = r#"{"spec":{"template":{"spec":{"containers":[{"name":"cart","env":[{"name":"PATCHED","value":"yes"}]}]}}}}"#;
    c.ok(&["patch", "deployment/cart", "-n", "shop", "-p", strategic]);
    let d = c.get_json("deployment/cart", "shop");
    assert_eq!(d["metadata"]["labels"]["tier"], "backend");
    assert_eq!(d["spec"]["replicas"], 4);
    let env = d["spec"]["template"]["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap();
    assert!(
        env.iter().any(|e| e["name"] == "PATCHED"),
        "strategic merge added the variable"
    );
    assert!(
        env.len() > 1,
        "strategic merge kept the other variables: {env:?}"
    );
    assert_eq!(managed_entry(&d, "kubectl-patch")["operation"], "Update");

    let bad = c.fails(&[
        "patch",
        "deployment/cart",
        "-n",
        "shop",
        "--type=json",
        "-p",
        r#"[{"op":"test","path":"/spec/replicas","value":99}]"#,
    ]);
    // The server's 422 has no causes: kubectl 1.32 prints its message, 1.20 only the reason.
    if kubectl_bin::minor() > 20 {
        assert!(bad.contains("testing value /spec/replicas failed"), "{bad}");
    } else {
        assert_eq!(bad.trim(), "The request is invalid");
    }
    let missing = c.fails(&[
        "patch",
        "deployment/nope",
        "-n",
        "shop",
        "--type=merge",
        "-p",
        "{}",
    ]);
    assert!(
        missing.contains("deployments.apps \"nope\" not found"),
        "{missing}"
    );
}

const WEB: &str = "apiVersion: v1
kind: Namespace
metadata:
  name: capture
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: capture
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: registry.example/web:1.0
        ports: [{containerPort: 8080}]
        env: [{name: MODE, value: prod}]
        resources: {requests: {cpu: 100m, memory: 64Mi}}
";

#[test]
fn client_side_apply_creates_then_patches_with_last_applied() {
    let c = Cluster::start();
    let file = c.file("web.yaml", WEB);
    let out = c.ok(&["apply", "-f", file.to_str().unwrap()]);
    assert_eq!(
        out.trim(),
        "namespace/capture created\ndeployment.apps/web created"
    );
    let d = c.get_json("deployment/web", "capture");
    assert!(
        d["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .is_string()
    );
    assert_eq!(
        managed_entry(&d, "kubectl-client-side-apply")["operation"],
        "Update"
    );
    assert_eq!(
        d["spec"]["strategy"]["type"], "RollingUpdate",
        "server defaults filled in"
    );

    let changed = c.file("web2.yaml", &WEB.replace("replicas: 2", "replicas: 3"));
    let out = c.ok(&["apply", "-f", changed.to_str().unwrap()]);
    assert_eq!(
        out.trim(),
        "namespace/capture unchanged\ndeployment.apps/web configured"
    );
    assert_eq!(
        c.get_json("deployment/web", "capture")["spec"]["replicas"],
        3
    );
}

#[test]
fn server_side_apply_owns_fields_and_conflicts_unless_forced() {
    let c = Cluster::start();
    let file = c.file("web.yaml", WEB);
    let out = c.ok(&["apply", "--server-side", "-f", file.to_str().unwrap()]);
    assert_eq!(
        out.trim(),
        "namespace/capture serverside-applied\ndeployment.apps/web serverside-applied"
    );
    let d = c.get_json("deployment/web", "capture");
    assert_eq!(managed_entry(&d, "kubectl")["operation"], "Apply");
    assert!(owns(&d, "kubectl", &["f:spec", "f:replicas"]));

    c.ok(&["scale", "deployment/web", "-n", "capture", "--replicas=5"]);
    let conflict = c.fails(&["apply", "--server-side", "-f", file.to_str().unwrap()]);
    assert!(
        conflict.contains("conflict with \"kubectl\" with subresource \"scale\""),
        "{conflict}"
    );
    assert!(conflict.contains(".spec.replicas"), "{conflict}");

    c.ok(&[
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        file.to_str().unwrap(),
    ]);
    let d = c.get_json("deployment/web", "capture");
    assert_eq!(d["spec"]["replicas"], 2);
    assert!(owns(&d, "kubectl", &["f:spec", "f:replicas"]));
}

#[test]
fn diff_exits_0_in_sync_and_1_when_the_file_differs() {
    let c = Cluster::start();
    let manifest = kdrift::sim::scenario::DEMO_MANIFESTS
        .iter()
        .find(|(p, _)| *p == "shop/frontend.yaml")
        .unwrap()
        .1;
    let file = c.file("frontend.yaml", manifest);
    let in_sync = c.kubectl(&["diff", "-f", file.to_str().unwrap()]);
    assert_eq!(
        in_sync.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&in_sync.stdout),
        String::from_utf8_lossy(&in_sync.stderr)
    );

    c.ok(&["scale", "deployment/frontend", "-n", "shop", "--replicas=4"]);
    let drifted = c.kubectl(&["diff", "-f", file.to_str().unwrap()]);
    assert_eq!(
        drifted.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&drifted.stderr)
    );
    let text = String::from_utf8_lossy(&drifted.stdout);
    assert!(
        text.contains("-  replicas: 4") && text.contains("+  replicas: 2"),
        "{text}"
    );
}

#[test]
fn rollout_status_follows_a_rollout_to_the_end() {
    let c = Cluster::start();
    c.ok(&[
        "set",
        "image",
        "deployment/checkout",
        "-n",
        "shop",
        "*=registry.example/shop/checkout:7.0.0",
    ]);
    let out = c.kubectl(&[
        "rollout",
        "status",
        "deployment/checkout",
        "-n",
        "shop",
        "--timeout=90s",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout
            .trim_end()
            .ends_with("deployment \"checkout\" successfully rolled out"),
        "{stdout}"
    );
    let done = eventually(PATIENCE, || {
        let d = c.get_json("deployment/checkout", "shop");
        d["status"]["updatedReplicas"] == d["spec"]["replicas"]
    });
    assert!(done);
}

#[test]
fn strict_validation_refuses_unknown_fields() {
    let c = Cluster::start();
    let file = c.file(
        "bad.yaml",
        &WEB.replace("  replicas: 2\n", "  replicas: 2\n  replicaz: 3\n"),
    );
    let err = c.fails(&["apply", "-f", file.to_str().unwrap()]);
    if kubectl_bin::minor() >= 25 {
        // Validation on the server (fieldValidation=Strict).
        assert!(err.contains("unknown field \"spec.replicaz\""), "{err}");
    } else {
        // Before 1.25 kubectl validates on the client, with the server's /openapi/v2.
        assert!(
            err.contains("unknown field \"replicaz\" in io.k8s.api.apps.v1.DeploymentSpec"),
            "{err}"
        );
    }
    let err = c.fails(&[
        "patch",
        "deployment/cart",
        "-n",
        "shop",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":"three"}}"#,
    ]);
    assert!(
        err.starts_with("The request is invalid: patch: Invalid value: "),
        "{err}"
    );
}

#[test]
fn create_namespace_and_deployment_send_protobuf_and_roll_out() {
    let c = Cluster::start();
    assert_eq!(
        c.ok(&["create", "namespace", "team-a"]).trim(),
        "namespace/team-a created"
    );
    let out = c.ok(&[
        "create",
        "deployment",
        "web",
        "-n",
        "team-a",
        "--image=nginx:1.25",
        "--replicas=3",
        "--port=8080",
    ]);
    assert_eq!(out.trim(), "deployment.apps/web created");
    let d = c.get_json("deployment/web", "team-a");
    assert_eq!(d["spec"]["replicas"], 3);
    let container = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        (container["name"].as_str(), container["image"].as_str()),
        (Some("nginx"), Some("nginx:1.25"))
    );
    assert_eq!(container["ports"][0]["containerPort"], 8080);
    assert_eq!(
        d["spec"]["strategy"]["type"], "RollingUpdate",
        "no protobuf zero value hides a default"
    );
    assert_eq!(managed_entry(&d, "kubectl-create")["operation"], "Update");
    let out = c.kubectl(&[
        "rollout",
        "status",
        "deployment/web",
        "-n",
        "team-a",
        "--timeout=90s",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn delete_removes_the_deployment_and_what_it_owns() {
    let c = Cluster::start();
    assert_eq!(
        c.ok(&["delete", "deployment", "cart", "-n", "shop"]).trim(),
        "deployment.apps \"cart\" deleted"
    );
    let err = c.fails(&["get", "deployment", "cart", "-n", "shop"]);
    assert!(err.contains("deployments.apps \"cart\" not found"), "{err}");
    let gone = eventually(PATIENCE, || {
        c.ok(&[
            "get",
            "replicasets,pods",
            "-n",
            "shop",
            "-l",
            "app.kubernetes.io/name=cart",
            "-o",
            "name",
        ])
        .trim()
        .is_empty()
    });
    assert!(
        gone,
        "the garbage collector removed cart's ReplicaSets and pods"
    );
}
