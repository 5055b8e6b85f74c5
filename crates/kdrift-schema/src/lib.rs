//! What kdrift knows of the shape of Kubernetes objects, shared by the drift engine and the demo
//! cluster: [`schema`] (list merge keys, list and map types, patch strategies) and
//! [`managed_fields`] (`fieldsV1` field sets and who owns which path).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod managed_fields;
pub mod schema;
