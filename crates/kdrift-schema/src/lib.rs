//! What kdrift knows of the shape of Kubernetes objects, shared by the drift engine and the demo
//! cluster: [`schema`] (list merge keys, list and map types, patch strategies),
//! [`managed_fields`] (`fieldsV1` field sets and who owns which path) and [`gotypes`] (how the Go
//! types of the built-in kinds write JSON: which zero values a server drops).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod gotypes;
pub mod managed_fields;
pub mod schema;
