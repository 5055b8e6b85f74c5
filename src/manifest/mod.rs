//! manifest (see shared/DESIGN.md).
