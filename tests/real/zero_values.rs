//! Issue 46 on the real server: every non-pointer `omitempty` scalar of the structs the objects
//! of `testdata/zero-values/objects.yaml` use, sent at Go's zero, is dropped (what
//! `kdrift_schema::gotypes` says), and a manifest holding them is in sync right after apply.

use crate::case::Case;
use crate::zero_values_util;

#[test]
fn zero_values_the_server_drops_are_dropped_and_not_drift() {
    let Some(c) = Case::new("zero-values", |ns| {
        let objects = zero_values_util::objects(ns);
        vec![(
            "zero.yaml".to_owned(),
            zero_values_util::manifests(&objects),
        )]
    }) else {
        return;
    };
    let objects = zero_values_util::objects(c.ns());
    let kept = zero_values_util::zeros_kept_by(&objects, |object| {
        let file = c.file("object.json", &object.to_string());
        let args = ["create", "--dry-run=server", "-o", "json", "-f"];
        let out = c.ok(&[&args[..], &[file.to_str().unwrap()]].concat());
        serde_json::from_str(&out).unwrap()
    });
    assert!(kept.is_empty(), "zeros the server stored: {kept:#?}");

    c.ok(&["apply", "-f", c.repo.path("zero.yaml").to_str().unwrap()]);
    let check = c.kdrift_ns(&["check"]);
    assert_eq!(check.code, 0, "in sync right after apply: {check:?}");

    // Applied server-side as helm 4 applies a chart: the applier owns the zeros, the server
    // stores none of them, and the check stays green.
    let applied = c.file(
        "applied.yaml",
        &zero_values_util::manifests_for_apply(&objects),
    );
    c.ok(&[
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=release-tool",
        "-f",
        applied.to_str().unwrap(),
    ]);
    let check = c.kdrift_ns(&["check"]);
    assert_eq!(
        check.code, 0,
        "in sync after a server-side apply: {check:?}"
    );
    let stored: serde_json::Value =
        serde_json::from_str(&c.ok(&["get", "deployment/zero-web", "-o", "json"])).unwrap();
    let pod = &stored["spec"]["template"]["spec"];
    assert!(
        pod.get("hostNetwork").is_none() && pod.get("hostIPC").is_none(),
        "a server stores no zero it drops, applied or not: {pod}"
    );

    // A pointer's zero is kept: `automountServiceAccountToken: false` removed live is drift.
    const PATCH: &str =
        r#"[{"op":"remove","path":"/spec/template/spec/automountServiceAccountToken"}]"#;
    c.ok(&[
        "patch",
        "deployment/zero-web",
        "--type",
        "json",
        "-p",
        PATCH,
    ]);
    let check = c.kdrift_ns(&["check"]);
    assert_eq!(check.code, 1, "{check:?}");
    assert!(
        check
            .stdout
            .contains("spec.template.spec.automountServiceAccountToken  false → (absent)"),
        "{check:?}"
    );
}
