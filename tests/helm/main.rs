//! Helm: charts in the checkout rendered by the real helm, releases read from their records,
//! accept into values files, and the live view of release objects (helm 4 and 3 when CI provides
//! them: KDRIFT_TEST_HELM4 / KDRIFT_TEST_HELM3; skipped with the reason printed otherwise).
//!
//! One test binary per theme (each links the whole crate); each file a module.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../common/mod.rs"]
mod common;
#[path = "../headless_util/mod.rs"]
mod headless_util;
#[path = "../helm_util/mod.rs"]
mod helm_util;
#[path = "../kubectl_bin/mod.rs"]
pub mod kubectl_bin;
#[path = "../live_screen/mod.rs"]
mod live_screen;

mod charts;
mod live;
mod real_releases;
mod releases;
