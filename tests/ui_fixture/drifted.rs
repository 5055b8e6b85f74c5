//! A cluster whose shop/web was changed live twice (scaled by `kubectl scale`, given an env var
//! by `kubectl set env`) against manifests in a temp folder: the world of the accept, diff,
//! revert and `:drift` views, with what the runtime answers when they open.
use std::path::Path;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent};
use jiff::Timestamp;
use kdrift::app::accept::{AcceptContent, AcceptFetched, FileText, GitState};
use kdrift::app::revert::PreviewShown;
use kdrift::app::{App, Command, DriftSummary, Message, Screen, update};
use kdrift::cluster::client::NamespaceScope;
use kdrift::cluster::live::{LiveDeployment, LiveRow};
use kdrift::cluster::revert::Preview;
use kdrift::cluster::watch::{ClusterEvent, ClusterMessage, WatchUpdate};
use kdrift::drift::LiveObject;
use kdrift::drift::path::DriftPath;
use kdrift::manifest::ManifestIndex;
use kdrift::manifest::ObjectKey;
use kdrift::manifest::edit::ContentHash;
use kdrift::revert::plan::Removal;
use kdrift::schema::defaults::apply_defaults;
use kdrift::sim::patch::strategic_merge_patch;
use kdrift::sim::resources::ResourceType;
use kdrift::sim::ssa::record_update;
use serde_json::{Map, Value, json};

pub const DEPLOYMENT: ResourceType = ResourceType::DEPLOYMENT;
pub const NOW: &str = "2026-11-22T02:12:00Z";

pub const WEB: &str = "# The storefront.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  # Two is enough off-peak.
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: web:1.0
          env:
            - name: MODE
              value: prod # not staging
";

pub const CART: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: cart
  namespace: shop
spec:
  replicas: 1
  selector:
    matchLabels:
      app: cart
  template:
    metadata:
      labels:
        app: cart
    spec:
      containers:
        - name: cart
          image: cart:1.0
";

pub fn manifests() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("web.yaml"), WEB).unwrap();
    std::fs::write(dir.path().join("cart.yaml"), CART).unwrap();
    dir
}

pub fn applied(text: &str) -> Value {
    let mut object: Value = serde_yaml::from_str(text).unwrap();
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

/// `patch` written live by `manager` (through `subresource`) at `time`.
pub fn hotfix(
    old: &Value,
    patch: Value,
    manager: &str,
    subresource: Option<&str>,
    time: &str,
) -> Value {
    let mut new = strategic_merge_patch(DEPLOYMENT, old, &patch).unwrap();
    apply_defaults(
        "apps",
        "Deployment",
        kdrift::schema::builtin_kind("Deployment"),
        &mut new,
    );
    record_update(DEPLOYMENT, Some(old), &mut new, manager, subresource, time);
    new
}

/// web scaled to 5 through `/scale` (an entry without a time, as a v1.36 server records it) and
/// given `EXTRA=1` by `kubectl set env` (2 minutes ago).
pub fn web_hotfixed() -> Value {
    let scaled = hotfix(
        &applied(WEB),
        json!({"spec": {"replicas": 5}}),
        "kubectl",
        Some("scale"),
        "2026-11-22T02:00:00Z",
    );
    hotfix(
        &scaled,
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "web", "env": [{"name": "EXTRA", "value": "1"}]}
        ]}}}}),
        "kubectl-set",
        None,
        "2026-11-22T02:10:00Z",
    )
}

pub fn live_row(object: &Value) -> LiveRow {
    LiveRow::from_object(serde_json::from_value::<LiveDeployment>(object.clone()).unwrap())
}

pub fn key(name: &str) -> ObjectKey {
    kdrift::cluster::rows::WorkloadKind::Deployment.key("shop", name)
}

/// The full key of the Deployment `shop/name`, as the views name it.
pub fn object(name: &str) -> kdrift::manifest::ObjectKey {
    kdrift::manifest::ObjectKey::new("apps", "Deployment", "shop", name)
}

pub fn press(app: &mut App, code: KeyCode) -> Vec<Command> {
    update(app, Message::Key(KeyEvent::from(code)))
}

pub fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// The app on `dir` with web drifted (two fields) and cart in sync, web selected.
pub fn drifted_app(dir: &Path, readonly: bool) -> App {
    let mut app = App::new(
        "kind-dev",
        vec![],
        NamespaceScope::All,
        NOW.parse::<Timestamp>().unwrap(),
    );
    app.readonly = readonly;
    update(
        &mut app,
        Message::Manifests(Arc::new(ManifestIndex::load(dir, "default"))),
    );
    let updates = vec![
        WatchUpdate::Init,
        WatchUpdate::InitApply(live_row(&web_hotfixed())),
        WatchUpdate::InitApply(live_row(&applied(CART))),
        WatchUpdate::InitDone,
    ];
    update(
        &mut app,
        Message::Cluster(ClusterMessage {
            epoch: 0,
            event: ClusterEvent::WorkloadsLive(
                kdrift::cluster::rows::WorkloadKind::Deployment,
                updates,
            ),
        }),
    );
    assert_eq!(app.drift_of(&key("web")), &DriftSummary::Fields(2));
    assert_eq!(app.drift_of(&key("cart")), &DriftSummary::InSync);
    select(&mut app, "web");
    app
}

pub fn select(app: &mut App, name: &str) {
    // esc clears the filter of an earlier selection.
    press(app, KeyCode::Esc);
    press(app, KeyCode::Char('/'));
    typed(app, &format!("shop/{name}"));
    press(app, KeyCode::Enter);
}

/// What the runtime answers to `PrepareAccept` for web.
pub fn fetched(dir: &Path, git: GitState) -> Message {
    let text = std::fs::read_to_string(dir.join("web.yaml")).unwrap();
    Message::AcceptReady(Box::new(AcceptFetched {
        key: object("web"),
        live: Ok(Some(Box::new(
            LiveObject::from_value(web_hotfixed(), kdrift::schema::Schemas::builtin()).unwrap(),
        ))),
        file: Ok(FileText {
            path: Arc::from(dir.join("web.yaml")),
            hash: ContentHash::of(text.as_bytes()),
            text: Arc::from(text),
        }),
        git,
        others: Vec::new(),
        chart: None,
    }))
}

pub fn on_main() -> GitState {
    GitState::Repository {
        branch: Some("main".into()),
        dirty: false,
    }
}

/// `a` on web and the runtime's answer: the view, ready.
pub fn open(dir: &Path) -> App {
    let mut app = drifted_app(dir, false);
    let commands = press(&mut app, KeyCode::Char('a'));
    assert_eq!(
        commands,
        [Command::PrepareAccept {
            key: object("web"),
            api_version: "apps/v1".into(),
            file: dir.join("web.yaml"),
            root: dir.to_path_buf(),
            others: Vec::new(),
        }]
    );
    assert!(matches!(&app.screen, Screen::Accept(v) if v.content == AcceptContent::Loading));
    assert!(update(&mut app, fetched(dir, on_main())).is_empty());
    app
}

/// What a dry run of web answers: a bad image goes back to the manifest's, an env var added by
/// `kubectl set env` goes.
pub fn revert_preview(autoscaled: bool) -> PreviewShown {
    let live = |image: &str, env: bool| {
        let mut container = json!({"name": "web", "image": image});
        if env {
            container["env"] = json!([{"name": "EXTRA", "value": "1"}]);
        }
        json!({
            "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "42"},
            "spec": {"replicas": 3, "template": {"spec": {"containers": [container]}}}
        })
    };
    let mut item = Map::new();
    item.insert("name".into(), json!("web"));
    let mut env = Map::new();
    env.insert("name".into(), json!("EXTRA"));
    let path = DriftPath::default()
        .child("spec")
        .child("template")
        .child("spec")
        .child("containers")
        .item(item, Some(0))
        .child("env")
        .item(env, None);
    PreviewShown::from_preview(&Preview {
        object: "deployment/shop/web".into(),
        resource_version: "42".into(),
        before: live("web:bad", true),
        after: live("web:1.0", false),
        removals: vec![Removal {
            path,
            value: json!({"name": "EXTRA", "value": "1"}),
            manager: Some("kubectl-set".into()),
            order: None,
            emptied_by: Vec::new(),
        }],
        autoscaled,
        rekey: None,
        replicas_note: None,
        kept: Vec::new(),
        reverted: Vec::new(),
    })
}
