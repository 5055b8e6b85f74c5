//! The `u` rollback view: "planning…", then the plan's lines (the fields that change, where the
//! bad values came from, the commit's diff and the server's dry run, coloured as diffs) and the
//! confirmation hint; or why there is no rollback.
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::revert::hint;
use super::theme::Theme;
use crate::app::rollback::{RollbackStage, RollbackView};

pub fn render_rollback(theme: &Theme, frame: &mut Frame, area: Rect, view: &RollbackView) {
    let block = super::view_block(
        theme,
        area,
        Line::from(vec![Span::styled(
            format!(" roll back {} ", super::format::object_title(&view.key)),
            theme.title,
        )]),
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [body, footer] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
    let plan = |lines: &[String]| -> Vec<Line<'static>> {
        lines.iter().map(|text| plan_line(theme, text)).collect()
    };
    let (lines, hint): (Vec<Line>, Vec<Span>) = match &view.stage {
        RollbackStage::Planning => (
            vec![Line::styled(
                "planning… the revisions read, the commit and the server's dry run prepared (nothing is changed yet)",
                theme.muted,
            )],
            hint(theme, &[("esc", "cancel")]),
        ),
        RollbackStage::Ready {
            lines,
            nothing: true,
            ..
        } => (plan(lines), hint(theme, &[("esc", "back")])),
        RollbackStage::Ready { lines, .. } => (
            plan(lines),
            hint(theme, &[("y/enter", "roll back"), ("esc", "cancel")]),
        ),
        RollbackStage::RollingBack { lines } => (
            plan(lines),
            vec![Span::styled("rolling back…", theme.warning)],
        ),
        RollbackStage::Failed(error) => (
            vec![Line::styled(
                crate::text::printable(error).into_owned(),
                theme.error,
            )],
            hint(theme, &[("esc", "back")]),
        ),
    };
    let paragraph = Paragraph::new(lines).scroll((view.scroll.min(u16::MAX.into()) as u16, 0));
    frame.render_widget(paragraph, body);
    frame.render_widget(Line::from(hint), footer);
}

/// One line of the plan, coloured as a diff line where it is one.
fn plan_line(theme: &Theme, text: &str) -> Line<'static> {
    let style = if text.starts_with("+++") || text.starts_with("---") {
        theme.header
    } else if text.starts_with("@@") {
        theme.diff_hunk
    } else if text.starts_with('+') {
        theme.diff_added
    } else if text.starts_with('-') {
        theme.diff_removed
    } else {
        theme.text
    };
    Line::styled(crate::text::printable(text).into_owned(), style)
}
