//! The fleet's compare view: one object across the contexts watched, worded as `kdrift compare`
//! prints it ([`crate::drift::fleet::comparison_lines`]), filled in as each cluster answers.
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::Theme;
use crate::app::compare::CompareView;
use crate::drift::fleet::LineKind;

pub fn render_compare(view: &CompareView, theme: &Theme, frame: &mut Frame, area: Rect) {
    let lines = view.lines(jiff::Timestamp::now());
    let answered = view
        .columns
        .iter()
        .filter(|(_, c)| !matches!(c, crate::app::compare::Column::Reading))
        .count();
    let state = match view.differ() {
        _ if !view.complete() => format!("reading {answered} of {}…", view.columns.len()),
        Some(0) => "the same".to_owned(),
        Some(1) => "1 field differs".to_owned(),
        Some(n) => format!("{n} fields differ"),
        None => "not compared".to_owned(),
    };
    let title = Span::styled(
        format!(
            " compare {} · {} contexts · {state} ",
            view.key,
            view.columns.len()
        ),
        theme.title,
    );
    let block = super::view_block(theme, area, title);
    let inner = block.inner(area);
    let room = usize::from(inner.height).max(1);
    let scroll = view.scroll.min(lines.len().saturating_sub(room));
    let shown: Vec<Line> = lines
        .into_iter()
        .skip(scroll)
        .take(room)
        .map(|(kind, text)| {
            let style = match kind {
                LineKind::Context | LineKind::Value | LineKind::Blank => theme.text,
                LineKind::Error => theme.error,
                LineKind::Path => theme.header,
                LineKind::Agrees => theme.muted,
                LineKind::Summary if view.differ().is_some_and(|n| n > 0) => theme.drifted,
                LineKind::Summary => theme.in_sync,
            };
            Line::styled(text, style)
        })
        .collect();
    frame.render_widget(Paragraph::new(shown).block(block), area);
}
