//! The drift engine on objects captured from real Kubernetes API servers
//! (`testdata/kubernetes-1.20`, `testdata/kubernetes-1.36`): `web.yaml` applied, then changed
//! out of band.
use std::path::Path;
use std::sync::Arc;

use kdrift::drift::{Class, LiveObject, ObjectStatus, compare};
use kdrift::manifest::{Config, ManifestObject, parse::parse_file};

const REFERENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/kubernetes-1.20");
const REFERENCE_136: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/kubernetes-1.36");

/// `web.yaml` of a reference folder: the manifest in git.
fn manifest_in(dir: &str) -> ManifestObject {
    let file: Arc<Path> = Arc::from(Path::new(dir).join("web.yaml").as_path());
    let text = std::fs::read_to_string(&*file).expect("web.yaml");
    let mut parsed = parse_file(&file, &Arc::from(text), "default");
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    parsed.objects.remove(0)
}

fn manifest() -> ManifestObject {
    manifest_in(REFERENCE)
}

fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("reference object");
    serde_json::from_str(&text).expect("JSON")
}

fn live(name: &str) -> LiveObject {
    LiveObject::from_value(
        read_json(&Path::new(REFERENCE).join(name)),
        kdrift::schema::Schemas::builtin(),
    )
    .expect("a Kubernetes object")
}

/// (class, path, manager) of every item, for comparison with what a user should see.
fn summary(name: &str) -> (ObjectStatus, Vec<(Class, String, Option<String>)>) {
    let drift = compare(&manifest(), &live(name), &Config::default());
    let items = drift
        .items
        .iter()
        .map(|i| (i.class, i.path.to_string(), i.attribution.manager.clone()))
        .collect();
    (drift.status, items)
}

#[test]
fn right_after_apply_the_object_is_in_sync() {
    assert_eq!(
        summary("deploy-after-client-apply.json"),
        (ObjectStatus::InSync, vec![])
    );
}

#[test]
fn set_env_and_set_resources_are_added_live_by_kubectl_set() {
    let kubectl_set = Some("kubectl-set".to_owned());
    assert_eq!(
        summary("deploy-after-set-env-and-resources.json"),
        (
            ObjectStatus::Drifted,
            vec![
                (
                    Class::AddedLive,
                    "spec.template.spec.containers[name=web].env[name=EXTRA]".to_owned(),
                    kubectl_set.clone()
                ),
                (
                    Class::AddedLive,
                    "spec.template.spec.containers[name=web].resources.limits.memory".to_owned(),
                    kubectl_set
                ),
            ]
        )
    );
    let drift = compare(
        &manifest(),
        &live("deploy-after-set-env-and-resources.json"),
        &Config::default(),
    );
    assert_eq!(
        drift.items[0].live,
        Some(serde_json::json!({"name": "EXTRA", "value": "1"}))
    );
    assert_eq!(drift.items[1].live, Some(serde_json::json!("256Mi")));
    assert_eq!(
        drift.items[0].attribution.operation.as_deref(),
        Some("Update")
    );
    assert_eq!(
        drift.items[0].attribution.time.as_deref(),
        Some("2026-11-22T02:59:15Z")
    );
}

#[test]
fn scale_on_an_old_server_is_changed_with_the_manager_unknown() {
    let (status, items) = summary("deploy-after-scale.json");
    assert_eq!(status, ObjectStatus::Drifted);
    // The capture follows the set env / set resources one, so those stay added live.
    let kubectl_set = Some("kubectl-set".to_owned());
    assert_eq!(
        items,
        [
            (Class::Changed, "spec.replicas".to_owned(), None),
            (
                Class::AddedLive,
                "spec.template.spec.containers[name=web].env[name=EXTRA]".to_owned(),
                kubectl_set.clone()
            ),
            (
                Class::AddedLive,
                "spec.template.spec.containers[name=web].resources.limits.memory".to_owned(),
                kubectl_set
            ),
        ]
    );
    let drift = compare(
        &manifest(),
        &live("deploy-after-scale.json"),
        &Config::default(),
    );
    assert_eq!(
        (drift.items[0].manifest.clone(), drift.items[0].live.clone()),
        (Some(2.into()), Some(4.into()))
    );
}

fn now() -> jiff::Timestamp {
    "2026-11-22T03:11:15Z".parse().expect("time")
}

#[test]
fn text_report_has_one_line_per_field_with_manager_and_age() {
    let manifest = manifest();
    let mut report = kdrift::drift::DriftReport::default();
    report.add(
        compare(
            &manifest,
            &live("deploy-after-scale.json"),
            &Config::default(),
        ),
        Some(&manifest),
        None,
    );
    let text = report.to_text(now());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "deployment/capture/web  spec.replicas  2 → 4  manager unknown",
            "deployment/capture/web  spec.template.spec.containers[name=web].env[name=EXTRA]  (absent) → {\"name\":\"EXTRA\",\"value\":\"1\"}  kubectl-set (Update) 12m ago",
            "deployment/capture/web  spec.template.spec.containers[name=web].resources.limits.memory  (absent) → 256Mi  kubectl-set (Update) 12m ago",
            "1 objects: 0 in sync, 1 drifted (3 fields), 0 missing, 0 unmanaged, 0 errors; 0 problems, 0 notes",
        ]
    );
    assert_eq!(report.exit_code(), 1);
}

#[test]
fn json_report_names_file_line_class_path_values_and_manager() {
    let manifest = manifest();
    let mut report = kdrift::drift::DriftReport::default();
    report.add(
        compare(
            &manifest,
            &live("deploy-after-set-env-and-resources.json"),
            &Config::default(),
        ),
        Some(&manifest),
        None,
    );
    let json = report.to_json();
    let object = &json["objects"][0];
    assert_eq!(object["key"], "deployment/capture/web");
    assert_eq!(object["status"], "drifted");
    assert_eq!(object["line"], 1);
    assert!(
        object["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("web.yaml"))
    );
    let item = &object["items"][0];
    assert_eq!(item["class"], "added-live");
    assert_eq!(
        item["path"],
        "spec.template.spec.containers[name=web].env[name=EXTRA]"
    );
    assert_eq!(
        item["pointer"],
        "/spec/template/spec/containers/web/env/EXTRA"
    );
    assert_eq!(item["manifest"], serde_json::Value::Null);
    assert_eq!(
        item["live"],
        serde_json::json!({"name": "EXTRA", "value": "1"})
    );
    assert_eq!(item["manager"], "kubectl-set");
    assert_eq!(item["operation"], "Update");
    assert_eq!(item["time"], "2026-11-22T02:59:15Z");
    // The env list is where the new entry would go.
    assert_eq!(item["line"], 17);
    assert_eq!(json["exit_code"], 1);
    assert_eq!(json["summary"]["fields"], 2);
}

#[test]
fn diff_shows_live_values_in_the_manifest_shape_annotated() {
    let manifest = manifest();
    let drift = compare(
        &manifest,
        &live("deploy-after-scale.json"),
        &Config::default(),
    );
    let lines =
        kdrift::drift::diff::diff_lines(&manifest.body.to_value(), &drift, "web.yaml", now(), 1);
    let text = kdrift::drift::diff::render(&lines, false);
    assert!(
        text.contains("-  replicas: 2\n+  replicas: 4  # manager unknown\n"),
        "{text}"
    );
    assert!(text.contains("           value: prod\n+        - name: EXTRA  # kubectl-set (Update) 12m ago\n+          value: \"1\"\n"), "{text}");
    assert!(
        text.contains(
            "+          limits:\n+            memory: 256Mi  # kubectl-set (Update) 12m ago\n"
        ),
        "{text}"
    );
    let annotated: Vec<_> = lines.iter().filter_map(|l| l.item).collect();
    assert_eq!(annotated, [0, 1, 2]);
}

#[test]
fn the_reduced_extract_keeps_only_what_drift_reads_and_gives_the_same_drift() {
    let manifest = manifest();
    for name in [
        "deploy-after-client-apply.json",
        "deploy-after-set-env-and-resources.json",
        "deploy-after-scale.json",
    ] {
        let full = live(name);
        let mut reduced = full.clone();
        reduced.reduce_to(&manifest.body.to_value(), &Config::default());
        assert_eq!(
            compare(&manifest, &reduced, &Config::default()),
            compare(&manifest, &full, &Config::default()),
            "{name}"
        );
        let spec = &reduced.body["spec"]["template"]["spec"];
        assert_eq!(spec.get("dnsPolicy"), None, "{name}");
        assert_eq!(
            spec["containers"][0].get("terminationMessagePath"),
            None,
            "{name}"
        );
        let (small, big) = (reduced.body.to_string().len(), full.body.to_string().len());
        assert!(small * 3 < big * 2, "{name}: {small} of {big} bytes");
    }
}

#[test]
fn kdrift_diff_names_the_file_line_of_each_hunk() {
    let manifest = manifest();
    let drift = compare(
        &manifest,
        &live("deploy-after-scale.json"),
        &Config::default(),
    );
    let text = kdrift::drift::diff::unified(None, &manifest, &drift, now(), false);
    let hunks: Vec<&str> = text.lines().filter(|l| l.starts_with("@@")).collect();
    assert_eq!(hunks.len(), 2, "{text}");
    assert!(hunks[0].ends_with("web.yaml:8"), "{text}");
    // The env list and the resources of the container: lines 17 and 18 of web.yaml.
    assert!(hunks[1].ends_with("web.yaml:17"), "{text}");
}

// An applier is trusted only for what the manifest in git says (1.36 captures): `web.yaml` was
// applied with `kubectl apply`, then `hotfixer` server-side applied a partial config (a label,
// `minReadySeconds`, an env var), then someone ran `kubectl apply -f` of a hand-edited copy
// (another label and env var).

fn live_136(name: &str) -> LiveObject {
    let path = Path::new(REFERENCE_136).join("objects").join(name);
    LiveObject::from_value(read_json(&path), kdrift::schema::Schemas::builtin())
        .expect("a Kubernetes object")
}

type Row = (Class, String, Option<String>, Option<String>);

/// (class, path, manager, time) of every item, sorted by path.
fn summary_136(live: &LiveObject, config: &Config) -> (ObjectStatus, Vec<Row>) {
    let drift = compare(&manifest_in(REFERENCE_136), live, config);
    let mut items: Vec<Row> = drift
        .items
        .iter()
        .map(|i| {
            (
                i.class,
                i.path.to_string(),
                i.attribution.manager.clone(),
                i.attribution.time.clone(),
            )
        })
        .collect();
    items.sort_by(|a, b| a.1.cmp(&b.1));
    (drift.status, items)
}

fn row(path: &str, manager: &str, time: &str) -> Row {
    (
        Class::AddedLive,
        path.to_owned(),
        Some(manager.to_owned()),
        Some(time.to_owned()),
    )
}

const SSA_TIME: &str = "2026-11-23T23:00:36Z";
const CSA_TIME: &str = "2026-11-23T23:00:38Z";

#[test]
fn a_server_side_apply_by_another_manager_is_drift_attributed_to_it() {
    // kubectl moved the client-side apply's fields (the server's defaults among them) to
    // hotfixer's set: only what hotfixer's config added is drift, not the defaults.
    assert_eq!(
        summary_136(
            &live_136("deployment-web.after-ssa-by-other-manager.json"),
            &Config::default()
        ),
        (
            ObjectStatus::Drifted,
            vec![
                row("metadata.labels.hot", "hotfixer", SSA_TIME),
                row("spec.minReadySeconds", "hotfixer", SSA_TIME),
                row(
                    "spec.template.spec.containers[name=web].env[name=DEBUG]",
                    "hotfixer",
                    SSA_TIME
                ),
            ]
        )
    );
}

#[test]
fn a_client_side_apply_of_a_modified_copy_is_drift_attributed_to_that_apply() {
    let (status, items) = summary_136(
        &live_136("deployment-web.after-client-apply-of-modified-copy.json"),
        &Config::default(),
    );
    assert_eq!(status, ObjectStatus::Drifted);
    assert_eq!(
        items,
        vec![
            row("metadata.labels.hot", "hotfixer", SSA_TIME),
            row(
                "metadata.labels.laptop",
                "kubectl-client-side-apply",
                CSA_TIME
            ),
            row("spec.minReadySeconds", "hotfixer", SSA_TIME),
            row(
                "spec.template.metadata.labels.laptop",
                "kubectl-client-side-apply",
                CSA_TIME
            ),
            row(
                "spec.template.spec.containers[name=web].env[name=DEBUG]",
                "hotfixer",
                SSA_TIME
            ),
            row(
                "spec.template.spec.containers[name=web].env[name=LAPTOP]",
                "kubectl-client-side-apply",
                CSA_TIME
            ),
        ]
    );
}

#[test]
fn the_reduced_extract_of_the_live_view_finds_the_same_drift() {
    let config = Config::default();
    let manifest = manifest_in(REFERENCE_136);
    for name in [
        "deployment-web.after-ssa-by-other-manager.json",
        "deployment-web.after-client-apply-of-modified-copy.json",
    ] {
        let full = live_136(name);
        let mut reduced = full.clone();
        reduced.reduce_to(&manifest.body.to_value(), &config);
        assert_eq!(
            summary_136(&reduced, &config),
            summary_136(&full, &config),
            "{name}"
        );
        // The applier's sets are cut to where they leave the manifest.
        for entry in &reduced.managers {
            assert!(entry.fields.paths().len() <= 12, "{name}: {entry:?}");
        }
    }
}

#[test]
fn a_value_the_client_side_apply_set_otherwise_is_attributed_to_it() {
    // The applied copy set replicas 5 where git says 2: changed, by that apply.
    let mut value = read_json(
        &Path::new(REFERENCE_136)
            .join("objects")
            .join("deployment-web.after-client-apply-of-modified-copy.json"),
    );
    let annotation = "kubectl.kubernetes.io/last-applied-configuration";
    let applied = value["metadata"]["annotations"][annotation]
        .as_str()
        .expect("annotation")
        .replace("\"replicas\":2", "\"replicas\":5");
    value["metadata"]["annotations"][annotation] = serde_json::json!(applied);
    value["spec"]["replicas"] = serde_json::json!(5);
    let live = LiveObject::from_value(value, kdrift::schema::Schemas::builtin()).expect("object");
    let (_, items) = summary_136(&live, &Config::default());
    let replicas = items.iter().find(|i| i.1 == "spec.replicas");
    assert_eq!(
        replicas,
        Some(&(
            Class::Changed,
            "spec.replicas".to_owned(),
            Some("kubectl-client-side-apply".to_owned()),
            Some(CSA_TIME.to_owned())
        ))
    );
}

/// The manifest `kubectl apply` applied to make a 1.36 capture: its last-applied annotation.
fn applied_manifest(name: &str) -> ManifestObject {
    let capture = read_json(
        &Path::new(REFERENCE_136)
            .join("objects")
            .join(format!("{name}.after-client-apply.json")),
    );
    let text =
        capture["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .as_str()
            .expect("applied with kubectl apply")
            .to_owned();
    let file: Arc<Path> = Arc::from(Path::new(&format!("{name}.json")));
    let mut parsed = parse_file(&file, &Arc::from(text), "default");
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    parsed.objects.remove(0)
}

/// The schemas of a 1.36 server: the built-in ones and the custom resource's captured document.
fn schemas_136() -> kdrift::schema::Schemas {
    let mut schemas = kdrift::schema::Schemas::builtin().clone();
    let widget = std::fs::read(Path::new(REFERENCE_136).join("openapi/apis__example.com__v1.json"))
        .expect("the custom resource's OpenAPI document");
    schemas.add_document(&widget).expect("an OpenAPI document");
    schemas
}

/// (class, path, manager) of the drift of a 1.36 capture against its applied manifest.
fn drift_136(name: &str, state: &str) -> (ObjectStatus, Vec<(Class, String, Option<String>)>) {
    let live = LiveObject::from_value(
        read_json(
            &Path::new(REFERENCE_136)
                .join("objects")
                .join(format!("{name}.{state}.json")),
        ),
        &schemas_136(),
    )
    .expect("a Kubernetes object");
    let drift = compare(&applied_manifest(name), &live, &Config::default());
    let items = drift
        .items
        .iter()
        .map(|i| (i.class, i.path.to_string(), i.attribution.manager.clone()))
        .collect();
    (drift.status, items)
}

const CAPTURED_136: &[&str] = &[
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
    "crd-widgets",
    "widget-w1",
];

#[test]
fn every_kind_a_real_server_stored_after_kubectl_apply_is_in_sync() {
    for name in CAPTURED_136 {
        assert_eq!(
            drift_136(name, "after-client-apply"),
            (ObjectStatus::InSync, vec![]),
            "{name}: a false positive right after kubectl apply"
        );
    }
}

#[test]
fn out_of_band_changes_of_every_kind_are_named_with_their_managers() {
    let who = |m: &str| Some(m.to_owned());
    type Expected<'a> = Vec<(Class, &'a str, Option<String>)>;
    let cases: Vec<(&str, Expected)> = vec![
        (
            "configmap-flags",
            vec![
                (Class::Changed, "data.beta", who("kubectl-patch")),
                (Class::Changed, "data.mode", who("kubectl-edit")),
            ],
        ),
        (
            "secret-db",
            vec![
                // The rotator's apply changed the password and dropped the user.
                (Class::Changed, "data.password", who("rotator")),
                (Class::RemovedLive, "data.user", None),
            ],
        ),
        (
            "service-web",
            // The `externalTrafficPolicy: Cluster` the server filled in for the new type is
            // not drift: the type is.
            vec![(Class::AddedLive, "spec.type", who("kubectl-patch"))],
        ),
        (
            "statefulset-db",
            vec![(Class::Changed, "spec.replicas", who("kubectl"))],
        ),
        (
            "daemonset-agent",
            vec![(
                Class::Changed,
                "spec.template.spec.containers[name=agent].image",
                who("kubectl-set"),
            )],
        ),
        (
            "ingress-web",
            vec![(
                Class::AddedLive,
                "metadata.annotations.hotfix",
                who("kubectl-annotate"),
            )],
        ),
        (
            "widget-w1",
            vec![
                (Class::RemovedLive, "spec.color", None),
                (Class::RemovedLive, "spec.ports[name=http]", None),
                (
                    Class::AddedLive,
                    "spec.ports[name=metrics]",
                    who("hotfixer"),
                ),
                (Class::Changed, "spec.size", who("kubectl-patch")),
                (Class::RemovedLive, "spec.tags[a]", None),
                (Class::RemovedLive, "spec.tags[b]", None),
                (Class::AddedLive, "spec.tags[c]", who("hotfixer")),
            ],
        ),
    ];
    for (name, expected) in cases {
        let (status, mut items) = drift_136(name, "after-out-of-band");
        items.sort_by(|a, b| a.1.cmp(&b.1));
        let mut expected: Vec<(Class, String, Option<String>)> = expected
            .into_iter()
            .map(|(c, p, m)| (c, p.to_owned(), m))
            .collect();
        expected.sort_by(|a, b| a.1.cmp(&b.1));
        assert_eq!((status, items), (ObjectStatus::Drifted, expected), "{name}");
    }
}
