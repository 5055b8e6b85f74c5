//! The `:changes` view through `update()` only (no IO): the start lines of the listed objects,
//! a line per watch event that changed more than status (newest first, with its manager and
//! whether git agrees), the kind/manager/text filters, and `enter`, `a` and `r` from a line.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent};
use jiff::Timestamp;
use kdrift::app::{App, Command, Message, Screen, update};
use kdrift::cluster::client::NamespaceScope;
use kdrift::cluster::live::{LiveDeployment, LiveRow};
use kdrift::cluster::watch::{ClusterEvent, ClusterMessage, WatchUpdate};
use kdrift::drift::LiveObject;
use kdrift::manifest::ManifestIndex;
use kdrift::schema::defaults::apply_defaults;
use kdrift::sim::patch::strategic_merge_patch;
use kdrift::sim::resources::ResourceType;
use kdrift::sim::ssa::record_update;
use kdrift::ui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};

const DEPLOYMENT: ResourceType = ResourceType::DEPLOYMENT;
const NOW: &str = "2026-11-22T02:12:00Z";

fn manifest_text(name: &str, replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: shop
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
"
    )
}

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

/// `old` patched by `manager` (through `subresource`) at `time`.
fn write(old: &Value, patch: Value, manager: &str, subresource: Option<&str>, time: &str) -> Value {
    let mut new = strategic_merge_patch(DEPLOYMENT, old, &patch).unwrap();
    record_update(DEPLOYMENT, Some(old), &mut new, manager, subresource, time);
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

/// A list of the Deployments `objects`, as their watcher reports it.
fn listed(app: &mut App, objects: &[&Value]) {
    let mut updates = vec![WatchUpdate::Init];
    updates.extend(objects.iter().map(|o| WatchUpdate::InitApply(live_row(o))));
    updates.push(WatchUpdate::InitDone);
    watch(app, updates);
}

fn app() -> App {
    let mut app = App::new(
        "kind-dev",
        vec![],
        NamespaceScope::All,
        NOW.parse::<Timestamp>().unwrap(),
    );
    app.changes.frozen = Some(NOW.parse().unwrap());
    app
}

fn press(app: &mut App, code: KeyCode) -> Vec<Command> {
    update(app, Message::Key(KeyEvent::from(code)))
}

fn type_text(app: &mut App, text: &str) -> Vec<Command> {
    let mut commands = Vec::new();
    for c in text.chars() {
        commands = press(
            app,
            if c == '\n' {
                KeyCode::Enter
            } else {
                KeyCode::Char(c)
            },
        );
    }
    commands
}

fn screen(app: &mut App, width: u16, height: u16) -> String {
    app.width = width;
    app.height = height;
    app.prepare_frame();
    let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
    term.draw(|f| kdrift::ui::render(app, &Theme::default_theme(), f))
        .unwrap();
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

/// web and cart applied and listed, then cart scaled (kubectl, through /scale) and labelled.
fn incident() -> (tempfile::TempDir, App, Value) {
    let dir = manifests();
    let mut app = app();
    update(&mut app, Message::Manifests(index(dir.path())));
    let (web, cart) = (applied("web", 3), applied("cart", 2));
    listed(&mut app, &[&web, &cart]);
    let scaled = write(
        &cart,
        json!({"spec": {"replicas": 5}}),
        "kubectl",
        Some("scale"),
        "2026-11-22T02:00:00Z",
    );
    // A v1.36 server records no time for a /scale write: the line has the time it was seen.
    app.changes.frozen = Some("2026-11-22T02:00:01Z".parse().unwrap());
    watch(&mut app, vec![WatchUpdate::Apply(live_row(&scaled))]);
    let mut status_only = scaled.clone();
    status_only["status"] = json!({"replicas": 5, "readyReplicas": 3});
    status_only["metadata"]["resourceVersion"] = json!("9");
    watch(&mut app, vec![WatchUpdate::Apply(live_row(&status_only))]);
    let labelled = write(
        &status_only,
        json!({"metadata": {"labels": {"team": "payments"}}}),
        "kubectl-label",
        None,
        "2026-11-22T02:10:00Z",
    );
    watch(&mut app, vec![WatchUpdate::Apply(live_row(&labelled))]);
    (dir, app, labelled)
}

#[test]
fn the_timeline_shows_start_lines_then_each_write_newest_first_with_its_manager() {
    let (_dir, mut app, _) = incident();
    type_text(&mut app, ":changes\n");
    assert!(matches!(app.screen, Screen::Changes(_)));
    let text = screen(&mut app, 150, 12);
    insta::assert_snapshot!(text);
    let lines: Vec<&str> = text.lines().collect();
    // Newest first: the label, the scale, then the start lines of the two applies.
    assert!(lines[2].contains("deployment/shop/cart") && lines[2].contains("kubectl-label Update"));
    assert!(lines[2].contains(".metadata.labels.team: (none) → \"payments\""));
    assert!(
        lines[3].contains("kubectl (scale) Update") && lines[3].contains(".spec.replicas: 2 → 5")
    );
    assert!(lines[3].contains("drifted"), "{text}");
    // The status-only event made no line: four lines in all (two writes, two applies).
    assert!(text.contains(" changes(all)[4] "), "{text}");
}

#[test]
fn kind_manager_and_text_filters_narrow_the_lines_and_esc_clears_them() {
    let (_dir, mut app, _) = incident();
    type_text(&mut app, ":changes\n");
    // M: the first manager in order (kubectl), then the next (kubectl-client-side-apply).
    press(&mut app, KeyCode::Char('M'));
    let text = screen(&mut app, 150, 12);
    assert!(
        text.contains("manager=kubectl ") && text.contains("[1]"),
        "{text}"
    );
    press(&mut app, KeyCode::Char('M'));
    let text = screen(&mut app, 150, 12);
    assert!(
        text.contains("manager=kubectl-client-side-apply") && text.contains("[2]"),
        "{text}"
    );
    press(&mut app, KeyCode::Esc);
    type_text(&mut app, "/payments\n");
    let text = screen(&mut app, 150, 12);
    assert!(text.contains("/payments") && text.contains("[1]"), "{text}");
    assert!(text.contains("kubectl-label"), "{text}");
    // K: the only kind (deployment); again: none.
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('K'));
    assert!(screen(&mut app, 150, 12).contains("kind=deployment"));
    press(&mut app, KeyCode::Char('K'));
    assert!(!screen(&mut app, 150, 12).contains("kind="));
    // Esc without filters goes back to the table.
    press(&mut app, KeyCode::Esc);
    assert!(matches!(app.screen, Screen::Table));
}

#[test]
fn enter_opens_the_diff_at_the_lines_field_and_esc_comes_back_a_and_r_act_on_its_object() {
    let (_dir, mut app, labelled) = incident();
    type_text(&mut app, ":changes\n");
    // The second line: the scale of cart.
    press(&mut app, KeyCode::Char('j'));
    let commands = press(&mut app, KeyCode::Enter);
    let cart = kdrift::manifest::ObjectKey::new("apps", "Deployment", "shop", "cart");
    assert_eq!(
        commands,
        vec![Command::FetchDiff(cart.clone(), "apps/v1".to_owned())]
    );
    let live =
        LiveObject::from_value(labelled.clone(), kdrift::schema::Schemas::builtin()).unwrap();
    update(
        &mut app,
        Message::DiffFetched((cart.clone(), Ok(Some(Box::new(live))))),
    );
    let Screen::Diff(view) = &app.screen else {
        panic!("{:?}", app.screen)
    };
    // Scrolled to the replicas field (two lines of context above it), past the label's.
    let kdrift::app::diff::DiffContent::Ready { lines, .. } = &view.content else {
        panic!("{:?}", view.content)
    };
    let first = lines.iter().position(|l| l.item.is_some()).unwrap();
    let replicas = lines
        .iter()
        .position(|l| l.item.is_some() && l.text.contains("replicas"))
        .unwrap();
    assert!(first < replicas, "the label's item comes first");
    assert_eq!(view.scroll, replicas - 2);
    assert!(view.focus.is_none());
    press(&mut app, KeyCode::Esc);
    let Screen::Changes(view) = &app.screen else {
        panic!("esc went to {:?}", app.screen)
    };
    assert_eq!(view.cursor, 1, "the view's place is kept");
    // r: the revert's dry run of cart.
    let commands = press(&mut app, KeyCode::Char('r'));
    assert!(
        matches!(commands.as_slice(), [Command::PreviewRevert { key, .. }] if *key == cart),
        "{commands:?}"
    );
    press(&mut app, KeyCode::Esc);
    assert!(matches!(app.screen, Screen::Changes(_)), "{:?}", app.screen);
    // a: the accept view of cart asks for its object and file.
    let commands = press(&mut app, KeyCode::Char('a'));
    assert!(
        matches!(commands.as_slice(), [Command::PrepareAccept { key, .. }] if *key == cart),
        "{commands:?}"
    );
}

#[test]
fn read_only_a_and_r_do_nothing_and_help_lists_changes() {
    let (_dir, mut app, _) = incident();
    app.readonly = true;
    type_text(&mut app, ":changes\n");
    assert!(press(&mut app, KeyCode::Char('a')).is_empty());
    assert!(press(&mut app, KeyCode::Char('r')).is_empty());
    assert!(matches!(app.screen, Screen::Changes(_)));
    assert!(
        kdrift::app::keys::HELP
            .iter()
            .any(|(k, _)| *k == ":changes")
    );
}

/// Objects listed before their desired state was read (the manifests, or a Helm release's
/// record, come after the watches' first lists): their start lines say nothing of git at first,
/// and once each is compared they say whether git agrees, as `kdrift changes` says it.
#[test]
fn start_lines_said_before_the_manifests_say_whether_git_agrees_once_compared() {
    use kdrift::cluster::live::LiveJson;
    use kdrift::manifest::ObjectKey;
    let dir = manifests();
    let mut app = app();
    let web = applied("web", 3);
    let cart = write(
        &applied("cart", 2),
        json!({"spec": {"replicas": 5}}),
        "kubectl-edit",
        None,
        "2026-11-22T02:00:00Z",
    );
    // api: no manifest describes it.
    let api = applied("api", 1);
    listed(&mut app, &[&web, &cart, &api]);
    type_text(&mut app, ":changes\n");
    let before = screen(&mut app, 150, 10);
    let said: Vec<&str> = before
        .lines()
        .filter(|l| l.contains("deployment/"))
        .collect();
    assert_eq!(said.len(), 4, "{before}");
    assert!(
        said.iter()
            .all(|l| l.trim_end_matches('│').trim_end().ends_with('-')),
        "{before}"
    );

    // (The app asks for the kinds to be mapped, then for each object: answered here.)
    update(&mut app, Message::Manifests(index(dir.path())));
    let json = |object: &Value| -> Option<LiveJson> {
        Some(
            serde_json::from_value::<LiveDeployment>(object.clone())
                .unwrap()
                .json,
        )
    };
    let key = |name: &str| ObjectKey::new("apps", "Deployment", "shop", name);
    update(
        &mut app,
        Message::Fetched(vec![
            (key("web"), Ok(json(&web))),
            (key("cart"), Ok(json(&cart))),
        ]),
    );
    let text = screen(&mut app, 150, 10);
    let line_of = |needle: &str| {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle}: {text}"))
            .to_owned()
    };
    assert!(line_of("kubectl-edit").contains("drifted"), "{text}");
    assert!(line_of("deployment/shop/web").contains("in sync"), "{text}");
    assert!(
        line_of("deployment/shop/api").contains("not in git"),
        "{text}"
    );
    // Said again, not added: cart's two entries, web's and api's one, as before.
    assert!(text.contains(" changes(all)[4] "), "{text}");
}

#[test]
fn a_writes_line_says_again_whether_git_agrees_when_git_takes_its_value() {
    use kdrift::cluster::live::LiveJson;
    use kdrift::manifest::ObjectKey;
    let (dir, mut app, labelled) = incident();
    type_text(&mut app, ":changes\n");
    let line_of = |text: &str, needle: &str| {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle}: {text}"))
            .to_owned()
    };
    let before = screen(&mut app, 160, 10);
    assert!(
        line_of(&before, "kubectl (scale)").contains("drifted"),
        "{before}"
    );

    // The scale accepted into git (as `a` commits it): the manifests are read again and cart
    // fetched and compared with them.
    std::fs::write(dir.path().join("cart.yaml"), manifest_text("cart", 5)).unwrap();
    update(&mut app, Message::Manifests(index(dir.path())));
    let json = serde_json::from_value::<LiveDeployment>(labelled.clone())
        .unwrap()
        .json;
    let cart = ObjectKey::new("apps", "Deployment", "shop", "cart");
    update(
        &mut app,
        Message::Fetched(vec![(cart, Ok(Some::<LiveJson>(json)))]),
    );
    let after = screen(&mut app, 160, 10);
    assert!(
        line_of(&after, "kubectl (scale)").contains("in sync"),
        "{after}"
    );
    // A label added live is drift still (git did not take it).
    assert!(
        line_of(&after, "kubectl-label").contains("drifted"),
        "{after}"
    );

    // And back: git no longer holds the scale's value.
    std::fs::write(dir.path().join("cart.yaml"), manifest_text("cart", 2)).unwrap();
    update(&mut app, Message::Manifests(index(dir.path())));
    let json = serde_json::from_value::<LiveDeployment>(labelled)
        .unwrap()
        .json;
    let cart = ObjectKey::new("apps", "Deployment", "shop", "cart");
    update(&mut app, Message::Fetched(vec![(cart, Ok(Some(json)))]));
    let again = screen(&mut app, 160, 10);
    assert!(
        line_of(&again, "kubectl (scale)").contains("drifted"),
        "{again}"
    );
}
