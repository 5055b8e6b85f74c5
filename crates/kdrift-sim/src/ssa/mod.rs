//! Server-side apply and `managedFields` bookkeeping for every write.
//!
//! - this module: the ownership rules of an update and of an apply, conflicts.
//! - [`merge`]: merging an applied configuration into the live object, pruning.
use serde_json::Value;

use crate::managed_fields::{
    Comparison, FieldPath, FieldSet, ManagedFieldsEntry, Operation, PathElement,
};

use super::resources::ResourceType;
use crate::error::{ApiError, StatusCause};

pub mod merge;

/// Record a non-apply write (create, update, patch; operation `Update`) in `new`'s
/// `metadata.managedFields`: `manager` takes ownership of every field it set or changed compared
/// with `old` (`None` on create: every field of `new`), other managers lose those fields, fields
/// gone from `new` leave every set, and entries left empty disappear. `subresource` is recorded
/// (`status`, `scale`); a scale write owns `f:spec.f:replicas`. `time` is RFC 3339.
///
/// The entries `new` carries are taken as given when they differ from `old`'s (`kubectl apply
/// --server-side` migrates client-side-apply ownership this way); an explicit empty list (or a
/// list of one empty entry) resets them; absent, `old`'s are kept. Subresource writes always
/// keep `old`'s.
pub fn record_update(
    resource: ResourceType,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    time: &str,
) {
    let mut entries = base_entries(old, new, subresource);
    let comparison = Comparison::of(resource.schema(), old, new);
    let scope = |set: &FieldSet| written_scope(resource, subresource, set);
    let changed = scope(&comparison.changed());
    let removed = scope(&comparison.removed);
    for entry in &mut entries {
        entry.fields.subtract(&changed);
        entry.fields.subtract(&removed);
    }
    if !changed.is_empty() {
        match entries
            .iter_mut()
            .find(|e| e.is_for(manager, Operation::Update, subresource))
        {
            Some(entry) => {
                entry.fields.add(&changed);
                entry.time = entry_time(subresource, time);
            }
            None => entries.push(ManagedFieldsEntry {
                manager: manager.to_string(),
                operation: Operation::Update,
                api_version: resource.api_version().to_string(),
                time: entry_time(subresource, time),
                subresource: subresource.map(str::to_string),
                fields: changed,
            }),
        }
    }
    finish(new, entries);
}

/// The `time` of an Update's entry: a v1.36 server records none for a write through `/scale`
/// (its scale handler builds the entry without one), and the write's time otherwise.
fn entry_time(subresource: Option<&str>, time: &str) -> Option<String> {
    (subresource != Some("scale")).then(|| time.to_string())
}

/// The `managedFields` a server gives an object it answers a request with and never stores (a
/// TokenRequest, an access review): the request's `spec`, owned by its manager.
pub fn record_request(
    schema: crate::schema::Schema,
    api_version: &str,
    object: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    time: &str,
) {
    let spec = serde_json::json!({"spec": object.get("spec").cloned().unwrap_or(Value::Null)});
    let entry = ManagedFieldsEntry {
        manager: manager.to_string(),
        operation: Operation::Update,
        api_version: api_version.to_string(),
        time: Some(time.to_string()),
        subresource: subresource.map(str::to_string),
        fields: FieldSet::from_object(schema, &spec),
    };
    finish(object, vec![entry]);
}

/// Server-side apply of `config` (the applied configuration, already parsed from YAML/JSON) by
/// `manager` onto `live` (`None` when the object does not exist yet). Returns the new object with
/// its `managedFields` updated (operation `Apply`). Fields another manager owns with a different
/// value are a 409 conflict (with one cause per field, as a real server words it) unless `force`,
/// which moves them to `manager`. Fields `manager` applied before and no longer applies are
/// removed from the object unless another manager still owns them.
pub fn apply(
    resource: ResourceType,
    live: Option<&Value>,
    config: &Value,
    manager: &str,
    force: bool,
    time: &str,
) -> Result<Value, ApiError> {
    check_type(resource, config)?;
    let root = resource.schema();
    let mut config = config.clone();
    if has_status(resource)
        && let Some(map) = config.as_object_mut()
    {
        // Status is reset on main-resource writes: an applied status is ignored.
        map.shift_remove("status");
    }
    let mut entries = match live {
        Some(live) => ManagedFieldsEntry::read(live).unwrap_or_default(),
        None => Vec::new(),
    };
    let mut merged = merge::merge(root, live, &config);
    let applied = FieldSet::from_applied(root, &config);
    let mine = |e: &ManagedFieldsEntry| e.is_for(manager, Operation::Apply, None);
    let previous = entries
        .iter()
        .find(|e| mine(e))
        .map(|e| e.fields.clone())
        .unwrap_or_default();

    // Prune what this manager applied before and nobody owns any more.
    let keep = entries
        .iter()
        .filter(|e| !mine(e))
        .fold(applied.clone(), |mut acc, e| {
            acc.add(&e.fields);
            acc
        });
    let dropped: Vec<FieldPath> = previous
        .paths()
        .into_iter()
        .filter(|p| !keep.touches(p) && !is_key_field(p))
        .collect();
    for path in &dropped {
        // Removing an item or map removes what is under it.
        let under_another = dropped.iter().any(|d| d != path && path.starts_with(d));
        if !under_another {
            merge::remove_path(root, &mut merged, path, &keep);
        }
    }

    // The server defaults the merged object before it compares: a value the applied
    // configuration leaves to its default (`fieldRef.apiVersion`) is no change, and no conflict.
    crate::schema::defaults::apply_defaults(resource.group(), resource.kind(), root, &mut merged);
    let comparison = Comparison::of(root, live, &merged);
    let changed = written_scope(resource, None, &comparison.changed());
    let removed = written_scope(resource, None, &comparison.removed);
    let conflicts: Vec<(&ManagedFieldsEntry, FieldSet)> = entries
        .iter()
        .filter(|e| !mine(e))
        .map(|e| (e, e.fields.intersection(&changed)))
        .filter(|(_, set)| !set.is_empty())
        .collect();
    if !force && !conflicts.is_empty() {
        return Err(conflict_error(conflicts));
    }
    for entry in entries.iter_mut().filter(|e| !mine(e)) {
        entry.fields.subtract(&changed);
        entry.fields.subtract(&removed);
    }
    let object_changed = live.is_none_or(|l| strip_managed(l) != strip_managed(&merged));
    match entries.iter_mut().find(|e| mine(e)) {
        Some(entry) => {
            entry.fields = applied;
            entry.api_version = resource.api_version().to_string();
            if object_changed {
                entry.time = Some(time.to_string());
            }
        }
        None => entries.push(ManagedFieldsEntry {
            manager: manager.to_string(),
            operation: Operation::Apply,
            api_version: resource.api_version().to_string(),
            time: Some(time.to_string()),
            subresource: None,
            fields: applied,
        }),
    }
    finish(&mut merged, entries);
    Ok(merged)
}

/// Whether `path` is a key field of a list item (`...env[name="X"].name`): it goes only with the
/// item.
fn is_key_field(path: &FieldPath) -> bool {
    match path.elements() {
        [.., PathElement::Key(keys), PathElement::Field(name)] => {
            keys.iter().any(|(k, _)| k == name)
        }
        _ => false,
    }
}

/// The applied configuration must be of the resource it is sent to, and carry no ownership.
fn check_type(resource: ResourceType, config: &Value) -> Result<(), ApiError> {
    let api_version = config
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind != resource.kind() {
        return Err(ApiError::BadRequest(format!(
            "the kind in the data (\"{kind}\") does not match the expected kind (\"{}\")",
            resource.kind()
        )));
    }
    if api_version != resource.api_version() {
        return Err(ApiError::BadRequest(format!(
            "the API version in the data (\"{api_version}\") does not match the expected API version (\"{}\")",
            resource.api_version()
        )));
    }
    if config
        .pointer("/metadata/managedFields")
        .is_some_and(|m| !m.is_null())
    {
        return Err(ApiError::BadRequest(
            "metadata.managedFields must be nil".into(),
        ));
    }
    Ok(())
}

fn has_status(resource: ResourceType) -> bool {
    resource.subresources().contains(&"status")
}

/// The part of a change a write through `subresource` records: a main-resource write does not
/// own status (it is reset), a status write does not own spec, a scale write owns only
/// `spec.replicas`.
fn written_scope(resource: ResourceType, subresource: Option<&str>, set: &FieldSet) -> FieldSet {
    match subresource {
        None if has_status(resource) => set.without_subtree(&FieldPath::fields(&["status"])),
        None => set.clone(),
        Some("status") => set.without_subtree(&FieldPath::fields(&["spec"])),
        Some("scale") => {
            let mut only = FieldSet::new();
            only.insert(&FieldPath::fields(&["spec", "replicas"]));
            set.intersection(&only)
        }
        Some(_) => set.clone(),
    }
}

/// The entries a write starts from (see [`record_update`]).
fn base_entries(
    old: Option<&Value>,
    new: &Value,
    subresource: Option<&str>,
) -> Vec<ManagedFieldsEntry> {
    let from_old = || {
        old.map(|o| ManagedFieldsEntry::read(o).unwrap_or_default())
            .unwrap_or_default()
    };
    if subresource.is_some() {
        return from_old();
    }
    match new.pointer("/metadata/managedFields") {
        None | Some(Value::Null) => from_old(),
        Some(Value::Array(list)) if list.is_empty() => Vec::new(),
        Some(Value::Array(list))
            if list.len() == 1 && list[0].as_object().is_some_and(|m| m.is_empty()) =>
        {
            Vec::new()
        }
        Some(given) => ManagedFieldsEntry::parse_list(given).unwrap_or_else(|_| from_old()),
    }
}

/// Drop empty entries, sort as a server does (Apply first, then by time, manager, version,
/// subresource) and write them into `object`.
fn finish(object: &mut Value, mut entries: Vec<ManagedFieldsEntry>) {
    entries.retain(|e| !e.fields.is_empty());
    entries.sort_by(|a, b| {
        let op = |e: &ManagedFieldsEntry| e.operation != Operation::Apply;
        op(a)
            .cmp(&op(b))
            .then_with(|| a.time.cmp(&b.time))
            .then_with(|| a.manager.cmp(&b.manager))
            .then_with(|| a.api_version.cmp(&b.api_version))
            .then_with(|| a.subresource.cmp(&b.subresource))
    });
    ManagedFieldsEntry::write(object, &entries);
}

fn strip_managed(object: &Value) -> Value {
    let mut out = object.clone();
    if let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.shift_remove("managedFields");
    }
    out
}

/// How a server names a manager in a conflict: `"kubectl-client-side-apply" using apps/v1`.
fn describe(entry: &ManagedFieldsEntry) -> String {
    let mut out = format!("\"{}\"", entry.manager);
    if let Some(sub) = &entry.subresource {
        out.push_str(&format!(" with subresource \"{sub}\""));
    }
    if entry.operation == Operation::Update {
        out.push_str(&format!(" using {}", entry.api_version));
    }
    out
}

/// The 409 a server answers to an apply with conflicts, one cause per field.
fn conflict_error(mut conflicts: Vec<(&ManagedFieldsEntry, FieldSet)>) -> ApiError {
    conflicts.sort_by(|(a, _), (b, _)| {
        (a.manager.as_str(), a.operation.as_str(), &a.subresource).cmp(&(
            b.manager.as_str(),
            b.operation.as_str(),
            &b.subresource,
        ))
    });
    let mut causes = Vec::new();
    let mut lines = Vec::new();
    for (entry, set) in &conflicts {
        let who = describe(entry);
        lines.push(format!("conflicts with {who}:"));
        for path in set.paths() {
            lines.push(format!("- {path}"));
            causes.push(StatusCause {
                reason: "FieldManagerConflict".into(),
                message: format!("conflict with {who}"),
                field: path.to_string(),
            });
        }
    }
    let message = match causes.as_slice() {
        [one] => format!(
            "Apply failed with 1 conflict: {}: {}",
            one.message, one.field
        ),
        many => format!(
            "Apply failed with {} conflicts: {}",
            many.len(),
            lines.join("\n")
        ),
    };
    ApiError::Conflict { message, causes }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod properties;
