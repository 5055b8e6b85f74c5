//! A revert's failures as a person can act on them: a kube error turned into a
//! [`RevertError`] naming the object, the verb refused and, for a value the server rejects, the
//! manifest's file and line of the field it names.
use super::RevertError;
use crate::manifest::ManifestObject;

/// Turns a kube error into one a person can act on. `manifest` names the file and line of a
/// 422 or 400 to the apply (the field the server names, else the document's first line).
pub(super) fn classify(
    err: kube::Error,
    verb: &'static str,
    resource: &str,
    namespace: &str,
    manifest: Option<&ManifestObject>,
) -> RevertError {
    let object = manifest
        .map(|m| m.key.to_string())
        .unwrap_or_else(|| resource.to_owned());
    match err {
        kube::Error::Api(status) if status.code == 403 => RevertError::Forbidden {
            verb,
            resource: resource.to_owned(),
            namespace: namespace.to_owned(),
            message: status.message.clone(),
        },
        kube::Error::Api(status) if matches!(status.code, 400 | 422) && manifest.is_some() => {
            let Some(manifest) = manifest else {
                return RevertError::Api {
                    verb,
                    object,
                    reason: status.message.clone(),
                };
            };
            let field = status
                .details
                .as_ref()
                .and_then(|d| d.causes.iter().find(|c| !c.field.is_empty()))
                .map(|c| c.field.clone())
                .or_else(|| field_in_message(&status.message));
            let line = field
                .as_deref()
                .map(|f| line_of_field(manifest, f))
                .unwrap_or(manifest.line);
            RevertError::Invalid {
                object,
                file: manifest.file.display().to_string(),
                line,
                message: status.message.clone(),
            }
        }
        kube::Error::Api(status) => RevertError::Api {
            verb,
            object,
            reason: format!("HTTP {} {}: {}", status.code, status.reason, status.message),
        },
        kube::Error::HyperError(_) | kube::Error::Service(_) => RevertError::Unreachable {
            reason: crate::cluster::client::error_chain(&err),
        },
        other => RevertError::Api {
            verb,
            object,
            reason: crate::cluster::client::error_chain(&other),
        },
    }
}

/// A field path the server's message names (`... Go struct field DeploymentSpec.spec.replicas of
/// type int32`), when its details do not.
fn field_in_message(message: &str) -> Option<String> {
    message.split_whitespace().find_map(|word| {
        let word = word.trim_matches(|c: char| c == '"' || c == ',' || c == ':' || c == '\'');
        let at = word.find("spec.").or_else(|| word.find("metadata."))?;
        let field = word.get(at..)?;
        (at == 0 || word.get(..at)?.ends_with('.')).then(|| field.to_owned())
    })
}

/// The line of `spec.template.spec.containers[0].image` (a server's field path) in the manifest.
fn line_of_field(manifest: &ManifestObject, field: &str) -> usize {
    use crate::manifest::lines::Step;
    let mut steps = Vec::new();
    for part in field.split('.') {
        let (name, index) = match part.split_once('[') {
            Some((name, rest)) => (name, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        steps.push(Step::Field(name));
        if let Some(index) = index {
            steps.push(Step::Item(index));
        }
    }
    manifest.line_of(&steps)
}

#[cfg(test)]
mod tests {
    use super::field_in_message;

    #[test]
    fn field_paths_are_found_in_server_messages() {
        assert_eq!(
            field_in_message(
                "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
            )
            .as_deref(),
            Some("spec.replicas")
        );
        assert_eq!(
            field_in_message("Deployment.apps \"web\" is invalid: spec.template.spec.containers[0].image: Required value").as_deref(),
            Some("spec.template.spec.containers[0].image")
        );
        assert_eq!(
            field_in_message("invalid type: string \"two\", expected i32"),
            None
        );
    }
}
