//! The detail view of one Deployment: summary, conditions, ReplicaSet revisions (with what
//! changed), pods, recent events. One scrollable list of lines.
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::format::{age, fit, gauge};
use super::table::{drift_cell, phase_style};
use super::theme::Theme;
use crate::app::App;
use crate::app::detail::detail;
use crate::cluster::rows::{KindFacts, WorkloadKind};
use crate::cluster::watch::{WatchHealth, WatchedKind};
use crate::manifest::ObjectKey;
use crate::rollout::RolloutPhase;
use crate::rollout::workloads::StatefulUpdate;

pub fn render_detail(
    app: &App,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
    key: &ObjectKey,
    scroll: u16,
) {
    let title = Span::styled(
        format!(
            " {} {}/{} ",
            key.kind.to_lowercase(),
            key.namespace,
            key.name
        ),
        theme.title,
    );
    let block = super::view_block(theme, area, title);
    let (lines, selected) = match detail(&app.cache, key) {
        Some(d) => detail_lines(app, theme, &d),
        None => (
            vec![Line::styled(
                format!(
                    "this {} is gone (deleted, or not in the watched namespaces) — esc goes back",
                    key.kind
                ),
                theme.warning,
            )],
            None,
        ),
    };
    let scroll = keep_in_sight(app, scroll, selected, block.inner(area).height);
    app.pod_cursor.shown.set(scroll);
    frame.render_widget(Paragraph::new(lines).block(block).scroll((scroll, 0)), area);
}

/// The scroll that shows the selected pod's line, while the cursor is pinned (moved by `j`/`k`).
fn keep_in_sight(app: &App, scroll: u16, selected: Option<usize>, rows: u16) -> u16 {
    let Some(line) = selected
        .filter(|_| app.pod_cursor.pinned)
        .and_then(|l| u16::try_from(l).ok())
    else {
        return scroll;
    };
    if line < scroll {
        line
    } else if line >= scroll.saturating_add(rows) {
        line.saturating_sub(rows.saturating_sub(1))
    } else {
        scroll
    }
}

fn section<'a>(theme: &Theme, title: &str) -> Line<'a> {
    Line::styled(title.to_string(), theme.header)
}

fn health_line<'a>(app: &App, theme: &Theme, kind: WatchedKind) -> Option<Line<'a>> {
    match app.kind_health(kind)? {
        WatchHealth::Forbidden { message, .. } => Some(Line::styled(
            format!("  {} forbidden: {message}", kind.plural()),
            theme.error,
        )),
        WatchHealth::Reconnecting { .. } => Some(Line::styled(
            format!("  {} watch reconnecting: may be out of date", kind.plural()),
            theme.warning,
        )),
        _ => None,
    }
}

/// The lines of the detail, and which of them is the selected pod's.
fn detail_lines<'a>(
    app: &App,
    theme: &Theme,
    d: &crate::app::detail::Detail<'_>,
) -> (Vec<Line<'a>>, Option<usize>) {
    let mut lines = summary_lines(app, theme, d);
    push_conditions(&mut lines, app, theme, d);
    push_revisions(&mut lines, app, theme, d);
    let selected = push_pods(&mut lines, app, theme, d);
    push_events(&mut lines, app, theme, d);
    (lines, selected)
}

/// The detail's head: phase and gauge, replicas, revision, generation and drift, images, how
/// it updates, why it is stuck or not ready.
fn summary_lines<'a>(
    app: &App,
    theme: &Theme,
    d: &crate::app::detail::Detail<'_>,
) -> Vec<Line<'a>> {
    let e = d.deployment;
    let r = &e.row;
    let pstyle = phase_style(theme, &e.rollout.phase);
    let (filled, empty) = gauge(e.rollout.ratio, 20);
    let mut lines = vec![
        Line::from(vec![
            Span::styled("phase    ", theme.muted),
            Span::styled(e.rollout.phase.label(), pstyle),
            Span::raw("   "),
            Span::styled(filled, pstyle),
            Span::styled(empty, theme.gauge_empty),
            Span::styled(format!(" {:.0}%", e.rollout.ratio * 100.0), theme.muted),
        ]),
        Line::from(vec![
            Span::styled("replicas ", theme.muted),
            Span::raw(format!(
                "desired {}  ready {}  updated {}  available {}  total {}",
                r.desired, r.ready, r.updated, r.available, r.replicas
            )),
        ]),
        Line::from(vec![
            Span::styled("revision ", theme.muted),
            // A StatefulSet's or DaemonSet's: its update revision's number.
            Span::raw(
                r.revision
                    .or_else(|| d.revisions.iter().find(|v| v.current)?.rs.revision)
                    .map_or("-".to_string(), |v| v.to_string()),
            ),
            Span::styled("   generation ", theme.muted),
            Span::raw(format!(
                "{} (observed {})",
                r.generation, r.observed_generation
            )),
            Span::styled("   drift ", theme.muted),
            drift_cell(theme, app.drift_of(&r.key)),
        ]),
        Line::from(vec![
            Span::styled("images   ", theme.muted),
            Span::raw(r.images.join(", ")),
        ]),
    ];
    if let Some(strategy) = strategy_line(&r.facts) {
        lines.push(Line::from(vec![
            Span::styled("update   ", theme.muted),
            Span::raw(strategy),
        ]));
    }
    if let RolloutPhase::Stuck { message, .. } = &e.rollout.phase
        && !message.is_empty()
    {
        lines.push(Line::styled(format!("stuck    {message}"), theme.stuck));
    }
    if let Some(why) = crate::app::detail::why_not_ready(r.desired, r.ready, &d.pods) {
        lines.push(Line::from(vec![
            Span::styled("why      ", theme.muted),
            Span::styled(why, theme.warning),
        ]));
    }
    lines
}

/// The workload's conditions.
fn push_conditions<'a>(
    lines: &mut Vec<Line<'a>>,
    app: &App,
    theme: &Theme,
    d: &crate::app::detail::Detail<'_>,
) {
    let now = app.now;
    let r = &d.deployment.row;
    lines.push(Line::raw(""));
    lines.push(section(theme, "CONDITIONS"));
    for c in &r.conditions {
        let style = if c.status == "True" {
            theme.text
        } else {
            theme.warning
        };
        lines.push(Line::styled(
            format!(
                "  {:<15} {:<6} {:<26} {:>5}  {}",
                c.kind,
                c.status,
                fit(&c.reason, 26),
                age(c.last_update, now),
                c.message
            ),
            style,
        ));
    }
    if r.conditions.is_empty() {
        lines.push(Line::styled("  none reported yet", theme.muted));
    }
}

/// Its revisions (ReplicaSets or ControllerRevisions), newest first, with what changed.
fn push_revisions<'a>(
    lines: &mut Vec<Line<'a>>,
    app: &App,
    theme: &Theme,
    d: &crate::app::detail::Detail<'_>,
) {
    let now = app.now;
    let r = &d.deployment.row;
    lines.push(Line::raw(""));
    let (revisions_of, revisions_kind) = match r.kind() {
        WorkloadKind::Deployment => ("ReplicaSets", WatchedKind::ReplicaSets),
        _ => ("ControllerRevisions", WatchedKind::ControllerRevisions),
    };
    lines.push(section(
        theme,
        &format!("REVISIONS ({revisions_of}, newest first)"),
    ));
    lines.extend(health_line(app, theme, revisions_kind));
    // Name columns as wide as the longest name listed (up to their old fixed widths), so that
    // images, reasons and messages stay on an 80-column screen.
    let rs_width = column_width(d.revisions.iter().map(|rev| rev.rs.key.name.as_ref()), 36);
    for rev in &d.revisions {
        let rs = rev.rs;
        let current = rev.current;
        let marker = if current { "▶" } else { " " };
        let style = if current { theme.text } else { theme.muted };
        lines.push(Line::styled(
            format!(
                " {marker}#{:<3} {:<rs_width$} {:>3} desired {:>3} ready {:>5}  {}",
                rs.revision.map_or("?".to_string(), |v| v.to_string()),
                fit(&rs.key.name, rs_width),
                rev.desired,
                rev.ready,
                age(rs.created, now),
                rev.images.join(", ")
            ),
            style,
        ));
        for change in &rev.changes {
            lines.push(Line::styled(format!("         {change}"), theme.warning));
        }
    }
    if d.revisions.is_empty() {
        lines.push(Line::styled(format!("  no {revisions_of}"), theme.muted));
    }
}

/// Its pods, with why each is not running well; the line of the selected pod.
fn push_pods<'a>(
    lines: &mut Vec<Line<'a>>,
    app: &App,
    theme: &Theme,
    d: &crate::app::detail::Detail<'_>,
) -> Option<usize> {
    let now = app.now;
    lines.push(Line::raw(""));
    lines.push(section(theme, "PODS"));
    lines.extend(health_line(app, theme, WatchedKind::Pods));
    let pod_width = column_width(d.pods.iter().map(|p| p.key.name.as_ref()), 44);
    let reason_width = column_width(d.pods.iter().map(|p| p.reason.as_deref().unwrap_or("")), 26);
    let cursor = app
        .pod_cursor
        .position(d.pods.iter().map(|p| p.key.name.as_ref()));
    let mut selected = None;
    for (i, p) in d.pods.iter().enumerate() {
        let bad = p.reason.is_some() || p.phase != "Running" || p.ready_containers < p.containers;
        let style = if p.reason.is_some() {
            theme.error
        } else if bad {
            theme.warning
        } else {
            theme.text
        };
        let style = if i == cursor {
            selected = Some(lines.len());
            theme.selected
        } else {
            style
        };
        let phase = if p.deleting {
            "Terminating"
        } else {
            p.phase.as_str()
        };
        lines.push(Line::styled(
            format!(
                "  {:<pod_width$} {:>2}/{:<2} {:<11} {:<reason_width$} {:>3} restarts {:>5}  {}",
                fit(&p.key.name, pod_width),
                p.ready_containers,
                p.containers,
                phase,
                fit(p.reason.as_deref().unwrap_or(""), reason_width),
                p.restarts,
                age(p.created, now),
                p.node.as_deref().unwrap_or("")
            ),
            style,
        ));
        // Why it is not running well, in the scheduler's or the kubelet's words.
        if bad && let Some(why) = &p.why {
            lines.push(Line::styled(format!("    ↳ {why}"), theme.warning));
        }
        if let Some(exit) = p.last_exit.as_ref().filter(|_| bad) {
            let reason = exit
                .reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default();
            lines.push(Line::styled(
                format!(
                    "    ↳ last exit {}{reason} of {}, {} ago",
                    exit.exit_code,
                    exit.container,
                    age(exit.finished, now)
                ),
                theme.warning,
            ));
        }
    }
    if d.pods.is_empty() {
        lines.push(Line::styled("  no pods", theme.muted));
    }
    selected
}

/// Its events, newest first.
fn push_events<'a>(
    lines: &mut Vec<Line<'a>>,
    app: &App,
    theme: &Theme,
    d: &crate::app::detail::Detail<'_>,
) {
    let now = app.now;
    lines.push(Line::raw(""));
    lines.push(section(theme, "EVENTS (newest first)"));
    lines.extend(health_line(app, theme, WatchedKind::Events));
    let objects: Vec<String> = d
        .events
        .iter()
        .map(|ev| format!("{}/{}", ev.involved_kind.to_lowercase(), ev.involved_name))
        .collect();
    let reason_width = column_width(d.events.iter().map(|ev| ev.reason.as_str()), 22);
    let object_width = column_width(objects.iter().map(String::as_str), 34);
    for (ev, object) in d.events.iter().zip(&objects) {
        let style = if ev.warning {
            theme.warning
        } else {
            theme.text
        };
        let count = if ev.count > 1 {
            format!(" (x{})", ev.count)
        } else {
            String::new()
        };
        lines.push(Line::styled(
            format!(
                "  {:>5} {:<8} {:<reason_width$} {:<object_width$} {}{count}",
                age(ev.last_seen, now),
                if ev.warning { "Warning" } else { "Normal" },
                fit(&ev.reason, reason_width),
                fit(object, object_width),
                ev.message
            ),
            style,
        ));
    }
    if d.events.is_empty() {
        lines.push(Line::styled("  no recent events", theme.muted));
    }
}

/// How a StatefulSet or DaemonSet rolls out, and where it stands (none for a Deployment, whose
/// ReplicaSets say it).
fn strategy_line(facts: &KindFacts) -> Option<String> {
    match facts {
        KindFacts::Deployment => None,
        KindFacts::StatefulSet(f) => {
            let strategy = match &f.update {
                StatefulUpdate::OnDelete => "OnDelete".to_owned(),
                StatefulUpdate::RollingUpdate {
                    partition,
                    max_unavailable,
                } => format!(
                    "RollingUpdate partition {partition} maxUnavailable {}",
                    max_unavailable.as_deref().unwrap_or("1")
                ),
            };
            let revisions = if f.current_revision == f.update_revision {
                format!("revision {}", f.current_revision)
            } else {
                format!(
                    "current {} ({} pods) → update {} ({} pods)",
                    f.current_revision, f.current, f.update_revision, f.updated
                )
            };
            Some(format!("{strategy}   {revisions}"))
        }
        KindFacts::DaemonSet(f) => {
            let strategy = if f.on_delete {
                "OnDelete".to_owned()
            } else {
                format!(
                    "RollingUpdate maxUnavailable {} maxSurge {}",
                    f.max_unavailable.as_deref().unwrap_or("1"),
                    f.max_surge.as_deref().unwrap_or("0")
                )
            };
            let misscheduled = if f.misscheduled > 0 {
                format!("   misscheduled on {} nodes", f.misscheduled)
            } else {
                String::new()
            };
            Some(format!("{strategy}{misscheduled}"))
        }
    }
}

/// The width of a name column: its longest entry, at most `max` (longer ones are cut).
fn column_width<'a>(names: impl Iterator<Item = &'a str>, max: usize) -> usize {
    names.map(|n| n.chars().count()).max().unwrap_or(0).min(max)
}
