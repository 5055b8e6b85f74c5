//! Drift in the live view, through `update()` only (no IO): drift arriving with watch events,
//! manifest reloads asking for the affected objects, missing and unmanaged rows, the `d` diff
//! view (snapshot, field keys) and the colours of the DRIFT column.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use jiff::Timestamp;
use kdrift::app::diff::DiffContent;
use kdrift::app::{App, Command, DriftSummary, Message, Screen, update};
use kdrift::cluster::client::NamespaceScope;
use kdrift::cluster::live::{LiveDeployment, LiveJson, LiveRow};
use kdrift::cluster::watch::{ClusterEvent, ClusterMessage, WatchUpdate};
use kdrift::drift::LiveObject;
use kdrift::manifest::ManifestIndex;
use kdrift::manifest::ObjectKey;
use kdrift::manifest::reload::read_change;
use kdrift::schema::defaults::apply_defaults;
use kdrift::sim::patch::strategic_merge_patch;
use kdrift::sim::resources::ResourceType;
use kdrift::sim::ssa::record_update;
use kdrift::ui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};
use ui_fixture::drifted::hotfix;

use crate::ui_fixture;

const DEPLOYMENT: ResourceType = ResourceType::DEPLOYMENT;
const NOW: &str = "2026-11-22T02:12:00Z";

fn manifest_text(name: &str, replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: shop
  labels:
    app: {name}
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
    spec:
      containers:
        - name: {name}
          image: {name}:1.0
          env:
            - name: MODE
              value: prod
"
    )
}

/// A manifests folder with `web` and `cart` in `shop`.
fn manifests() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("web.yaml"), manifest_text("web", 3)).unwrap();
    std::fs::write(dir.path().join("cart.yaml"), manifest_text("cart", 2)).unwrap();
    dir
}

fn index(dir: &Path) -> Arc<ManifestIndex> {
    Arc::new(ManifestIndex::load(dir, "default"))
}

/// The object as the API server holds it after `kubectl apply` of the manifest.
fn applied(name: &str, replicas: u32) -> Value {
    let mut object: Value = serde_yaml::from_str(&manifest_text(name, replicas)).unwrap();
    apply_defaults(
        "apps",
        "Deployment",
        kdrift::schema::builtin_kind("Deployment"),
        &mut object,
    );
    object["metadata"]["resourceVersion"] = json!("1");
    record_update(
        DEPLOYMENT,
        None,
        &mut object,
        "kubectl-client-side-apply",
        None,
        "2026-11-22T01:00:00Z",
    );
    object
}

/// `kubectl set env deploy/NAME EXTRA=1`, 12 minutes before `NOW`.
fn set_env(old: &Value) -> Value {
    let name = old["metadata"]["name"].as_str().unwrap();
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": name, "env": [{"name": "EXTRA", "value": "1"}]}
    ]}}}});
    let mut new = strategic_merge_patch(DEPLOYMENT, old, &patch).unwrap();
    apply_defaults(
        "apps",
        "Deployment",
        kdrift::schema::builtin_kind("Deployment"),
        &mut new,
    );
    record_update(
        DEPLOYMENT,
        Some(old),
        &mut new,
        "kubectl-set",
        None,
        "2026-11-22T02:00:00Z",
    );
    new
}

fn live_row(object: &Value) -> LiveRow {
    LiveRow::from_object(serde_json::from_value::<LiveDeployment>(object.clone()).unwrap())
}

fn watch(app: &mut App, updates: Vec<WatchUpdate<LiveRow>>) -> Vec<Command> {
    update(
        app,
        Message::Cluster(ClusterMessage {
            epoch: 0,
            event: ClusterEvent::WorkloadsLive(
                kdrift::cluster::rows::WorkloadKind::Deployment,
                updates,
            ),
        }),
    )
}

fn listed(app: &mut App, objects: &[Value]) {
    let mut updates = vec![WatchUpdate::Init];
    updates.extend(objects.iter().map(|o| WatchUpdate::InitApply(live_row(o))));
    updates.push(WatchUpdate::InitDone);
    watch(app, updates);
}

fn app() -> App {
    App::new(
        "kind-dev",
        vec![],
        NamespaceScope::All,
        NOW.parse::<Timestamp>().unwrap(),
    )
}

fn key(name: &str) -> ObjectKey {
    kdrift::cluster::rows::WorkloadKind::Deployment.key("shop", name)
}

/// The full key of the Deployment `shop/name`, as the views name it.
fn object(name: &str) -> kdrift::manifest::ObjectKey {
    kdrift::manifest::ObjectKey::new("apps", "Deployment", "shop", name)
}

fn extract(object: &Value) -> Option<Box<LiveObject>> {
    Some(Box::new(
        LiveObject::from_value(object.clone(), kdrift::schema::Schemas::builtin()).unwrap(),
    ))
}

/// A fetched object as `fetch` hands it over: its JSON text.
fn fetched(object: &Value) -> Option<LiveJson> {
    Some(
        serde_json::from_value::<LiveDeployment>(object.clone())
            .unwrap()
            .json,
    )
}

fn press(app: &mut App, code: KeyCode) -> Vec<Command> {
    update(app, Message::Key(KeyEvent::from(code)))
}

fn draw(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    app.width = width;
    app.height = height;
    app.prepare_frame();
    let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
    term.draw(|f| kdrift::ui::render(app, &Theme::default_theme(), f))
        .unwrap();
    term
}

fn screen_text(term: &Terminal<TestBackend>) -> String {
    let buf = term.backend().buffer();
    let mut text = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            text.push_str(buf[(x, y)].symbol());
        }
        text.push('\n');
    }
    text
}

#[test]
fn drift_follows_watch_events_and_unmanaged_and_missing_are_told_apart() {
    let dir = manifests();
    let mut app = app();
    // Loading the manifests asks discovery about their kinds, nothing else.
    let commands = update(&mut app, Message::Manifests(index(dir.path())));
    assert!(
        matches!(commands.as_slice(), [Command::MapKinds(kinds)] if kinds.len() == 1),
        "{commands:?}"
    );
    let web = applied("web", 3);
    let mut stray = applied("stray", 1);
    stray["metadata"]["namespace"] = json!("shop");
    listed(&mut app, &[web.clone(), stray]);
    assert_eq!(app.drift_of(&key("web")), &DriftSummary::InSync);
    assert_eq!(app.drift_of(&key("stray")), &DriftSummary::Unmanaged);
    // In git, never listed: a row of its own, missing.
    assert_eq!(app.drift_of(&key("cart")), &DriftSummary::Missing);

    watch(&mut app, vec![WatchUpdate::Apply(live_row(&set_env(&web)))]);
    assert_eq!(app.drift_of(&key("web")), &DriftSummary::Fields(1));

    watch(&mut app, vec![WatchUpdate::Delete(key("web"))]);
    assert_eq!(app.drift_of(&key("web")), &DriftSummary::Missing);
    watch(&mut app, vec![WatchUpdate::Delete(key("stray"))]);
    assert_eq!(app.drift_of(&key("stray")), &DriftSummary::NotComputed);
}

#[test]
fn manifests_loaded_after_the_list_fetch_the_rows_they_manage() {
    let dir = manifests();
    let mut app = app();
    let web = applied("web", 3);
    listed(&mut app, std::slice::from_ref(&web));
    assert_eq!(app.drift_of(&key("web")), &DriftSummary::NotComputed);
    let commands = update(&mut app, Message::Manifests(index(dir.path())));
    // Discovery first: its answer fetches the rows (once, not also now).
    assert_eq!(
        commands,
        vec![Command::MapKinds(
            [("apps/v1".to_owned(), "Deployment".to_owned())].into()
        )]
    );
    assert_eq!(app.drift_of(&key("cart")), &DriftSummary::Missing);
    // Discovery failed: the rows are fetched all the same, compared with the built-in schemas.
    let commands = update(
        &mut app,
        Message::KindsMapped(Err("the server is unreachable".to_owned())),
    );
    assert_eq!(
        commands,
        vec![Command::Fetch(vec![(object("web"), "apps/v1".to_owned())])]
    );
    update(
        &mut app,
        Message::Fetched(vec![(object("web"), Ok(fetched(&set_env(&web))))]),
    );
    assert_eq!(app.drift_of(&key("web")), &DriftSummary::Fields(1));
}

#[test]
fn a_manifest_edited_on_disk_fetches_its_object_and_drift_follows() {
    let dir = manifests();
    let mut app = app();
    update(&mut app, Message::Manifests(index(dir.path())));
    let web = applied("web", 3);
    listed(&mut app, &[web.clone(), applied("cart", 2)]);
    assert_eq!(app.drift_of(&key("web")), &DriftSummary::InSync);

    // Someone changes git: replicas 3 → 5. Only web.yaml is re-read, only web is fetched.
    let file = dir.path().join("web.yaml");
    std::fs::write(&file, manifest_text("web", 5)).unwrap();
    let change = read_change(dir.path(), "default", &Default::default(), &file);
    let commands = update(&mut app, Message::ManifestsChanged(vec![change]));
    assert_eq!(
        commands,
        vec![Command::Fetch(vec![(object("web"), "apps/v1".to_owned())])]
    );
    update(
        &mut app,
        Message::Fetched(vec![(object("web"), Ok(fetched(&web)))]),
    );
    assert_eq!(app.drift_of(&key("web")), &DriftSummary::Fields(1));

    // The file broken: the object has no manifest any more, the problem is counted.
    std::fs::write(&file, "spec: [unclosed\n").unwrap();
    let change = read_change(dir.path(), "default", &Default::default(), &file);
    assert!(update(&mut app, Message::ManifestsChanged(vec![change])).is_empty());
    assert_eq!(app.drift_of(&key("web")), &DriftSummary::Unmanaged);
    assert_eq!(app.drift_of(&key("cart")), &DriftSummary::InSync);
    let text = screen_text(&draw(&mut app, 120, 12));
    assert!(text.contains(":problems 1"), "{text}");
    // Watched beside another context, its status bar counts the same problems (the fleet's bar
    // once said nothing of them).
    let other = self::app();
    let fleet = kdrift::app::fleet::Fleet::default();
    let members = [&app, &other].map(|app| kdrift::app::fleet::Member {
        context: &app.context,
        link: &kdrift::app::fleet::Link::Connected,
        app,
    });
    let mut term = Terminal::new(TestBackend::new(160, 12)).unwrap();
    term.draw(|f| kdrift::ui::fleet::render_fleet(&fleet, &members, &Theme::default_theme(), f))
        .unwrap();
    let status = screen_text(&term);
    let status = status.lines().find(|l| l.starts_with(" ctx ")).unwrap();
    assert!(status.contains(" :problems 1 "), "{status}");
    assert!(status.contains(" drifted 0 "), "{status}");
    update(&mut app, Message::Key(KeyEvent::from(KeyCode::Char(':'))));
    for c in "problems".chars() {
        press(&mut app, KeyCode::Char(c));
    }
    press(&mut app, KeyCode::Enter);
    let text = screen_text(&draw(&mut app, 120, 12));
    assert!(text.contains("web.yaml:2: malformed YAML"), "{text}");

    // A fetch that fails shows as an error, not as in sync.
    update(
        &mut app,
        Message::Fetched(vec![(object("cart"), Err("cannot get".to_owned()))]),
    );
    assert!(matches!(app.drift_of(&key("cart")), DriftSummary::Error(_)));
}

/// A fetch asked after a manifest change, answered after a watch event of the same object:
/// the answer is older than the row and must not put back the drift the event resolved (an
/// on-call engineer saw "1 field", pressed `a`, and was told "in sync").
#[test]
fn a_fetch_answered_after_a_newer_watch_event_is_dropped() {
    let dir = manifests();
    let mut app = app();
    update(&mut app, Message::Manifests(index(dir.path())));
    let web = applied("web", 3);
    listed(&mut app, std::slice::from_ref(&web));
    assert_eq!(app.drift_of(&key("web")), &DriftSummary::InSync);

    // git: replicas 3 → 5; web is fetched.
    let file = dir.path().join("web.yaml");
    std::fs::write(&file, manifest_text("web", 5)).unwrap();
    let change = read_change(dir.path(), "default", &Default::default(), &file);
    let commands = update(&mut app, Message::ManifestsChanged(vec![change]));
    assert_eq!(
        commands,
        vec![Command::Fetch(vec![(object("web"), "apps/v1".to_owned())])]
    );
    // Meanwhile someone scales it to 5: the watch says so first.
    let mut scaled = applied("web", 5);
    scaled["metadata"]["resourceVersion"] = json!("99");
    watch(&mut app, vec![WatchUpdate::Apply(live_row(&scaled))]);
    assert_eq!(app.drift_of(&key("web")), &DriftSummary::InSync);
    // The fetch's answer, read before the scale, comes last.
    update(
        &mut app,
        Message::Fetched(vec![(object("web"), Ok(fetched(&web)))]),
    );
    assert_eq!(app.drift_of(&key("web")), &DriftSummary::InSync);

    // With no event in between, the answer counts.
    std::fs::write(&file, manifest_text("web", 7)).unwrap();
    let change = read_change(dir.path(), "default", &Default::default(), &file);
    update(&mut app, Message::ManifestsChanged(vec![change]));
    update(
        &mut app,
        Message::Fetched(vec![(object("web"), Ok(fetched(&scaled)))]),
    );
    assert_eq!(app.drift_of(&key("web")), &DriftSummary::Fields(1));
}

/// The app with web drifted by `kubectl set env` and the diff view of web open.
fn diff_open() -> (App, tempfile::TempDir) {
    let dir = manifests();
    let mut app = app();
    update(&mut app, Message::Manifests(index(dir.path())));
    let web = set_env(&applied("web", 3));
    listed(&mut app, &[web.clone(), applied("cart", 2)]);
    draw(&mut app, 120, 16);
    // Rows are sorted by name: cart, web.
    press(&mut app, KeyCode::Char('j'));
    let commands = press(&mut app, KeyCode::Char('d'));
    assert_eq!(
        commands,
        vec![Command::FetchDiff(object("web"), "apps/v1".into())]
    );
    let text = screen_text(&draw(&mut app, 120, 16));
    assert!(text.contains("fetching the live object"), "{text}");
    update(
        &mut app,
        Message::DiffFetched((object("web"), Ok(extract(&web)))),
    );
    (app, dir)
}

#[test]
fn diff_view_names_the_manager_and_age_of_each_drifted_field() {
    let (mut app, dir) = diff_open();
    let term = draw(&mut app, 120, 16);
    let text = screen_text(&term).replace(&dir.path().display().to_string(), "<manifests>");
    insta::assert_snapshot!(text);
    assert!(text.contains("kubectl-set · 12m ago"), "{text}");
    // Added lines are green, their notes dim: colour carries meaning.
    let buf = term.backend().buffer();
    let theme = Theme::default_theme();
    let y = text
        .lines()
        .position(|l| l.contains("- name: EXTRA"))
        .expect("the added env line") as u16;
    assert_eq!(buf[(1, y)].symbol(), "+");
    assert_eq!(buf[(1, y)].fg, theme.diff_added.fg.unwrap());
    let note_x = text
        .lines()
        .nth(y as usize)
        .unwrap()
        .chars()
        .position(|c| c == '#')
        .unwrap();
    assert_eq!(buf[(note_x as u16, y)].fg, theme.diff_note.fg.unwrap());

    press(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Table);
}

#[test]
fn diff_keys_move_between_drifted_fields_and_ctrl_r_fetches_again() {
    let dir = manifests();
    let mut app = app();
    update(&mut app, Message::Manifests(index(dir.path())));
    // Two drifted fields far apart: replicas and the env.
    let web = set_env(&applied("web", 3));
    let mut scaled = web.clone();
    scaled["spec"]["replicas"] = json!(7);
    listed(&mut app, &[scaled.clone()]);
    assert_eq!(app.drift_of(&key("web")), &DriftSummary::Fields(2));
    app.open_diff(object("web"));
    update(
        &mut app,
        Message::DiffFetched((object("web"), Ok(extract(&scaled)))),
    );
    let Screen::Diff(view) = &app.screen else {
        panic!("diff view expected");
    };
    let starts = view.field_starts();
    assert_eq!(starts.len(), 2, "{:?}", view.content);
    let at = |app: &App| match &app.screen {
        Screen::Diff(v) => v.scroll,
        other => panic!("{other:?}"),
    };
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(at(&app), starts[0].saturating_sub(2));
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(at(&app), starts[1].saturating_sub(2));
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(at(&app), starts[1].saturating_sub(2), "stays on the last");
    press(&mut app, KeyCode::Char('['));
    assert_eq!(at(&app), starts[0].saturating_sub(2));
    let ctrl_r = KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL);
    assert_eq!(
        update(&mut app, Message::Key(ctrl_r)),
        vec![Command::FetchDiff(object("web"), "apps/v1".into())]
    );
    // Plain `r` reverts now.
    assert!(matches!(
        press(&mut app, KeyCode::Char('r')).as_slice(),
        [Command::PreviewRevert { .. }]
    ));
}

#[test]
fn diff_of_an_unmanaged_row_says_so_without_fetching() {
    let dir = manifests();
    let mut app = app();
    update(&mut app, Message::Manifests(index(dir.path())));
    let mut stray = applied("stray", 1);
    stray["metadata"]["namespace"] = json!("shop");
    listed(&mut app, &[stray]);
    assert!(app.open_diff(object("stray")).is_empty());
    let Screen::Diff(view) = &app.screen else {
        panic!("diff view expected");
    };
    assert!(
        matches!(&view.content, DiffContent::Unavailable(why) if why.contains("unmanaged")),
        "{:?}",
        view.content
    );
}

#[test]
fn drift_column_snapshot_and_colours() {
    let dir = manifests();
    let mut app = app();
    update(&mut app, Message::Manifests(index(dir.path())));
    let mut stray = applied("stray", 1);
    stray["metadata"]["namespace"] = json!("shop");
    listed(&mut app, &[set_env(&applied("web", 3)), stray]);
    let term = draw(&mut app, 120, 10);
    let text = screen_text(&term);
    insta::assert_snapshot!(text);
    let theme = Theme::default_theme();
    let buf = term.backend().buffer();
    let style_of = |word: &str| {
        let lines: Vec<&str> = text.lines().collect();
        for (y, line) in lines.iter().enumerate() {
            // Cells are one per char (no wide chars in these rows).
            let chars: Vec<char> = line.chars().collect();
            let w: Vec<char> = word.chars().collect();
            if let Some(x) = chars.windows(w.len()).position(|c| c == w.as_slice()) {
                return buf[(x as u16, y as u16)].fg;
            }
        }
        panic!("{word} not on screen:\n{text}");
    };
    assert_eq!(style_of("1 field"), theme.drifted.fg.unwrap());
    assert_eq!(style_of("unmanaged"), theme.unmanaged.fg.unwrap());
    assert_eq!(style_of("missing"), theme.drifted.fg.unwrap());
    assert_ne!(theme.drifted.fg, theme.in_sync.fg);
    assert!(
        text.contains("drifted 2"),
        "web and the missing cart:\n{text}"
    );
}

/// A folder that holds only a Helm chart no source renders gives no manifest: `:drift` says that
/// nothing was read and why (a chart, not rendered), not that every object is in sync.
#[test]
fn drift_list_says_nothing_was_read_and_why_not_all_in_sync() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("chart/templates")).unwrap();
    std::fs::write(
        dir.path().join("chart/Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("chart/templates/deployment.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n",
    )
    .unwrap();
    let mut app = app();
    update(&mut app, Message::Manifests(index(dir.path())));
    update(&mut app, Message::Key(KeyEvent::from(KeyCode::Char(':'))));
    for c in "drift".chars() {
        press(&mut app, KeyCode::Char(c));
    }
    press(&mut app, KeyCode::Enter);
    let text = screen_text(&draw(&mut app, 200, 14));
    assert!(!text.contains("in sync"), "{text}");
    assert!(text.contains("no manifest was read under"), "{text}");
    assert!(
        text.contains("1 Helm chart(s) found, none rendered (a chart is rendered as"),
        "{text}"
    );
    // The status bar does not call the chart a problem.
    assert!(!text.contains(":problems 1"), "{text}");
}

fn drift_and_writer(app: &App, name: &str) -> (Option<DriftSummary>, Option<String>) {
    (
        app.ledger.get(&object(name)).map(|e| e.summary.clone()),
        app.ledger
            .get(&object(name))
            .and_then(|e| e.newest.as_ref()?.manager.clone()),
    )
}

#[test]
fn a_status_write_keeps_the_drift_unread_and_every_write_to_a_field_is_compared() {
    let dir = manifests();
    let mut app = app();
    update(&mut app, Message::Manifests(index(dir.path())));
    let web = set_env(&applied("web", 3));
    listed(&mut app, std::slice::from_ref(&web));
    let drifted = (
        Some(DriftSummary::Fields(1)),
        Some("kubectl-set".to_owned()),
    );
    assert_eq!(drift_and_writer(&app, "web"), drifted);
    assert_eq!(app.drift_kept(), 0, "a list is always compared");

    // The deployment controller writes status: nothing a compare reads moved.
    let status = json!({"status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3}});
    let web = hotfix(
        &web,
        status,
        "kube-controller-manager",
        Some("status"),
        "2026-11-22T02:05:00Z",
    );
    watch(&mut app, vec![WatchUpdate::Apply(live_row(&web))]);
    assert_eq!(drift_and_writer(&app, "web"), drifted);
    assert_eq!(app.drift_kept(), 1, "the status write was not compared");

    // A label the manifest does not set, written out of band, is drift (added live): compared.
    let label = json!({"metadata": {"labels": {"team": "pay"}}});
    let web = hotfix(&web, label, "kubectl-label", None, "2026-11-22T02:06:00Z");
    watch(&mut app, vec![WatchUpdate::Apply(live_row(&web))]);
    let two = (
        Some(DriftSummary::Fields(2)),
        Some("kubectl-label".to_owned()),
    );
    assert_eq!(drift_and_writer(&app, "web"), two);
    assert_eq!(app.drift_kept(), 1);

    // A field the manifest sets: compared.
    let scale = json!({"spec": {"replicas": 5}});
    let web = hotfix(&web, scale, "kubectl-edit", None, "2026-11-22T02:07:00Z");
    watch(&mut app, vec![WatchUpdate::Apply(live_row(&web))]);
    let three = (
        Some(DriftSummary::Fields(3)),
        Some("kubectl-edit".to_owned()),
    );
    assert_eq!(drift_and_writer(&app, "web"), three);
    assert_eq!(app.drift_kept(), 1);

    // Status again (the sim, as a server, moves the status entry to the end of the list):
    // kept, and the drift is still the one just compared.
    let status = json!({"status": {"observedGeneration": 2, "replicas": 5}});
    let web = hotfix(
        &web,
        status,
        "kube-controller-manager",
        Some("status"),
        "2026-11-22T02:08:00Z",
    );
    watch(&mut app, vec![WatchUpdate::Apply(live_row(&web))]);
    assert_eq!(drift_and_writer(&app, "web"), three);
    assert_eq!(app.drift_kept(), 2);

    // The manifests change (here: load again): the next status write is compared with them.
    update(&mut app, Message::Manifests(index(dir.path())));
    let status = json!({"status": {"observedGeneration": 2, "replicas": 5, "readyReplicas": 5}});
    let web = hotfix(
        &web,
        status,
        "kube-controller-manager",
        Some("status"),
        "2026-11-22T02:09:00Z",
    );
    watch(&mut app, vec![WatchUpdate::Apply(live_row(&web))]);
    assert_eq!(drift_and_writer(&app, "web"), three);
    assert_eq!(
        app.drift_kept(),
        2,
        "compared against the manifests loaded again"
    );
}

/// The views opened from `:drift` stack over it: the diff of its row, a revert over the diff;
/// `esc` goes back one at a time (the revert to the diff, the diff to the list where it was
/// left), and from the list to the table, with nothing left under it.
#[test]
fn views_opened_from_the_drift_list_go_back_one_at_a_time() {
    use ui_fixture::drifted::{drifted_app, manifests, press, typed};
    let dir = manifests();
    let mut app = drifted_app(dir.path(), false);
    let command = |app: &mut App, text: &str| {
        press(app, KeyCode::Char(':'));
        typed(app, text);
        press(app, KeyCode::Enter);
    };
    command(&mut app, "drift");
    assert!(
        matches!(app.screen, Screen::DriftList(_)),
        "{:?}",
        app.screen
    );
    press(&mut app, KeyCode::Char('d'));
    assert!(matches!(&app.screen, Screen::Diff(v) if v.key == object("web")));
    press(&mut app, KeyCode::Char('r'));
    assert!(matches!(app.screen, Screen::Revert(_)), "{:?}", app.screen);
    assert_eq!(app.back.len(), 2, "the list and the diff under the revert");
    press(&mut app, KeyCode::Esc);
    assert!(matches!(app.screen, Screen::Diff(_)), "{:?}", app.screen);
    press(&mut app, KeyCode::Esc);
    assert!(
        matches!(app.screen, Screen::DriftList(_)),
        "{:?}",
        app.screen
    );
    press(&mut app, KeyCode::Esc);
    assert!(matches!(app.screen, Screen::Table), "{:?}", app.screen);
    assert!(app.back.is_empty());

    // A `:` command from a view opened from the list starts afresh: `esc` is the table's.
    command(&mut app, "drift");
    press(&mut app, KeyCode::Char('d'));
    command(&mut app, "changes");
    assert!(matches!(app.screen, Screen::Changes(_)), "{:?}", app.screen);
    assert!(app.back.is_empty());
    press(&mut app, KeyCode::Esc);
    assert!(matches!(app.screen, Screen::Table), "{:?}", app.screen);
}
