//! Answers found wrong on third-party repositories (issue 29), on the real server: a Service
//! port changed live where the manifest leaves `protocol` out is one changed item, accepted in
//! place and reverted without two ports of one name (which a real server refuses); defaults a
//! server fills in from another field (`externalTrafficPolicy` for a NodePort, the ClientIP
//! affinity timeout) are not drift; removing a nested field added live takes the parents it
//! empties, so one revert is in sync.

use serde_json::Value;

use crate::case::Case;

fn service(ns: &str, name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  selector:\n    app: {name}\n  ports:\n    - name: http\n      port: 80\n      targetPort: 8080\n"
    )
}

/// The drift lines of `check`'s text report that name `key`.
fn lines_of<'a>(stdout: &'a str, key: &str) -> Vec<&'a str> {
    stdout.lines().filter(|l| l.starts_with(key)).collect()
}

#[test]
fn a_port_changed_live_where_the_manifest_leaves_protocol_out_is_one_item_accepted_and_reverted() {
    let Some(c) = Case::new("third-party-port", |ns| {
        vec![("web.yaml".to_owned(), service(ns, "web"))]
    }) else {
        return;
    };
    c.ok(&["apply", "-f", c.repo.path("web.yaml").to_str().unwrap()]);
    assert_eq!(c.kdrift_ns(&["check"]).code, 0);
    c.ok(&[
        "patch",
        "service/web",
        "--type",
        "json",
        "-p",
        r#"[{"op":"replace","path":"/spec/ports/0/port","value":8081}]"#,
    ]);

    let check = c.kdrift_ns(&["check"]);
    assert_eq!(check.code, 1, "{check:?}");
    let key = format!("service/{}/web", c.ns());
    let lines = lines_of(&check.stdout, &key);
    assert_eq!(lines.len(), 1, "one changed item: {check:?}");
    assert!(
        lines[0].contains("80") && lines[0].contains("8081") && lines[0].contains("kubectl-patch"),
        "{check:?}"
    );

    let accept = c.kdrift_ns(&["accept", "service/web"]);
    assert_eq!(accept.code, 0, "{accept:?}");
    let text = std::fs::read_to_string(c.repo.path("web.yaml")).unwrap();
    assert!(text.contains("port: 8081"), "{text}");
    assert!(!text.contains("port: 80\n"), "the old port is gone: {text}");
    assert_eq!(text.matches("- name: http").count(), 1, "{text}");
    assert!(
        !text.contains("protocol"),
        "the manifest still leaves it out: {text}"
    );
    let after = c.kdrift_ns(&["check"]);
    assert_eq!(after.code, 0, "in sync after the accept: {after:?}");

    // Git back at port 80: one revert puts the live port back, as one item.
    c.repo.git(&["reset", "--hard", "HEAD~1"]);
    let revert = c.kdrift_ns(&["revert", "service/web", "--yes"]);
    assert_eq!(revert.code, 0, "{revert:?}");
    let check = c.kdrift_ns(&["check"]);
    assert_eq!(check.code, 0, "in sync after one revert: {check:?}");
    let ports: Value =
        serde_json::from_str(&c.ok(&["get", "service/web", "-o", "jsonpath={.spec.ports}"]))
            .unwrap();
    let ports = ports.as_array().unwrap();
    assert_eq!(ports.len(), 1, "{ports:?}");
    assert_eq!(ports[0]["port"], 80, "{ports:?}");
}

#[test]
fn defaults_that_follow_another_field_are_not_drift_and_one_revert_is_in_sync() {
    let Some(c) = Case::new("third-party-defaults", |ns| {
        vec![("api.yaml".to_owned(), service(ns, "api"))]
    }) else {
        return;
    };
    c.ok(&["apply", "-f", c.repo.path("api.yaml").to_str().unwrap()]);
    assert_eq!(c.kdrift_ns(&["check"]).code, 0);
    c.ok(&[
        "patch",
        "service/api",
        "-p",
        r#"{"spec":{"type":"NodePort","sessionAffinity":"ClientIP"}}"#,
    ]);
    let check = c.kdrift_ns(&["check"]);
    assert_eq!(check.code, 1, "{check:?}");
    let key = format!("service/{}/api", c.ns());
    let lines = lines_of(&check.stdout, &key);
    assert!(
        lines.iter().any(|l| l.contains("spec.type")),
        "the type is the drift: {check:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("spec.sessionAffinity ")),
        "{check:?}"
    );
    for default in ["externalTrafficPolicy", "timeoutSeconds"] {
        assert!(
            !check.stdout.contains(default),
            "{default} is what the server filled in: {check:?}"
        );
    }
    let revert = c.kdrift_ns(&["revert", "service/api", "--yes"]);
    assert_eq!(revert.code, 0, "{revert:?}");
    let check = c.kdrift_ns(&["check"]);
    assert_eq!(check.code, 0, "in sync after one revert: {check:?}");
}

#[test]
fn a_nested_field_added_live_is_reverted_with_the_parents_it_empties_in_one_step() {
    let Some(c) = Case::demo("third-party-nested", "shop", &["shop/cart.yaml"]) else {
        return;
    };
    assert_eq!(c.kdrift_ns(&["check"]).code, 0);
    c.ok(&[
        "patch",
        "deployment/cart",
        "--type",
        "json",
        "-p",
        r#"[{"op":"add","path":"/spec/template/spec/containers/0/securityContext","value":{"capabilities":{"add":["NET_ADMIN"]}}}]"#,
    ]);
    let check = c.kdrift_ns(&["check"]);
    assert_eq!(check.code, 1, "{check:?}");
    assert!(check.stdout.contains("NET_ADMIN"), "{check:?}");
    let revert = c.kdrift_ns(&["revert", "deployment/cart", "--yes"]);
    assert_eq!(revert.code, 0, "{revert:?}");
    let check = c.kdrift_ns(&["check"]);
    assert_eq!(check.code, 0, "in sync after one revert: {check:?}");
    let context = c.ok(&[
        "get",
        "deployment/cart",
        "-o",
        "jsonpath={.spec.template.spec.containers[0].securityContext}",
    ]);
    assert_eq!(context.trim(), "", "no emptied parent left: {context}");
}
