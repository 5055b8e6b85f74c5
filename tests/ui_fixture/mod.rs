//! A small cluster state for UI tests: one Deployment in each rollout phase, with ReplicaSets,
//! pods and events, at a fixed `now` so ages are stable in snapshots.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent};
use jiff::Timestamp;
use kdrift::app::{App, Message, update};
use kdrift::cluster::client::NamespaceScope;
use kdrift::cluster::rows::{
    ConditionRow, EventRow, PodRow, ReplicaSetRow, WorkloadKind, WorkloadRow,
};
use kdrift::cluster::watch::{ClusterEvent, ClusterMessage, WatchHealth, WatchUpdate, WatchedKind};
use kdrift::manifest::ObjectKey;
use kdrift::ui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

pub mod drifted;

pub const NOW: i64 = 1_795_000_000;

pub fn ago(secs: i64) -> Option<Timestamp> {
    Some(Timestamp::from_second(NOW - secs).unwrap())
}

fn cond(kind: &str, status: &str, reason: &str, message: &str, secs: i64) -> ConditionRow {
    ConditionRow {
        kind: kind.into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        last_update: ago(secs),
    }
}

#[allow(clippy::too_many_arguments)]
pub fn deploy(
    ns: &str,
    name: &str,
    desired: i32,
    replicas: i32,
    updated: i32,
    available: i32,
    rev: i64,
) -> WorkloadRow {
    WorkloadRow {
        key: WorkloadKind::Deployment.key(ns, name),
        generation: rev,
        observed_generation: rev,
        desired,
        replicas,
        updated,
        ready: available,
        available,
        paused: false,
        owners: Vec::new(),
        facts: Default::default(),
        conditions: vec![cond(
            "Available",
            if available >= desired {
                "True"
            } else {
                "False"
            },
            if available >= desired {
                "MinimumReplicasAvailable"
            } else {
                "MinimumReplicasUnavailable"
            },
            "Deployment has minimum availability.",
            3600,
        )],
        revision: Some(rev),
        images: vec![format!("registry.example/{name}:{rev}.0").into()],
        created: ago(86_400 * 3),
        last_change: ago(3600),
    }
}

pub fn rs(
    ns: &str,
    deploy: &str,
    hash: &str,
    rev: i64,
    desired: i32,
    ready: i32,
    facts: &[(&str, &str)],
) -> ReplicaSetRow {
    ReplicaSetRow {
        key: ObjectKey::new("apps", "ReplicaSet", ns, &format!("{deploy}-{hash}")),
        owner_kind: WorkloadKind::Deployment,
        owner: Some(deploy.into()),
        revision: Some(rev),
        desired,
        replicas: desired,
        ready,
        available: ready,
        template: facts
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
        created: ago(600 * (10 - rev)),
    }
}

pub fn pod(
    ns: &str,
    owner: &str,
    suffix: &str,
    ready: bool,
    reason: Option<&str>,
    restarts: i32,
) -> PodRow {
    PodRow {
        key: ObjectKey::new("", "Pod", ns, &format!("{owner}-{suffix}")),
        owner_kind: Some(WorkloadKind::Deployment),
        owner: Some(owner.into()),
        revision_hash: None,
        phase: if ready || reason.is_some() {
            "Running".into()
        } else {
            "Pending".into()
        },
        ready_containers: u32::from(ready),
        containers: 1,
        reason: reason.map(str::to_string),
        restarts,
        created: ago(300),
        deleting: false,
        node: None,
        why: None,
        last_exit: None,
    }
}

pub fn event(
    ns: &str,
    kind: &str,
    name: &str,
    reason: &str,
    message: &str,
    warning: bool,
    secs: i64,
) -> EventRow {
    EventRow {
        key: ObjectKey::new("", "Event", ns, &format!("{name}.{reason}.{secs}")),
        involved_kind: kind.into(),
        involved_name: name.into(),
        reason: reason.into(),
        message: message.into(),
        warning,
        count: if warning { 4 } else { 1 },
        last_seen: ago(secs),
    }
}

/// Send as the current watcher of that kind would (table or detail generation).
pub fn send(app: &mut App, event: ClusterEvent) {
    let epoch = if event.is_table() {
        app.epoch
    } else {
        app.detail_epoch
    };
    update(app, Message::Cluster(ClusterMessage { epoch, event }));
}

/// The sample cluster: complete, progressing, stuck, paused and scaling Deployments.
pub fn sample_app() -> App {
    let mut app = App::new(
        "kind-dev",
        vec!["kind-dev".into()],
        NamespaceScope::All,
        Timestamp::from_second(NOW).unwrap(),
    );
    let web = deploy("shop", "web", 3, 3, 3, 3, 4);
    let mut cart = deploy("shop", "cart", 3, 4, 1, 3, 7);
    cart.conditions.push(cond(
        "Progressing",
        "True",
        "ReplicaSetUpdated",
        "ReplicaSet \"cart-7d9\" is progressing.",
        20,
    ));
    cart.last_change = ago(20);
    let mut checkout = deploy("shop", "checkout", 2, 3, 1, 2, 3);
    checkout.conditions.push(cond(
        "Progressing",
        "False",
        "ProgressDeadlineExceeded",
        "ReplicaSet \"checkout-5f6\" has timed out progressing.",
        240,
    ));
    checkout.last_change = ago(240);
    let mut batch = deploy("jobs", "batch", 2, 2, 2, 2, 2);
    batch.paused = true;
    let mut api = deploy("auth", "api", 5, 3, 3, 3, 1);
    api.last_change = ago(45);
    let rows = vec![web, cart, checkout, batch, api];
    send(
        &mut app,
        ClusterEvent::Workloads(
            kdrift::cluster::rows::WorkloadKind::Deployment,
            std::iter::once(WatchUpdate::Init)
                .chain(rows.into_iter().map(WatchUpdate::InitApply))
                .chain(std::iter::once(WatchUpdate::InitDone))
                .collect(),
        ),
    );
    // The StatefulSet and DaemonSet watchers list nothing in this cluster.
    for kind in [
        kdrift::cluster::rows::WorkloadKind::StatefulSet,
        kdrift::cluster::rows::WorkloadKind::DaemonSet,
    ] {
        send(
            &mut app,
            ClusterEvent::Workloads(kind, vec![WatchUpdate::Init, WatchUpdate::InitDone]),
        );
        send(
            &mut app,
            ClusterEvent::Health(WatchedKind::of(kind), WatchHealth::Connected),
        );
    }
    send(
        &mut app,
        ClusterEvent::Health(WatchedKind::Deployments, WatchHealth::Connected),
    );
    update(
        &mut app,
        Message::Resize {
            width: 120,
            height: 20,
        },
    );
    app
}

/// What the detail watchers of namespace "shop" report once the detail view is open.
pub fn send_detail_rows(app: &mut App) {
    send(
        app,
        ClusterEvent::ReplicaSets(vec![
            WatchUpdate::Apply(rs(
                "shop",
                "checkout",
                "5f6",
                3,
                1,
                0,
                &[
                    ("image checkout", "registry.example/checkout:3.0"),
                    ("env checkout LOG", "debug"),
                ],
            )),
            WatchUpdate::Apply(rs(
                "shop",
                "checkout",
                "4c2",
                2,
                2,
                2,
                &[("image checkout", "registry.example/checkout:2.0")],
            )),
            WatchUpdate::Apply(rs(
                "shop",
                "checkout",
                "1a1",
                1,
                0,
                0,
                &[("image checkout", "registry.example/checkout:1.0")],
            )),
        ]),
    );
    send(
        app,
        ClusterEvent::Pods(vec![
            WatchUpdate::Apply(pod(
                "shop",
                "checkout-5f6",
                "x8k2p",
                false,
                Some("CrashLoopBackOff"),
                6,
            )),
            WatchUpdate::Apply(pod("shop", "checkout-4c2", "a1b2c", true, None, 0)),
            WatchUpdate::Apply(pod("shop", "checkout-4c2", "d3e4f", true, None, 0)),
        ]),
    );
    send(
        app,
        ClusterEvent::Events(vec![
            WatchUpdate::Apply(event(
                "shop",
                "Deployment",
                "checkout",
                "ScalingReplicaSet",
                "Scaled up replica set checkout-5f6 to 1",
                false,
                900,
            )),
            WatchUpdate::Apply(event(
                "shop",
                "Pod",
                "checkout-5f6-x8k2p",
                "BackOff",
                "Back-off restarting failed container checkout",
                true,
                30,
            )),
            WatchUpdate::Apply(event(
                "shop",
                "Deployment",
                "web",
                "ScalingReplicaSet",
                "Scaled up replica set web-1 to 3",
                false,
                60,
            )),
        ]),
    );
    for kind in [
        WatchedKind::ReplicaSets,
        WatchedKind::ControllerRevisions,
        WatchedKind::Pods,
        WatchedKind::Events,
    ] {
        send(app, ClusterEvent::Health(kind, WatchHealth::Connected));
    }
}

pub fn key(app: &mut App, code: KeyCode) {
    update(app, Message::Key(KeyEvent::from(code)));
}

pub fn keys(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// Draw the app as the runtime does; returns the terminal for inspection.
pub fn draw(app: &mut App, theme: &Theme) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    app.prepare_frame();
    terminal
        .draw(|f| kdrift::ui::render(app, theme, f))
        .unwrap();
    terminal
}

/// The text of one screen line.
pub fn line(terminal: &Terminal<TestBackend>, y: u16) -> String {
    let buf = terminal.backend().buffer();
    (0..buf.area.width)
        .map(|x| buf[(x, y)].symbol().to_string())
        .collect()
}

/// The screen row (y) whose text contains `needle`.
pub fn find_line(terminal: &Terminal<TestBackend>, needle: &str) -> Option<u16> {
    (0..terminal.backend().buffer().area.height).find(|y| line(terminal, *y).contains(needle))
}
