//! What reaches [`update`](super::update) — input, cluster events, manifest reloads, the answers
//! of IO tasks — and the [`Command`]s it hands the runtime to carry out.
use std::collections::BTreeMap;
use std::sync::Arc;

use crossterm::event::KeyEvent;

use super::{Flash, Stalled, accept, objects, revert};
use crate::cluster::client::NamespaceScope;
use crate::cluster::kinds::ServedKind;
use crate::cluster::live::{Fetched, FetchedObject, Wanted};
use crate::cluster::watch::ClusterMessage;
use crate::manifest::ManifestIndex;
use crate::manifest::ObjectKey;
use crate::manifest::reload::FileChange;

/// Everything that can happen to the app, from any source.
#[derive(Debug, Clone)]
pub enum Message {
    Key(KeyEvent),
    /// What the owners' Applications, Kustomizations and HelmReleases say (see
    /// [`Command::ReadReconcilers`]).
    /// `epoch`: the table watchers' generation when they were asked (an answer about the cluster
    /// left by `:ctx` is dropped).
    Reconcilers {
        epoch: u64,
        read: BTreeMap<crate::gitops::Owner, crate::gitops::Reconciler>,
    },
    /// What the pods of rows short of ready ones say is wrong (see [`Command::ExplainStalls`]).
    StallsExplained(Vec<(ObjectKey, Option<String>)>),
    Resize {
        width: u16,
        height: u16,
    },
    Cluster(ClusterMessage),
    /// The runtime switched to a new connection or namespace scope (reply to `Command::Switch`).
    Switched {
        epoch: u64,
        context: String,
        contexts: Vec<String>,
        scope: NamespaceScope,
    },
    /// The cluster's namespaces, sorted, for the `:ns` picker (reply to `Command::ListNamespaces`),
    /// or why they could not be listed.
    Namespaces(Result<Vec<String>, String>),
    /// Something found outside the app (a bad theme file, where the demo cluster runs), shown in
    /// the status bar until the next key; a note (not an error) leaves an error shown in place.
    Notice(Flash),
    /// The manifests were loaded (off the UI thread) at start.
    Manifests(Arc<ManifestIndex>),
    /// Manifest files changed on disk and were re-read.
    ManifestsChanged(Vec<FileChange>),
    /// The Helm releases of the scope, read at start and again whenever a release record
    /// changes (`helm upgrade`, `rollback`, `uninstall`); `epoch` as for the table's watcher.
    HelmReleases {
        epoch: u64,
        releases: crate::helm::Releases,
    },
    /// The checkout's charts rendered for `Command::RenderCharts` number `id`.
    ChartsRendered {
        id: u64,
        renders: Vec<crate::manifest::charts::ChartRender>,
        problems: Vec<crate::manifest::Problem>,
    },
    /// The rollback view's plan (`Command::PlanRollback` number `id`): its lines, question and
    /// whether it does nothing, or why there is none.
    RollbackPlanned {
        id: u64,
        result: Result<super::rollback::PlanShown, String>,
    },
    /// The rollback of view `id` ended: what it did, or why it stopped.
    RolledBack {
        id: u64,
        result: Result<Vec<String>, String>,
    },
    /// Live objects fetched for `Command::Fetch`.
    Fetched(Vec<Fetched>),
    /// The kinds of the manifests mapped through discovery (reply to `Command::MapKinds`).
    KindsMapped(Result<objects::MappedKinds, String>),
    /// The whole live object for `Command::FetchDiff`.
    DiffFetched(FetchedObject),
    /// The live object, manifest file and git state for `Command::PrepareAccept`.
    AcceptReady(Box<accept::AcceptFetched>),
    /// The end of `Command::Accept`: what was committed, or why nothing was.
    Accepted {
        key: ObjectKey,
        result: Result<String, String>,
    },
    /// The server-side dry run for `Command::PreviewRevert` (the error as the headless command
    /// words it).
    RevertPreviewed {
        id: u64,
        result: Result<revert::PreviewShown, String>,
    },
    /// The answer to `Command::Revert`.
    Reverted {
        id: u64,
        result: Result<revert::RevertDone, String>,
    },
    /// This context's reading of an object for the fleet's compare view (`Command::Compare`):
    /// the object and its manifest here, or why it could not be read.
    CompareRead {
        key: ObjectKey,
        result: Result<Box<crate::drift::fleet::Reading>, String>,
    },
    /// What the log stream of `Command::OpenLog` tagged `epoch` read or met.
    Log {
        epoch: u64,
        event: crate::cluster::logs::LogEvent,
    },
}

/// A change to the set of contexts watched at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContextChange {
    Add(String),
    Remove(String),
}

/// What the runtime must do for the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Quit,
    /// Read the GitOps owners seen on live objects (`Message::Reconcilers`).
    ReadReconcilers(Vec<crate::gitops::Owner>),
    /// List the pods of rows that stalled or lack ready pods and say why they are not ready
    /// (`Message::StallsExplained`).
    ExplainStalls(Vec<Stalled>),
    /// ctrl-z: restore the terminal, stop the process, re-enter on resume.
    Suspend,
    /// Restart the watchers on another context (`None` = the same) and namespace scope.
    Switch {
        context: Option<String>,
        scope: NamespaceScope,
    },
    /// `:ctx +NAME` / `:ctx -NAME`: watch one more context beside those watched, or stop
    /// watching one (the fleet's table, [`super::fleet`]).
    Contexts(ContextChange),
    /// Watch ReplicaSets, Pods and Events of one namespace for the detail view, tagging their
    /// messages with `epoch` (replaces any detail watchers).
    WatchDetail {
        namespace: String,
        epoch: u64,
    },
    /// The detail view closed: stop its watchers.
    StopDetail,
    /// `:ns` without a name: list the cluster's namespaces off the loop; answer with
    /// `Message::Namespaces`.
    ListNamespaces,
    /// Render the charts of `index` with the user's helm (git's desired state of the Helm
    /// releases' objects, as `check` renders them); answer with `Message::ChartsRendered`
    /// tagged `id`.
    RenderCharts {
        id: u64,
        index: accept::SharedIndex,
    },
    /// GET (or list) these objects, of any kind, each in the `apiVersion` given, and answer
    /// with `Message::Fetched` (in batches): their manifests changed and no live object is kept
    /// to compare again.
    Fetch(Vec<Wanted>),
    /// Map these `apiVersion`s and kinds (of the manifests) through discovery and read their
    /// schemas; answer with `Message::KindsMapped`.
    MapKinds(std::collections::BTreeSet<(String, String)>),
    /// Watch the objects of these kinds (replacing the watchers of the kinds watched before).
    WatchObjects(Vec<ServedKind>),
    /// GET one object (in its manifest's `apiVersion`) for the diff view; answer with
    /// `Message::DiffFetched`.
    FetchDiff(ObjectKey, String),
    /// GET one object, read its manifest `file` and ask git about it (under the manifests
    /// `root`) for the accept view; answer with `Message::AcceptReady`.
    PrepareAccept {
        key: ObjectKey,
        api_version: String,
        file: std::path::PathBuf,
        root: std::path::PathBuf,
        /// For a kustomize root's object, the other files its root reads (the accept may edit
        /// an overlay, a patch or a generator source rather than `file`).
        others: Vec<std::path::PathBuf>,
    },
    /// GET a Helm release's object, plan and prove the accept of its fields (`only` those
    /// paths; every field offered when `None`) into its chart's values file of `index`, and read
    /// that file and ask git about it; answer with `Message::AcceptReady`.
    PrepareChartAccept {
        key: ObjectKey,
        api_version: String,
        index: accept::SharedIndex,
        only: Option<Vec<String>>,
    },
    /// Plan the rollback of `key` to its previous revision (the runtime keeps the plan); answer
    /// with `Message::RollbackPlanned`.
    PlanRollback {
        id: u64,
        key: ObjectKey,
    },
    /// Carry out the plan of view `id`; answer with `Message::RolledBack`.
    Rollback {
        id: u64,
        key: ObjectKey,
    },
    /// Check the live values again, write the file and commit it; answer with
    /// `Message::Accepted`.
    Accept(Box<accept::AcceptRequest>),
    /// Server-side dry run of reverting `key` to its manifest; answer with
    /// `Message::RevertPreviewed` tagged `id`.
    PreviewRevert {
        id: u64,
        key: ObjectKey,
    },
    /// Revert `key` as previewed under `id`; answer with `Message::Reverted`.
    Revert {
        id: u64,
        key: ObjectKey,
    },
    /// Stream a container's log (replacing any log stream), answering with `Message::Log`
    /// tagged `epoch`.
    OpenLog {
        epoch: u64,
        request: crate::cluster::logs::LogRequest,
    },
    /// The log view closed: stop its stream.
    StopLog,
    /// Read one object (in `api_version`) as this cluster has it, with its manifest here, for
    /// the fleet's compare view; answer with `Message::CompareRead`.
    Compare {
        key: ObjectKey,
        api_version: String,
    },
}

/// Where the messages of a task off the loop go (the loop's channel): false once the loop is
/// gone.
pub type Say = std::sync::Arc<dyn Fn(Message) -> bool + Send + Sync>;
