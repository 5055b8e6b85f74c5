//! kdrift: watch Kubernetes rollouts live and settle drift between the cluster and git.
//!
//! The modules follow the data flow of `docs/ARCHITECTURE.md` ("Data flow"); their imports run
//! one way, down the layers it lists ("Layers", checked by `tests/docs/layers.rs`):
//! - [`dispatch`]: the program both binaries run; [`cli`]: the command line (clap) it parses;
//!   [`complete`]: shell completion of it, `TYPE/NAME` from the manifests.
//! - [`cluster`]: kube IO — watchers that turn API objects into slim rows and messages.
//! - [`manifest`]: loading and indexing the YAML manifests of a git checkout.
//! - [`helm`]: Helm's release records and charts as desired state.
//! - [`drift`], [`rollout`]: pure functions — live vs manifest, rollout phase.
//! - [`schema`], [`managed_fields`]: Kubernetes list merge keys and `fieldsV1` field sets,
//!   shared by the drift engine and the demo cluster (the `kdrift-schema` crate).
//! - [`revert`]: the pure decisions of a revert (apply config, removals, preview diff).
//! - [`accept`]: accepting live values into a manifest (shared by `kdrift accept` and the TUI).
//! - [`git`]: commits of accepted manifest files through the `git` command.
//! - [`app`]: pure state and `update(Message) -> Vec<Command>`.
//! - [`ui`]: pure rendering of the app state.
//! - [`runtime`]: the one loop that owns the terminal, the channel and the IO tasks.
//! - [`sim`]: the demo cluster, a simulated Kubernetes API server on loopback (the `kdrift-sim`
//!   crate, which never imports the app).
//! - [`packed`]: JSON values packed in one allocation each (manifest bodies, the timeline's
//!   previous versions), read in place.
//! - [`text`]: control characters from the cluster escaped in every output.
//! - [`intern`]: the one interner of values the process repeats by the thousand.
//! - [`user_config`]: the user's config file (read-only, default theme), folded into the flags.
//! - [`state`]: kdrift's state directory: the log's place and the Secret digest key.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod accept;
pub mod app;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod complete;
pub mod dispatch;
pub mod drift;
pub mod git;
pub mod gitops;
pub mod helm;
pub mod intern;
pub mod logging;
pub mod manifest;
pub mod packed;
pub mod process;
pub mod revert;
pub mod rollout;
pub mod runtime;
pub mod state;
pub mod text;
pub mod ui;
pub mod user_config;

// The shared crates, under the names the modules use.
pub use kdrift_schema::{gotypes, managed_fields, schema};
pub use kdrift_sim as sim;
