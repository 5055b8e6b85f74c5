//! Objects of other kinds in the live view, through `update()` only (no IO): the kinds of the
//! manifests are mapped, then watched; an object with a manifest gets its drift, one without is
//! not kept; a deleted object, or one a relist no longer shows, is missing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use kdrift::manifest::ObjectKey;
use std::sync::Arc;

use jiff::Timestamp;
use kdrift::app::objects::MappedKinds;
use kdrift::app::{App, Command, DriftSummary, Message, update};
use kdrift::cluster::client::NamespaceScope;
use kdrift::cluster::kinds::{ServedKind, ServedKinds};
use kdrift::cluster::live::{LiveAny, LiveKinds};
use kdrift::cluster::watch::{ClusterEvent, ClusterMessage, ObjectKind, ObjectRow, WatchUpdate};
use kdrift::manifest::ManifestIndex;
use serde_json::{Value, json};

fn configmap(name: &str, flag: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {
            "name": name, "namespace": "shop", "resourceVersion": "7",
            "creationTimestamp": "2026-11-20T10:00:00Z",
            "managedFields": [{
                "manager": "kubectl-client-side-apply", "operation": "Update",
                "apiVersion": "v1", "time": "2026-11-20T10:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {".": {}, "f:FLAG": {}}}
            }]
        },
        "data": {"FLAG": flag}
    })
}

fn served_configmaps() -> ServedKind {
    ServedKind {
        group: String::new(),
        version: "v1".into(),
        kind: "ConfigMap".into(),
        plural: "configmaps".into(),
        singular: "configmap".into(),
        short_names: vec!["cm".into()],
        namespaced: true,
        verbs: ["get", "list", "watch"].map(String::from).to_vec(),
        preferred: true,
    }
}

fn row(object: &Value) -> ObjectRow {
    let any: LiveAny = serde_json::from_value(object.clone()).unwrap();
    ObjectRow {
        key: key(object["metadata"]["name"].as_str().unwrap()),
        json: any.json,
    }
}

fn key(name: &str) -> ObjectKey {
    ObjectKey::new("", "ConfigMap", "shop", name)
}

fn objects(app: &mut App, updates: Vec<WatchUpdate<ObjectRow>>) {
    let kind = Arc::new(ObjectKind::of(&served_configmaps()));
    update(
        app,
        Message::Cluster(ClusterMessage {
            epoch: 0,
            event: ClusterEvent::Objects(kind, updates),
        }),
    );
}

fn summary(app: &App, name: &str) -> Option<DriftSummary> {
    app.ledger.get(&key(name)).map(|e| e.summary.clone())
}

/// An app with manifests for ConfigMaps `web` and `cart` in `shop`, its kinds mapped.
fn mapped_app(dir: &tempfile::TempDir) -> App {
    for name in ["web", "cart"] {
        std::fs::write(
            dir.path().join(format!("{name}.yaml")),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: shop\ndata:\n  FLAG: \"on\"\n"
            ),
        )
        .unwrap();
    }
    let mut app = App::new("test", vec![], NamespaceScope::All, Timestamp::now());
    let index = Arc::new(ManifestIndex::load(dir.path(), "default"));
    let commands = update(&mut app, Message::Manifests(index));
    assert!(
        commands.iter().any(|c| matches!(c, Command::MapKinds(kinds)
            if kinds.contains(&("v1".to_owned(), "ConfigMap".to_owned())))),
        "{commands:?}"
    );
    let kinds = LiveKinds {
        served: Arc::new(ServedKinds::from_kinds(vec![served_configmaps()])),
        schemas: Arc::new(kdrift::schema::Schemas::builtin().clone()),
    };
    let commands = update(
        &mut app,
        Message::KindsMapped(Ok(MappedKinds {
            kinds,
            notices: Vec::new(),
        })),
    );
    assert!(
        commands
            .iter()
            .any(|c| matches!(c, Command::WatchObjects(kinds)
            if kinds.iter().any(|k| k.kind == "ConfigMap"))),
        "{commands:?}"
    );
    app
}

/// A (re)list of the ConfigMaps `(name, flag)` as the watcher reports it.
fn listed(app: &mut App, configmaps: &[(&str, &str)]) {
    let mut updates = vec![WatchUpdate::Init];
    updates.extend(
        configmaps
            .iter()
            .map(|(name, flag)| WatchUpdate::InitApply(row(&configmap(name, flag)))),
    );
    updates.push(WatchUpdate::InitDone);
    objects(app, updates);
}

#[test]
fn objects_with_a_manifest_get_their_drift_and_the_others_are_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = mapped_app(&dir);
    listed(&mut app, &[("web", "on"), ("unrelated", "x")]);
    assert_eq!(summary(&app, "web"), Some(DriftSummary::InSync));
    assert_eq!(summary(&app, "cart"), Some(DriftSummary::Missing));
    assert_eq!(
        summary(&app, "unrelated"),
        None,
        "no manifest: nothing kept"
    );
    assert_eq!(app.ledger.len(), 2);

    // A live edit by another manager drifts it; the object then leaving makes it missing.
    let mut edited = configmap("web", "off");
    edited["metadata"]["managedFields"] = json!([{
        "manager": "kubectl-edit", "operation": "Update", "apiVersion": "v1",
        "time": "2026-11-22T03:00:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {"f:FLAG": {}}}
    }]);
    objects(&mut app, vec![WatchUpdate::Apply(row(&edited))]);
    assert_eq!(summary(&app, "web"), Some(DriftSummary::Fields(1)));
    let newest = app.ledger.get(&key("web")).unwrap().newest.clone().unwrap();
    assert_eq!(newest.manager.as_deref(), Some("kubectl-edit"));
    objects(&mut app, vec![WatchUpdate::Delete(key("web"))]);
    assert_eq!(summary(&app, "web"), Some(DriftSummary::Missing));
}

#[test]
fn a_relist_without_an_object_makes_it_missing_and_one_back_is_compared() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = mapped_app(&dir);
    listed(&mut app, &[("web", "on"), ("cart", "on")]);
    assert_eq!(summary(&app, "cart"), Some(DriftSummary::InSync));
    // The watch is relisted (a 410, another API server): `web` is gone, `cart` stays.
    listed(&mut app, &[("cart", "on")]);
    assert_eq!(summary(&app, "web"), Some(DriftSummary::Missing));
    assert_eq!(summary(&app, "cart"), Some(DriftSummary::InSync));
    // Created again: compared.
    objects(
        &mut app,
        vec![WatchUpdate::Apply(row(&configmap("web", "on")))],
    );
    assert_eq!(summary(&app, "web"), Some(DriftSummary::InSync));
}

/// Churn that shows nowhere draws no frame: writes to an object without a manifest, or writes
/// that leave an object's drift as it was; a write that changes the drift does.
#[test]
fn only_writes_that_change_what_is_shown_ask_for_a_frame() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = mapped_app(&dir);
    listed(
        &mut app,
        &[("web", "on"), ("cart", "on"), ("unrelated", "x")],
    );
    app.dirty = false;

    // An object no manifest describes, written again and again.
    for flag in ["y", "z"] {
        objects(
            &mut app,
            vec![WatchUpdate::Apply(row(&configmap("unrelated", flag)))],
        );
    }
    assert!(
        !app.dirty,
        "a write to an unmanaged object asked for a frame"
    );

    // The same object again (a resync, a status write): in sync before and after.
    let mut again = configmap("web", "on");
    again["metadata"]["resourceVersion"] = json!("9");
    objects(&mut app, vec![WatchUpdate::Apply(row(&again))]);
    assert!(
        !app.dirty,
        "a write that left the drift as it was asked for a frame"
    );
    // Nothing a compare reads moved: its drift was kept, not read again (as a workload's).
    assert_eq!(app.drift_kept(), 1);

    // A write that drifts: the status bar's count changes.
    objects(
        &mut app,
        vec![WatchUpdate::Apply(row(&configmap("web", "off")))],
    );
    assert!(app.dirty, "a drifting write drew no frame");
    assert_eq!(summary(&app, "web"), Some(DriftSummary::Fields(1)));
    assert_eq!(app.drift_kept(), 1, "a write to a field was not compared");
}

/// An object fetched after its manifest changed, answered after a watch event of the same
/// object: the older answer does not put back the drift the event resolved.
#[test]
fn a_fetch_answered_after_a_newer_watch_event_is_dropped() {
    use kdrift::manifest::reload::read_change;
    let dir = tempfile::tempdir().unwrap();
    let mut app = mapped_app(&dir);
    listed(&mut app, &[("web", "on"), ("cart", "on")]);
    assert_eq!(summary(&app, "web"), Some(DriftSummary::InSync));

    // git: FLAG on → off; web is fetched.
    let file = dir.path().join("web.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: shop\ndata:\n  FLAG: \"off\"\n",
    )
    .unwrap();
    let change = read_change(dir.path(), "default", &Default::default(), &file);
    let commands = update(&mut app, Message::ManifestsChanged(vec![change]));
    assert!(
        commands
            .iter()
            .any(|c| matches!(c, Command::Fetch(keys) if keys.len() == 1)),
        "{commands:?}"
    );
    // Meanwhile the live object is set to off too: the watch says so first.
    objects(
        &mut app,
        vec![WatchUpdate::Apply(row(&configmap("web", "off")))],
    );
    assert_eq!(summary(&app, "web"), Some(DriftSummary::InSync));
    // The fetch's answer, read before that write, comes last.
    let old = row(&configmap("web", "on")).json;
    update(
        &mut app,
        Message::Fetched(vec![(key("web"), Ok(Some(old.clone())))]),
    );
    assert_eq!(summary(&app, "web"), Some(DriftSummary::InSync));

    // Asked again with no event in between, the answer counts.
    let change = read_change(dir.path(), "default", &Default::default(), &file);
    update(&mut app, Message::ManifestsChanged(vec![change]));
    update(
        &mut app,
        Message::Fetched(vec![(key("web"), Ok(Some(old)))]),
    );
    assert_eq!(summary(&app, "web"), Some(DriftSummary::Fields(1)));
}

/// One health map holds every watcher: a kind's watcher reconnecting shows in the status bar's
/// health until it is fine again, and a kind no longer watched (discovery answered again without
/// it) takes its watcher's health along.
#[test]
fn a_watched_kinds_health_counts_while_it_is_watched() {
    use kdrift::cluster::watch::{WatchHealth, WatchedKind};
    let dir = tempfile::tempdir().unwrap();
    let mut app = mapped_app(&dir);
    let kind = Arc::new(ObjectKind::of(&served_configmaps()));
    let cluster = |event| Message::Cluster(ClusterMessage { epoch: 0, event });
    for table in [
        WatchedKind::Deployments,
        WatchedKind::StatefulSets,
        WatchedKind::DaemonSets,
    ] {
        update(
            &mut app,
            cluster(ClusterEvent::Health(table, WatchHealth::Connected)),
        );
    }
    assert_eq!(
        app.overall_health(),
        WatchHealth::Syncing,
        "ConfigMaps listing"
    );
    let reconnecting = WatchHealth::Reconnecting {
        since: Timestamp::now(),
        reason: "connection reset".to_owned(),
    };
    update(
        &mut app,
        cluster(ClusterEvent::ObjectHealth(
            kind.clone(),
            reconnecting.clone(),
        )),
    );
    assert_eq!(app.overall_health(), reconnecting);
    update(
        &mut app,
        cluster(ClusterEvent::ObjectHealth(kind, WatchHealth::Connected)),
    );
    assert_eq!(app.overall_health(), WatchHealth::Connected);

    // Reconnecting again, then no longer served: its health goes with it.
    let kind = Arc::new(ObjectKind::of(&served_configmaps()));
    update(
        &mut app,
        cluster(ClusterEvent::ObjectHealth(kind, reconnecting)),
    );
    let none = LiveKinds {
        served: Arc::new(ServedKinds::from_kinds(Vec::new())),
        schemas: Arc::new(kdrift::schema::Schemas::builtin().clone()),
    };
    update(
        &mut app,
        Message::KindsMapped(Ok(MappedKinds {
            kinds: none,
            notices: Vec::new(),
        })),
    );
    assert_eq!(app.overall_health(), WatchHealth::Connected);
}
