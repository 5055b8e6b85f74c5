//! The limits bench's cases, each run in a child process: `FIG\tlabel\tvalue\tunit` lines for
//! the parent to take medians of, other lines as notes, `ASK\twhat` for a watch event.
use std::io::BufRead;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossterm::event::{KeyCode, KeyEvent};
use jiff::Timestamp;
use kdrift::app::{App, DriftSummary, Message, Screen, update};
use kdrift::cli::CommonArgs;
use kdrift::cluster::client::{NamespaceScope, connect};
use kdrift::cluster::live::{LiveDeployment, LiveRow};
use kdrift::cluster::rows::WorkloadKind;
use kdrift::cluster::watch::{ClusterEvent, ClusterMessage, WatchUpdate};
use kdrift::drift::LiveObject;
use kdrift::manifest::ManifestIndex;
use kdrift::manifest::kustomize::Selection;
use kdrift::manifest::reload::read_change;
use kdrift::runtime::event_loop::Event;
use kdrift::schema::Schemas;
use kdrift::ui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};

use super::inputs::{CONTAINERS, EVENT_OBJECT, FILES, NAMESPACES};
use super::measure::{heap_mb, rss_mb};
use super::session;

fn fig(label: &str, value: f64, unit: &str) {
    println!("FIG\t{label}\t{value}\t{unit}");
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The highest resident memory of this process so far (VmHWM), in MB.
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb * 1024.0 / 1e6)
}

/// The median time of `rounds` runs of `work`.
fn median_of(rounds: usize, mut work: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            work();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

pub fn run(case: &str, dir: &Path) {
    match case {
        "files" => files(&dir.join(case)),
        "many-docs" | "one-doc" | "list" => one_file(case, &dir.join(case)),
        "namespaces" => namespaces(dir),
        "event" => event(dir),
        "containers" => containers(&dir.join(case)),
        _ => panic!("no case {case}"),
    }
}

/// Loads `root` as the live view does at start; figures under `what`.
fn load(root: &Path, what: &str) -> ManifestIndex {
    let rss = rss_mb();
    let t = Instant::now();
    let index = ManifestIndex::load_with(root, "default", Selection::default());
    fig(&format!("{what}: load"), ms(t.elapsed()), "ms");
    fig(
        &format!("{what}: resident memory after, peak (from start)"),
        rss_mb() - rss,
        &format!("MB, peak +{:.1} MB", peak_rss_mb() - rss),
    );
    fig(&format!("{what}: heap held by the index"), heap_mb(), "MB");
    index
}

fn files(root: &Path) {
    let mut index = load(root, &format!("{FILES} files"));
    assert_eq!(index.len(), FILES);
    let file = |i: usize| root.join(format!("team-{:03}/app-{i:05}.yaml", i % 200));
    let rewrite = |i: usize, replicas: &str| {
        let text = std::fs::read_to_string(file(i)).unwrap();
        let text = text
            .replace("replicas: 3", replicas)
            .replace("replicas: 4", replicas);
        std::fs::write(file(i), text).unwrap();
    };
    let mut round = 0;
    let one = median_of(5, || {
        round += 1;
        rewrite(round * 37, "replicas: 4");
        let change = read_change(root, "default", &Selection::default(), &file(round * 37));
        assert_eq!(index.apply_changes(vec![change]).len(), 1);
    });
    fig(
        "one file changed: read + applied to the index",
        ms(one),
        "ms",
    );
    for i in 0..FILES {
        rewrite(i, "replicas: 4");
    }
    let t = Instant::now();
    let changes: Vec<_> = (0..FILES)
        .map(|i| read_change(root, "default", &Selection::default(), &file(i)))
        .collect();
    let read = t.elapsed();
    let t = Instant::now();
    let touched = index.apply_changes(changes);
    let applied = t.elapsed();
    assert_eq!(touched.len(), FILES);
    fig("every file changed (branch switch): read", ms(read), "ms");
    fig(
        "every file changed: applied to the index",
        ms(applied),
        "ms",
    );
}

fn one_file(case: &str, root: &Path) {
    let size: u64 = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name() != "over.yaml")
        .map(|e| e.metadata().unwrap().len())
        .sum();
    let what = match case {
        "many-docs" => "9 MB file of Deployment documents",
        "list" => "9 MB kind: List file",
        _ => "9 MB ConfigMap document",
    };
    println!("{case}: {size} bytes");
    let index = load(root, what);
    fig(&format!("{what}: objects"), index.len() as f64, "");
    for problem in index.problems() {
        println!("{case}: {problem}");
    }
}

/// What the live cases record after each frame.
#[derive(Default)]
struct Live {
    first_row: Option<Duration>,
    all_rows: Option<Duration>,
    /// The row of the `event` case's Deployment and its drift.
    event_row: Option<(i32, DriftSummary)>,
    /// The frame the `event` case waits for: the row's replicas, then when it came.
    waiting: Option<i32>,
    seen: Option<SystemTime>,
    picker_listed: Option<Duration>,
}

fn on_frame(s: &mut Live, app: &App, since: Duration) {
    let rows = app.cache.workloads.len();
    if s.first_row.is_none() && rows > 0 {
        s.first_row = Some(since);
    }
    if s.all_rows.is_none() && rows > NAMESPACES {
        s.all_rows = Some(since);
    }
    let key = kdrift::cluster::rows::WorkloadKind::Deployment.key("shop", EVENT_OBJECT);
    if let Some(entry) = app.cache.workloads.get(&key) {
        s.event_row = Some((entry.row.desired, app.drift_of(&key).clone()));
        if s.waiting == Some(entry.row.desired) && s.seen.is_none() {
            s.seen = Some(SystemTime::now());
        }
    }
    if s.picker_listed.is_none()
        && let Screen::Pick(picker) = &app.screen
        && picker.visible().len() > NAMESPACES
    {
        s.picker_listed = Some(since);
    }
}

fn common(dir: &Path, manifests: &Path, namespace: Option<&str>) -> CommonArgs {
    std::fs::create_dir_all(manifests).unwrap();
    CommonArgs {
        kubeconfig: Some(dir.join("kubeconfig")),
        all_namespaces: namespace.is_none(),
        namespace: namespace.map(str::to_owned),
        manifests: Some(manifests.to_path_buf()),
        ..CommonArgs::default()
    }
}

async fn until(stats: &Mutex<Live>, what: &str, done: impl Fn(&Live) -> bool) {
    let t = Instant::now();
    while !done(&stats.lock().unwrap()) {
        tokio::time::sleep(Duration::from_millis(2)).await;
        assert!(t.elapsed() < Duration::from_secs(120), "never: {what}");
    }
}

fn keys(tx: &tokio::sync::mpsc::UnboundedSender<Event>, keys: &[KeyCode]) {
    for key in keys {
        tx.send(Event::App(Message::Key(KeyEvent::from(*key))))
            .unwrap();
    }
}

fn namespaces(dir: &Path) {
    let common = common(dir, &dir.join("namespaces"), None);
    let rt = kdrift::cluster::tokio_runtime().unwrap();
    let rss_start = rss_mb();
    rt.block_on(async {
        let start = Instant::now();
        let conn = connect(&common.connection()).await.unwrap();
        let stats = Arc::new(Mutex::new(Live::default()));
        let script = |tx: tokio::sync::mpsc::UnboundedSender<Event>| {
            let stats = stats.clone();
            async move {
                until(&stats, "every row", |s| s.all_rows.is_some()).await;
                tokio::time::sleep(Duration::from_secs(2)).await;
                {
                    let s = stats.lock().unwrap();
                    fig(
                        &format!("{NAMESPACES} namespaces: first row"),
                        ms(s.first_row.unwrap()),
                        "ms",
                    );
                    fig("every row", ms(s.all_rows.unwrap()), "ms");
                }
                fig(
                    "resident memory, steady (process)",
                    rss_mb(),
                    &format!("MB ({rss_start:.1} MB at start)"),
                );
                fig("heap in use", heap_mb(), "MB");
                let typed = start.elapsed();
                keys(
                    &tx,
                    &[
                        KeyCode::Char(':'),
                        KeyCode::Char('n'),
                        KeyCode::Char('s'),
                        KeyCode::Enter,
                    ],
                );
                until(&stats, "the picker", |s| s.picker_listed.is_some()).await;
                let listed = stats.lock().unwrap().picker_listed.unwrap();
                fig(
                    ":ns → the picker listing every namespace (a list call)",
                    ms(listed - typed),
                    "ms",
                );
                keys(&tx, &[KeyCode::Esc]);
                fig("peak resident memory (process)", peak_rss_mb(), "MB");
            }
        };
        session::drive_with(&common, conn, start, stats.clone(), on_frame, script).await;
    });
    // The picker's frame alone, on an app given the namespaces.
    let mut app = App::new("bench", vec![], NamespaceScope::All, Timestamp::now());
    for key in [':', 'n', 's'] {
        update(&mut app, Message::Key(KeyEvent::from(KeyCode::Char(key))));
    }
    update(&mut app, Message::Key(KeyEvent::from(KeyCode::Enter)));
    let names: Vec<String> = (0..NAMESPACES).map(super::inputs::namespace).collect();
    update(&mut app, Message::Namespaces(Ok(names)));
    assert!(matches!(app.screen, Screen::Pick(_)));
    fig(
        ":ns picker frame, 5,001 choices, 200×50",
        ms(frame_time(&mut app)),
        "ms",
    );
    for key in ['/', '4', '9'] {
        update(&mut app, Message::Key(KeyEvent::from(KeyCode::Char(key))));
    }
    fig(
        ":ns picker frame, filtered by \"49\"",
        ms(frame_time(&mut app)),
        "ms",
    );
}

/// The median time of 30 frames of `app` at 200×50.
fn frame_time(app: &mut App) -> Duration {
    update(
        app,
        Message::Resize {
            width: 200,
            height: 50,
        },
    );
    let theme = Theme::default_theme();
    let mut term = Terminal::new(TestBackend::new(200, 50)).unwrap();
    median_of(30, || {
        app.prepare_frame();
        term.draw(|f| kdrift::ui::render(app, &theme, f)).unwrap();
    })
}

/// Asks the parent for the 3 MB event `what`; the wall time it was written at.
fn ask(what: &str) -> SystemTime {
    println!("ASK\t{what}");
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).unwrap();
    let nanos: u64 = line.trim().parse().unwrap();
    UNIX_EPOCH + Duration::from_nanos(nanos)
}

fn event(dir: &Path) {
    let common = common(dir, &dir.join("event"), Some("shop"));
    let rt = kdrift::cluster::tokio_runtime().unwrap();
    rt.block_on(async {
        let start = Instant::now();
        let conn = connect(&common.connection()).await.unwrap();
        let stats = Arc::new(Mutex::new(Live::default()));
        let script =
            async {
                until(&stats, "the row in sync", |s| {
                    matches!(s.event_row, Some((3, DriftSummary::InSync)))
                })
                .await;
                tokio::time::sleep(Duration::from_secs(1)).await;
                let (heap, rss) = (heap_mb(), rss_mb());
                fig(
                    "before: heap, resident memory",
                    heap,
                    &format!("MB, {rss:.1} MB resident"),
                );
                for (what, replicas) in [("annotation", 4), ("env", 5)] {
                    stats.lock().unwrap().waiting = Some(replicas);
                    stats.lock().unwrap().seen = None;
                    let written = tokio::task::spawn_blocking(move || ask(what))
                        .await
                        .unwrap();
                    until(&stats, "the new row", |s| s.seen.is_some()).await;
                    let seen = stats.lock().unwrap().seen.unwrap();
                    fig(
                        &format!("3 MB {what}: written → the row's frame"),
                        ms(seen.duration_since(written).unwrap_or_default()),
                        "ms",
                    );
                    until(&stats, "its drift", |s| {
                    matches!(s.event_row, Some((r, DriftSummary::Fields(_))) if r == replicas)
                })
                .await;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    fig(
                        &format!("3 MB {what}: heap, resident memory 1 s after"),
                        heap_mb(),
                        &format!("MB, {:.1} MB resident", rss_mb()),
                    );
                }
                fig("peak resident memory (process)", peak_rss_mb(), "MB");
            };
        session::drive(&common, conn, start, stats.clone(), on_frame, script).await;
    });
    for what in ["annotation", "env"] {
        let text = std::fs::read_to_string(dir.join(format!("event-{what}.json"))).unwrap();
        let decode = median_of(9, || {
            let live: LiveDeployment = serde_json::from_str(&text).unwrap();
            std::hint::black_box(LiveRow::from_object(live));
        });
        fig(
            &format!("3 MB {what}: decode into the row (slim + text)"),
            ms(decode),
            "ms",
        );
        let extract = median_of(9, || {
            std::hint::black_box(
                LiveObject::from_deployment_json(&text, Schemas::builtin()).unwrap(),
            );
        });
        fig(
            &format!("3 MB {what}: its drift extract (a manifest names it)"),
            ms(extract),
            "ms",
        );
    }
}

/// A Deployment of `CONTAINERS` containers, as written by hand.
fn wide_manifest() -> String {
    let mut text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: wide\n  namespace: shop\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: wide\n  template:\n    metadata:\n      labels:\n        app: wide\n    spec:\n      containers:\n".to_owned();
    for c in 0..CONTAINERS {
        text.push_str(&format!(
            "        - name: c{c:03}\n          image: registry.example/c{c:03}:1.0\n          env:\n            - name: MODE\n              value: prod\n          resources:\n            requests:\n              cpu: 10m\n              memory: 16Mi\n"
        ));
    }
    text
}

/// The object as the server holds it after `kubectl apply`, then `kubectl set image` of
/// container 499.
fn wide_live(manifest: &str) -> Value {
    use kdrift::sim::resources::ResourceType;
    let defaults = |object: &mut Value| {
        kdrift::schema::defaults::apply_defaults(
            "apps",
            "Deployment",
            kdrift::schema::builtin_kind("Deployment"),
            object,
        )
    };
    let mut applied: Value = serde_yaml::from_str(manifest).unwrap();
    defaults(&mut applied);
    applied["metadata"]["resourceVersion"] = json!("1");
    kdrift::sim::ssa::record_update(
        ResourceType::DEPLOYMENT,
        None,
        &mut applied,
        "kubectl-client-side-apply",
        None,
        "2026-11-22T01:00:00Z",
    );
    let last = format!("c{:03}", CONTAINERS - 1);
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": last, "image": format!("registry.example/{last}:1.1")}
    ]}}}});
    let mut set =
        kdrift::sim::patch::strategic_merge_patch(ResourceType::DEPLOYMENT, &applied, &patch)
            .unwrap();
    defaults(&mut set);
    kdrift::sim::ssa::record_update(
        ResourceType::DEPLOYMENT,
        Some(&applied),
        &mut set,
        "kubectl-set",
        None,
        "2026-11-22T02:00:00Z",
    );
    set
}

fn containers(root: &Path) {
    let manifest = wide_manifest();
    let file = root.join("wide.yaml");
    std::fs::write(&file, &manifest).unwrap();
    let live = wide_live(&manifest);
    let text = serde_json::to_string(&live).unwrap();
    println!(
        "containers: manifest {} lines, live object {} bytes",
        manifest.lines().count(),
        text.len()
    );
    let decode = median_of(20, || {
        let object: LiveDeployment = serde_json::from_str(&text).unwrap();
        std::hint::black_box(LiveRow::from_object(object));
    });
    fig(
        &format!("{CONTAINERS} containers: decode into the row"),
        ms(decode),
        "ms",
    );
    let index = Arc::new(ManifestIndex::load(root, "default"));
    let object = kdrift::manifest::ObjectKey::new("apps", "Deployment", "shop", "wide");
    let manifest_object = index.get(&object).unwrap().clone();
    let extract = LiveObject::from_value(live.clone(), Schemas::builtin()).unwrap();
    let drift = kdrift::drift::compare::compare(&manifest_object, &extract, &index.config);
    let drift_time = median_of(20, || {
        std::hint::black_box(kdrift::drift::compare::compare(
            &manifest_object,
            &extract,
            &index.config,
        ));
    });
    fig("drift of the object (compare)", ms(drift_time), "ms");
    let items: Vec<String> = drift.items.iter().map(|i| i.path.to_string()).collect();
    println!("containers: drifted {items:?}");

    let mut app = App::new("bench", vec![], NamespaceScope::All, Timestamp::now());
    update(&mut app, Message::Manifests(index.clone()));
    let row = LiveRow::from_object(serde_json::from_str::<LiveDeployment>(&text).unwrap());
    let t = Instant::now();
    update(
        &mut app,
        Message::Cluster(ClusterMessage {
            epoch: 0,
            event: ClusterEvent::WorkloadsLive(
                WorkloadKind::Deployment,
                vec![
                    WatchUpdate::Init,
                    WatchUpdate::InitApply(row),
                    WatchUpdate::InitDone,
                ],
            ),
        }),
    );
    fig(
        "the watch event applied (row + drift)",
        ms(t.elapsed()),
        "ms",
    );
    assert_eq!(
        app.drift_of(&kdrift::cluster::rows::WorkloadKind::Deployment.key("shop", "wide")),
        &DriftSummary::Fields(1)
    );
    fig("table frame, 200×50", ms(frame_time(&mut app)), "ms");
    update(&mut app, Message::Key(KeyEvent::from(KeyCode::Enter)));
    assert!(matches!(app.screen, Screen::Detail { .. }));
    fig("detail view frame, 200×50", ms(frame_time(&mut app)), "ms");
    update(&mut app, Message::Key(KeyEvent::from(KeyCode::Esc)));
    app.open_diff(object.clone());
    let fetched = Box::new(extract.clone());
    let t = Instant::now();
    update(&mut app, Message::DiffFetched((object, Ok(Some(fetched)))));
    fig("diff view: computed", ms(t.elapsed()), "ms");
    assert!(matches!(app.screen, Screen::Diff(_)));
    fig("diff view frame, 200×50", ms(frame_time(&mut app)), "ms");

    // Accept of the image of container 499: the edit of the file, checked by re-parsing.
    let field = items.first().unwrap().clone();
    let before = std::fs::read_to_string(&file).unwrap();
    let hash = kdrift::manifest::edit::ContentHash::of(before.as_bytes());
    let accept = median_of(20, || {
        let chosen = kdrift::accept::select(&drift, std::slice::from_ref(&field)).unwrap();
        let prepared =
            kdrift::accept::prepare(&file, &before, hash, manifest_object.document(), &chosen)
                .unwrap();
        std::hint::black_box(prepared);
    });
    fig(&format!("accept {field}: edit + verify"), ms(accept), "ms");
    fig("peak resident memory (process)", peak_rss_mb(), "MB");
}
