//! The `r` revert view: "dry run…", then the coloured diff of live now → live after, the fields
//! added live that go, the autoscaler note, and the confirmation hint; or the error.
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::theme::Theme;
use crate::app::revert::{PreviewShown, RevertStage, RevertView, nothing_to_revert};
use crate::cluster::revert::FIELD_MANAGER;
use crate::revert::plan::PreviewKind;

pub fn render_revert(theme: &Theme, frame: &mut Frame, area: Rect, view: &RevertView) {
    let key = &view.key;
    let block = super::view_block(
        theme,
        area,
        Line::from(vec![
            Span::styled(
                format!(" revert {} ", super::format::object_title(key)),
                theme.title,
            ),
            Span::styled(format!("to {} ", view.place), theme.muted),
        ]),
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [body, footer] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
    let (lines, wrap, hint): (Vec<Line>, bool, Vec<Span>) = match &view.stage {
        RevertStage::DryRun => (
            vec![Line::styled(
                "dry run… the API server computes what the revert changes (nothing is changed yet)",
                theme.muted,
            )],
            true,
            hint(theme, &[("esc", "cancel")]),
        ),
        RevertStage::Ready(preview) if preview.changes_nothing => (
            preview
                .kept
                .iter()
                .map(|kept| kept_line(theme, kept))
                .chain([match &preview.replicas_note {
                    Some(note) => Line::styled(
                        crate::app::revert::only_replicas_left(&preview.object, &view.place, note),
                        theme.diff_note,
                    ),
                    None => Line::styled(
                        nothing_to_revert(&preview.object, &view.place),
                        theme.in_sync,
                    ),
                }])
                .collect(),
            true,
            hint(theme, &[("esc", "back")]),
        ),
        RevertStage::Ready(preview) => (
            preview_lines(theme, preview),
            false,
            hint(theme, &[("y/enter", "revert"), ("esc", "cancel")]),
        ),
        RevertStage::Reverting(preview) => (
            preview_lines(theme, preview),
            false,
            vec![Span::styled(
                format!("reverting… server-side apply as field manager \"{FIELD_MANAGER}\""),
                theme.warning,
            )],
        ),
        RevertStage::Failed(error) => (
            vec![Line::styled(error.clone(), theme.error)],
            true,
            hint(theme, &[("r", "preview again"), ("esc", "back")]),
        ),
    };
    let mut paragraph = Paragraph::new(lines).scroll((view.scroll.min(u16::MAX.into()) as u16, 0));
    if wrap {
        paragraph = paragraph.wrap(Wrap { trim: false });
    }
    frame.render_widget(paragraph, body);
    frame.render_widget(Line::from(hint), footer);
}

/// The diff, then what the diff does not show: the fields removed and the autoscaler note.
fn preview_lines<'a>(theme: &Theme, preview: &'a PreviewShown) -> Vec<Line<'a>> {
    let mut lines: Vec<Line> = preview
        .lines
        .iter()
        .map(|line| {
            let style = match line.kind {
                PreviewKind::Header => theme.header,
                PreviewKind::Hunk => theme.diff_hunk,
                PreviewKind::Context => theme.text,
                PreviewKind::Removed => theme.diff_removed,
                PreviewKind::Added => theme.diff_added,
            };
            Line::styled(crate::text::printable(&line.text).into_owned(), style)
        })
        .collect();
    if !preview.removals.is_empty() {
        lines.push(Line::raw(""));
    }
    for removal in &preview.removals {
        lines.push(Line::styled(
            crate::text::printable(&removal.text).into_owned(),
            theme.diff_removed,
        ));
    }
    lines.extend(preview.kept.iter().map(|kept| kept_line(theme, kept)));
    match &preview.replicas_note {
        Some(note) => lines.push(Line::styled(
            crate::text::printable(note).into_owned(),
            theme.diff_note,
        )),
        None if preview.autoscaled => lines.push(Line::styled(
            "autoscaled: replicas stay with the autoscaler",
            theme.diff_note,
        )),
        None => {}
    }
    lines
}

/// A field the revert leaves as it is live, and why.
fn kept_line<'a>(theme: &Theme, kept: &str) -> Line<'a> {
    Line::styled(crate::text::printable(kept).into_owned(), theme.diff_note)
}

pub(super) fn hint<'a>(theme: &Theme, keys: &[(&'a str, &'a str)]) -> Vec<Span<'a>> {
    let mut spans = Vec::with_capacity(keys.len() * 2);
    for (i, (key, what)) in keys.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme.muted));
        }
        spans.push(Span::styled(*key, theme.status_key));
        spans.push(Span::styled(format!(" {what}"), theme.text));
    }
    spans
}
