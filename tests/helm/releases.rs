//! Helm releases as desired state, without a chart: `kdrift check`, `diff` and `revert` against
//! the demo cluster holding a release as helm 4 leaves one (its record Secret, created as helm
//! creates it, and the objects of its manifest applied server-side as field manager `helm` with
//! the label and annotations helm adds), then changed with the real kubectl.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::headless_util;
use crate::helm_util;

use common::Cluster;
use headless_util::{Repo, drifted_fields, kdrift, keys_with_status};
use serde_json::Value;

const NAMESPACE: &str = "shop";

fn create(c: &Cluster, name: &str, object: &Value) {
    let file = c.file(name, &object.to_string());
    c.ok(&["create", "-f", file.to_str().unwrap()]);
}

/// The objects of the release's manifest applied as helm 4 applies them.
fn apply_as_helm(c: &Cluster, replicas: u32) {
    let file = c.file(
        "applied.json",
        &helm_util::applied(NAMESPACE, replicas).to_string(),
    );
    c.ok(&[
        "apply",
        "--server-side",
        "--field-manager=helm",
        "-f",
        file.to_str().unwrap(),
    ]);
}

fn record_secret(revision: u64, status: &str, replicas: u32) -> Value {
    helm_util::record_secret(NAMESPACE, revision, status, replicas)
}

/// A demo cluster with release `shop/web` installed at revision 1 (2 replicas), and an empty
/// checkout: the release alone is the desired state.
fn installed() -> (Cluster, Repo) {
    let c = Cluster::start_with(false);
    c.ok(&["create", "namespace", NAMESPACE]);
    create(&c, "record-v1.json", &record_secret(1, "deployed", 2));
    apply_as_helm(&c, 2);
    let repo = Repo::with_files(&[(
        "README.md",
        "no manifests: the release is the desired state\n",
    )]);
    (c, repo)
}

#[test]
fn a_release_installed_is_in_sync_and_a_scale_is_drift_naming_the_release() {
    let (c, repo) = installed();
    let run = kdrift(&c, &repo, &["check", "-n", NAMESPACE, "-o", "json"]);
    assert_eq!(run.code, 0, "in sync right after install: {run:?}");
    let report = run.json();
    let keys = keys_with_status(&report, "in-sync");
    assert_eq!(
        keys,
        [
            "configmap/shop/web-settings",
            "secret/shop/web-token",
            "deployment/shop/web"
        ],
        "{run:?}"
    );
    let deployment = &report["objects"][2];
    assert_eq!(deployment["file"], "helm:shop/web rev 1 (chart web-1.2.0)");
    assert_eq!(deployment["helm"]["revision"], 1);
    assert_eq!(deployment["helm"]["status"], "deployed");

    c.ok(&["scale", "deployment/web", "-n", NAMESPACE, "--replicas=5"]);
    let run = kdrift(&c, &repo, &["check", "-n", NAMESPACE, "-o", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        drifted_fields(&run.json()),
        [[
            "deployment/shop/web",
            "changed",
            "spec.replicas",
            "kubectl",
            "Update",
            "scale"
        ]
        .map(str::to_owned)]
    );
    let text = kdrift(&c, &repo, &["check", "-n", NAMESPACE]);
    assert!(
        text.stdout.contains(
            "deployment/shop/web  spec.replicas  2 → 5  helm:shop/web rev 1 (chart web-1.2.0) · kubectl (Update via /scale)"
        ),
        "{text:?}"
    );
    let diff = kdrift(&c, &repo, &["diff", "deployment/web", "-n", NAMESPACE]);
    assert_eq!(diff.code, 1, "{diff:?}");
    assert!(
        diff.stdout
            .contains("--- helm:shop/web rev 1 (chart web-1.2.0):23 (release)"),
        "the release is the desired state, not git: {diff:?}"
    );
}

#[test]
fn revert_goes_back_to_the_release_in_one_step_as_helm_s_own_field_manager() {
    let (c, repo) = installed();
    c.ok(&["scale", "deployment/web", "-n", NAMESPACE, "--replicas=5"]);
    c.ok(&["set", "env", "deployment/web", "-n", NAMESPACE, "DEBUG=1"]);
    let run = kdrift(
        &c,
        &repo,
        &["revert", "deployment/web", "-n", NAMESPACE, "--yes"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("as field manager \"helm\""), "{run:?}");
    assert!(
        run.stdout.contains("a later `helm upgrade`"),
        "the revert says helm's next upgrade is unaffected: {run:?}"
    );
    let live = c.get_json("deployment/web", NAMESPACE);
    assert_eq!(live["spec"]["replicas"], 2);
    let helm = common::managed_entry(&live, "helm");
    assert_eq!(helm["operation"], "Apply");
    assert!(common::owns(&live, "helm", &["f:spec", "f:replicas"]));
    let managers: Vec<&str> = live["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["operation"] == "Apply")
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(
        managers,
        ["helm"],
        "no kdrift apply entry helm would conflict with"
    );
    let check = kdrift(&c, &repo, &["check", "-n", NAMESPACE]);
    assert_eq!(check.code, 0, "{check:?}");
}

#[test]
fn a_new_revision_is_the_desired_state_and_a_newer_failure_is_said() {
    let (c, repo) = installed();
    // `helm upgrade --set replicaCount=3`: revision 2 deployed, revision 1 superseded.
    create(&c, "record-v2.json", &record_secret(2, "deployed", 3));
    c.ok(&[
        "label",
        "secret/sh.helm.release.v1.web.v1",
        "-n",
        NAMESPACE,
        "status=superseded",
        "--overwrite",
    ]);
    apply_as_helm(&c, 3);
    let run = kdrift(&c, &repo, &["check", "-n", NAMESPACE, "-o", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.json()["objects"][2]["file"],
        "helm:shop/web rev 2 (chart web-1.2.0)"
    );
    // Revision 3 failed half-way: revision 2 stays the desired state, and the source says it.
    create(&c, "record-v3.json", &record_secret(3, "failed", 4));
    let run = kdrift(&c, &repo, &["check", "-n", NAMESPACE, "-o", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let report = run.json();
    assert_eq!(
        report["objects"][2]["file"],
        "helm:shop/web rev 2 (chart web-1.2.0; rev 3 failed)"
    );
    assert_eq!(report["objects"][2]["helm"]["newer"]["status"], "failed");
}

/// Issue 47: while a newer revision is `pending-upgrade` (helm mid-upgrade: it applied the
/// new objects and has not marked the revision deployed yet), the live fields the pending
/// revision sets are helm at work, not drift: a state of their own (`helm-upgrading`), outside
/// the exit code; a revert leaves them to helm by default and says why. A field the pending
/// revision does not set is still drift.
#[test]
fn fields_a_pending_revision_sets_are_helm_at_work_not_drift() {
    let (c, repo) = installed();
    create(
        &c,
        "record-v2.json",
        &record_secret(2, "pending-upgrade", 5),
    );
    apply_as_helm(&c, 5);
    let run = kdrift(&c, &repo, &["check", "-n", NAMESPACE, "-o", "json"]);
    assert_eq!(run.code, 0, "helm's own rollout is not drift: {run:?}");
    let report = run.json();
    let web = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["key"].as_str().unwrap().starts_with("deployment/"))
        .unwrap()
        .clone();
    assert_eq!(
        web["file"],
        "helm:shop/web rev 1 (chart web-1.2.0; rev 2 pending-upgrade)"
    );
    let replicas = web["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["path"] == "spec.replicas")
        .unwrap_or_else(|| panic!("{web}"));
    assert_eq!(replicas["class"], "helm-upgrading", "{web}");
    let text = kdrift(&c, &repo, &["check", "-n", NAMESPACE]);
    assert_eq!(text.code, 0, "{text:?}");
    assert!(
        text.stdout.contains("helm mid-upgrade"),
        "named apart from a pending upgrade (git ahead): {text:?}"
    );
    // A change of a field the pending revision does not set is drift all the same.
    c.ok(&[
        "annotate",
        "deployment/web",
        "-n",
        NAMESPACE,
        "oncall=hotfix",
    ]);
    let run = kdrift(&c, &repo, &["check", "-n", NAMESPACE]);
    assert_eq!(run.code, 1, "{run:?}");
    // A revert leaves helm's fields to helm, and says so; the annotation goes.
    let revert = kdrift(
        &c,
        &repo,
        &["revert", "deployment/web", "-n", NAMESPACE, "--yes"],
    );
    assert_eq!(revert.code, 0, "{revert:?}");
    assert!(
        revert.stdout.contains("leaves spec.replicas as it is live")
            && revert.stdout.contains("helm is mid-upgrade"),
        "{revert:?}"
    );
    let live = c.get_json("deployment/web", NAMESPACE);
    assert_eq!(live["spec"]["replicas"], 5);
    assert!(
        live["metadata"]["annotations"].get("oncall").is_none(),
        "{live}"
    );
}

#[test]
fn helm_s_records_are_never_unmanaged_and_a_broken_record_is_named() {
    let (c, repo) = installed();
    let run = kdrift(
        &c,
        &repo,
        &["check", "-n", NAMESPACE, "--unmanaged", "-o", "json"],
    );
    assert_eq!(
        run.code, 0,
        "the record Secret is helm's, not unmanaged: {run:?}"
    );
    // Another release whose record does not decode: named, exit 2, and the rest still compared.
    let broken = helm_util::raw_record(NAMESPACE, "db", 1, "deployed", "H4sIAAAA-not-gzip");
    create(&c, "broken.json", &broken);
    c.ok(&["scale", "deployment/web", "-n", NAMESPACE, "--replicas=4"]);
    let run = kdrift(&c, &repo, &["check", "-n", NAMESPACE, "-o", "json"]);
    assert_eq!(run.code, 2, "{run:?}");
    let report = run.json();
    let problems: Vec<&str> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["message"].as_str().unwrap())
        .collect();
    assert_eq!(problems.len(), 1, "{run:?}");
    assert!(
        problems[0].starts_with("secret/shop/sh.helm.release.v1.db.v1: skipped: a Helm release record that does not decode: "),
        "{problems:?}"
    );
    assert_eq!(
        report["summary"]["drifted"], 1,
        "web is still compared: {run:?}"
    );
}

/// Issue 46: a release may put objects into another namespace than its own (monitoring and
/// ingress charts do). `-n THAT_NS` finds them by their own namespace, compared with the
/// release, and a change to one is drift naming the release.
#[test]
fn a_release_s_object_in_another_namespace_is_found_with_n_of_its_own_namespace() {
    let c = Cluster::start_with(false);
    for ns in ["monitoring", NAMESPACE] {
        c.ok(&["create", "namespace", ns]);
    }
    let manifest = "---\n# Source: probes/templates/rules.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe-rules\n  namespace: shop\ndata:\n  rule: up\n";
    let record = helm_util::record_of(
        "monitoring",
        "probes",
        1,
        ("probes", "0.3.0"),
        serde_json::json!({}),
        manifest,
    );
    create(&c, "probes-record.json", &record);
    let mut applied = helm_util::applied_manifest("monitoring", "probes", manifest);
    // The object keeps the namespace its template names.
    applied["items"][0]["metadata"]["namespace"] = serde_json::json!(NAMESPACE);
    let file = c.file("probes.json", &applied.to_string());
    c.ok(&[
        "apply",
        "--server-side",
        "--field-manager=helm",
        "-f",
        file.to_str().unwrap(),
    ]);
    let repo = Repo::with_files(&[("README.md", "the release is the desired state\n")]);
    let run = kdrift(&c, &repo, &["check", "-n", NAMESPACE, "-o", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        keys_with_status(&run.json(), "in-sync"),
        ["configmap/shop/probe-rules"],
        "{run:?}"
    );
    c.ok(&[
        "patch",
        "configmap/probe-rules",
        "-n",
        NAMESPACE,
        "--type",
        "merge",
        "-p",
        r#"{"data":{"rule":"down"}}"#,
    ]);
    let run = kdrift(&c, &repo, &["check", "-n", NAMESPACE]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains(
            "configmap/shop/probe-rules  data.rule  up → down  helm:monitoring/probes rev 1"
        ),
        "{run:?}"
    );
}
