//! The demo cluster's HTTP server: binds loopback, accepts connections, and hands each request
//! to the router; owns the public handle ([`SimServer`]) that tests, `kdrift demo` and the
//! serve command start, fault and restart.
//!
//! - [`router`]: URL → what is asked (discovery, a resource, a verb).
//! - [`handlers`]: the verbs on resources.
//! - [`watch`]: watch streams.
//! - `rows`: `Table` bodies laid out from the cells the store printed (see [`crate::printers`]).
//! - `request`: what a request asks (query, `dryRun`, selectors, media type), for every verb.
//! - `logs`: `pods/{name}/log`, made up from each container's run.
//! - `pod_posts`: `pods/{name}/eviction` (honouring PodDisruptionBudgets) and `pods/{name}/binding`.
//! - [`response`]: `Status` errors, content negotiation, request bodies.
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinHandle;

use super::faults::Faults;
use super::store::Store;

mod autoscaling_v1;
mod handlers;
mod logs;
mod pod_posts;
mod protobuf;
mod request;
mod response;
mod reviews;
pub(crate) mod router;
mod rows;
mod watch_stream;
mod writes;

pub use super::controller::{Gitops, Timings};
pub use super::scenario::Scenario;
/// Decode a protobuf request body to the JSON a v1.36 server would hold (see `protobuf`);
/// public for the benches.
pub use protobuf::decode as decode_protobuf;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind {
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot seed the demo cluster: {0}")]
    Seed(String),
}

/// How to start the demo cluster.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Port on 127.0.0.1; 0 = any free port.
    pub port: u16,
    pub scenario: Scenario,
    /// Seed the cluster from the demo manifests.
    pub seed: bool,
    pub timings: Timings,
    /// The git repositories the simulated GitOps controllers read, by URL (an Application's
    /// `spec.source.repoURL`; a Flux GitRepository `<name>` stands for the URL ending in
    /// `/<name>.git`) → a local repository, whose HEAD stands for the pushed branch.
    pub gitops_repos: BTreeMap<String, PathBuf>,
    /// The cluster of a demo fleet this server is (`staging`, `prod-eu`, …): seeded with its
    /// own folder of the fleet's repository too ([`crate::scenario::fleet`]).
    pub fleet_cluster: Option<String>,
}

impl Default for SimConfig {
    /// Any free port, seeded, no scenario, demo timings, no repository.
    fn default() -> SimConfig {
        SimConfig {
            port: 0,
            scenario: Scenario::None,
            seed: true,
            timings: Timings::default(),
            gitops_repos: BTreeMap::new(),
            fleet_cluster: None,
        }
    }
}

/// What every request handler shares.
pub(crate) struct ServerState {
    pub store: Store,
    pub faults: Faults,
    pub addr: SocketAddr,
    /// Flips to true when the listener closes: open connections and watches end.
    pub closing: watch::Receiver<bool>,
    /// Request bodies read at once: with the 3 MiB cap, at most 96 MiB of bodies in memory
    /// however many clients write together.
    pub body_permits: Arc<Semaphore>,
}

/// See [`ServerState::body_permits`].
const BODIES_AT_ONCE: usize = 32;

/// Connections served at once; more wait in the kernel's accept queue, so a flood of clients
/// cannot grow memory without bound.
const MAX_CONNECTIONS: usize = 512;

struct Listening {
    close: watch::Sender<bool>,
    task: JoinHandle<()>,
}

/// A running demo cluster.
pub struct SimServer {
    store: Store,
    faults: Faults,
    addr: SocketAddr,
    listening: Option<Listening>,
    /// The controllers and the scenario, stopped on shutdown (a restart keeps them).
    tasks: Vec<JoinHandle<()>>,
    /// The controllers' timings, when they run (a restart as another server runs them again).
    timings: Option<super::controller::Timings>,
    gitops: Gitops,
}

impl SimServer {
    /// Bind 127.0.0.1:`port` (0 = any free port) and serve: seed the demo manifests, run the
    /// controllers and play the scenario.
    pub async fn start(config: SimConfig) -> Result<SimServer, SimError> {
        let store = Store::new();
        if config.seed {
            super::scenario::seed(&store).map_err(|e| SimError::Seed(e.to_string()))?;
            if let Some(name) = &config.fleet_cluster {
                super::scenario::fleet::seed_cluster(&store, name)
                    .map_err(|e| SimError::Seed(e.to_string()))?;
            }
        }
        let mut server = SimServer::serve_store(store, config.port).await?;
        server.gitops = Gitops::new(config.gitops_repos, &config.timings);
        server.tasks = vec![
            super::controller::spawn(
                server.store.clone(),
                config.timings.clone(),
                server.gitops.clone(),
            ),
            super::scenario::spawn(server.store.clone(), server.gitops.clone(), config.scenario),
        ];
        if config.scenario == Scenario::Incident
            && config.fleet_cluster.as_deref() == Some(super::scenario::fleet::INCIDENT_CLUSTER)
        {
            server
                .tasks
                .push(super::scenario::fleet::spawn_step(server.store.clone()));
        }
        server.timings = Some(config.timings);
        Ok(server)
    }

    /// Serve `store` as it is, with no controller and no scenario: nothing changes unless a
    /// client writes (benchmarks and tests that fill the store themselves).
    pub async fn serve_store(store: Store, port: u16) -> Result<SimServer, SimError> {
        let listener = bind(port).await?;
        let addr = listener
            .local_addr()
            .map_err(|source| SimError::Bind { port, source })?;
        let mut server = SimServer {
            store,
            faults: Faults::default(),
            addr,
            listening: None,
            tasks: Vec::new(),
            timings: None,
            gitops: Gitops::default(),
        };
        server.listening = Some(server.serve(listener));
        Ok(server)
    }

    fn serve(&self, listener: TcpListener) -> Listening {
        let (close, closing) = watch::channel(false);
        let state = Arc::new(ServerState {
            store: self.store.clone(),
            faults: self.faults.clone(),
            addr: self.addr,
            closing: closing.clone(),
            body_permits: Arc::new(Semaphore::new(BODIES_AT_ONCE)),
        });
        let task = tokio::spawn(accept_loop(listener, state, closing));
        Listening { close, task }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// "http://127.0.0.1:PORT"
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A kubeconfig for this server: cluster, context and user `kdrift-demo`, namespace `default`.
    pub fn kubeconfig_yaml(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: kdrift-demo\n  cluster:\n    server: {}\ncontexts:\n- name: kdrift-demo\n  context:\n    cluster: kdrift-demo\n    user: kdrift-demo\n    namespace: default\ncurrent-context: kdrift-demo\nusers:\n- name: kdrift-demo\n  user: {{}}\npreferences: {{}}\n",
            self.url()
        )
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// The simulated GitOps controllers: their repositories, self-heal's delay, and when each
    /// drifted Application will be healed.
    pub fn gitops(&self) -> &Gitops {
        &self.gitops
    }

    /// Close the listener and every connection and watch, then listen again on the same port;
    /// the objects and their resourceVersions stay.
    pub async fn restart(&mut self) -> Result<(), SimError> {
        self.stop_listening().await;
        let listener = bind(self.addr.port()).await?;
        self.listening = Some(self.serve(listener));
        Ok(())
    }

    /// Close every connection and watch, then come back on the same port as another server:
    /// the objects of `store`, with their uids and resourceVersions (lower ones, as after an
    /// etcd restore or a cluster rebuilt behind the same address). The controllers run again on
    /// it; the scenario does not.
    pub async fn restart_as(&mut self, store: Store) -> Result<(), SimError> {
        for task in self.tasks.drain(..) {
            task.abort();
        }
        self.stop_listening().await;
        self.store = store;
        let listener = bind(self.addr.port()).await?;
        self.listening = Some(self.serve(listener));
        if let Some(timings) = &self.timings {
            self.tasks = vec![super::controller::spawn(
                self.store.clone(),
                timings.clone(),
                self.gitops.clone(),
            )];
        }
        Ok(())
    }

    async fn stop_listening(&mut self) {
        if let Some(listening) = self.listening.take() {
            let _ = listening.close.send(true);
            let _ = listening.task.await;
        }
    }

    /// Stop serving; open connections and watches end.
    pub async fn shutdown(mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
        self.stop_listening().await;
    }
}

async fn bind(port: u16) -> Result<TcpListener, SimError> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    // Right after a restart the old socket may linger for a moment: retry briefly.
    let mut last = None;
    for _ in 0..50 {
        match TcpListener::bind(addr).await {
            Ok(listener) => return Ok(listener),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && port != 0 => {
                last = Some(e);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(source) => return Err(SimError::Bind { port, source }),
        }
    }
    Err(SimError::Bind {
        port,
        source: last.unwrap_or_else(|| std::io::Error::other("address in use")),
    })
}

async fn accept_loop(
    listener: TcpListener,
    state: Arc<ServerState>,
    mut closing: watch::Receiver<bool>,
) {
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => p,
            _ = closing.changed() => break,
        };
        let Ok(permit) = permit else { break };
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = closing.changed() => break,
        };
        let Ok((stream, _)) = accepted else { continue };
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        let mut conn_closing = closing.clone();
        connections.spawn(async move {
            let _permit = permit;
            let service_state = state.clone();
            let service = service_fn(move |req| handlers::handle(service_state.clone(), req));
            let mut builder = http1::Builder::new();
            builder.timer(TokioTimer::new());
            builder.header_read_timeout(Duration::from_secs(30));
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = conn => {}
                _ = closed(&mut conn_closing) => {}
            }
        });
        // Reap finished connections so the set does not grow.
        while connections.try_join_next().is_some() {}
    }
    drop(listener);
    connections.shutdown().await;
}

/// Resolves once the server closes (the guard `wait_for` returns is not held across awaits).
pub(crate) async fn closed(closing: &mut watch::Receiver<bool>) {
    let _ = closing.wait_for(|c| *c).await;
}

impl Drop for SimServer {
    fn drop(&mut self) {
        // A server dropped without shutdown (a failing test) must not leave tasks running.
        for task in &self.tasks {
            task.abort();
        }
        if let Some(listening) = &self.listening {
            let _ = listening.close.send(true);
        }
    }
}
