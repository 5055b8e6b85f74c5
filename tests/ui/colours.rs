//! Colour where colour carries meaning, and screen reactions to watch health and live updates.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use crate::ui_fixture;

use jiff::Timestamp;
use kdrift::cluster::watch::{ClusterEvent, WatchHealth, WatchUpdate, WatchedKind};
use kdrift::ui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use ui_fixture::*;

/// The style of the first cell of `needle` on the row that contains `row_text`.
fn style_of(
    terminal: &Terminal<TestBackend>,
    row_text: &str,
    needle: &str,
) -> ratatui::style::Style {
    let y = find_line(terminal, row_text).unwrap_or_else(|| panic!("no row with {row_text:?}"));
    let text = line(terminal, y);
    let byte = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in {text:?}"));
    let x = text[..byte].chars().count() as u16;
    terminal.backend().buffer()[(x, y)].style()
}

#[test]
fn stuck_rows_are_red_and_complete_rows_green() {
    let mut app = sample_app();
    let terminal = draw(&mut app, &Theme::default_theme());
    let stuck = style_of(&terminal, "checkout", "stuck");
    assert_eq!(stuck.fg, Some(Color::Red));
    assert!(stuck.add_modifier.contains(Modifier::BOLD));
    assert_eq!(
        style_of(&terminal, " web ", "complete").fg,
        Some(Color::Green)
    );
    assert_eq!(
        style_of(&terminal, "cart", "progressing").fg,
        Some(Color::Yellow)
    );
    assert_eq!(
        style_of(&terminal, "stuck 1", "stuck 1").fg,
        Some(Color::Red)
    );
}

#[test]
fn monochrome_marks_stuck_without_colour() {
    let mut app = sample_app();
    let (theme, err) = Theme::load(None, true);
    assert!(err.is_none());
    let terminal = draw(&mut app, &theme);
    let stuck = style_of(&terminal, "checkout", "stuck");
    assert_eq!(stuck.fg, Some(Color::Reset));
    assert!(
        stuck
            .add_modifier
            .contains(Modifier::BOLD | Modifier::UNDERLINED)
    );
}

#[test]
fn a_scale_event_changes_the_row_on_the_next_frame() {
    let mut app = sample_app();
    let before = draw(&mut app, &Theme::default_theme());
    let y = find_line(&before, " web ").unwrap();
    assert!(line(&before, y).contains("3 3/3/3"));
    let mut web = deploy("shop", "web", 5, 3, 3, 3, 4);
    web.generation = 5;
    send(
        &mut app,
        ClusterEvent::Workloads(
            kdrift::cluster::rows::WorkloadKind::Deployment,
            vec![WatchUpdate::Apply(web)],
        ),
    );
    assert!(app.dirty);
    let after = draw(&mut app, &Theme::default_theme());
    let row = line(&after, find_line(&after, " web ").unwrap());
    assert!(
        row.contains("5 3/3/3") && row.contains("progressing"),
        "{row}"
    );
}

#[test]
fn reconnecting_shows_in_the_status_bar_and_marks_rows() {
    let mut app = sample_app();
    let since = Timestamp::from_second(NOW - 12).unwrap();
    send(
        &mut app,
        ClusterEvent::Health(
            WatchedKind::Deployments,
            WatchHealth::Reconnecting {
                since,
                reason: "connection refused".into(),
            },
        ),
    );
    let terminal = draw(&mut app, &Theme::default_theme());
    let status = style_of(&terminal, "reconnecting for 12s", "reconnecting for 12s");
    assert_eq!(status.fg, Some(Color::LightRed));
    let row = line(&terminal, find_line(&terminal, " web ").unwrap());
    assert!(row.contains("reconnecting: complete"), "{row}");
    // Recovery: the rows and the bar go back to normal.
    send(
        &mut app,
        ClusterEvent::Health(WatchedKind::Deployments, WatchHealth::Connected),
    );
    let terminal = draw(&mut app, &Theme::default_theme());
    let status = line(&terminal, app.height - 2);
    assert!(status.contains("watch  connected"), "{status}");
    assert!(find_line(&terminal, "reconnecting").is_none());
}

#[test]
fn forbidden_pods_show_in_bar_and_detail_and_the_table_keeps_working() {
    let mut app = sample_app();
    app.height = 40;
    keys(&mut app, "/checkout");
    key(&mut app, crossterm::event::KeyCode::Enter);
    key(&mut app, crossterm::event::KeyCode::Enter);
    send(
        &mut app,
        ClusterEvent::Health(
            WatchedKind::Pods,
            WatchHealth::Forbidden {
                namespace: Some("shop".into()),
                message: "pods is forbidden: User \"dev\" cannot list resource \"pods\"".into(),
            },
        ),
    );
    let terminal = draw(&mut app, &Theme::default_theme());
    assert!(find_line(&terminal, "forbidden in \"shop\"").is_some());
    let y = find_line(&terminal, "pods forbidden: pods is forbidden").unwrap();
    assert_eq!(
        terminal.backend().buffer()[(3, y)].style().fg,
        Some(Color::LightRed)
    );
    // Back on the table, every Deployment is still there and the detail's trouble is gone.
    key(&mut app, crossterm::event::KeyCode::Esc);
    key(&mut app, crossterm::event::KeyCode::Esc);
    let terminal = draw(&mut app, &Theme::default_theme());
    assert!(find_line(&terminal, "checkout").is_some() && find_line(&terminal, "batch").is_some());
    assert!(find_line(&terminal, "watch  connected").is_some());
}

#[test]
fn relist_after_a_disconnect_drops_deleted_deployments() {
    let mut app = sample_app();
    send(
        &mut app,
        ClusterEvent::Workloads(
            kdrift::cluster::rows::WorkloadKind::Deployment,
            vec![
                WatchUpdate::Init,
                WatchUpdate::InitApply(deploy("shop", "web", 3, 3, 3, 3, 4)),
                WatchUpdate::InitDone,
            ],
        ),
    );
    let terminal = draw(&mut app, &Theme::default_theme());
    assert!(find_line(&terminal, " web ").is_some());
    assert!(find_line(&terminal, "checkout").is_none());
    assert!(find_line(&terminal, "rows 1").is_some());
}

#[test]
fn messages_from_an_old_connection_are_ignored() {
    let mut app = sample_app();
    kdrift::app::update(
        &mut app,
        kdrift::app::Message::Switched {
            epoch: 1,
            context: "prod".into(),
            contexts: vec!["prod".into()],
            scope: kdrift::cluster::client::NamespaceScope::One("shop".into()),
        },
    );
    // A late batch from epoch 0.
    kdrift::app::update(
        &mut app,
        kdrift::app::Message::Cluster(kdrift::cluster::watch::ClusterMessage {
            epoch: 0,
            event: ClusterEvent::Workloads(
                kdrift::cluster::rows::WorkloadKind::Deployment,
                vec![WatchUpdate::Apply(deploy("shop", "stale", 1, 1, 1, 1, 1))],
            ),
        }),
    );
    let terminal = draw(&mut app, &Theme::default_theme());
    assert!(find_line(&terminal, "stale").is_none());
    assert!(find_line(&terminal, "ctx  prod").is_some());
}

#[test]
fn sorted_by_phase_a_row_turning_stuck_moves_up_and_a_count_change_keeps_its_place() {
    let mut app = sample_app();
    keys(&mut app, "P");
    let terminal = draw(&mut app, &Theme::default_theme());
    assert!(line(&terminal, 2).contains("checkout"));
    // Only a count changes (same phase): the row stays where it is and shows the new count.
    let mut web = deploy("shop", "web", 3, 3, 3, 3, 4);
    web.ready = 2;
    send(
        &mut app,
        ClusterEvent::Workloads(
            kdrift::cluster::rows::WorkloadKind::Deployment,
            vec![WatchUpdate::Apply(web.clone())],
        ),
    );
    let terminal = draw(&mut app, &Theme::default_theme());
    let web_row = find_line(&terminal, " web ").unwrap();
    assert_eq!(web_row, 6);
    assert!(line(&terminal, web_row).contains("2/3/3"));
    // Now it is stuck: it moves to the top group.
    web.conditions.push(kdrift::cluster::rows::ConditionRow {
        kind: "Progressing".into(),
        status: "False".into(),
        reason: "ProgressDeadlineExceeded".into(),
        message: String::new(),
        last_update: ago(1),
    });
    send(
        &mut app,
        ClusterEvent::Workloads(
            kdrift::cluster::rows::WorkloadKind::Deployment,
            vec![WatchUpdate::Apply(web)],
        ),
    );
    let terminal = draw(&mut app, &Theme::default_theme());
    assert!(
        find_line(&terminal, " web ").unwrap() <= 3,
        "{}",
        line(&terminal, 3)
    );
    assert!(find_line(&terminal, "stuck 2").is_some());
}
