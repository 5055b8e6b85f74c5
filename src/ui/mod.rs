//! Pure rendering of the app state: `render(&App, &Theme, &mut Frame)`. Nothing here does IO.
//!
//! - [`table`]: the Deployment table (visible rows only).
//! - [`fleet`]: the table of several contexts.
//! - [`status`]: the status bar, of one context or several.
//! - [`detail`]: one Deployment's revisions, pods, events, conditions.
//! - [`diff_view`]: the `d` diff of manifest and live, and the `:problems` list.
//! - [`logs`]: the `l` log view of a pod.
//! - [`revert`]: the `r` revert preview and confirmation.
//! - [`picker`]: the `:ns` and `:ctx` pickers.
//! - [`theme`]: TOML themes.
//! - [`format`]: ages and gauges.
//! - [`accept`]: the `a` view: fields to accept and the file diff to be written.
pub mod accept;
pub mod changes;
pub mod compare;
pub mod detail;
pub mod diff_view;
pub mod drift_list;
pub mod fleet;
pub mod format;
pub mod logs;
pub mod paint;
pub mod picker;
pub mod revert;
pub mod rollback;
pub mod status;
pub mod table;
pub mod theme;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::app::keys::{HELP_WIDTH, WRITE_KEYS, help};
use crate::app::{App, Prompt, Screen, bare_frame};
use crate::cluster::watch::WatchHealth;
use theme::Theme;

/// Below this size no view can show a line of its content: a message is shown instead.
pub const MIN_WIDTH: u16 = 20;
pub const MIN_HEIGHT: u16 = 5;

pub fn render(app: &App, theme: &Theme, frame: &mut Frame) {
    render_with(app, theme, frame, None);
}

/// [`render`] of `app`, the fleet's table and status bar in place of its own when `fleet` is
/// given (several contexts watched).
fn render_with(app: &App, theme: &Theme, frame: &mut Frame, fleet: Option<fleet::Parts<'_>>) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let text = format!(
            "terminal too small: {}×{}, kdrift needs at least {MIN_WIDTH}×{MIN_HEIGHT} (q quits)",
            area.width, area.height
        );
        frame.render_widget(
            Paragraph::new(text)
                .style(theme.warning)
                .wrap(Wrap { trim: true }),
            area,
        );
        return;
    }
    let [body, status, hints] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(hints_height(app, area.width)),
    ])
    .areas(area);
    // Who will act on the object's drift, above the views of one object.
    let object = match &app.screen {
        Screen::Detail { key, .. } => Some(key.clone()),
        Screen::Diff(view) => Some(view.key.clone()),
        Screen::Accept(view) => Some(view.key.clone()),
        Screen::Revert(view) => Some(view.key.clone()),
        Screen::Rollback(view) => Some(view.key.clone()),
        _ => None,
    };
    let body = match object {
        Some(key) => reconciler_banner(app, theme, frame, body, &key),
        None => body,
    };
    match &app.screen {
        Screen::Table => match &fleet {
            Some(parts) if let Some(view) = &parts.fleet.compare => {
                compare::render_compare(view, theme, frame, body)
            }
            Some(parts) if parts.fleet.drift_list.is_some() => {
                fleet::render_fleet_drift_list(parts, theme, frame, body)
            }
            Some(parts) => fleet::render_fleet_table(parts, theme, frame, body),
            None => table::render_table(app, theme, frame, body),
        },
        Screen::Detail { key, scroll } => {
            detail::render_detail(app, theme, frame, body, key, *scroll)
        }
        Screen::Diff(view) => diff_view::render_diff(app, theme, frame, body, view),
        Screen::Problems { scroll } => diff_view::render_problems(app, theme, frame, body, *scroll),
        Screen::Accept(view) => {
            let shared = fleet
                .as_ref()
                .map(|parts| fleet::sharing_the_accept(parts, app, view))
                .unwrap_or_default();
            accept::render_accept(app, theme, frame, body, view, &shared)
        }
        Screen::Revert(view) => revert::render_revert(theme, frame, body, view),
        Screen::Pick(picker) => picker::render_picker(app, theme, frame, body, picker),
        Screen::DriftList(view) => drift_list::render_drift_list(app, theme, frame, body, view),
        Screen::Changes(view) => changes::render_changes(app, theme, frame, body, view),
        Screen::Log(view) => logs::render_log(theme, frame, body, view),
        Screen::Rollback(view) => rollback::render_rollback(theme, frame, body, view),
    }
    status::render_status(app, fleet.as_ref(), theme, frame, status);
    render_hints(app, fleet.as_ref(), theme, frame, hints);
    if app.help {
        render_help(app, theme, frame, body);
    }
}

/// A view's frame with its title: borders all round, or only the rule at the top where borders
/// would take the room of the content ([`bare_frame`]).
pub fn view_block<'a>(theme: &Theme, area: Rect, title: impl Into<Line<'a>>) -> Block<'a> {
    let borders = if bare_frame(area.width, area.height) {
        Borders::TOP
    } else {
        Borders::ALL
    };
    Block::default()
        .borders(borders)
        .border_style(theme.border)
        .title(title)
}

/// The sentences of an object's GitOps reconcilers at the top of `area` (one line each, on a
/// screen with room for them); the rest of `area` is returned.
fn reconciler_banner(
    app: &App,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
    key: &crate::manifest::ObjectKey,
) -> Rect {
    let reconcilers = app.reconcilers_of(key);
    let changed = app.drift_changed_at(key);
    let width = usize::from(area.width.max(1));
    let sentences: Vec<(String, ratatui::style::Style)> = reconcilers
        .iter()
        .map(|r| {
            let style = match &r.policy {
                Ok(policy) if policy.reverts_changes() => theme.warning,
                _ => theme.muted,
            };
            (format!("⟳ {}", r.sentence_since(changed, app.now)), style)
        })
        .chain(
            reconcilers
                .iter()
                .filter(|_| matches!(app.screen, Screen::Revert(_)))
                .filter_map(|r| r.on_revert())
                .map(|text| (format!("⟳ {text}"), theme.muted)),
        )
        .collect();
    // Each sentence wraps onto as many lines as it needs.
    let wanted: usize = sentences
        .iter()
        .map(|(text, _)| wrapped_lines(text, width))
        .sum();
    let wanted = u16::try_from(wanted).unwrap_or(u16::MAX);
    if sentences.is_empty() || area.height < wanted.saturating_add(5) {
        return area;
    }
    let [banner, rest] =
        Layout::vertical([Constraint::Length(wanted), Constraint::Min(1)]).areas(area);
    let lines: Vec<Line> = sentences
        .into_iter()
        .map(|(text, style)| Line::styled(text, style))
        .collect();
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), banner);
    rest
}

/// How many lines `text` takes wrapped at word boundaries to `width` columns (as ratatui's
/// word wrap does; a word longer than the width is broken).
fn wrapped_lines(text: &str, width: usize) -> usize {
    let mut lines = 1;
    let mut used = 0;
    for word in text.split(' ') {
        let len = word.chars().count();
        let needed = if used == 0 { len } else { used + 1 + len };
        if needed <= width {
            used = needed;
        } else if len <= width {
            lines += 1;
            used = len;
        } else {
            // Broken across lines.
            lines += usize::from(used > 0) + (len - 1) / width;
            used = len % width;
        }
    }
    lines
}

/// The flash message may need more than one line (a refusal says how to proceed at its end):
/// up to three, taken from the body; hints and prompts take one.
fn hints_height(app: &App, width: u16) -> u16 {
    match (&app.prompt, &app.flash) {
        (None, Some(flash)) => {
            let chars = flash.text.chars().count();
            let width = usize::from(width.max(1));
            u16::try_from(chars.div_ceil(width).clamp(1, 3)).unwrap_or(1)
        }
        _ => 1,
    }
}

/// The key hints that fit in `width`: when they do not all fit, the ones just before `?` and `q`
/// go first, so that help and quit are always shown.
fn fitting_hints<'h>(
    hints: &[&'h (&'h str, &'h str)],
    width: usize,
) -> Vec<&'h (&'h str, &'h str)> {
    let cost = |(k, what): &(&str, &str)| k.chars().count() + what.chars().count() + 5;
    let mut kept: Vec<&(&str, &str)> = hints.to_vec();
    let essential = |(k, _): &(&str, &str)| *k == "?" || *k == "q";
    while kept.iter().map(|h| cost(h)).sum::<usize>() > width {
        let Some(drop) = kept.iter().rposition(|h| !essential(h)) else {
            break;
        };
        kept.remove(drop);
    }
    // A view without `?` or `q` hints (accept) still says how to leave it, when that fits.
    if kept.is_empty()
        && let Some(back) = hints.iter().find(|(k, _)| *k == "esc")
        && cost(back) <= width
    {
        kept.push(back);
    }
    kept
}

fn render_hints(
    app: &App,
    fleet: Option<&fleet::Parts<'_>>,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let line = match &app.prompt {
        Some(Prompt::Filter(text)) => Line::from(vec![
            Span::styled("/", theme.status_key),
            Span::raw(text.clone()),
            Span::styled("▏", theme.muted),
        ]),
        Some(Prompt::Command(text)) => Line::from(vec![
            Span::styled(":", theme.status_key),
            Span::raw(text.clone()),
            Span::styled("▏", theme.muted),
        ]),
        None if matches!(&app.screen, Screen::Log(v) if v.typing.is_some()) => {
            let typed = match &app.screen {
                Screen::Log(v) => v.typing.clone().unwrap_or_default(),
                _ => String::new(),
            };
            Line::from(vec![
                Span::styled("/", theme.status_key),
                Span::raw(typed),
                Span::styled("▏", theme.muted),
            ])
        }
        None => match &app.flash {
            Some(f) => {
                let style = if f.error { theme.error } else { theme.warning };
                frame.render_widget(
                    Paragraph::new(crate::text::printable(&f.text).into_owned())
                        .style(style)
                        .wrap(Wrap { trim: true }),
                    area,
                );
                return;
            }
            None => {
                let hints = hints_of(&app.screen, fleet);
                let mut spans = Vec::with_capacity(hints.len() * 2);
                let offered: Vec<&(&str, &str)> = hints
                    .iter()
                    .filter(|(k, _)| !(app.readonly && WRITE_KEYS.contains(k)))
                    .collect();
                for (k, what) in fitting_hints(&offered, usize::from(area.width)) {
                    spans.push(Span::styled(format!("<{k}>"), theme.status_key));
                    spans.push(Span::styled(format!(" {what}  "), theme.muted));
                }
                Line::from(spans)
            }
        },
    };
    frame.render_widget(line, area);
}

/// The keys the hint line offers on `screen` (the fleet's table has its own), most needed
/// first: on a narrow screen the last ones go first.
fn hints_of(
    screen: &Screen,
    fleet: Option<&fleet::Parts<'_>>,
) -> &'static [(&'static str, &'static str)] {
    match screen {
        Screen::Table if fleet.is_some_and(|p| p.fleet.compare.is_some()) => &[
            ("esc", "back"),
            ("j/k", "scroll"),
            ("ctrl-r", "read again"),
            ("?", "help"),
            ("q", "quit"),
        ],
        Screen::Table if fleet.is_some_and(|p| p.fleet.drift_list.is_some()) => &[
            ("d", "diff"),
            ("a", "accept"),
            ("r", "revert"),
            ("c", "compare"),
            ("j/k", "move"),
            ("esc", "back"),
            ("?", "help"),
            ("q", "quit"),
        ],
        Screen::Table if fleet.is_some_and(|p| p.members.len() > 1) => &[
            ("enter", "detail"),
            ("d", "diff"),
            ("a", "accept"),
            ("r", "revert"),
            ("c", "compare"),
            ("/", "filter"),
            (":ns", "namespace"),
            (":ctx", "contexts"),
            ("?", "help"),
            ("q", "quit"),
        ],
        Screen::Table => &[
            ("enter", "detail"),
            ("d", "diff"),
            ("a", "accept"),
            ("r", "revert"),
            ("/", "filter"),
            (":ns", "namespace"),
            (":ctx", "context"),
            ("N/P/A", "sort"),
            ("?", "help"),
            ("q", "quit"),
        ],
        Screen::Detail { .. } => &[
            ("esc", "back"),
            ("j/k", "select pod"),
            ("l", "log"),
            ("pgdn/pgup", "scroll"),
            ("a", "accept"),
            ("r", "revert"),
            ("u", "roll back"),
            ("?", "help"),
            ("q", "quit"),
        ],
        // Most needed first: on a narrow screen the ones before `?` go first.
        Screen::Diff(_) => &[
            ("esc", "back"),
            ("a", "accept"),
            ("r", "revert"),
            ("n/N", "next/prev field"),
            ("j/k", "scroll"),
            ("ctrl-r", "refresh"),
            ("?", "help"),
            ("q", "quit"),
        ],
        Screen::Problems { .. } => &[("esc", "back"), ("j/k", "scroll"), ("q", "quit")],
        Screen::Accept(view) if !view.commits() => &[
            ("space", "check/uncheck"),
            ("j/k", "move"),
            ("enter", "write the file"),
            ("esc", "cancel"),
            ("pgdn/pgup", "scroll diff"),
        ],
        Screen::Accept(_) => &[
            ("space", "check/uncheck"),
            ("j/k", "move"),
            ("enter", "write and commit"),
            ("esc", "cancel"),
            ("pgdn/pgup", "scroll diff"),
        ],
        Screen::Changes(_) => &[
            ("enter", "diff"),
            ("a", "accept"),
            ("r", "revert"),
            ("/", "filter"),
            ("K/M", "kind/manager"),
            ("esc", "back"),
            ("?", "help"),
            ("q", "quit"),
        ],
        Screen::DriftList(_) => &[
            ("d", "diff"),
            ("a", "accept"),
            ("r", "revert"),
            ("j/k", "move"),
            ("esc", "back"),
            ("?", "help"),
            ("q", "quit"),
        ],
        Screen::Pick(_) => &[
            ("enter", "switch"),
            ("/", "filter"),
            ("j/k", "move"),
            ("esc", "back"),
            ("?", "help"),
            ("q", "quit"),
        ],
        Screen::Log(_) => &[
            ("esc", "back"),
            ("p", "previous run"),
            ("c", "container"),
            ("/", "search"),
            ("n/N", "next/prev"),
            ("w", "wrap"),
            ("g/G", "top/follow"),
            ("?", "help"),
            ("q", "quit"),
        ],
        Screen::Revert(_) => &[
            ("y/enter", "revert"),
            ("esc", "cancel"),
            ("j/k", "scroll"),
            ("q", "quit"),
        ],
        Screen::Rollback(_) => &[
            ("y/enter", "roll back"),
            ("esc", "cancel"),
            ("j/k", "scroll"),
        ],
    }
}

fn render_help(app: &App, theme: &Theme, frame: &mut Frame, area: Rect) {
    let entries: Vec<(&str, &str)> = help(app.readonly).copied().collect();
    let width = HELP_WIDTH.min(area.width);
    let height = (entries.len() as u16 + 3).min(area.height);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    // Inside the borders, one line is the footer; the rest shows the keys, scrolled with j/k
    // when they do not all fit (an 80×24 terminal).
    let room = crate::app::keys::help_rows(width, height);
    let first = app.help_scroll.min(entries.len().saturating_sub(room));
    let below = entries.len().saturating_sub(first + room);
    let mut lines: Vec<Line> = entries
        .iter()
        .skip(first)
        .take(room)
        .map(|(keys, what)| {
            Line::from(vec![
                Span::styled(format!(" {keys:<15}"), theme.status_key),
                Span::styled(what.to_string(), theme.text),
            ])
        })
        .collect();
    let footer = if first > 0 || below > 0 {
        format!(" j/k scroll ({first} above, {below} below) · esc or ? closes")
    } else {
        " esc or ? closes this help".to_owned()
    };
    lines.push(Line::styled(footer, theme.muted));
    let block = view_block(theme, popup, Span::styled(" keys ", theme.title));
    frame.render_widget(Clear, popup);
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}

/// How long until some age on screen shows another text; `None` if nothing on screen ages.
/// The runtime sleeps that long (never less than a second) instead of ticking.
pub fn next_age_change(app: &App) -> Option<i64> {
    let now = app.now;
    let mut next: Option<i64> = None;
    let mut explain: Option<jiff::Timestamp> = None;
    let mut consider = |t: Option<jiff::Timestamp>| {
        if let Some(t) = t {
            let wait = format::age_redraw_in(t, now);
            next = Some(next.map_or(wait, |n| n.min(wait)));
        }
    };
    match &app.screen {
        Screen::Table => {
            for key in app.table.window(app.table.offset, app.table_height()) {
                let entry = app.cache.workloads.get(key);
                consider(entry.and_then(|e| e.row.last_change));
                // A row short of ready pods has them asked why then.
                if let Some(t) = entry.and_then(|e| e.explain_at()) {
                    explain = Some(explain.map_or(t, |n: jiff::Timestamp| n.min(t)));
                }
            }
        }
        Screen::Detail { .. } => return Some(1),
        // Attribution ages ("12m ago") change by the minute at the fastest shown.
        Screen::Diff(_) | Screen::Accept(_) => return Some(60),
        Screen::DriftList(_) => return Some(60),
        // Line ages in seconds while the newest is under two minutes old.
        Screen::Changes(_) => {
            consider(app.changes.newest_first().next().and_then(|l| l.time()));
        }
        Screen::Problems { .. }
        | Screen::Revert(_)
        | Screen::Rollback(_)
        | Screen::Pick(_)
        | Screen::Log(_) => {}
    }
    if matches!(app.overall_health(), WatchHealth::Reconnecting { .. }) {
        return Some(1);
    }
    let mut at = |t: jiff::Timestamp| {
        let wait = t.as_second().saturating_sub(now.as_second()).max(1);
        next = Some(next.map_or(wait, |n| n.min(wait)));
    };
    // A row that stalls turns stuck then, wherever it is.
    if let Some(t) = app.next_stall() {
        at(t);
    }
    // The owners' policies are read again (the GITOPS column and banners follow them).
    if let Some(t) = app.next_reconciler_read() {
        at(t);
    }
    if let Some(t) = explain {
        at(t);
    }
    next
}

#[cfg(test)]
mod wrap_tests {
    use super::wrapped_lines;

    #[test]
    fn wrapped_lines_count_as_word_wrap_does() {
        assert_eq!(wrapped_lines("a b c", 10), 1);
        assert_eq!(wrapped_lines("aaaa bbbb cccc", 9), 2);
        assert_eq!(wrapped_lines("aaaa bbbb", 4), 2);
        assert_eq!(wrapped_lines("", 4), 1);
    }
}
