//! manifest (see shared/DESIGN.md).
pub mod edit;
