//! `TYPE/NAME` on the command line, read as kubectl reads it: `deployment/web`, `deploy/web`,
//! `deployments.apps/web`, `deployments.v1.apps/web`, `cm/app-config`, `svc/web`,
//! `widgets.example.com/w1`; the type is matched case-insensitively against the kinds the cluster
//! serves ([`crate::cluster::kinds::ServedKinds::parse_type`]).
use std::fmt;

use crate::cluster::kinds::{ServedKind, ServedKinds};
use crate::manifest::ObjectKey;

/// One object named on the command line, before its type is looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The type as written (`deploy`, `widgets.example.com`).
    pub ty: String,
    pub name: String,
}

impl Target {
    /// The group the type names, when it names one (`example.com` of `widgets.example.com`,
    /// `apps` of `deployments.v1.apps`): discovery must read it to resolve the type.
    pub fn group_hint(&self) -> Option<String> {
        let (_, rest) = self.ty.split_once('.')?;
        let rest = rest.to_ascii_lowercase();
        // `deployments.v1.apps`: a version, then the group.
        match rest.split_once('.') {
            Some((version, group))
                if version.starts_with('v')
                    && version[1..].starts_with(|c: char| c.is_ascii_digit()) =>
            {
                Some(group.to_owned())
            }
            _ => Some(rest),
        }
    }

    /// The kind this type names among `served`, and the object's key (in `namespace`, unless
    /// the kind is cluster-scoped).
    pub fn resolve<'k>(
        &self,
        served: &'k ServedKinds,
        namespace: &str,
    ) -> Result<(&'k ServedKind, ObjectKey), TargetError> {
        let kind = served
            .parse_type(&self.ty)
            .ok_or_else(|| TargetError::UnknownType {
                given: self.ty.clone(),
            })?;
        let namespace = if kind.namespaced { namespace } else { "" };
        let key = ObjectKey::new(&kind.group, &kind.kind, namespace, &self.name);
        Ok((kind, key))
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.ty, self.name)
    }
}

/// Why a `TYPE/NAME` argument was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error(
        "\"{0}\" is not TYPE/NAME: write it as kubectl does, e.g. deployment/web, cm/app-config or widgets.example.com/w1"
    )]
    NoSlash(String),
    #[error("\"{0}\" has no name after the slash: write it as deployment/web")]
    NoName(String),
    #[error("the server doesn't have a resource type \"{given}\"")]
    UnknownType { given: String },
}

/// Reads `TYPE/NAME` (the type is looked up once the cluster's kinds are known).
pub fn parse(text: &str) -> Result<Target, TargetError> {
    let (ty, name) = text
        .split_once('/')
        .ok_or_else(|| TargetError::NoSlash(text.to_owned()))?;
    if ty.is_empty() {
        return Err(TargetError::NoSlash(text.to_owned()));
    }
    if name.is_empty() || name.contains('/') {
        return Err(TargetError::NoName(text.to_owned()));
    }
    Ok(Target {
        ty: ty.to_owned(),
        name: name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn served() -> ServedKinds {
        let kind = |group: &str, kind: &str, plural: &str, short: &[&str], namespaced| ServedKind {
            group: group.into(),
            version: "v1".into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: kind.to_ascii_lowercase(),
            short_names: short.iter().map(|s| s.to_string()).collect(),
            namespaced,
            verbs: Vec::new(),
            preferred: true,
        };
        ServedKinds::from_kinds(vec![
            kind("apps", "Deployment", "deployments", &["deploy"], true),
            kind("", "ConfigMap", "configmaps", &["cm"], true),
            kind("", "Namespace", "namespaces", &["ns"], false),
            kind("example.com", "Widget", "widgets", &[], true),
        ])
    }

    #[test]
    fn kubectl_spellings_name_their_kind_and_key() {
        let served = served();
        for (text, expected) in [
            (
                "deployment/web",
                ObjectKey::new("apps", "Deployment", "shop", "web"),
            ),
            (
                "deploy/web",
                ObjectKey::new("apps", "Deployment", "shop", "web"),
            ),
            (
                "deployments.v1.apps/web",
                ObjectKey::new("apps", "Deployment", "shop", "web"),
            ),
            (
                "Deployment/web",
                ObjectKey::new("apps", "Deployment", "shop", "web"),
            ),
            ("cm/web", ObjectKey::new("", "ConfigMap", "shop", "web")),
            (
                "widgets.example.com/web",
                ObjectKey::new("example.com", "Widget", "shop", "web"),
            ),
            ("ns/web", ObjectKey::new("", "Namespace", "", "web")),
        ] {
            let target = parse(text).unwrap();
            let (_, key) = target.resolve(&served, "shop").unwrap();
            assert_eq!(key, expected, "{text}");
        }
        assert_eq!(
            parse("widgets.example.com/w1")
                .unwrap()
                .group_hint()
                .as_deref(),
            Some("example.com")
        );
        assert_eq!(
            parse("deployments.v1.apps/w")
                .unwrap()
                .group_hint()
                .as_deref(),
            Some("apps")
        );
        assert_eq!(parse("deploy/w").unwrap().group_hint(), None);
    }

    #[test]
    fn bad_spellings_say_how_to_write_it() {
        assert_eq!(parse("web"), Err(TargetError::NoSlash("web".into())));
        assert_eq!(parse("deploy/"), Err(TargetError::NoName("deploy/".into())));
        let err = parse("gadgets/web")
            .unwrap()
            .resolve(&served(), "shop")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "the server doesn't have a resource type \"gadgets\"");
    }
}
