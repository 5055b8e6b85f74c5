//! Several contexts in one view: the fleet's table (a CONTEXT column, rows of every context) and
//! a line per context that cannot be read (the status bar is `super::status`'s). A
//! context's own views (detail, diff, accept…) are drawn as when it is watched alone.
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Paragraph, Wrap};

use super::drift_list::{Listed, draw_drift_list};
use super::table::{RowRef, Window, draw_table, title_count, total_of};
use super::theme::Theme;
use crate::app::App;
use crate::app::fleet::{Fleet, Link, Member};
use crate::cluster::watch::WatchHealth;

/// The fleet's parts of a frame.
pub struct Parts<'a> {
    pub fleet: &'a Fleet,
    pub members: &'a [Member<'a>],
}

/// The fleet's view: the focused context's own view, or the fleet's table with the prompt, help
/// and message of the context keys went to last.
pub fn render_fleet(fleet: &Fleet, members: &[Member<'_>], theme: &Theme, frame: &mut Frame) {
    let Some(last) = members.len().checked_sub(1) else {
        frame.render_widget(
            Paragraph::new("no context watched (q quits)").style(theme.warning),
            frame.area(),
        );
        return;
    };
    let lead = fleet.focus.unwrap_or(fleet.lead).min(last);
    // One context connected looks as it always has alone: its own table and status bar.
    let parts = match members {
        [one] if fleet.alone(1) && *one.link == Link::Connected => None,
        _ => Some(Parts { fleet, members }),
    };
    super::render_with(members[lead].app, theme, frame, parts);
}

/// The other contexts whose manifest of the accepted object is read from a file the accept
/// would write: one repository folder shared by several clusters, so that the accept changes
/// their desired state too.
pub fn sharing_the_accept<'a>(
    parts: &Parts<'a>,
    app: &App,
    view: &crate::app::accept::AcceptView,
) -> Vec<&'a str> {
    let crate::app::accept::AcceptContent::Ready(form) = &view.content else {
        return Vec::new();
    };
    let files = form.written_files();
    parts
        .members
        .iter()
        .filter(|m| !std::ptr::eq(m.app, app))
        .filter(|m| {
            m.app.manifests.as_deref().is_some_and(|index| {
                files
                    .iter()
                    .any(|file| index.describes_from(&view.key, file))
            })
        })
        .map(|m| m.context)
        .collect()
}

/// A context's state in a word, and whether it is bad: its connection, then its watchers'.
pub fn state_of(member: &Member<'_>) -> (&'static str, bool) {
    crate::app::fleet::state_of(member.link, member.app)
}

/// Why a context shows no rows, or only some: its error, said under the table's title.
fn trouble(member: &Member<'_>) -> Option<String> {
    match member.link {
        Link::Unreachable(e) => Some(format!("{}: unreachable: {e}", member.context)),
        Link::Connecting => None,
        Link::Connected => match member.app.overall_health() {
            WatchHealth::Forbidden { namespace, .. } => Some(match namespace {
                Some(ns) => format!("{}: forbidden in \"{ns}\"", member.context),
                None => format!("{}: forbidden", member.context),
            }),
            WatchHealth::Reconnecting { .. } => Some(format!(
                "{}: reconnecting (its rows may be out of date)",
                member.context
            )),
            _ => None,
        },
    }
}

pub fn render_fleet_table(parts: &Parts<'_>, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Parts { fleet, members } = parts;
    let lines: Vec<String> = members.iter().filter_map(trouble).collect();
    let area = if lines.is_empty() || area.height < 6 {
        area
    } else {
        let n = (lines.len() as u16).min(area.height / 3);
        let [top, rest] = Layout::vertical([Constraint::Length(n), Constraint::Min(3)]).areas(area);
        frame.render_widget(
            Paragraph::new(lines.join("\n"))
                .style(theme.error)
                .wrap(Wrap { trim: true }),
            top,
        );
        rest
    };
    let apps: Vec<&App> = members.iter().map(|m| m.app).collect();
    let lead = members[fleet.lead.min(members.len() - 1)].app;
    let kind = lead.table.kind;
    let several = members.len() > 1;
    let shown = crate::app::fleet::len(&apps);
    let total: usize = apps.iter().map(|app| total_of(app, kind)).sum();
    let height = usize::from(area.height.saturating_sub(3)).max(1) + 1;
    let start = fleet.offset.min(shown);
    let window = Window {
        // The rows on screen, as the fleet's refresh before this frame found them.
        rows: fleet
            .window()
            .iter()
            .take(height)
            .filter_map(|(i, key)| {
                Some(RowRef {
                    app: apps.get(*i)?,
                    key,
                    context: several.then_some(members[*i].context),
                })
            })
            .collect(),
        start,
        shown,
        total,
        selected: fleet.selected,
        namespaces: several || apps.iter().any(|a| a.scope.as_namespace().is_none()),
        gitops: apps.iter().any(|a| a.has_gitops_owners()),
        helm: apps.iter().any(|a| a.has_helm_releases()),
        loading: members
            .iter()
            .any(|m| *m.link == Link::Connecting || !m.app.cache.workloads.is_synced()),
    };
    // One scope for all, or `several` when the contexts' namespaces differ.
    let scope = match apps.iter().map(|a| a.scope.label()).collect::<Vec<_>>() {
        labels if labels.windows(2).all(|w| w[0] == w[1]) => labels[0].to_owned(),
        _ => "several".to_owned(),
    };
    let mut title = title_count(kind, &scope, shown, total);
    if several {
        title.push_str(&format!(" contexts[{}]", members.len()));
    }
    draw_table(&lead.table, theme, frame, area, title, &window);
}

/// `:drift` over every context: the list's rows with their context.
pub fn render_fleet_drift_list(parts: &Parts<'_>, theme: &Theme, frame: &mut Frame, area: Rect) {
    let Parts { fleet, members } = parts;
    let Some(view) = &fleet.drift_list else {
        return;
    };
    let apps: Vec<&App> = members.iter().map(|m| m.app).collect();
    let rows: Vec<Listed> = crate::app::fleet::drift_rows(&apps)
        .into_iter()
        .map(|(i, row)| Listed {
            app: apps[i],
            context: Some(members[i].context),
            row,
        })
        .collect();
    let loading = members
        .iter()
        .filter(|m| m.app.manifests.is_none() && !matches!(m.link, Link::Unreachable(_)))
        .map(|m| m.context)
        .collect::<Vec<_>>();
    let empty = if loading.is_empty() {
        "every object of the manifests is in sync, in every context".to_owned()
    } else {
        format!("loading the manifests of {}…", loading.join(", "))
    };
    draw_drift_list(theme, frame, area, "all contexts", &rows, view, &empty);
}
