//! The project's own words and shape: the CLI's help and man pages against the docs, the docs'
//! links, the README's pictures, and the layers of `src/` (who may import whom).
//!
//! One test binary per theme (each links the whole crate); each file a module.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../demo_helm/mod.rs"]
mod demo_helm;
#[path = "../demo_incident/mod.rs"]
mod demo_incident;
#[path = "../svg/mod.rs"]
mod svg;

mod cli;
mod layers;
mod links;
mod pictures;
