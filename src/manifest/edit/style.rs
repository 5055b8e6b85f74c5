//! The layout habits of one document, read from its text, so that inserted lines look like
//! their neighbours: the indentation step, whether lists are indented under their key, and how
//! far an item's content sits after its `-`.

/// How a document lays out its block maps and lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Spaces per nesting level of a map (2 or 4 in practice).
    pub indent: usize,
    /// `key:\n  - a` (true) or `key:\n- a` (false).
    pub indent_sequences: bool,
    /// Columns from a `-` to the item's content (`- a` is 2, `-   a` is 4).
    pub dash_width: usize,
}

impl Default for Style {
    /// kubectl's own output: two spaces, lists not indented under their key.
    fn default() -> Self {
        Style {
            indent: 2,
            indent_sequences: false,
            dash_width: 2,
        }
    }
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_content(line: &str) -> bool {
    let trimmed = line.trim();
    !trimmed.is_empty() && !trimmed.starts_with('#')
}

impl Style {
    /// Reads the habits of `text`; what the text does not show keeps the default.
    pub fn of(text: &str) -> Style {
        let mut style = Style::default();
        let lines: Vec<&str> = text.lines().filter(|line| is_content(line)).collect();
        let mut indent = None;
        let mut sequences = None;
        let mut dash = None;
        for pair in lines.windows(2) {
            let [above, line] = pair else { continue };
            let (outer, inner) = (indentation(above), indentation(line));
            let opens_block = above.trim_end().ends_with(':');
            let body = line.trim_start();
            let is_item = body.starts_with("- ") || body == "-";
            if opens_block && is_item && sequences.is_none() {
                sequences = Some(inner > outer);
            }
            if opens_block && !is_item && inner > outer && indent.is_none() {
                indent = Some(inner - outer);
            }
            if is_item && dash.is_none() {
                let after = &body[1..];
                let width = 1 + after.len() - after.trim_start_matches(' ').len();
                if width >= 2 && !after.trim().is_empty() {
                    dash = Some(width);
                }
            }
        }
        if let Some(indent) = indent {
            style.indent = indent;
        }
        if let Some(sequences) = sequences {
            style.indent_sequences = sequences;
        }
        if let Some(dash) = dash {
            style.dash_width = dash;
        }
        style
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_four_space_indented_lists() {
        let text = "spec:\n    containers:\n        -   name: web\n            image: a\n";
        assert_eq!(
            Style::of(text),
            Style {
                indent: 4,
                indent_sequences: true,
                dash_width: 4
            }
        );
    }

    #[test]
    fn reads_kubectl_style() {
        let text = "# c\nspec:\n  containers:\n  - name: web\n    image: a\n";
        assert_eq!(Style::of(text), Style::default());
    }
}
