//! The real kubectl against the demo cluster: every write path, `create`, the GitOps kinds,
//! logs, nodes, workloads and every built-in kind, stored as a real server stores them.
//!
//! One test binary per theme (each links the whole crate); each file a module.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../sim/api.rs"]
mod api; // the demo cluster through kube-rs (its own tests)
#[path = "../common/mod.rs"]
mod common;
#[path = "../demo_helm/mod.rs"]
mod demo_helm;
#[path = "../kubectl_bin/mod.rs"]
pub mod kubectl_bin;

mod create;
mod gitops;
mod kinds;
mod logs;
mod nodes;
mod workloads;
mod writes;
