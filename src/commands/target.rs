//! `TYPE/NAME` on the command line, read as kubectl reads it: `deployment/web`, `deploy/web`,
//! `deployments/web`, `deployments.apps/web`, `deployments.v1.apps/web`, case-insensitive type.
use std::fmt;

use crate::manifest::ObjectKey;

/// A kind the headless commands can address: its API coordinates and the names kubectl accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindInfo {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub short: &'static [&'static str],
}

impl KindInfo {
    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `deployments.apps`, as kubectl names the resource in its messages.
    pub fn resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_owned()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// Does `name` (lower case, without group) name this kind?
    fn is_named(&self, name: &str) -> bool {
        name == self.plural || name == self.kind.to_ascii_lowercase() || self.short.contains(&name)
    }
}

/// The workload kinds drift is computed for (the live view's kinds).
pub const KINDS: &[KindInfo] = &[
    KindInfo {
        group: "apps",
        version: "v1",
        kind: "Deployment",
        plural: "deployments",
        short: &["deploy"],
    },
    KindInfo {
        group: "apps",
        version: "v1",
        kind: "StatefulSet",
        plural: "statefulsets",
        short: &["sts"],
    },
    KindInfo {
        group: "apps",
        version: "v1",
        kind: "DaemonSet",
        plural: "daemonsets",
        short: &["ds"],
    },
];

/// The kind of a live or manifest object, if it is one of [`KINDS`].
pub fn kind_info(group: &str, kind: &str) -> Option<&'static KindInfo> {
    KINDS.iter().find(|k| k.group == group && k.kind == kind)
}

/// One object named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub kind: &'static KindInfo,
    pub name: String,
}

impl Target {
    /// The object's key in `namespace` (the `-n` flag, else the context's, else `default`).
    pub fn key(&self, namespace: &str) -> ObjectKey {
        ObjectKey::new(self.kind.group, self.kind.kind, namespace, &self.name)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.kind.kind.to_ascii_lowercase(), self.name)
    }
}

/// Why a `TYPE/NAME` argument was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error(
        "\"{0}\" is not TYPE/NAME: write it as kubectl does, e.g. deployment/web or deploy/web"
    )]
    NoSlash(String),
    #[error("\"{0}\" has no name after the slash: write it as deployment/web")]
    NoName(String),
    #[error(
        "the server doesn't have a resource type \"{given}\" that kdrift handles (known: {known})"
    )]
    UnknownType { given: String, known: String },
}

/// Parses `TYPE/NAME`. The type may carry a group (`deployments.apps`) and a version before it
/// (`deployments.v1.apps`), as kubectl allows; it is matched case-insensitively.
pub fn parse(text: &str) -> Result<Target, TargetError> {
    let (ty, name) = text
        .split_once('/')
        .ok_or_else(|| TargetError::NoSlash(text.to_owned()))?;
    if name.is_empty() || name.contains('/') {
        return Err(TargetError::NoName(text.to_owned()));
    }
    let ty_lower = ty.to_ascii_lowercase();
    let (base, rest) = match ty_lower.split_once('.') {
        Some((base, rest)) => (base, Some(rest)),
        None => (ty_lower.as_str(), None),
    };
    let kind = KINDS
        .iter()
        .find(|k| {
            k.is_named(base)
                && match rest {
                    None => true,
                    Some(rest) => {
                        rest == k.group || rest == format!("{}.{}", k.version, k.group).as_str()
                    }
                }
        })
        .ok_or_else(|| TargetError::UnknownType {
            given: ty.to_owned(),
            known: KINDS
                .iter()
                .map(|k| k.kind.to_ascii_lowercase())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    Ok(Target {
        kind,
        name: name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn kubectl_spellings_of_a_deployment() {
        for text in [
            "deployment/web",
            "deploy/web",
            "deployments/web",
            "Deployment/web",
            "deployment.apps/web",
            "deployments.apps/web",
            "deployments.v1.apps/web",
        ] {
            let target = parse(text).unwrap();
            assert_eq!(target.kind.kind, "Deployment", "{text}");
            assert_eq!(target.name, "web", "{text}");
            assert_eq!(
                target.key("shop"),
                ObjectKey::new("apps", "Deployment", "shop", "web")
            );
        }
        assert_eq!(parse("sts/db").unwrap().kind.kind, "StatefulSet");
    }

    #[test]
    fn bad_spellings_say_how_to_write_it() {
        assert_eq!(parse("web"), Err(TargetError::NoSlash("web".into())));
        assert_eq!(parse("deploy/"), Err(TargetError::NoName("deploy/".into())));
        let err = parse("deployments.batch/web").unwrap_err().to_string();
        assert!(err.contains("\"deployments.batch\""), "{err}");
        assert!(err.contains("deployment, statefulset"), "{err}");
        assert!(matches!(
            parse("pod/web"),
            Err(TargetError::UnknownType { .. })
        ));
    }
}
