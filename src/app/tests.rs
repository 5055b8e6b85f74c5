#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod stall_tests {
    use crate::app::*;
    use crate::cluster::rows::{KindFacts, WorkloadKind, WorkloadRow};
    use crate::cluster::watch::{ClusterEvent, ClusterMessage, WatchUpdate};
    use crate::rollout::RolloutPhase;
    use crate::rollout::workloads::{DaemonSetFacts, STALL_AFTER};

    /// A DaemonSet rolling onto 3 nodes, `updated` of them done and `ready` ready.
    fn daemonset(updated: i32, ready: i32) -> WorkloadRow {
        let facts = DaemonSetFacts {
            generation: 2,
            observed_generation: 2,
            desired: 3,
            current: 3,
            ready,
            updated,
            available: ready,
            misscheduled: 0,
            on_delete: false,
            max_unavailable: None,
            max_surge: None,
        };
        WorkloadRow {
            key: WorkloadKind::DaemonSet.key("platform", "agent"),
            generation: 2,
            observed_generation: 2,
            desired: 3,
            replicas: 3,
            updated,
            ready,
            available: ready,
            facts: KindFacts::DaemonSet(Box::new(facts)),
            paused: false,
            owners: Vec::new(),
            conditions: Vec::new(),
            revision: None,
            images: Vec::new(),
            created: None,
            last_change: None,
        }
    }

    fn send(app: &mut App, row: WorkloadRow) {
        let kind = row.kind();
        update(
            app,
            Message::Cluster(ClusterMessage {
                epoch: 0,
                event: ClusterEvent::Workloads(kind, vec![WatchUpdate::Apply(row)]),
            }),
        );
    }

    fn phase(app: &mut App) -> RolloutPhase {
        app.prepare_frame();
        let key = WorkloadKind::DaemonSet.key("platform", "agent");
        app.cache.workloads.get(&key).unwrap().rollout.phase.clone()
    }

    #[test]
    fn owners_are_read_once_then_all_again_every_refresh() {
        let mut app = app();
        let reads = |commands: Vec<Command>| -> Vec<Vec<crate::gitops::Owner>> {
            commands
                .into_iter()
                .filter_map(|c| match c {
                    Command::ReadReconcilers(owners) => Some(owners),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(app.next_reconciler_read(), None);
        let shop = crate::gitops::Owner::Argo {
            app: "shop".into(),
            namespace: None,
            by_label: false,
        };
        let platform = crate::gitops::Owner::FluxKustomization {
            name: "platform".into(),
            namespace: "flux-system".into(),
        };
        note_owners(
            &mut app.owners_asked,
            &mut app.owners_pending,
            std::slice::from_ref(&shop),
        );
        assert_eq!(reads(app.prepare_frame()), [vec![shop.clone()]]);
        assert!(reads(app.prepare_frame()).is_empty());
        // A new owner is asked about at once, alone.
        app.now = app
            .now
            .saturating_add(jiff::SignedDuration::from_secs(30))
            .unwrap();
        note_owners(
            &mut app.owners_asked,
            &mut app.owners_pending,
            std::slice::from_ref(&platform),
        );
        assert_eq!(reads(app.prepare_frame()), [vec![platform.clone()]]);
        let due = app.next_reconciler_read().unwrap();
        assert_eq!(due, app.now.saturating_add(RECONCILER_REFRESH).unwrap());
        app.now = due;
        let mut again = reads(app.prepare_frame());
        again.iter_mut().for_each(|o| o.sort());
        let mut both = vec![shop, platform];
        both.sort();
        assert_eq!(again, [both]);
        assert!(reads(app.prepare_frame()).is_empty());
    }

    #[test]
    fn the_pod_cursor_follows_its_pod_when_others_come_and_go() {
        let mut cursor = PodCursor::default();
        let pods = ["web-c", "web-b", "web-a"];
        assert_eq!(cursor.position(pods.into_iter()), 0);
        cursor.select(1, pods.into_iter());
        assert_eq!(cursor.position(pods.into_iter()), 1);
        // A newer pod comes first: the selection stays on web-b.
        let pods = ["web-d", "web-c", "web-b", "web-a"];
        assert_eq!(cursor.position(pods.into_iter()), 2);
        // web-b goes: the old place stands in, within the list.
        assert_eq!(cursor.position(["web-d", "web-c", "web-a"].into_iter()), 1);
        assert_eq!(cursor.position(["web-d"].into_iter()), 0);
        assert_eq!(cursor.position(std::iter::empty()), 0);
    }

    pub(super) fn app() -> App {
        App::new(
            "dev",
            vec!["dev".into()],
            NamespaceScope::All,
            Timestamp::now(),
        )
    }

    #[test]
    fn a_daemonset_without_progress_for_the_stall_time_is_stuck_and_progress_clears_it() {
        let mut app = app();
        send(&mut app, daemonset(1, 2));
        assert_eq!(phase(&mut app), RolloutPhase::Progressing);
        let deadline = app.next_stall().unwrap();
        // An update that moves nothing keeps the deadline.
        send(&mut app, daemonset(1, 2));
        assert_eq!(app.next_stall(), Some(deadline));
        app.now = deadline
            .checked_sub(jiff::SignedDuration::from_secs(1))
            .unwrap();
        assert_eq!(phase(&mut app), RolloutPhase::Progressing);
        app.now = deadline;
        let RolloutPhase::Stuck { reason, message } = phase(&mut app) else {
            panic!("not stuck");
        };
        assert_eq!(reason, "NoProgress");
        assert_eq!(message, "no progress for 10m: 1 of 3 updated, 2 ready");
        assert_eq!(app.table.stuck, 1);
        // The frame that showed it asked the pods why; their answer names the reason.
        let key = WorkloadKind::DaemonSet.key("platform", "agent");
        update(
            &mut app,
            Message::StallsExplained(vec![(
                key.clone(),
                Some("1 pod CrashLoopBackOff: last exit 1 (Error)".into()),
            )]),
        );
        let RolloutPhase::Stuck { reason, message } = phase(&mut app) else {
            panic!("not stuck");
        };
        assert_eq!(reason, "CrashLoopBackOff");
        assert!(
            message.ends_with("ready; 1 pod CrashLoopBackOff: last exit 1 (Error)"),
            "{message}"
        );
        // An update that moves nothing keeps it stuck, with its reason.
        send(&mut app, daemonset(1, 2));
        assert_eq!(phase(&mut app).label(), "stuck: CrashLoopBackOff");
        // Progress (one more pod updated) starts the clock again.
        send(&mut app, daemonset(2, 2));
        assert_eq!(phase(&mut app), RolloutPhase::Progressing);
        assert_eq!(app.table.stuck, 0);
        assert!(app.next_stall().unwrap() > deadline);
        // A complete rollout has no deadline.
        send(&mut app, daemonset(3, 3));
        assert_eq!(phase(&mut app), RolloutPhase::Complete);
        assert_eq!(app.next_stall(), None);
        assert_eq!(STALL_AFTER.as_secs(), 600);
    }

    #[test]
    fn the_frame_that_shows_a_stall_asks_its_pods_why() {
        let mut app = app();
        send(&mut app, daemonset(1, 2));
        app.now = app.next_stall().unwrap();
        let commands = app.prepare_frame();
        let [Command::ExplainStalls(stalled)] = commands.as_slice() else {
            panic!("{commands:?}");
        };
        assert_eq!(
            stalled,
            &[Stalled {
                key: WorkloadKind::DaemonSet.key("platform", "agent"),
                desired: 3,
                ready: 2
            }]
        );
        assert!(app.prepare_frame().is_empty(), "asked once");
    }

    #[test]
    fn a_deployment_never_stalls_by_kdrift_clock() {
        let mut app = app();
        let mut row = daemonset(1, 2);
        row.key = crate::cluster::rows::WorkloadKind::Deployment.key("shop", "web");
        row.facts = KindFacts::Deployment;
        row.replicas = 4;
        send(&mut app, row);
        assert_eq!(app.next_stall(), None);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod row_kind_tests {
    use crate::app::*;
    use crate::cluster::rows::WorkloadKind;

    #[test]
    fn a_statefulset_key_finds_its_row_drift_not_a_deployment_of_that_name() {
        let mut app = super::stall_tests::app();
        let sts = WorkloadKind::StatefulSet.key("payments", "db");
        app.ledger.set_summary(&sts, DriftSummary::Fields(1));
        app.ledger.set_summary(
            &crate::cluster::rows::WorkloadKind::Deployment.key("payments", "db"),
            DriftSummary::InSync,
        );
        let manifest = ObjectKey::new("apps", "StatefulSet", "payments", "db");
        assert_eq!(manifest, sts);
        assert_eq!(app.drift_of(&sts), &DriftSummary::Fields(1));
        assert_eq!(app.drift_of_object(&manifest), DriftSummary::Fields(1));
        let deployment = ObjectKey::new("apps", "Deployment", "payments", "db");
        assert_eq!(app.drift_of_object(&deployment), DriftSummary::InSync);
    }
}

#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod notice_tests {
    use crate::app::*;

    fn notice(app: &mut App, text: &str, error: bool) {
        update(
            app,
            Message::Notice(Flash {
                text: text.into(),
                error,
            }),
        );
    }

    /// `:ctx gone` fails, then the manifests' sources are found: the error stays until a key.
    #[test]
    fn a_note_does_not_cover_an_error_still_shown_but_an_error_covers_a_note() {
        let mut app = super::stall_tests::app();
        notice(&mut app, "context \"gone\": connection refused", true);
        notice(&mut app, "manifests from Argo CD apps: argocd/shop", false);
        assert_eq!(
            app.flash.as_ref().map(|f| f.text.as_str()),
            Some("context \"gone\": connection refused")
        );
        app.flash = None;
        notice(&mut app, "manifests from Argo CD apps: argocd/shop", false);
        notice(&mut app, "theme file: line 3", true);
        assert_eq!(
            app.flash.as_ref().map(|f| (f.text.as_str(), f.error)),
            Some(("theme file: line 3", true))
        );
        notice(&mut app, "a newer error", true);
        assert_eq!(
            app.flash.as_ref().map(|f| f.text.as_str()),
            Some("a newer error")
        );
    }
}
