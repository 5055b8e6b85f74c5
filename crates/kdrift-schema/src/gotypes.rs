//! What Go's JSON encoding of a built-in Kubernetes type does that neither the protobuf wire nor
//! the OpenAPI documents carry, read from `data/gotypes.txt` (written by the demo cluster's
//! `proto/update.py` from the upstream `types.go` struct tags and `generated.proto` files): each
//! field's JSON name and order, whether it is a pointer, `omitempty`, `omitzero`, a scalar, or
//! inlined; and which messages are Go slices. The demo cluster writes protobuf bodies as Go does
//! by it; the drift engine learns from it which zero values a server drops ([`omits_zero`]).
use std::collections::HashMap;
use std::sync::LazyLock;

/// One field of a Go struct that is a protobuf message, in the struct's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoField {
    pub number: u32,
    pub json: JsonName,
    /// `*T`: nil when absent from the wire, written when set even if zero.
    pub pointer: bool,
    pub omitempty: bool,
    pub omitzero: bool,
    /// A bool, number, string or `[]byte` on the wire: its zero is `false`, `0` or `""`.
    pub scalar: bool,
}

/// Where a field goes in JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonName {
    Named(Box<str>),
    /// An embedded struct whose fields are written at this level (`json:",inline"`), with the
    /// full name of its message (or the scalar it is, for `metav1.Duration`).
    Inline(Box<str>),
    /// `json:"-"`: on the wire, never in JSON.
    Skipped,
}

/// How a message is a Go type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoType {
    Struct(Vec<GoField>),
    /// `type ExtraValue []string`: on the wire a message of `items`, in JSON an array.
    Slice,
}

/// The table, by message full name.
pub type GoTypes = HashMap<Box<str>, GoType>;

/// The table of the built-in kinds of Kubernetes v1.36, read once.
pub fn builtin() -> Result<&'static GoTypes, &'static str> {
    static TABLE: LazyLock<Result<GoTypes, String>> =
        LazyLock::new(|| parse(include_str!("../data/gotypes.txt")));
    TABLE.as_ref().map_err(String::as_str)
}

/// The message a built-in OpenAPI definition stands for (`io.k8s.api.apps.v1.DeploymentSpec` →
/// `k8s.io.api.apps.v1.DeploymentSpec`), as go-to-protobuf names its packages.
pub fn message_of_definition(definition: &str) -> Option<String> {
    let rest = definition.strip_prefix("io.k8s.")?;
    Some(format!(
        "k8s.io.{}",
        rest.replace("apiextensions-apiserver", "apiextensions_apiserver")
    ))
}

/// Whether the server drops field `json` of `message` when it holds Go's zero (`false`, `0`,
/// `""`): a non-pointer scalar tagged `omitempty` or `omitzero`, found through inlined structs.
/// `None` when the table does not know the field.
pub fn omits_zero(types: &GoTypes, message: &str, json: &str) -> Option<bool> {
    let Some(GoType::Struct(fields)) = types.get(message) else {
        return None;
    };
    fields.iter().find_map(|field| match &field.json {
        JsonName::Named(name) if &**name == json => {
            Some(field.scalar && !field.pointer && (field.omitempty || field.omitzero))
        }
        JsonName::Inline(inner) => omits_zero(types, inner, json),
        _ => None,
    })
}

/// Parse the table; a line that does not read is an error naming it.
pub fn parse(text: &str) -> Result<GoTypes, String> {
    let mut types = GoTypes::new();
    let mut current: Option<(Box<str>, Vec<GoField>)> = None;
    for (index, line) in text.lines().enumerate() {
        let bad = || format!("gotypes.txt:{}: cannot read {line:?}", index + 1);
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if line.starts_with("k8s.io.") {
            if let Some((name, fields)) = current.take() {
                types.insert(name, GoType::Struct(fields));
            }
            match line.split_once(' ') {
                Some((name, "[]")) => {
                    types.insert(name.into(), GoType::Slice);
                }
                Some(_) => return Err(bad()),
                None => current = Some((line.into(), Vec::new())),
            }
            continue;
        }
        let mut parts = line.split(' ');
        let (Some(number), Some(json), Some(flags)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let inlined = parts.next();
        if parts.next().is_some() || (json == "-") != inlined.is_some() {
            return Err(bad());
        }
        let number = number.parse().map_err(|_| bad())?;
        if !flags
            .chars()
            .all(|c| matches!(c, 'p' | 'o' | 'z' | 's' | '.'))
        {
            return Err(bad());
        }
        let Some((_, fields)) = current.as_mut() else {
            return Err(bad());
        };
        fields.push(GoField {
            number,
            json: match (json, inlined) {
                ("-", Some(inner)) => JsonName::Inline(inner.into()),
                ("!", _) => JsonName::Skipped,
                (name, _) => JsonName::Named(name.into()),
            },
            pointer: flags.contains('p'),
            omitempty: flags.contains('o'),
            omitzero: flags.contains('z'),
            scalar: flags.contains('s'),
        });
    }
    if let Some((name, fields)) = current {
        types.insert(name, GoType::Struct(fields));
    }
    Ok(types)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_line_is_named() {
        let err = parse("k8s.io.api.apps.v1.DeploymentSpec\n1 replicas px\n").err();
        assert_eq!(
            err.as_deref(),
            Some("gotypes.txt:2: cannot read \"1 replicas px\"")
        );
        let err = parse("k8s.io.api.core.v1.Probe\n1 - .\n").err();
        assert_eq!(err.as_deref(), Some("gotypes.txt:2: cannot read \"1 - .\""));
    }

    #[test]
    fn zero_values_the_server_drops_and_keeps() {
        let types = builtin().unwrap();
        let pod = "k8s.io.api.core.v1.PodSpec";
        // Non-pointer `omitempty` scalars: dropped at zero.
        for field in ["hostNetwork", "hostPID", "hostIPC", "dnsPolicy"] {
            assert_eq!(omits_zero(types, pod, field), Some(true), "{field}");
        }
        // Pointers keep their zero (`automountServiceAccountToken: false` means something);
        // lists and structs are not scalars.
        for field in [
            "automountServiceAccountToken",
            "enableServiceLinks",
            "volumes",
        ] {
            assert_eq!(omits_zero(types, pod, field), Some(false), "{field}");
        }
        assert_eq!(omits_zero(types, pod, "noSuchField"), None);
        // Through an inlined struct: a probe's handler; and the workload specs.
        let probe = "k8s.io.api.core.v1.Probe";
        assert_eq!(omits_zero(types, probe, "initialDelaySeconds"), Some(true));
        assert_eq!(omits_zero(types, probe, "exec"), Some(false));
        let deployment = "k8s.io.api.apps.v1.DeploymentSpec";
        assert_eq!(omits_zero(types, deployment, "minReadySeconds"), Some(true));
        assert_eq!(omits_zero(types, deployment, "replicas"), Some(false));
        let container = "k8s.io.api.core.v1.Container";
        assert_eq!(omits_zero(types, container, "stdin"), Some(true));
    }

    #[test]
    fn definitions_name_their_messages() {
        assert_eq!(
            message_of_definition("io.k8s.api.apps.v1.DeploymentSpec").as_deref(),
            Some("k8s.io.api.apps.v1.DeploymentSpec")
        );
        assert_eq!(
            message_of_definition(
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec"
            )
            .as_deref(),
            Some("k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec")
        );
        assert_eq!(message_of_definition("com.example.v1.Widget"), None);
        let types = builtin().unwrap();
        for definition in [
            "io.k8s.api.core.v1.PodSpec",
            "io.k8s.api.apps.v1.DeploymentSpec",
            "io.k8s.api.networking.v1.IngressSpec",
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        ] {
            let message = message_of_definition(definition).unwrap();
            assert!(types.contains_key(message.as_str()), "{message}");
        }
    }
}
