//! The views through `update()` and the renderer only (no IO, no cluster): accept, revert,
//! drift, changes, GitOps, the picker, objects of other kinds, colours, sizes and whole screens
//! (insta snapshots in `snapshots/`).
//!
//! One test binary per theme (each links the whole crate); each file a module.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../ui_fixture/mod.rs"]
mod ui_fixture;

mod accept;
mod changes;
mod colours;
mod drift;
mod gitops;
mod objects;
mod picker;
mod revert;
mod screens;
mod sizes;
