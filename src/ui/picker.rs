//! The `:ns` and `:ctx` pickers: the choices on screen (visible lines only), the one in use
//! marked, the workloads the table holds per namespace, and what to do when listing failed.
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use super::paint::TablePaint;
use super::theme::Theme;
use crate::app::App;
use crate::app::picker::{Choice, Choices, PickKind, Picker};
use crate::cluster::client::NamespaceScope;

/// The DEPLOYMENTS column is shown from this width (a name's 24 columns, then the count).
const COUNTS_FROM: u16 = 36;

pub fn render_picker(app: &App, theme: &Theme, frame: &mut Frame, area: Rect, picker: &Picker) {
    let what = match picker.kind {
        PickKind::Namespace => "namespaces",
        PickKind::Context => "contexts",
    };
    let visible = picker.visible();
    let count = match &picker.choices {
        Choices::Ready(all) if visible.len() == all.len() => format!("[{}]", all.len()),
        Choices::Ready(all) => format!("[{}/{}]", visible.len(), all.len()),
        Choices::Listing | Choices::Failed(_) => String::new(),
    };
    let filter = if picker.filter.is_empty() || picker.typing {
        String::new()
    } else {
        format!(" </{}>", picker.filter)
    };
    let block = super::view_block(
        theme,
        area,
        Line::from(vec![
            Span::styled(format!(" {what}{count}"), theme.title),
            Span::styled(filter, theme.warning),
            Span::raw(" "),
        ]),
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    // The footer line only while a filter is typed: on a short screen it would take the only
    // row of choices.
    let footer_rows = u16::from(picker.typing);
    let [body, footer] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(footer_rows)]).areas(inner);
    match &picker.choices {
        Choices::Listing => {
            frame.render_widget(Span::styled(format!("listing {what}…"), theme.muted), body)
        }
        Choices::Failed(reason) => {
            let lines = vec![
                Line::styled(format!("cannot list {what}: {reason}"), theme.error),
                Line::raw(""),
                Line::styled(
                    ":ns NAME still works: type : then ns and the namespace's name \
                     (:ns all for every namespace you may read)",
                    theme.text,
                ),
            ];
            frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), body);
        }
        Choices::Ready(_) => render_choices(app, theme, frame, body, picker, &visible),
    }
    frame.render_widget(footer_line(theme, picker), footer);
}

fn render_choices(
    app: &App,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
    picker: &Picker,
    visible: &[&Choice],
) {
    // The counts only where the names keep their room.
    let counts = picker.kind == PickKind::Namespace && area.width >= COUNTS_FROM;
    let mut header = vec!["  NAME"];
    if counts {
        header.push("DEPLOYMENTS");
    }
    let height = usize::from(area.height.saturating_sub(1));
    // The offset kept by the keys fits the height of the last key; after a resize the
    // selection must still show.
    let mut start = picker.offset.min(visible.len());
    if height > 0 && picker.selected >= start + height {
        start = picker.selected + 1 - height;
    }
    // Names are short: the count stays next to its name rather than across a wide screen.
    let longest = visible.iter().map(|c| c.label().chars().count()).max();
    // Room for "  (in use)", and for "  watched · reconnecting" over several contexts.
    let notes = if picker.watched.is_empty() { 12 } else { 36 };
    let name_width = (longest.unwrap_or(0) + notes).clamp(24, 64 + notes) as u16;
    let mut widths = vec![Constraint::Length(name_width)];
    if counts {
        widths.push(Constraint::Length(11));
    }
    let mut table = TablePaint::new(
        frame.buffer_mut(),
        area,
        Block::new(),
        &widths,
        &header,
        theme.header,
    );
    for (i, choice) in visible.iter().enumerate().skip(start).take(height) {
        let style = if i == picker.selected {
            theme.selected
        } else {
            theme.text
        };
        let Some(mut row) = table.row(style) else {
            break;
        };
        let current = **choice == picker.current;
        let marker = if current { "● " } else { "  " };
        let mut name = vec![Span::raw(marker), Span::raw(choice.label())];
        if current {
            name.push(Span::styled("  (in use)", theme.muted));
        }
        // Over several contexts: which are watched, and how each stands.
        if let Some((_, state, bad)) = picker.watched.iter().find(|(c, _, _)| c == choice.label()) {
            name.push(Span::styled(
                format!("  watched · {state}"),
                if *bad { theme.error } else { theme.muted },
            ));
        }
        row.spans(&name);
        if counts {
            match deployments_in(app, choice) {
                Some(n) => row.format(format_args!("{n:>11}")),
                None => row.format(format_args!("{:>11}", "")),
            }
        }
    }
    if visible.is_empty() && area.height > 1 {
        let text = if picker.filter.is_empty() {
            "nothing to choose from"
        } else {
            "nothing matches the filter (esc clears it)"
        };
        let line = Rect {
            y: area.y + 1,
            height: 1,
            ..area
        };
        frame.render_widget(Span::styled(text, theme.muted), line);
    }
}

/// How many workloads the table holds in `choice`, when it knows (it holds only the namespaces
/// watched, and counts nothing before the first list ends).
fn deployments_in(app: &App, choice: &Choice) -> Option<usize> {
    let rows = &app.cache.workloads;
    if !rows.is_synced() {
        return None;
    }
    match (choice, &app.scope) {
        (Choice::AllNamespaces, NamespaceScope::All) => Some(rows.len()),
        (Choice::AllNamespaces, NamespaceScope::One(_)) => None,
        (Choice::Name(ns), NamespaceScope::One(watched)) if ns != watched => None,
        (Choice::Name(ns), _) => Some(rows.in_namespace(ns).count()),
    }
}

/// The filter being typed (the keys are in the hints below the status bar).
fn footer_line<'a>(theme: &Theme, picker: &'a Picker) -> Line<'a> {
    if picker.typing {
        return Line::from(vec![
            Span::styled("/", theme.status_key),
            Span::raw(picker.filter.as_str()),
            Span::styled("▏", theme.muted),
            Span::styled("  enter keeps the filter · esc clears it", theme.muted),
        ]);
    }
    Line::default()
}
