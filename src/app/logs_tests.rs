#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::*;
use crate::app::test_keys::press;
use crate::app::{Message, update};
use crate::cluster::client::NamespaceScope;

fn line(text: &str) -> LogLine {
    LogLine {
        text: text.into(),
        cut: None,
    }
}

/// An app showing the log of `shop/web-1`, opened from the detail of `shop/web`, with
/// `lines` lines read, on an 80×24 screen (20 rows of text).
fn log_app(lines: usize) -> App {
    let mut app = App::new(
        "ctx",
        vec![],
        NamespaceScope::All,
        jiff::Timestamp::UNIX_EPOCH,
    );
    let back = Screen::Detail {
        key: crate::cluster::rows::WorkloadKind::Deployment.key("shop", "web"),
        scroll: 3,
    };
    app.screen = back;
    app.open_over(Screen::Log(Box::new(LogView::new(
        crate::cluster::rows::WorkloadKind::Deployment.key("shop", "web-1"),
        None,
    ))));
    app.log_epoch = 7;
    feed(&mut app, 7, (0..lines).map(|i| format!("line {i}")));
    app
}

fn feed(app: &mut App, epoch: u64, lines: impl Iterator<Item = String>) {
    let lines = lines.map(|t| line(&t)).collect();
    update(
        app,
        Message::Log {
            epoch,
            event: LogEvent::Lines(lines),
        },
    );
}

fn view(app: &App) -> &LogView {
    match &app.screen {
        Screen::Log(v) => v,
        other => panic!("not the log view: {other:?}"),
    }
}

fn top_line(app: &App) -> String {
    let (w, r) = app.log_area();
    let v = view(app);
    v.buffer.get(v.shown_top(w, r)).unwrap().text.clone()
}

#[test]
fn the_ring_buffer_keeps_the_newest_lines_and_counts_the_dropped() {
    let mut b = LogBuffer::default();
    for i in 0..MAX_LINES + 1234 {
        b.push(line(&format!("l{i}")));
    }
    assert_eq!(b.len(), MAX_LINES);
    assert_eq!(b.dropped(), 1234);
    assert_eq!(b.get(1234).unwrap().text, "l1234");
    assert!(b.get(1233).is_none());
    assert_eq!(
        b.get(b.end() - 1).unwrap().text,
        format!("l{}", MAX_LINES + 1233)
    );
    // Long lines are bounded by bytes too.
    let mut b = LogBuffer::default();
    for _ in 0..1000 {
        b.push(line(&"x".repeat(64 * 1024)));
    }
    assert!(b.bytes() <= MAX_BYTES + 64 * 1024, "{}", b.bytes());
    assert!(b.dropped() > 0);
    assert_eq!(thousands(1_234_567), "1,234,567");
    assert_eq!(thousands(999), "999");
}

#[test]
fn scrolling_up_pauses_and_reaching_the_bottom_follows_again() {
    let mut app = log_app(100);
    assert!(view(&app).following());
    assert_eq!(
        top_line(&app),
        "line 80",
        "the newest 20 lines fill the view"
    );
    press(&mut app, "kk");
    assert_eq!(view(&app).top, Some(78));
    // New lines do not move a paused view.
    feed(&mut app, 7, (100..110).map(|i| format!("line {i}")));
    assert_eq!(top_line(&app), "line 78");
    press(&mut app, "g");
    assert_eq!(top_line(&app), "line 0");
    press(&mut app, "G");
    assert!(view(&app).following());
    assert_eq!(top_line(&app), "line 90");
    press(&mut app, "k");
    press(&mut app, "j");
    assert!(view(&app).following(), "j at the bottom follows again");
}

#[test]
fn lines_of_a_stream_that_was_replaced_are_ignored() {
    let mut app = log_app(5);
    let commands = press(&mut app, "p");
    assert!(view(&app).previous);
    assert!(
        view(&app).buffer.is_empty(),
        "the previous run's log starts afresh"
    );
    let Some(Command::OpenLog { epoch, request }) = commands.first() else {
        panic!("{commands:?}");
    };
    assert_eq!((*epoch, request.previous), (8, true));
    feed(&mut app, 7, ["late".to_string()].into_iter());
    assert!(view(&app).buffer.is_empty());
    feed(&mut app, 8, ["crash".to_string()].into_iter());
    assert_eq!(view(&app).buffer.len(), 1);
}

#[test]
fn esc_goes_back_to_the_detail_where_it_was_and_stops_the_stream() {
    let mut app = log_app(5);
    assert_eq!(press(&mut app, "\x1b"), [Command::StopLog]);
    assert_eq!(
        app.screen,
        Screen::Detail {
            key: crate::cluster::rows::WorkloadKind::Deployment.key("shop", "web"),
            scroll: 3
        }
    );
    // A stray batch after closing changes nothing.
    feed(&mut app, 7, ["late".to_string()].into_iter());
}

#[test]
fn search_jumps_between_matches_and_says_when_there_is_none() {
    let mut app = log_app(0);
    let lines = (0..200).map(|i| {
        if i % 50 == 7 {
            format!("ERROR request {i} failed")
        } else {
            format!("INFO request {i}")
        }
    });
    feed(&mut app, 7, lines);
    // From the bottom, the newest match first; the view pauses there.
    press(&mut app, "/error\n");
    assert_eq!(view(&app).found, Some(157));
    assert!(!view(&app).following());
    press(&mut app, "N");
    assert_eq!(view(&app).found, Some(107));
    press(&mut app, "n");
    assert_eq!(view(&app).found, Some(157));
    press(&mut app, "n");
    assert_eq!(view(&app).found, Some(7), "around the end");
    assert_eq!(top_line(&app), "INFO request 1", "a third of the way down");
    press(&mut app, "/nothing like it\n");
    assert!(app.flash.as_ref().unwrap().text.contains("nothing like it"));
    // Typing q in the search is text, not quit.
    assert!(press(&mut app, "/q\x1b").is_empty());
    assert_eq!(
        match_ranges("Error, error; ERROR", "error"),
        [0..5, 7..12, 14..19]
    );
}

#[test]
fn wrap_shows_long_lines_on_several_rows_and_keeps_the_bottom_in_sight() {
    let mut app = log_app(0);
    feed(
        &mut app,
        7,
        (0..30).map(|i| format!("{i} {}", "y".repeat(150))),
    );
    let (w, r) = app.log_area();
    assert_eq!(view(&app).bottom_top(w, r), 10);
    press(&mut app, "w");
    // 152 to 153 characters in 78 columns: two rows each.
    assert_eq!(view(&app).bottom_top(w, r), 20);
}

#[test]
fn c_cycles_the_containers_and_p_the_previous_run() {
    let mut app = log_app(0);
    update(
        &mut app,
        Message::Log {
            epoch: 7,
            event: LogEvent::Opened {
                containers: vec!["web".into(), "proxy".into()],
                container: "web".into(),
            },
        },
    );
    let commands = press(&mut app, "c");
    let Some(Command::OpenLog { request, .. }) = commands.first() else {
        panic!("{commands:?}");
    };
    assert_eq!(request.container.as_deref(), Some("proxy"));
    assert_eq!(request.tail, Some(MAX_LINES as i64));
    assert!(request.follow);
    press(&mut app, "c");
    assert_eq!(view(&app).container.as_deref(), Some("web"));
}
