//! drift (see shared/DESIGN.md).
