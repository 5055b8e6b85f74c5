//! The defaults a real API server fills in on create and update (see shared/KUBERNETES.md).
//!
//! CONTRACT (skeleton): signature the store calls; body filled in by the implementation.
use serde_json::Value;

use super::resources::ResourceType;

/// Fill in the defaults of `resource` in place (Deployment strategy, revisionHistoryLimit,
/// progressDeadlineSeconds, pod template and pod spec defaults, container defaults, port protocol).
pub fn apply_defaults(_resource: ResourceType, _object: &mut Value) {}
