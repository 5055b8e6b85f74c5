//! The object store of the demo cluster: every object, the global resourceVersion counter and a
//! bounded history of changes for watches. Every write — HTTP handlers, the controllers and the
//! scenario alike — goes through [`Store`], so `managedFields`, generation and resourceVersion
//! are kept in one place, as a real API server keeps them.
//!
//! CONTRACT (skeleton): the signatures below are what the controller, the scenario and the HTTP
//! server code against. The bodies are filled in by the store's implementation.
use serde_json::Value;

use super::resources::ResourceType;

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
    #[error("{0}")]
    UnsupportedMediaType(String),
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

/// Who writes, and how: becomes the `managedFields` entry of the write.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// `fieldManager` (kubectl sends one; the server derives one from the user agent otherwise).
    pub manager: String,
    /// `None` for the main resource, `Some("status")` or `Some("scale")` for a subresource.
    pub subresource: Option<String>,
    /// `dryRun=All`: validate and compute the result, store nothing.
    pub dry_run: bool,
}

impl WriteOptions {
    pub fn manager(manager: &str) -> WriteOptions {
        WriteOptions {
            manager: manager.to_string(),
            subresource: None,
            dry_run: false,
        }
    }
    pub fn status(manager: &str) -> WriteOptions {
        WriteOptions {
            manager: manager.to_string(),
            subresource: Some("status".into()),
            dry_run: false,
        }
    }
}

/// A patch body, by content type.
#[derive(Debug, Clone)]
pub enum Patch {
    /// `application/json-patch+json`
    Json(Value),
    /// `application/merge-patch+json`
    Merge(Value),
    /// `application/strategic-merge-patch+json`
    Strategic(Value),
    /// `application/apply-patch+yaml` (server-side apply), with `force`.
    Apply { config: Value, force: bool },
}

/// A change, as a watch or a controller sees it.
#[derive(Debug, Clone)]
pub struct StoreEvent {
    pub resource: ResourceType,
    pub kind: EventType,
    /// The object after the change (before it, for a delete), with its new resourceVersion.
    pub object: std::sync::Arc<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

/// The demo cluster's object store. Cheap to clone (shared state inside).
#[derive(Clone, Default)]
pub struct Store {}

impl Store {
    /// One object, or `None`.
    pub fn get(&self, _resource: ResourceType, _namespace: &str, _name: &str) -> Option<Value> {
        None
    }

    /// Every object of a type, in one namespace or (with `None`) all, sorted by namespace, name.
    pub fn list(&self, _resource: ResourceType, _namespace: Option<&str>) -> Vec<Value> {
        Vec::new()
    }

    /// Create; fills uid, creationTimestamp, generation, resourceVersion, defaults, managedFields.
    pub fn create(
        &self,
        _resource: ResourceType,
        _object: Value,
        _opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        Err(ApiError::Internal("store not implemented".into()))
    }

    /// Replace (PUT). A `metadata.resourceVersion` that is not current is a 409 Conflict.
    pub fn update(
        &self,
        _resource: ResourceType,
        _object: Value,
        _opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        Err(ApiError::Internal("store not implemented".into()))
    }

    /// Patch (any content type), on the main resource or a subresource of `opts`.
    pub fn patch(
        &self,
        _resource: ResourceType,
        _namespace: &str,
        _name: &str,
        _patch: &Patch,
        _opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        Err(ApiError::Internal("store not implemented".into()))
    }

    /// Delete; returns the object as it was.
    pub fn delete(
        &self,
        _resource: ResourceType,
        _namespace: &str,
        _name: &str,
        _dry_run: bool,
    ) -> Result<Value, ApiError> {
        Err(ApiError::Internal("store not implemented".into()))
    }

    /// Every change from now on, for the controllers. A lagging receiver must resync by listing.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<StoreEvent> {
        tokio::sync::broadcast::channel(1).1
    }
}
