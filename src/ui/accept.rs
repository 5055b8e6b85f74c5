//! The `a` accept view: where the file is and where the commit goes, the drifted fields with
//! checkboxes (manifest value → live value, manager, age), and below them the exact file diff
//! that `enter` writes.
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::Theme;
use crate::app::App;
use crate::app::accept::{AcceptContent, AcceptForm, AcceptView, Preview};
use crate::app::drift::note_text;
use crate::drift::report::short_value;

/// From this many rows the form has blank lines between its parts.
const SPACED_FROM: usize = 8;

/// `shared`: the other contexts watched whose manifest of the object is read from a file the
/// accept writes (said under the header).
pub fn render_accept(
    app: &App,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
    view: &AcceptView,
    shared: &[&str],
) {
    let key = &view.key;
    let mut title = vec![Span::styled(
        format!(" accept {} ", super::format::object_title(key)),
        theme.title,
    )];
    if let AcceptContent::Ready(form) = &view.content
        && form.committing
    {
        title.push(Span::styled(
            format!(
                " committing: waiting for git and its hooks (stopped after {} s)… ",
                crate::git::timeout().as_secs()
            ),
            theme.warning,
        ));
    }
    let block = super::view_block(theme, area, Line::from(title));
    let height = usize::from(block.inner(area).height);
    let lines = match &view.content {
        AcceptContent::Loading => vec![Line::styled(
            "fetching the live object and reading the manifest…",
            theme.muted,
        )],
        AcceptContent::Ready(form) => {
            let mut lines = form_lines(app, theme, form, height);
            if !shared.is_empty() {
                let names = shared.join(", ");
                lines.insert(
                    1,
                    Line::styled(
                        format!(
                            "this file also describes {} in {names}: their desired state changes too (c on the table compares the clusters)",
                            super::format::object_title(key)
                        ),
                        theme.warning,
                    ),
                );
            }
            lines
        }
    };
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn form_lines<'a>(app: &App, theme: &Theme, form: &'a AcceptForm, height: usize) -> Vec<Line<'a>> {
    // On a short screen the blank separators would take the rows of the fields.
    let spaced = height >= SPACED_FROM;
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("{}:{}", form.shown, form.line), theme.header),
        Span::styled("  →  ", theme.muted),
        Span::styled(form.target.clone(), theme.text),
    ])];
    if let Some(warning) = &form.warning {
        lines.push(Line::styled(warning.clone(), theme.warning));
    }
    // A chart's accept: where the values come from, which value maps to which field, the proof.
    for note in form.chart.iter().flatten() {
        lines.push(Line::styled(note.clone(), theme.muted));
    }
    if spaced {
        lines.push(Line::raw(""));
    }
    // Two lines a field: the path and who changed it when, then manifest value → live value
    // (values can be long: an env entry, a resources block).
    for (at, field) in form.fields.iter().enumerate() {
        let item = &field.item;
        let mark = if field.checked { "[x]" } else { "[ ]" };
        let (cursor, style) = if at == form.cursor {
            ("▸", theme.selected)
        } else {
            (" ", theme.text)
        };
        // Paths are long: who changed it goes with the values, which are short, so that it
        // stays on screen at 80 columns.
        lines.push(Line::styled(
            format!("{cursor} {mark} {}", item.path),
            style,
        ));
        lines.push(Line::from(vec![
            Span::styled(
                format!(
                    "      {} → {}",
                    short_value(item.manifest.as_ref()),
                    short_value(item.live.as_ref())
                ),
                style,
            ),
            Span::styled(
                format!("  {}", note_text(item.class, &item.attribution, app.now)),
                theme.diff_note,
            ),
        ]));
    }
    if spaced {
        lines.push(Line::raw(""));
    }
    match &form.preview {
        Preview::Nothing => lines.push(Line::styled(
            "nothing checked: nothing will be written (space checks a field)",
            theme.muted,
        )),
        Preview::Refused(why) => lines.push(Line::styled(why.clone(), theme.error)),
        Preview::Proving => lines.push(Line::styled(
            "proving the accept by rendering the chart with helm…",
            theme.muted,
        )),
        Preview::Edit(edit) if edit.is_noop() => lines.push(Line::styled(
            "the file already says what is live: nothing to write",
            theme.muted,
        )),
        Preview::Edit(_) | Preview::Files(_) => {
            let what = if form.commits {
                "enter writes and commits:"
            } else {
                "enter writes:"
            };
            lines.push(Line::styled(what, theme.muted));
            let room = height.saturating_sub(lines.len());
            let diff = form.diff_text();
            let left = diff.lines().count().saturating_sub(form.scroll);
            // What does not fit is said, so that a change below the fold is not missed.
            let shown = if left > room {
                room.saturating_sub(1)
            } else {
                room
            };
            for text in diff.lines().skip(form.scroll).take(shown) {
                let style = if text.starts_with("+++") || text.starts_with("---") {
                    theme.header
                } else if text.starts_with('+') {
                    theme.diff_added
                } else if text.starts_with('-') {
                    theme.diff_removed
                } else if text.starts_with("@@") {
                    theme.diff_hunk
                } else {
                    theme.text
                };
                lines.push(Line::styled(
                    crate::text::printable(text).into_owned(),
                    style,
                ));
            }
            if left > shown {
                lines.push(Line::styled(
                    format!("… {} more lines (pgdn)", left - shown),
                    theme.muted,
                ));
            }
        }
    }
    lines
}
