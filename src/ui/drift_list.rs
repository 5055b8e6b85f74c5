//! The `:drift` view: every object of any kind that is drifted, missing or in error — KIND,
//! NAMESPACE, NAME, DRIFT, the newest MANAGER of its drifted fields and its AGE.
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};

/// Below this inner width only the name (with its kind) and the drift are shown.
const NARROW_BELOW: u16 = 60;

use super::format::{age, fit};
use super::paint::TablePaint;
use super::table::drift_cell;
use super::theme::Theme;
use crate::app::App;
use crate::app::drift_list::DriftListView;

/// One row of the list: the object's drift, the app of its context (its owners, the time), and
/// its context's name when the list has a CONTEXT column.
pub struct Listed<'a> {
    pub app: &'a App,
    pub context: Option<&'a str>,
    pub row: crate::app::drift_list::DriftRow,
}

pub fn render_drift_list(
    app: &App,
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
    view: &DriftListView,
) {
    let rows: Vec<Listed> = app
        .drift_rows()
        .into_iter()
        .map(|row| Listed {
            app,
            context: None,
            row,
        })
        .collect();
    let empty = match app.manifests.as_deref() {
        None => "loading the manifests…".to_owned(),
        // Nothing read is not "all in sync": say so, and why.
        Some(index) => match index.nothing_read() {
            Some(why) => format!("no manifest was read under {}: {why}", index.root.display()),
            None => "every object of the manifests is in sync".to_owned(),
        },
    };
    draw_drift_list(theme, frame, area, app.scope.label(), &rows, view, &empty);
}

/// The list of `rows` (a CONTEXT column when they name their context); `empty` says why there
/// is none.
pub fn draw_drift_list(
    theme: &Theme,
    frame: &mut Frame,
    area: Rect,
    scope: &str,
    rows: &[Listed],
    view: &DriftListView,
    empty: &str,
) {
    let title = Line::from(vec![Span::styled(
        format!(" drift({scope})[{}] ", rows.len()),
        theme.title,
    )]);
    let block = super::view_block(theme, area, title);
    let inner_area = block.inner(area);
    let inner = usize::from(inner_area.width);
    // KIND and NAMESPACE as wide as their longest value (within reason); NAME and MANAGER share
    // what is left.
    let longest =
        |f: &dyn Fn(&crate::app::drift_list::DriftRow) -> usize, floor: usize, cap: usize| {
            rows.iter()
                .map(|l| f(&l.row))
                .max()
                .unwrap_or(0)
                .clamp(floor, cap)
        };
    let kind_width = longest(&|r| r.key.kind.chars().count(), 4, 24);
    let ns_width = longest(&|r| r.key.namespace.chars().count(), 9, 20);
    let context_width = rows
        .iter()
        .filter_map(|l| l.context)
        .map(|c| c.chars().count())
        .max()
        .map(|w| w.clamp(7, 16));
    let fixed = context_width.map_or(0, |w| w + 1) + kind_width + ns_width + 9 + 8 + 5;
    let left = inner.saturating_sub(fixed);
    let name_width = (left * 3 / 5).max(8);
    let manager_width = left.saturating_sub(name_width).max(7);
    let height = usize::from(inner_area.height.saturating_sub(1));
    // Narrow, the name (its kind after it) and the drift: which object, and how far from git.
    let narrow = inner_area.width < NARROW_BELOW;
    let narrow_name = inner.saturating_sub(10);
    let start = view.scroll.min(rows.len());
    let end = (start + height).min(rows.len());
    let (header, widths) = if narrow {
        (
            vec!["NAME", "DRIFT"],
            vec![
                Constraint::Length(narrow_name as u16),
                Constraint::Length(9),
            ],
        )
    } else {
        let context = context_width.map(|w| ("CONTEXT", w));
        let columns = context.into_iter().chain([
            ("KIND", kind_width),
            ("NAMESPACE", ns_width),
            ("NAME", name_width),
            ("DRIFT", 9),
            ("MANAGER", manager_width),
            ("AGE", 5),
        ]);
        columns
            .map(|(name, width)| (name, Constraint::Length(width as u16)))
            .unzip()
    };
    let mut table = TablePaint::new(
        frame.buffer_mut(),
        area,
        block,
        &widths,
        &header,
        theme.header,
    );
    for (i, listed) in rows[start..end].iter().enumerate() {
        let (app, row) = (listed.app, &listed.row);
        let Some(mut cells) = table.row(theme.list_row(start + i == view.cursor)) else {
            break;
        };
        if narrow {
            cells.text(&fit(
                &format!("{} ({})", row.key.name, row.key.kind),
                narrow_name,
            ));
            cells.span(&drift_cell(theme, &row.summary));
            continue;
        }
        let (manager, when) = match &row.newest {
            Some(a) => (
                a.manager.clone().unwrap_or_else(|| "unknown".into()),
                age(a.time.as_deref().and_then(|t| t.parse().ok()), app.now),
            ),
            None => ("-".into(), "-".into()),
        };
        // Who will act on it: `kubectl · argo:shop self-heal`.
        let markers: Vec<String> = app
            .reconcilers_of(&row.key)
            .iter()
            .map(crate::gitops::Reconciler::marker)
            .collect();
        let manager = if markers.is_empty() {
            manager
        } else {
            format!("{manager} · {}", markers.join(", "))
        };
        let namespace = if row.key.namespace.is_empty() {
            "-"
        } else {
            row.key.namespace.as_str()
        };
        if let Some(width) = context_width {
            match listed.context {
                Some(context) => cells.text(&fit(context, width)),
                None => cells.empty(),
            }
        }
        cells.text(&fit(&row.key.kind, kind_width));
        cells.text(&fit(namespace, ns_width));
        cells.text(&fit(&row.key.name, name_width));
        cells.span(&drift_cell(theme, &row.summary));
        cells.text(&fit(&manager, manager_width));
        cells.text(&when);
    }
    if rows.is_empty() {
        let text = empty;
        super::table::empty_table_note(frame, inner_area, text, theme);
    }
}
