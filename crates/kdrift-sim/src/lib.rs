//! The demo cluster: an in-process simulation of the Kubernetes API on loopback that speaks the
//! real wire protocol (see `docs/ARCHITECTURE.md` of the kdrift repository, "The demo cluster").
//! Its own crate so that the simulation never imports the app: it shares only
//! [`kdrift_schema`] (schemas and `managedFields`) with kdrift.
//!
//! - [`resources`]: the resource types served (built-in and custom), for discovery and routing.
//! - [`store`]: objects, resourceVersions, watch history; every write goes through it.
//! - [`server`]: HTTP routing, verbs, content types, `Status` errors, watch streams.
//! - [`discovery`]: `/version`, `/api`, `/apis`, group-version resource lists.
//! - [`openapi_v2`], [`openapi_v3`]: the OpenAPI documents (real 1.36 ones for the built-in
//!   types, made from their definitions for custom resources).
//! - [`patch`]: JSON patch, merge patch, strategic merge patch.
//! - [`printers`]: the columns and cells `kubectl get` prints, cached per write by the store.
//! - [`error`]: [`ApiError`], the failure every layer returns, and a real server's wording.
//! - [`ssa`]: server-side apply and `managedFields` bookkeeping for every write.
//! - [`controller`]: the deployment and replicaset controllers, pod readiness.
//! - [`scenario`]: out-of-band changes played over time.
//! - [`faults`]: fault injection for tests.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod controller;
pub mod discovery;
pub mod error;
pub mod faults;
mod git;
pub mod object;
pub mod openapi_v2;
pub mod openapi_v3;
pub mod patch;
pub mod printers;
pub mod resources;
pub mod scenario;
pub mod server;
pub mod ssa;
pub mod store;
#[cfg(test)]
mod test_support;

pub use error::ApiError;
pub use faults::Faults;
pub use server::{SimConfig, SimError, SimServer};
pub use store::{Store, WriteOptions};

pub use kdrift_schema::{managed_fields, schema};
