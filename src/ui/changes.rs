//! The `:changes` view: the change timeline, newest first — AGE, OBJECT, WHO, WHAT and whether
//! GIT agrees now; under the lines, how many older ones the ring dropped.
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use super::format::{age, fit};
use super::paint::TablePaint;
use super::theme::Theme;
use crate::app::App;
use crate::app::changes::{ChangesView, ring_note, thousands};
use crate::drift::changes::Agrees;

/// Below this inner width only AGE, the object (its name first) and WHAT are shown.
const NARROW_BELOW: u16 = 80;
/// Below this inner width only AGE and the object's name.
const TINY_BELOW: u16 = 40;

pub fn render_changes(app: &App, theme: &Theme, frame: &mut Frame, area: Rect, view: &ChangesView) {
    let rows = app.change_rows(view);
    let filters = view.filters();
    let mut title = vec![Span::styled(
        format!(
            " changes({})[{}] ",
            app.scope.label(),
            thousands(rows.len() as u64)
        ),
        theme.title,
    )];
    if !filters.is_empty() {
        title.push(Span::styled(format!("{filters} "), theme.muted));
    }
    let block = super::view_block(theme, area, Line::from(title));
    let inner_area = block.inner(area);
    frame.render_widget(block, area);
    let note = ring_note(&app.changes);
    let table_area = Rect {
        height: inner_area.height.saturating_sub(u16::from(note.is_some())),
        ..inner_area
    };
    let inner = usize::from(inner_area.width);
    let narrow = inner_area.width < NARROW_BELOW;
    let tiny = inner_area.width < TINY_BELOW;
    // Narrow, the name first: `shop/web (deployment)`; tiny, `web (deployment)`.
    let object_of = |line: &crate::app::changes::Line| {
        let kind = line.key.kind.to_ascii_lowercase();
        if tiny || (narrow && line.key.namespace.is_empty()) {
            format!("{} ({kind})", line.key.name)
        } else if narrow {
            format!("{}/{} ({kind})", line.key.namespace, line.key.name)
        } else {
            line.object()
        }
    };
    let longest = rows
        .iter()
        .map(|l| object_of(l).chars().count())
        .max()
        .unwrap_or(0);
    let object_width = if tiny {
        inner.saturating_sub(6).max(4)
    } else {
        longest.clamp(10, if narrow { 28 } else { 40 })
    };
    let who_width = if narrow {
        0
    } else {
        rows.iter()
            .map(|l| l.who.chars().count())
            .max()
            .unwrap_or(0)
            .clamp(5, 28)
    };
    let git_width = if narrow { 0 } else { 10 };
    let gaps = if narrow { 2 } else { 4 };
    let what_width = inner
        .saturating_sub(5 + object_width + who_width + git_width + gaps)
        .max(8);
    let height = usize::from(table_area.height.saturating_sub(1));
    let start = view.scroll.min(rows.len());
    let end = (start + height).min(rows.len());
    let (header, widths) = header_and_widths(
        tiny,
        narrow,
        [object_width, who_width, what_width, git_width],
    );
    let mut table = TablePaint::new(
        frame.buffer_mut(),
        table_area,
        Block::new(),
        &widths,
        header,
        theme.header,
    );
    for (i, line) in rows[start..end].iter().enumerate() {
        let Some(mut row) = table.row(theme.list_row(start + i == view.cursor)) else {
            break;
        };
        row.text(&age(line.time(), app.now));
        row.text(&fit(&object_of(line), object_width));
        if tiny {
            continue;
        }
        let what = fit(&crate::text::one_line(line.what()), what_width);
        if narrow {
            row.text(&what);
            continue;
        }
        row.text(&fit(&line.who, who_width));
        row.text(&what);
        row.span(&match line.git {
            Agrees::Drifted => Span::styled("drifted", theme.drifted),
            Agrees::InSync => Span::styled("in sync", theme.in_sync),
            Agrees::NotInGit => Span::styled("not in git", theme.muted),
            Agrees::NotCompared | Agrees::NoField => Span::styled("-", theme.muted),
        });
    }
    if let Some(note) = note {
        let at = Rect {
            y: table_area.bottom(),
            height: 1,
            ..inner_area
        };
        frame.render_widget(Paragraph::new(Span::styled(note, theme.warning)), at);
    }
    if rows.is_empty() {
        let text = if app.changes.is_empty() {
            "no change seen yet: lines appear as the watchers list objects and as they change"
                .to_owned()
        } else {
            format!(
                "no line matches {} (esc clears the filters)",
                if filters.is_empty() {
                    format!("the namespace {}", app.scope.label())
                } else {
                    filters
                }
            )
        };
        super::table::empty_table_note(frame, table_area, &text, theme);
    }
}

/// The columns: AGE and OBJECT when tiny, WHAT too when narrow, else WHO and GIT as well; the
/// widths are OBJECT's, WHO's, WHAT's and GIT's.
fn header_and_widths(
    tiny: bool,
    narrow: bool,
    [object_width, who_width, what_width, git_width]: [usize; 4],
) -> (&'static [&'static str], Vec<Constraint>) {
    if tiny {
        (
            &["AGE", "OBJECT"],
            vec![
                Constraint::Length(5),
                Constraint::Length(object_width as u16),
            ],
        )
    } else if narrow {
        (
            &["AGE", "OBJECT", "WHAT"],
            vec![
                Constraint::Length(5),
                Constraint::Length(object_width as u16),
                Constraint::Length(what_width as u16),
            ],
        )
    } else {
        (
            &["AGE", "OBJECT", "WHO", "WHAT", "GIT"],
            vec![
                Constraint::Length(5),
                Constraint::Length(object_width as u16),
                Constraint::Length(who_width as u16),
                Constraint::Length(what_width as u16),
                Constraint::Length(git_width as u16),
            ],
        )
    }
}
