//! Golden tests of the format-preserving manifest edit: each case edits a fixture under
//! `tests/fixtures/accept/` and must give exactly the `.after.yaml` file next to it.
//! `KDRIFT_BLESS=1 cargo test --test accept edit::` rewrites the expected files (review the diff).
use std::path::PathBuf;

use kdrift::manifest::edit::{EditError, FieldEdit, FieldPath, edit_document};
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/accept")
        .join(name)
}

fn set(path: FieldPath, value: Value) -> FieldEdit {
    FieldEdit::Set { path, value }
}

fn remove(path: FieldPath) -> FieldEdit {
    FieldEdit::Remove { path }
}

fn container(name: &str) -> FieldPath {
    FieldPath::keys(&["spec", "template", "spec", "containers"]).item("name", name)
}

/// Edits `<input>.before.yaml` and compares with `<case>.after.yaml`; returns both texts.
fn golden(input: &str, case: &str, document: usize, edits: &[FieldEdit]) -> (String, String) {
    let before = std::fs::read_to_string(fixture(&format!("{input}.before.yaml")))
        .expect("fixture readable");
    let after = edit_document(&before, document, edits).expect("edit accepted");
    let expected_file = fixture(&format!("{case}.after.yaml"));
    if std::env::var_os("KDRIFT_BLESS").is_some() {
        std::fs::write(&expected_file, &after).expect("golden written");
    }
    let expected = std::fs::read_to_string(&expected_file).expect("golden file present");
    assert_eq!(
        after, expected,
        "{case}: edited text differs from the golden file"
    );
    (before, after)
}

/// The lines that differ: (removed, added), from a line diff.
fn changed_lines(before: &str, after: &str) -> (Vec<String>, Vec<String>) {
    let diff = similar::TextDiff::from_lines(before, after);
    let mut removed = Vec::new();
    let mut added = Vec::new();
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Delete => removed.push(change.value().to_owned()),
            similar::ChangeTag::Insert => added.push(change.value().to_owned()),
            similar::ChangeTag::Equal => {}
        }
    }
    (removed, added)
}

#[test]
fn changed_replicas_changes_one_line_and_keeps_its_comment() {
    let (before, after) = golden(
        "web",
        "web-replicas",
        0,
        &[set(FieldPath::keys(&["spec", "replicas"]), json!(5))],
    );
    let (removed, added) = changed_lines(&before, &after);
    assert_eq!(
        removed,
        vec!["  replicas: 2 # scaled by hand during incidents\n"]
    );
    assert_eq!(
        added,
        vec!["  replicas: 5 # scaled by hand during incidents\n"]
    );
}

#[test]
fn quoted_image_stays_double_quoted() {
    let (before, after) = golden(
        "web",
        "web-image",
        0,
        &[set(
            container("web").key("image"),
            json!("registry.example.com/web:1.11"),
        )],
    );
    let (_, added) = changed_lines(&before, &after);
    assert_eq!(
        added,
        vec!["        image: \"registry.example.com/web:1.11\"\n"]
    );
}

#[test]
fn label_keys_with_dots_and_slashes() {
    let labels = FieldPath::keys(&["metadata", "labels"]);
    let (before, after) = golden(
        "web",
        "web-labels",
        0,
        &[
            set(
                labels.clone().key("app.kubernetes.io/name"),
                json!("web-v2"),
            ),
            set(labels.key("app.kubernetes.io/version"), json!("1.10")),
            remove(FieldPath::keys(&[
                "metadata",
                "annotations",
                "example.com/owner",
            ])),
        ],
    );
    let (removed, added) = changed_lines(&before, &after);
    assert_eq!(
        removed.len(),
        3,
        "label line, annotations and its only key: {removed:?}"
    );
    assert_eq!(added.len(), 2, "{added:?}");
    assert!(after.contains("    app.kubernetes.io/version: \"1.10\"\n"));
}

#[test]
fn env_entries_added_removed_and_changed() {
    let env = container("web").key("env");
    let (before, after) = golden(
        "web",
        "web-env",
        0,
        &[
            set(
                env.clone().item("name", "FEATURE_X").key("value"),
                json!("off"),
            ),
            remove(env.clone().item("name", "LOG_LEVEL")),
            set(
                env.clone().item("name", "VERSION").key("value"),
                json!("1.11"),
            ),
            set(env.item("name", "TRACE").key("value"), json!("yes")),
        ],
    );
    let (removed, added) = changed_lines(&before, &after);
    assert_eq!(removed.len(), 4, "{removed:?}");
    assert_eq!(added.len(), 4, "{added:?}");
    assert!(after.contains("          value: \"off\"   # must stay a string\n"));
    assert!(after.contains("          value: '1.11'\n"));
    assert!(after.contains("        - name: TRACE\n          value: \"yes\"\n"));
}

#[test]
fn resources_added_to_a_container_that_had_none() {
    let (before, after) = golden(
        "web",
        "web-resources",
        0,
        &[
            set(
                container("sidecar")
                    .key("resources")
                    .key("limits")
                    .key("memory"),
                json!("64Mi"),
            ),
            set(container("sidecar").key("imagePullPolicy"), json!("Always")),
        ],
    );
    let (removed, added) = changed_lines(&before, &after);
    assert!(removed.is_empty(), "{removed:?}");
    assert_eq!(
        added.concat(),
        "        resources:\n          limits:\n            memory: 64Mi\n        imagePullPolicy: Always\n"
    );
}

#[test]
fn removing_the_last_limit_removes_the_empty_resources() {
    let (before, after) = golden(
        "web",
        "web-unlimited",
        0,
        &[remove(
            container("web")
                .key("resources")
                .key("limits")
                .key("memory"),
        )],
    );
    let (removed, added) = changed_lines(&before, &after);
    assert_eq!(removed.len(), 3, "{removed:?}");
    assert!(added.is_empty());
}

#[test]
fn four_space_indentation_and_indented_lists() {
    let api = container("api");
    let (_, after) = golden(
        "fourspace",
        "fourspace",
        0,
        &[
            set(
                api.clone().key("resources").key("limits").key("cpu"),
                json!("1"),
            ),
            set(api.key("env").item("name", "B").key("value"), json!("2")),
        ],
    );
    assert!(after.contains(
        "                    resources:\n                        limits:\n                            cpu: \"1\"\n"
    ));
    assert!(after.contains(
        "                        -   name: B\n                            value: \"2\"\n"
    ));
}

#[test]
fn crlf_line_ends_survive() {
    let (_, after) = golden(
        "crlf",
        "crlf",
        0,
        &[
            set(FieldPath::keys(&["data", "mode"]), json!("safe")),
            set(FieldPath::keys(&["data", "extra"]), json!("on")),
        ],
    );
    assert_eq!(after.matches('\n').count(), after.matches("\r\n").count());
    assert!(after.contains("  mode: \"safe\"\r\n"));
}

#[test]
fn missing_final_newline_stays_missing() {
    let (_, after) = golden(
        "nonewline",
        "nonewline",
        0,
        &[set(FieldPath::keys(&["data", "b"]), json!("2"))],
    );
    assert!(after.ends_with("  b: \"2\""));
}

#[test]
fn anchors_and_aliases_survive_an_edit_beside_them() {
    let (before, after) = golden(
        "anchors",
        "anchors",
        0,
        &[set(FieldPath::keys(&["spec", "replicas"]), json!(4))],
    );
    assert_eq!(before.replace("replicas: 3", "replicas: 4"), after);
}

#[test]
fn an_edit_through_an_anchor_is_refused() {
    let before = std::fs::read_to_string(fixture("anchors.before.yaml")).expect("fixture");
    let edit = set(
        FieldPath::keys(&["metadata", "labels", "tier"]),
        json!("front"),
    );
    let error = edit_document(&before, 0, &[edit]).expect_err("must refuse");
    assert!(
        matches!(error, EditError::NotIntended { .. }),
        "the anchor is shared with the selector: {error}"
    );
    let through_alias = set(
        FieldPath::keys(&["spec", "selector", "matchLabels", "tier"]),
        json!("front"),
    );
    let error = edit_document(&before, 0, &[through_alias]).expect_err("must refuse");
    assert!(error.to_string().contains("alias"), "{error}");
}

#[test]
fn flow_style_stays_flow() {
    let (_, after) = golden(
        "flow",
        "flow",
        0,
        &[
            set(FieldPath::keys(&["metadata", "labels", "team"]), json!("a")),
            set(container("app").key("image"), json!("app:2")),
            set(
                container("proxy")
                    .key("resources")
                    .key("limits")
                    .key("memory"),
                json!("128Mi"),
            ),
        ],
    );
    assert!(after.contains("metadata: {name: flowy, labels: {app: flowy, team: a}}\n"));
    assert!(after.contains("resources: {limits: {cpu: 500m, memory: 128Mi}}\n"));
}

#[test]
fn other_documents_are_untouched() {
    let (before, after) = golden(
        "multi",
        "multi",
        2,
        &[set(container("web").key("image"), json!("web:2"))],
    );
    assert_eq!(before.replace("image: web:1", "image: web:2"), after);
}

#[test]
fn a_missing_document_is_refused() {
    let before = std::fs::read_to_string(fixture("multi.before.yaml")).expect("fixture");
    let edit = set(FieldPath::keys(&["spec", "replicas"]), json!(1));
    let error = edit_document(&before, 7, &[edit]).expect_err("must refuse");
    assert!(error.to_string().contains("no document 7"), "{error}");
}

#[test]
fn empty_and_whole_values_are_replaced_in_their_own_style() {
    let app = container("app");
    let (_, after) = golden(
        "nulls",
        "nulls",
        0,
        &[
            set(
                FieldPath::keys(&["metadata", "annotations", "example.com/by"]),
                json!("kubectl"),
            ),
            set(
                app.clone().key("resources").key("limits").key("cpu"),
                json!("1"),
            ),
            set(
                app.clone().key("args"),
                json!(["serve", "--port=8080", "--debug"]),
            ),
            set(app.clone().key("command"), json!(["run", "--fast"])),
            set(app.key("workingDir"), json!("/srv")),
        ],
    );
    assert!(
        after.contains("  annotations:\n    example.com/by: kubectl\n"),
        "{after}"
    );
    assert!(
        after.contains("        resources: {limits: {cpu: \"1\"}}\n"),
        "{after}"
    );
    assert!(
        after
            .contains("        args:\n        - serve\n        - --port=8080\n        - --debug\n"),
        "{after}"
    );
    assert!(
        after.contains("        command: [run, --fast]  # entry point\n"),
        "{after}"
    );
    assert!(after.ends_with("        workingDir: /srv\n"), "{after}");
}

#[test]
fn prepared_edit_previews_the_diff_and_writes_only_if_the_file_is_unchanged() {
    use kdrift::manifest::edit::PreparedEdit;
    let root = tempfile::tempdir().expect("temp dir");
    let file = root.path().join("web.yaml");
    std::fs::copy(fixture("web.before.yaml"), &file).expect("copy");
    let edit = set(FieldPath::keys(&["spec", "replicas"]), json!(5));
    let prepared = PreparedEdit::new(&file, 0, &[edit]).expect("prepared");
    let diff = prepared.diff("web.yaml");
    assert!(diff.contains("-  replicas: 2 # scaled by hand during incidents\n+  replicas: 5 # scaled by hand during incidents\n"), "{diff}");
    assert!(
        diff.starts_with("--- a/web.yaml\n+++ b/web.yaml\n"),
        "{diff}"
    );
    prepared.write(root.path()).expect("written");
    assert_eq!(
        std::fs::read_to_string(&file).expect("read"),
        prepared.after
    );
    // A second write of the same preparation: the file is no longer what was read.
    assert!(prepared.write(root.path()).is_err());
}

#[test]
fn a_malformed_document_is_refused_with_its_line_in_the_file() {
    let text = "a: 1\n---\nb: [1, 2\nc: 3\n";
    let edit = set(FieldPath::keys(&["c"]), json!(4));
    let error = edit_document(text, 1, &[edit]).expect_err("malformed");
    assert!(
        matches!(error, EditError::Parse { line: 4..=5, .. }),
        "{error:?}"
    );
}

const ENV_DOC: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          env:
            # where the cache lives
            - name: A
              value: \"1\"
            - name: B # second
              value: \"2\"
            # read from A
            - name: C
              value: \"$(A)/c\"
";

fn env_path() -> FieldPath {
    container("web").key("env")
}

fn env_item(name: &str) -> kdrift::manifest::edit::PathStep {
    kdrift::manifest::edit::PathStep::Item(
        json!({"name": name})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    )
}

#[test]
fn an_env_var_added_live_is_inserted_after_the_one_before_it_live() {
    let insert = |after: Vec<kdrift::manifest::edit::PathStep>| FieldEdit::InsertItem {
        path: env_path().item("name", "NEW"),
        value: json!({"name": "NEW", "value": "n"}),
        after,
    };
    // After A (the live list has A, NEW, …): before B, and before C's comment with C.
    let edited = edit_document(ENV_DOC, 0, &[insert(vec![env_item("A")])]).expect("edit");
    assert!(
        edited.contains(
            "              value: \"1\"\n            - name: NEW\n              value: \"n\"\n            - name: B # second\n"
        ),
        "{edited}"
    );
    // Before every item the manifest has: first, above the first item's comment.
    let edited = edit_document(ENV_DOC, 0, &[insert(vec![env_item("GONE")])]).expect("edit");
    assert!(
        edited.contains(
            "          env:\n            - name: NEW\n              value: \"n\"\n            # where the cache lives\n"
        ),
        "{edited}"
    );
    // After the last: appended.
    let edited = edit_document(ENV_DOC, 0, &[insert(vec![env_item("C")])]).expect("edit");
    assert!(
        edited
            .ends_with("value: \"$(A)/c\"\n            - name: NEW\n              value: \"n\"\n"),
        "{edited}"
    );
}

#[test]
fn a_reordered_env_moves_each_item_with_its_lines_and_comments() {
    let reorder = FieldEdit::Reorder {
        path: env_path(),
        order: vec![env_item("C"), env_item("A")],
    };
    let edited = edit_document(ENV_DOC, 0, &[reorder]).expect("edit");
    let expected = ENV_DOC.replace(
        "            # where the cache lives\n            - name: A\n              value: \"1\"\n            - name: B # second\n              value: \"2\"\n            # read from A\n            - name: C\n              value: \"$(A)/c\"\n",
        "            # read from A\n            - name: C\n              value: \"$(A)/c\"\n            - name: B # second\n              value: \"2\"\n            # where the cache lives\n            - name: A\n              value: \"1\"\n",
    );
    assert_eq!(edited, expected);
    // A flow list is written again in flow style, in the new order.
    let flow = "spec:\n  template:\n    spec:\n      containers:\n        - name: web\n          env: [{name: A, value: \"1\"}, {name: B, value: \"2\"}]\n";
    let reorder = FieldEdit::Reorder {
        path: env_path(),
        order: vec![env_item("B"), env_item("A")],
    };
    let edited = edit_document(flow, 0, &[reorder]).expect("edit");
    let names: Vec<usize> = ["name: B", "name: A"]
        .iter()
        .filter_map(|n| edited.find(n))
        .collect();
    assert!(names.len() == 2 && names[0] < names[1], "{edited}");
}

/// Found by the editor's fuzz target: removing a document's last key wrote `{}` over the blank
/// lines and comments after it.
#[test]
fn removing_the_last_key_keeps_the_lines_after_it() {
    let remove_a = [remove(FieldPath::keys(&["a"]))];
    let cases = [
        ("a:\n\n\n\n ", "{}\n\n\n\n "),
        ("a: 1\n\n# end\n", "{}\n\n# end\n"),
        ("# top\na:\n  b: 1\n", "# top\n{}\n"),
    ];
    for (text, want) in cases {
        assert_eq!(edit_document(text, 0, &remove_a).unwrap(), want, "{text:?}");
    }
}

/// Found by the editor's fuzz target: removing a key took a blank line next to it along. Its own
/// lines go (and comments indented under it), nothing else.
#[test]
fn removing_a_key_takes_its_own_lines_only() {
    let cases = [
        ("a:\n\nitems: 1\n\n\n\n ", "items", "a:\n\n\n\n\n "),
        (
            "a:\n  x: 1\n  # inner\n# about b\n\nb: 2\n",
            "a",
            "# about b\n\nb: 2\n",
        ),
        ("a: 1\nb: 2", "b", "a: 1"),
    ];
    for (text, key, want) in cases {
        let out = edit_document(text, 0, &[remove(FieldPath::keys(&[key]))]).unwrap();
        assert_eq!(out, want, "{text:?} without {key}");
    }
}

/// A flow list whose strings are quoted keeps its quotes when it is written again or an item
/// is added (an accept rewrote a ClusterRole's `verbs: ["get", "list"]` as `[get, list, watch]`);
/// one written bare stays bare, and a mixed one quotes only what must be.
#[test]
fn a_flow_list_keeps_the_quoting_of_its_strings() {
    let role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: pod-reader\nrules:\n  - apiGroups: [\"\"]\n    resources: ['pods', 'pods/log']\n    verbs: [\"get\", \"list\"] # read only\n";
    let mut rules = FieldPath::keys(&["rules"]);
    rules.0.push(kdrift::manifest::edit::PathStep::Index(0));
    let verbs = FieldPath(
        rules
            .0
            .iter()
            .cloned()
            .chain([kdrift::manifest::edit::PathStep::Key("verbs".into())])
            .collect(),
    );
    let resources = FieldPath(
        rules
            .0
            .iter()
            .cloned()
            .chain([kdrift::manifest::edit::PathStep::Key("resources".into())])
            .collect(),
    );
    let edited = edit_document(
        role,
        0,
        &[
            set(verbs.clone(), json!(["get", "list", "watch"])),
            set(resources, json!(["pods", "pods/log", "pods/exec"])),
        ],
    )
    .expect("edit");
    assert!(
        edited.contains("    verbs: [\"get\", \"list\", \"watch\"] # read only\n"),
        "{edited}"
    );
    assert!(
        edited.contains("    resources: ['pods', 'pods/log', 'pods/exec']\n"),
        "{edited}"
    );
    // An item added to the list is quoted as its neighbours.
    let mut watch = verbs.clone();
    watch
        .0
        .push(kdrift::manifest::edit::PathStep::Value(json!("watch")));
    let added = edit_document(role, 0, &[set(watch, json!("watch"))]).expect("edit");
    assert!(
        added.contains("verbs: [\"get\", \"list\", \"watch\"]"),
        "{added}"
    );
    // Bare strings stay bare; a list mixing both styles quotes only what must be.
    for (before, after) in [
        ("verbs: [get, list]", "verbs: [get, list, watch]"),
        ("verbs: [\"get\", list]", "verbs: [get, list, watch]"),
    ] {
        let text = role.replace("verbs: [\"get\", \"list\"]", before);
        let edited = edit_document(
            &text,
            0,
            &[set(verbs.clone(), json!(["get", "list", "watch"]))],
        )
        .expect("edit");
        assert!(edited.contains(after), "{before}: {edited}");
    }
}
