//! A ratatui `Buffer` as an SVG picture of a terminal: each cell on a monospace grid, with its
//! foreground, background and modifiers (bold, dim, italic, underlined, reversed, crossed out).
//! Text is placed character by character, so a font whose advance is not exactly the grid's
//! still lines up; box-drawing lines and block elements (borders, the rollout gauge) are drawn
//! as lines and rectangles, so they join whatever font the viewer has.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

/// Width and height of one cell, in px, at [`FONT_SIZE`].
const CELL_W: f64 = 8.4;
const CELL_H: f64 = 18.0;
const FONT_SIZE: f64 = 14.0;
/// From a row's top to the text's baseline.
const BASELINE: f64 = 13.0;
/// Around the grid, inside the window; the title bar above it.
const PAD: f64 = 14.0;
const BAR: f64 = 30.0;

const FONTS: &str = "ui-monospace, 'SFMono-Regular', 'SF Mono', 'Cascadia Mono', 'JetBrains Mono', \
    'DejaVu Sans Mono', Menlo, Consolas, 'Liberation Mono', monospace";

/// The window's background (the terminal's default background) and its default foreground.
const BACKGROUND: &str = "#1b1e24";
const FOREGROUND: &str = "#d5d9e0";

/// The 16 terminal colours, as a dark terminal theme shows them (black … white, then bright).
const PALETTE: [&str; 16] = [
    "#15171c", "#e5636f", "#8cc570", "#e3b95f", "#5fa8f0", "#c27ae0", "#4fbac7", "#aab2bf",
    "#5f6672", "#ff8a94", "#a9dd8c", "#f2cf85", "#86c1ff", "#d9a0f2", "#7dd6e0", "#f4f6f8",
];

fn palette_index(color: Color) -> Option<usize> {
    Some(match color {
        Color::Black => 0,
        Color::Red => 1,
        Color::Green => 2,
        Color::Yellow => 3,
        Color::Blue => 4,
        Color::Magenta => 5,
        Color::Cyan => 6,
        Color::Gray => 7,
        Color::DarkGray => 8,
        Color::LightRed => 9,
        Color::LightGreen => 10,
        Color::LightYellow => 11,
        Color::LightBlue => 12,
        Color::LightMagenta => 13,
        Color::LightCyan => 14,
        Color::White => 15,
        Color::Indexed(i) if i < 16 => usize::from(i),
        _ => return None,
    })
}

/// The colour as `#rrggbb`; `None` for the terminal's default (`Reset`).
fn hex(color: Color) -> Option<String> {
    if let Some(i) = palette_index(color) {
        return Some(PALETTE[i].to_owned());
    }
    match color {
        Color::Reset => None,
        Color::Rgb(r, g, b) => Some(format!("#{r:02x}{g:02x}{b:02x}")),
        Color::Indexed(i) if i >= 232 => {
            let level = 8 + 10 * (i - 232);
            Some(format!("#{level:02x}{level:02x}{level:02x}"))
        }
        Color::Indexed(i) => {
            // The 6×6×6 cube of 16–231.
            let i = i - 16;
            let step = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            Some(format!(
                "#{:02x}{:02x}{:02x}",
                step(i / 36),
                step((i / 6) % 6),
                step(i % 6)
            ))
        }
        _ => None,
    }
}

/// How one cell is painted, after `REVERSED` is applied.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Paint {
    fg: String,
    bg: Option<String>,
    bold: bool,
    dim: bool,
    italic: bool,
    underlined: bool,
    crossed: bool,
    hidden: bool,
}

fn paint(fg: Color, bg: Color, modifier: Modifier) -> Paint {
    let (mut fg, mut bg) = (hex(fg), hex(bg));
    if modifier.contains(Modifier::REVERSED) {
        let front = bg.clone().unwrap_or_else(|| BACKGROUND.to_owned());
        bg = Some(fg.unwrap_or_else(|| FOREGROUND.to_owned()));
        fg = Some(front);
    }
    Paint {
        fg: fg.unwrap_or_else(|| FOREGROUND.to_owned()),
        bg,
        bold: modifier.contains(Modifier::BOLD),
        dim: modifier.contains(Modifier::DIM),
        italic: modifier.contains(Modifier::ITALIC),
        underlined: modifier.contains(Modifier::UNDERLINED),
        crossed: modifier.contains(Modifier::CROSSED_OUT),
        hidden: modifier.contains(Modifier::HIDDEN),
    }
}

/// The arms of a light box-drawing character: left, right, up, down.
fn box_arms(symbol: &str) -> Option<[bool; 4]> {
    Some(match symbol {
        "─" => [true, true, false, false],
        "│" => [false, false, true, true],
        "┌" | "╭" => [false, true, false, true],
        "┐" | "╮" => [true, false, false, true],
        "└" | "╰" => [false, true, true, false],
        "┘" | "╯" => [true, false, true, false],
        "├" => [false, true, true, true],
        "┤" => [true, false, true, true],
        "┬" => [true, true, false, true],
        "┴" => [true, true, true, false],
        "┼" => [true, true, true, true],
        "╴" => [true, false, false, false],
        "╶" => [false, true, false, false],
        "╵" => [false, false, true, false],
        "╷" => [false, false, false, true],
        _ => return None,
    })
}

/// The share of the cell's width a left block element fills (`█` whole, `▌` half, …).
fn block_width(symbol: &str) -> Option<f64> {
    Some(match symbol {
        "█" => 1.0,
        "▉" => 7.0 / 8.0,
        "▊" => 6.0 / 8.0,
        "▋" => 5.0 / 8.0,
        "▌" => 4.0 / 8.0,
        "▍" => 3.0 / 8.0,
        "▎" => 2.0 / 8.0,
        "▏" => 1.0 / 8.0,
        _ => return None,
    })
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Not allowed in XML 1.0; the app never draws them, but a picture must not break.
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

fn num(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

/// `buffer` as an SVG document: a dark window titled `title`, with `description` as its
/// accessible text.
pub fn render(buffer: &Buffer, title: &str, description: &str) -> String {
    let area = buffer.area;
    let (cols, rows) = (area.width, area.height);
    let width = f64::from(cols) * CELL_W + 2.0 * PAD;
    let height = f64::from(rows) * CELL_H + 2.0 * PAD + BAR;
    let left = PAD;
    let top = BAR + PAD;
    let cell = |x: u16, y: u16| &buffer[(area.x + x, area.y + y)];

    let mut backgrounds = String::new();
    let mut blocks = String::new();
    let mut text = String::new();
    // Line segments of box-drawing characters by colour: horizontal (y, x1, x2), vertical
    // (x, y1, y2); joined where they meet before drawing.
    let mut horizontal: BTreeMap<String, Vec<(f64, f64, f64)>> = BTreeMap::new();
    let mut vertical: BTreeMap<String, Vec<(f64, f64, f64)>> = BTreeMap::new();
    // Each paint of the text, numbered in order of first use: a CSS class.
    let mut classes: BTreeMap<Paint, usize> = BTreeMap::new();

    for y in 0..rows {
        let y0 = top + f64::from(y) * CELL_H;
        // Backgrounds: runs of one colour.
        let mut x = 0;
        while x < cols {
            let c = cell(x, y);
            let p = paint(c.fg, c.bg, c.modifier);
            let start = x;
            while x < cols && {
                let n = cell(x, y);
                paint(n.fg, n.bg, n.modifier).bg == p.bg
            } {
                x += 1;
            }
            if let Some(bg) = p.bg {
                let _ = writeln!(
                    backgrounds,
                    r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{bg}"/>"#,
                    num(left + f64::from(start) * CELL_W),
                    num(y0),
                    num(f64::from(x - start) * CELL_W),
                    num(CELL_H),
                );
            }
        }
        // Glyphs: each word (a run of one paint without a space) is one <text> placed on the
        // grid, so columns line up whatever the font's advance; its paint is a class.
        let mut word: Option<(Paint, f64, String)> = None;
        let mut flush = |word: &mut Option<(Paint, f64, String)>, text: &mut String| {
            let Some((p, x0, chars)) = word.take() else {
                return;
            };
            if p.hidden {
                return;
            }
            let next = classes.len();
            let class = *classes.entry(p).or_insert(next);
            let _ = writeln!(
                text,
                r#"<text class="p{class}" x="{}" y="{}">{}</text>"#,
                num(x0),
                num(y0 + BASELINE),
                escape(&chars),
            );
        };
        for x in 0..cols {
            let c = cell(x, y);
            let symbol = c.symbol();
            let p = paint(c.fg, c.bg, c.modifier);
            let x0 = left + f64::from(x) * CELL_W;
            if let Some([l, r, u, d]) = box_arms(symbol) {
                flush(&mut word, &mut text);
                let (cx, cy) = (x0 + CELL_W / 2.0, y0 + CELL_H / 2.0);
                if l || r {
                    let x1 = if l { x0 } else { cx };
                    let x2 = if r { x0 + CELL_W } else { cx };
                    horizontal
                        .entry(p.fg.clone())
                        .or_default()
                        .push((cy, x1, x2));
                }
                if u || d {
                    let y1 = if u { y0 } else { cy };
                    let y2 = if d { y0 + CELL_H } else { cy };
                    vertical.entry(p.fg.clone()).or_default().push((cx, y1, y2));
                }
                continue;
            }
            if let Some(share) = block_width(symbol) {
                flush(&mut word, &mut text);
                let _ = writeln!(
                    blocks,
                    r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{}"/>"#,
                    num(x0),
                    num(y0 + 2.0),
                    num(CELL_W * share),
                    num(CELL_H - 4.0),
                    p.fg
                );
                continue;
            }
            if symbol.trim().is_empty() {
                flush(&mut word, &mut text);
                continue;
            }
            match &mut word {
                Some((q, _, chars)) if *q == p => chars.push_str(symbol),
                _ => {
                    flush(&mut word, &mut text);
                    word = Some((p, x0, symbol.to_owned()));
                }
            }
        }
        flush(&mut word, &mut text);
    }

    let mut lines = String::new();
    for (colour, mut segments) in horizontal {
        segments.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        for (y, x1, x2) in join(segments) {
            let _ = writeln!(
                lines,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{colour}"/>"#,
                num(x1),
                num(y),
                num(x2),
                num(y)
            );
        }
    }
    for (colour, mut segments) in vertical {
        segments.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        for (x, y1, y2) in join(segments) {
            let _ = writeln!(
                lines,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{colour}"/>"#,
                num(x),
                num(y1),
                num(x),
                num(y2)
            );
        }
    }

    let mut svg = String::new();
    let (w, h) = (num(width), num(height));
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-labelledby="title desc">"#
    );
    let _ = writeln!(svg, "<title id=\"title\">{}</title>", escape(title));
    let _ = writeln!(svg, "<desc id=\"desc\">{}</desc>", escape(description));
    let _ = writeln!(
        svg,
        "<style>\ntext {{ font-family: {FONTS}; font-size: {}px; }}\nline {{ stroke-width: 1.2; stroke-linecap: square; }}",
        num(FONT_SIZE)
    );
    let mut by_number: Vec<(&Paint, &usize)> = classes.iter().collect();
    by_number.sort_by_key(|(_, n)| **n);
    for (p, n) in by_number {
        let _ = writeln!(svg, ".p{n} {{ {} }}", css(p));
    }
    svg.push_str("</style>\n");
    let _ = writeln!(
        svg,
        r##"<rect width="{w}" height="{h}" rx="9" fill="{BACKGROUND}" stroke="#3a3f4a"/>"##
    );
    // The title bar: three dots and the title, as a terminal window's.
    for (i, colour) in ["#ff5f57", "#febc2e", "#28c840"].iter().enumerate() {
        let _ = writeln!(
            svg,
            r#"<circle cx="{}" cy="{}" r="6" fill="{colour}"/>"#,
            num(PAD + 6.0 + 20.0 * i as f64),
            num(BAR / 2.0 + 2.0)
        );
    }
    let _ = writeln!(
        svg,
        r##"<text x="{}" y="{}" fill="#8b929e" text-anchor="middle">{}</text>"##,
        num(width / 2.0),
        num(BAR / 2.0 + 6.5),
        escape(title)
    );
    svg.push_str(&backgrounds);
    svg.push_str(&blocks);
    svg.push_str(&lines);
    svg.push_str(&text);
    svg.push_str("</svg>\n");
    svg
}

/// The CSS of a paint's text.
fn css(p: &Paint) -> String {
    let mut css = format!("fill: {};", p.fg);
    if p.bold {
        css.push_str(" font-weight: bold;");
    }
    if p.italic {
        css.push_str(" font-style: italic;");
    }
    if p.dim {
        css.push_str(" fill-opacity: 0.6;");
    }
    match (p.underlined, p.crossed) {
        (true, true) => css.push_str(" text-decoration: underline line-through;"),
        (true, false) => css.push_str(" text-decoration: underline;"),
        (false, true) => css.push_str(" text-decoration: line-through;"),
        (false, false) => {}
    }
    css
}

/// Joins sorted collinear segments `(at, from, to)` that touch.
fn join(segments: Vec<(f64, f64, f64)>) -> Vec<(f64, f64, f64)> {
    let mut out: Vec<(f64, f64, f64)> = Vec::new();
    for (at, from, to) in segments {
        match out.last_mut() {
            Some(last) if last.0 == at && (from - last.2).abs() < 1e-6 => last.2 = to,
            _ => out.push((at, from, to)),
        }
    }
    out
}
