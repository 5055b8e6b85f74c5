//! Parsing one manifest file: split into YAML documents, parse each, keep Kubernetes objects.
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::tree::Names;
use super::{ManifestObject, ObjectKey, Problem};

/// What one file holds: its objects and the problems met while reading it.
#[derive(Debug, Clone, Default)]
pub struct ParsedFile {
    pub objects: Vec<ManifestObject>,
    pub problems: Vec<Problem>,
}

/// A document of a multi-document file: its text, the byte offset and 0-based line it starts at.
struct Document<'a> {
    text: &'a str,
    offset: usize,
    line: usize,
}

/// Splits at `---` marker lines (and `...` end markers) so that a malformed document does not hide
/// the others, and so that each object knows the line its document starts at. The split is the
/// edit's own ([`super::edit::documents::split`]), so a document index means the same in both.
fn documents(text: &str) -> Vec<Document<'_>> {
    let (mut line, mut counted) = (0, 0);
    super::edit::documents::split(text)
        .into_iter()
        .map(|range| {
            // (`--- key: value` starts its document on the marker's own line.)
            line += text[counted..range.start].matches('\n').count();
            counted = range.start;
            Document {
                text: &text[range.clone()],
                offset: range.start,
                line,
            }
        })
        .collect()
}

/// The first line of `text` that carries content (not blank, not a comment), 0-based.
fn first_content_line(text: &str) -> Option<usize> {
    text.lines().position(|line| {
        let trimmed = line.trim();
        !trimmed.is_empty() && !trimmed.starts_with('#')
    })
}

/// Parses every document of `text` (the contents of `file`). YAML that is not a Kubernetes object
/// is skipped quietly; malformed YAML becomes a problem naming the file and the line.
pub fn parse_file(file: &Arc<Path>, text: &Arc<str>, default_namespace: &str) -> ParsedFile {
    parse_file_sharing(file, text, default_namespace, &mut Names::default())
}

/// [`parse_file`], sharing field names with the files parsed before it with `names`.
pub fn parse_file_sharing(
    file: &Arc<Path>,
    text: &Arc<str>,
    default_namespace: &str,
    names: &mut Names,
) -> ParsedFile {
    let mut parsed = ParsedFile::default();
    let template = text.contains("{{") && text.contains("}}");
    if template && in_chart_templates(file) {
        return ParsedFile {
            objects: Vec::new(),
            problems: vec![Problem::Template {
                file: file.to_path_buf(),
            }],
        };
    }
    for (doc_index, doc) in documents(text).into_iter().enumerate() {
        let Some(first) = first_content_line(doc.text) else {
            continue;
        };
        // A byte-order mark is no content (kubectl reads such files).
        let yaml = doc.text.strip_prefix('\u{feff}').unwrap_or(doc.text);
        let place = Place {
            file,
            doc_index,
            doc: &doc,
            digest: super::digest(doc.text),
            outline: std::cell::OnceCell::new(),
        };
        if place.push_list_items(&mut parsed, yaml, default_namespace, names) {
            continue;
        }
        let value: Value = match serde_yaml::from_str(yaml) {
            Ok(value) => value,
            Err(_) if template => {
                // Helm's `{{ }}`: not YAML until rendered. Say so once, read nothing of it.
                return ParsedFile {
                    objects: Vec::new(),
                    problems: vec![Problem::Template {
                        file: file.to_path_buf(),
                    }],
                };
            }
            Err(error) => {
                let (line, column) = error
                    .location()
                    .map_or((first + 1, 0), |at| (at.line(), at.column()));
                parsed.problems.push(Problem::Malformed {
                    file: file.to_path_buf(),
                    line: super::lines::line_in(text, doc.line + line),
                    column,
                    message: error.to_string(),
                });
                continue;
            }
        };
        // `kind: List` (what `kubectl get -o yaml` writes): kubectl applies each item.
        if is_list(&value) {
            let Value::Object(mut list) = value else {
                continue;
            };
            let Some(Value::Array(items)) = list.remove("items") else {
                continue;
            };
            // Every item's line in one reading of the document (a line each would read the
            // whole document once per item: a 9 MB list of 20,000 objects never finished).
            let lines = place
                .outline()
                .item_lines(&[super::lines::Step::Field("items")], items.len());
            for ((at, item), line) in items.into_iter().enumerate().zip(lines) {
                let line = doc.line + line + 1;
                place.push(&mut parsed, item, line, Some(at), default_namespace, names);
            }
            continue;
        }
        place.push(
            &mut parsed,
            value,
            doc.line + first + 1,
            None,
            default_namespace,
            names,
        );
    }
    // Held for as long as the index lives: no spare capacity (a one-object file would keep room
    // for four).
    parsed.objects.shrink_to_fit();
    parsed.problems.shrink_to_fit();
    parsed
}

/// True for a file in the `templates/` folder of a Helm chart (beside its `Chart.yaml`).
fn in_chart_templates(file: &Path) -> bool {
    file.ancestors()
        .skip(1)
        .find(|dir| dir.file_name().is_some_and(|n| n == "templates"))
        .and_then(Path::parent)
        .is_some_and(|chart| chart.join("Chart.yaml").is_file())
}

/// Why an object named by `metadata.generateName` alone (at `line`) is not compared: the
/// server makes its name when it is created, so no live object is its own; `None` for YAML that
/// is no such object (skipped quietly, as any YAML that is not a Kubernetes object).
fn generated_name_note(value: &Value, line: usize) -> Option<String> {
    let kind = value.get("kind")?.as_str()?;
    value.get("apiVersion")?.as_str()?;
    let metadata = value.get("metadata")?;
    let prefix = metadata.get("generateName")?.as_str()?;
    if kind.is_empty()
        || metadata
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty())
    {
        return None;
    }
    Some(format!(
        "line {line}: the {kind} with generateName \"{prefix}\" and no name is not compared: the server names it when it is created (kubectl create; kubectl apply refuses it), so no live object can be matched to it"
    ))
}

/// `apiVersion: v1, kind: List` with `items`.
fn is_list(value: &Value) -> bool {
    value.get("kind").and_then(Value::as_str) == Some("List")
        && value.get("apiVersion").and_then(Value::as_str) == Some("v1")
        && value.get("items").is_some_and(Value::is_array)
}

#[cfg(test)]
thread_local! {
    /// Items of `kind: List` documents read one at a time on this thread.
    static LIST_ITEMS_ALONE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Where a parsed object comes from.
struct Place<'a, 'd> {
    file: &'a Arc<Path>,
    doc_index: usize,
    doc: &'a Document<'d>,
    /// Of the document's text, shared by the items of a `kind: List`.
    digest: u64,
    /// The document's outline, read when a line inside it is first needed.
    outline: std::cell::OnceCell<super::lines::Outline<'d>>,
}

impl<'d> Place<'_, 'd> {
    fn outline(&self) -> &super::lines::Outline<'d> {
        self.outline
            .get_or_init(|| super::lines::Outline::new(self.doc.text))
    }

    /// The items of a block-style `kind: List` document `yaml`, parsed and kept one at a time:
    /// the whole document parsed at once held the events and values of every item together (a
    /// 9 MB list of 16,000 Deployments: 276 MB at the peak, 154 MB resident after). False, with
    /// nothing kept, when the document is not such a list or an item does not parse alone (an
    /// alias of an anchor in another item, an error): the caller parses the whole document,
    /// which says where an error is.
    fn push_list_items(
        &self,
        parsed: &mut ParsedFile,
        yaml: &str,
        default_namespace: &str,
        names: &mut Names,
    ) -> bool {
        // A substring search first: every document of every file passes here.
        if !yaml.contains("kind: List") || !yaml.lines().any(|line| line.trim_end() == "kind: List")
        {
            return false;
        }
        let items = [super::lines::Step::Field("items")];
        let lines: Vec<&str> = yaml.split_inclusive('\n').collect();
        let spans = self.outline().item_spans(&items, lines.len());
        let (Some(first), Some(last)) = (spans.first(), spans.last()) else {
            return false;
        };
        // The document without its items: `items:` is left empty.
        let header: String = lines[..first.start]
            .iter()
            .chain(&lines[last.end.min(lines.len())..])
            .copied()
            .collect();
        let Ok(mut header) = serde_yaml::from_str::<Value>(&header) else {
            return false;
        };
        if let Some(map) = header.as_object_mut() {
            match map.get_mut("items") {
                Some(empty @ Value::Null) => *empty = Value::Array(Vec::new()),
                _ => return false,
            }
        }
        if !is_list(&header) {
            return false;
        }
        let kept = (parsed.objects.len(), parsed.problems.len());
        #[cfg(test)]
        LIST_ITEMS_ALONE.with(|n| n.set(n.get() + spans.len()));
        for (at, span) in spans.iter().enumerate() {
            let text: String = lines[span.start..span.end.min(lines.len())].concat();
            let item = match serde_yaml::from_str::<Value>(&text) {
                Ok(Value::Array(mut one)) if one.len() == 1 => one.pop(),
                _ => None,
            };
            let Some(item) = item else {
                parsed.objects.truncate(kept.0);
                parsed.problems.truncate(kept.1);
                return false;
            };
            let line = self.doc.line + span.start + 1;
            self.push(parsed, item, line, Some(at), default_namespace, names);
        }
        true
    }

    /// A Secret's `data` must be base64 (the server refuses it otherwise): each value that is
    /// not is a problem naming its field and line, never its value.
    fn check_secret_data(
        &self,
        parsed: &mut ParsedFile,
        key: &ObjectKey,
        value: &Value,
        list_item: Option<usize>,
    ) {
        use base64::Engine;
        let Some(Value::Object(data)) = value.get("data") else {
            return;
        };
        let mut path = Vec::new();
        if let Some(at) = list_item {
            path.extend([
                super::lines::Step::Field("items"),
                super::lines::Step::Item(at),
            ]);
        }
        path.push(super::lines::Step::Field("data"));
        // Looked up once for all the keys (a Secret may hold thousands).
        let mut lines = None;
        for (name, encoded) in data {
            let valid = encoded.as_str().is_some_and(|text| {
                base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .is_ok()
            });
            if valid {
                continue;
            }
            let (data_line, keys) = lines.get_or_insert_with(|| self.outline().key_lines(&path));
            let line = keys.get(name.as_str()).copied().unwrap_or(*data_line);
            parsed.problems.push(Problem::Invalid {
                file: self.file.to_path_buf(),
                line: self.doc.line + line + 1,
                key: key.clone(),
                message: format!(
                    "data.{name} is not base64, as a Secret's data must be (the server refuses it; write text under stringData)"
                ),
            });
        }
    }

    /// Keeps `value` if it is a Kubernetes object (YAML that is not one is skipped quietly).
    fn push(
        &self,
        parsed: &mut ParsedFile,
        value: Value,
        line: usize,
        list_item: Option<usize>,
        default_namespace: &str,
        names: &mut Names,
    ) {
        let Some(key) = ObjectKey::of_object(&value, default_namespace) else {
            if let Some(note) = generated_name_note(&value, line) {
                parsed.problems.push(Problem::Note {
                    file: self.file.to_path_buf(),
                    message: note,
                });
            }
            return;
        };
        // Its parts shared with the other keys and with the body's own strings.
        let key = ObjectKey {
            group: names.share(&key.group),
            kind: names.share(&key.kind),
            namespace: names.share(&key.namespace),
            name: names.share(&key.name),
        };
        if key.group.is_empty() && key.kind == "Secret" {
            self.check_secret_data(parsed, &key, &value, list_item);
        }
        let api_version = names.share(
            value
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        );
        parsed.objects.push(ManifestObject {
            key,
            api_version,
            file: Arc::clone(self.file),
            doc_index: super::held(self.doc_index),
            line,
            doc_span: super::held(self.doc.offset)
                ..super::held(self.doc.offset + self.doc.text.len()),
            doc_first_line: super::held(self.doc.line),
            digest: self.digest,
            body: names.pack(&value),
            item: list_item.map(super::held),
            rendered: None,
            helm: None,
            chart: None,
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const MULTI: &str = "# leading comment\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n---\n\n# b\napiVersion: v1\nkind: Service\nmetadata: {name: b, namespace: x}\n---\nnot: a kubernetes object\n";

    fn parse(text: &str) -> ParsedFile {
        let file: Arc<Path> = Arc::from(Path::new("/m/app.yaml"));
        parse_file(&file, &Arc::from(text), "default")
    }

    #[test]
    fn a_fields_line_is_read_from_the_file_until_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("web.yaml");
        let text = "# web\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n";
        std::fs::write(&path, text).unwrap();
        let parsed = parse_file(&Arc::from(path.as_path()), &Arc::from(text), "default");
        let web = &parsed.objects[0];
        let replicas = [
            super::super::lines::Step::Field("spec"),
            super::super::lines::Step::Field("replicas"),
        ];
        assert_eq!(web.line_of(&replicas), 8);
        assert_eq!(web.read_text().unwrap(), &text[web.span()]);
        // Edited since it was read: the document's line is all that is known for sure.
        std::fs::write(&path, text.replace("replicas: 2", "replicas: 3")).unwrap();
        assert_eq!(web.read_text(), None);
        assert_eq!(web.line_of(&replicas), web.line);
    }

    /// A manifest named by `generateName` alone (a Job made with `kubectl create`) cannot be
    /// matched to a live object: it is not compared, and a note says so and why.
    #[test]
    fn a_generate_name_manifest_is_a_note_not_skipped_quietly() {
        let parsed = parse(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept}\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: migrate-\nspec: {}\n---\nnot: a kubernetes object\n",
        );
        assert_eq!(parsed.objects.len(), 1);
        assert_eq!(parsed.problems.len(), 1, "{:?}", parsed.problems);
        let note = &parsed.problems[0];
        assert!(note.is_note());
        let text = note.to_string();
        assert!(
            text.starts_with("/m/app.yaml: line 5: the Job with generateName \"migrate-\" and no name is not compared: the server names it"),
            "{text}"
        );
    }

    #[test]
    fn multi_document_file_gives_each_object_its_document_and_line() {
        let parsed = parse(MULTI);
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        let found: Vec<_> = parsed
            .objects
            .iter()
            .map(|o| (o.key.to_string(), o.document(), o.line))
            .collect();
        assert_eq!(
            found,
            [
                ("deployment/default/a".to_owned(), 1, 3),
                ("service/x/b".to_owned(), 2, 9)
            ]
        );
        assert!(MULTI[parsed.objects[1].span()].starts_with("\n# b\napiVersion: v1"));
        assert_eq!(parsed.objects[1].first_line(), 6);
    }

    #[test]
    fn malformed_document_is_named_with_its_file_line_and_the_rest_still_loads() {
        let parsed = parse(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [broken\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: after}\n",
        );
        let names: Vec<_> = parsed.objects.iter().map(|o| o.key.name.as_str()).collect();
        assert_eq!(names, ["ok", "after"]);
        let [Problem::Malformed { file, line, .. }] = parsed.problems.as_slice() else {
            unreachable!("expected one malformed problem, got {:?}", parsed.problems)
        };
        assert_eq!(file, Path::new("/m/app.yaml"));
        assert!((8..=9).contains(line), "line {line}");
    }

    #[test]
    fn a_long_list_is_read_once_for_its_lines_and_digest() {
        let items: String = (0..300)
            .map(|i| format!("- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c{i}\n  data:\n    k: v\n"))
            .collect();
        let text = format!("apiVersion: v1\nkind: List\nitems:\n{items}");
        let (scanned, digested) = (
            super::super::lines::SCANNED.with(|n| n.replace(0)),
            super::super::DIGESTED.with(|n| n.replace(0)),
        );
        let parsed = parse(&text);
        let scanned_now = super::super::lines::SCANNED.with(|n| n.replace(scanned));
        let digested_now = super::super::DIGESTED.with(|n| n.replace(digested));
        assert_eq!(parsed.objects.len(), 300);
        // Item i starts at line 4 + 6 i (1-based).
        for (i, object) in parsed.objects.iter().enumerate() {
            assert_eq!(object.line, 4 + 6 * i, "{}", object.key);
            assert_eq!(object.list_item(), Some(i));
        }
        // Once each: a reading per item would be 300 times the document.
        let lines = text.lines().count();
        assert!(
            scanned_now <= lines,
            "{scanned_now} lines scanned of {lines}"
        );
        assert!(
            digested_now <= text.len(),
            "{digested_now} bytes hashed of {}",
            text.len()
        );
    }

    /// What a parse kept, without the document digest (its text differs between the two
    /// readings compared).
    fn kept(parsed: &ParsedFile) -> Vec<String> {
        let objects = parsed.objects.iter().map(|o| {
            format!(
                "{} line {} item {:?} {:?}",
                o.key,
                o.line,
                o.list_item(),
                o.body
            )
        });
        let problems = parsed.problems.iter().map(|p| format!("{p:?}"));
        objects.chain(problems).collect()
    }

    /// A list as `kubectl get -o yaml` writes it (`items` between `apiVersion` and `kind`),
    /// with comments, block scalars, nested lists, a Secret with a bad value and a CRLF
    /// variant: read item by item, it gives what the whole document gives (`kind: "List"`
    /// is read whole: the one-by-one reading looks for a plain `kind: List` line).
    #[test]
    fn a_list_read_item_by_item_gives_what_the_whole_document_gives() {
        let list = "# dump\napiVersion: v1\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: web\n    namespace: shop\n  spec:\n    template:\n      spec:\n        containers:\n        - name: web\n          args:\n          - |\n            line one\n\n            line three\n          env: [{name: A, value: \"1\"}]\n\n# between\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: creds}\n  data:\n    good: aGk=\n    bad: not*base64\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: settings\n  data:\n    text: >\n      folded\n      text\n# after\nkind: List\nmetadata:\n  resourceVersion: \"\"\n";
        for text in [list.to_owned(), list.replace('\n', "\r\n")] {
            let before = LIST_ITEMS_ALONE.with(|n| n.replace(0));
            let by_item = parse(&text);
            let alone = LIST_ITEMS_ALONE.with(|n| n.replace(before));
            let whole = parse(&text.replace("kind: List", "kind: \"List\""));
            assert_eq!(alone, 3, "each item parsed alone");
            assert_eq!(by_item.objects.len(), 3);
            assert_eq!(by_item.problems.len(), 1, "{:?}", by_item.problems);
            assert_eq!(kept(&by_item), kept(&whole));
        }
    }

    /// An item that needs another (an alias of an anchor there), or an error in an item: the
    /// whole document is parsed, as before, and nothing is kept twice.
    #[test]
    fn a_list_whose_items_do_not_parse_alone_is_read_whole() {
        let aliased = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data: &shared {k: v}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n  data: *shared\n";
        let parsed = parse(aliased);
        let names: Vec<_> = parsed.objects.iter().map(|o| o.key.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(
            kept(&parsed),
            kept(&parse(&aliased.replace("kind: List", "kind: \"List\"")))
        );
        let broken = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: [b\n";
        let parsed = parse(broken);
        assert!(parsed.objects.is_empty(), "{:?}", parsed.objects);
        let [Problem::Malformed { line, .. }] = parsed.problems.as_slice() else {
            panic!("{:?}", parsed.problems)
        };
        assert!((10..=11).contains(line), "line {line}");
    }

    #[test]
    fn a_secret_with_many_bad_values_names_each_line_reading_the_document_once() {
        let data: String = (0..200)
            .map(|i| format!("  key{i}: not*base64\n"))
            .collect();
        let text = format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n{data}");
        let before = super::super::lines::SCANNED.with(|n| n.replace(0));
        let parsed = parse(&text);
        let scanned = super::super::lines::SCANNED.with(|n| n.replace(before));
        assert_eq!(parsed.problems.len(), 200);
        for (i, problem) in parsed.problems.iter().enumerate() {
            let Problem::Invalid { line, message, .. } = problem else {
                unreachable!("{problem:?}")
            };
            assert!(message.starts_with(&format!("data.key{i} ")), "{message}");
            assert_eq!(*line, 6 + i, "{message}");
        }
        assert!(scanned <= text.lines().count(), "{scanned} lines scanned");
    }
}
