//! The log view following a pod that writes 10,000 lines/s (issue 13, point 5): each 16 ms
//! frame interval brings one batch of 160 lines (as the stream task sends them), applied with
//! `update` and drawn into a 200×50 TestBackend. Prints the median and p99 of the frame (draw)
//! and of the batch (update), following, paused, and wrapped with a search highlighted; and
//! the ring buffer's bytes, which stop growing once it holds its 10,000 lines.
//!
//! Run: `cargo bench --bench logs` (`-- --quick`: 3 s of log instead of 20).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/measure.rs"]
mod measure;

use std::time::{Duration, Instant};

use jiff::Timestamp;
use kdrift::app::logs::{LogView, MAX_LINES};
use kdrift::app::{App, Message, Screen, update};
use kdrift::cluster::client::NamespaceScope;
use kdrift::cluster::logs::{LogEvent, LogLine};
use kdrift::ui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const LINES_PER_SECOND: usize = 10_000;
const FRAME: Duration = Duration::from_millis(16);
const WIDTH: u16 = 200;
const HEIGHT: u16 = 50;

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i]
}

/// Line `i` of a busy service: mostly request lines, now and then a long one (a stack, a dump).
fn line(i: usize) -> LogLine {
    let text = if i.is_multiple_of(500) {
        format!(
            "ERROR request {i} failed: {}",
            "stack frame at com.example.Server.handle; ".repeat(40)
        )
    } else if i.is_multiple_of(7) {
        format!(
            "WARN GET /api/v1/items/{i} 404 {}ms slow upstream inventory-api retrying",
            i % 90
        )
    } else {
        format!("INFO GET /api/v1/orders/{i} 200 {}ms", i % 60)
    };
    LogLine { text, cut: None }
}

struct Figures {
    frames: Vec<Duration>,
    batches: Vec<Duration>,
}

impl Figures {
    fn print(mut self, what: &str) {
        let n = self.frames.len();
        println!(
            "{what:<34} frame median {:>7.3} ms  p99 {:>7.3} ms  max {:>7.3} ms | batch median {:>6.3} ms  p99 {:>6.3} ms  ({n} frames)",
            ms(percentile(&mut self.frames, 0.5)),
            ms(percentile(&mut self.frames, 0.99)),
            ms(*self.frames.last().unwrap()),
            ms(percentile(&mut self.batches, 0.5)),
            ms(percentile(&mut self.batches, 0.99)),
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn app() -> App {
    let mut app = App::new("bench", vec![], NamespaceScope::All, Timestamp::now());
    app.width = WIDTH;
    app.height = HEIGHT;
    let back = Screen::Detail {
        key: kdrift::cluster::rows::WorkloadKind::Deployment.key("shop", "checkout"),
        scroll: 0,
    };
    app.screen = back;
    app.open_over(Screen::Log(Box::new(LogView::new(
        kdrift::cluster::rows::WorkloadKind::Deployment.key("shop", "checkout-6944fbcdc6-dbmxm"),
        Some("checkout".into()),
    ))));
    app
}

fn view(app: &App) -> &LogView {
    match &app.screen {
        Screen::Log(v) => v,
        _ => unreachable!(),
    }
}

/// `seconds` of log at 10,000 lines/s, one batch and one frame per 16 ms.
fn follow(
    app: &mut App,
    next: &mut usize,
    seconds: f64,
    term: &mut Terminal<TestBackend>,
    theme: &Theme,
) -> Figures {
    let per_frame = LINES_PER_SECOND * FRAME.as_millis() as usize / 1000;
    let frames = (seconds / FRAME.as_secs_f64()) as usize;
    let mut figures = Figures {
        frames: Vec::with_capacity(frames),
        batches: Vec::with_capacity(frames),
    };
    for _ in 0..frames {
        let batch: Vec<LogLine> = (*next..*next + per_frame).map(line).collect();
        *next += per_frame;
        let epoch = app.log_epoch;
        let t = Instant::now();
        update(
            app,
            Message::Log {
                epoch,
                event: LogEvent::Lines(batch),
            },
        );
        figures.batches.push(t.elapsed());
        app.prepare_frame();
        let t = Instant::now();
        term.draw(|f| kdrift::ui::render(app, theme, f)).unwrap();
        figures.frames.push(t.elapsed());
    }
    figures
}

fn key(app: &mut App, c: char) {
    update(
        app,
        Message::Key(crossterm::event::KeyEvent::from(
            crossterm::event::KeyCode::Char(c),
        )),
    );
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let seconds = if quick { 3.0 } else { 20.0 };
    let theme = Theme::default_theme();
    let mut term = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    let mut app = app();
    let mut next = 0;
    let rss_before = measure::rss_mb();
    println!(
        "log view, {LINES_PER_SECOND} lines/s, {WIDTH}x{HEIGHT}, one batch per {} ms frame",
        FRAME.as_millis()
    );

    follow(&mut app, &mut next, seconds, &mut term, &theme).print("following");
    let full = view(&app).buffer.bytes();
    println!(
        "  buffer: {} lines kept of {next} read ({} dropped), {:.2} MB",
        view(&app).buffer.len(),
        view(&app).buffer.dropped(),
        full as f64 / 1e6
    );
    assert_eq!(view(&app).buffer.len(), MAX_LINES);

    // Paused in the middle while lines keep coming.
    for _ in 0..5_000 {
        key(&mut app, 'k');
    }
    follow(&mut app, &mut next, seconds / 2.0, &mut term, &theme).print("paused (k ×5000)");

    // Wrapped, following, with a search highlighted on every line in sight.
    key(&mut app, 'G');
    key(&mut app, 'w');
    for c in "/orders\n".chars() {
        let code = if c == '\n' {
            crossterm::event::KeyCode::Enter
        } else {
            crossterm::event::KeyCode::Char(c)
        };
        update(
            &mut app,
            Message::Key(crossterm::event::KeyEvent::from(code)),
        );
    }
    key(&mut app, 'G');
    follow(&mut app, &mut next, seconds / 2.0, &mut term, &theme)
        .print("wrapped, search highlighted");

    let bytes = view(&app).buffer.bytes();
    println!(
        "  buffer after {next} lines: {} lines, {:.2} MB (after the first {} s: {:.2} MB); heap {:.1} MB; resident {:.1} MB → {:.1} MB",
        view(&app).buffer.len(),
        bytes as f64 / 1e6,
        seconds,
        full as f64 / 1e6,
        measure::heap_mb(),
        rss_before,
        measure::rss_mb()
    );
}
