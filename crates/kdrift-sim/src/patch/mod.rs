//! Patches as a Kubernetes API server applies them: JSON patch (RFC 6902), JSON merge patch
//! (RFC 7386) and strategic merge patch for the built-in workload types ([`strategic`]).
//! Errors carry the status a real server answers: 400 for a malformed patch, 422 for a patch that
//! cannot be applied to the object.
use serde_json::Value;

use super::resources::ResourceType;
use crate::error::ApiError;

pub mod strategic;

/// RFC 6902 JSON patch. A failing `test` or a bad path is an error (422 / 400 as a real server).
pub fn json_patch(target: &Value, patch: &Value) -> Result<Value, ApiError> {
    let operations: json_patch::Patch = serde_json::from_value(patch.clone()).map_err(|e| {
        let found = match patch {
            Value::Array(_) => "array",
            Value::Object(_) => "object",
            Value::String(_) => "string",
            Value::Number(_) => "number",
            Value::Bool(_) => "bool",
            Value::Null => "null",
        };
        ApiError::BadRequest(match patch {
            Value::Array(_) => format!("invalid JSON patch: {e}"),
            _ => format!("json: cannot unmarshal {found} into Go value of type jsonpatch.Patch"),
        })
    })?;
    let mut out = target.clone();
    json_patch::patch(&mut out, &operations).map_err(|e| {
        let path = e.path.as_str().to_string();
        let op = match operations.0.get(e.operation) {
            Some(json_patch::PatchOperation::Add(_)) => "add",
            Some(json_patch::PatchOperation::Remove(_)) => "remove",
            Some(json_patch::PatchOperation::Replace(_)) => "replace",
            Some(json_patch::PatchOperation::Move(_)) => "move",
            Some(json_patch::PatchOperation::Copy(_)) => "copy",
            Some(json_patch::PatchOperation::Test(_)) | None => "test",
        };
        // Worded as the server's JSON patch library (evanphx/json-patch) words them.
        ApiError::Invalid(match e.kind {
            json_patch::PatchErrorKind::TestFailed => {
                format!("testing value {path} failed: test failed")
            }
            json_patch::PatchErrorKind::InvalidFromPointer => {
                format!(
                    "{op} operation does not apply: doc is missing from path: {path}: missing value"
                )
            }
            json_patch::PatchErrorKind::InvalidPointer if op == "test" => {
                format!("testing value {path} failed: test failed")
            }
            json_patch::PatchErrorKind::InvalidPointer => {
                format!("{op} operation does not apply: doc is missing path: {path}: missing value")
            }
            ref other => format!("{op} operation does not apply: {other}: {path}"),
        })
    })?;
    Ok(out)
}

/// RFC 7386 JSON merge patch.
pub fn merge_patch(target: &Value, patch: &Value) -> Result<Value, ApiError> {
    if !patch.is_object() {
        return Err(ApiError::BadRequest("Invalid JSON Patch".into()));
    }
    let mut out = target.clone();
    json_patch::merge(&mut out, patch);
    Ok(out)
}

/// Strategic merge patch for `resource` (merge keys from `crate::schema`), with the directives
/// kubectl sends: `$patch` (replace, delete, merge), `$setElementOrder/<list>`,
/// `$retainKeys`, `$deleteFromPrimitiveList/<list>`.
pub fn strategic_merge_patch(
    resource: ResourceType,
    target: &Value,
    patch: &Value,
) -> Result<Value, ApiError> {
    strategic::apply(resource.schema(), target, patch)
}

#[cfg(test)]
mod tests;
