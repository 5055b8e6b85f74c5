//! The one loop (docs/ARCHITECTURE.md, "The loop"): await one event, drain every pending one,
//! update the app, draw at most once per frame interval and only when something changed. No
//! periodic tick: the loop wakes for a message, a signal, or when an age shown on screen is due to
//! change.
use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;

use crate::app::{App, Command, Flash, Message, update};
use crate::cli::CommonArgs;
use crate::cluster::client::{Connection, NamespaceScope};
use crate::cluster::live::{LiveKinds, fetch, fetch_objects};
use crate::cluster::watch::{
    ClusterMessage, Watchers, spawn_detail_watchers, spawn_object_watchers, spawn_table_watcher,
};

/// Shortest time between two frames while events keep coming: a burst of watch events becomes
/// one frame, and after a quiet spell longer than this a frame is drawn as soon as its event is
/// handled. An event that arrives just after a frame waits for the next one, so the interval is
/// most of an event's worst time to the screen under churn: at 16 ms, `real_scale`'s event →
/// frame p99 at 30,000 objects was 24 ms, and the fleet bench's 21.5–23.8 ms, against
/// 14.7–17.5 ms at 8 ms for 6–10 points of a core more while 100–1,000 writes a second arrive,
/// and nothing more when idle (docs/benchmarks.md).
pub const FRAME_INTERVAL: Duration = Duration::from_millis(8);

/// What reaches the loop: app messages, and results only the runtime handles.
pub enum Event {
    App(Message),
    /// `:ns`: the connection with the namespaces asked for, to watch from epoch `epoch`.
    Switched {
        epoch: u64,
        conn: Connection,
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
    pub(super) common: CommonArgs,
    pub(super) conn: Connection,
    pub(super) watchers: Watchers,
    /// The detail view's watchers, while it is open.
    pub(super) detail: Option<Watchers>,
    /// The log view's stream, while it is open (dropping it stops the stream).
    pub(super) log: Option<crate::cluster::logs::LogTask>,
    /// The epoch of the latest `:ns`/`:ctx` switch asked for.
    pub(super) requested: u64,
    pub(super) tx: UnboundedSender<Event>,
    /// The manifests' load and file watcher.
    pub(super) _manifests: Option<super::manifests::ManifestWatch>,
    /// The revert preview awaiting confirmation.
    pub(super) reverts: super::revert::Reverts,
    pub(super) rollbacks: super::rollback::Rollbacks,
    /// Accepts and reverts under way: quitting waits for them, so that none is left half done
    /// without a word.
    pub(super) writes: usize,
    /// Asked to quit while a write was under way: quit when the last one ends.
    pub(super) quitting: bool,
    /// What the writes that ended while quitting did, printed once the terminal is restored.
    pub outcomes: Vec<String>,
    /// The kinds the cluster serves for the manifests, and their schemas (Deployments and the
    /// built-in schemas until discovery answers).
    pub(super) kinds: LiveKinds,
    /// The watchers of the manifests' other kinds.
    pub(super) object_watchers: Option<Watchers>,
}

/// The loop's channel as a sink of app messages, for the tasks that say only those.
fn say(tx: &UnboundedSender<Event>) -> crate::app::message::Say {
    let tx = tx.clone();
    std::sync::Arc::new(move |m| tx.send(Event::App(m)).is_ok())
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
            Event::App(Message::Fetched(fetched)) if fetched.len() > 256 => {
                let commands = update(&mut self.app, Message::Fetched(fetched));
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
            Event::Switched { epoch, conn } => {
                // Only the latest switch counts.
                if epoch != self.requested {
                    return Flow::Continue;
                }
                self.switch_to(conn, epoch)
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
                // Which contexts are watched is the live view's ([`super::fleet`]): a switch
                // of context never reaches a context's loop, a switch of namespaces does.
                Command::Switch { scope, .. } => self.switch_namespaces(scope),
                Command::Contexts(_) => {}
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
                Command::MapKinds(kinds) => self.map_kinds(kinds),
                Command::WatchObjects(kinds) => {
                    self.object_watchers = None;
                    self.object_watchers = Some(spawn_object_watchers(
                        &self.conn,
                        &kinds,
                        self.app.epoch,
                        sink(&self.tx),
                    ));
                }
                read @ (Command::RenderCharts { .. }
                | Command::Fetch(..)
                | Command::FetchDiff(..)
                | Command::Compare { .. }
                | Command::ReadReconcilers(..)
                | Command::ExplainStalls(..)) => self.read(read),
                write @ (Command::PrepareAccept { .. }
                | Command::PrepareChartAccept { .. }
                | Command::Accept(..)
                | Command::PreviewRevert { .. }
                | Command::PlanRollback { .. }
                | Command::Rollback { .. }
                | Command::Revert { .. }) => self.write(write),
            }
        }
        flow
    }

    /// A command that reads the cluster (or renders charts) off the loop; its answer comes back
    /// as a message.
    fn read(&self, command: Command) {
        match command {
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
            Command::Fetch(wanted) => {
                let (client, tx) = (self.conn.client.clone(), self.tx.clone());
                let kinds = self.kinds.clone();
                let in_flight = crate::cluster::read::gets_in_flight(&self.conn);
                tokio::spawn(async move {
                    let (asked, start) = (wanted.len(), Instant::now());
                    let mut deliver = |fetched| {
                        let _ = tx.send(Event::App(Message::Fetched(fetched)));
                    };
                    fetch(&client, &kinds, wanted, in_flight, &mut deliver).await;
                    tracing::debug!(
                        asked,
                        took_ms = start.elapsed().as_millis() as u64,
                        "live objects fetched for drift"
                    );
                });
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
            // `run` sends only these here.
            _ => {}
        }
    }

    /// A command that prepares, previews or makes a write (accept, revert, rollback); its
    /// answer comes back as a message.
    fn write(&mut self, command: Command) {
        match command {
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
                    let fetched =
                        super::accept::prepare_chart(client, kinds, key, api_version, index, only)
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
                let tx = self.tx.clone();
                let answer = move |result| {
                    let _ = tx.send(Event::RevertPreviewed { id, result });
                };
                self.reverts
                    .preview((id, key), index, cluster, &say(&self.tx), answer);
            }
            Command::PlanRollback { id, key } => {
                let Some(index) = self.app.manifests.clone() else {
                    let _ = self.tx.send(Event::App(Message::RollbackPlanned {
                        id,
                        result: Err("the manifests are still loading".to_owned()),
                    }));
                    return;
                };
                let owned = super::rollback::Owned {
                    client: self.conn.client.clone(),
                    index,
                    schemas: self.kinds.schemas.clone(),
                    context: self.conn.context.clone(),
                    kubeconfig: self.common.kubeconfig.clone(),
                };
                let tx = self.tx.clone();
                let answer = move |result, owned| {
                    let _ = tx.send(Event::RollbackPlanned { id, result, owned });
                };
                self.rollbacks.plan(key, owned, answer);
            }
            Command::Rollback { id, key: _ } => {
                self.writes += 1;
                self.rollbacks.execute(id, &say(&self.tx));
            }
            Command::Revert { id, key } => {
                self.writes += 1;
                let who = crate::cluster::revert::who(&self.conn.context);
                self.reverts.execute(id, key, who, &say(&self.tx));
            }
            // `run` sends only these here.
            _ => {}
        }
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

    /// `:ns`: the same cluster's other namespaces, new watchers on the same client.
    fn switch_namespaces(&mut self, scope: NamespaceScope) {
        // Every request gets a new epoch; only the latest one's result is used.
        self.requested = self.requested.max(self.app.epoch) + 1;
        let epoch = self.requested;
        let mut conn = self.conn.clone();
        conn.scope = scope;
        let _ = self.tx.send(Event::Switched { epoch, conn });
    }

    fn switch_to(&mut self, conn: Connection, epoch: u64) -> Vec<Command> {
        tracing::info!(context = %conn.context, scope = conn.scope.label(), "switching");
        self.detail = None;
        self.log = None;
        self.object_watchers = None;
        self.watchers = watch(&conn, epoch, &self.tx);
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
    Some(super::manifests::start(chosen, namespace, say(tx)))
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
