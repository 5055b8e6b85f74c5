//! The live view over several contexts (`kdrift --context a --context b`, `--all-contexts`, a
//! `.kdrift.yaml` fleet, `kdrift demo --clusters N`): one [`Loop`] per context — its own
//! connection, watchers, manifests (the context's folders, as `kdrift check` chooses them) and
//! IO tasks — and the fleet's table over their apps ([`crate::app::fleet`]).
//!
//! Each context connects on a task of its own and sends into a channel of its own, whose
//! messages are tagged and forwarded to the one loop: a context that is slow, unreachable or
//! stalled sends nothing and delays no other's rows. A context's commands run on its own
//! connection, so that a row's detail, diff, logs, accept and revert act on the row's cluster
//! and an accept writes that context's files only.
use std::time::Duration;

use jiff::Timestamp;
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::time::Instant;

use super::event_loop::{Event, Flow, Loop, scoped};
use crate::app::fleet::{self, Fleet, Link, Member};
use crate::app::{App, Command, ContextChange, Flash, Message, update};
use crate::cli::CommonArgs;
use crate::cluster::client::{ConnectError, Connection, NamespaceScope, connect};
use crate::ui::{self, theme::Theme};

/// What reaches the fleet's loop.
pub(super) enum FleetEvent {
    /// A message of the context `id` (its watchers, its tasks).
    Member { id: u64, event: Event },
    /// Terminal input (keys, resizes, the input closing).
    Input(Event),
    /// The connection of context `id` was made, or could not be.
    Connected {
        id: u64,
        result: Result<Connection, ConnectError>,
    },
}

/// A context before and after its connection.
enum Slot {
    /// Connecting, or unreachable: an app without rows, so that its name still shows.
    Waiting(Box<App>),
    Live(Box<Loop>),
}

struct Watched {
    /// Tags the context's messages (a context removed and added again is another id).
    id: u64,
    context: String,
    link: Link,
    slot: Slot,
}

impl Watched {
    fn app(&self) -> &App {
        match &self.slot {
            Slot::Waiting(app) => app,
            Slot::Live(state) => &state.app,
        }
    }

    fn app_mut(&mut self) -> &mut App {
        match &mut self.slot {
            Slot::Waiting(app) => app,
            Slot::Live(state) => &mut state.app,
        }
    }
}

/// The fleet's apps, its table and its channel.
pub struct FleetSession {
    common: CommonArgs,
    watched: Vec<Watched>,
    fleet: Fleet,
    tx: UnboundedSender<FleetEvent>,
    rx: UnboundedReceiver<FleetEvent>,
    input: UnboundedSender<Event>,
    next_id: u64,
    /// Every context of the kubeconfig (what `:ctx +NAME` may add).
    all: Vec<String>,
    /// The namespaces the table shows since a `:ns` (a context added watches them); `None`:
    /// those of the command line.
    scope: Option<NamespaceScope>,
    size: (u16, u16),
    /// Something of the fleet's own (a context added, connected, removed) changed on screen.
    dirty: bool,
    /// Asked to quit while writes were under way.
    quitting: bool,
    /// `:ctx NAME` for a context not watched yet: its id. The others are watched until it
    /// connects, and stay if it cannot (as a switch that fails leaves the view where it was).
    narrowing: Option<u64>,
    /// The loop ended on SIGTERM (the exit code says so).
    pub sigterm: bool,
    /// The shortest time between two frames under churn ([`Driven::frame_interval`]).
    frame_interval: Duration,
}

impl FleetSession {
    /// Sets the shortest time between two frames under churn
    /// ([`FRAME_INTERVAL`](super::event_loop::FRAME_INTERVAL) unless set): the fleet bench's
    /// `--frame-interval` measures other choices against it.
    pub fn set_frame_interval(&mut self, interval: Duration) {
        self.frame_interval = interval;
    }

    /// Connect to each of `contexts` (of the kubeconfig's `all`), each on its own task.
    pub fn start(common: &CommonArgs, contexts: &[String], all: Vec<String>) -> FleetSession {
        let (tx, rx) = unbounded_channel();
        let (input, mut input_rx) = unbounded_channel::<Event>();
        let forward = tx.clone();
        tokio::spawn(async move {
            while let Some(event) = input_rx.recv().await {
                if forward.send(FleetEvent::Input(event)).is_err() {
                    return;
                }
            }
        });
        let mut session = FleetSession {
            common: common.with_peers(contexts),
            watched: Vec::new(),
            fleet: Fleet::default(),
            tx,
            rx,
            input,
            next_id: 0,
            all,
            scope: None,
            size: (80, 24),
            dirty: true,
            quitting: false,
            narrowing: None,
            sigterm: false,
            frame_interval: super::event_loop::FRAME_INTERVAL,
        };
        for name in contexts {
            session.add(name);
        }
        session
    }

    /// The live view of the one context `conn` connected to (`kdrift`, `kdrift demo`): a fleet
    /// of one, which looks as a view of one context always has (no CONTEXT column); `:ctx +NAME`
    /// adds another beside it, `:ctx NAME` watches another instead.
    pub fn one(common: &CommonArgs, conn: Connection) -> FleetSession {
        let context = conn.context.clone();
        let mut fleet = FleetSession::start(common, &[], conn.contexts.clone());
        if let Some(peers) = &fleet.common.peers {
            peers.add(&context);
        }
        let id = fleet.next_id;
        fleet.next_id += 1;
        let mut app = App::new(
            context.clone(),
            conn.contexts.clone(),
            conn.scope.clone(),
            Timestamp::now(),
        );
        app.readonly = common.readonly;
        fleet.watched.push(Watched {
            id,
            context,
            link: Link::Connecting,
            slot: Slot::Waiting(Box::new(app)),
        });
        // The flags as given (an in-cluster connection has no context to name).
        let common = fleet.common.clone();
        fleet.go_live(0, &common, conn);
        fleet
    }

    /// The context at `at` connected: its loop starts on `conn`, its messages tagged and
    /// forwarded to the fleet's channel; what was typed and said while it connected stays.
    fn go_live(&mut self, at: usize, common: &CommonArgs, conn: Connection) {
        let Some(w) = self.watched.get_mut(at) else {
            return;
        };
        let id = w.id;
        let (tx, mut rx) = unbounded_channel::<Event>();
        let forward = self.tx.clone();
        tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                if forward.send(FleetEvent::Member { id, event }).is_err() {
                    return;
                }
            }
        });
        let mut state = Loop::start(common, conn, tx);
        let (width, height) = self.size;
        update(&mut state.app, Message::Resize { width, height });
        // What was typed and said before it connected stays: a notice at start, the filter,
        // sort and kind of the table, a prompt.
        if let Slot::Waiting(waiting) = &w.slot {
            let app = &mut state.app;
            app.flash = waiting.flash.clone();
            app.prompt = waiting.prompt.clone();
            app.help = waiting.help;
            app.table.filter = waiting.table.filter.clone();
            app.table.sort = waiting.table.sort;
            app.table.kind = waiting.table.kind;
            app.table.mark_stale();
        }
        w.slot = Slot::Live(Box::new(state));
        w.link = Link::Connected;
    }

    /// A sender into the loop (for terminal input).
    pub fn sender(&self) -> UnboundedSender<Event> {
        self.input.clone()
    }

    /// The fleet's table (its selection, its views over several contexts).
    pub fn fleet(&self) -> &Fleet {
        &self.fleet
    }

    /// The contexts watched, in order, with their apps.
    pub fn members(&self) -> Vec<Member<'_>> {
        self.watched
            .iter()
            .map(|w| Member {
                context: &w.context,
                link: &w.link,
                app: w.app(),
            })
            .collect()
    }

    /// Show `notice` over the fleet's table (in the first context's status line).
    pub fn notice(&mut self, notice: Flash) {
        if let Some(first) = self.watched.first_mut() {
            update(first.app_mut(), Message::Notice(notice));
        }
    }

    /// Accepts and reverts still under way, in every context.
    pub fn unfinished(&self) -> usize {
        self.loops().map(|l| l.writes).sum()
    }

    /// What the accepts and reverts that ended while quitting did, context by context (named
    /// when several are watched).
    pub fn outcomes(&self) -> Vec<String> {
        let several = self.watched.len() > 1;
        self.watched
            .iter()
            .filter_map(|w| match &w.slot {
                Slot::Live(state) => Some((w.context.as_str(), &state.outcomes)),
                Slot::Waiting(_) => None,
            })
            .flat_map(|(context, outcomes)| {
                outcomes.iter().map(move |o| match several {
                    true => format!("[{context}] {o}"),
                    false => o.clone(),
                })
            })
            .collect()
    }

    /// The app of the first context watched (a view of one context's only one).
    pub fn app(&self) -> Option<&App> {
        self.watched.first().map(Watched::app)
    }

    /// After a quit that left writes under way: waits up to `limit` for them to end.
    pub async fn finish_writes(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        for state in self.loops_mut() {
            state.quitting = true;
        }
        while self.unfinished() > 0 {
            let ev = match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(ev)) => ev,
                _ => break,
            };
            if let FleetEvent::Member { id, event } = ev
                && matches!(
                    event,
                    Event::App(
                        Message::Accepted { .. }
                            | Message::Reverted { .. }
                            | Message::RolledBack { .. }
                    )
                )
                && let Some(Slot::Live(state)) = self
                    .watched
                    .iter_mut()
                    .find(|w| w.id == id)
                    .map(|w| &mut w.slot)
            {
                let _ = state.handle(event);
            }
        }
    }

    fn loops(&self) -> impl Iterator<Item = &Loop> {
        self.watched.iter().filter_map(|w| match &w.slot {
            Slot::Live(state) => Some(&**state),
            Slot::Waiting(_) => None,
        })
    }

    fn loops_mut(&mut self) -> impl Iterator<Item = &mut Loop> {
        self.watched.iter_mut().filter_map(|w| match &mut w.slot {
            Slot::Live(state) => Some(&mut **state),
            Slot::Waiting(_) => None,
        })
    }

    /// Start watching `name`: connect on a task, its rows joining the table once it answers.
    fn add(&mut self, name: &str) {
        if self.watched.iter().any(|w| w.context == name) {
            self.flash(format!("context \"{name}\" is watched already"), false);
            return;
        }
        let id = self.next_id;
        self.next_id += 1;
        if let Some(peers) = &self.common.peers {
            peers.add(name);
        }
        let mut common = self.common.for_context(name);
        if let Some(scope) = &self.scope {
            common = scoped(&common, scope);
        }
        let scope = match (&common.namespace, common.all_namespaces) {
            (Some(ns), false) => NamespaceScope::One(ns.clone()),
            _ => NamespaceScope::All,
        };
        let mut app = App::new(name, self.all.clone(), scope, Timestamp::now());
        app.readonly = common.readonly;
        (app.width, app.height) = self.size;
        // The table's filter, sort and kind are the fleet's: a context added takes them (they
        // are carried to its loop once it connects).
        if let Some(lead) = self
            .watched
            .get(self.fleet.lead.min(self.watched.len().saturating_sub(1)))
        {
            let table = &lead.app().table;
            app.table.filter = table.filter.clone();
            app.table.sort = table.sort;
            app.table.kind = table.kind;
            app.table.mark_stale();
        }
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let result = connect(&common.connection()).await;
            let _ = tx.send(FleetEvent::Connected { id, result });
        });
        self.watched.push(Watched {
            id,
            context: name.to_owned(),
            link: Link::Connecting,
            slot: Slot::Waiting(Box::new(app)),
        });
        self.dirty = true;
    }

    /// Stop watching `name` (its watchers and tasks end with its loop).
    fn remove(&mut self, name: &str) {
        let Some(at) = self.watched.iter().position(|w| w.context == name) else {
            self.flash(format!("context \"{name}\" is not watched"), true);
            return;
        };
        if self.watched.len() == 1 {
            self.flash(
                format!(
                    "\"{name}\" is the only context watched: :ctx NAME watches another instead"
                ),
                true,
            );
            return;
        }
        if let Slot::Live(state) = &self.watched[at].slot
            && state.writes > 0
        {
            self.flash(
                format!("an accept or revert is under way in \"{name}\": remove it once it ends"),
                true,
            );
            return;
        }
        self.watched.remove(at);
        self.fleet.removed(at);
        self.dirty = true;
    }

    /// `:ctx NAME`: watch `name` alone — at once when it is watched already, else once it
    /// connects.
    fn narrow(&mut self, name: &str) {
        match self.watched.iter().find(|w| w.context == name) {
            Some(w) => self.keep_only(w.id),
            None => {
                self.add(name);
                self.narrowing = self.watched.last().map(|w| w.id);
            }
        }
    }

    /// Stop watching every context but `id`'s.
    fn keep_only(&mut self, id: u64) {
        let others: Vec<String> = self
            .watched
            .iter()
            .filter(|w| w.id != id)
            .map(|w| w.context.clone())
            .collect();
        for other in others {
            self.remove(&other);
        }
        self.fleet.focus = None;
    }

    /// A message in the status line of the lead context.
    fn flash(&mut self, text: String, error: bool) {
        let lead = self.fleet.lead.min(self.watched.len().saturating_sub(1));
        if let Some(w) = self.watched.get_mut(lead) {
            update(w.app_mut(), Message::Notice(Flash { text, error }));
        }
    }

    /// `q`, ctrl-c, SIGTERM or the input closing: quit now, or once every context's writes
    /// under way end (asked twice: now).
    fn quit(&mut self) -> Flow {
        if self.quitting || self.unfinished() == 0 {
            return Flow::Quit;
        }
        self.quitting = true;
        for state in self.loops_mut() {
            let _ = state.quit();
        }
        Flow::Continue
    }

    pub(super) fn handle(&mut self, ev: FleetEvent) -> Flow {
        match ev {
            FleetEvent::Member { id, event } => {
                let Some(w) = self.watched.iter_mut().find(|w| w.id == id) else {
                    // A context removed since: its late messages are dropped.
                    return Flow::Continue;
                };
                let Slot::Live(state) = &mut w.slot else {
                    return Flow::Continue;
                };
                // A reading for the compare view is the fleet's, not the context's app's.
                let event = match event {
                    Event::App(Message::CompareRead { key, result }) => {
                        if let Some(view) = &mut self.fleet.compare {
                            view.read(&w.context, &key, result);
                            self.dirty = true;
                        }
                        return Flow::Continue;
                    }
                    event => event,
                };
                let ended = matches!(
                    event,
                    Event::App(
                        Message::Accepted { .. }
                            | Message::Reverted { .. }
                            | Message::RolledBack { .. }
                    )
                );
                let flow = state.handle(event);
                if ended && self.quitting {
                    // Quit once the last write of every context ended.
                    return if self.unfinished() == 0 {
                        Flow::Quit
                    } else {
                        Flow::Continue
                    };
                }
                match flow {
                    Flow::Quit => self.quit(),
                    flow => flow,
                }
            }
            FleetEvent::Connected { id, result } => {
                let Some(at) = self.watched.iter().position(|w| w.id == id) else {
                    return Flow::Continue;
                };
                self.dirty = true;
                let common = self.common.for_context(&self.watched[at].context);
                let narrowing =
                    self.narrowing.take_if(|n| *n == id).is_some() && self.watched.len() > 1;
                let w = &mut self.watched[at];
                match result {
                    Ok(conn) => {
                        tracing::info!(context = %conn.context, url = %conn.cluster_url, "fleet: connected");
                        self.go_live(at, &common, conn);
                        if narrowing {
                            self.keep_only(id);
                        }
                    }
                    Err(e) if narrowing => {
                        // `:ctx NAME` that cannot connect: the view stays as it was.
                        let text = format!("context \"{}\": {e}", w.context);
                        tracing::warn!(context = %w.context, error = %text, "fleet: cannot switch");
                        self.watched.remove(at);
                        self.fleet.removed(at);
                        self.flash(text, true);
                    }
                    Err(e) => {
                        let text = e.to_string();
                        tracing::warn!(context = %w.context, error = %text, "fleet: cannot connect");
                        w.link = Link::Unreachable(text.clone());
                        let context = w.context.clone();
                        self.flash(format!("context \"{context}\": {text}"), true);
                    }
                }
                Flow::Continue
            }
            FleetEvent::Input(Event::App(Message::Key(key))) => {
                self.dirty = true;
                let routed = {
                    let mut apps: Vec<&mut App> =
                        self.watched.iter_mut().map(Watched::app_mut).collect();
                    fleet::handle_key(&mut self.fleet, &mut apps, key)
                };
                self.run(routed)
            }
            FleetEvent::Input(Event::App(Message::Resize { width, height })) => {
                self.size = (width, height);
                self.dirty = true;
                for w in &mut self.watched {
                    update(w.app_mut(), Message::Resize { width, height });
                }
                Flow::Continue
            }
            FleetEvent::Input(Event::InputClosed) => self.quit(),
            FleetEvent::Input(_) => Flow::Continue,
        }
    }

    /// Carry out the commands of each context: the fleet's own (quit, the contexts watched, a
    /// namespace for all), the rest on the context's connection.
    fn run(&mut self, commands: Vec<(usize, Command)>) -> Flow {
        let mut flow = Flow::Continue;
        let mut changes = Vec::new();
        for (i, command) in commands {
            match command {
                Command::Quit => return self.quit(),
                Command::Suspend => flow = Flow::Suspend,
                Command::Switch {
                    context: Some(name),
                    ..
                } => changes.push(Change::Narrow(name)),
                Command::Switch {
                    context: None,
                    scope,
                } => {
                    // `:ns` is the table's, so every context's, and a context's added later.
                    self.scope = Some(scope.clone());
                    for state in self.loops_mut() {
                        let _ = state.run(vec![Command::Switch {
                            context: None,
                            scope: scope.clone(),
                        }]);
                    }
                }
                Command::Compare { key, api_version } => self.compare(key, api_version),
                Command::Contexts(ContextChange::Add(name)) => changes.push(Change::Add(name)),
                Command::Contexts(ContextChange::Remove(name)) => {
                    changes.push(Change::Remove(name))
                }
                other => {
                    if let Some(Slot::Live(state)) = self.watched.get_mut(i).map(|w| &mut w.slot) {
                        match state.run(vec![other]) {
                            Flow::Quit => return self.quit(),
                            Flow::Suspend => flow = Flow::Suspend,
                            Flow::Continue => {}
                        }
                    }
                }
            }
        }
        for change in changes {
            match change {
                Change::Narrow(name) => self.narrow(&name),
                Change::Add(name) => self.add(&name),
                Change::Remove(name) => self.remove(&name),
            }
        }
        flow
    }

    /// The compare view asks every context for `key`: each connected one reads it on its own
    /// connection; one not connected answers at once with why.
    fn compare(&mut self, key: crate::manifest::ObjectKey, api_version: String) {
        for w in &mut self.watched {
            match &mut w.slot {
                Slot::Live(state) => {
                    let _ = state.run(vec![Command::Compare {
                        key: key.clone(),
                        api_version: api_version.clone(),
                    }]);
                }
                Slot::Waiting(_) => {
                    let why = match &w.link {
                        Link::Unreachable(e) => format!("unreachable: {e}"),
                        _ => "not connected yet (ctrl-r reads again)".to_owned(),
                    };
                    if let Some(view) = &mut self.fleet.compare {
                        view.read(&w.context, &key, Err(why));
                    }
                }
            }
        }
    }
}

/// What the one loop ([`drive`]) asks of the view: its events, whether and when to draw, a
/// frame.
impl FleetSession {
    /// The channel every event of the view arrives on.
    pub(super) fn events(&mut self) -> &mut UnboundedReceiver<FleetEvent> {
        &mut self.rx
    }

    /// The terminal's size at start.
    pub(super) fn sized(&mut self, width: u16, height: u16) {
        self.size = (width, height);
        for w in &mut self.watched {
            (w.app_mut().width, w.app_mut().height) = self.size;
        }
    }

    /// Seconds until an age on screen changes (the loop then wakes to draw it).
    pub(super) fn next_age_change(&self) -> Option<i64> {
        self.watched
            .iter()
            .filter_map(|w| ui::next_age_change(w.app()))
            .min()
    }

    /// Something must be drawn again (an age changed, the terminal came back).
    pub(super) fn redraw(&mut self) {
        self.dirty = true;
    }

    /// Something changed on screen since the last frame.
    pub(super) fn dirty(&self) -> bool {
        self.dirty || self.watched.iter().any(|w| w.app().dirty)
    }

    /// SIGTERM arrived.
    pub(super) fn sigterm(&mut self) -> Flow {
        self.sigterm = true;
        self.quit()
    }

    /// Lists that ended so far: after each, the pages it freed are given back.
    pub(super) fn lists_done(&self) -> u64 {
        self.loops().map(Loop::lists_done).sum()
    }

    /// The shortest time between two frames while events keep coming (a frame after a quiet
    /// spell longer than it is drawn at once).
    pub(super) fn frame_interval(&self) -> Duration {
        self.frame_interval
    }

    /// Prepare and draw a frame.
    pub(super) fn frame<B: Backend>(
        &mut self,
        term: &mut Terminal<B>,
        theme: &Theme,
    ) -> std::io::Result<Flow> {
        {
            let links: Vec<Link> = self.watched.iter().map(|w| w.link.clone()).collect();
            let links: Vec<&Link> = links.iter().collect();
            let mut apps: Vec<&mut App> = self.watched.iter_mut().map(Watched::app_mut).collect();
            fleet::name_contexts(&mut apps);
            fleet::show_states(&mut apps, &links);
        }
        let now = Timestamp::now();
        for i in 0..self.watched.len() {
            let app = self.watched[i].app_mut();
            app.now = now;
            let commands = app.prepare_frame();
            if !commands.is_empty()
                && matches!(
                    self.run(commands.into_iter().map(|c| (i, c)).collect()),
                    Flow::Quit
                )
            {
                return Ok(Flow::Quit);
            }
        }
        {
            let mut apps: Vec<&mut App> = self.watched.iter_mut().map(Watched::app_mut).collect();
            // A view that ended by itself (an accept committed) goes back to the fleet's
            // table or list.
            fleet::settle(&mut self.fleet, &mut apps);
            // Another context's message shows, named by it.
            fleet::gather_messages(&self.fleet, &mut apps);
            let apps: Vec<&App> = apps.into_iter().map(|a| &*a).collect();
            self.fleet.refresh(&apps);
        }
        let members = self.members();
        term.draw(|f| ui::fleet::render_fleet(&self.fleet, &members, theme, f))
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        drop(members);
        self.dirty = false;
        for w in &mut self.watched {
            w.app_mut().dirty = false;
        }
        Ok(Flow::Continue)
    }
}

/// A change to the contexts watched, made once the commands of a key have run.
enum Change {
    Narrow(String),
    Add(String),
    Remove(String),
}
