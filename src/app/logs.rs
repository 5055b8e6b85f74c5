//! The log view (`l` on a pod in the detail view): a bounded ring buffer of the lines read, the
//! follow/pause logic (scrolling up pauses, reaching the bottom follows again), search, wrap,
//! the previous run and the container; the stream itself runs in the runtime
//! ([`crate::cluster::logs`]) and its batches arrive as [`super::Message::Log`].
use std::collections::VecDeque;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{App, Command, Flash, Screen};
use crate::cluster::logs::{LogEnd, LogEvent, LogLine, LogRequest};
use crate::manifest::ObjectKey;

/// The most lines the view keeps; older ones are dropped (and counted).
pub const MAX_LINES: usize = 10_000;
/// The most bytes the view keeps, whatever the lines' lengths (10,000 lines cut at 64 KiB
/// would be 640 MB).
pub const MAX_BYTES: usize = 32 << 20;

/// The newest lines of a log, at most [`MAX_LINES`] and [`MAX_BYTES`]; each line keeps its
/// number since the view (re)started, so a place in it survives older lines going.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogBuffer {
    lines: VecDeque<LogLine>,
    /// The number of `lines[0]`: how many lines were dropped before it.
    first: u64,
    bytes: usize,
}

fn cost(line: &LogLine) -> usize {
    line.text.capacity() + std::mem::size_of::<LogLine>()
}

impl LogBuffer {
    pub fn push(&mut self, line: LogLine) {
        self.bytes += cost(&line);
        self.lines.push_back(line);
        while self.lines.len() > MAX_LINES || (self.bytes > MAX_BYTES && self.lines.len() > 1) {
            if let Some(old) = self.lines.pop_front() {
                self.bytes -= cost(&old);
                self.first += 1;
            }
        }
    }

    /// Lines dropped to keep the bound.
    pub fn dropped(&self) -> u64 {
        self.first
    }

    /// The number of the oldest line kept.
    pub fn first(&self) -> u64 {
        self.first
    }

    /// One past the number of the newest line.
    pub fn end(&self) -> u64 {
        self.first + self.lines.len() as u64
    }

    pub fn get(&self, number: u64) -> Option<&LogLine> {
        let i = usize::try_from(number.checked_sub(self.first)?).ok()?;
        self.lines.get(i)
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The memory the lines hold (their text and their slots).
    pub fn bytes(&self) -> usize {
        self.bytes + self.lines.capacity() * std::mem::size_of::<LogLine>()
    }
}

/// Where the stream stands, for the view's bottom line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogState {
    Connecting,
    Streaming,
    Reconnecting(String),
    Waiting(String),
    Ended(LogEnd),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogView {
    pub pod: ObjectKey,
    /// The pod's containers, once the stream has opened.
    pub containers: Vec<String>,
    /// The container read (`None` until the pod says its default).
    pub container: Option<String>,
    /// The previous run's log rather than the current one.
    pub previous: bool,
    pub buffer: LogBuffer,
    /// The first line shown while paused; `None` follows the newest lines.
    pub top: Option<u64>,
    pub wrap: bool,
    /// The search, once entered.
    pub search: Option<String>,
    /// The search being typed after `/`.
    pub typing: Option<String>,
    /// The line of the match jumped to.
    pub found: Option<u64>,
    pub state: LogState,
}

/// The note before a line that was cut.
pub fn cut_note(line: &LogLine) -> Option<String> {
    line.cut.map(|len| {
        format!(
            "[line cut: {} bytes, the first {} shown] ",
            thousands(len),
            thousands(crate::cluster::logs::MAX_LINE as u64)
        )
    })
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The screen rows a line takes in `width` columns.
pub fn rows_of(line: &LogLine, width: usize, wrap: bool) -> usize {
    if !wrap {
        return 1;
    }
    let chars = line.text.chars().count() + cut_note(line).map_or(0, |n| n.chars().count());
    chars.div_ceil(width.max(1)).max(1)
}

/// Where `needle` (ASCII letters in any case) is in `hay`: byte ranges, in order.
pub fn match_ranges(hay: &str, needle: &str) -> Vec<std::ops::Range<usize>> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let mut out = Vec::new();
    if n.is_empty() || n.len() > h.len() {
        return out;
    }
    let mut i = 0;
    while i + n.len() <= h.len() {
        if h[i..i + n.len()].eq_ignore_ascii_case(n) {
            out.push(i..i + n.len());
            i += n.len();
        } else {
            i += 1;
        }
    }
    out
}

fn contains(hay: &str, needle: &str) -> bool {
    let n = needle.as_bytes();
    !n.is_empty()
        && hay
            .as_bytes()
            .windows(n.len())
            .any(|w| w.eq_ignore_ascii_case(n))
}

impl LogView {
    pub fn new(pod: ObjectKey, container: Option<String>) -> LogView {
        LogView {
            pod,
            containers: Vec::new(),
            container,
            previous: false,
            buffer: LogBuffer::default(),
            top: None,
            wrap: false,
            search: None,
            typing: None,
            found: None,
            state: LogState::Connecting,
        }
    }

    pub fn following(&self) -> bool {
        self.top.is_none()
    }

    /// The first line shown at the bottom: the newest lines that fill `rows`.
    pub fn bottom_top(&self, width: usize, rows: usize) -> u64 {
        let (first, mut top) = (self.buffer.first(), self.buffer.end());
        let mut used = 0;
        while top > first && used < rows {
            let r = self
                .buffer
                .get(top - 1)
                .map_or(1, |l| rows_of(l, width, self.wrap));
            if used > 0 && used + r > rows {
                break;
            }
            used += r;
            top -= 1;
        }
        top
    }

    /// The first line shown.
    pub fn shown_top(&self, width: usize, rows: usize) -> u64 {
        let bottom = self.bottom_top(width, rows);
        match self.top {
            None => bottom,
            Some(t) => t.max(self.buffer.first()).min(bottom),
        }
    }

    /// Move by `delta` lines; reaching the bottom follows again, leaving it pauses.
    fn scroll(&mut self, delta: i64, width: usize, rows: usize) {
        let bottom = self.bottom_top(width, rows);
        let now = self.shown_top(width, rows);
        let next = now
            .saturating_add_signed(delta)
            .clamp(self.buffer.first(), bottom);
        self.top = if delta > 0 && next >= bottom {
            None
        } else {
            Some(next)
        };
    }

    /// The first line matching the search: forward from `start` (included) to the end then
    /// from the oldest, or backward from just before `start` to the oldest then from the end.
    fn find(&self, start: u64, forward: bool) -> Option<u64> {
        let needle = self.search.as_deref()?;
        let (first, end) = (self.buffer.first(), self.buffer.end());
        let start = start.clamp(first, end);
        let hit = |i: &u64| {
            self.buffer
                .get(*i)
                .is_some_and(|l| contains(&l.text, needle))
        };
        if forward {
            (start..end).chain(first..start).find(hit)
        } else {
            (first..start).rev().chain((start..end).rev()).find(hit)
        }
    }

    /// Show `line` a third of the way down, paused.
    fn show(&mut self, line: u64, width: usize, rows: usize) {
        self.found = Some(line);
        let bottom = self.bottom_top(width, rows);
        let top = line
            .saturating_sub(rows as u64 / 3)
            .max(self.buffer.first());
        self.top = Some(top.min(bottom));
    }

    /// Jump to the next match (`forward`) or the previous; false when nothing matches.
    fn jump(&mut self, forward: bool, width: usize, rows: usize) -> bool {
        let top = self.shown_top(width, rows);
        let found = self.found.filter(|f| *f >= self.buffer.first());
        let line = match (found, forward) {
            (Some(f), true) => self.find(f + 1, true),
            (Some(f), false) => self.find(f, false),
            // Following: the newest match first.
            (None, _) if self.following() => self.find(self.buffer.end(), false),
            (None, true) => self.find(top, true),
            (None, false) => self.find(top, false),
        };
        match line {
            Some(line) => {
                self.show(line, width, rows);
                true
            }
            None => false,
        }
    }
}

impl App {
    /// The columns and rows of the log's text (the body less its borders).
    pub fn log_area(&self) -> (usize, usize) {
        // The title and the stream's state take a row each, framed or not.
        (
            usize::from(self.view_inner().0).max(1),
            usize::from(self.height.saturating_sub(4)).max(1),
        )
    }

    /// `l` in the detail view: the log of the selected pod.
    pub fn open_log(&mut self) -> Vec<Command> {
        let Screen::Detail { key, .. } = &self.screen else {
            return Vec::new();
        };
        let pods = super::detail::detail(&self.cache, key)
            .map(|d| d.pods)
            .unwrap_or_default();
        let at = self
            .pod_cursor
            .position(pods.iter().map(|p| p.key.name.as_ref()));
        let Some(pod) = pods.get(at) else {
            self.flash = Some(Flash {
                text: "no pod to show the log of".into(),
                error: true,
            });
            return Vec::new();
        };
        // The container that crashed, when one did: that is the log wanted.
        let container = pod.last_exit.as_ref().map(|e| e.container.clone());
        // Over the detail view, with its scroll (`esc` goes back there).
        let view = LogView::new(pod.key.clone(), container);
        self.open_over(Screen::Log(Box::new(view)));
        self.restart_log()
    }

    /// (Re)start the stream of the log view: a new epoch, so lines of the old one in flight are
    /// ignored.
    fn restart_log(&mut self) -> Vec<Command> {
        self.log_epoch += 1;
        let Screen::Log(view) = &mut self.screen else {
            return Vec::new();
        };
        view.buffer = LogBuffer::default();
        view.top = None;
        view.found = None;
        view.state = LogState::Connecting;
        vec![Command::OpenLog {
            epoch: self.log_epoch,
            request: LogRequest {
                namespace: view.pod.namespace.to_string(),
                pod: view.pod.name.to_string(),
                container: view.container.clone(),
                previous: view.previous,
                follow: true,
                tail: Some(MAX_LINES as i64),
            },
        }]
    }

    /// Leave the log view for the detail view it came from, stopping the stream.
    pub fn close_log(&mut self) -> Vec<Command> {
        let Screen::Log(_) = &self.screen else {
            return Vec::new();
        };
        self.go_back();
        self.log_epoch += 1;
        vec![Command::StopLog]
    }

    /// A batch or a turn of the stream of epoch `epoch`.
    pub fn log_event(&mut self, epoch: u64, event: LogEvent) {
        let Screen::Log(view) = &mut self.screen else {
            return;
        };
        if epoch != self.log_epoch {
            return;
        }
        match event {
            LogEvent::Opened {
                containers,
                container,
            } => {
                view.containers = containers;
                view.container = Some(container);
            }
            LogEvent::Streaming => view.state = LogState::Streaming,
            LogEvent::Lines(lines) => {
                for line in lines {
                    view.buffer.push(line);
                }
            }
            LogEvent::Reconnecting(why) => view.state = LogState::Reconnecting(why),
            LogEvent::Waiting(why) => view.state = LogState::Waiting(why),
            LogEvent::Ended(end) => view.state = LogState::Ended(end),
        }
        self.dirty = true;
    }
}

/// A key in the log view.
pub fn log_key(app: &mut App, key: KeyEvent) -> Vec<Command> {
    let (width, rows) = app.log_area();
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let Screen::Log(view) = &mut app.screen else {
        return Vec::new();
    };
    if let Some(typed) = &mut view.typing {
        match key.code {
            KeyCode::Char(c) => typed.push(c),
            KeyCode::Backspace => {
                typed.pop();
            }
            KeyCode::Esc => view.typing = None,
            KeyCode::Enter => {
                let typed = view.typing.take().unwrap_or_default();
                view.found = None;
                view.search = (!typed.is_empty()).then_some(typed);
                if view.search.is_some() && !view.jump(true, width, rows) {
                    app.flash = no_match(view);
                }
            }
            _ => {}
        }
        return Vec::new();
    }
    let page = rows as i64;
    match key.code {
        KeyCode::Esc => return app.close_log(),
        KeyCode::Char('j') | KeyCode::Down => view.scroll(1, width, rows),
        KeyCode::Char('k') | KeyCode::Up => view.scroll(-1, width, rows),
        KeyCode::PageDown => view.scroll(page, width, rows),
        KeyCode::Char('f') if ctrl => view.scroll(page, width, rows),
        KeyCode::PageUp => view.scroll(-page, width, rows),
        KeyCode::Char('b') if ctrl => view.scroll(-page, width, rows),
        KeyCode::Char('g') | KeyCode::Home => view.top = Some(view.buffer.first()),
        KeyCode::Char('G') | KeyCode::End => view.top = None,
        KeyCode::Char('w') => view.wrap = !view.wrap,
        KeyCode::Char('/') => view.typing = Some(String::new()),
        KeyCode::Char(c @ ('n' | 'N'))
            if view.search.is_some() && !view.jump(c == 'n', width, rows) =>
        {
            app.flash = no_match(view);
        }
        KeyCode::Char('p') => {
            view.previous = !view.previous;
            return app.restart_log();
        }
        KeyCode::Char('c') => {
            if view.containers.len() < 2 {
                let text = match &view.container {
                    Some(c) => format!("the pod has one container: {c}"),
                    None => "the pod's containers are not known yet".into(),
                };
                app.flash = Some(Flash { text, error: false });
                return Vec::new();
            }
            let at = view
                .container
                .as_ref()
                .and_then(|c| view.containers.iter().position(|n| n == c))
                .map_or(0, |i| (i + 1) % view.containers.len());
            view.container = view.containers.get(at).cloned();
            app.flash = view.container.as_ref().map(|c| Flash {
                text: format!("container {c}"),
                error: false,
            });
            return app.restart_log();
        }
        _ => {}
    }
    Vec::new()
}

fn no_match(view: &LogView) -> Option<Flash> {
    view.search.as_ref().map(|s| Flash {
        text: format!("no line of the log holds \"{s}\""),
        error: false,
    })
}

#[cfg(test)]
#[path = "logs_tests.rs"]
mod tests;
