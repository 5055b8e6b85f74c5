//! cluster (see shared/DESIGN.md).
