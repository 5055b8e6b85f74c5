//! The log view: the lines in sight only (a frame costs the same with 10 or 10,000 lines kept),
//! wrapped or cut at the width, search matches highlighted; the title says whether it follows or
//! is paused, the bottom line how the stream stands.
use std::ops::Range;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::theme::Theme;
use crate::app::logs::{LogState, LogView, cut_note, match_ranges, thousands};
use crate::cluster::logs::{LogEnd, LogLine};

pub fn render_log(theme: &Theme, frame: &mut Frame, area: Rect, view: &LogView) {
    let block =
        super::view_block(theme, area, title(theme, view)).title_bottom(state_line(theme, view));
    let inner = block.inner(area);
    let width = usize::from(inner.width).max(1);
    let rows = usize::from(inner.height).max(1);
    let buffer = &view.buffer;
    if buffer.is_empty() {
        let (text, style) = empty_text(theme, view);
        frame.render_widget(
            Paragraph::new(text)
                .style(style)
                .wrap(Wrap { trim: false })
                .block(block),
            area,
        );
        return;
    }
    let top = view.shown_top(width, rows);
    let mut out: Vec<Line> = Vec::with_capacity(rows);
    if buffer.dropped() > 0 && top == buffer.first() && !view.following() {
        out.push(Line::styled(
            format!(
                "… {} earlier lines dropped (the view keeps the newest {})",
                thousands(buffer.dropped()),
                thousands(crate::app::logs::MAX_LINES as u64)
            ),
            theme.muted,
        ));
    }
    let search = view.search.as_deref().unwrap_or("");
    let mut number = top;
    while out.len() < rows {
        let Some(line) = buffer.get(number) else {
            break;
        };
        let base = if view.found == Some(number) {
            theme.header
        } else {
            theme.text
        };
        let styles = Styles {
            base,
            hit: theme.selected,
            note: theme.muted,
        };
        line_rows(line, search, width, view.wrap, styles, rows, &mut out);
        number += 1;
    }
    frame.render_widget(Paragraph::new(out).block(block), area);
}

fn title<'a>(theme: &Theme, view: &LogView) -> Line<'a> {
    let mut text = format!(" log {}/{}", view.pod.namespace, view.pod.name);
    if let Some(c) = &view.container {
        text.push_str(&format!(" [{c}]"));
    }
    if view.previous {
        text.push_str(" · previous run");
    }
    let mut spans = vec![Span::styled(text, theme.title)];
    let follow = if view.following() {
        Span::styled(" · following ", theme.complete)
    } else {
        Span::styled(" · paused (G follows) ", theme.paused)
    };
    spans.push(follow);
    if view.wrap {
        spans.push(Span::styled("· wrap ", theme.muted));
    }
    if let Some(s) = &view.search {
        spans.push(Span::styled(format!("· /{s} "), theme.muted));
    }
    Line::from(spans)
}

fn state_line<'a>(theme: &Theme, view: &LogView) -> Line<'a> {
    let lines = thousands(view.buffer.len() as u64);
    let dropped = match view.buffer.dropped() {
        0 => String::new(),
        n => format!(", … {} earlier lines dropped", thousands(n)),
    };
    let (state, style) = match &view.state {
        LogState::Connecting => ("connecting…".to_owned(), theme.muted),
        LogState::Streaming if view.previous => ("the previous run".to_owned(), theme.muted),
        LogState::Streaming => ("streaming".to_owned(), theme.muted),
        LogState::Reconnecting(why) => (format!("reconnecting: {why}"), theme.warning),
        LogState::Waiting(why) => (format!("waiting: {why}"), theme.warning),
        LogState::Ended(end) => end_text(theme, end),
    };
    Line::from(vec![
        Span::styled(format!(" {} ", crate::text::printable(&state)), style),
        Span::styled(format!("· {lines} lines{dropped} "), theme.muted),
    ])
}

fn end_text(theme: &Theme, end: &LogEnd) -> (String, Style) {
    match end {
        LogEnd::Complete => ("end of the log".to_owned(), theme.muted),
        LogEnd::PodDeleted => ("pod deleted".to_owned(), theme.warning),
        LogEnd::Terminated(how) => (format!("container terminated: {how}"), theme.warning),
        LogEnd::Failed(why) => (why.clone(), theme.error),
    }
}

/// What an empty log shows: how the stream stands, in full (an API refusal can be long).
fn empty_text(theme: &Theme, view: &LogView) -> (String, Style) {
    let (text, style) = match &view.state {
        LogState::Connecting => ("connecting…".to_owned(), theme.muted),
        LogState::Streaming => ("no lines yet".to_owned(), theme.muted),
        LogState::Reconnecting(why) => (format!("reconnecting: {why}"), theme.warning),
        LogState::Waiting(why) => (format!("{why} (asking again)"), theme.warning),
        LogState::Ended(LogEnd::Complete) => ("the log is empty".to_owned(), theme.muted),
        LogState::Ended(end) => end_text(theme, end),
    };
    (crate::text::printable(&text).into_owned(), style)
}

#[derive(Clone, Copy)]
struct Styles {
    base: Style,
    hit: Style,
    note: Style,
}

/// The screen rows of one line: cut at `width`, or wrapped when `wrap`; search matches styled,
/// and the note of a cut line first, where it is seen however long the line.
fn line_rows<'a>(
    line: &LogLine,
    search: &str,
    width: usize,
    wrap: bool,
    styles: Styles,
    rows: usize,
    out: &mut Vec<Line<'a>>,
) {
    let note = cut_note(line);
    let shown: std::borrow::Cow<str> = match &note {
        Some(n) => format!("{n}{}", line.text).into(),
        None => line.text.as_str().into(),
    };
    let text_at = note.as_ref().map_or(0, String::len);
    let hits: Vec<Range<usize>> = match_ranges(&line.text, search)
        .into_iter()
        .map(|h| h.start + text_at..h.end + text_at)
        .collect();
    let mut start = 0;
    loop {
        let end = shown[start..]
            .char_indices()
            .nth(width)
            .map_or(shown.len(), |(i, _)| start + i);
        out.push(Line::from(spans(
            &shown,
            start..end,
            &hits,
            text_at,
            styles,
        )));
        start = end;
        if !wrap || start >= shown.len() || out.len() >= rows {
            return;
        }
    }
}

/// The spans of `text[range]`: matches in `hit`, the bytes before `text_at` (the note) in
/// `note`.
fn spans<'a>(
    text: &str,
    range: Range<usize>,
    hits: &[Range<usize>],
    text_at: usize,
    styles: Styles,
) -> Vec<Span<'a>> {
    let mut cuts: Vec<usize> = vec![range.start, range.end, text_at];
    for h in hits {
        cuts.push(h.start);
        cuts.push(h.end);
    }
    cuts.retain(|c| range.contains(c) || *c == range.end);
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2)
        .map(|w| {
            let style = if w[0] < text_at {
                styles.note
            } else if hits.iter().any(|h| h.start <= w[0] && w[0] < h.end) {
                styles.hit
            } else {
                styles.base
            };
            Span::styled(text[w[0]..w[1]].to_owned(), style)
        })
        .collect()
}
