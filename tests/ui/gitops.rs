//! GitOps owners on screen: a row whose live object carries Argo CD's tracking id asks for its
//! Application once, then the table's GITOPS column marks it (`argo:shop self-heal`) and the
//! detail says what will happen to a live change; an unreadable owner is said as such.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use crate::ui_fixture;

use std::collections::BTreeMap;

use crossterm::event::KeyCode;
use kdrift::app::{Command, Message, update};
use kdrift::cluster::watch::{ClusterEvent, WatchUpdate};
use kdrift::gitops::{Owner, Policy, Reconciler};
use kdrift::ui::theme::Theme;
use ui_fixture::*;

fn shop() -> Owner {
    Owner::Argo {
        app: "shop".into(),
        namespace: None,
        by_label: false,
    }
}

/// The owner's Application or Kustomization, as read by the runtime for the app's watchers.
fn answer(
    app: &mut kdrift::app::App,
    owner: Owner,
    policy: Result<Policy, String>,
    found_in: Option<String>,
) {
    let epoch = app.epoch;
    update(
        app,
        Message::Reconcilers {
            epoch,
            read: BTreeMap::from([(
                owner.clone(),
                Reconciler {
                    owner,
                    policy,
                    found_in,
                },
            )]),
        },
    );
}

/// Opens the detail of `web` and looks for `text` on it.
fn detail_of_web_says(app: &mut kdrift::app::App, text: &str) -> bool {
    keys(app, "/web");
    key(app, KeyCode::Enter);
    key(app, KeyCode::Enter);
    let terminal = draw(app, &Theme::default_theme());
    find_line(&terminal, text).is_some()
}

#[test]
fn an_argo_owned_row_is_marked_and_its_detail_says_the_change_will_be_undone() {
    let mut app = sample_app();
    app.height = 40;
    app.width = 160;
    let mut web = deploy("shop", "web", 3, 3, 3, 3, 1);
    web.owners = vec![shop()];
    send(
        &mut app,
        ClusterEvent::Workloads(
            kdrift::cluster::rows::WorkloadKind::Deployment,
            vec![WatchUpdate::Apply(web)],
        ),
    );
    // The next frame asks for the Application, once.
    let asked = app.prepare_frame();
    assert!(
        asked
            .iter()
            .any(|c| matches!(c, Command::ReadReconcilers(o) if o == &[shop()])),
        "{asked:?}"
    );
    assert!(
        !app.prepare_frame()
            .iter()
            .any(|c| matches!(c, Command::ReadReconcilers(_)))
    );
    let app_json: serde_json::Value = serde_json::from_str(
        r#"{"spec":{"source":{"repoURL":"https://git.example/demo.git","path":"shop","targetRevision":"HEAD"},
            "syncPolicy":{"automated":{"prune":true,"selfHeal":true}}}}"#,
    )
    .unwrap();
    answer(
        &mut app,
        shop(),
        Ok(Policy::of_application(&app_json)),
        None,
    );
    let terminal = draw(&mut app, &Theme::default_theme());
    let header = line(&terminal, find_line(&terminal, "NAMESPACE").unwrap());
    assert!(header.contains("GITOPS"), "{header}");
    let row = line(&terminal, find_line(&terminal, " web ").unwrap());
    assert!(row.contains("argo:shop self-heal"), "{row}");
    // Rows without an owner leave the column empty.
    let other = line(&terminal, find_line(&terminal, " checkout ").unwrap());
    assert!(!other.contains("argo:"), "{other}");

    assert!(detail_of_web_says(
        &mut app,
        "⟳ Argo CD self-heal is on for app shop: this change will be reverted at its next sync"
    ));
}

#[test]
fn an_owner_that_cannot_be_read_is_said_so() {
    let mut app = sample_app();
    app.height = 40;
    app.width = 160;
    let flux = Owner::FluxKustomization {
        name: "platform".into(),
        namespace: "flux-system".into(),
    };
    let mut web = deploy("shop", "web", 3, 3, 3, 3, 1);
    web.owners = vec![flux.clone()];
    send(
        &mut app,
        ClusterEvent::Workloads(
            kdrift::cluster::rows::WorkloadKind::Deployment,
            vec![WatchUpdate::Apply(web)],
        ),
    );
    answer(
        &mut app,
        flux.clone(),
        Err("forbidden: kustomizations is forbidden".into()),
        None,
    );
    let terminal = draw(&mut app, &Theme::default_theme());
    let row = line(&terminal, find_line(&terminal, " web ").unwrap());
    assert!(row.contains("flux:platform ?"), "{row}");
    assert!(detail_of_web_says(
        &mut app,
        "managed by Flux Kustomization flux-system/platform (details not readable: forbidden"
    ));
}

/// The revert view of an object under a self-healing Argo CD app says what will happen to the
/// live change and that the revert is what a sync of the app does to it.
#[test]
fn a_revert_under_argo_cd_says_it_is_what_a_sync_does() {
    use ui_fixture::drifted;
    let dir = drifted::manifests();
    let mut app = drifted::drifted_app(dir.path(), false);
    app.height = 40;
    app.width = 160;
    // Argo CD's mark on the live object, as its controller writes it.
    let mut web = drifted::web_hotfixed();
    web["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] =
        "shop:apps/Deployment:shop/web".into();
    update(
        &mut app,
        Message::Cluster(kdrift::cluster::watch::ClusterMessage {
            epoch: 0,
            event: ClusterEvent::WorkloadsLive(
                kdrift::cluster::rows::WorkloadKind::Deployment,
                vec![WatchUpdate::Apply(drifted::live_row(&web))],
            ),
        }),
    );
    let self_heal: serde_json::Value =
        serde_json::from_str(r#"{"spec":{"syncPolicy":{"automated":{"selfHeal":true}}}}"#).unwrap();
    answer(
        &mut app,
        shop(),
        Ok(Policy::of_application(&self_heal)),
        Some("argocd".into()),
    );
    drifted::select(&mut app, "web");
    let commands = drifted::press(&mut app, KeyCode::Char('r'));
    assert!(
        commands
            .iter()
            .any(|c| matches!(c, Command::PreviewRevert { .. })),
        "{commands:?}"
    );
    let terminal = draw(&mut app, &Theme::default_theme());
    assert!(find_line(&terminal, "⟳ Argo CD self-heal is on for app shop").is_some());
    assert!(
        find_line(
            &terminal,
            "⟳ reverting has the effect of a sync of app shop for this object, which self-heal would do anyway"
        )
        .is_some()
    );
}

/// An answer asked for by the watchers of another connection (before a `:ctx` switch) is dropped.
#[test]
fn an_answer_about_another_connection_is_dropped() {
    let mut app = sample_app();
    let stale = app.epoch + 1;
    update(
        &mut app,
        Message::Reconcilers {
            epoch: stale,
            read: BTreeMap::from([(
                shop(),
                Reconciler {
                    owner: shop(),
                    policy: Err("from the other cluster".into()),
                    found_in: None,
                },
            )]),
        },
    );
    assert!(app.reconcilers.is_empty());
}

#[test]
fn an_instance_labels_app_is_shown_only_once_an_application_of_that_name_was_read() {
    let labelled = |app: &str| Owner::Argo {
        app: app.into(),
        namespace: None,
        by_label: true,
    };
    let mut app = sample_app();
    app.height = 40;
    app.width = 160;
    let mut web = deploy("shop", "web", 3, 3, 3, 3, 1);
    web.owners = vec![labelled("shop")];
    let mut cache = deploy("shop", "cache", 1, 1, 1, 1, 1);
    cache.owners = vec![labelled("redis")];
    send(
        &mut app,
        ClusterEvent::Workloads(
            kdrift::cluster::rows::WorkloadKind::Deployment,
            vec![WatchUpdate::Apply(web), WatchUpdate::Apply(cache)],
        ),
    );
    // Asked about, but not shown before the answer: it may be a Helm chart's label.
    assert!(
        app.prepare_frame()
            .iter()
            .any(|c| matches!(c, Command::ReadReconcilers(o) if o.len() == 2))
    );
    let terminal = draw(&mut app, &Theme::default_theme());
    let header = line(&terminal, find_line(&terminal, "NAMESPACE").unwrap());
    assert!(!header.contains("GITOPS"), "{header}");
    let app_json: serde_json::Value =
        serde_json::from_str(r#"{"spec":{"syncPolicy":{"automated":{"selfHeal":true}}}}"#).unwrap();
    answer(
        &mut app,
        labelled("shop"),
        Ok(Policy::of_application(&app_json)),
        Some("argocd".into()),
    );
    answer(
        &mut app,
        labelled("redis"),
        Err("no Argo CD Application \"redis\" (the label is another tool's)".into()),
        None,
    );
    let terminal = draw(&mut app, &Theme::default_theme());
    let row = line(&terminal, find_line(&terminal, " web ").unwrap());
    assert!(row.contains("argo:shop self-heal"), "{row}");
    let row = line(&terminal, find_line(&terminal, " cache ").unwrap());
    assert!(!row.contains("argo:"), "{row}");
}
