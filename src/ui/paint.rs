//! Every table kdrift draws (the live view's, `:drift`'s, `:changes`', the pickers'), painted
//! straight into the frame's buffer, laid out as ratatui's `Table` lays out a
//! stateless one (its block, a header line, one line per row, columns one cell apart), without
//! building its `Row`s, `Cell`s and `Text`s. Those cost four or five allocations a cell: ~2,300
//! allocations and as many frees for a 200x50 table, most of a frame's work while nothing
//! changes — and each such frame comes after ten quiet seconds, cold, when the allocator must
//! first sort what the frames before it freed.
//!
//! A cell painted as a span is drawn as the `Table` draws a `Cell` of that span (a cell's and a
//! text's default style change nothing; a left-aligned line of one span is drawn as the span);
//! [`RowPaint::text`] keeps the first line of a string, as `Cell::from(String)` shows it.
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::widgets::{Block, Widget};

/// A table being painted: its columns (`x` from the table's left edge, and width) and the line
/// its next row goes on.
pub struct TablePaint<'b> {
    buf: &'b mut Buffer,
    columns: Vec<Rect>,
    rows: Rect,
    next_y: u16,
    /// Where [`RowPaint::format`] writes, kept from row to row.
    scratch: String,
}

impl<'b> TablePaint<'b> {
    /// Draws `block` over `area` and the `header` (its line filled with `header_style`) on the
    /// block's first inner line; rows go below it.
    pub fn new(
        buf: &'b mut Buffer,
        area: Rect,
        block: Block<'_>,
        widths: &[Constraint],
        header: &[&str],
        header_style: Style,
    ) -> TablePaint<'b> {
        let inner = block.inner(area);
        block.render(area, buf);
        let mut table = TablePaint {
            buf,
            columns: Vec::new(),
            rows: Rect::default(),
            next_y: 0,
            scratch: String::new(),
        };
        if inner.is_empty() {
            return table;
        }
        // As `Table::get_column_widths` lays them out with no selection column (its width 0).
        let columns_area = Rect::new(0, 0, inner.width, 1);
        table.columns = Layout::horizontal(widths.iter().copied())
            .flex(Flex::Start)
            .spacing(1)
            .split(columns_area)
            .iter()
            .map(|c| Rect::new(c.x, 0, c.width, 1))
            .collect();
        let header_area = Rect { height: 1, ..inner };
        table.buf.set_style(header_area, header_style);
        let mut row = RowPaint {
            buf: table.buf,
            x: inner.x,
            y: inner.y,
            columns: &table.columns,
            next: 0,
            scratch: &mut table.scratch,
        };
        for name in header {
            row.text(name);
        }
        table.rows = Rect {
            y: inner.y + 1,
            height: inner.height - 1,
            ..inner
        };
        table.next_y = table.rows.y;
        table
    }

    /// The next row, its line filled with `style`; `None` below the table's last line.
    pub fn row(&mut self, style: Style) -> Option<RowPaint<'_>> {
        if self.next_y >= self.rows.bottom() {
            return None;
        }
        let line = Rect {
            y: self.next_y,
            height: 1,
            ..self.rows
        };
        self.buf.set_style(line, style);
        self.next_y += 1;
        Some(RowPaint {
            buf: self.buf,
            x: line.x,
            y: line.y,
            columns: &self.columns,
            next: 0,
            scratch: &mut self.scratch,
        })
    }
}

/// One row's cells, painted left to right, each cut to its column.
pub struct RowPaint<'p> {
    buf: &'p mut Buffer,
    x: u16,
    y: u16,
    columns: &'p [Rect],
    next: usize,
    scratch: &'p mut String,
}

impl RowPaint<'_> {
    /// The next cell: `span`.
    pub fn span(&mut self, span: &Span<'_>) {
        if let Some(area) = self.cell() {
            span.render(area, self.buf);
        }
    }

    /// The next cell: the first line of `text`, unstyled.
    pub fn text(&mut self, text: &str) {
        match text.lines().next() {
            Some(first) => self.span(&Span::raw(first)),
            None => self.empty(),
        }
    }

    /// The next cell: `args` formatted (into a string the table keeps for the next).
    pub fn format(&mut self, args: std::fmt::Arguments<'_>) {
        use std::fmt::Write;
        let mut text = std::mem::take(self.scratch);
        text.clear();
        let _ = text.write_fmt(args);
        self.text(&text);
        *self.scratch = text;
    }

    /// The next cell: `spans` one after the other, as a line of them is drawn (a `Line` would
    /// copy each owned span to draw it).
    pub fn spans(&mut self, spans: &[Span<'_>]) {
        let Some(mut area) = self.cell() else {
            return;
        };
        for span in spans {
            if area.is_empty() {
                break;
            }
            span.render(area, self.buf);
            let width = u16::try_from(span.width()).unwrap_or(u16::MAX);
            area = Rect {
                x: area.x.saturating_add(width),
                width: area.width.saturating_sub(width),
                ..area
            };
        }
    }

    /// The next cell, left empty.
    pub fn empty(&mut self) {
        self.next += 1;
    }

    fn cell(&mut self) -> Option<Rect> {
        let column = self.columns.get(self.next)?;
        self.next += 1;
        Some(Rect::new(self.x + column.x, self.y, column.width, 1))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Modifier};
    use ratatui::text::{Line, Text};
    use ratatui::widgets::{Borders, Cell, Row, Table};

    /// The same table drawn by ratatui's `Table` and painted here: every cell of the buffer
    /// alike, for texts cut by their columns, wide characters, a line of several spans, empty
    /// cells, a string of two lines, rows past the bottom, and areas too small for the block.
    #[test]
    fn a_painted_table_is_the_table_ratatui_draws() {
        let widths = [
            Constraint::Length(6),
            Constraint::Fill(1),
            Constraint::Length(4),
            Constraint::Length(9),
        ];
        let header = ["NAME", "PHASE", "AGE", "DRIFT"];
        let selected = Style::default().bg(Color::Blue);
        let muted = Style::default().fg(Color::DarkGray);
        let header_style = Style::default().add_modifier(Modifier::BOLD);
        let block = || Block::default().borders(Borders::ALL).title(" t ");
        let gauge = || {
            vec![
                Span::styled("██▌", Style::default().fg(Color::Green)),
                Span::styled(String::from("··"), muted),
                Span::raw(" 50%"),
            ]
        };
        for (width, height) in [(40, 8), (24, 5), (60, 3), (3, 3), (40, 2), (10, 1), (0, 0)] {
            let area = Rect::new(1, 0, width, height);
            let size = Rect::new(0, 0, width + 2, height.max(1));
            let mut drawn = Buffer::empty(size);
            let rows = vec![
                Row::new(vec![
                    Cell::from("checkout-web"),
                    Cell::from(Span::styled("progressing: 2 Pending", muted)),
                    Cell::from(format!("{:>5}", "12m")),
                    Cell::from(Line::from(gauge())),
                ])
                .style(selected),
                Row::new(vec![
                    Cell::from("cart"),
                    Cell::from(""),
                    Cell::from("两个字"),
                    Cell::from(Span::styled("in sync", muted)),
                ]),
                Row::new(vec![Cell::from(Text::from("a\nb")), Cell::from("x")]),
                Row::new(vec![Cell::from("last")]),
                Row::new(vec![Cell::from("past the bottom")]),
            ];
            Widget::render(
                Table::new(rows, widths)
                    .header(Row::new(header).style(header_style))
                    .block(block())
                    .column_spacing(1),
                area,
                &mut drawn,
            );
            let mut painted = Buffer::empty(size);
            let mut table =
                TablePaint::new(&mut painted, area, block(), &widths, &header, header_style);
            if let Some(mut row) = table.row(selected) {
                row.text("checkout-web");
                row.span(&Span::styled("progressing: 2 Pending", muted));
                row.format(format_args!("{:>5}", "12m"));
                row.spans(&gauge());
            }
            if let Some(mut row) = table.row(Style::default()) {
                row.text("cart");
                row.empty();
                row.text("两个字");
                row.span(&Span::styled("in sync", muted));
            }
            if let Some(mut row) = table.row(Style::default()) {
                row.text("a\nb");
                row.text("x");
            }
            for text in ["last", "past the bottom"] {
                if let Some(mut row) = table.row(Style::default()) {
                    row.text(text);
                }
            }
            assert_eq!(painted, drawn, "{width}x{height}");
        }
    }
}
