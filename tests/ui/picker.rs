//! The `:ns` and `:ctx` pickers as drawn: the namespaces with the Deployments the table holds in
//! each, the one in use marked, the filter, and what a refused list says.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use crate::ui_fixture;

use crossterm::event::KeyCode;
use kdrift::app::{Message, update};
use kdrift::ui::theme::Theme;
use ui_fixture::*;

fn screen(app: &mut kdrift::app::App) -> String {
    let terminal = draw(app, &Theme::default_theme());
    (0..app.height)
        .map(|y| line(&terminal, y))
        .collect::<Vec<_>>()
        .join("\n")
}

fn namespaces(names: &[&str]) -> Message {
    Message::Namespaces(Ok(names.iter().map(|n| n.to_string()).collect()))
}

#[test]
fn namespace_picker_counts_deployments_and_marks_the_one_in_use() {
    let mut app = sample_app();
    keys(&mut app, ":ns");
    key(&mut app, KeyCode::Enter);
    assert!(screen(&mut app).contains("listing namespaces…"));
    update(
        &mut app,
        namespaces(&["auth", "default", "jobs", "kube-system", "shop"]),
    );
    keys(&mut app, "jjjjj");
    let terminal = draw(&mut app, &Theme::default_theme());
    let row = |needle: &str| line(&terminal, find_line(&terminal, needle).unwrap());
    // The sample cluster: shop holds web, cart, checkout; auth and jobs one each.
    assert!(row("● all namespaces").contains("(in use)"));
    assert!(row(" shop ").contains("    3"), "{}", row(" shop "));
    assert!(row(" default ").contains("    0"));
    // The selection (moved to shop) is drawn as the table draws its selected row.
    let selected = Theme::default_theme().selected;
    let style_at = |needle: &str| {
        let y = find_line(&terminal, needle).unwrap();
        terminal.backend().buffer()[(3, y)].style()
    };
    assert_eq!(style_at(" shop ").bg, selected.bg);
    assert_ne!(style_at(" auth ").bg, selected.bg);
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn namespace_picker_filter_shows_matches_only() {
    let mut app = sample_app();
    keys(&mut app, ":ns");
    key(&mut app, KeyCode::Enter);
    update(
        &mut app,
        namespaces(&["auth", "default", "jobs", "kube-system", "shop"]),
    );
    keys(&mut app, "/s");
    let text = screen(&mut app);
    assert!(text.contains("namespaces[4/6]"), "{text}");
    assert!(text.contains("/s▏"), "{text}");
    assert!(!text.contains(" auth "), "{text}");
    key(&mut app, KeyCode::Enter);
    let text = screen(&mut app);
    assert!(text.contains("namespaces[4/6] </s>"), "{text}");
}

#[test]
fn a_refused_namespace_list_says_ns_name_still_works() {
    let mut app = sample_app();
    keys(&mut app, ":ns");
    key(&mut app, KeyCode::Enter);
    update(
        &mut app,
        Message::Namespaces(Err(
            "the server refuses (403 Forbidden): namespaces is forbidden".into(),
        )),
    );
    let text = screen(&mut app);
    assert!(
        text.contains("cannot list namespaces: the server refuses (403 Forbidden)"),
        "{text}"
    );
    assert!(text.contains(":ns NAME still works"), "{text}");
}

#[test]
fn context_picker_marks_the_current_context() {
    let mut app = sample_app();
    app.contexts = vec!["kind-dev".into(), "prod".into()];
    keys(&mut app, ":ctx");
    key(&mut app, KeyCode::Enter);
    let terminal = draw(&mut app, &Theme::default_theme());
    let current = line(
        &terminal,
        find_line(&terminal, "kind-dev  (in use)").unwrap(),
    );
    assert!(current.contains("● kind-dev"), "{current}");
    assert!(find_line(&terminal, "  prod").is_some());
    assert!(find_line(&terminal, "contexts[2]").is_some());
}

#[test]
fn after_a_resize_the_selection_still_shows() {
    let mut app = sample_app();
    keys(&mut app, ":ns");
    key(&mut app, KeyCode::Enter);
    let names: Vec<String> = (0..100).map(|i| format!("team-{i:02}")).collect();
    update(&mut app, Message::Namespaces(Ok(names)));
    keys(&mut app, "G");
    app.height = 10;
    let terminal = draw(&mut app, &Theme::default_theme());
    let y = find_line(&terminal, "team-99").expect("the selected line on screen");
    let selected = Theme::default_theme().selected;
    assert_eq!(terminal.backend().buffer()[(3, y)].style().bg, selected.bg);
}

#[test]
fn over_several_contexts_the_context_picker_says_which_are_watched_and_how_each_stands() {
    use kdrift::app::fleet::{Link, show_states};
    let mut app = sample_app();
    app.contexts = vec!["kind-dev".into(), "prod".into(), "spare".into()];
    let mut prod = kdrift::app::App::new(
        "prod",
        app.contexts.clone(),
        kdrift::cluster::client::NamespaceScope::All,
        jiff::Timestamp::UNIX_EPOCH,
    );
    keys(&mut app, ":ctx");
    key(&mut app, KeyCode::Enter);
    let unreachable = Link::Unreachable("connection refused".into());
    show_states(
        &mut [&mut app, &mut prod],
        &[&Link::Connected, &unreachable],
    );
    let terminal = draw(&mut app, &Theme::default_theme());
    let row = |needle: &str| line(&terminal, find_line(&terminal, needle).unwrap());
    assert!(
        row("● kind-dev").contains("(in use)  watched · connected"),
        "{}",
        row("● kind-dev")
    );
    assert!(
        row(" prod ").contains("watched · unreachable"),
        "{}",
        row(" prod ")
    );
    assert!(!row(" spare").contains("watched"), "{}", row(" spare"));
}
