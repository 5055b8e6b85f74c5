//! Server-side apply and `managedFields` bookkeeping for every write.
//!
//! CONTRACT (skeleton): signatures the store calls; bodies filled in by the implementation.
use serde_json::Value;

use super::resources::ResourceType;
use super::store::ApiError;

/// Record a non-apply write (create, update, patch; operation `Update`) in `new`'s
/// `metadata.managedFields`: `manager` takes ownership of every field it set or changed compared
/// with `old` (`None` on create: every field of `new`), other managers lose those fields, fields
/// gone from `new` leave every set, and entries left empty disappear. `subresource` is recorded
/// (`status`, `scale`); a scale write owns `f:spec.f:replicas`. `time` is RFC 3339.
pub fn record_update(
    _resource: ResourceType,
    _old: Option<&Value>,
    _new: &mut Value,
    _manager: &str,
    _subresource: Option<&str>,
    _time: &str,
) {
}

/// Server-side apply of `config` (the applied configuration, already parsed from YAML/JSON) by
/// `manager` onto `live` (`None` when the object does not exist yet). Returns the new object with
/// its `managedFields` updated (operation `Apply`). Fields another manager owns with a different
/// value are a 409 conflict (with one cause per field, as a real server words it) unless `force`,
/// which moves them to `manager`. Fields `manager` applied before and no longer applies are
/// removed from the object unless another manager still owns them.
pub fn apply(
    _resource: ResourceType,
    _live: Option<&Value>,
    _config: &Value,
    _manager: &str,
    _force: bool,
    _time: &str,
) -> Result<Value, ApiError> {
    Err(ApiError::Internal("not implemented".into()))
}
