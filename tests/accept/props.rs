//! Property test of the manifest edit over generated Deployments in many layouts (2 or 4 spaces,
//! indented or kubectl-style lists, flow-style labels, quoting styles, comments, CRLF, missing
//! final newline, alone or between two other documents): the result re-parses to the intended
//! object, built here from the model, and no line outside the edited node changes.
use std::collections::BTreeSet;
use std::ops::RangeInclusive;

use kdrift::manifest::edit::{FieldEdit, FieldPath, edit_document};
use proptest::prelude::*;
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy)]
enum Quote {
    Plain,
    Double,
    Single,
}

/// Values that are safe plain, and values that must stay quoted.
const PLAIN: &[&str] = &["web", "nginx:1.25", "128Mi", "info", "team-a"];
const QUOTED: &[&str] = &["1.10", "on", "yes", "8080", "a: b", "it's", ""];

#[derive(Debug, Clone)]
struct Scalar {
    text: String,
    quote: Quote,
}

impl Scalar {
    fn render(&self) -> String {
        match self.quote {
            Quote::Plain => self.text.clone(),
            Quote::Double => format!("\"{}\"", self.text),
            Quote::Single => format!("'{}'", self.text.replace('\'', "''")),
        }
    }
}

fn scalar() -> impl Strategy<Value = Scalar> {
    prop_oneof![
        prop::sample::select(PLAIN).prop_map(|t| Scalar {
            text: t.into(),
            quote: Quote::Plain
        }),
        (prop::sample::select(QUOTED), any::<bool>()).prop_map(|(t, double)| Scalar {
            text: t.into(),
            quote: if double || t.contains('"') {
                Quote::Double
            } else {
                Quote::Single
            },
        }),
    ]
}

#[derive(Debug, Clone)]
struct Container {
    image: Scalar,
    /// (name, value), named `E0`, `E1`, ... when generated.
    env: Vec<(String, Scalar)>,
    memory: Option<String>,
}

#[derive(Debug, Clone)]
struct Layout {
    indent: usize,
    indent_sequences: bool,
    wide_dash: bool,
    crlf: bool,
    final_newline: bool,
    comments: bool,
    /// `labels: {app: web, tier: back}` on one line.
    flow_labels: bool,
}

#[derive(Debug, Clone)]
struct Model {
    labels: Vec<Scalar>,
    replicas: u32,
    containers: Vec<Container>,
}

const LABEL_KEYS: &[&str] = &["app", "app.kubernetes.io/name", "example.com/team", "tier"];

fn model() -> impl Strategy<Value = Model> {
    let container = (
        scalar(),
        prop::collection::vec(scalar(), 0..3),
        prop::option::of("[1-9][0-9]{1,2}Mi"),
    )
        .prop_map(|(image, env, memory)| Container {
            image,
            env: env
                .into_iter()
                .enumerate()
                .map(|(j, v)| (format!("E{j}"), v))
                .collect(),
            memory,
        });
    (
        prop::collection::vec(scalar(), 1..4),
        0u32..20,
        prop::collection::vec(container, 1..3),
    )
        .prop_map(|(labels, replicas, containers)| Model {
            labels,
            replicas,
            containers,
        })
}

fn layout() -> impl Strategy<Value = Layout> {
    (
        prop_oneof![Just(2usize), Just(4)],
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(indent, indent_sequences, wide_dash, crlf, final_newline, comments, flow_labels)| {
                Layout {
                    flow_labels,
                    indent,
                    indent_sequences,
                    wide_dash,
                    crlf,
                    final_newline,
                    comments,
                }
            },
        )
}

/// Where things are in the rendered text (0-based line numbers).
#[derive(Debug, Default)]
struct Lines {
    flow_labels: bool,
    labels_header: usize,
    labels: Vec<usize>,
    replicas: usize,
    /// Per container: its whole range, image line, env header, env items' ranges, memory lines
    /// (resources, limits, memory).
    containers: Vec<RangeInclusive<usize>>,
    images: Vec<usize>,
    env_headers: Vec<Option<usize>>,
    env_items: Vec<Vec<RangeInclusive<usize>>>,
    memory: Vec<Option<[usize; 3]>>,
}

fn render(model: &Model, layout: &Layout) -> (String, Lines) {
    let i = layout.indent;
    let dash = if layout.wide_dash && i == 4 { 4 } else { 2 };
    let seq = |col: usize| col + if layout.indent_sequences { i } else { 0 };
    let note = |text: &str| {
        if layout.comments {
            format!("{text} # note")
        } else {
            text.to_owned()
        }
    };
    let mut out: Vec<String> = Vec::new();
    let mut at = Lines::default();
    let pad = |n: usize| " ".repeat(n);
    if layout.comments {
        out.push("# generated manifest".into());
    }
    out.push("apiVersion: apps/v1".into());
    out.push("kind: Deployment".into());
    out.push("metadata:".into());
    out.push(format!("{}name: web", pad(i)));
    at.labels_header = out.len();
    at.flow_labels = layout.flow_labels;
    if layout.flow_labels {
        // Plain values with `:` are quoted inside flow collections, as people write them.
        let entries: Vec<String> = model
            .labels
            .iter()
            .enumerate()
            .map(|(n, value)| {
                let text = match value.quote {
                    Quote::Plain if value.text.contains(':') => format!("\"{}\"", value.text),
                    _ => value.render(),
                };
                format!("{}: {text}", LABEL_KEYS[n])
            })
            .collect();
        at.labels = vec![out.len(); model.labels.len()];
        out.push(note(&format!(
            "{}labels: {{{}}}",
            pad(i),
            entries.join(", ")
        )));
    } else {
        out.push(format!("{}labels:", pad(i)));
        for (n, value) in model.labels.iter().enumerate() {
            at.labels.push(out.len());
            out.push(note(&format!(
                "{}{}: {}",
                pad(2 * i),
                LABEL_KEYS[n],
                value.render()
            )));
        }
    }
    out.push("spec:".into());
    at.replicas = out.len();
    out.push(note(&format!("{}replicas: {}", pad(i), model.replicas)));
    if layout.comments {
        out.push(String::new());
    }
    out.push(format!("{}template:", pad(i)));
    out.push(format!("{}spec:", pad(2 * i)));
    out.push(format!("{}containers:", pad(3 * i)));
    let d = seq(3 * i);
    let content = d + dash;
    for (n, c) in model.containers.iter().enumerate() {
        let start = out.len();
        out.push(format!("{}-{}name: c{n}", pad(d), pad(dash - 1)));
        at.images.push(out.len());
        out.push(note(&format!(
            "{}image: {}",
            pad(content),
            c.image.render()
        )));
        let mut items = Vec::new();
        if c.env.is_empty() {
            at.env_headers.push(None);
        } else {
            at.env_headers.push(Some(out.len()));
            out.push(format!("{}env:", pad(content)));
            let ed = seq(content);
            for (name, value) in &c.env {
                let first = out.len();
                out.push(format!("{}-{}name: {name}", pad(ed), pad(dash - 1)));
                out.push(note(&format!(
                    "{}value: {}",
                    pad(ed + dash),
                    value.render()
                )));
                items.push(first..=first + 1);
            }
        }
        at.env_items.push(items);
        match &c.memory {
            Some(memory) => {
                let r = out.len();
                out.push(format!("{}resources:", pad(content)));
                out.push(format!("{}limits:", pad(content + i)));
                out.push(format!("{}memory: {memory}", pad(content + 2 * i)));
                at.memory.push(Some([r, r + 1, r + 2]));
            }
            None => at.memory.push(None),
        }
        at.containers.push(start..=out.len() - 1);
    }
    let end = if layout.crlf { "\r\n" } else { "\n" };
    let mut text = out.join(end);
    if layout.final_newline {
        text.push_str(end);
    }
    (text, at)
}

fn to_json(model: &Model) -> Value {
    let labels: serde_json::Map<String, Value> = model
        .labels
        .iter()
        .enumerate()
        .map(|(n, v)| (LABEL_KEYS[n].to_owned(), json!(v.text)))
        .collect();
    let containers: Vec<Value> = model
        .containers
        .iter()
        .enumerate()
        .map(|(n, c)| {
            let mut item = json!({"name": format!("c{n}"), "image": c.image.text});
            if !c.env.is_empty() {
                let env: Vec<Value> = c
                    .env
                    .iter()
                    .map(|(name, v)| json!({"name": name, "value": v.text}))
                    .collect();
                item["env"] = json!(env);
            }
            if let Some(memory) = &c.memory {
                item["resources"] = json!({"limits": {"memory": memory}});
            }
            item
        })
        .collect();
    let mut metadata = json!({"name": "web"});
    if !labels.is_empty() {
        metadata["labels"] = Value::Object(labels);
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {"replicas": model.replicas, "template": {"spec": {"containers": containers}}},
    })
}

#[derive(Debug, Clone)]
enum Change {
    Replicas(u32),
    Label(usize, Scalar),
    RemoveLabel(usize),
    Image(usize, Scalar),
    EnvValue(usize, usize, Scalar),
    AddEnv(usize, Scalar),
    RemoveEnv(usize, usize),
    Memory(usize, String),
    RemoveMemory(usize),
}

fn change() -> impl Strategy<Value = Change> {
    let n = 0usize..4;
    prop_oneof![
        (0u32..50).prop_map(Change::Replicas),
        (n.clone(), scalar()).prop_map(|(a, s)| Change::Label(a, s)),
        n.clone().prop_map(Change::RemoveLabel),
        (n.clone(), scalar()).prop_map(|(a, s)| Change::Image(a, s)),
        (n.clone(), n.clone(), scalar()).prop_map(|(a, b, s)| Change::EnvValue(a, b, s)),
        (n.clone(), scalar()).prop_map(|(a, s)| Change::AddEnv(a, s)),
        (n.clone(), n.clone()).prop_map(|(a, b)| Change::RemoveEnv(a, b)),
        (n.clone(), "[1-9][0-9]{1,2}Gi").prop_map(|(a, m)| Change::Memory(a, m)),
        n.prop_map(Change::RemoveMemory),
    ]
}

fn container_path(n: usize) -> FieldPath {
    FieldPath::keys(&["spec", "template", "spec", "containers"]).item("name", format!("c{n}"))
}

/// The edit, the model after it, the original lines it may delete and the original lines before
/// which it may insert. `None` when the change does not apply to this model.
fn plan(
    model: &Model,
    at: &Lines,
    change: &Change,
) -> Option<(FieldEdit, Model, BTreeSet<usize>, RangeInclusive<usize>)> {
    let mut after = model.clone();
    let one = |line: usize| (BTreeSet::from([line]), line..=line + 1);
    let labels = FieldPath::keys(&["metadata", "labels"]);
    Some(match change {
        Change::Replicas(r) => {
            after.replicas = *r;
            let (del, ins) = one(at.replicas);
            (
                FieldEdit::Set {
                    path: FieldPath::keys(&["spec", "replicas"]),
                    value: json!(r),
                },
                after,
                del,
                ins,
            )
        }
        Change::Label(n, value) => {
            let path = labels.key(LABEL_KEYS[*n]);
            let edit = FieldEdit::Set {
                path,
                value: json!(value.text),
            };
            if *n < model.labels.len() {
                after.labels[*n].text = value.text.clone();
                let (del, ins) = one(at.labels[*n]);
                (edit, after, del, ins)
            } else {
                // Added after the last label; `n` picks a key not used yet.
                if *n != model.labels.len() {
                    return None;
                }
                after.labels.push(value.clone());
                if at.flow_labels {
                    let (del, ins) = one(at.labels_header);
                    return Some((edit, after, del, ins));
                }
                let last = *at.labels.last()? + 1;
                (edit, after, BTreeSet::new(), last..=last)
            }
        }
        Change::RemoveLabel(n) => {
            if *n + 1 != model.labels.len() {
                return None;
            }
            after.labels.pop();
            let mut del = BTreeSet::from([at.labels[*n]]);
            if model.labels.len() == 1 {
                del.insert(at.labels_header);
            }
            (
                FieldEdit::Remove {
                    path: labels.key(LABEL_KEYS[*n]),
                },
                after,
                del,
                0..=0,
            )
        }
        Change::Image(n, value) => {
            after.containers.get_mut(*n)?.image.text = value.text.clone();
            let (del, ins) = one(at.images[*n]);
            (
                FieldEdit::Set {
                    path: container_path(*n).key("image"),
                    value: json!(value.text),
                },
                after,
                del,
                ins,
            )
        }
        Change::EnvValue(n, j, value) => {
            after.containers.get_mut(*n)?.env.get_mut(*j)?.1.text = value.text.clone();
            let line = *at.env_items[*n][*j].end();
            let path = container_path(*n)
                .key("env")
                .item("name", format!("E{j}"))
                .key("value");
            let (del, ins) = one(line);
            (
                FieldEdit::Set {
                    path,
                    value: json!(value.text),
                },
                after,
                del,
                ins,
            )
        }
        Change::AddEnv(n, value) => {
            let c = after.containers.get_mut(*n)?;
            let j = c.env.len();
            c.env.push((format!("E{j}"), value.clone()));
            let path = container_path(*n)
                .key("env")
                .item("name", format!("E{j}"))
                .key("value");
            // After the last item, or a new `env:` after the container's last line.
            let anchor = match at.env_items[*n].last() {
                Some(last) => *last.end() + 1,
                None => *at.containers[*n].end() + 1,
            };
            (
                FieldEdit::Set {
                    path,
                    value: json!(value.text),
                },
                after,
                BTreeSet::new(),
                anchor..=anchor,
            )
        }
        Change::RemoveEnv(n, j) => {
            let c = after.containers.get_mut(*n)?;
            if *j >= c.env.len() {
                return None;
            }
            c.env.remove(*j);
            let mut del: BTreeSet<usize> = at.env_items[*n][*j].clone().collect();
            if model.containers[*n].env.len() == 1 {
                del.insert(at.env_headers[*n]?);
            }
            let path = container_path(*n).key("env").item("name", format!("E{j}"));
            (FieldEdit::Remove { path }, after, del, 0..=0)
        }
        Change::Memory(n, memory) => {
            let c = after.containers.get_mut(*n)?;
            let had = c.memory.replace(memory.clone()).is_some();
            let path = container_path(*n)
                .key("resources")
                .key("limits")
                .key("memory");
            let edit = FieldEdit::Set {
                path,
                value: json!(memory),
            };
            if had {
                let (del, ins) = one(at.memory[*n]?[2]);
                (edit, after, del, ins)
            } else {
                let anchor = *at.containers[*n].end() + 1;
                (edit, after, BTreeSet::new(), anchor..=anchor)
            }
        }
        Change::RemoveMemory(n) => {
            after.containers.get_mut(*n)?.memory.take()?;
            let del = at.memory[*n]?.into_iter().collect();
            let path = container_path(*n)
                .key("resources")
                .key("limits")
                .key("memory");
            (FieldEdit::Remove { path }, after, del, 0..=0)
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn only_the_edited_lines_change_and_the_result_is_the_intended_object(
        model in model(),
        layout in layout(),
        change in change(),
        neighbours in any::<bool>(),
    ) {
        let (before, at) = render(&model, &layout);
        let planned = plan(&model, &at, &change);
        prop_assume!(planned.is_some(), "the change does not apply to this model");
        let Some((edit, after_model, deletable, insert_at)) = planned else {
            return Ok(());
        };
        // With neighbours, the document is the second of three (the third only when the file
        // ends in a line break), and they must come out byte for byte.
        let end = if layout.crlf { "\r\n" } else { "\n" };
        let (prefix, suffix) = match (neighbours, layout.final_newline) {
            (false, _) => (String::new(), String::new()),
            (true, with_third) => (
                format!("# before{end}kind: ConfigMap{end}---{end}"),
                if with_third { format!("---{end}kind: Secret # after{end}") } else { String::new() },
            ),
        };
        let file = format!("{prefix}{before}{suffix}");
        let edited = edit_document(&file, usize::from(neighbours), std::slice::from_ref(&edit))
            .map_err(|e| TestCaseError::fail(format!("{e}\n{file}")))?;
        prop_assert!(edited.starts_with(&prefix) && edited.ends_with(&suffix), "neighbours changed:\n{}", edited);
        let after = edited[prefix.len()..edited.len() - suffix.len()].to_owned();

        let parsed: Value = serde_yaml::from_str(&after).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&parsed, &to_json(&after_model), "re-parsed:\n{}", after);

        // A missing final line break moves after inserted lines: compare as if both had one.
        let end = if layout.crlf { "\r\n" } else { "\n" };
        let (before_lines, after_lines) = (format!("{before}{end}"), format!("{after}{end}"));
        let (old_text, new_text) = if layout.final_newline {
            (before.as_str(), after.as_str())
        } else {
            (before_lines.as_str(), after_lines.as_str())
        };
        let diff = similar::TextDiff::from_lines(old_text, new_text);
        let mut inserted_at = BTreeSet::new();
        for op in diff.ops() {
            let (tag, old, new) = op.as_tag_tuple();
            if tag == similar::DiffTag::Equal {
                continue;
            }
            for line in old.clone() {
                prop_assert!(deletable.contains(&line), "line {} changed:\n{}\n---\n{}", line, before, after);
            }
            if !new.is_empty() {
                inserted_at.insert(old.start);
            }
        }
        // All new lines go in one place: where the edited node was, or right after its parent.
        prop_assert!(inserted_at.len() <= 1, "lines inserted in several places:\n{}", after);
        if let Some(place) = inserted_at.first() {
            let allowed = deletable.first() == Some(place) || insert_at.contains(place);
            prop_assert!(allowed, "inserted at line {}:\n{}\n---\n{}", place, before, after);
        }
        prop_assert_eq!(after.ends_with('\n'), layout.final_newline);
        if layout.crlf {
            prop_assert_eq!(after.matches('\n').count(), after.matches("\r\n").count());
        }
    }
}
