//! The status bar, one for a context alone and for several: who is watched and how (the
//! context's watch health, or each context's state after its name), the namespace, then the
//! counts of rows, stuck and drifted workloads and the manifests' problems.
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::fleet::{Parts, state_of};
use super::theme::Theme;
use crate::app::App;
use crate::cluster::watch::WatchHealth;

/// The status bar of `app` (the context whose view is shown), or of the fleet in `parts`:
/// rows and stuck summed over its contexts, drifted counted once per object of each.
pub fn render_status(
    app: &App,
    parts: Option<&Parts<'_>>,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
) {
    let mut spans = vec![Span::styled(" ctx ", theme.status_key)];
    let (rows, stuck, drifted) = match parts {
        Some(Parts { fleet, members }) => {
            for (i, member) in members.iter().enumerate() {
                let (state, bad) = state_of(member);
                let mark = if fleet.focus == Some(i) { "▸" } else { "" };
                spans.push(Span::styled(
                    format!(" {mark}{} ", member.context),
                    theme.status_bar,
                ));
                spans.push(Span::styled(
                    format!("{state} "),
                    if bad { theme.error } else { theme.muted },
                ));
            }
            (
                members.iter().map(|m| m.app.cache.workloads.len()).sum(),
                members.iter().map(|m| m.app.table.stuck).sum(),
                fleet.drifted(),
            )
        }
        None => {
            spans.push(Span::styled(format!(" {} ", app.context), theme.status_bar));
            (
                app.cache.workloads.len(),
                app.table.stuck,
                // Every kind counts; `:drift` lists them.
                app.drifted_count(),
            )
        }
    };
    spans.extend([
        Span::styled(" ns ", theme.status_key),
        Span::styled(format!(" {} ", app.scope.label()), theme.status_bar),
    ]);
    // A context alone says its watch's health here; in a fleet each said it after its name.
    if parts.is_none() {
        let (health, bad) = health_text(app);
        spans.extend([
            Span::styled(" watch ", theme.status_key),
            Span::styled(
                format!(" {health} "),
                if bad { theme.error } else { theme.status_bar },
            ),
        ]);
    }
    let counted = |n: usize, style| if n > 0 { style } else { theme.status_bar };
    spans.extend([
        Span::styled(format!(" rows {rows} "), theme.status_bar),
        Span::styled(format!(" stuck {stuck} "), counted(stuck, theme.stuck)),
        Span::styled(
            format!(" drifted {drifted} "),
            counted(drifted, theme.drifted),
        ),
    ]);
    // The problems `:problems` lists: the manifests of the context shown. A note hides no
    // object: counted apart, not in the warning colour.
    let (notes, problems) = app.problem_counts();
    if problems > 0 {
        spans.push(Span::styled(
            format!(" :problems {problems} "),
            theme.warning,
        ));
    } else if notes > 0 {
        spans.push(Span::styled(
            format!(
                " :problems 0 · {notes} note{} ",
                if notes == 1 { "" } else { "s" }
            ),
            theme.status_bar,
        ));
    }
    if app.readonly {
        spans.push(Span::styled(" readonly ", theme.status_key));
    }
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let fill = usize::from(area.width).saturating_sub(used);
    spans.push(Span::styled(" ".repeat(fill), theme.status_bar));
    frame.render_widget(Line::from(spans), area);
}

fn health_text(app: &App) -> (String, bool) {
    match app.overall_health() {
        WatchHealth::Connected => ("connected".into(), false),
        WatchHealth::Syncing => ("syncing…".into(), false),
        WatchHealth::Reconnecting { since, .. } => {
            let secs = app.now.as_second().saturating_sub(since.as_second()).max(0);
            (format!("reconnecting for {secs}s"), true)
        }
        WatchHealth::Forbidden { namespace, .. } => match namespace {
            Some(ns) => {
                let more = app
                    .namespace_health()
                    .filter(|(_, n, h)| {
                        *n != ns.as_str() && matches!(h, WatchHealth::Forbidden { .. })
                    })
                    .map(|(_, n, _)| n)
                    .collect::<std::collections::BTreeSet<_>>()
                    .len();
                let text = if more == 0 {
                    format!("forbidden in \"{ns}\"")
                } else {
                    format!("forbidden in \"{ns}\" and {more} more")
                };
                (text, true)
            }
            None => ("forbidden".into(), true),
        },
    }
}
