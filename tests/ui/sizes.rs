//! Every view at every size: a snapshot of each at 80×24 and at 20×5 (the smallest kdrift
//! promises to be readable at), and each drawn through a run of resizes down to 1×1 and back,
//! as the runtime does it (`Message::Resize`, then a draw on the same terminal), without a panic
//! and, from 20×5 up, with the view's name or first content still on screen.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use crate::ui_fixture;

use crossterm::event::KeyCode;
use jiff::Timestamp;
use kdrift::app::{App, Command, Message, update};
use kdrift::cluster::client::NamespaceScope;
use kdrift::cluster::logs::{LogEvent, LogLine};
use kdrift::ui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tempfile::TempDir;
use ui_fixture::drifted;
use ui_fixture::*;

/// One view, ready to draw: the app, the temp folder its manifests are in (scrubbed from the
/// text), and what on screen says which view it is: its title's start and its first content.
struct View {
    app: App,
    dir: Option<TempDir>,
    shows: [&'static str; 2],
}

fn table() -> View {
    View {
        app: sample_app(),
        dir: None,
        shows: ["workloads", "api"],
    }
}

fn table_loading() -> View {
    let app = App::new(
        "kind-dev",
        vec!["kind-dev".into()],
        NamespaceScope::All,
        Timestamp::from_second(NOW).unwrap(),
    );
    View {
        app,
        dir: None,
        shows: ["workloads", "loading…"],
    }
}

fn detail() -> View {
    let mut app = sample_app();
    keys(&mut app, "/checkout");
    key(&mut app, KeyCode::Enter); // keep the filter
    key(&mut app, KeyCode::Enter); // open the row
    send_detail_rows(&mut app);
    View {
        app,
        dir: None,
        shows: ["deployment", "stuck"],
    }
}

/// The drifted world of the accept tests, web selected.
fn drifted() -> (App, TempDir) {
    let dir = drifted::manifests();
    let app = drifted::drifted_app(dir.path(), false);
    (app, dir)
}

fn diff() -> View {
    let (mut app, dir) = drifted();
    let commands = drifted::press(&mut app, KeyCode::Char('d'));
    assert!(
        matches!(commands.as_slice(), [Command::FetchDiff(..)]),
        "{commands:?}"
    );
    let live = kdrift::drift::LiveObject::from_value(
        drifted::web_hotfixed(),
        kdrift::schema::Schemas::builtin(),
    )
    .unwrap();
    update(
        &mut app,
        Message::DiffFetched((drifted::object("web"), Ok(Some(Box::new(live))))),
    );
    View {
        app,
        dir: Some(dir),
        shows: ["diff", "deployment/shop/"],
    }
}

fn problems() -> View {
    let dir = drifted::manifests();
    std::fs::write(dir.path().join("broken.yaml"), "kind: [unclosed\n").unwrap();
    let mut app = drifted::drifted_app(dir.path(), false);
    keys(&mut app, ":problems");
    key(&mut app, KeyCode::Enter);
    View {
        app,
        dir: Some(dir),
        shows: ["problems", "broken.yaml"],
    }
}

fn accept() -> View {
    let dir = drifted::manifests();
    let app = drifted::open(dir.path());
    View {
        app,
        dir: Some(dir),
        shows: ["accept", "spec.replicas"],
    }
}

fn revert() -> View {
    let (mut app, dir) = drifted();
    let id = match drifted::press(&mut app, KeyCode::Char('r')).as_slice() {
        [Command::PreviewRevert { id, .. }] => *id,
        other => panic!("expected a dry run, got {other:?}"),
    };
    update(
        &mut app,
        Message::RevertPreviewed {
            id,
            result: Ok(drifted::revert_preview(false)),
        },
    );
    View {
        app,
        dir: Some(dir),
        shows: ["revert", "deployment/shop/"],
    }
}

fn picker() -> View {
    let mut app = sample_app();
    keys(&mut app, ":ns");
    key(&mut app, KeyCode::Enter);
    let names = ["auth", "default", "jobs", "kube-system", "shop"];
    update(
        &mut app,
        Message::Namespaces(Ok(names.iter().map(|n| n.to_string()).collect())),
    );
    View {
        app,
        dir: None,
        shows: ["namespaces", "all namespaces"],
    }
}

fn drift_list() -> View {
    let (mut app, dir) = drifted();
    keys(&mut app, ":drift");
    key(&mut app, KeyCode::Enter);
    View {
        app,
        dir: Some(dir),
        shows: ["drift", "web"],
    }
}

fn changes() -> View {
    let (mut app, dir) = drifted();
    keys(&mut app, ":changes");
    key(&mut app, KeyCode::Enter);
    View {
        app,
        dir: Some(dir),
        shows: ["changes", "web"],
    }
}

fn log() -> View {
    let View { mut app, .. } = detail();
    let commands = update(
        &mut app,
        Message::Key(crossterm::event::KeyEvent::from(KeyCode::Char('l'))),
    );
    assert!(!commands.is_empty(), "l opens the log");
    let mut lines: Vec<LogLine> = (1..=30)
        .map(|i| LogLine {
            text: format!("2026-11-22T02:{i:02}:00Z checkout: request {i} served"),
            cut: None,
        })
        .collect();
    lines.push(LogLine {
        text: format!("panic: {} (the end of a long line)", "x".repeat(300)),
        cut: None,
    });
    let epoch = app.log_epoch;
    update(
        &mut app,
        Message::Log {
            epoch,
            event: LogEvent::Lines(lines),
        },
    );
    View {
        app,
        dir: None,
        shows: ["log", "panic"],
    }
}

fn help() -> View {
    let mut app = sample_app();
    keys(&mut app, "?");
    View {
        app,
        dir: None,
        shows: ["keys", "j / ↓"],
    }
}

/// What opens a view.
type Builder = fn() -> View;

/// Every view, by name.
fn views() -> Vec<(&'static str, Builder)> {
    vec![
        ("table", table),
        ("table_loading", table_loading),
        ("detail", detail),
        ("diff", diff),
        ("problems", problems),
        ("accept", accept),
        ("revert", revert),
        ("picker", picker),
        ("drift_list", drift_list),
        ("changes", changes),
        ("log", log),
        ("help", help),
    ]
}

/// Resize as the runtime does, draw on `terminal`, and return the screen's text (the temp
/// folder of the manifests scrubbed).
fn resize_and_draw(
    view: &mut View,
    terminal: &mut Terminal<TestBackend>,
    width: u16,
    height: u16,
) -> String {
    update(&mut view.app, Message::Resize { width, height });
    terminal.backend_mut().resize(width, height);
    view.app.prepare_frame();
    let theme = Theme::default_theme();
    terminal
        .draw(|f| kdrift::ui::render(&view.app, &theme, f))
        .unwrap();
    let text = (0..height)
        .map(|y| line(terminal, y))
        .collect::<Vec<_>>()
        .join("\n");
    match &view.dir {
        Some(dir) => text.replace(&dir.path().display().to_string(), "<manifests>"),
        None => text,
    }
}

fn snapshot_at(width: u16, height: u16) {
    for (name, build) in views() {
        let mut view = build();
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        let text = resize_and_draw(&mut view, &mut terminal, width, height);
        insta::assert_snapshot!(format!("{name}_{width}x{height}"), text);
    }
}

#[test]
fn every_view_at_80x24() {
    snapshot_at(80, 24);
}

#[test]
fn every_view_at_20x5() {
    snapshot_at(20, 5);
}

#[test]
fn every_view_survives_resizes_down_to_nothing_and_back() {
    let sizes = [
        (120, 40),
        (80, 24),
        (40, 10),
        (20, 5),
        (19, 5),
        (20, 4),
        (10, 3),
        (2, 2),
        (1, 1),
        (0, 0),
        (1, 40),
        (200, 1),
        (200, 60),
        (20, 5),
    ];
    // Each view plain, and with a message below it that wants three lines of its own.
    let runs = views()
        .into_iter()
        .flat_map(|(name, build)| [(name, build, false), (name, build, true)]);
    for (name, build, flash) in runs {
        let mut view = build();
        if flash {
            let text = "a refusal long enough to need three lines on a narrow screen".into();
            let notice = kdrift::app::Flash { text, error: true };
            update(&mut view.app, Message::Notice(notice));
        }
        let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
        for (width, height) in sizes {
            let text = resize_and_draw(&mut view, &mut terminal, width, height);
            if width >= 20 && height >= 5 {
                assert!(
                    view.shows.iter().all(|needle| text.contains(needle)),
                    "{name} (flash {flash}) at {width}×{height} does not show {:?}:\n{text}",
                    view.shows
                );
            }
        }
    }
}
