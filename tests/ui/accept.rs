//! The accept view through `update()` only (no IO): `a` on a drifted row asks for the live
//! object and the file, the view lists the fields and the exact file diff, toggles recompute the
//! diff, `enter` asks for the write with the checked fields, `esc` cancels; rows without drift
//! and read-only mode do not open it. A snapshot of the view and the colours of its diff.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::ui_fixture;

use std::sync::Arc;

use crossterm::event::KeyCode;
use kdrift::app::accept::{AcceptContent, AcceptFetched, AcceptForm, FileText, GitState};
use kdrift::app::{App, Command, DriftSummary, Message, Screen, update};
use kdrift::cluster::watch::{ClusterEvent, ClusterMessage, WatchUpdate};
use kdrift::drift::LiveObject;
use kdrift::manifest::edit::ContentHash;
use kdrift::ui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use ui_fixture::drifted::*;

fn form(app: &App) -> &AcceptForm {
    match &app.screen {
        Screen::Accept(view) => match &view.content {
            AcceptContent::Ready(form) => form,
            other => panic!("not ready: {other:?}"),
        },
        other => panic!("not the accept view: {other:?}"),
    }
}

/// The `+`/`-` lines of the preview.
fn changed_lines(app: &App) -> Vec<String> {
    form(app)
        .diff_text()
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .map(str::to_owned)
        .collect()
}

fn draw(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    app.width = width;
    app.height = height;
    ui_fixture::draw(app, &Theme::default_theme())
}

fn screen_text(term: &Terminal<TestBackend>) -> String {
    let height = term.backend().buffer().area.height;
    (0..height)
        .map(|y| ui_fixture::line(term, y) + "\n")
        .collect()
}

#[test]
fn the_view_lists_the_drifted_fields_checked_and_the_diff_of_both() {
    let dir = manifests();
    let mut app = open(dir.path());
    let f = form(&app);
    let fields: Vec<(String, bool)> = f
        .fields
        .iter()
        .map(|f| (f.item.path.to_string(), f.checked))
        .collect();
    assert_eq!(
        fields,
        [
            ("spec.replicas".to_owned(), true),
            (
                "spec.template.spec.containers[name=web].env[name=EXTRA]".to_owned(),
                true
            ),
        ]
    );
    assert_eq!(
        changed_lines(&app),
        [
            "-  replicas: 2",
            "+  replicas: 5",
            "+            - name: EXTRA",
            "+              value: \"1\"",
        ]
    );
    let term = draw(&mut app, 110, 30);
    let text = screen_text(&term);
    // Paths are shown relative to the manifests folder: nothing of the temp folder shows.
    assert!(!text.contains(&dir.path().display().to_string()), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn space_toggles_a_field_and_the_diff_follows() {
    let dir = manifests();
    let mut app = open(dir.path());
    press(&mut app, KeyCode::Char(' '));
    assert!(!form(&app).fields[0].checked);
    assert_eq!(
        changed_lines(&app),
        ["+            - name: EXTRA", "+              value: \"1\""]
    );
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char(' '));
    assert_eq!(changed_lines(&app), Vec::<String>::new());
    let text = screen_text(&draw(&mut app, 110, 30));
    assert!(
        text.contains("nothing checked: nothing will be written"),
        "{text}"
    );
    press(&mut app, KeyCode::Char('k'));
    press(&mut app, KeyCode::Char(' '));
    assert_eq!(changed_lines(&app), ["-  replicas: 2", "+  replicas: 5"]);
}

#[test]
fn enter_asks_to_write_and_commit_the_checked_fields_only() {
    let dir = manifests();
    let mut app = open(dir.path());
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char(' '));
    let commands = press(&mut app, KeyCode::Enter);
    let [Command::Accept(request)] = commands.as_slice() else {
        panic!("{commands:?}");
    };
    assert_eq!(request.key, object("web"));
    let chosen: Vec<String> = request.chosen.iter().map(|i| i.path.to_string()).collect();
    assert_eq!(chosen, ["spec.replicas"]);
    assert_eq!(request.chosen[0].live, Some(json!(5)));
    assert!(
        request
            .commit
            .message
            .starts_with("kdrift: accept live spec.replicas of deployment/shop/web\n"),
        "{}",
        request.commit.message
    );
    assert_eq!(request.commit.branch, None);
    assert_eq!(
        request.prepared.after,
        WEB.replace("replicas: 2", "replicas: 5")
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("web.yaml")).unwrap(),
        WEB,
        "the app writes nothing"
    );
    assert!(form(&app).committing);
    // A second enter while the first is under way asks for nothing.
    assert!(press(&mut app, KeyCode::Enter).is_empty());

    // The runtime's answer closes the view and is shown in the status bar.
    let said =
        "committed 1a2b3c4 on main: kdrift: accept live spec.replicas of deployment/shop/web";
    update(
        &mut app,
        Message::Accepted {
            key: object("web"),
            result: Ok(said.to_owned()),
        },
    );
    assert_eq!(app.screen, Screen::Table);
    let text = screen_text(&draw(&mut app, 110, 20));
    assert!(text.contains(said), "{text}");
}

#[test]
fn enter_with_nothing_checked_says_so_and_does_nothing() {
    let dir = manifests();
    let mut app = open(dir.path());
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char(' '));
    assert!(press(&mut app, KeyCode::Enter).is_empty());
    assert!(!form(&app).committing);
    let flash = app.flash.clone().unwrap();
    assert!(flash.text.starts_with("nothing checked"), "{flash:?}");
}

#[test]
fn a_in_the_detail_view_stops_its_watchers_and_opens_the_accept_view() {
    let dir = manifests();
    let mut app = drifted_app(dir.path(), false);
    let opened = press(&mut app, KeyCode::Enter);
    assert!(
        matches!(opened.as_slice(), [Command::WatchDetail { .. }]),
        "{opened:?}"
    );
    let commands = press(&mut app, KeyCode::Char('a'));
    assert_eq!(
        commands,
        [
            Command::StopDetail,
            Command::PrepareAccept {
                key: object("web"),
                api_version: "apps/v1".into(),
                file: dir.path().join("web.yaml"),
                root: dir.path().to_path_buf(),
                others: Vec::new(),
            }
        ]
    );
    assert!(matches!(&app.screen, Screen::Accept(_)));

    // A row in sync: a message, and the detail view stays open with its watchers.
    let mut app = drifted_app(dir.path(), false);
    select(&mut app, "cart");
    press(&mut app, KeyCode::Enter);
    assert!(press(&mut app, KeyCode::Char('a')).is_empty());
    assert!(matches!(&app.screen, Screen::Detail { .. }));
    let flash = app
        .flash
        .as_ref()
        .map(|f| f.text.clone())
        .unwrap_or_default();
    assert!(flash.contains("in sync"), "{flash}");
}

#[test]
fn esc_cancels_back_to_the_table_or_to_the_diff_it_came_from() {
    let dir = manifests();
    let mut app = open(dir.path());
    assert!(press(&mut app, KeyCode::Esc).is_empty());
    assert_eq!(app.screen, Screen::Table);

    let mut app = drifted_app(dir.path(), false);
    assert_eq!(
        press(&mut app, KeyCode::Char('d')),
        [Command::FetchDiff(object("web"), "apps/v1".into())]
    );
    let commands = press(&mut app, KeyCode::Char('a'));
    assert!(
        matches!(commands.as_slice(), [Command::PrepareAccept { .. }]),
        "{commands:?}"
    );
    assert_eq!(
        press(&mut app, KeyCode::Esc),
        [Command::FetchDiff(object("web"), "apps/v1".into())]
    );
    assert!(matches!(&app.screen, Screen::Diff(v) if v.key == object("web")));
}

#[test]
fn a_refused_accept_closes_the_view_and_shows_why() {
    let dir = manifests();
    let mut app = open(dir.path());
    press(&mut app, KeyCode::Enter);
    let why = "spec.replicas changed live since it was shown (5 → 6); press a again";
    update(
        &mut app,
        Message::Accepted {
            key: object("web"),
            result: Err(why.to_owned()),
        },
    );
    assert_eq!(app.screen, Screen::Table);
    assert_eq!(
        app.flash.as_ref().map(|f| (f.text.as_str(), f.error)),
        Some((why, true))
    );
}

#[test]
fn rows_without_drift_say_why_and_open_nothing() {
    let dir = manifests();
    let mut app = drifted_app(dir.path(), false);
    select(&mut app, "cart");
    assert!(press(&mut app, KeyCode::Char('a')).is_empty());
    assert_eq!(app.screen, Screen::Table);
    let flash = app.flash.clone().unwrap();
    assert!(
        flash.text.contains("deployment/shop/cart is in sync"),
        "{flash:?}"
    );

    // Live without a manifest: nothing to accept into.
    let mut stray = applied(CART);
    stray["metadata"]["name"] = json!("stray");
    update(
        &mut app,
        Message::Cluster(ClusterMessage {
            epoch: 0,
            event: ClusterEvent::WorkloadsLive(
                kdrift::cluster::rows::WorkloadKind::Deployment,
                vec![WatchUpdate::Apply(live_row(&stray))],
            ),
        }),
    );
    assert_eq!(app.drift_of(&key("stray")), &DriftSummary::Unmanaged);
    select(&mut app, "stray");
    assert!(press(&mut app, KeyCode::Char('a')).is_empty());
    assert_eq!(app.screen, Screen::Table);
    let flash = app.flash.clone().unwrap();
    assert!(
        flash.text.contains("deployment/shop/stray has no manifest"),
        "{flash:?}"
    );

    // Drift gone by the time the object is fetched: the view closes, saying so.
    let mut app = drifted_app(dir.path(), false);
    press(&mut app, KeyCode::Char('a'));
    let text = std::fs::read_to_string(dir.path().join("web.yaml")).unwrap();
    let in_sync = applied(WEB);
    update(
        &mut app,
        Message::AcceptReady(Box::new(AcceptFetched {
            key: object("web"),
            live: Ok(Some(Box::new(
                LiveObject::from_value(in_sync, kdrift::schema::Schemas::builtin()).unwrap(),
            ))),
            file: Ok(FileText {
                path: Arc::from(dir.path().join("web.yaml")),
                hash: ContentHash::of(text.as_bytes()),
                text: Arc::from(text),
            }),
            git: on_main(),
            others: Vec::new(),
            chart: None,
        })),
    );
    assert_eq!(app.screen, Screen::Table);
    assert!(
        app.flash.as_ref().unwrap().text.contains("in sync"),
        "{:?}",
        app.flash
    );
}

#[test]
fn read_only_has_no_accept_key_hint_or_help_line() {
    let dir = manifests();
    let mut app = drifted_app(dir.path(), true);
    assert!(press(&mut app, KeyCode::Char('a')).is_empty());
    assert_eq!(app.screen, Screen::Table);
    let text = screen_text(&draw(&mut app, 140, 30));
    assert!(!text.contains("<a>"), "{text}");
    press(&mut app, KeyCode::Char('?'));
    let text = screen_text(&draw(&mut app, 140, 40));
    assert!(!text.contains("accept"), "{text}");

    let mut app = drifted_app(dir.path(), false);
    let text = screen_text(&draw(&mut app, 140, 30));
    assert!(text.contains("<a> accept"), "{text}");
    press(&mut app, KeyCode::Char('?'));
    let text = screen_text(&draw(&mut app, 140, 40));
    assert!(
        text.contains("accept into git: space toggles, enter commits"),
        "{text}"
    );
}

#[test]
fn the_header_names_the_branch_template_no_repository_and_a_dirty_file() {
    let dir = manifests();
    std::fs::write(
        dir.path().join(".kdrift.yaml"),
        "accept:\n  branch: hotfix/{namespace}-{name}\n",
    )
    .unwrap();
    let mut app = drifted_app(dir.path(), false);
    press(&mut app, KeyCode::Char('a'));
    update(&mut app, fetched(dir.path(), on_main()));
    assert_eq!(form(&app).target, "commit on new branch hotfix/shop-web");
    let commands = press(&mut app, KeyCode::Enter);
    let [Command::Accept(request)] = commands.as_slice() else {
        panic!("{commands:?}");
    };
    assert_eq!(request.commit.branch.as_deref(), Some("hotfix/shop-web"));

    let dir = manifests();
    let mut app = drifted_app(dir.path(), false);
    press(&mut app, KeyCode::Char('a'));
    update(&mut app, fetched(dir.path(), GitState::NotARepository));
    let text = screen_text(&draw(&mut app, 110, 30));
    assert!(
        text.contains("no git repository: the file will only be written"),
        "{text}"
    );
    // Nothing on screen promises a commit that will not be made.
    assert!(text.contains("enter writes:"), "{text}");
    assert!(text.contains("<enter> write the file"), "{text}");
    assert!(!text.contains("commit"), "{text}");

    let mut app = drifted_app(dir.path(), false);
    press(&mut app, KeyCode::Char('a'));
    update(
        &mut app,
        fetched(
            dir.path(),
            GitState::Repository {
                branch: Some("main".into()),
                dirty: true,
            },
        ),
    );
    let text = screen_text(&draw(&mut app, 150, 30));
    assert!(
        text.contains("web.yaml has uncommitted changes: enter will refuse"),
        "{text}"
    );

    // A detached HEAD: the commit would be on no branch, said before enter makes it.
    let mut app = drifted_app(dir.path(), false);
    press(&mut app, KeyCode::Char('a'));
    update(
        &mut app,
        fetched(
            dir.path(),
            GitState::Repository {
                branch: None,
                dirty: false,
            },
        ),
    );
    let text = screen_text(&draw(&mut app, 200, 30));
    assert!(
        text.contains("HEAD is detached: the commit will be on no branch"),
        "{text}"
    );
}

#[test]
fn the_diff_is_coloured_added_green_removed_red() {
    let dir = manifests();
    let mut app = open(dir.path());
    let term = draw(&mut app, 110, 30);
    let theme = Theme::default_theme();
    let buf = term.backend().buffer();
    let row_of = |needle: &str| ui_fixture::find_line(&term, needle).unwrap();
    let style_at = |y: u16| {
        let x = (0..buf.area.width)
            .find(|&x| {
                buf[(x, y)].symbol() == "+"
                    || buf[(x, y)].symbol() == "-"
                    || buf[(x, y)].symbol() == "@"
            })
            .unwrap();
        buf[(x, y)].style()
    };
    assert_eq!(style_at(row_of("+  replicas: 5")).fg, theme.diff_added.fg);
    assert_eq!(style_at(row_of("-  replicas: 2")).fg, theme.diff_removed.fg);
    assert_eq!(style_at(row_of("@@ ")).fg, theme.diff_hunk.fg);
    assert_ne!(theme.diff_added.fg, theme.diff_removed.fg);
}

#[test]
fn a_missing_row_says_there_is_no_live_value() {
    let dir = manifests();
    std::fs::write(dir.path().join("gone.yaml"), CART.replace("cart", "gone")).unwrap();
    let mut app = drifted_app(dir.path(), false);
    assert_eq!(app.drift_of(&key("gone")), &DriftSummary::Missing);
    // Missing rows match the filter by name alone.
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('/'));
    typed(&mut app, "gone");
    press(&mut app, KeyCode::Enter);
    assert!(press(&mut app, KeyCode::Char('a')).is_empty());
    assert_eq!(app.screen, Screen::Table);
    let flash = app.flash.clone().unwrap();
    assert!(
        flash.text.contains("deployment/shop/gone is missing"),
        "{flash:?}"
    );
}

#[test]
fn a_diff_taller_than_the_screen_says_how_much_is_below_and_pgdn_shows_it() {
    let dir = manifests();
    let mut app = open(dir.path());
    let text = screen_text(&draw(&mut app, 80, 24));
    assert!(text.contains("more lines (pgdn)"), "{text}");
    assert!(!text.contains("value: \"1\""), "{text}");
    press(&mut app, KeyCode::PageDown);
    let text = screen_text(&draw(&mut app, 80, 24));
    assert!(text.contains("+              value: \"1\""), "{text}");
    assert!(!text.contains("more lines"), "{text}");
}

#[test]
fn on_80_columns_who_changed_each_field_stays_on_screen() {
    let dir = manifests();
    let mut app = open(dir.path());
    let text = screen_text(&draw(&mut app, 80, 30));
    // A /scale write has no time on a v1.36 server (nor on the demo): no age is made up.
    assert!(text.contains("2 → 5  kubectl (scale)"), "{text}");
    assert!(!text.contains("kubectl (scale) ·"), "{text}");
    assert!(text.contains("kubectl-set · 2m ago"), "{text}");
}
