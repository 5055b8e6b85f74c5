//! Tests of the change timeline's ring and view.
#![allow(clippy::unwrap_used)]

use super::*;

fn push(changes: &mut Changes, time: &str, name: &str) {
    // (pushed with `compared` false, their git reads "not compared")
    let change = Change {
        time: Some(time.to_owned()),
        object: format!("deployment/shop/{name}"),
        who: "kubectl-edit Update".to_owned(),
        what: ".spec.replicas: 1 → 2".to_owned(),
        git: Agrees::Drifted,
        writer: None,
    };
    let key = Arc::new(ObjectKey::new("apps", "Deployment", "shop", name));
    changes.push(key, change, "kubectl-edit", None);
}

#[test]
fn the_ring_keeps_the_newest_lines_and_counts_the_dropped() {
    let mut changes = Changes::default();
    changes.set_keep(Some(3));
    for (i, minute) in [10, 12, 11, 13, 14].iter().enumerate() {
        push(
            &mut changes,
            &format!("2026-01-01T10:{minute}:00Z"),
            &format!("w{i}"),
        );
    }
    assert_eq!(changes.len(), 3);
    assert_eq!(changes.dropped, 2);
    // The oldest by time went (10:10, 10:11), not the first to arrive.
    let names: Vec<&str> = changes
        .newest_first()
        .map(|l| l.key.name.as_ref())
        .collect();
    assert_eq!(names, ["w4", "w3", "w1"]);
    // A smaller keep drops at once; 0 keeps nothing and reads nothing.
    changes.set_keep(Some(1));
    assert_eq!((changes.len(), changes.dropped), (1, 4));
    changes.set_keep(Some(0));
    assert!(!changes.enabled());
    push(&mut changes, "2026-01-01T11:00:00Z", "late");
    assert_eq!((changes.len(), changes.dropped), (0, 5));
    assert_eq!(
        ring_note(&changes).as_deref(),
        Some("the timeline is off (changes.keep: 0 in .kdrift.yaml)")
    );
}

#[test]
fn a_sync_is_one_line_however_many_status_writes_report_it() {
    let mut changes = Changes::default();
    let key = ObjectKey::new("argoproj.io", "Application", "argocd", "shop");
    let app = |finished: &str, revision: &str, health: &str| {
        serde_json::json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "shop", "namespace": "argocd"},
            "status": {"health": {"status": health}, "operationState": {
                "phase": "Succeeded", "finishedAt": finished,
                "operation": {"initiatedBy": {"automated": true}},
                "syncResult": {"revision": revision}}}})
        .to_string()
    };
    changes.observe_sync(&key, &app("2026-01-01T10:00:00Z", "abc123", "Progressing"));
    // Another status write (health) of the same sync: no second line.
    changes.observe_sync(&key, &app("2026-01-01T10:00:00Z", "abc123", "Healthy"));
    assert_eq!(changes.len(), 1);
    // Never synced: no line.
    let fresh = ObjectKey::new("argoproj.io", "Application", "argocd", "new");
    changes.observe_sync(
        &fresh,
        r#"{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"new"},"status":{}}"#,
    );
    assert_eq!(changes.len(), 1);
    // The next sync: a line, newest first, by Argo CD's controller.
    changes.observe_sync(&key, &app("2026-01-01T10:05:00Z", "def456", "Healthy"));
    let lines: Vec<(&str, &str)> = changes
        .newest_first()
        .map(|l| (l.what(), &*l.manager))
        .collect();
    assert_eq!(
        lines,
        [
            (
                "automated sync to revision def456: Succeeded",
                "argocd-application-controller"
            ),
            (
                "automated sync to revision abc123: Succeeded",
                "argocd-application-controller"
            )
        ]
    );
}

fn listed(changes: &mut Changes, name: &str) {
    let text = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop", "managedFields": [
            {"manager": "kubectl", "operation": "Update", "subresource": "scale",
             "time": "2026-01-01T10:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}}}},
            {"manager": "helm", "operation": "Update", "time": "2026-01-01T09:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:a": {},
             "f:b": {}}}, "f:spec": {"f:paused": {}}}}]},
        "spec": {"replicas": 2, "paused": false}})
    .to_string();
    let version = Version::of_text(&text).unwrap();
    let key = ObjectKey::new("apps", "Deployment", "shop", name);
    let schema = crate::schema::Schemas::builtin().root("apps/v1", "Deployment");
    changes.observe(&key, schema, version, None, true);
}

fn said(changes: &Changes) -> Vec<(String, String, String, Option<String>)> {
    changes
        .newest_first()
        .map(|l| {
            (
                l.object(),
                l.who.to_string(),
                l.what().to_owned(),
                l.field().map(|f| f.to_string()),
            )
        })
        .collect()
}

#[test]
fn start_lines_without_a_manifest_read_their_fields_when_the_view_opens() {
    let mut changes = Changes {
        compared: true,
        ..Changes::default()
    };
    listed(&mut changes, "web");
    // Time, object and writer at once; the fields wait for the view.
    let before: Vec<_> = said(&changes)
        .into_iter()
        .map(|l| (l.0, l.1, l.2))
        .collect();
    assert_eq!(
        before,
        [
            (
                "deployment/shop/web".into(),
                "kubectl (scale) Update".into(),
                String::new()
            ),
            (
                "deployment/shop/web".into(),
                "helm Update".into(),
                String::new()
            ),
        ]
    );
    changes.read_all();
    let expected = [
        (
            "deployment/shop/web".to_owned(),
            "kubectl (scale) Update".to_owned(),
            ".spec.replicas".to_owned(),
            Some(".spec.replicas".to_owned()),
        ),
        (
            "deployment/shop/web".to_owned(),
            "helm Update".to_owned(),
            ".metadata.labels.a, .metadata.labels.b, .spec.paused".to_owned(),
            Some(".metadata.labels.a".to_owned()),
        ),
    ];
    assert_eq!(said(&changes), expected);
    assert!(changes.newest_first().all(|l| l.git == Agrees::NotInGit));
    // Once opened, a listed object's lines are said as they come.
    let mut later = Changes {
        compared: true,
        ..Changes::default()
    };
    later.read_all();
    listed(&mut later, "web");
    assert_eq!(said(&later), expected);
}

#[test]
fn a_time_seen_is_cut_to_the_second_as_the_server_cuts_its_own() {
    let changes = Changes {
        frozen: Some("2026-11-27T00:35:12.9Z".parse().unwrap()),
        ..Changes::default()
    };
    // A write the server made later in that second reads :12; so must this one, so that
    // arrival order decides between them.
    assert_eq!(changes.seen(), "2026-11-27T00:35:12Z");
}

#[test]
fn the_view_says_how_many_lines_were_dropped() {
    let mut changes = Changes::default();
    assert_eq!(ring_note(&changes), None);
    changes.set_keep(Some(2_000));
    for i in 0..3_001 {
        push(
            &mut changes,
            &format!("2026-01-01T10:00:{:02}Z", i % 60),
            &format!("w{i}"),
        );
    }
    assert_eq!(
        ring_note(&changes).as_deref(),
        Some("1,001 older lines dropped: 2,000 are kept (changes.keep in .kdrift.yaml)")
    );
}

#[test]
fn counts_have_thousands_separators() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1_000), "1,000");
    assert_eq!(thousands(1_234_567), "1,234,567");
}

/// The manifests of `web` alone: replicas 3 (where `listed` has 2).
fn web_manifests() -> crate::manifest::ManifestIndex {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("web.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n\
         spec:\n  replicas: 3\n",
    )
    .unwrap();
    crate::manifest::ManifestIndex::load(dir.path(), "default")
}

/// `web`'s start lines said again against its manifest.
fn judge_web(changes: &mut Changes) {
    let index = web_manifests();
    let key = ObjectKey::new("apps", "Deployment", "shop", "web");
    let manifest = index.get(&key).unwrap();
    let text = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "managedFields": [
            {"manager": "kubectl", "operation": "Update", "subresource": "scale",
             "time": "2026-01-01T10:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
        "spec": {"replicas": 2}})
    .to_string();
    let schemas = crate::schema::Schemas::builtin();
    let live =
        crate::drift::LiveObject::from_item_json(&text, "apps/v1", "Deployment", schemas).unwrap();
    let drift = crate::drift::check::compare_in(&index, manifest, &live);
    let desired = Desired {
        schema: live.schema,
        manifest: manifest.body.root(),
        drift: &drift,
    };
    changes.judge(&key, &Version::of_text(&text).unwrap(), &desired);
    changes.judged();
}

#[test]
fn start_lines_said_without_a_manifest_are_said_again_once_judged_and_only_then() {
    let web = ObjectKey::new("apps", "Deployment", "shop", "web");
    let mut changes = Changes {
        compared: true,
        ..Changes::default()
    };
    listed(&mut changes, "web");
    assert!(changes.unjudged(&web));
    assert!(changes.newest_first().all(|l| l.git == Agrees::NotInGit));
    judge_web(&mut changes);
    assert!(!changes.unjudged(&web));
    let gits: Vec<(String, Agrees)> = changes
        .newest_first()
        .map(|l| (l.who.to_string(), l.git))
        .collect();
    assert_eq!(
        gits,
        [("kubectl (scale) Update".to_owned(), Agrees::Drifted)]
    );

    // Lines the ring already let go are not brought back.
    let mut changes = Changes {
        compared: true,
        ..Changes::default()
    };
    listed(&mut changes, "web");
    changes.lines.clear();
    judge_web(&mut changes);
    assert_eq!(changes.len(), 0);
    assert!(!changes.unjudged(&web));

    // An object deleted is not judged any more.
    let cart = ObjectKey::new("apps", "Deployment", "shop", "cart");
    listed(&mut changes, "cart");
    assert!(changes.unjudged(&cart));
    changes.deleted(&cart, true);
    assert!(!changes.unjudged(&cart));
}

#[test]
fn a_writes_line_is_said_again_from_the_last_word_of_a_batch_and_start_lines_are_not() {
    let index = Arc::new(web_manifests());
    let schema = crate::schema::Schemas::builtin().root("apps/v1", "Deployment");
    let web = ObjectKey::new("apps", "Deployment", "shop", "web");
    let mut changes = Changes {
        compared: true,
        ..Changes::default()
    };
    listed(&mut changes, "web");
    assert!(!changes.has_written(&web), "start lines are not writes");
    // kubectl edit sets replicas 3: a write's line (no desired state given: not in git).
    let edited = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "managedFields": [
            {"manager": "kubectl-edit", "operation": "Update", "time": "2026-01-01T11:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
        "spec": {"replicas": 3, "paused": false}})
    .to_string();
    changes.observe(
        &web,
        schema,
        Version::of_text(&edited).unwrap(),
        None,
        false,
    );
    assert!(changes.has_written(&web));
    let gits = |changes: &Changes| -> Vec<(String, Agrees)> {
        changes
            .newest_first()
            .map(|l| (l.who.to_string(), l.git))
            .collect()
    };
    let drifted = Verdict {
        drifted: vec![crate::managed_fields::FieldPath::fields(&[
            "spec", "replicas",
        ])],
        desired: Some((schema, Arc::clone(&index))),
    };
    let agrees = Verdict {
        drifted: Vec::new(),
        desired: Some((schema, Arc::clone(&index))),
    };
    changes.rejudge(&web, drifted.clone());
    changes.rejudge(&web, agrees.clone());
    changes.judged();
    let said = gits(&changes);
    assert_eq!(said[0], ("kubectl-edit Update".to_owned(), Agrees::InSync));
    // The start lines were not said again (their entries may own maps others write into).
    assert!(
        said[1..].iter().all(|(_, git)| *git == Agrees::NotInGit),
        "{said:?}"
    );
    changes.rejudge(&web, agrees);
    changes.rejudge(&web, drifted);
    changes.judged();
    assert_eq!(gits(&changes)[0].1, Agrees::Drifted);
    // Once the ring lets its write line go, the object has none.
    changes.set_keep(Some(1));
    push(&mut changes, "2026-01-01T12:00:00Z", "other");
    assert!(!changes.has_written(&web));
    // An object with no previous version has no lines: nothing is kept for it.
    changes.rejudge(
        &ObjectKey::new("apps", "Deployment", "shop", "other"),
        Verdict::not_in_git(),
    );
    assert!(changes.rejudged.is_empty());
}
