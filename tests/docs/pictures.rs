//! The pictures of the README and docs/: the live view of the demo incident, the detail of its
//! stuck rollout, the log view, the drift diff and the accept preview, drawn by kdrift's own
//! renderer into a ratatui `TestBackend` (as the snapshot tests draw) and written as SVG
//! (`tests/svg`). The world is the demo's: the manifests of `demo/`, the objects the demo
//! cluster's store holds after its seed and the incident's out-of-band changes, at fixed times
//! (`tests/demo_incident`), so a picture changes only when the code or the demo does. The test
//! fails when a checked-in picture differs from what the code draws now;
//! `KDRIFT_UPDATE_PICTURES=1 cargo test --test docs pictures::` writes them again.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::demo_incident;
use crate::svg;

use base64::Engine as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent};
use demo_incident::{Incident, NOW, at, checkout_detail_rows, incident, with_status};
use jiff::SignedDuration;
use kdrift::app::{App, Command, Message, update};
use kdrift::cluster::client::NamespaceScope;
use kdrift::cluster::live::{LiveDaemonSet, LiveDeployment, LiveRow, LiveStatefulSet};
use kdrift::cluster::rows::WorkloadKind;
use kdrift::cluster::watch::{ClusterEvent, ClusterMessage, WatchHealth, WatchUpdate, WatchedKind};
use kdrift::gitops::{Owner, Policy, Reconciler};
use kdrift::manifest::ManifestIndex;
use kdrift::sim::resources::ResourceType;
use kdrift::ui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;

fn send(app: &mut App, event: ClusterEvent) {
    let epoch = if event.is_table() {
        app.epoch
    } else {
        app.detail_epoch
    };
    update(app, Message::Cluster(ClusterMessage { epoch, event }));
}

/// The live view of `kdrift demo` during the incident, `width`×`height`: the demo manifests,
/// every workload of the demo cluster with its drift, and the GitOps owners read.
fn live_view(incident: &Incident, width: u16, height: u16) -> App {
    let mut app = App::new(
        "kdrift-demo",
        vec!["kdrift-demo".into()],
        NamespaceScope::All,
        at(NOW),
    );
    update(&mut app, Message::Resize { width, height });
    // `demo/` as `kdrift --manifests demo` run in the crate reads it (the pictures name
    // `demo/shop/…`, whatever folder the test binary was started in); its kustomize application
    // is rendered by the kustomize or kubectl on PATH.
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).unwrap();
    let index = ManifestIndex::load(Path::new("demo"), "default");
    let problems: Vec<_> = index
        .problems()
        .into_iter()
        .filter(|p| !p.is_note())
        .collect();
    assert!(
        problems.is_empty(),
        "demo/ loads without problems (kustomize or kubectl on PATH renders demo/inventory): {problems:?}"
    );
    update(&mut app, Message::Manifests(Arc::new(index)));
    // The demo's Helm release, read from its record as the live view reads it at start.
    let releases = incident
        .list(ResourceType::SECRET)
        .into_iter()
        .filter(|s| s["type"] == "helm.sh/release.v1")
        .map(|s| {
            let text = s["data"]["release"].as_str().unwrap();
            let encoded = base64::engine::general_purpose::STANDARD
                .decode(text)
                .unwrap();
            Arc::new(kdrift::helm::record::decode(&encoded).unwrap())
        })
        .collect();
    let epoch = app.epoch;
    update(
        &mut app,
        Message::HelmReleases {
            epoch,
            releases: kdrift::helm::Releases {
                releases,
                ..Default::default()
            },
        },
    );
    let rows = |resource: ResourceType, decode: fn(Value) -> LiveRow| {
        std::iter::once(WatchUpdate::Init)
            .chain(
                incident
                    .list(resource)
                    .into_iter()
                    .map(|o| WatchUpdate::InitApply(decode(with_status(incident, o)))),
            )
            .chain(std::iter::once(WatchUpdate::InitDone))
            .collect::<Vec<_>>()
    };
    let deployments = rows(ResourceType::DEPLOYMENT, |o| {
        LiveRow::from_object(serde_json::from_value::<LiveDeployment>(o).unwrap())
    });
    let statefulsets = rows(ResourceType::STATEFUL_SET, |o| {
        LiveRow::from_object(serde_json::from_value::<LiveStatefulSet>(o).unwrap())
    });
    let daemonsets = rows(ResourceType::DAEMON_SET, |o| {
        LiveRow::from_object(serde_json::from_value::<LiveDaemonSet>(o).unwrap())
    });
    for (kind, updates) in [
        (WorkloadKind::Deployment, deployments),
        (WorkloadKind::StatefulSet, statefulsets),
        (WorkloadKind::DaemonSet, daemonsets),
    ] {
        send(&mut app, ClusterEvent::WorkloadsLive(kind, updates));
        send(
            &mut app,
            ClusterEvent::Health(WatchedKind::of(kind), WatchHealth::Connected),
        );
    }
    // The next frame asks for the owners the rows name; the runtime reads their Application
    // and Kustomization.
    let owners: Vec<Owner> = app
        .prepare_frame()
        .into_iter()
        .filter_map(|c| match c {
            Command::ReadReconcilers(owners) => Some(owners),
            _ => None,
        })
        .flatten()
        .collect();
    assert!(
        !owners.is_empty(),
        "the demo's workloads name their GitOps owners"
    );
    let read = owners
        .into_iter()
        .map(|owner| {
            let policy = match &owner {
                Owner::Argo { app, namespace, .. } => {
                    let ns = namespace.as_deref().unwrap_or("argocd");
                    Policy::of_application(&incident.application(ns, app))
                }
                Owner::FluxKustomization { name, namespace } => {
                    Policy::of_flux(&incident.kustomization(namespace, name))
                }
                Owner::FluxHelmRelease { .. } => panic!("the demo has no HelmRelease"),
            };
            let reconciler = Reconciler {
                owner: owner.clone(),
                policy: Ok(policy),
                found_in: None,
            };
            (owner, reconciler)
        })
        .collect();
    let epoch = app.epoch;
    update(&mut app, Message::Reconcilers { epoch, read });
    app
}

/// Draws `app` as the runtime does.
fn draw(app: &mut App) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    app.prepare_frame();
    terminal
        .draw(|f| kdrift::ui::render(app, &Theme::default_theme(), f))
        .unwrap();
    terminal
}

/// The screen's text, for a failing assertion's message.
fn text(terminal: &Terminal<TestBackend>) -> String {
    let buf = terminal.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn press(app: &mut App, code: KeyCode) -> Vec<Command> {
    update(app, Message::Key(KeyEvent::from(code)))
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// Filters the table down to `namespace/name` and keeps the filter: the row is selected.
fn select(app: &mut App, object: &str) {
    press(app, KeyCode::Char('/'));
    typed(app, object);
    press(app, KeyCode::Enter);
}

/// The live object as the runtime's GET returns it, for the diff and accept views.
fn live_object(incident: &Incident, namespace: &str, name: &str) -> kdrift::drift::LiveObject {
    let object = with_status(
        incident,
        incident.get(ResourceType::DEPLOYMENT, namespace, name),
    );
    kdrift::drift::LiveObject::from_value(object, kdrift::schema::Schemas::builtin()).unwrap()
}

/// `d` on checkout: the crashing image, set live by `kubectl set image`.
fn diff_view(incident: &Incident) -> App {
    let mut app = live_view(incident, 118, 17);
    select(&mut app, "shop/checkout");
    let key = match press(&mut app, KeyCode::Char('d')).as_slice() {
        [Command::FetchDiff(key, _)] => key.clone(),
        other => panic!("d asks for the live object, not {other:?}"),
    };
    let live = live_object(incident, "shop", "checkout");
    update(
        &mut app,
        Message::DiffFetched((key, Ok(Some(Box::new(live))))),
    );
    app
}

/// `a` on frontend, scaled by hand from 2 to 4: the field, and the diff of the file `enter`
/// writes and commits.
fn accept_view(incident: &Incident) -> App {
    use kdrift::app::accept::{AcceptFetched, FileText, GitState};
    let mut app = live_view(incident, 118, 23);
    select(&mut app, "shop/frontend");
    let (key, file) = match press(&mut app, KeyCode::Char('a')).as_slice() {
        [Command::PrepareAccept { key, file, .. }] => (key.clone(), file.clone()),
        other => panic!("a prepares the accept, not {other:?}"),
    };
    let text = std::fs::read_to_string(&file).unwrap();
    let fetched = AcceptFetched {
        key,
        live: Ok(Some(Box::new(live_object(incident, "shop", "frontend")))),
        file: Ok(FileText {
            path: Arc::from(file.as_path()),
            hash: kdrift::manifest::edit::ContentHash::of(text.as_bytes()),
            text: Arc::from(text),
        }),
        git: GitState::Repository {
            branch: Some("main".into()),
            dirty: false,
        },
        others: Vec::new(),
        chart: None,
    };
    assert!(update(&mut app, Message::AcceptReady(Box::new(fetched))).is_empty());
    app
}

/// `enter` on checkout: its detail, with the pods of both ReplicaSets (two crash-looping on the
/// crashing image, three of the image before still serving).
fn checkout_detail(incident: &Incident, width: u16, height: u16) -> App {
    let mut app = live_view(incident, width, height);
    select(&mut app, "shop/checkout");
    press(&mut app, KeyCode::Enter);
    let (replicasets, pods, events) = checkout_detail_rows(incident);
    send(
        &mut app,
        ClusterEvent::ReplicaSets(replicasets.into_iter().map(WatchUpdate::Apply).collect()),
    );
    send(
        &mut app,
        ClusterEvent::Pods(pods.into_iter().map(WatchUpdate::Apply).collect()),
    );
    send(
        &mut app,
        ClusterEvent::Events(events.into_iter().map(WatchUpdate::Apply).collect()),
    );
    for kind in [
        WatchedKind::ReplicaSets,
        WatchedKind::ControllerRevisions,
        WatchedKind::Pods,
        WatchedKind::Events,
    ] {
        send(&mut app, ClusterEvent::Health(kind, WatchHealth::Connected));
    }
    app
}

/// `l` on a crash-looping checkout pod: its log, as the demo's kubelet wrote it, and why it
/// ended.
fn log_view(incident: &Incident) -> App {
    use kdrift::cluster::logs::{LogEnd, LogEvent, LogLine};
    use kdrift::sim::controller::logs::Run;
    let mut app = checkout_detail(incident, 118, 12);
    let (epoch, request) = match press(&mut app, KeyCode::Char('l')).as_slice() {
        [Command::OpenLog { epoch, request }] => (*epoch, request.clone()),
        other => panic!("l opens the log, not {other:?}"),
    };
    let run = Run {
        seed: format!("{}/checkout", request.pod),
        container: "checkout".into(),
        image: "registry.example/shop/checkout:3.2.0-crash".into(),
        started: at(NOW) - SignedDuration::from_secs(17),
        crashes: true,
    };
    let lines: Vec<LogLine> = (0..run.written(at(NOW)))
        .map(|i| {
            let line = run.line(i);
            LogLine::from_bytes(&line.text, line.text.len() as u64)
        })
        .collect();
    for event in [
        LogEvent::Opened {
            containers: vec!["checkout".into()],
            container: "checkout".into(),
        },
        LogEvent::Streaming,
        LogEvent::Lines(lines),
        LogEvent::Ended(LogEnd::Terminated(
            "exit code 1 (Error); now CrashLoopBackOff".into(),
        )),
    ] {
        update(&mut app, Message::Log { epoch, event });
    }
    // w: the exception's long line wrapped.
    press(&mut app, KeyCode::Char('w'));
    app
}

/// A picture of the docs: where it goes, what it is, and how to make it.
struct Picture {
    file: &'static str,
    title: &'static str,
    description: &'static str,
    make: fn(&Incident) -> App,
    /// What the screen must show: the picture tells what its caption says.
    shows: &'static [&'static str],
}

const PICTURES: &[Picture] = &[
    Picture {
        file: "docs/img/live-view.svg",
        title: "kdrift demo: the live view",
        description: "The table of the demo cluster's workloads two minutes into the incident: \
            shop/checkout stuck (ProgressDeadlineExceeded) on a crashing image, seven workloads \
            drifted from git, each with its Argo CD or Flux owner.",
        make: |incident| {
            // j down to the stuck rollout, as one does.
            let mut app = live_view(incident, 160, 20);
            while app
                .table
                .selected_key()
                .is_some_and(|k| &*k.name != "checkout")
            {
                press(&mut app, KeyCode::Char('j'));
            }
            app
        },
        shows: &[
            "stuck: ProgressDeadlineExceeded",
            "argo:shop self-heal",
            "flux:platform 10m",
            "drifted 7",
        ],
    },
    Picture {
        file: "docs/img/diff.svg",
        title: "kdrift demo: d, the drift of shop/checkout",
        description: "The annotated diff of shop/checkout: the image changed live, marked with \
            the manager that changed it (kubectl-set) and when; Argo CD self-heal will undo it.",
        make: diff_view,
        shows: &[
            "3.2.0-crash  # kubectl-set",
            "Argo CD self-heal is on",
            "demo/shop/checkout.yaml",
        ],
    },
    Picture {
        file: "docs/img/accept.svg",
        title: "kdrift demo: a, accept shop/frontend into git",
        description: "The accept view of shop/frontend: spec.replicas 2 → 4 by kubectl scale, \
            checked, and the exact diff of shop/frontend.yaml that enter writes and commits.",
        make: accept_view,
        shows: &[
            "[x] spec.replicas",
            "-  replicas: 2",
            "+  replicas: 4",
            "commit on main",
        ],
    },
    Picture {
        file: "docs/img/detail.svg",
        title: "kdrift demo: enter, the detail of shop/checkout",
        description: "The detail of shop/checkout: stuck past its progress deadline, why (2 pods \
            CrashLoopBackOff, last exit 1), its two ReplicaSets and the image that changed \
            between them, its pods with the kubelet's back-off message, and the events.",
        make: |incident| checkout_detail(incident, 150, 42),
        shows: &[
            "2 pods CrashLoopBackOff: last exit 1 (Error)",
            "checkout:3.1.0 → registry.example/shop/checkout:3.2.0-crash",
            "Back-off restarting failed container checkout",
        ],
    },
    Picture {
        file: "docs/img/log.svg",
        title: "kdrift demo: l, the log of a crash-looping checkout pod",
        description: "The log view of a checkout pod: start-up, the exception and its stack, and \
            why the stream ended (exit code 1, now CrashLoopBackOff).",
        make: log_view,
        shows: &[
            "java.lang.NullPointerException",
            "container terminated: exit code 1 (Error); now CrashLoopBackOff",
        ],
    },
];

/// The picture's SVG as the code draws it now.
fn drawn(incident: &Incident, picture: &Picture) -> String {
    let mut app = (picture.make)(incident);
    let terminal = draw(&mut app);
    let screen = text(&terminal);
    for needle in picture.shows {
        assert!(
            screen.contains(needle),
            "{} does not show {needle:?}:\n{screen}",
            picture.file
        );
    }
    svg::render(
        terminal.backend().buffer(),
        picture.title,
        picture.description,
    )
}

#[test]
fn the_pictures_of_the_docs_are_what_the_renderer_draws_now() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let update_them = std::env::var_os("KDRIFT_UPDATE_PICTURES").is_some_and(|v| v == "1");
    let incident = incident();
    let mut stale = Vec::new();
    for picture in PICTURES {
        let svg = drawn(&incident, picture);
        let path = root.join(picture.file);
        if update_them {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &svg).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(old) if old == svg => {}
            Ok(old) => {
                let line = old
                    .lines()
                    .zip(svg.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(old.lines().count().min(svg.lines().count()));
                stale.push(format!(
                    "{} (first difference on line {})",
                    picture.file,
                    line + 1
                ));
            }
            Err(e) => stale.push(format!("{} ({e})", picture.file)),
        }
    }
    assert!(
        stale.is_empty(),
        "these pictures differ from what the code draws now:\n  {}\n\
         run `KDRIFT_UPDATE_PICTURES=1 cargo test --test docs pictures::` to refresh them, and \
         look at them before committing",
        stale.join("\n  ")
    );
}

/// The same world draws the same pictures: nothing of the wall clock, the temp folders or the
/// order of a map reaches them.
#[test]
fn the_pictures_are_the_same_on_every_run() {
    let (a, b) = (incident(), incident());
    for picture in PICTURES {
        assert_eq!(drawn(&a, picture), drawn(&b, picture), "{}", picture.file);
    }
}
