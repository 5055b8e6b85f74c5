//! The one loop (docs/ARCHITECTURE.md, "The loop"): await one event, drain every pending one,
//! update the app, draw at most once per frame interval and only when something changed. No
//! periodic tick: the loop wakes for a message, a signal, or when an age shown on screen is due to
//! change.
use std::time::Duration;

use jiff::Timestamp;
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::time::{Instant, sleep_until};

use crate::app::{App, Command, ContextChange, Flash, Message, update};
use crate::cli::CommonArgs;
use crate::cluster::client::{ConnectError, Connection, NamespaceScope, connect};
use crate::cluster::live::{LiveKinds, fetch, fetch_objects};
use crate::cluster::watch::{
    ClusterMessage, Watchers, spawn_detail_watchers, spawn_object_watchers, spawn_table_watcher,
};
use crate::ui::{self, theme::Theme};

/// Shortest time between two frames while events keep coming: a burst of watch events becomes
/// one frame, and after a quiet spell longer than this a frame is drawn as soon as its event is
/// handled. An event that arrives just after a frame waits for the next one, so the interval is
/// most of an event's worst time to the screen under churn: at 16 ms, `real_scale`'s event →
/// frame p99 at 30,000 objects was 24 ms, and the fleet bench's 21.5–23.8 ms, against
/// 14.7–17.5 ms at 8 ms for 6–10 points of a core more while 100–1,000 writes a second arrive,
/// and nothing more when idle (docs/benchmarks.md).
pub const FRAME_INTERVAL: Duration = Duration::from_millis(8);

/// How many times the loop has woken since the process started (a message, a signal, an age due
/// to change), and how many frames it has drawn: what `benches/real_idle.rs` counts per minute
/// while nothing changes.
static WAKEUPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static FRAMES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Wake-ups of the loop and frames drawn so far, by every loop of this process.
pub fn wakeups_and_frames() -> (u64, u64) {
    use std::sync::atomic::Ordering::Relaxed;
    (WAKEUPS.load(Relaxed), FRAMES.load(Relaxed))
}

/// What reaches the loop: app messages, and results only the runtime handles.
pub enum Event {
    App(Message),
    Connected {
        epoch: u64,
        result: Result<Connection, ConnectError>,
    },
    /// The terminal input ended (the terminal went away).
    InputClosed,
    /// The revert view's dry run answered (the runtime keeps the preview to execute it).
    RevertPreviewed {
        id: u64,
        result: super::revert::Previewed,
    },
    /// The rollback view's plan answered (the runtime keeps the plan to carry it out).
    RollbackPlanned {
        id: u64,
        result: super::rollback::Planned,
        owned: super::rollback::Owned,
    },
}

pub(super) enum Flow {
    Continue,
    Quit,
    Suspend,
}

pub(super) struct Loop {
    pub(super) app: App,
    common: CommonArgs,
    conn: Connection,
    watchers: Watchers,
    /// The detail view's watchers, while it is open.
    detail: Option<Watchers>,
    /// The log view's stream, while it is open (dropping it stops the stream).
    log: Option<crate::cluster::logs::LogTask>,
    /// The epoch of the latest `:ns`/`:ctx` switch asked for.
    requested: u64,
    tx: UnboundedSender<Event>,
    /// The manifests' load and file watcher.
    _manifests: Option<super::manifests::ManifestWatch>,
    /// The revert preview awaiting confirmation.
    reverts: super::revert::Reverts,
    rollbacks: super::rollback::Rollbacks,
    /// Accepts and reverts under way: quitting waits for them, so that none is left half done
    /// without a word.
    pub(super) writes: usize,
    /// Asked to quit while a write was under way: quit when the last one ends.
    pub(super) quitting: bool,
    /// What the writes that ended while quitting did, printed once the terminal is restored.
    pub outcomes: Vec<String>,
    /// The kinds the cluster serves for the manifests, and their schemas (Deployments and the
    /// built-in schemas until discovery answers).
    kinds: LiveKinds,
    /// The watchers of the manifests' other kinds.
    object_watchers: Option<Watchers>,
    /// `:ctx +NAME` in a view of one context: the context to watch beside this one. The loop
    /// ends and the runtime carries this loop into a view over both ([`super::fleet`]).
    pub(super) grow: Option<String>,
}

/// A watcher's way back into the loop.
fn sink(
    tx: &UnboundedSender<Event>,
) -> impl Fn(ClusterMessage) -> bool + Clone + Send + Sync + 'static {
    let tx = tx.clone();
    move |m| tx.send(Event::App(Message::Cluster(m))).is_ok()
}

/// Start the table's watcher and the Helm release watcher, whose messages come back into the
/// loop.
pub fn watch(conn: &Connection, epoch: u64, tx: &UnboundedSender<Event>) -> Watchers {
    let releases_tx = tx.clone();
    let releases =
        crate::cluster::helm::spawn_release_watcher(conn, epoch, move |epoch, releases| {
            releases_tx
                .send(Event::App(Message::HelmReleases { epoch, releases }))
                .is_ok()
        });
    spawn_table_watcher(conn, epoch, sink(tx)).join(releases)
}

impl Loop {
    /// The app for `conn`, its watchers and its manifests, its messages sent into `tx`.
    pub(super) fn start(common: &CommonArgs, conn: Connection, tx: UnboundedSender<Event>) -> Loop {
        let mut app = App::new(
            conn.context.clone(),
            conn.contexts.clone(),
            conn.scope.clone(),
            Timestamp::now(),
        );
        app.readonly = common.readonly;
        let watchers = watch(&conn, 0, &tx);
        let manifests = watch_manifests(common, &conn, &tx);
        Loop {
            app,
            common: common.clone(),
            conn,
            watchers,
            detail: None,
            log: None,
            requested: 0,
            tx,
            _manifests: manifests,
            reverts: Default::default(),
            rollbacks: Default::default(),
            writes: 0,
            quitting: false,
            outcomes: Vec::new(),
            kinds: LiveKinds::before_discovery(),
            object_watchers: None,
            grow: None,
        }
    }

    /// Lists of the table's and the manifests' kinds that ended so far.
    pub(super) fn lists_done(&self) -> u64 {
        self.app.cache.workloads.lists_done() + self.app.objects.lists_done
    }

    /// `q`, ctrl-c, SIGTERM or the input closing: quit now, or once the writes under way end
    /// (asked twice: now).
    pub(super) fn quit(&mut self) -> Flow {
        if self.writes == 0 || self.quitting {
            return Flow::Quit;
        }
        self.quitting = true;
        let what = if self.writes == 1 {
            "the accept or revert under way".to_owned()
        } else {
            format!("the {} accepts and reverts under way", self.writes)
        };
        let text = format!(
            "quitting once {what} ends (git is stopped after {} s); q again quits now: git is stopped and an accept's file put back as it was",
            crate::git::timeout().as_secs()
        );
        update(&mut self.app, Message::Notice(Flash { text, error: false }));
        Flow::Continue
    }

    /// A write ended: count it, and keep what it did if the user is waiting to quit. `said` is
    /// what it did when the app does not flash it (a failed revert is shown in its view, and the
    /// status bar still holds the quitting notice).
    fn write_ended(&mut self, said: Option<String>) -> Flow {
        self.writes = self.writes.saturating_sub(1);
        if self.quitting {
            if let Some(text) = said.or_else(|| self.app.flash.as_ref().map(|f| f.text.clone())) {
                self.outcomes.push(text);
            }
            if self.writes == 0 {
                return Flow::Quit;
            }
        }
        Flow::Continue
    }

    pub(super) fn handle(&mut self, ev: Event) -> Flow {
        let ended = match &ev {
            Event::App(
                Message::Reverted { result: Err(e), .. }
                | Message::RolledBack { result: Err(e), .. },
            ) => Some(Some(e.clone())),
            Event::App(
                Message::Accepted { .. } | Message::Reverted { .. } | Message::RolledBack { .. },
            ) => Some(None),
            _ => None,
        };
        let flow = self.handle_event(ev);
        match (flow, ended) {
            (Flow::Quit, _) => self.quit(),
            (flow, Some(said)) => match self.write_ended(said) {
                Flow::Quit => Flow::Quit,
                _ => flow,
            },
            (flow, None) => flow,
        }
    }

    fn handle_event(&mut self, ev: Event) -> Flow {
        let commands = match ev {
            // Thousands of fetched live objects were compared and dropped: give the pages back.
            Event::App(Message::LiveFetched(fetched)) if fetched.len() > 256 => {
                let commands = update(&mut self.app, Message::LiveFetched(fetched));
                release_freed_memory();
                commands
            }
            Event::App(Message::KindsMapped(Ok(mapped))) => {
                self.kinds = mapped.kinds.clone();
                // Reading the OpenAPI documents freed a few MB of parse trees.
                release_freed_memory();
                update(&mut self.app, Message::KindsMapped(Ok(mapped)))
            }
            Event::App(msg) => update(&mut self.app, msg),
            Event::InputClosed => return Flow::Quit,
            Event::RevertPreviewed { id, result } => {
                let msg = self.reverts.previewed(id, result);
                update(&mut self.app, msg)
            }
            Event::RollbackPlanned { id, result, owned } => {
                let msg = self.rollbacks.planned(id, result, owned);
                update(&mut self.app, msg)
            }
            Event::Connected { epoch, result } => {
                // Only the latest switch counts.
                if epoch != self.requested {
                    return Flow::Continue;
                }
                match result {
                    Ok(conn) => self.switch_to(conn, epoch),
                    Err(e) => update(&mut self.app, Message::SwitchFailed(e.to_string())),
                }
            }
        };
        self.run(commands)
    }

    /// Carry out the app's commands.
    pub(super) fn run(&mut self, commands: Vec<Command>) -> Flow {
        let mut flow = Flow::Continue;
        for c in commands {
            match c {
                Command::Quit => return Flow::Quit,
                Command::Suspend => flow = Flow::Suspend,
                Command::Switch { context, scope } => self.start_switch(context, scope),
                Command::Contexts(ContextChange::Add(name)) => {
                    if name == self.conn.context {
                        let text = format!("context \"{name}\" is watched already");
                        update(&mut self.app, Message::Notice(Flash { text, error: false }));
                    } else {
                        self.grow = Some(name);
                    }
                }
                Command::Contexts(ContextChange::Remove(name)) => {
                    let text = format!(
                        "\"{name}\" is the only context watched: :ctx NAME watches another instead"
                    );
                    update(&mut self.app, Message::Notice(Flash { text, error: true }));
                }
                Command::WatchDetail { namespace, epoch } => {
                    self.detail = None;
                    self.detail = Some(spawn_detail_watchers(
                        &self.conn,
                        &namespace,
                        epoch,
                        sink(&self.tx),
                    ));
                }
                Command::StopDetail => self.detail = None,
                Command::OpenLog { epoch, request } => {
                    self.log = None;
                    let tx = self.tx.clone();
                    self.log = Some(crate::cluster::logs::spawn_log(
                        self.conn.client.clone(),
                        request,
                        move |event| tx.send(Event::App(Message::Log { epoch, event })).is_ok(),
                    ));
                }
                Command::StopLog => self.log = None,
                Command::ListNamespaces => self.list_namespaces(),
                Command::RenderCharts { id, index } => {
                    let tx = self.tx.clone();
                    let version = self.conn.server_version.clone();
                    tokio::task::spawn_blocking(move || {
                        let kube_version = (!version.is_empty()).then_some(version.as_str());
                        let (renders, problems) =
                            crate::manifest::charts::render(&index.0, kube_version);
                        let _ = tx.send(Event::App(Message::ChartsRendered {
                            id,
                            renders,
                            problems,
                        }));
                    });
                }
                Command::FetchLive(keys) => {
                    let (client, tx) = (self.conn.client.clone(), self.tx.clone());
                    tokio::spawn(async move {
                        let (asked, start) = (keys.len(), Instant::now());
                        let mut deliver = |fetched| {
                            let _ = tx.send(Event::App(Message::LiveFetched(fetched)));
                        };
                        fetch(&client, keys, &mut deliver).await;
                        tracing::debug!(
                            asked,
                            took_ms = start.elapsed().as_millis() as u64,
                            "live objects fetched for drift"
                        );
                    });
                }
                Command::PrepareAccept {
                    key,
                    api_version,
                    file,
                    root,
                    others,
                } => {
                    let (client, tx) = (self.conn.client.clone(), self.tx.clone());
                    let kinds = self.kinds.clone();
                    tokio::spawn(async move {
                        let fetched = super::accept::prepare(
                            client,
                            kinds,
                            key,
                            api_version,
                            (file, others),
                            root,
                        )
                        .await;
                        let _ = tx.send(Event::App(Message::AcceptReady(Box::new(fetched))));
                    });
                }
                Command::PrepareChartAccept {
                    key,
                    api_version,
                    index,
                    only,
                } => {
                    let (client, tx) = (self.conn.client.clone(), self.tx.clone());
                    let kinds = self.kinds.clone();
                    tokio::spawn(async move {
                        let fetched = super::accept::prepare_chart(
                            client,
                            kinds,
                            key,
                            api_version,
                            index,
                            only,
                        )
                        .await;
                        let _ = tx.send(Event::App(Message::AcceptReady(Box::new(fetched))));
                    });
                }
                Command::Accept(request) => {
                    self.writes += 1;
                    let (client, tx) = (self.conn.client.clone(), self.tx.clone());
                    let kinds = self.kinds.clone();
                    tokio::spawn(async move {
                        let key = request.key.clone();
                        let result = super::accept::accept(client, kinds, *request).await;
                        let _ = tx.send(Event::App(Message::Accepted { key, result }));
                    });
                }
                Command::PreviewRevert { id, key } => {
                    let index = self.app.manifests.as_deref();
                    let cluster = (&self.conn.client, &self.kinds.schemas);
                    self.reverts.preview(id, key, index, cluster, &self.tx);
                }
                Command::PlanRollback { id, key } => {
                    let Some(index) = self.app.manifests.clone() else {
                        let _ = self.tx.send(Event::App(Message::RollbackPlanned {
                            id,
                            result: Err("the manifests are still loading".to_owned()),
                        }));
                        continue;
                    };
                    let owned = super::rollback::Owned {
                        client: self.conn.client.clone(),
                        index,
                        schemas: self.kinds.schemas.clone(),
                        context: self.conn.context.clone(),
                        kubeconfig: self.common.kubeconfig.clone(),
                    };
                    self.rollbacks.plan(id, key, owned, &self.tx);
                }
                Command::Rollback { id, key: _ } => {
                    self.writes += 1;
                    self.rollbacks.execute(id, &self.tx);
                }
                Command::Revert { id, key } => {
                    self.writes += 1;
                    let who = crate::cluster::revert::who(&self.conn.context);
                    self.reverts.execute(id, key, who, &self.tx);
                }
                Command::FetchDiff(key, api_version) => {
                    let (client, tx) = (self.conn.client.clone(), self.tx.clone());
                    let kinds = self.kinds.clone();
                    tokio::spawn(async move {
                        let wanted = vec![(key, api_version)];
                        if let Some(one) = fetch_objects(&client, &kinds, wanted)
                            .await
                            .into_iter()
                            .next()
                        {
                            let _ = tx.send(Event::App(Message::DiffFetched(one)));
                        }
                    });
                }
                Command::Compare { key, api_version } => {
                    let (client, tx) = (self.conn.client.clone(), self.tx.clone());
                    let (kinds, index) = (self.kinds.clone(), self.app.manifests.clone());
                    let asked = super::compare::Asked {
                        context: self.conn.context.clone(),
                        cluster: self.conn.cluster_url.clone(),
                        key: key.clone(),
                        api_version,
                    };
                    tokio::spawn(async move {
                        let result = super::compare::read(&client, &kinds, index, asked).await;
                        let _ = tx.send(Event::App(Message::CompareRead { key, result }));
                    });
                }
                Command::FetchObjects(wanted) => {
                    let (client, tx) = (self.conn.client.clone(), self.tx.clone());
                    let kinds = self.kinds.clone();
                    tokio::spawn(async move {
                        let fetched = fetch_objects(&client, &kinds, wanted).await;
                        let _ = tx.send(Event::App(Message::ObjectsFetched(fetched)));
                    });
                }
                Command::MapKinds(kinds) => self.map_kinds(kinds),
                Command::ReadReconcilers(owners) => {
                    let (client, tx) = (self.conn.client.clone(), self.tx.clone());
                    let epoch = self.app.epoch;
                    let peers = self.common.peers.clone();
                    let (url, context) = (self.conn.cluster_url.clone(), self.conn.context.clone());
                    tokio::spawn(async move {
                        let here = crate::gitops::source::Here {
                            cluster_url: &url,
                            context: &context,
                        };
                        let hubs = peers.as_ref().map(|peers| (peers, here));
                        let read = crate::cluster::gitops::read_all(&client, owners, hubs).await;
                        let _ = tx.send(Event::App(Message::Reconcilers { epoch, read }));
                    });
                }
                Command::ExplainStalls(stalled) => {
                    let (client, tx) = (self.conn.client.clone(), self.tx.clone());
                    tokio::spawn(async move {
                        let keys = stalled.iter().map(|s| s.key.clone()).collect();
                        let pods = crate::cluster::live::pods_of_workloads(&client, keys).await;
                        let why = crate::app::detail::explain_stalls(stalled, pods);
                        let _ = tx.send(Event::App(Message::StallsExplained(why)));
                    });
                }
                Command::WatchObjects(kinds) => {
                    self.object_watchers = None;
                    self.object_watchers = Some(spawn_object_watchers(
                        &self.conn,
                        &kinds,
                        self.app.epoch,
                        sink(&self.tx),
                    ));
                }
            }
        }
        flow
    }

    /// Discovery for the manifests' kinds and their schemas from the cluster's OpenAPI (its
    /// disk cache first), off the loop; the answer comes back as `Message::KindsMapped`.
    fn map_kinds(&self, kinds: std::collections::BTreeSet<(String, String)>) {
        let conn = self.conn.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let result = map_kinds(&conn, &kinds).await;
            let _ = tx.send(Event::App(Message::KindsMapped(result)));
        });
    }

    /// `:ns` alone: the namespaces for the picker (asked off the loop).
    fn list_namespaces(&self) {
        let client = self.conn.client.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let answer = crate::cluster::fallback::list_namespaces(&client)
                .await
                .map_err(|e| crate::cluster::fallback::namespace_list_error(&e));
            let _ = tx.send(Event::App(Message::Namespaces(answer)));
        });
    }

    fn start_switch(&mut self, context: Option<String>, scope: NamespaceScope) {
        // Every request gets a new epoch; only the latest one's result is used.
        self.requested = self.requested.max(self.app.epoch) + 1;
        let epoch = self.requested;
        match context.filter(|c| *c != self.conn.context) {
            None => {
                // Same cluster, other namespaces: new watchers on the same client.
                let mut conn = self.conn.clone();
                conn.scope = scope;
                let _ = self.tx.send(Event::Connected {
                    epoch,
                    result: Ok(conn),
                });
            }
            Some(ctx) => {
                let args = scoped(&self.common.for_context(&ctx), &scope);
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let result = connect(&args.connection()).await;
                    let _ = tx.send(Event::Connected { epoch, result });
                });
            }
        }
    }

    fn switch_to(&mut self, conn: Connection, epoch: u64) -> Vec<Command> {
        tracing::info!(context = %conn.context, scope = conn.scope.label(), "switching");
        self.detail = None;
        self.log = None;
        self.object_watchers = None;
        self.watchers = watch(&conn, epoch, &self.tx);
        if conn.context != self.conn.context {
            // Another cluster: the manifests its namespace-less objects go to (its context's
            // namespace, unless `-n` was given) and the folders its GitOps owners deploy.
            self._manifests = watch_manifests(&self.common, &conn, &self.tx);
        }
        let msg = Message::Switched {
            epoch,
            context: conn.context.clone(),
            contexts: conn.contexts.clone(),
            scope: conn.scope.clone(),
        };
        self.conn = conn;
        update(&mut self.app, msg)
    }
}

/// `common` connecting to the namespaces `scope` names (the view's, after a `:ns`).
pub(super) fn scoped(common: &CommonArgs, scope: &NamespaceScope) -> CommonArgs {
    let mut args = common.clone();
    match scope {
        NamespaceScope::All => {
            args.namespace = None;
            args.all_namespaces = true;
        }
        NamespaceScope::One(ns) => {
            args.namespace = Some(ns.clone());
            args.all_namespaces = false;
        }
    }
    args
}

/// Loads and watches the manifests for `conn` (none without a manifests folder). Objects
/// without a namespace take `-n`, else the context's namespace, else `default`, as kubectl
/// gives them.
fn watch_manifests(
    common: &CommonArgs,
    conn: &Connection,
    tx: &UnboundedSender<Event>,
) -> Option<super::manifests::ManifestWatch> {
    let root = crate::commands::context::manifests_dir(common).ok()?;
    let namespace = conn.default_namespace(common.namespace.as_deref());
    let (common, client, url, context) = (
        common.clone(),
        conn.client.clone(),
        conn.cluster_url.clone(),
        conn.context.clone(),
    );
    let chosen = async move {
        crate::commands::context::choose_manifests(&common, &client, &url, &context, root).await
    };
    Some(super::manifests::start(chosen, namespace, tx.clone()))
}

/// The served kinds of the groups of `kinds` (and the core and apps groups) and the schemas of
/// `kinds` from the cluster's OpenAPI.
async fn map_kinds(
    conn: &Connection,
    kinds: &std::collections::BTreeSet<(String, String)>,
) -> Result<crate::app::objects::MappedKinds, String> {
    let (served, loaded) = crate::cluster::openapi::discover_with_schemas(
        &conn.client,
        &conn.server_version,
        kinds,
        None,
        None,
    )
    .await
    .map_err(|e| e.to_string())?;
    for notice in &loaded.notices {
        tracing::warn!(%notice, "schemas");
    }
    Ok(crate::app::objects::MappedKinds {
        kinds: LiveKinds {
            served: std::sync::Arc::new(served),
            schemas: std::sync::Arc::new(loaded.schemas),
        },
        notices: loaded.notices,
    })
}

/// A list of thousands of whole objects was just decoded into slim rows and dropped: hand the
/// freed pages back to the system, or the allocator keeps them as resident memory for good.
pub(super) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free heap pages; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// What differs between the real terminal and a test or benchmark backend.
pub trait Frontend<B: Backend> {
    /// ctrl-z: give the terminal back and stop until resumed.
    fn suspend(&mut self, terminal: &mut Terminal<B>) -> std::io::Result<()>;
    /// Called after each frame is drawn (benchmarks time frames here).
    fn after_frame(&mut self, _app: &App) {}
    /// Called after each frame of the fleet's view (several contexts) is drawn.
    fn after_fleet_frame(
        &mut self,
        _fleet: &crate::app::fleet::Fleet,
        _members: &[crate::app::fleet::Member<'_>],
    ) {
    }
}

/// An app on a connection, its watchers and its message channel.
pub struct Session {
    pub(super) state: Loop,
    pub(super) rx: UnboundedReceiver<Event>,
    /// The loop ended on SIGTERM (the exit code says so).
    pub sigterm: bool,
    /// The shortest time between two frames under churn ([`Driven::frame_interval`]).
    frame_interval: Duration,
}

impl Session {
    /// Build the app for `conn` and start its watchers.
    pub fn start(common: &CommonArgs, conn: Connection) -> Session {
        let (tx, rx) = unbounded_channel::<Event>();
        Session {
            state: Loop::start(common, conn, tx),
            rx,
            sigterm: false,
            frame_interval: FRAME_INTERVAL,
        }
    }

    /// Sets the shortest time between two frames under churn ([`FRAME_INTERVAL`] unless set):
    /// the benches' `--frame-interval` measures other choices against it.
    pub fn set_frame_interval(&mut self, interval: Duration) {
        self.frame_interval = interval;
    }

    /// What the accepts and reverts that ended while quitting did.
    pub fn outcomes(&self) -> &[String] {
        &self.state.outcomes
    }

    /// Accepts and reverts still under way (the user quit twice without waiting).
    pub fn unfinished(&self) -> usize {
        self.state.writes
    }

    /// After a quit that left writes under way, once their git was stopped
    /// ([`crate::process::interrupt`]): waits up to `limit` for them to end (an accept then puts
    /// its file back), keeping what each did for [`Session::outcomes`].
    pub async fn finish_writes(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        self.state.quitting = true;
        while self.state.writes > 0 {
            let ev = match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(ev)) => ev,
                _ => break,
            };
            if matches!(
                ev,
                Event::App(
                    Message::Accepted { .. }
                        | Message::Reverted { .. }
                        | Message::RolledBack { .. }
                )
            ) {
                let _ = self.state.handle(ev);
            }
        }
    }

    pub fn app(&self) -> &App {
        &self.state.app
    }

    /// The context `:ctx +NAME` asked to watch beside this one: the loop ended for the
    /// runtime to carry it into a view over both ([`super::fleet::FleetSession::grown`]).
    pub fn grow(&self) -> Option<&str> {
        self.state.grow.as_deref()
    }

    /// A sender into the loop (for terminal input).
    pub fn sender(&self) -> UnboundedSender<Event> {
        self.state.tx.clone()
    }

    /// Show `notice` in the status bar.
    pub fn notice(&mut self, notice: Flash) {
        update(&mut self.state.app, Message::Notice(notice));
    }

    /// Show a problem found at start-up in the status bar.
    pub fn problem(&mut self, text: String) {
        update(
            &mut self.state.app,
            Message::Notice(Flash { text, error: true }),
        );
    }

    /// Run until the user quits, SIGTERM, or the input closes (or `:ctx +NAME` hands this
    /// loop over to a view of several contexts: [`Session::grow`]).
    pub async fn drive<B: Backend>(
        &mut self,
        term: &mut Terminal<B>,
        theme: &Theme,
        frontend: &mut dyn Frontend<B>,
    ) -> std::io::Result<()> {
        drive(self, term, theme, frontend).await
    }
}

impl<B: Backend> Driven<B> for Session {
    type Ev = Event;

    fn events(&mut self) -> &mut UnboundedReceiver<Event> {
        &mut self.rx
    }

    fn sized(&mut self, width: u16, height: u16) {
        (self.state.app.width, self.state.app.height) = (width, height);
    }

    fn next_age_change(&self) -> Option<i64> {
        ui::next_age_change(&self.state.app)
    }

    fn redraw(&mut self) {
        self.state.app.dirty = true;
    }

    fn dirty(&self) -> bool {
        self.state.app.dirty
    }

    fn handle(&mut self, ev: Event) -> Flow {
        self.state.handle(ev)
    }

    fn sigterm(&mut self) -> Flow {
        self.sigterm = true;
        self.state.quit()
    }

    fn handed_over(&self) -> bool {
        // The fleet's view takes this loop over: the events not handled yet stay in the
        // channel, which it reads next.
        self.state.grow.is_some()
    }

    fn lists_done(&self) -> u64 {
        self.state.lists_done()
    }

    fn frame_interval(&self) -> Duration {
        self.frame_interval
    }

    fn frame(
        &mut self,
        term: &mut Terminal<B>,
        theme: &Theme,
        frontend: &mut dyn Frontend<B>,
    ) -> std::io::Result<Flow> {
        let state = &mut self.state;
        state.app.now = Timestamp::now();
        let commands = state.app.prepare_frame();
        if matches!(state.run(commands), Flow::Quit) {
            return Ok(Flow::Quit);
        }
        term.draw(|f| ui::render(&state.app, theme, f))
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        state.app.dirty = false;
        frontend.after_frame(&state.app);
        Ok(Flow::Continue)
    }
}

/// What the one loop runs: the view of one context ([`Session`]) or of several
/// ([`super::fleet::FleetSession`]). Each says how it handles an event and draws a frame;
/// [`drive`] decides when.
pub(super) trait Driven<B: Backend> {
    type Ev;
    /// The channel every event of the view arrives on.
    fn events(&mut self) -> &mut UnboundedReceiver<Self::Ev>;
    /// The terminal's size at start.
    fn sized(&mut self, width: u16, height: u16);
    /// Seconds until an age on screen changes (the loop then wakes to draw it).
    fn next_age_change(&self) -> Option<i64>;
    /// Something must be drawn again (an age changed, the terminal came back).
    fn redraw(&mut self);
    /// Something changed on screen since the last frame.
    fn dirty(&self) -> bool;
    fn handle(&mut self, ev: Self::Ev) -> Flow;
    /// SIGTERM arrived.
    fn sigterm(&mut self) -> Flow;
    /// The loop ends without quitting: another loop takes the view over.
    fn handed_over(&self) -> bool {
        false
    }
    /// Lists that ended so far: after each, the pages it freed are given back.
    fn lists_done(&self) -> u64;
    /// The shortest time between two frames while events keep coming (a frame after a quiet
    /// spell longer than it is drawn at once).
    fn frame_interval(&self) -> Duration;
    /// Prepare and draw a frame.
    fn frame(
        &mut self,
        term: &mut Terminal<B>,
        theme: &Theme,
        frontend: &mut dyn Frontend<B>,
    ) -> std::io::Result<Flow>;
}

/// Whether the loop goes on after an event.
enum Step {
    Go,
    End,
}

/// Handle one event: the loop ends on a quit, or when the view is handed over.
fn step<B: Backend, D: Driven<B>>(
    view: &mut D,
    ev: D::Ev,
    term: &mut Terminal<B>,
    frontend: &mut dyn Frontend<B>,
) -> std::io::Result<Step> {
    match view.handle(ev) {
        Flow::Continue => {}
        Flow::Quit => return Ok(Step::End),
        Flow::Suspend => {
            frontend.suspend(term)?;
            view.redraw();
        }
    }
    Ok(if view.handed_over() {
        Step::End
    } else {
        Step::Go
    })
}

/// The one loop (docs/ARCHITECTURE.md, "The loop"), over one context or several: await an
/// event (or SIGTERM, or an age due to change), handle what is pending for at most a frame
/// interval, and draw at most once per [`FRAME_INTERVAL`], only when something changed (what
/// arrives while a frame is not due yet is handled meanwhile). A burst longer than an interval
/// (ten clusters' first lists, each compared with its manifests) is drawn as it is handled, not
/// once at its end.
pub(super) async fn drive<B: Backend, D: Driven<B>>(
    view: &mut D,
    term: &mut Terminal<B>,
    theme: &Theme,
    frontend: &mut dyn Frontend<B>,
) -> std::io::Result<()> {
    if let Ok(size) = term.size() {
        view.sized(size.width, size.height);
    }
    let mut sigterm =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let mut last_frame: Option<Instant> = None;
    let mut lists_seen = 0;
    'outer: loop {
        let wake = view
            .next_age_change()
            .map(|s| Instant::now() + Duration::from_secs(s.max(1) as u64));
        let first = tokio::select! {
            _ = async { match sigterm.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending::<()>().await } } => {
                tracing::info!("SIGTERM: quitting");
                match view.sigterm() {
                    Flow::Quit => break 'outer,
                    _ => None,
                }
            }
            ev = view.events().recv() => ev,
            _ = async { match wake { Some(w) => sleep_until(w).await, None => std::future::pending::<()>().await } } => {
                view.redraw();
                None
            }
        };
        WAKEUPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut next = first;
        // What is pending, for at most a frame interval of work.
        let began = Instant::now();
        while let Some(ev) = next.take().or_else(|| view.events().try_recv().ok()) {
            if let Step::End = step(view, ev, term, frontend)? {
                break 'outer;
            }
            if began.elapsed() >= FRAME_INTERVAL {
                break;
            }
        }
        if !view.dirty() {
            continue;
        }
        // Pace frames: until the frame is due, handle what arrives, so that the frame
        // shows it then without a backlog to handle first.
        if let Some(due) = last_frame.map(|t| t + view.frame_interval()) {
            while due > Instant::now() {
                let ev = tokio::select! {
                    _ = sleep_until(due) => break,
                    ev = view.events().recv() => ev,
                };
                match ev {
                    Some(ev) => {
                        if let Step::End = step(view, ev, term, frontend)? {
                            break 'outer;
                        }
                    }
                    None => sleep_until(due).await,
                }
            }
        }
        let lists = view.lists_done();
        if lists != lists_seen {
            lists_seen = lists;
            release_freed_memory();
        }
        if let Flow::Quit = view.frame(term, theme, frontend)? {
            break 'outer;
        }
        FRAMES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        last_frame = Some(Instant::now());
    }
    Ok(())
}
