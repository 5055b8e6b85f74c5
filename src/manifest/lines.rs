//! Finding the line of a field in a YAML document's text, for diffs, reports and accept.
//!
//! serde's YAML values carry no positions, so this reads the block structure of the text by
//! indentation. Flow collections (`{a: 1}`, `[1, 2]`) are not entered: a path inside one resolves
//! to the line of the flow collection, which is where an editor should look anyway.

/// One step of a path into a document: a mapping key or a sequence position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    Field(&'a str),
    Item(usize),
}

/// A significant line: its number (0-based within the text), the column of its dash when it
/// starts a sequence item, and the column and name of the mapping key it starts, if any.
#[derive(Debug)]
struct Line<'a> {
    number: usize,
    dash: Option<usize>,
    key: Option<(usize, &'a str)>,
    indent: usize,
}

#[cfg(test)]
thread_local! {
    /// Lines read by [`scan`] on this thread: tests count reading, not time.
    pub(crate) static SCANNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn scan(text: &str) -> Vec<Line<'_>> {
    #[cfg(test)]
    SCANNED.with(|n| n.set(n.get() + text.lines().count()));
    let mut lines = Vec::new();
    for (number, raw) in text.lines().enumerate() {
        let trimmed = raw.trim_start_matches(' ');
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with("---") {
            continue;
        }
        let indent = raw.len() - trimmed.len();
        let (dash, content, content_col) = match trimmed.strip_prefix('-') {
            Some(after) if after.is_empty() || after.starts_with(' ') => {
                let rest = after.trim_start_matches(' ');
                (Some(indent), rest, raw.len() - rest.len())
            }
            _ => (None, trimmed, indent),
        };
        lines.push(Line {
            number,
            dash,
            key: key_of(content).map(|key| (content_col, key)),
            indent,
        });
    }
    lines
}

/// The mapping key a line starts with (`name: web`, `"a.b/c": x`), unquoted.
fn key_of(content: &str) -> Option<&str> {
    if let Some(rest) = content
        .strip_prefix('"')
        .or_else(|| content.strip_prefix('\''))
    {
        let quote = content.as_bytes().first().copied().map(char::from)?;
        let end = rest.find(quote)?;
        return rest[end + 1..]
            .trim_start()
            .starts_with(':')
            .then(|| &rest[..end]);
    }
    if content.starts_with(['{', '[', '&', '*', '!', '|', '>']) {
        return None;
    }
    let colon = content
        .find(": ")
        .or_else(|| content.strip_suffix(':').map(str::len))?;
    Some(content[..colon].trim_end())
}

/// `line` (1-based) if `text` has it, else the last line of `text`: a YAML parser names the line
/// after the last one when a file without a final line break ends inside a node.
pub fn line_in(text: &str, line: usize) -> usize {
    line.clamp(1, text.split('\n').count())
}

/// The 0-based line number of the node at `path` in `text`, or of its deepest ancestor found.
pub fn line_of(text: &str, path: &[Step<'_>]) -> usize {
    Outline::new(text).line_of(path)
}

/// A document's block structure, read once: a file that asks for many lines of one document
/// (each item of a `kind: List`, each bad value of a Secret) reads its text once, not once a line.
pub struct Outline<'t> {
    lines: Vec<Line<'t>>,
}

impl<'t> Outline<'t> {
    pub fn new(text: &'t str) -> Outline<'t> {
        Outline { lines: scan(text) }
    }

    /// See [`line_of`].
    pub fn line_of(&self, path: &[Step<'_>]) -> usize {
        self.locate(path).0
    }

    /// The line of each of the first `count` items of the sequence at `path`, in one pass: for
    /// each the line [`line_of`] gives `path` and `Item(i)` (the sequence's own, or its nearest
    /// ancestor's, when an item is not found, say in flow style).
    pub fn item_lines(&self, path: &[Step<'_>], count: usize) -> Vec<usize> {
        let (found, range) = self.locate(path);
        let starts = range.map_or_else(Vec::new, |range| self.item_starts(range));
        (0..count)
            .map(|i| starts.get(i).copied().unwrap_or(found))
            .collect()
    }

    /// The lines of each item of the block sequence at `path`, as ranges of 0-based line numbers:
    /// from its dash to the next item's (the last to the first line after the sequence, or
    /// `total`, the text's line count). Empty when `path` is not a block sequence.
    pub fn item_spans(&self, path: &[Step<'_>], total: usize) -> Vec<std::ops::Range<usize>> {
        let (_, Some(range)) = self.locate(path) else {
            return Vec::new();
        };
        let after = self.lines.get(range.end).map_or(total, |line| line.number);
        let starts = self.item_starts(range);
        let ends = starts.iter().skip(1).copied().chain([after]);
        starts.iter().zip(ends).map(|(&a, b)| a..b).collect()
    }

    /// The line numbers of the items' dashes in the block of `range` (a block sequence's lines):
    /// the dashes at the column of its first line's. Empty when it does not start with a dash.
    fn item_starts(&self, range: std::ops::Range<usize>) -> Vec<usize> {
        let block = &self.lines[range];
        let Some(col) = block.first().and_then(|first| first.dash) else {
            return Vec::new();
        };
        block
            .iter()
            .filter(|line| line.dash == Some(col))
            .map(|line| line.number)
            .collect()
    }

    /// The line of the mapping at `path` (or its nearest ancestor's), and of each of its keys, in
    /// one pass: for `name`, what [`line_of`] gives `path` and `Field(name)` (the first line when
    /// a key is not in the map).
    pub fn key_lines(
        &self,
        path: &[Step<'_>],
    ) -> (usize, std::collections::HashMap<&'t str, usize>) {
        let (found, range) = self.locate(path);
        let block = range.map_or(&[][..], |range| &self.lines[range]);
        let mut keys = std::collections::HashMap::new();
        if let Some((col, _)) = block.iter().find_map(|line| line.key) {
            for line in block {
                if let Some((at, name)) = line.key
                    && at == col
                {
                    keys.entry(name).or_insert(line.number);
                }
            }
        }
        (found, keys)
    }

    /// The line of the node at `path` (or its deepest ancestor found), and the range of lines
    /// below it when the whole path was found.
    fn locate(&self, path: &[Step<'_>]) -> (usize, Option<std::ops::Range<usize>>) {
        let lines = &self.lines;
        let mut range = 0..lines.len();
        let mut found = lines.first().map_or(0, |line| line.number);
        for step in path {
            let block = &lines[range.clone()];
            let Some(first) = block.first() else {
                return (found, None);
            };
            match *step {
                Step::Field(name) => {
                    // The block's keys sit at the column of its first key.
                    let Some((col, _)) = block.iter().find_map(|line| line.key) else {
                        return (found, None);
                    };
                    let Some(at) = block.iter().position(|line| line.key == Some((col, name)))
                    else {
                        return (found, None);
                    };
                    found = block[at].number;
                    let start = range.start + at + 1;
                    let end = block[at + 1..]
                        .iter()
                        .position(|line| {
                            line.indent < col || (line.indent == col && line.dash.is_none())
                        })
                        .map_or(range.end, |offset| start + offset);
                    range = start..end;
                }
                Step::Item(index) => {
                    let Some(col) = first.dash else {
                        return (found, None);
                    };
                    let starts: Vec<usize> = block
                        .iter()
                        .enumerate()
                        .filter(|(_, line)| line.dash == Some(col))
                        .map(|(at, _)| at)
                        .collect();
                    let Some(&at) = starts.get(index) else {
                        return (found, None);
                    };
                    found = block[at].number;
                    let end = starts
                        .get(index + 1)
                        .map_or(range.end, |&next| range.start + next);
                    // The item's first key sits on its dash line: keep that line in the range.
                    range = range.start + at..end;
                    if block[at].key.is_none() {
                        range.start += 1;
                    }
                }
            }
        }
        (found, Some(range))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Step::{Field, Item};

    const DOC: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: sidecar
        image: busybox
      - name: web
        # the main container
        image: registry.example/web:1.0
        env:
          - name: MODE
            value: prod
        resources: {requests: {cpu: 100m}}
      \"dnsPolicy\": ClusterFirst
";

    #[test]
    fn a_line_past_the_end_is_the_last_line() {
        assert_eq!(line_in("a: 1\nb: [", 3), 2);
        assert_eq!(line_in("a: 1\nb: [\n", 3), 3);
        assert_eq!(line_in("a: 1\n", 1), 1);
        assert_eq!(line_in("", 0), 1);
    }

    #[test]
    fn finds_fields_and_items_by_indentation() {
        let table: &[(&[Step<'_>], usize)] = &[
            (&[], 0),
            (&[Field("kind")], 1),
            (&[Field("metadata"), Field("name")], 3),
            (&[Field("spec"), Field("replicas")], 6),
            (
                &[
                    Field("spec"),
                    Field("template"),
                    Field("spec"),
                    Field("containers"),
                    Item(0),
                ],
                10,
            ),
            (
                &[
                    Field("spec"),
                    Field("template"),
                    Field("spec"),
                    Field("containers"),
                    Item(1),
                    Field("name"),
                ],
                12,
            ),
            (
                &[
                    Field("spec"),
                    Field("template"),
                    Field("spec"),
                    Field("containers"),
                    Item(1),
                    Field("image"),
                ],
                14,
            ),
            (
                &[
                    Field("spec"),
                    Field("template"),
                    Field("spec"),
                    Field("containers"),
                    Item(0),
                    Field("image"),
                ],
                11,
            ),
            (
                &[
                    Field("spec"),
                    Field("template"),
                    Field("spec"),
                    Field("containers"),
                    Item(1),
                    Field("env"),
                    Item(0),
                    Field("value"),
                ],
                17,
            ),
            (
                &[
                    Field("spec"),
                    Field("template"),
                    Field("spec"),
                    Field("dnsPolicy"),
                ],
                19,
            ),
        ];
        for (path, line) in table {
            assert_eq!(line_of(DOC, path), *line, "{path:?}");
        }
    }

    #[test]
    fn paths_inside_flow_collections_or_absent_give_the_nearest_ancestor() {
        let requests = [
            Field("spec"),
            Field("template"),
            Field("spec"),
            Field("containers"),
            Item(1),
            Field("resources"),
            Field("requests"),
        ];
        assert_eq!(line_of(DOC, &requests), 18);
        assert_eq!(
            line_of(DOC, &[Field("metadata"), Field("labels"), Field("app")]),
            4
        );
        assert_eq!(line_of(DOC, &[Field("spec"), Field("paused")]), 5);
        assert_eq!(
            line_of(
                DOC,
                &[
                    Field("spec"),
                    Field("template"),
                    Field("spec"),
                    Field("containers"),
                    Item(7)
                ]
            ),
            9
        );
    }

    #[test]
    fn every_item_and_key_at_once_is_what_line_of_gives_each() {
        let containers = [
            Field("spec"),
            Field("template"),
            Field("spec"),
            Field("containers"),
        ];
        let outline = Outline::new(DOC);
        let items = outline.item_lines(&containers, 4);
        for (i, line) in items.iter().enumerate() {
            let mut path = containers.to_vec();
            path.push(Item(i));
            assert_eq!(*line, line_of(DOC, &path), "item {i}");
        }
        assert_eq!(items, [10, 12, 9, 9]);
        // Flow style: every item is at the sequence's line.
        assert_eq!(
            outline.item_lines(&[Field("metadata"), Field("labels")], 2),
            [4, 4]
        );
        let mut item = containers.to_vec();
        item.push(Item(1));
        let (own, keys) = outline.key_lines(&item);
        assert_eq!(own, line_of(DOC, &item));
        for name in ["name", "image", "env", "resources", "absent"] {
            let mut path = item.clone();
            path.push(Field(name));
            let line = keys.get(name).copied().unwrap_or(own);
            assert_eq!(line, line_of(DOC, &path), "{name}");
        }
    }
}
