//! The live loop's test frontend, shared by the tests that drive `Session::drive` on a
//! TestBackend: the text of the last frame, waiting for it to show something, and typing keys.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};
use kdrift::app::{App, Message};
use kdrift::runtime::event_loop::{Event, Frontend};
use kdrift::ui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// How long a test waits for the screen (generous: the machine is shared).
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Keeps the text of the last frame drawn.
pub struct Screen(pub Arc<Mutex<String>>);

impl Frontend<TestBackend> for Screen {
    fn suspend(&mut self, _terminal: &mut Terminal<TestBackend>) -> std::io::Result<()> {
        Ok(())
    }

    fn after_frame(&mut self, app: &App) {
        let mut term = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
        term.draw(|f| kdrift::ui::render(app, &Theme::default_theme(), f))
            .unwrap();
        let buf = term.backend().buffer();
        let mut text = String::new();
        for y in 0..buf.area.height {
            for x in 0..buf.area.width {
                text.push_str(buf[(x, y)].symbol());
            }
            text.push('\n');
        }
        *self.0.lock().unwrap() = text;
    }
}

/// Waits until the last frame satisfies `cond`; fails with the screen after [`PATIENCE`].
pub async fn wait_for(screen: &Arc<Mutex<String>>, what: &str, cond: impl Fn(&str) -> bool) {
    let start = Instant::now();
    loop {
        if cond(&screen.lock().unwrap()) {
            return;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "waited for {what}; screen:\n{}",
            screen.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn key(tx: &tokio::sync::mpsc::UnboundedSender<Event>, code: KeyCode) {
    tx.send(Event::App(Message::Key(KeyEvent::from(code))))
        .unwrap();
}

/// Types `text`; `\n` is Enter.
pub fn keys(tx: &tokio::sync::mpsc::UnboundedSender<Event>, text: &str) {
    for c in text.chars() {
        key(
            tx,
            if c == '\n' {
                KeyCode::Enter
            } else {
                KeyCode::Char(c)
            },
        );
    }
}
