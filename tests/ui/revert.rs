//! The `r` revert view through `update()` only (no IO): which rows may be reverted and why not,
//! the dry-run request, the preview on screen (snapshot and colours), confirmation, cancel, late
//! answers, errors worded as the headless command words them, and read-only.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use crate::ui_fixture;

use std::path::Path;
use std::sync::Arc;

use crossterm::event::KeyCode;
use kdrift::app::revert::{PreviewShown, RevertDone, RevertStage};
use kdrift::app::{App, Command, DriftSummary, Message, Screen, update};
use kdrift::cluster::revert::{Preview, RevertError};
use kdrift::manifest::ManifestIndex;
use kdrift::manifest::ObjectKey;
use kdrift::ui::theme::Theme;
use serde_json::json;
use ui_fixture::drifted::revert_preview;
use ui_fixture::*;

fn manifest_text(name: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: shop
spec:
  replicas: 3
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

/// The sample cluster with manifests for shop/web (2 drifted fields), shop/cart (in sync) and
/// shop/gone (missing); auth/api has none (unmanaged).
fn app_with_manifests() -> (App, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    for name in ["web", "cart", "gone"] {
        std::fs::write(dir.path().join(format!("{name}.yaml")), manifest_text(name)).unwrap();
    }
    let mut app = sample_app();
    let index = Arc::new(ManifestIndex::load(dir.path(), "default"));
    update(&mut app, Message::Manifests(index));
    app.ledger.set_summary(&web(), DriftSummary::Fields(2));
    app.ledger.set_summary(
        &kdrift::cluster::rows::WorkloadKind::Deployment.key("shop", "cart"),
        DriftSummary::InSync,
    );
    assert_eq!(
        app.drift_of(&kdrift::cluster::rows::WorkloadKind::Deployment.key("shop", "gone")),
        &DriftSummary::Missing
    );
    (app, dir)
}

fn web() -> ObjectKey {
    kdrift::cluster::rows::WorkloadKind::Deployment.key("shop", "web")
}

/// The full key of `shop/web`, as the views name it.
fn web_object() -> kdrift::manifest::ObjectKey {
    kdrift::manifest::ObjectKey::new("apps", "Deployment", "shop", "web")
}

/// Select the row of `name` through the filter.
fn select(app: &mut App, name: &str) {
    keys(app, &format!("/{name}"));
    key(app, KeyCode::Enter);
}

fn press(app: &mut App, code: KeyCode) -> Vec<Command> {
    update(app, Message::Key(crossterm::event::KeyEvent::from(code)))
}

/// `r` on the selected row: the id of the dry run asked for.
fn r(app: &mut App) -> u64 {
    match press(app, KeyCode::Char('r')).as_slice() {
        [Command::PreviewRevert { id, key }] => {
            assert_eq!(key, &web_object());
            *id
        }
        other => panic!("expected a dry run, got {other:?}"),
    }
}

/// The dry run's answer arrives.
fn previewed(app: &mut App, id: u64, result: Result<PreviewShown, String>) {
    assert!(update(app, Message::RevertPreviewed { id, result }).is_empty());
}

fn stage(app: &App) -> &RevertStage {
    match &app.screen {
        Screen::Revert(view) => &view.stage,
        other => panic!("revert view expected, got {other:?}"),
    }
}

fn screen_text(app: &mut App) -> String {
    let terminal = draw(app, &Theme::default_theme());
    (0..app.height)
        .map(|y| line(&terminal, y))
        .collect::<Vec<_>>()
        .join("\n")
}

fn place(dir: &Path, name: &str) -> String {
    format!("{}:1", dir.join(format!("{name}.yaml")).display())
}

#[test]
fn r_previews_then_y_reverts_and_the_detail_shows_the_rollout_back() {
    let (mut app, dir) = app_with_manifests();
    app.height = 30;
    select(&mut app, "web");
    let id = r(&mut app);
    assert_eq!(stage(&app), &RevertStage::DryRun);
    assert!(screen_text(&mut app).contains("dry run…"));

    previewed(&mut app, id, Ok(revert_preview(false)));
    let text = screen_text(&mut app);
    assert!(text.contains("-        image: web:bad"), "{text}");
    assert!(text.contains("+        image: web:1.0"), "{text}");
    assert!(
        text.contains(
            "removes spec.template.spec.containers[name=web].env[name=EXTRA] (added live by kubectl-set)"
        ),
        "{text}"
    );
    assert!(text.contains("y/enter revert · esc cancel"), "{text}");
    assert!(!text.contains("autoscaled"), "{text}");

    assert_eq!(
        press(&mut app, KeyCode::Char('y')),
        [Command::Revert {
            id,
            key: web_object()
        }]
    );
    assert!(matches!(stage(&app), RevertStage::Reverting(_)));
    // A second `y` while the revert runs does not send it twice.
    assert!(press(&mut app, KeyCode::Char('y')).is_empty());
    assert!(screen_text(&mut app).contains("reverting…"));

    let commands = update(
        &mut app,
        Message::Reverted {
            id,
            result: Ok(RevertDone {
                key: web_object(),
                removed: vec!["spec.template.spec.containers[name=web].env[name=EXTRA]".into()],
                kept: vec![],
            }),
        },
    );
    assert!(
        matches!(commands.as_slice(), [Command::WatchDetail { namespace, .. }] if namespace == "shop"),
        "{commands:?}"
    );
    assert!(matches!(&app.screen, Screen::Detail { key, .. } if *key == web()));
    let flash = app.flash.clone().unwrap();
    assert!(!flash.error);
    assert!(
        flash.text.starts_with(&format!(
            "reverted deployment/shop/web to the manifest ({})",
            place(dir.path(), "web")
        )),
        "{}",
        flash.text
    );
}

#[test]
fn enter_confirms_like_y_and_esc_cancels_back_where_r_was_pressed() {
    let (mut app, _dir) = app_with_manifests();
    select(&mut app, "web");
    key(&mut app, KeyCode::Enter); // the detail view
    let id = r(&mut app);
    previewed(&mut app, id, Ok(revert_preview(false)));
    assert_eq!(
        press(&mut app, KeyCode::Enter),
        [Command::Revert {
            id,
            key: web_object()
        }]
    );

    // From the diff view, esc goes back to it; nothing is reverted.
    let (mut app, _dir) = app_with_manifests();
    select(&mut app, "web");
    keys(&mut app, "d");
    let id = r(&mut app);
    previewed(&mut app, id, Ok(revert_preview(false)));
    assert!(press(&mut app, KeyCode::Esc).is_empty());
    assert!(matches!(&app.screen, Screen::Diff(view) if view.key == web_object()));
}

#[test]
fn a_late_answer_for_a_closed_view_is_ignored() {
    let (mut app, _dir) = app_with_manifests();
    select(&mut app, "web");
    let first = r(&mut app);
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Table);
    previewed(&mut app, first, Ok(revert_preview(false)));
    assert_eq!(app.screen, Screen::Table);

    let second = r(&mut app);
    assert_ne!(first, second);
    previewed(&mut app, first, Ok(revert_preview(false)));
    assert_eq!(stage(&app), &RevertStage::DryRun);
    previewed(&mut app, second, Ok(revert_preview(true)));
    assert!(matches!(stage(&app), RevertStage::Ready(p) if p.autoscaled));
    assert!(
        screen_text(&mut app).contains("autoscaled: replicas stay with the autoscaler"),
        "the autoscaler note"
    );
}

#[test]
fn errors_are_worded_as_the_headless_command_words_them() {
    let (mut app, _dir) = app_with_manifests();
    app.width = 200;
    select(&mut app, "web");
    let id = r(&mut app);
    let forbidden = RevertError::Forbidden {
        verb: "patch",
        resource: "deployments.apps".into(),
        namespace: "shop".into(),
        message: "denied".into(),
    }
    .to_string();
    previewed(&mut app, id, Err(forbidden.clone()));
    assert_eq!(stage(&app), &RevertStage::Failed(forbidden.clone()));
    let text = screen_text(&mut app);
    assert!(
        text.contains(
            "RBAC refused: you may not patch deployments.apps in namespace \"shop\" (API server: denied)"
        ),
        "{text}"
    );
    // y does nothing on an error; r previews again.
    assert!(press(&mut app, KeyCode::Char('y')).is_empty());
    let again = r(&mut app);
    assert_ne!(again, id);
    previewed(&mut app, again, Ok(revert_preview(false)));
    press(&mut app, KeyCode::Char('y'));
    let changed = RevertError::ChangedSincePreview {
        object: "deployment/shop/web".into(),
    }
    .to_string();
    update(
        &mut app,
        Message::Reverted {
            id: again,
            result: Err(changed.clone()),
        },
    );
    assert_eq!(stage(&app), &RevertStage::Failed(changed));
}

#[test]
fn a_preview_that_changes_nothing_says_so_and_y_does_nothing() {
    let (mut app, dir) = app_with_manifests();
    select(&mut app, "web");
    let id = r(&mut app);
    let same = json!({"metadata": {"name": "web"}, "spec": {"replicas": 3}});
    let shown = PreviewShown::from_preview(&Preview {
        object: "deployment/shop/web".into(),
        resource_version: "1".into(),
        before: same.clone(),
        after: same,
        removals: vec![],
        autoscaled: false,
        rekey: None,
        replicas_note: None,
        kept: Vec::new(),
        reverted: Vec::new(),
    });
    previewed(&mut app, id, Ok(shown));
    assert!(press(&mut app, KeyCode::Char('y')).is_empty());
    app.width = 200;
    let text = screen_text(&mut app);
    let want = format!(
        "deployment/shop/web is in sync with {}: nothing to revert",
        place(dir.path(), "web")
    );
    assert!(text.contains(&want), "{text}");
}

/// Issue 47: a release object's field git already holds is left as it is live; the view says
/// so under the diff, and alone when nothing else would change.
#[test]
fn fields_the_revert_leaves_live_are_said_in_the_view() {
    let (mut app, _dir) = app_with_manifests();
    app.height = 40;
    app.width = 200;
    select(&mut app, "web");
    let id = r(&mut app);
    let mut shown = revert_preview(false);
    let said = "leaves spec.replicas as it is live: git already holds this value (a pending helm upgrade brings the release to it); name it with --field to revert it too";
    shown.kept = vec![said.into()];
    previewed(&mut app, id, Ok(shown));
    let text = screen_text(&mut app);
    assert!(text.contains("+        image: web:1.0"), "{text}");
    assert!(
        text.contains("leaves spec.replicas as it is live: git already holds"),
        "{text}"
    );

    press(&mut app, KeyCode::Esc);
    let id = r(&mut app);
    let same = json!({"metadata": {"name": "web"}, "spec": {"replicas": 5}});
    let mut shown = PreviewShown::from_preview(&Preview {
        object: "deployment/shop/web".into(),
        resource_version: "1".into(),
        before: same.clone(),
        after: same,
        removals: vec![],
        autoscaled: false,
        rekey: None,
        replicas_note: None,
        kept: Vec::new(),
        reverted: Vec::new(),
    });
    shown.kept = vec![said.into()];
    previewed(&mut app, id, Ok(shown));
    let text = screen_text(&mut app);
    assert!(
        text.contains("leaves spec.replicas as it is live"),
        "{text}"
    );
    assert!(text.contains("nothing to revert"), "{text}");
}

#[test]
fn rows_with_nothing_to_revert_say_why_without_a_view() {
    let (mut app, dir) = app_with_manifests();
    let cases: [(&str, String); 3] = [
        (
            "cart",
            format!(
                "deployment/shop/cart is in sync with {}: nothing to revert",
                place(dir.path(), "cart")
            ),
        ),
        (
            "gone",
            "deployment/shop/gone does not exist in the cluster: there is nothing to revert (kubectl apply creates it)".into(),
        ),
        (
            "api",
            format!(
                "no manifest for deployment/auth/api under \"{}\"",
                dir.path().display()
            ),
        ),
    ];
    for (name, want) in cases {
        keys(&mut app, "/");
        for _ in 0..10 {
            key(&mut app, KeyCode::Backspace);
        }
        keys(&mut app, name);
        key(&mut app, KeyCode::Enter);
        assert!(press(&mut app, KeyCode::Char('r')).is_empty(), "{name}");
        assert_eq!(app.screen, Screen::Table, "{name}");
        let flash = app.flash.clone().unwrap();
        assert!(flash.text.starts_with(&want), "{name}: {}", flash.text);
    }
}

/// While a watch reconnects, a row in sync as last seen is not said to be in sync: `r` asks the
/// server's dry run, which answers or says the cluster cannot be reached.
#[test]
fn r_on_a_row_in_sync_asks_the_server_while_a_watch_reconnects() {
    use kdrift::cluster::watch::{ClusterEvent, ClusterMessage, WatchHealth, WatchedKind};
    let (mut app, _dir) = app_with_manifests();
    let event = ClusterEvent::Health(
        WatchedKind::Deployments,
        WatchHealth::Reconnecting {
            since: jiff::Timestamp::now(),
            reason: "connection refused".to_owned(),
        },
    );
    update(
        &mut app,
        Message::Cluster(ClusterMessage { epoch: 0, event }),
    );
    assert!(matches!(
        app.overall_health(),
        WatchHealth::Reconnecting { .. }
    ));
    select(&mut app, "cart");
    let commands = press(&mut app, KeyCode::Char('r'));
    assert!(
        matches!(commands.as_slice(), [Command::PreviewRevert { .. }]),
        "{commands:?}"
    );
    assert!(matches!(app.screen, Screen::Revert(_)), "{:?}", app.screen);
    assert!(app.flash.is_none(), "{:?}", app.flash);
}

#[test]
fn read_only_ignores_r_and_hides_it_from_help_and_hints() {
    let (mut app, _dir) = app_with_manifests();
    app.height = 40;
    select(&mut app, "web");
    let hints = |app: &mut App| {
        let terminal = draw(app, &Theme::default_theme());
        line(&terminal, app.height - 1)
    };
    assert!(hints(&mut app).contains("<r> revert"));
    keys(&mut app, "?");
    assert!(screen_text(&mut app).contains("revert to the manifest"));
    key(&mut app, KeyCode::Esc);

    app.readonly = true;
    assert!(press(&mut app, KeyCode::Char('r')).is_empty());
    assert_eq!(app.screen, Screen::Table);
    assert!(app.flash.is_none());
    assert!(!hints(&mut app).contains("<r>"), "{}", hints(&mut app));
    keys(&mut app, "d");
    assert!(!hints(&mut app).contains("<r>"), "{}", hints(&mut app));
    assert!(press(&mut app, KeyCode::Char('r')).is_empty());
    key(&mut app, KeyCode::Esc);
    keys(&mut app, "?");
    let text = screen_text(&mut app);
    assert!(!text.contains("revert to the manifest"), "{text}");
    assert!(text.contains("readonly"), "the status bar says read-only");
}

#[test]
fn revert_view_with_a_preview() {
    let (mut app, dir) = app_with_manifests();
    app.height = 30;
    select(&mut app, "web");
    let id = r(&mut app);
    previewed(&mut app, id, Ok(revert_preview(true)));
    let theme = Theme::default_theme();
    let terminal = draw(&mut app, &theme);
    let text = (0..app.height)
        .map(|y| line(&terminal, y))
        .collect::<Vec<_>>()
        .join("\n")
        .replace(&dir.path().display().to_string(), "<manifests>");
    insta::assert_snapshot!(text);
    // Colour carries meaning: the line going is red, the line coming is green.
    let buf = terminal.backend().buffer();
    let removed = find_line(&terminal, "-        image: web:bad").unwrap();
    let added = find_line(&terminal, "+        image: web:1.0").unwrap();
    let x = line(&terminal, removed).find('-').unwrap() as u16;
    assert_eq!(buf[(x, removed)].fg, theme.diff_removed.fg.unwrap());
    assert_eq!(buf[(x, added)].fg, theme.diff_added.fg.unwrap());
}

/// In a sparse checkout, an object with no manifest on disk may have one the checkout leaves
/// out: `r` and `a` say so, with the command that brings it in (the headless commands name the
/// file; the live view has no git at hand).
#[test]
fn in_a_sparse_checkout_no_manifest_says_where_it_may_be() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    std::fs::create_dir_all(dir.path().join("shop")).unwrap();
    std::fs::create_dir_all(dir.path().join("auth")).unwrap();
    std::fs::write(dir.path().join("shop/web.yaml"), manifest_text("web")).unwrap();
    let api = manifest_text("api").replace("namespace: shop", "namespace: auth");
    std::fs::write(dir.path().join("auth/api.yaml"), api).unwrap();
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit",
        "-qm",
        "manifests",
    ]);
    git(&["sparse-checkout", "set", "shop"]);
    assert!(!dir.path().join("auth/api.yaml").exists());
    let note = kdrift::manifest::sparse::note(dir.path()).expect("the checkout is sparse");
    let selection = kdrift::manifest::kustomize::Selection {
        notes: vec![note.trim_start_matches("note: ").to_owned()],
        ..Default::default()
    };
    let mut app = sample_app();
    let index = ManifestIndex::load_with(dir.path(), "default", selection);
    update(&mut app, Message::Manifests(Arc::new(index)));
    keys(&mut app, "/api");
    key(&mut app, KeyCode::Enter);
    let hint = "this checkout is sparse: a manifest it leaves out may define it (git sparse-checkout add FOLDER, or git sparse-checkout disable)";
    assert!(press(&mut app, KeyCode::Char('r')).is_empty());
    let flash = app.flash.clone().unwrap().text;
    assert!(
        flash.starts_with("no manifest for deployment/auth/api under") && flash.ends_with(hint),
        "{flash}"
    );
    app.flash = None;
    assert!(press(&mut app, KeyCode::Char('a')).is_empty());
    let flash = app.flash.clone().unwrap().text;
    assert!(
        flash.starts_with("deployment/auth/api has no manifest") && flash.ends_with(hint),
        "{flash}"
    );
}

/// A revert made from the diff of an object that is not a Deployment goes back to that diff,
/// which is fetched again at once: it shows the object as the revert left it, not the drift
/// from before (it stayed so until ctrl-r).
#[test]
fn back_in_the_diff_after_a_revert_it_is_fetched_again() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("settings.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: shop\ndata:\n  MODE: fast\n",
    )
    .unwrap();
    let mut app = sample_app();
    let index = Arc::new(ManifestIndex::load(dir.path(), "default"));
    update(&mut app, Message::Manifests(index));
    let cm = kdrift::manifest::ObjectKey::new("", "ConfigMap", "shop", "settings");
    assert!(matches!(
        app.open_diff(cm.clone()).as_slice(),
        [Command::FetchDiff(..)]
    ));
    let id = match app.open_revert(cm.clone()).as_slice() {
        [Command::PreviewRevert { id, .. }] => *id,
        other => panic!("expected a dry run, got {other:?}"),
    };
    previewed(&mut app, id, Ok(revert_preview(false)));
    assert_eq!(
        press(&mut app, KeyCode::Char('y')),
        [Command::Revert {
            id,
            key: cm.clone()
        }]
    );
    let commands = update(
        &mut app,
        Message::Reverted {
            id,
            result: Ok(RevertDone {
                key: cm.clone(),
                removed: vec![],
                kept: vec![],
            }),
        },
    );
    assert!(
        matches!(&app.screen, Screen::Diff(view) if view.key == cm
            && view.content == kdrift::app::diff::DiffContent::Loading),
        "{:?}",
        app.screen
    );
    assert_eq!(commands, [Command::FetchDiff(cm, "v1".into())]);
}
