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

fn scan(text: &str) -> Vec<Line<'_>> {
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
    let lines = scan(text);
    let mut range = 0..lines.len();
    let mut found = lines.first().map_or(0, |line| line.number);
    for step in path {
        let block = &lines[range.clone()];
        let Some(first) = block.first() else { break };
        match *step {
            Step::Field(name) => {
                // The block's keys sit at the column of its first key.
                let Some((col, _)) = block.iter().find_map(|line| line.key) else {
                    break;
                };
                let Some(at) = block.iter().position(|line| line.key == Some((col, name))) else {
                    break;
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
                let Some(col) = first.dash else { break };
                let starts: Vec<usize> = block
                    .iter()
                    .enumerate()
                    .filter(|(_, line)| line.dash == Some(col))
                    .map(|(at, _)| at)
                    .collect();
                let Some(&at) = starts.get(index) else { break };
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
    found
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
}
