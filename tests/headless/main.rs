//! The headless commands (`check`, `diff`, `accept`, `revert`, `changes`, `blame`, `logs`,
//! `compare`) run as an operator runs them, against the demo cluster with the real kubectl: their
//! output, exit codes and words, for plain YAML, kustomize and several contexts.
//!
//! One test binary per theme (each links the whole crate); each file a module.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../changes_util/mod.rs"]
mod changes_util;
#[path = "../common/mod.rs"]
mod common;
#[path = "../demo_helm/mod.rs"]
mod demo_helm;
#[path = "../headless_util/mod.rs"]
mod headless_util;
#[path = "../kubectl_bin/mod.rs"]
pub mod kubectl_bin;
#[path = "../kustomize_fixture/mod.rs"]
mod kustomize_fixture;
#[path = "../pty/mod.rs"]
mod pty;
#[path = "../zero_values_util/mod.rs"]
mod zero_values_util;

mod accept;
mod accept_git_edges;
mod changes;
mod check;
mod defaults_demo;
mod fleet;
mod keyed_defaults;
mod kinds;
mod kustomize;
mod kustomize_root;
mod logs;
mod revert;
mod revert_converges;
mod revert_mechanism;
mod rollback;
mod words;
mod write_paths;
