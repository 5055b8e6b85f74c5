//! The drift engine without the live view: classes, defaults against captured responses of a
//! real server, diffs, manifests, kustomize's index, properties, and the fuzz regressions.
//!
//! One test binary per theme (each links the whole crate); each file a module.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../fuzz/checks/mod.rs"]
mod checks;
#[path = "../kustomize_fixture/mod.rs"]
mod kustomize_fixture;

mod check;
mod classes;
mod defaults_reference;
mod diff;
mod fuzz_regressions;
mod kustomize_index;
mod manifests;
mod props;
mod reference;
mod sim;
