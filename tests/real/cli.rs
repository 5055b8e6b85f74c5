//! kdrift's loop end to end on the real server, headless: the demo's `shop/cart` (Deployment,
//! Service, ServiceAccount) applied into the test's namespace, then each way kubectl writes an
//! object out of band. `check` must report exactly the fields the write changed, attributed to
//! the manager, operation and subresource the real server recorded (a `/scale` write with no
//! time); `diff` shows them with their manager; `accept` commits them to git (then in sync); with
//! git put back, `revert` puts the cluster back in one step (then in sync).

use serde_json::Value;

use crate::case::Case;
use crate::common::kubectl_bin;
use crate::headless_util::drifted_fields;

const CONTAINER: &str = "spec.template.spec.containers[name=cart]";

/// (class, path, manager, operation, subresource) of one drifted field of cart.
type Field = [String; 5];

fn field(class: &str, path: &str, manager: &str, operation: &str) -> Field {
    [class, path, manager, operation, "-"].map(String::from)
}

fn cart() -> Option<Case> {
    Case::demo("cli", "shop", &["shop/cart.yaml"])
}

/// The check report as JSON, and its exit code.
fn report(c: &Case) -> (i32, Value) {
    let check = c.kdrift_ns(&["check", "-o", "json"]);
    (check.code, check.json())
}

/// The drifted fields of cart, and the check's exit code.
fn cart_fields(c: &Case) -> (i32, Vec<Field>) {
    let (code, report) = report(c);
    let key = format!("deployment/{}/cart", c.ns());
    let fields = drifted_fields(&report)
        .into_iter()
        .filter(|f| f[0] == key)
        .map(|[_, class, path, manager, operation, sub]| [class, path, manager, operation, sub])
        .collect();
    (code, fields)
}

fn sorted(mut fields: Vec<Field>) -> Vec<Field> {
    fields.sort();
    fields
}

fn assert_in_sync(c: &Case, after: &str) {
    let check = c.kdrift_ns(&["check"]);
    assert_eq!(check.code, 0, "in sync after {after}: {check:?}");
}

/// Make the write; exactly `fields` drift, with a time unless written through `/scale`, and
/// `diff` names their managers; accept them into git (in sync, one commit naming the
/// managers); put git back; revert the cluster in one step (in sync).
fn settle(c: &Case, write: impl Fn(&Case), fields: Vec<Field>) {
    assert_in_sync(c, "kubectl apply of the manifests");
    write(c);
    let fields = sorted(fields);
    assert_eq!(cart_fields(c), (1, fields.clone()));

    let (_, report) = report(c);
    for item in report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|o| o["items"].as_array().unwrap())
    {
        let via_scale = item["subresource"] == "scale";
        assert_eq!(
            item["time"].is_null(),
            via_scale,
            "a v1.36 server records a time for every write but one through /scale: {item}"
        );
    }

    let diff = c.kdrift_ns(&["diff", "deploy/cart"]);
    assert_eq!(diff.code, 1, "{diff:?}");
    for [_, path, manager, ..] in &fields {
        assert!(
            diff.stdout.contains(&format!("# {manager} (")),
            "diff names {manager} for {path}: {diff:?}"
        );
    }

    let before = c.repo.head();
    let accept = c.kdrift_ns(&["accept", "deploy/cart"]);
    assert_eq!(accept.code, 0, "{accept:?}");
    assert_ne!(c.repo.head(), before, "accept commits");
    let message = c.repo.git(&["log", "-1", "--format=%B"]);
    for [_, path, manager, ..] in &fields {
        assert!(
            message.contains(path.as_str()) && message.contains(manager.as_str()),
            "the commit names {path} and {manager}: {message}"
        );
    }
    assert_in_sync(c, "the accept");

    c.repo.git(&["reset", "--quiet", "--hard", "HEAD~1"]);
    assert_eq!(cart_fields(c), (1, fields), "git put back");
    let revert = c.kdrift_ns(&["revert", "deploy/cart", "--yes"]);
    assert_eq!(revert.code, 0, "{revert:?}");
    assert_in_sync(c, "the revert");
}

#[test]
fn scale_is_kubectl_through_scale_with_no_time() {
    let Some(c) = cart() else { return };
    settle(
        &c,
        |c| {
            c.ok(&["scale", "deployment/cart", "--replicas=4"]);
            let check = c.kdrift_ns(&["check"]);
            assert!(
                check.stdout.contains("kubectl (Update via /scale)"),
                "{check:?}"
            );
        },
        vec![["changed", "spec.replicas", "kubectl", "Update", "scale"].map(String::from)],
    );
}

#[test]
fn set_image_env_and_resources_are_kubectl_set() {
    let Some(c) = cart() else { return };
    settle(
        &c,
        |c| {
            c.ok(&[
                "set",
                "image",
                "deployment/cart",
                "cart=registry.example/shop/cart:0.9.8",
            ]);
            c.ok(&["set", "env", "deployment/cart", "VERBOSE=1"]);
            c.ok(&["set", "resources", "deployment/cart", "--limits=cpu=200m"]);
        },
        vec![
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
            field(
                "added-live",
                &format!("{CONTAINER}.resources.limits.cpu"),
                "kubectl-set",
                "Update",
            ),
        ],
    );
}

#[test]
fn edit_is_kubectl_edit() {
    let Some(c) = cart() else { return };
    settle(
        &c,
        |c| c.edit("deployment/cart", "sed -i 's/cpu: 50m/cpu: 75m/' \"$1\""),
        vec![field(
            "changed",
            &format!("{CONTAINER}.resources.requests.cpu"),
            "kubectl-edit",
            "Update",
        )],
    );
}

#[test]
fn patches_of_every_type_are_kubectl_patch() {
    let Some(c) = cart() else { return };
    settle(
        &c,
        |c| {
            c.ok(&[
                "patch",
                "deployment/cart",
                "--type=merge",
                "-p",
                r#"{"spec":{"minReadySeconds":5}}"#,
            ]);
            c.ok(&[
                "patch",
                "deployment/cart",
                "--type=json",
                "-p",
                r#"[{"op":"replace","path":"/spec/template/spec/containers/0/env/1/value","value":"24h"}]"#,
            ]);
            c.ok(&[
                "patch",
                "deployment/cart",
                "-p",
                r#"{"spec":{"template":{"spec":{"containers":[{"name":"cart","env":[{"name":"TRACE","value":"on"}]}]}}}}"#,
            ]);
        },
        vec![
            field(
                "added-live",
                "spec.minReadySeconds",
                "kubectl-patch",
                "Update",
            ),
            field(
                "changed",
                &format!("{CONTAINER}.env[name=CART_TTL].value"),
                "kubectl-patch",
                "Update",
            ),
            field(
                "added-live",
                &format!("{CONTAINER}.env[name=TRACE]"),
                "kubectl-patch",
                "Update",
            ),
        ],
    );
}

#[test]
fn label_and_annotate_are_their_own_managers() {
    let Some(c) = cart() else { return };
    settle(
        &c,
        |c| {
            c.ok(&["label", "deployment/cart", "tier=web"]);
            c.ok(&["annotate", "deployment/cart", "note=hotfix"]);
        },
        vec![
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

/// The cart manifest with a label and an env variable more: someone's local copy.
fn modified_copy(c: &Case) -> String {
    c.repo
        .read("shop/cart.yaml")
        .replacen(
            "    app.kubernetes.io/part-of: shop\nspec:",
            "    app.kubernetes.io/part-of: shop\n    laptop: \"yes\"\nspec:",
            1,
        )
        .replace(
            "            - name: CART_TTL\n              value: 72h\n",
            "            - name: CART_TTL\n              value: 72h\n            - name: LAPTOP\n              value: \"1\"\n",
        )
}

#[test]
fn client_side_apply_of_a_modified_copy() {
    let Some(c) = cart() else { return };
    settle(
        &c,
        |c| {
            let file = c.file("cart-copy.yaml", &modified_copy(c));
            c.ok(&["apply", "-f", file.to_str().unwrap()]);
        },
        vec![
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
fn server_side_apply_of_a_modified_copy() {
    let Some(c) = cart() else { return };
    settle(
        &c,
        |c| {
            let file = c.file("cart-copy.yaml", &modified_copy(c));
            c.ok(&["apply", "--server-side", "-f", file.to_str().unwrap()]);
        },
        vec![
            field("added-live", "metadata.labels.laptop", "kubectl", "Apply"),
            field(
                "added-live",
                &format!("{CONTAINER}.env[name=LAPTOP]"),
                "kubectl",
                "Apply",
            ),
        ],
    );
}

#[test]
fn server_side_apply_by_another_field_manager() {
    let Some(c) = cart() else { return };
    settle(
        &c,
        |c| {
            let partial = c.file(
                "hotfix.yaml",
                &format!(
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cart\n  namespace: {}\n  labels:\n    hot: fix\nspec:\n  minReadySeconds: 30\n  template:\n    spec:\n      containers:\n        - name: cart\n          env:\n            - name: DEBUG\n              value: \"true\"\n",
                    c.ns()
                ),
            );
            // kubectl first moves the client-side apply's fields to hotfixer, then applies
            // again; the server refuses that second apply (the selector would go), and the
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
        vec![
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
fn replace_is_kubectl_replace() {
    let Some(c) = cart() else { return };
    settle(
        &c,
        |c| {
            // Without its resourceVersion: the controller's status writes would make it stale.
            let live: String = c
                .ok(&["get", "deployment/cart", "-o", "yaml"])
                .lines()
                .filter(|l| !l.trim_start().starts_with("resourceVersion:"))
                .map(|l| format!("{l}\n"))
                .collect();
            let file = c.file(
                "cart-replace.yaml",
                &live.replacen("replicas: 2", "replicas: 3", 1),
            );
            c.ok(&["replace", "-f", file.to_str().unwrap()]);
        },
        vec![field(
            "changed",
            "spec.replicas",
            "kubectl-replace",
            "Update",
        )],
    );
}

#[test]
fn rollout_restart_is_a_restart_not_drift() {
    let Some(c) = cart() else { return };
    assert_in_sync(&c, "kubectl apply of the manifests");
    c.ok(&["rollout", "restart", "deployment/cart"]);
    let (code, fields) = cart_fields(&c);
    assert_eq!(code, 0, "a restart is not drift: {fields:?}");
    assert_eq!(fields.len(), 1, "{fields:?}");
    assert_eq!(fields[0][0], "restarted");
    assert_eq!(fields[0][2], "kubectl-rollout");
    // Accept leaves it out unless named.
    let accept = c.kdrift_ns(&["accept", "deploy/cart"]);
    assert!(
        accept.stderr.contains("a `kubectl rollout restart`"),
        "{accept:?}"
    );
}

/// A few manifests in a namespace of many objects are read by name, from the API server's watch
/// cache at the version the check began with: a write that ended just before the check is
/// always seen, and so is the write that puts it back.
#[test]
fn reads_by_name_see_the_write_just_before_the_check() {
    let configmap = |ns: &str, name: &str, value: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {ns}\ndata:\n  a: \"{value}\"\n"
        )
    };
    let Some(c) = Case::new("byname", |ns| {
        vec![
            ("cm-0.yaml".to_string(), configmap(ns, "cm-0", "0")),
            ("cm-1.yaml".to_string(), configmap(ns, "cm-1", "1")),
        ]
    }) else {
        return;
    };
    // Twenty ConfigMaps of which the manifests describe two: more than four per manifest, so
    // they are read by name.
    let all: Vec<String> = (0..20)
        .map(|i| configmap(c.ns(), &format!("cm-{i}"), &i.to_string()))
        .collect();
    let file = c.file("all.yaml", &all.join("---\n"));
    c.ok(&["apply", "-f", file.to_str().unwrap()]);
    assert_in_sync(&c, "kubectl apply of the manifests");
    for round in 0..5 {
        let value = format!("hotfix-{round}");
        c.ok(&[
            "patch",
            "configmap/cm-1",
            "--type=merge",
            "-p",
            &format!(r#"{{"data":{{"a":"{value}"}}}}"#),
        ]);
        let check = c.kdrift_ns(&["check", "-o", "json"]);
        assert_eq!(check.code, 1, "round {round}: {check:?}");
        let fields = drifted_fields(&check.json());
        assert!(
            fields
                .iter()
                .any(|f| f[0] == format!("configmap/{}/cm-1", c.ns()) && f[2] == "data.a"),
            "round {round}: {fields:?}"
        );
        c.ok(&[
            "patch",
            "configmap/cm-1",
            "--type=merge",
            "-p",
            r#"{"data":{"a":"1"}}"#,
        ]);
        assert_in_sync(&c, &format!("round {round}'s write put back"));
    }
}

/// Issue 46 on the real server: a chart of the checkout that no helm renders (here
/// `KDRIFT_HELM` names no file) leaves git's desired state unread: the check is not green, and
/// says what to fix; the rest is compared.
#[test]
fn a_chart_no_helm_renders_is_a_problem_not_a_green_check() {
    let Some(c) = crate::case::Case::new("no-helm", |ns| {
        vec![
            (
                "chart/Chart.yaml".to_owned(),
                "apiVersion: v2\nname: web\nversion: 0.1.0\n".to_owned(),
            ),
            (
                "chart/templates/cm.yaml".to_owned(),
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: {{ .Values.a | quote }}\n".to_owned(),
            ),
            ("chart/values.yaml".to_owned(), "a: one\n".to_owned()),
            (
                ".kdrift.yaml".to_owned(),
                format!("helm:\n  charts:\n    - path: chart\n      release: web\n      namespace: {ns}\n"),
            ),
            (
                "cm.yaml".to_owned(),
                format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n  namespace: {ns}\ndata:\n  b: two\n"),
            ),
        ]
    }) else {
        return;
    };
    c.ok(&["apply", "-f", c.repo.path("cm.yaml").to_str().unwrap()]);
    let check = c.kdrift_ns(&["check"]);
    assert_eq!(check.code, 2, "{check:?}");
    assert!(
        check.stdout.contains(
            "not rendered: KDRIFT_HELM names \"/nonexistent/helm\", which is not a file: point it at helm"
        ),
        "{check:?}"
    );
    assert!(check.stdout.contains("1 objects: 1 in sync"), "{check:?}");
}

/// A Service made a NodePort out of band, its manifest silent on `type`: the revert removes the
/// field, and its preview is the server's dry run of the end state, in which going back to
/// ClusterIP also drops the `nodePort` the server assigned and `externalTrafficPolicy`, as the
/// revert itself does — not a local edit that keeps them.
#[test]
fn revert_preview_of_a_service_type_is_what_the_server_does() {
    let Some(c) = Case::new("svc-type", |ns| {
        vec![(
            "web.yaml".to_owned(),
            format!(
                "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: {ns}\n\
                 spec:\n  selector:\n    app: web\n  ports:\n  - port: 80\n"
            ),
        )]
    }) else {
        return;
    };
    c.ok(&["apply", "-f", c.repo.path("web.yaml").to_str().unwrap()]);
    assert_in_sync(&c, "kubectl apply of the manifest");
    c.ok(&[
        "patch",
        "svc",
        "web",
        "-p",
        r#"{"spec":{"type":"NodePort"}}"#,
    ]);
    let preview = c.kdrift_ns(&["revert", "svc/web", "--dry-run"]);
    assert_eq!(preview.code, 0, "{preview:?}");
    let removed = |what: &str| {
        preview
            .stdout
            .lines()
            .any(|l| l.starts_with('-') && !l.starts_with("---") && l.contains(what))
    };
    assert!(removed("type: NodePort"), "{}", preview.stdout);
    assert!(
        removed("nodePort:"),
        "the assigned port goes: {}",
        preview.stdout
    );
    assert!(
        removed("externalTrafficPolicy:"),
        "the policy goes: {}",
        preview.stdout
    );

    let revert = c.kdrift_ns(&["revert", "svc/web", "--yes"]);
    assert_eq!(revert.code, 0, "{revert:?}");
    let ports = c.ok(&[
        "get",
        "svc",
        "web",
        "-o",
        "jsonpath={.spec.type} {.spec.ports[*].nodePort} {.spec.externalTrafficPolicy}",
    ]);
    assert_eq!(ports.trim(), "ClusterIP", "{ports}");
    assert_in_sync(&c, "the revert");
}
