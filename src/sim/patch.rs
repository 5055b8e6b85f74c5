//! Patches as a Kubernetes API server applies them: JSON patch (RFC 6902), JSON merge patch
//! (RFC 7386) and strategic merge patch for the built-in workload types.
//!
//! CONTRACT (skeleton): signatures the store calls; bodies filled in by the implementation.
use serde_json::Value;

use super::resources::ResourceType;
use super::store::ApiError;

/// RFC 6902 JSON patch. A failing `test` or a bad path is an error (422 / 400 as a real server).
pub fn json_patch(_target: &Value, _patch: &Value) -> Result<Value, ApiError> {
    Err(ApiError::Internal("not implemented".into()))
}

/// RFC 7386 JSON merge patch.
pub fn merge_patch(_target: &Value, _patch: &Value) -> Result<Value, ApiError> {
    Err(ApiError::Internal("not implemented".into()))
}

/// Strategic merge patch for `resource` (merge keys from `crate::schema`), with the directives
/// kubectl sends: `$patch` (replace, delete, merge), `$setElementOrder/<list>`,
/// `$retainKeys`, `$deleteFromPrimitiveList/<list>`.
pub fn strategic_merge_patch(_resource: ResourceType, _target: &Value, _patch: &Value) -> Result<Value, ApiError> {
    Err(ApiError::Internal("not implemented".into()))
}
