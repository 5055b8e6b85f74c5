//! app (see shared/DESIGN.md).
