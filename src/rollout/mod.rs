//! rollout (see shared/DESIGN.md).
