//! Tests of the accept choices, edits, message, live re-check and commit plan.
use serde_json::json;

use super::*;
use crate::drift::{Attribution, DriftPath, ObjectStatus};
use crate::manifest::Config;
use crate::manifest::edit::FieldPath;

fn item(
    class: Class,
    path: DriftPath,
    manifest: Option<serde_json::Value>,
    live: Option<serde_json::Value>,
) -> DriftItem {
    DriftItem {
        class,
        path,
        manifest,
        live,
        attribution: Attribution {
            manager: Some("kubectl".into()),
            operation: Some("Update".into()),
            time: Some("2026-11-22T03:00:00Z".into()),
            subresource: Some("scale".into()),
        },
        preceding: Default::default(),
    }
}

fn drift() -> ObjectDrift {
    let spec = DriftPath::default().child("spec");
    let container = spec
        .child("template")
        .child("spec")
        .child("containers")
        .item(json!({"name": "web"}).as_object().unwrap().clone(), Some(0));
    ObjectDrift {
        key: ObjectKey::new("apps", "Deployment", "shop", "web"),
        schema: crate::schema::builtin_kind("Deployment"),
        status: ObjectStatus::Drifted,
        items: vec![
            item(
                Class::Changed,
                spec.child("replicas"),
                Some(json!(2)),
                Some(json!(5)),
            ),
            item(
                Class::AddedLive,
                container
                    .child("env")
                    .item(json!({"name": "EXTRA"}).as_object().unwrap().clone(), None),
                None,
                Some(json!({"name": "EXTRA", "value": "1"})),
            ),
            item(
                Class::RemovedLive,
                container.child("args"),
                Some(json!(["-v"])),
                None,
            ),
            item(
                Class::Restarted,
                spec.child("template")
                    .child("metadata")
                    .child("annotations")
                    .child("kubectl.kubernetes.io/restartedAt"),
                None,
                Some(json!("2026-11-22T03:00:00Z")),
            ),
        ],
    }
}

fn paths(items: &[&DriftItem]) -> Vec<String> {
    items.iter().map(|i| i.path.to_string()).collect()
}

#[test]
fn all_drifted_fields_by_default_without_the_restart() {
    let d = drift();
    assert_eq!(
        paths(&select(&d, &[]).unwrap()),
        [
            "spec.replicas",
            "spec.template.spec.containers[name=web].env[name=EXTRA]",
            "spec.template.spec.containers[name=web].args",
        ]
    );
}

#[test]
fn named_fields_as_check_prints_them_or_as_pointers() {
    let d = drift();
    let fields = vec![
        "spec.template.spec.containers[name=web].env[name=EXTRA]".to_owned(),
        "/spec/replicas".to_owned(),
        "spec.template.metadata.annotations[\"kubectl.kubernetes.io/restartedAt\"]".to_owned(),
    ];
    let chosen = select(&d, &fields).unwrap();
    assert_eq!(chosen.len(), 3, "{:?}", paths(&chosen));
    assert_eq!(chosen[1].path.to_string(), "spec.replicas");
    assert_eq!(chosen[2].class, Class::Restarted);
}

#[test]
fn an_unknown_field_lists_the_drifted_ones() {
    let d = drift();
    let err = select(&d, &["spec.paused".to_owned()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("no drifted field \"spec.paused\""), "{err}");
    assert!(
        err.contains("spec.replicas, spec.template.spec.containers[name=web].env[name=EXTRA]"),
        "{err}"
    );
}

#[test]
fn autoscaled_replicas_are_never_accepted() {
    let mut d = drift();
    d.items[0].class = Class::Autoscaled;
    let all = select(&d, &[]).unwrap();
    assert!(!paths(&all).contains(&"spec.replicas".to_owned()));
    let err = select(&d, &["spec.replicas".to_owned()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("set by the autoscaler, not drift"), "{err}");
}

#[test]
fn edits_set_live_values_and_remove_what_is_gone_live() {
    let d = drift();
    let edits: Vec<FieldEdit> = d.items.iter().map(field_edit).collect();
    assert_eq!(
        edits[0],
        FieldEdit::Set {
            path: FieldPath::keys(&["spec", "replicas"]),
            value: json!(5)
        }
    );
    // A list item added live goes where it is live: after the first of the items that
    // precede it there which the manifest has, else first.
    assert_eq!(
        edits[1],
        FieldEdit::InsertItem {
            path: FieldPath::keys(&["spec", "template", "spec", "containers"])
                .item("name", "web")
                .key("env")
                .item("name", "EXTRA"),
            value: json!({"name": "EXTRA", "value": "1"}),
            after: Vec::new(),
        }
    );
    assert_eq!(
        edits[2],
        FieldEdit::Remove {
            path: FieldPath::keys(&["spec", "template", "spec", "containers"])
                .item("name", "web")
                .key("args"),
        }
    );
}

#[test]
fn message_names_the_scale_subresource_and_m_replaces_the_subject() {
    let d = drift();
    let fields = vec![accepted_field(&d.items[0])];
    let generated = message(&d.key, &fields, None);
    assert!(
        generated.starts_with("kdrift: accept live spec.replicas of deployment/shop/web\n"),
        "{generated}"
    );
    assert!(
        generated.contains("spec.replicas: 2 → 5 (by kubectl via /scale at 2026-11-22T03:00:00Z)"),
        "{generated}"
    );
    let custom = message(&d.key, &fields, Some("Keep web at 5 replicas"));
    let mut lines = custom.lines();
    assert_eq!(lines.next(), Some("Keep web at 5 replicas"));
    assert!(custom.contains("spec.replicas: 2 → 5"), "{custom}");
}

#[test]
fn the_view_offers_drift_checked_and_a_restart_unchecked_never_autoscaled() {
    let mut d = drift();
    d.items[0].class = Class::Autoscaled;
    let offered: Vec<(String, bool)> = offered(&d)
        .into_iter()
        .map(|(item, checked)| (item.path.to_string(), checked))
        .collect();
    assert_eq!(
        offered,
        [
            (
                "spec.template.spec.containers[name=web].env[name=EXTRA]".to_owned(),
                true
            ),
            (
                "spec.template.spec.containers[name=web].args".to_owned(),
                true
            ),
            (
                "spec.template.metadata.annotations[\"kubectl.kubernetes.io/restartedAt\"]"
                    .to_owned(),
                false
            ),
        ]
    );
}

#[test]
fn a_live_value_that_moved_since_it_was_shown_is_refused() {
    let shown = drift();
    let chosen = vec![shown.items[0].clone(), shown.items[2].clone()];
    assert!(check_still_live(&chosen, &shown).is_ok());

    let mut now = drift();
    now.items[0].live = Some(json!(6));
    let err = check_still_live(&chosen, &now).unwrap_err().to_string();
    assert_eq!(
        err,
        "spec.replicas changed live since it was shown (5 → 6); press a again"
    );

    // Scaled back to the manifest's value: no longer drift at all.
    let mut now = drift();
    now.items.remove(0);
    let err = check_still_live(&chosen, &now).unwrap_err().to_string();
    assert!(err.contains("(5 → 2 again)"), "{err}");
    // A field not chosen may move freely.
    let mut now = drift();
    now.items[1].live = Some(json!({"name": "EXTRA", "value": "2"}));
    assert!(check_still_live(&chosen, &now).is_ok());
}

#[test]
fn outcomes_read_as_one_line() {
    let committed = Outcome::Committed {
        short_hash: "1a2b3c4".into(),
        branch: Some("main".into()),
        subject: "kdrift: accept live spec.replicas of deployment/shop/web".into(),
        pushed: None,
        submodule: None,
    };
    assert_eq!(
        committed.describe("shop/web.yaml"),
        "committed 1a2b3c4 on main: kdrift: accept live spec.replicas of deployment/shop/web"
    );
    let Outcome::Committed { subject, .. } = committed else {
        unreachable!()
    };
    let refused = Outcome::Committed {
        short_hash: "1a2b3c4".into(),
        branch: Some("main".into()),
        subject,
        pushed: Some(Err("git push refused: rejected (fetch first)".into())),
        submodule: None,
    };
    assert!(
        refused
            .describe("shop/web.yaml")
            .ends_with("deployment/shop/web; NOT pushed: git push refused: rejected (fetch first)")
    );
    let in_submodule = Outcome::Committed {
        short_hash: "1a2b3c4".into(),
        branch: Some("main".into()),
        subject: "s".into(),
        pushed: None,
        submodule: Some(crate::git::Submodule {
            superproject: "/src/platform".into(),
            path: "k8s".into(),
        }),
    };
    assert_eq!(
        in_submodule.describe("shop/web.yaml"),
        "committed 1a2b3c4 on main in the submodule k8s: s; the superproject /src/platform still records the submodule's previous commit: to record this one, git -C /src/platform add k8s and commit there"
    );
    assert_eq!(
        Outcome::NotARepository.describe("shop/web.yaml"),
        "wrote shop/web.yaml; not in a git repository, so nothing was committed"
    );
}

#[test]
fn the_commit_plan_takes_the_branch_from_the_template() {
    let d = drift();
    let chosen = vec![&d.items[0]];
    let config = Config {
        accept_branch: Some("hotfix/{namespace}-{name}".into()),
        ..Config::default()
    };
    let plan = CommitPlan::new(&d.key, &chosen, None, &config);
    assert_eq!(plan.branch.as_deref(), Some("hotfix/shop-web"));
    assert_eq!(
        plan.subject(),
        "kdrift: accept live spec.replicas of deployment/shop/web"
    );
    assert_eq!(
        CommitPlan::new(&d.key, &chosen, None, &Config::default()).branch,
        None
    );
}

#[test]
fn nothing_was_written_is_said_once() {
    let error = AcceptError::from(crate::manifest::edit::PrepareError::Edit {
        file: std::path::PathBuf::from("web.yaml"),
        source: crate::manifest::edit::EditError::OtherDocumentChanged { other: 1 },
    });
    assert_eq!(
        error.to_string().matches("nothing was written").count(),
        1,
        "{error}"
    );
    let error = AcceptError::from(crate::manifest::edit::PrepareError::Read {
        file: std::path::PathBuf::from("web.yaml"),
        source: std::io::Error::other("gone"),
    });
    assert_eq!(
        error.to_string().matches("nothing was written").count(),
        1,
        "{error}"
    );
}

#[test]
fn a_file_that_cannot_be_written_puts_back_the_files_written_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("patch.yaml"), "replicas: 2\n").unwrap();
    std::fs::write(root.join("base.yaml"), "image: a\n").unwrap();
    let first = PreparedEdit::replace(
        &root.join("patch.yaml"),
        "replicas: 2\n".into(),
        "replicas: 5\n".into(),
    );
    // Changed on disk after the checks, before its turn (an editor saving it): refused then.
    let second = PreparedEdit::replace(
        &root.join("base.yaml"),
        "image: old\n".into(),
        "image: b\n".into(),
    );
    let error = commit::write_all(root, &[first, second]).unwrap_err();
    assert!(
        matches!(
            error,
            AcceptError::Write(crate::manifest::edit::WriteError::ChangedOnDisk { .. })
        ),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("patch.yaml")).unwrap(),
        "replicas: 2\n",
        "the first file is as it was"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("base.yaml")).unwrap(),
        "image: a\n"
    );
}
