//! Tests of [`super`] (fleet.rs).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::app::test_keys::press;
use crate::app::{ContextChange, DriftSummary};
use crate::cluster::client::NamespaceScope;
use crate::cluster::rows::WorkloadRow;
use crate::cluster::watch::{ClusterEvent, ClusterMessage, WatchUpdate};
use jiff::Timestamp;

fn app(context: &str, names: &[&str]) -> App {
    let mut app = App::new(
        context,
        vec!["a".into(), "b".into(), "c".into()],
        NamespaceScope::All,
        Timestamp::UNIX_EPOCH,
    );
    let rows = names
        .iter()
        .map(|name| {
            WatchUpdate::Apply(WorkloadRow {
                key: crate::cluster::rows::WorkloadKind::Deployment.key("shop", name),
                generation: 1,
                observed_generation: 1,
                desired: 1,
                replicas: 1,
                updated: 1,
                ready: 1,
                available: 1,
                paused: false,
                owners: Vec::new(),
                facts: Default::default(),
                conditions: Vec::new(),
                revision: Some(1),
                images: Vec::new(),
                created: None,
                last_change: None,
            })
        })
        .collect();
    update(
        &mut app,
        Message::Cluster(ClusterMessage {
            epoch: 0,
            event: ClusterEvent::Workloads(crate::cluster::rows::WorkloadKind::Deployment, rows),
        }),
    );
    app.prepare_frame();
    app
}

#[test]
fn the_drifted_total_follows_the_contexts_that_changed_and_those_replaced() {
    let (mut a, mut b) = (app("a", &["web", "cart"]), app("b", &["web"]));
    a.ledger.set_summary(
        &crate::cluster::rows::WorkloadKind::Deployment.key("shop", "web"),
        DriftSummary::Fields(2),
    );
    b.ledger.set_summary(
        &crate::cluster::rows::WorkloadKind::Deployment.key("shop", "web"),
        DriftSummary::Missing,
    );
    let mut fleet = Fleet::default();
    fleet.refresh(&[&a, &b]);
    assert_eq!(fleet.drifted(), 2);
    // A change in one context (its app marked changed, as `update` does) is counted.
    a.dirty = false;
    b.dirty = true;
    b.ledger.set_summary(
        &crate::cluster::rows::WorkloadKind::Deployment.key("shop", "web"),
        DriftSummary::InSync,
    );
    fleet.refresh(&[&a, &b]);
    assert_eq!(fleet.drifted(), 1);
    // Another context at b's place, and one fewer: counted afresh.
    let mut c = app("c", &["web"]);
    c.dirty = false;
    c.ledger.set_summary(
        &crate::cluster::rows::WorkloadKind::Deployment.key("shop", "web"),
        DriftSummary::Fields(1),
    );
    c.ledger.set_summary(
        &crate::cluster::rows::WorkloadKind::Deployment.key("shop", "cart"),
        DriftSummary::Fields(1),
    );
    fleet.refresh(&[&a, &c]);
    assert_eq!(fleet.drifted(), 3);
    fleet.refresh(&[&a]);
    assert_eq!(fleet.drifted(), 1);
}

fn shown(apps: &[&App]) -> Vec<String> {
    rows(apps)
        .map(|(i, key)| format!("{}:{}", apps[i].context, key.name))
        .collect()
}

fn keys(fleet: &mut Fleet, apps: &mut [App], typed: &str) -> Vec<(usize, Command)> {
    let mut out = Vec::new();
    for c in typed.chars() {
        let code = match c {
            '\n' => KeyCode::Enter,
            '\x1b' => KeyCode::Esc,
            c => KeyCode::Char(c),
        };
        let mut refs: Vec<&mut App> = apps.iter_mut().collect();
        out.extend(handle_key(fleet, &mut refs, KeyEvent::from(code)));
        for app in apps.iter_mut() {
            app.prepare_frame();
        }
    }
    out
}

#[test]
fn keys_in_one_burst_act_on_the_row_the_first_moved_to() {
    let mut apps = vec![app("a", &["web", "api"]), app("b", &["web"])];
    let mut fleet = Fleet::default();
    keys(&mut fleet, &mut apps, "/web\n");
    // `j` then `enter` before any frame: the detail is b's web.
    let mut out = Vec::new();
    for code in [KeyCode::Char('j'), KeyCode::Enter] {
        let mut refs: Vec<&mut App> = apps.iter_mut().collect();
        out.extend(handle_key(&mut fleet, &mut refs, KeyEvent::from(code)));
    }
    assert!(out.iter().all(|(i, _)| *i == 1), "{out:?}");
    assert!(matches!(apps[1].screen, Screen::Detail { .. }));
    assert!(matches!(apps[0].screen, Screen::Table));
}

#[test]
fn c_compares_the_selected_rows_object_across_every_context_until_esc() {
    let mut apps = vec![app("eu", &["web", "api"]), app("us", &["web"])];
    let mut fleet = Fleet::default();
    // Rows: eu:api, eu:web, us:web; the second is selected.
    let commands = keys(&mut fleet, &mut apps, "jc");
    let key = crate::manifest::ObjectKey::new("apps", "Deployment", "shop", "web");
    assert_eq!(
        commands,
        vec![(
            0,
            Command::Compare {
                key: key.clone(),
                api_version: "apps/v1".into()
            }
        )]
    );
    let view = fleet.compare.as_mut().expect("the compare view opens");
    let names: Vec<&str> = view.columns.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(names, ["eu", "us"]);
    assert!(!view.complete());
    // An answer for another object is not this view's; each context's fills its line.
    let other = crate::manifest::ObjectKey::new("apps", "Deployment", "shop", "api");
    view.read("eu", &other, Err("late".into()));
    assert!(matches!(
        view.columns[0].1,
        super::super::compare::Column::Reading
    ));
    view.read("eu", &key, Err("forbidden".into()));
    view.read("us", &key, Err("unreachable".into()));
    assert!(view.complete());
    let lines = view.lines(Timestamp::UNIX_EPOCH);
    assert_eq!(lines[0].1, "eu  error: forbidden");
    assert_eq!(lines[1].1, "us  error: unreachable");
    // Keys of the table do nothing while it shows; ctrl-r reads again, esc goes back.
    assert!(keys(&mut fleet, &mut apps, "d").is_empty());
    assert!(fleet.compare.is_some() && fleet.focus.is_none());
    let ctrl_r = KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL);
    let mut refs: Vec<&mut App> = apps.iter_mut().collect();
    let again = handle_key(&mut fleet, &mut refs, ctrl_r);
    assert!(matches!(&again[..], [(_, Command::Compare { .. })]));
    assert!(!fleet.compare.as_ref().unwrap().complete());
    keys(&mut fleet, &mut apps, "\x1b");
    assert!(fleet.compare.is_none());
    // With one context, `c` says what it needs.
    let mut alone = vec![app("eu", &["web"])];
    let mut fleet = Fleet::default();
    assert!(keys(&mut fleet, &mut alone, "c").is_empty());
    assert!(fleet.compare.is_none());
    let said = alone[0].flash.as_ref().expect("a message").text.clone();
    assert!(said.contains("compare needs two contexts"), "{said}");
}

#[test]
fn the_rows_of_one_object_sit_together_in_the_order_the_contexts_were_given() {
    let (a, b) = (app("a", &["web", "api"]), app("b", &["web", "cart"]));
    assert_eq!(shown(&[&a, &b]), ["a:api", "b:cart", "a:web", "b:web"]);
    // Given the other way round, b's web comes first.
    assert_eq!(shown(&[&b, &a]), ["a:api", "b:cart", "b:web", "a:web"]);
    assert_eq!(len(&[&a, &b]), 4);
}

#[test]
fn a_key_acts_on_the_selected_rows_context_and_the_filter_is_everyones() {
    let mut apps = vec![app("a", &["web", "api"]), app("b", &["web"])];
    let mut fleet = Fleet::default();
    // a:api, a:web, b:web: the third row is b's web.
    keys(&mut fleet, &mut apps, "jj");
    assert_eq!(
        fleet.selected_row().map(|(i, k)| (*i, k.name.as_ref())),
        Some((1, "web"))
    );
    let commands = keys(&mut fleet, &mut apps, "\n");
    assert!(
        commands.iter().all(|(i, _)| *i == 1),
        "the detail's watchers are b's: {commands:?}"
    );
    assert!(matches!(apps[1].screen, Screen::Detail { .. }));
    assert!(matches!(apps[0].screen, Screen::Table));
    assert_eq!(fleet.focus, Some(1));
    // esc: back on the fleet's table, the same row selected.
    keys(&mut fleet, &mut apps, "\x1b");
    assert_eq!(fleet.focus, None);
    assert_eq!(fleet.selected, 2);
    // The filter typed goes to every context's table.
    keys(&mut fleet, &mut apps, "/web\n");
    assert_eq!(
        (apps[0].table.filter.as_str(), apps[1].table.filter.as_str()),
        ("web", "web")
    );
    let refs: Vec<&App> = apps.iter().collect();
    assert_eq!(shown(&refs), ["a:web", "b:web"]);
}

#[test]
fn the_rows_on_screen_and_the_selection_are_those_of_the_full_merge() {
    // Ties (web in all three), rows in one context only, and more rows than fit.
    let names: Vec<String> = (0..30).map(|n| format!("app-{n:02}")).collect();
    let some =
        |step: usize| -> Vec<&str> { names.iter().step_by(step).map(String::as_str).collect() };
    let mut apps = vec![app("a", &some(2)), app("b", &some(3)), app("c", &some(1))];
    for app in &mut apps {
        update(
            app,
            Message::Resize {
                width: 100,
                height: 12,
            },
        );
        app.prepare_frame();
    }
    let refs: Vec<&App> = apps.iter().collect();
    let merged: Vec<(usize, ObjectKey)> = rows(&refs).map(|(i, k)| (i, k.clone())).collect();
    let mut fleet = Fleet::default();
    for step in std::iter::repeat_n(1, merged.len()).chain(std::iter::repeat_n(-3, 20)) {
        fleet.move_by(&refs, step);
        // A frame after the move: found again by counting, not by walking the merge.
        fleet.refresh(&refs);
        let at = fleet.selected;
        assert_eq!(
            fleet.selected_row(),
            merged.get(at).map(|(i, k)| (*i, k.clone())).as_ref()
        );
        let height = refs[0].table_height();
        assert!(
            fleet.offset <= at && at < fleet.offset + height,
            "{at} {}",
            fleet.offset
        );
        let want: Vec<_> = merged
            .iter()
            .skip(fleet.offset)
            .take(height)
            .cloned()
            .collect();
        assert_eq!(&fleet.window()[..want.len()], want.as_slice(), "at {at}");
    }
}

#[test]
fn the_filter_matches_a_context_name_when_several_are_watched() {
    let mut apps = vec![app("staging", &["web", "api"]), app("prod-eu", &["web"])];
    let mut fleet = Fleet::default();
    let name = |apps: &mut [App]| {
        let mut refs: Vec<&mut App> = apps.iter_mut().collect();
        name_contexts(&mut refs);
        for app in refs {
            app.prepare_frame();
        }
    };
    name(&mut apps);
    keys(&mut fleet, &mut apps, "/prod\n");
    name(&mut apps);
    let refs: Vec<&App> = apps.iter().collect();
    assert_eq!(shown(&refs), ["prod-eu:web"]);
    // A row's own name still matches in every context.
    keys(&mut fleet, &mut apps, "/api\n");
    name(&mut apps);
    let refs: Vec<&App> = apps.iter().collect();
    assert_eq!(shown(&refs), ["staging:api"]);
    // One context watched: its name is on no row, the filter does not match it.
    let mut one = vec![app("prod-eu", &["web"])];
    let mut fleet = Fleet::default();
    keys(&mut fleet, &mut one, "/prod\n");
    name(&mut one);
    let refs: Vec<&App> = one.iter().collect();
    assert!(shown(&refs).is_empty());
}

#[test]
fn a_message_of_a_context_not_shown_moves_to_the_status_line_named_by_it() {
    let mut apps = vec![app("staging", &["web"]), app("prod-eu", &["web"])];
    let fleet = Fleet::default();
    apps[1].flash = Some(super::super::Flash {
        text: "accept failed: conflict".into(),
        error: true,
    });
    let mut refs: Vec<&mut App> = apps.iter_mut().collect();
    gather_messages(&fleet, &mut refs);
    assert!(apps[1].flash.is_none());
    let shown = apps[0].flash.clone().unwrap();
    assert_eq!(
        (shown.text.as_str(), shown.error),
        ("prod-eu: accept failed: conflict", true)
    );
    // The shown context's own message is left as it is, and a key clears what shows.
    let mut refs: Vec<&mut App> = apps.iter_mut().collect();
    gather_messages(&fleet, &mut refs);
    assert_eq!(
        apps[0].flash.as_ref().map(|f| f.text.as_str()),
        Some("prod-eu: accept failed: conflict")
    );
    let mut fleet = fleet;
    keys(&mut fleet, &mut apps, "j");
    assert!(apps.iter().all(|a| a.flash.is_none()));
}

#[test]
fn ctx_plus_and_minus_name_a_context_of_the_kubeconfig() {
    let mut a = app("a", &["web"]);
    assert_eq!(
        press(&mut a, ":ctx +b\n"),
        [Command::Contexts(ContextChange::Add("b".into()))]
    );
    assert_eq!(
        press(&mut a, ":ctx -c\n"),
        [Command::Contexts(ContextChange::Remove("c".into()))]
    );
    assert!(press(&mut a, ":ctx +nope\n").is_empty());
    assert!(
        a.flash
            .is_some_and(|f| f.error && f.text.contains("no context \"nope\""))
    );
}

#[test]
fn a_context_removed_takes_its_focus_and_selection_and_the_others_move_down() {
    let mut fleet = Fleet {
        focus: Some(2),
        lead: 2,
        selected_row: Some((
            2,
            crate::cluster::rows::WorkloadKind::Deployment.key("shop", "web"),
        )),
        ..Fleet::default()
    };
    fleet.removed(1);
    assert_eq!((fleet.focus, fleet.lead), (Some(1), 1));
    assert_eq!(fleet.selected_row().map(|(i, _)| *i), Some(1));
    fleet.removed(1);
    assert_eq!(
        (fleet.focus, fleet.lead, fleet.selected_row()),
        (None, 0, None)
    );
}
