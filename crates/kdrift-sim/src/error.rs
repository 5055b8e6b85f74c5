//! Why a request failed: [`ApiError`], which the server maps to a Kubernetes `Status`, and the
//! wording a real server gives the common failures. Every layer returns it, so it imports nothing
//! of the crate but the resource types.
use crate::resources::ResourceType;

/// Why a write or read failed, mapped to a Kubernetes `Status` by the server.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    AlreadyExists(String),
    /// A stale resourceVersion, or a server-side apply conflict (with the conflicting fields).
    #[error("{message}")]
    Conflict {
        message: String,
        causes: Vec<StatusCause>,
    },
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    Gone(String),
    /// 429: refused for now (an eviction a disruption budget does not allow yet).
    #[error("{message}")]
    TooManyRequests {
        message: String,
        causes: Vec<StatusCause>,
    },
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 405: a verb the resource does not serve.
    #[error("{0}")]
    MethodNotAllowed(String),
    #[error("{0}")]
    Internal(String),
}

/// One `details.causes` entry of a `Status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusCause {
    pub reason: String,
    pub message: String,
    pub field: String,
}

/// `deployments.apps "web"`: how a real server names an object in messages.
pub fn qualified(resource: ResourceType, name: &str) -> String {
    match resource.group() {
        "" => format!("{} \"{name}\"", resource.plural()),
        group => format!("{}.{group} \"{name}\"", resource.plural()),
    }
}

pub fn not_found(resource: ResourceType, name: &str) -> ApiError {
    ApiError::NotFound(format!("{} not found", qualified(resource, name)))
}

/// `Deployment.apps`: how a real server names a kind in an `Invalid` message.
pub fn kind_group(resource: ResourceType) -> String {
    match resource.group() {
        "" => resource.kind().to_string(),
        group => format!("{}.{group}", resource.kind()),
    }
}
