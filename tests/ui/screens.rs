//! Whole-app snapshots: the app fed cluster messages and keys, drawn to a TestBackend.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use crate::ui_fixture;

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
    app.width = 30;
    app.height = 4;
    let terminal = draw(&mut app, &Theme::default_theme());
    let text: String = (0..4).map(|y| line(&terminal, y)).collect();
    assert!(text.contains("terminal too small: 30×4"), "{text}");
}

#[test]
fn a_long_message_wraps_so_its_end_is_read() {
    let mut app = sample_app();
    app.width = 80;
    let advice = "commit or stash them first, or pass --no-commit";
    let text = format!(
        "shop/frontend.yaml has uncommitted changes: {advice}; nothing was written (the end of this message must be on screen)"
    );
    kdrift::app::update(
        &mut app,
        kdrift::app::Message::Notice(kdrift::app::Flash { text, error: true }),
    );
    let terminal = draw(&mut app, &Theme::default_theme());
    let bottom: String = (app.height - 3..app.height)
        .map(|y| line(&terminal, y))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(bottom.contains("must be on screen)"), "{bottom}");
    assert!(bottom.contains("uncommitted changes"), "{bottom}");
}

#[test]
fn narrow_hints_keep_help_and_quit() {
    let mut app = sample_app();
    app.width = 90;
    let terminal = draw(&mut app, &Theme::default_theme());
    let hints = line(&terminal, app.height - 1);
    assert!(
        hints.contains("<?> help") && hints.contains("<q> quit"),
        "{hints}"
    );
    assert!(hints.contains("<enter> detail"), "{hints}");
}

#[test]
fn help_taller_than_the_screen_scrolls_to_its_last_key() {
    let mut app = sample_app();
    app.width = 80;
    app.height = 24;
    keys(&mut app, "?");
    let screen = |app: &mut kdrift::app::App| {
        let terminal = draw(app, &Theme::default_theme());
        (0..app.height)
            .map(|y| line(&terminal, y))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let first = screen(&mut app);
    assert!(first.contains("next row"), "{first}");
    assert!(!first.contains("suspend to the shell"), "{first}");
    assert!(
        first.contains("0 above,") && first.contains("below)"),
        "{first}"
    );
    for _ in 0..40 {
        keys(&mut app, "j");
    }
    let last = screen(&mut app);
    assert!(last.contains("suspend to the shell"), "{last}");
    assert!(last.contains("q / ctrl-c"), "{last}");
    assert!(last.contains(", 0 below)"), "{last}");
    // One k shows the line above again: j stopped at the last page, not 40 lines further.
    keys(&mut app, "k");
    let back = screen(&mut app);
    assert!(!back.contains(", 0 below)"), "{back}");
    assert!(back.contains(", 1 below)"), "{back}");
}

#[test]
fn a_new_slash_starts_a_new_filter() {
    let mut app = sample_app();
    keys(&mut app, "/checkout");
    key(&mut app, KeyCode::Enter); // keep the filter
    keys(&mut app, "/batch");
    let terminal = draw(&mut app, &Theme::default_theme());
    let title = line(&terminal, 0);
    assert!(title.contains("</batch>"), "{title}");
    assert!(find_line(&terminal, " batch ").is_some());
    assert!(find_line(&terminal, " checkout ").is_none());
}

#[test]
fn an_80_column_terminal_keeps_phase_and_drift_readable() {
    let mut app = sample_app();
    app.width = 80;
    app.height = 24;
    let terminal = draw(&mut app, &Theme::default_theme());
    let header = line(&terminal, 1);
    assert!(
        header.contains("PHASE") && header.contains("DRIFT") && !header.contains("ROLLOUT"),
        "{header}"
    );
    let web = line(&terminal, find_line(&terminal, " web ").unwrap());
    assert!(web.contains(" complete "), "{web}");
    let cart = line(&terminal, find_line(&terminal, " cart ").unwrap());
    assert!(cart.contains("25% progressing"), "{cart}");
    let checkout = line(&terminal, find_line(&terminal, " checkout ").unwrap());
    assert!(checkout.contains("33% stuck"), "{checkout}");
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn the_detail_view_on_80_columns_shows_images_and_pod_reasons() {
    let mut app = sample_app();
    app.width = 80;
    app.height = 40;
    keys(&mut app, "/checkout");
    key(&mut app, KeyCode::Enter); // close the prompt, keep the filter
    key(&mut app, KeyCode::Enter); // open the selected row
    send_detail_rows(&mut app);
    let terminal = draw(&mut app, &Theme::default_theme());
    let revision = line(&terminal, find_line(&terminal, "#3").unwrap());
    assert!(
        revision.contains("registry.example/checkout:3.0"),
        "{revision}"
    );
    let crashing = line(
        &terminal,
        find_line(&terminal, "checkout-5f6-x8k2p ").unwrap(),
    );
    assert!(crashing.contains("CrashLoopBackOff"), "{crashing}");
}

#[test]
fn the_diff_view_on_80_columns_still_offers_accept_and_revert() {
    let mut app = sample_app();
    app.width = 80;
    keys(&mut app, "d");
    let terminal = draw(&mut app, &Theme::default_theme());
    let hints = line(&terminal, app.height - 1);
    assert!(
        hints.contains("<a> accept") && hints.contains("<r> revert") && hints.contains("<q> quit"),
        "{hints}"
    );
}

#[test]
fn names_too_long_for_their_column_are_cut_with_an_ellipsis() {
    // Two 63-character names that differ only at the end, on 80 columns and on 300.
    let stem = "payments-reconciliation-worker-for-the-european-region-shard-";
    let (a, b) = (format!("{stem}a1"), format!("{stem}b2"));
    let long_ns = "a-namespace-with-a-long-name-of-forty-chars";
    for width in [80u16, 300] {
        let mut app = sample_app();
        let rows = vec![
            deploy(long_ns, &a, 1, 1, 1, 1, 1),
            deploy(long_ns, &b, 1, 1, 1, 1, 1),
        ];
        send(
            &mut app,
            kdrift::cluster::watch::ClusterEvent::Workloads(
                kdrift::cluster::rows::WorkloadKind::Deployment,
                rows.into_iter()
                    .map(kdrift::cluster::watch::WatchUpdate::Apply)
                    .collect(),
            ),
        );
        app.width = width;
        let terminal = draw(&mut app, &Theme::default_theme());
        let row_a = find_line(&terminal, "payments-r")
            .map(|y| line(&terminal, y))
            .unwrap_or_else(|| panic!("{}", terminal.backend()));
        if width == 80 {
            assert!(row_a.contains('…'), "cut names end with …: {row_a}");
        } else {
            // On a wide terminal the whole name and the whole namespace are shown.
            assert!(row_a.contains(&a) || row_a.contains(&b), "{row_a}");
            assert!(
                row_a.contains(long_ns),
                "the namespace is not cut at 300 columns: {row_a}"
            );
        }
    }
}

/// A view of one context is a fleet of one (`kdrift` on one context runs the fleet's view): it
/// is drawn exactly as that context's own view — its table, its status bar, no CONTEXT column —
/// on the table and in the views it opens; one context not connected (yet) shows the fleet's
/// state instead.
#[test]
fn a_fleet_of_one_is_drawn_as_the_context_alone() {
    use kdrift::app::fleet::{Fleet, Link, Member};
    let theme = Theme::default_theme();
    let mut app = sample_app();
    for step in ["", "j", "\n"] {
        keys(&mut app, step);
        let alone = draw(&mut app, &theme);
        let fleet = Fleet::default();
        let members = [Member {
            context: &app.context,
            link: &Link::Connected,
            app: &app,
        }];
        let mut term =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(app.width, app.height))
                .unwrap();
        term.draw(|f| kdrift::ui::fleet::render_fleet(&fleet, &members, &theme, f))
            .unwrap();
        assert_eq!(
            term.backend().buffer(),
            alone.backend().buffer(),
            "after {step:?}"
        );
        let connecting = [Member {
            link: &Link::Connecting,
            ..members[0]
        }];
        term.draw(|f| kdrift::ui::fleet::render_fleet(&fleet, &connecting, &theme, f))
            .unwrap();
        if step.is_empty() {
            let status = (0..app.height)
                .map(|y| line(&term, y))
                .find(|l| l.starts_with(" ctx "))
                .unwrap();
            assert!(status.contains("connecting"), "{status}");
        }
    }
}
