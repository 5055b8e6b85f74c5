//! The Deployment table: only the rows on screen are built, whatever the number of Deployments.
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::format::{age, fit, fitted, gauge};
use super::paint::TablePaint;
use super::theme::Theme;
use crate::app::cache::WorkloadEntry;
use crate::app::{App, DriftSummary};

use crate::cluster::rows::WorkloadKind;
use crate::cluster::watch::{WatchHealth, WatchedKind};
use crate::manifest::ObjectKey;
use crate::rollout::RolloutPhase;

const GAUGE_WIDTH: usize = 10;
/// The namespace column's width (longer names are cut with an ellipsis).
const NAMESPACE_WIDTH: usize = 16;
/// GITOPS: `argo:shop self-heal`, `flux:platform 10m`.
const GITOPS_WIDTH: usize = 22;
/// PHASE's width at least (`paused at partition 2 (1 of 3 u…`).
const PHASE_WIDTH: usize = 32;
/// CONTEXT at most (longer names are cut with an ellipsis).
const CONTEXT_WIDTH: usize = 16;
/// `deploy`, `sts`, `ds`.
const KIND_WIDTH: usize = 6;
/// Below this inner width the table drops the rollout gauge (the phase says the percentage).
const COMPACT_BELOW: u16 = 110;
/// Below this inner width only NAME, PHASE and DRIFT are left: what is broken, and whether git
/// agrees (the title names the namespace scope).
const NARROW_BELOW: u16 = 60;
/// Below this inner width DRIFT goes too: a name and its phase, cut, are all that is readable.
const NAME_AND_PHASE_BELOW: u16 = 30;

pub fn phase_style(theme: &Theme, phase: &RolloutPhase) -> Style {
    match phase {
        RolloutPhase::Stuck { .. } => theme.stuck,
        RolloutPhase::Paused
        | RolloutPhase::Partitioned { .. }
        | RolloutPhase::WaitingForDelete { .. } => theme.paused,
        RolloutPhase::Progressing => theme.progressing,
        RolloutPhase::Scaling => theme.scaling,
        RolloutPhase::Complete => theme.complete,
    }
}

pub fn drift_cell(theme: &Theme, drift: &DriftSummary) -> Span<'static> {
    match drift {
        DriftSummary::NotComputed => Span::styled("-", theme.muted),
        DriftSummary::InSync => Span::styled("in sync", theme.in_sync),
        DriftSummary::Fields(n) => Span::styled(
            format!("{n} field{}", if *n == 1 { "" } else { "s" }),
            theme.drifted,
        ),
        DriftSummary::Missing => Span::styled("missing", theme.drifted),
        DriftSummary::Unmanaged => Span::styled("unmanaged", theme.unmanaged),
        DriftSummary::Error(_) => Span::styled("error", theme.error),
    }
}

/// Why the rows of a kind in a namespace may be out of date, if they may.
fn stale_note<'a>(app: &'a App, kind: WorkloadKind, namespace: &str) -> Option<&'a str> {
    // While one watcher per namespace stands in for the all-namespaces watch, each has its own
    // (none but after a 403; a look through the few watchers, no key made for each row).
    let apart = app
        .namespace_health()
        .find(|(k, ns, _)| *k == kind && *ns == namespace);
    match apart.map(|(_, _, health)| health) {
        Some(WatchHealth::Forbidden { .. }) => return Some("forbidden"),
        Some(WatchHealth::Reconnecting { .. }) => return Some("reconnecting"),
        _ => {}
    }
    match app.kind_health(WatchedKind::of(kind))? {
        WatchHealth::Reconnecting { .. } => Some("reconnecting"),
        WatchHealth::Forbidden { namespace: ns, .. }
            if ns.as_deref().is_none_or(|n| n == namespace) =>
        {
            Some("forbidden")
        }
        _ => None,
    }
}

/// One row on screen: the app of its context (whose cache, drift and health it shows), its key,
/// and its context's name when the table has a CONTEXT column.
#[derive(Clone, Copy)]
pub struct RowRef<'a> {
    pub app: &'a App,
    pub key: &'a ObjectKey,
    pub context: Option<&'a str>,
}

/// What a table shows: the rows on screen (from `start`), how many pass the filter and how
/// many there are, and which is selected.
pub struct Window<'a> {
    pub rows: Vec<RowRef<'a>>,
    pub start: usize,
    pub shown: usize,
    pub total: usize,
    pub selected: usize,
    /// Some row's namespace is not implied by the title (`-A`, or contexts of several scopes).
    pub namespaces: bool,
    /// Some object names a GitOps owner.
    pub gitops: bool,
    /// Some object's desired state is a Helm release's (the column says which, where no GitOps
    /// owner does).
    pub helm: bool,
    /// The table is empty because no list has ended yet.
    pub loading: bool,
}

/// The title's first part: `workloads(all)[12]`, `deployments(shop)[3/12]`.
pub fn title_count(kind: Option<WorkloadKind>, scope: &str, shown: usize, total: usize) -> String {
    let what = kind.map_or("workloads", WorkloadKind::resource);
    let count = if shown == total {
        format!("{total}")
    } else {
        format!("{shown}/{total}")
    };
    format!(" {what}({scope})[{count}]")
}

/// How many rows of `kind` (every kind: `None`) `app` has, missing ones included.
pub fn total_of(app: &App, kind: Option<WorkloadKind>) -> usize {
    match kind {
        None => app.cache.workloads.len() + app.table.missing.len(),
        Some(kind) => {
            app.cache.workloads.set(kind).len()
                + app
                    .table
                    .missing
                    .iter()
                    .filter(|k| WorkloadKind::of_row(k) == kind)
                    .count()
        }
    }
}

pub fn render_table(app: &App, theme: &Theme, frame: &mut Frame, area: Rect) {
    let kind = app.table.kind;
    let total = total_of(app, kind);
    let shown = app.table.len();
    let title = title_count(kind, app.scope.label(), shown, total);
    // Only the rows that fit are read (the frame's inside less the header).
    let height = usize::from(area.height.saturating_sub(3)).max(1) + 1;
    let start = app.table.offset.min(shown);
    let rows = app
        .table
        .window(start, height)
        .map(|key| RowRef {
            app,
            key,
            context: None,
        })
        .collect();
    let window = Window {
        rows,
        start,
        shown,
        total,
        selected: app.table.selected,
        namespaces: app.scope.as_namespace().is_none(),
        gitops: app.has_gitops_owners(),
        helm: app.has_helm_releases(),
        loading: !app.cache.workloads.is_synced(),
    };
    draw_table(&app.table, theme, frame, area, title, &window);
}

/// The table of `window`'s rows, with the filter, sort and kind of `table`.
pub fn draw_table(
    table: &crate::app::table::TableView,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
    count: String,
    window: &Window,
) {
    // One kind's view (`:deploy`) counts and names that kind; `:workloads` every kind, with a
    // KIND column.
    let kind = table.kind;
    let what = kind.map_or("workloads", WorkloadKind::resource);
    let (shown, total) = (window.shown, window.total);
    let filter = if table.filter.is_empty() {
        String::new()
    } else {
        format!(" </{}>", table.filter)
    };
    let title = Line::from(vec![
        Span::styled(count, theme.title),
        Span::styled(filter, theme.warning),
        Span::styled(format!(" sort:{} ", table.sort.label()), theme.muted),
    ]);
    let block = super::view_block(theme, area, title);

    // An 80-column terminal cannot hold every column at full width: the gauge goes and the
    // counts' header shortens, so that the phase and the drift stay readable.
    let inner_area = block.inner(area);
    let compact = inner_area.width < COMPACT_BELOW;
    let narrow = inner_area.width < NARROW_BELOW;
    let show_drift = inner_area.width >= NAME_AND_PHASE_BELOW;
    let show_ns = window.namespaces && !narrow;
    // CONTEXT, when several contexts are watched (narrow, it gives way to NAME).
    let context_width = (!narrow)
        .then(|| {
            window
                .rows
                .iter()
                .filter_map(|r| r.context)
                .map(|c| c.chars().count())
                .max()
        })
        .flatten()
        .map(|longest| longest.clamp(7, CONTEXT_WIDTH));
    // The KIND column, in `:workloads`; narrow, a StatefulSet's or DaemonSet's name says its
    // kind instead, as kubectl's TYPE/NAME (`sts/ledger-db`), and a Deployment's is plain.
    let kind_column = kind.is_none() && !compact;
    // (Narrow, the name says the kind as when compact.)
    let kind_prefix = kind.is_none() && compact;
    let height = usize::from(inner_area.height.saturating_sub(1));
    let start = window.start;
    let on_screen = &window.rows[..window.rows.len().min(height)];

    // Column widths, known here so that a name or namespace too long for its column is cut with
    // `…` (two long names that differ at the end must not look the same).
    let inner = usize::from(inner_area.width);
    let ns_width = show_ns.then(|| {
        // As wide as the longest namespace on screen, from the header's 9 up to a fifth of the
        // table (16 on a narrow one).
        let longest = on_screen
            .iter()
            .map(|r| r.key.namespace.chars().count())
            .max()
            .unwrap_or(0);
        longest.clamp(9, NAMESPACE_WIDTH.max(inner / 5))
    });
    // The fixed columns after NAME (compact: PHASE fills like NAME).
    let fixed: &[usize] = if narrow {
        if show_drift { &[9] } else { &[] }
    } else if compact {
        &[7, 11, 5, 9]
    } else {
        &[7, 15, GAUGE_WIDTH + 5, PHASE_WIDTH, 5, 9]
    };
    let kind_width = if kind_column { KIND_WIDTH } else { 0 };
    let columns =
        fixed.len() + 1 + usize::from(compact) + usize::from(show_ns) + usize::from(kind_column);
    let left = inner
        .saturating_sub(
            context_width.unwrap_or(0)
                + ns_width.unwrap_or(0)
                + kind_width
                + fixed.iter().sum::<usize>(),
        )
        .saturating_sub(columns.saturating_sub(1) + usize::from(context_width.is_some()));
    // Who reconciles a row (`argo:shop self-heal`), once any object names a GitOps owner, when
    // the names on screen keep their width beside it (the detail and diff say it anyway).
    let longest_name = on_screen
        .iter()
        .map(|r| r.key.name.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(16, 40);
    let gitops =
        !compact && !narrow && (window.gitops || window.helm) && left > longest_name + GITOPS_WIDTH;
    let left = if gitops {
        left - GITOPS_WIDTH - 1
    } else {
        left
    };
    // Compact: NAME shares what is left with PHASE. Else NAME takes what its longest name on
    // screen needs (at least 16) and PHASE the rest, for the pods' reasons.
    let (name_width, phase_width) = if compact {
        (left / 2, left - left / 2)
    } else {
        let longest = on_screen
            .iter()
            .map(|r| r.key.name.chars().count())
            .max()
            .unwrap_or(0);
        let name = longest.clamp(16, left.max(16));
        (name, PHASE_WIDTH + left.saturating_sub(name))
    };
    let cols = Columns {
        context: context_width,
        namespace: ns_width,
        kind: kind_column,
        kind_prefix,
        gitops,
        name: name_width.max(1),
        phase: phase_width.max(1),
        narrow,
        drift: show_drift,
    };
    let gitops_label = match (window.gitops, window.helm) {
        (true, true) => "GITOPS/HELM",
        (false, true) => "HELM",
        _ => "GITOPS",
    };
    let header = header_of(&cols, compact, gitops_label);
    let widths = widths_of(&cols, compact);
    let mut table = TablePaint::new(
        frame.buffer_mut(),
        area,
        block,
        &widths,
        &header,
        theme.header,
    );
    for (i, r) in on_screen.iter().enumerate() {
        let selected = start + i == window.selected;
        let context = cols.context.zip(r.context).map(|(w, c)| fit(c, w));
        match r.app.cache.workloads.get(r.key) {
            Some(entry) => paint_row(
                &mut table, r.app, theme, entry, &cols, compact, selected, context,
            ),
            None => paint_missing_row(
                &mut table, r.app, theme, r.key, &cols, compact, selected, context,
            ),
        }
    }
    if shown == 0 {
        let text = empty_text(total, window.loading, what);
        empty_table_note(frame, inner_area, &text, theme);
    }
}

/// What an empty table says: loading, nothing of `what`, or nothing the filter matches.
fn empty_text(total: usize, loading: bool, what: &str) -> String {
    if total > 0 {
        format!(
            "no {} matches the filter (esc clears it)",
            what.trim_end_matches('s')
        )
    } else if loading {
        "loading…".to_owned()
    } else {
        format!("no {what}")
    }
}

/// The table's column names for `cols` (GITOPS, when shown, named `gitops`, before DRIFT).
fn header_of(cols: &Columns, compact: bool, gitops: &'static str) -> Vec<&'static str> {
    let mut header = Vec::with_capacity(9);
    if cols.context.is_some() {
        header.push("CONTEXT");
    }
    if cols.namespace.is_some() {
        header.push("NAMESPACE");
    }
    if cols.kind {
        header.push("KIND");
    }
    if cols.narrow {
        header.extend(["NAME", "PHASE"]);
        if cols.drift {
            header.push("DRIFT");
        }
    } else {
        header.extend(["NAME", "DESIRED"]);
        if compact {
            header.push("RDY/UPD/AVL");
        } else {
            header.extend(["READY/UPD/AVAIL", "ROLLOUT"]);
        }
        header.extend(["PHASE", "AGE", "DRIFT"]);
    }
    // Before DRIFT, which stays the last column.
    if cols.gitops {
        header.insert(header.len() - 1, gitops);
    }
    header
}

/// The table's column widths for `cols`.
fn widths_of(cols: &Columns, compact: bool) -> Vec<Constraint> {
    let mut widths = Vec::with_capacity(9);
    if let Some(width) = cols.context {
        widths.push(Constraint::Length(width as u16));
    }
    if let Some(ns) = cols.namespace {
        widths.push(Constraint::Length(ns as u16));
    }
    if cols.kind {
        widths.push(Constraint::Length(KIND_WIDTH as u16));
    }
    if cols.narrow {
        widths.extend([Constraint::Fill(1), Constraint::Fill(1)]);
        if cols.drift {
            widths.push(Constraint::Length(9));
        }
    } else if compact {
        widths.extend([
            Constraint::Fill(1),
            Constraint::Length(7),
            Constraint::Length(11),
            Constraint::Fill(1),
            Constraint::Length(5),
            Constraint::Length(9),
        ]);
    } else {
        widths.extend([
            Constraint::Length(cols.name as u16),
            Constraint::Length(7),
            Constraint::Length(15),
            Constraint::Length(GAUGE_WIDTH as u16 + 5),
            Constraint::Length(cols.phase as u16),
            Constraint::Length(5),
            Constraint::Length(9),
        ]);
        if cols.gitops {
            widths.insert(widths.len() - 1, Constraint::Length(GITOPS_WIDTH as u16));
        }
    }
    widths
}

/// The widths the text of a row is cut to: the namespace column (when shown) and NAME; and
/// whether the KIND column is shown.
struct Columns {
    /// The CONTEXT column's width, when shown.
    context: Option<usize>,
    namespace: Option<usize>,
    kind: bool,
    /// No KIND column but several kinds: the name says it (`sts/…`).
    kind_prefix: bool,
    /// The GITOPS column is shown.
    gitops: bool,
    phase: usize,
    name: usize,
    /// Only NAME, PHASE and (when `drift`) DRIFT.
    narrow: bool,
    drift: bool,
}

/// An object in git and not in the cluster: its name and the drift cell, nothing live.
#[allow(clippy::too_many_arguments)]
fn paint_missing_row(
    table: &mut TablePaint,
    app: &App,
    theme: &Theme,
    key: &ObjectKey,
    cols: &Columns,
    compact: bool,
    selected: bool,
    context: Option<String>,
) {
    let style = if selected { theme.selected } else { theme.text };
    let Some(mut row) = table.row(style) else {
        return;
    };
    let shown = shown_name(key, cols);
    let name = fitted(&shown, cols.name);
    let absent = Span::styled("not in the cluster", theme.muted);
    let drift = drift_cell(theme, app.drift_of(key));
    if cols.narrow {
        row.text(&name);
        row.span(&absent);
        if cols.drift {
            row.span(&drift);
        }
        return;
    }
    if let Some(context) = context {
        row.text(&context);
    }
    if let Some(width) = cols.namespace {
        row.text(&fitted(&key.namespace, width));
    }
    if cols.kind {
        row.text(WorkloadKind::of_row(key).short());
    }
    row.text(&name);
    // DESIRED, READY/UPD/AVAIL and (not compact) ROLLOUT.
    row.empty();
    row.empty();
    if !compact {
        row.empty();
    }
    row.span(&absent);
    // AGE, and GITOPS when shown.
    row.empty();
    if cols.gitops {
        row.empty();
    }
    row.span(&drift);
}

#[allow(clippy::too_many_arguments)]
fn paint_row(
    table: &mut TablePaint,
    app: &App,
    theme: &Theme,
    e: &WorkloadEntry,
    cols: &Columns,
    compact: bool,
    selected: bool,
    context: Option<String>,
) {
    let r = &e.row;
    let phase = &e.rollout.phase;
    let pstyle = phase_style(theme, phase);
    let mut phase_text = phase.label();
    let mut row_style = theme.text;
    // Why its pods are not ready, in short (a stuck row's reason says it already).
    if let Some(why) = e.pods_why.as_deref()
        && !matches!(phase, RolloutPhase::Stuck { .. })
    {
        phase_text = format!("{phase_text}: {}", short_why(why));
    }
    if let Some(note) = stale_note(app, r.kind(), &r.key.namespace) {
        phase_text = format!("{note}: {phase_text}");
        row_style = theme.stale;
    }
    let pct = || format!("{:>3}%", (e.rollout.ratio * 100.0).round() as u32);
    // Without the gauge, a rollout under way says how far it is in its phase.
    if compact && e.rollout.ratio < 1.0 {
        phase_text = format!("{} {phase_text}", pct().trim_start());
    }
    let style = if selected { theme.selected } else { row_style };
    let Some(mut row) = table.row(style) else {
        return;
    };
    let shown = shown_name(&r.key, cols);
    let name = fitted(&shown, cols.name);
    let phase_cell = Span::styled(fitted(&phase_text, cols.phase), pstyle);
    let drift = drift_cell(theme, app.drift_of(&r.key));
    if cols.narrow {
        row.text(&name);
        row.span(&phase_cell);
        if cols.drift {
            row.span(&drift);
        }
        return;
    }
    if let Some(context) = context {
        row.text(&context);
    }
    if let Some(width) = cols.namespace {
        row.text(&fitted(&r.key.namespace, width));
    }
    if cols.kind {
        row.text(r.kind().short());
    }
    row.text(&name);
    row.format(format_args!("{:>7}", r.desired));
    row.format(format_args!("{}/{}/{}", r.ready, r.updated, r.available));
    if !compact {
        let (filled, empty) = gauge(e.rollout.ratio, GAUGE_WIDTH);
        row.spans(&[
            Span::styled(filled, pstyle),
            Span::styled(empty, theme.gauge_empty),
            Span::styled(pct(), theme.muted),
        ]);
    }
    row.span(&phase_cell);
    row.format(format_args!("{:>5}", age(r.last_change, app.now)));
    if cols.gitops {
        row.span(&gitops_cell(app, theme, &r.key, &r.owners));
    }
    row.span(&drift);
}

/// The GITOPS cell: each owner's marker, warning-coloured when it undoes live changes; with none,
/// the Helm release whose manifest is the row's desired state (`helm:web rev 3`; `rev 3→git`
/// while git's render of its chart differs from the release: a `helm upgrade` is pending).
fn gitops_cell(
    app: &App,
    theme: &Theme,
    key: &ObjectKey,
    owners: &[crate::gitops::Owner],
) -> Span<'static> {
    let mut reverts = false;
    let text: Vec<String> = owners
        .iter()
        .filter(|owner| app.claims(owner))
        .map(|owner| match app.reconcilers.get(owner) {
            Some(r) => {
                reverts |= r.policy.as_ref().is_ok_and(|p| p.reverts_changes());
                r.marker()
            }
            None => owner.short(),
        })
        .collect();
    let style = if reverts { theme.warning } else { theme.muted };
    if text.is_empty()
        && let Some(release) = app
            .manifests
            .as_ref()
            .and_then(|index| index.get(key)?.helm.clone())
    {
        let pending = if app.pending_upgrades.contains(key) {
            "→git"
        } else {
            ""
        };
        let shown = format!("helm:{} rev {}{pending}", release.name, release.revision);
        return Span::styled(fit(&shown, GITOPS_WIDTH), theme.muted);
    }
    Span::styled(fit(&text.join(", "), GITOPS_WIDTH), style)
}

/// The NAME cell: the name, or `sts/name` / `ds/name` when no KIND column says the kind.
fn shown_name<'k>(key: &'k ObjectKey, cols: &Columns) -> std::borrow::Cow<'k, str> {
    let kind = WorkloadKind::of_row(key);
    if cols.kind_prefix && kind != WorkloadKind::Deployment {
        format!("{}/{}", kind.short(), key.name).into()
    } else {
        key.name.as_ref().into()
    }
}

/// A why line without its "pods": `2 Pending: Insufficient memory` for `2 pods Pending: …`.
fn short_why(why: &str) -> String {
    let parts: Vec<String> = why
        .split("; ")
        .map(|part| match part.split_once(' ') {
            Some((count, rest)) if count.bytes().all(|b| b.is_ascii_digit()) => {
                let rest = rest
                    .strip_prefix("pods ")
                    .or_else(|| rest.strip_prefix("pod "))
                    .unwrap_or(rest);
                format!("{count} {rest}")
            }
            _ => part.to_owned(),
        })
        .collect();
    parts.join("; ")
}

/// `text` (muted) on the first line below the header of an empty table whose frame's inside is
/// `inner`.
pub(super) fn empty_table_note(frame: &mut Frame, inner: Rect, text: &str, theme: &Theme) {
    if inner.height < 2 {
        return;
    }
    // A long note (why nothing was read) wraps over the empty table instead of being cut.
    let area = Rect {
        x: inner.x.saturating_add(1).min(inner.right()),
        y: inner.y + 1,
        width: inner.width.saturating_sub(2),
        height: inner.height - 1,
    };
    frame.render_widget(
        ratatui::widgets::Paragraph::new(Span::styled(text, theme.muted))
            .wrap(ratatui::widgets::Wrap { trim: true }),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::short_why;

    #[test]
    fn a_short_why_drops_only_the_counted_pods() {
        assert_eq!(
            short_why(
                "2 pods Pending: 1 node(s) didn't match pod affinity; 1 pod CrashLoopBackOff"
            ),
            "2 Pending: 1 node(s) didn't match pod affinity; 1 CrashLoopBackOff"
        );
    }
}
