//! The `d` diff view (manifest against live, coloured, each drifted field annotated with its
//! manager and age) and the `:problems` list of the manifests.
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::table::drift_cell;
use super::theme::Theme;
use crate::app::App;
use crate::app::diff::{DiffContent, DiffView};
use crate::app::drift::note_text;
use crate::drift::diff::LineKind;

pub fn render_diff(app: &App, theme: &Theme, frame: &mut Frame, area: Rect, view: &DiffView) {
    let key = &view.key;
    let mut title = vec![
        Span::styled(
            format!(" diff {} ", super::format::object_title(key)),
            theme.title,
        ),
        drift_cell(theme, &app.drift_of_object(key)),
        Span::raw(" "),
    ];
    let starts = view.field_starts();
    if !starts.is_empty() {
        let current = starts
            .iter()
            .filter(|s| s.saturating_sub(2) <= view.scroll)
            .count();
        title.push(Span::styled(
            format!(" field {}/{} ", current.max(1), starts.len()),
            theme.muted,
        ));
    }
    let block = super::view_block(theme, area, Line::from(title));
    let height = usize::from(block.inner(area).height);
    let lines: Vec<Line> = match &view.content {
        DiffContent::Loading => vec![Line::styled("fetching the live object…", theme.muted)],
        DiffContent::Unavailable(why) => vec![
            Line::styled(why.clone(), theme.warning),
            Line::styled("esc goes back", theme.muted),
        ],
        DiffContent::Ready {
            lines,
            items,
            place,
        } if lines.len() <= 2 => {
            let mut out = vec![Line::styled(
                "in sync: every field of the manifest has its value live",
                theme.in_sync,
            )];
            // A Helm release's object says which revision it is in sync with (its place is the
            // release's source, never a file).
            if place.starts_with("helm:") {
                out.push(Line::styled(
                    format!("desired state: {}", crate::text::printable(place)),
                    theme.muted,
                ));
            }
            // Notes that are not drift (autoscaled replicas, a restart) are still worth seeing.
            for (class, attribution) in items {
                out.push(Line::styled(
                    note_text(*class, attribution, app.now),
                    theme.diff_note,
                ));
            }
            out
        }
        DiffContent::Ready { lines, items, .. } => lines
            .iter()
            .skip(view.scroll)
            .take(height)
            .map(|line| {
                let (prefix, style) = match line.kind {
                    LineKind::Header => ("", theme.header),
                    LineKind::Hunk => ("", theme.diff_hunk),
                    LineKind::Context => (" ", theme.text),
                    LineKind::Removed => ("-", theme.diff_removed),
                    LineKind::Added => ("+", theme.diff_added),
                };
                let text = crate::text::printable(&line.text);
                let mut spans = vec![Span::styled(format!("{prefix}{text}"), style)];
                if let Some((class, attribution)) = line.item.and_then(|i| items.get(i)) {
                    spans.push(Span::styled(
                        format!(
                            "  # {}",
                            crate::text::printable(&note_text(*class, attribution, app.now))
                        ),
                        theme.diff_note,
                    ));
                }
                Line::from(spans)
            })
            .collect(),
    };
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

pub fn render_problems(app: &App, theme: &Theme, frame: &mut Frame, area: Rect, scroll: u16) {
    let problems = app
        .manifests
        .as_ref()
        .map(|index| index.problems())
        .unwrap_or_default();
    let root = app
        .manifests
        .as_ref()
        .map(|index| index.root.display().to_string())
        .unwrap_or_default();
    let notes = problems.iter().filter(|p| p.is_note()).count();
    let block = super::view_block(
        theme,
        area,
        Span::styled(
            format!(
                " manifest problems({}) notes({notes}) {root} ",
                problems.len() - notes
            ),
            theme.title,
        ),
    );
    let lines: Vec<Line> = if app.manifests.is_none() {
        vec![Line::styled(
            "the manifests are still loading…",
            theme.muted,
        )]
    } else if problems.is_empty() {
        vec![Line::styled(
            "no problems: every manifest file was read",
            theme.in_sync,
        )]
    } else {
        problems
            .iter()
            .map(|p| {
                // Paths are shown relative to the manifests folder: shorter, and what git shows.
                let text = p.to_string().replace(&format!("{root}/"), "");
                // A note hides no object: said as one, not in the warning colour.
                let style = if p.is_note() {
                    theme.muted
                } else {
                    theme.warning
                };
                Line::styled(format!("{}: {text}", p.label()), style)
            })
            .collect()
    };
    // A problem is a sentence (file, line, what is wrong): wrapped, its end is read.
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0)),
        area,
    );
}
