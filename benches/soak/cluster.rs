//! The soak's cluster side: a demo cluster (controllers on, fast timings, nodes enough for every
//! pod) seeded with Deployments, StatefulSets and DaemonSets from the manifests the kdrift side
//! reads, a writer that changes them at random as people and tools do (scale, set image, set env,
//! delete, create, namespace delete), and the faults of the server's handle, one round at a time.
//! The bench runs it in a child process (`serve`), so that the parent's memory is kdrift's alone;
//! the short test runs it in its own process.

#![allow(dead_code)] // the bench and the short test each use part of it

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kdrift::sim::ApiError;
use kdrift::sim::resources::ResourceType;
use kdrift::sim::server::{Scenario, SimConfig, SimServer, Timings};
use kdrift::sim::store::{Patch, Store, WriteOptions};
use serde_json::{Value, json};

/// How many objects of each kind, in how many namespaces.
#[derive(Debug, Clone, Copy)]
pub struct Population {
    pub deployments: usize,
    pub statefulsets: usize,
    pub daemonsets: usize,
    pub namespaces: usize,
    pub nodes: usize,
}

impl Population {
    /// The bench's: 1,000 Deployments, 100 StatefulSets and 10 DaemonSets (on 20 nodes: 200 of
    /// their pods), in 20 namespaces.
    pub const BENCH: Population = Population {
        deployments: 1_000,
        statefulsets: 100,
        daemonsets: 10,
        namespaces: 20,
        nodes: 20,
    };

    /// The short test's: a tenth of it.
    pub const SHORT: Population = Population {
        deployments: 100,
        statefulsets: 10,
        daemonsets: 3,
        namespaces: 5,
        nodes: 4,
    };

    pub fn by_name(name: &str) -> Option<Population> {
        match name {
            "bench" => Some(Population::BENCH),
            "short" => Some(Population::SHORT),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        if self.deployments == Population::BENCH.deployments {
            "bench"
        } else {
            "short"
        }
    }

    /// Every seeded object: (kind, namespace, name), each with a manifest.
    pub fn objects(&self) -> Vec<Seeded> {
        let kinds = [
            (Kind::Deployment, self.deployments),
            (Kind::StatefulSet, self.statefulsets),
            (Kind::DaemonSet, self.daemonsets),
        ];
        kinds
            .into_iter()
            .flat_map(|(kind, n)| {
                (0..n).map(move |i| Seeded {
                    kind,
                    namespace: namespace_of(i, self.namespaces),
                    name: format!("{}-{i:04}", kind.prefix()),
                })
            })
            .collect()
    }

    pub fn namespaces(&self) -> Vec<String> {
        (0..self.namespaces)
            .map(|i| namespace_of(i, self.namespaces))
            .collect()
    }
}

fn namespace_of(i: usize, namespaces: usize) -> String {
    format!("soak-{:02}", i % namespaces)
}

/// The workload kinds of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Deployment,
    StatefulSet,
    DaemonSet,
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Kind::Deployment => "web",
            Kind::StatefulSet => "db",
            Kind::DaemonSet => "agent",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Deployment => "Deployment",
            Kind::StatefulSet => "StatefulSet",
            Kind::DaemonSet => "DaemonSet",
        }
    }

    fn resource(self) -> ResourceType {
        match self {
            Kind::Deployment => ResourceType::DEPLOYMENT,
            Kind::StatefulSet => ResourceType::STATEFUL_SET,
            Kind::DaemonSet => ResourceType::DAEMON_SET,
        }
    }
}

/// One seeded object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seeded {
    pub kind: Kind,
    pub namespace: String,
    pub name: String,
}

impl Seeded {
    /// Its manifest, as the kdrift side writes it to disk and as it is first created: one
    /// replica, one container, no resource requests (so that pods fit the nodes).
    pub fn manifest(&self) -> String {
        let Seeded {
            kind,
            namespace,
            name,
        } = self;
        let replicas = match kind {
            Kind::DaemonSet => String::new(),
            _ => "  replicas: 1\n".to_string(),
        };
        let service = match kind {
            Kind::StatefulSet => format!("  serviceName: {name}\n"),
            _ => String::new(),
        };
        super::manifest::workload_yaml(
            kind.name(),
            name,
            namespace,
            &format!("{replicas}{service}"),
            "1.0.0",
            "",
        )
    }

    fn object(&self) -> Value {
        serde_yaml::from_str(&self.manifest()).unwrap()
    }
}

/// A small deterministic random source (SplitMix64), so a run can be repeated from its seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// A duration between `low` and `high` milliseconds.
    pub fn millis(&mut self, low: u64, high: u64) -> Duration {
        Duration::from_millis(low + self.next() % (high - low + 1))
    }
}

/// A fault of the demo cluster's handle, applied for a while then lifted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Every open watch ends (as a load balancer's idle cut).
    DropWatches,
    /// The API server closes every connection and listens again on the same port.
    Restart,
    /// Watches from a resourceVersion get `410 Gone` for a while: clients list again.
    WatchGone(Duration),
    /// One namespace answers 403 for a while (a cluster-wide list or watch too).
    Forbid(String, Duration),
    /// Every reply waits this long, for a while.
    Latency(Duration, Duration),
    /// Every open watch stays open and sends nothing more.
    StallWatches,
}

impl Fault {
    /// A short name, by kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::DropWatches => "dropped watches",
            Fault::Restart => "API restart",
            Fault::WatchGone(_) => "410 on watch",
            Fault::Forbid(..) => "403 on a namespace",
            Fault::Latency(..) => "latency",
            Fault::StallWatches => "stalled watch",
        }
    }

    pub const KINDS: [&'static str; 6] = [
        "dropped watches",
        "API restart",
        "410 on watch",
        "403 on a namespace",
        "latency",
        "stalled watch",
    ];

    /// A random fault; `short` keeps its duration under a second (the test's). With `turn`,
    /// the kinds come in turn (`turn` counts the faults), only their details at random.
    pub fn random(
        rng: &mut Rng,
        population: &Population,
        short: bool,
        turn: Option<usize>,
    ) -> Fault {
        let (low, high) = if short { (200, 1_000) } else { (500, 4_000) };
        // A stalled watch costs half a minute to notice: one in eleven.
        let pick = match turn {
            Some(n) => 2 * (n % Fault::KINDS.len()),
            None => rng.below(11),
        };
        match pick {
            0 | 1 => Fault::DropWatches,
            2 | 3 => Fault::Restart,
            4 | 5 => Fault::WatchGone(rng.millis(low, high)),
            6 | 7 => {
                let ns = population.namespaces();
                Fault::Forbid(ns[rng.below(ns.len())].clone(), rng.millis(low, high))
            }
            8 | 9 => Fault::Latency(rng.millis(0, 2_000), rng.millis(low, high)),
            _ => Fault::StallWatches,
        }
    }

    /// The fault as one line of the child's protocol.
    pub fn to_line(&self) -> String {
        let ms = |d: &Duration| d.as_millis();
        match self {
            Fault::DropWatches => "drop".into(),
            Fault::Restart => "restart".into(),
            Fault::WatchGone(d) => format!("gone {}", ms(d)),
            Fault::Forbid(ns, d) => format!("forbid {ns} {}", ms(d)),
            Fault::Latency(l, d) => format!("latency {} {}", ms(l), ms(d)),
            Fault::StallWatches => "stall".into(),
        }
    }

    pub fn from_words(words: &[&str]) -> Option<Fault> {
        let ms = |w: &str| w.parse().ok().map(Duration::from_millis);
        Some(match words {
            ["drop"] => Fault::DropWatches,
            ["restart"] => Fault::Restart,
            ["gone", d] => Fault::WatchGone(ms(d)?),
            ["forbid", ns, d] => Fault::Forbid(ns.to_string(), ms(d)?),
            ["latency", l, d] => Fault::Latency(ms(l)?, ms(d)?),
            ["stall"] => Fault::StallWatches,
            _ => return None,
        })
    }

    /// How long it lasts once applied (instant faults: none).
    fn duration(&self) -> Duration {
        match self {
            Fault::WatchGone(d) | Fault::Forbid(_, d) | Fault::Latency(_, d) => *d,
            Fault::DropWatches | Fault::Restart | Fault::StallWatches => Duration::ZERO,
        }
    }
}

/// When a round's fault began and ended, as seen on the cluster side.
#[derive(Debug, Clone, Copy)]
pub struct RoundTimes {
    /// From the fault's start to the end of the round (its end and the writer's stop).
    pub since_start: Duration,
    /// Writes made during the round (those that found their object).
    pub writes: usize,
}

/// The demo cluster with the soak's objects, its writer and its faults.
pub struct SoakCluster {
    pub server: SimServer,
    pub population: Population,
    rng: Rng,
}

impl SoakCluster {
    /// Starts the demo cluster and seeds it; returns once every object is created (their
    /// rollouts go on).
    pub async fn start(population: Population, seed: u64) -> SoakCluster {
        let server = SimServer::start(SimConfig {
            port: 0,
            scenario: Scenario::None,
            seed: false,
            timings: Timings::fast(),
            ..SimConfig::default()
        })
        .await
        .unwrap();
        let store = server.store();
        for n in 0..population.nodes {
            kdrift::sim::scenario::seed::register_node(store, &format!("node-{n:02}"), n).unwrap();
        }
        for ns in population.namespaces() {
            create_namespace(store, &ns);
        }
        for (i, object) in population.objects().iter().enumerate() {
            store
                .create(object.kind.resource(), object.object(), &applier())
                .unwrap();
            if i % 100 == 99 {
                // Let the controllers keep up rather than queue thousands of changes.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        SoakCluster {
            server,
            population,
            rng: Rng::new(seed),
        }
    }

    /// Writes at random for `lead`, applies `fault`, goes on writing while it lasts (a second
    /// after an instant one), then lifts it and stops writing.
    pub async fn round(&mut self, fault: &Fault, lead: Duration) -> RoundTimes {
        let stop = Arc::new(AtomicBool::new(false));
        let writer = tokio::spawn(write_until(
            self.server.store().clone(),
            self.population,
            Rng::new(self.rng.next()),
            stop.clone(),
        ));
        tokio::time::sleep(lead).await;
        let started = Instant::now();
        let faults = self.server.faults().clone();
        match fault {
            Fault::DropWatches => faults.drop_watches(),
            Fault::Restart => self.server.restart().await.unwrap(),
            Fault::WatchGone(_) => faults.set_watch_gone(true),
            Fault::Forbid(ns, _) => faults.forbid_namespace(ns),
            Fault::Latency(latency, _) => faults.set_latency(*latency),
            Fault::StallWatches => faults.stall_watches(),
        }
        let lasts = match fault.duration() {
            Duration::ZERO => Duration::from_secs(1),
            d => d,
        };
        tokio::time::sleep(lasts).await;
        match fault {
            Fault::WatchGone(_) => faults.set_watch_gone(false),
            Fault::Forbid(ns, _) => faults.allow_namespace(ns),
            Fault::Latency(..) => faults.set_latency(Duration::ZERO),
            Fault::DropWatches | Fault::Restart | Fault::StallWatches => {}
        }
        stop.store(true, Ordering::SeqCst);
        let writes = writer.await.unwrap();
        RoundTimes {
            since_start: started.elapsed(),
            writes,
        }
    }
}

/// The manager of the manifests' applier (trusted by the manifests' `.kdrift.yaml`).
fn applier() -> WriteOptions {
    WriteOptions::manager("soak-apply")
}

fn create_namespace(store: &Store, ns: &str) {
    let object = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
    match store.create(ResourceType::NAMESPACE, object, &applier()) {
        Ok(_) | Err(ApiError::AlreadyExists(_)) => {}
        Err(e) => panic!("cannot create namespace {ns}: {e}"),
    }
}

/// Names of the objects the writer creates without a manifest (unmanaged rows), per namespace.
const EXTRAS: usize = 5;

/// Random changes, about 20 a second, until `stop`; returns how many found their object.
async fn write_until(
    store: Store,
    population: Population,
    mut rng: Rng,
    stop: Arc<AtomicBool>,
) -> usize {
    let seeded = population.objects();
    let mut writes = 0;
    while !stop.load(Ordering::SeqCst) {
        if write_one(&store, &population, &seeded, &mut rng) {
            writes += 1;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    writes
}

/// One random change, as kubectl or an applier makes it; false when its object was not there.
fn write_one(store: &Store, population: &Population, seeded: &[Seeded], rng: &mut Rng) -> bool {
    let target = &seeded[rng.below(seeded.len())];
    let (resource, ns, name) = (target.kind.resource(), &target.namespace, &target.name);
    let result = match rng.below(100) {
        // kubectl scale (the scale subresource; a DaemonSet has none: its image instead).
        0..30 if target.kind != Kind::DaemonSet => store.patch(
            resource,
            ns,
            name,
            &Patch::Merge(json!({"spec": {"replicas": rng.below(4)}})),
            &WriteOptions {
                subresource: Some("scale".into()),
                ..WriteOptions::manager("kubectl")
            },
        ),
        // kubectl set image
        0..50 => store.patch(
            resource,
            ns,
            name,
            &Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "app", "image": format!("registry.example/{name}:1.0.{}", rng.below(4))}
            ]}}}})),
            &WriteOptions::manager("kubectl-set"),
        ),
        // kubectl set env
        50..70 => {
            let level = ["info", "debug", "warn"][rng.below(3)];
            store.patch(
                resource,
                ns,
                name,
                &Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
                    {"name": "app", "env": [{"name": "LOG_LEVEL", "value": level}]}
                ]}}}})),
                &WriteOptions::manager("kubectl-set"),
            )
        }
        // kubectl delete
        70..82 => store.delete(resource, ns, name, false),
        // kubectl apply of a manifest (its namespace, whole, if that went), or kubectl create
        // of an object no manifest describes.
        82..98 => {
            if store.get(ResourceType::NAMESPACE, "", ns).is_none() {
                create_namespace(store, ns);
                for object in seeded.iter().filter(|o| o.namespace == *ns) {
                    let _ = store.create(object.kind.resource(), object.object(), &applier());
                }
                return true;
            }
            if store.get(resource, ns, name).is_none() {
                store.create(resource, target.object(), &applier())
            } else {
                let extra = Seeded {
                    kind: Kind::Deployment,
                    namespace: ns.clone(),
                    name: format!("extra-{}", rng.below(EXTRAS)),
                };
                store.create(
                    ResourceType::DEPLOYMENT,
                    extra.object(),
                    &WriteOptions::manager("kubectl-create"),
                )
            }
        }
        // kubectl delete namespace
        _ => {
            let namespaces = population.namespaces();
            let ns = &namespaces[rng.below(namespaces.len())];
            store.delete(ResourceType::NAMESPACE, "", ns, false)
        }
    };
    match result {
        Ok(_) => true,
        Err(ApiError::NotFound(_) | ApiError::AlreadyExists(_) | ApiError::Conflict { .. }) => {
            false
        }
        Err(e) => panic!("the soak's write failed: {e}"),
    }
}

/// `soak --serve-cluster POPULATION SEED`: start and seed the cluster, print `URL <url>`, then
/// obey stdin: `round LEAD_MS FAULT…` (answered `done SINCE_START_MS WRITES`), `quit`.
pub fn serve(population: Population, seed: u64) {
    let rt = super::child::runtime();
    rt.block_on(async {
        let mut cluster = SoakCluster::start(population, seed).await;
        let mut rx = super::child::serving(&cluster.server.url());
        while let Some(line) = rx.recv().await {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["round", lead, fault @ ..] => {
                    let lead = Duration::from_millis(lead.parse().unwrap());
                    let fault = Fault::from_words(fault).unwrap();
                    let times = cluster.round(&fault, lead).await;
                    println!("done {} {}", times.since_start.as_millis(), times.writes);
                }
                ["quit"] => break,
                _ => println!("?"),
            }
            std::io::stdout().flush().unwrap();
        }
        cluster.server.shutdown().await;
    });
}
