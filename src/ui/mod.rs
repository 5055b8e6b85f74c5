//! ui (see shared/DESIGN.md).
