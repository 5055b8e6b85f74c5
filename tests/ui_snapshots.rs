//! Whole-app snapshots: the app fed cluster messages and keys, drawn to a TestBackend.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod ui_fixture;

use crossterm::event::KeyCode;
use kdrift::ui::theme::Theme;
use ui_fixture::*;

#[test]
fn table_shows_every_deployment_with_its_phase() {
    let mut app = sample_app();
    let terminal = draw(&mut app, &Theme::default_theme());
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn table_sorted_by_phase_puts_stuck_first() {
    let mut app = sample_app();
    keys(&mut app, "P");
    let terminal = draw(&mut app, &Theme::default_theme());
    let first_row = line(&terminal, 2);
    assert!(
        first_row.contains("checkout") && first_row.contains("stuck"),
        "{first_row}"
    );
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn filter_narrows_the_table() {
    let mut app = sample_app();
    keys(&mut app, "/shop");
    let terminal = draw(&mut app, &Theme::default_theme());
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn detail_view_shows_revisions_pods_events_and_conditions() {
    let mut app = sample_app();
    app.height = 40;
    keys(&mut app, "/checkout");
    key(&mut app, KeyCode::Enter); // close the prompt, keep the filter
    key(&mut app, KeyCode::Enter); // open the selected row
    send_detail_rows(&mut app);
    let terminal = draw(&mut app, &Theme::default_theme());
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn help_overlay_lists_the_keys() {
    let mut app = sample_app();
    app.height = 30;
    keys(&mut app, "?");
    let terminal = draw(&mut app, &Theme::default_theme());
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn too_small_terminal_gets_a_message() {
    let mut app = sample_app();
    app.width = 40;
    app.height = 6;
    let terminal = draw(&mut app, &Theme::default_theme());
    let text: String = (0..6).map(|y| line(&terminal, y)).collect();
    assert!(text.contains("terminal too small: 40×6"), "{text}");
}
