//! Which drifted fields a revert puts back: every one (a Helm release's object: all but those git
//! already holds, which the next `helm upgrade` brings to the release, and those helm is
//! applying now, mid-upgrade), or those named with
//! `--field`. The others are [`Kept`]: left out of the applied configuration and of the removals,
//! so they stay as they are live.
use crate::drift::{Class, DriftItem, ObjectDrift};

use super::plan::Kept;

/// Why a `--field` selection is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    #[error("{key} has no drifted field \"{field}\" (its drifted fields: {drifted})")]
    UnknownField {
        key: String,
        field: String,
        drifted: String,
    },
    #[error(
        "\"{field}\" of {key} is set by the autoscaler, not drift: a revert leaves it to the autoscaler"
    )]
    Autoscaled { key: String, field: String },
}

/// The fields a revert of `drift` could put back: drift, a restart, and a Helm object's fields
/// already in git.
fn revertible(item: &DriftItem) -> bool {
    item.class.is_drift()
        || matches!(
            item.class,
            Class::Restarted | Class::InGit | Class::HelmUpgrading
        )
}

/// The fields to leave as they are live: with `fields` empty, those git already holds; else every
/// revertible field `fields` does not name (as `kdrift check` prints a path, or as its JSON
/// pointer).
pub fn kept(drift: &ObjectDrift, fields: &[String]) -> Result<Vec<Kept>, ScopeError> {
    if fields.is_empty() {
        return Ok(drift
            .items
            .iter()
            .filter_map(|item| {
                let why = match item.class {
                    Class::InGit => "git already holds this value (a pending helm upgrade brings the release to it); name it with --field to revert it too",
                    Class::HelmUpgrading => "helm is mid-upgrade and its pending revision sets this value: reverting it would fight helm; name it with --field to revert it anyway",
                    _ => return None,
                };
                Some(Kept {
                    path: item.path.clone(),
                    why: why.into(),
                    // Helm applied it: left out of the configuration applied as helm, the
                    // server would remove it.
                    applied: (item.class == Class::HelmUpgrading)
                        .then(|| item.live.clone())
                        .flatten(),
                })
            })
            .collect());
    }
    let named = |item: &DriftItem, field: &String| {
        item.path.to_string() == *field || item.path.pointer() == *field
    };
    for field in fields {
        match drift.items.iter().find(|item| named(item, field)) {
            Some(item) if item.class == Class::Autoscaled => {
                return Err(ScopeError::Autoscaled {
                    key: drift.key.to_string(),
                    field: field.clone(),
                });
            }
            Some(item) if revertible(item) => {}
            _ => {
                return Err(ScopeError::UnknownField {
                    key: drift.key.to_string(),
                    field: field.clone(),
                    drifted: drift.paths_of(revertible),
                });
            }
        }
    }
    Ok(drift
        .items
        .iter()
        .filter(|item| revertible(item) && !fields.iter().any(|f| named(item, f)))
        .map(|item| Kept {
            path: item.path.clone(),
            why: "not named with --field".into(),
            applied: (item.class == Class::HelmUpgrading)
                .then(|| item.live.clone())
                .flatten(),
        })
        .collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::drift::{Attribution, DriftPath, ObjectStatus, PathStep};
    use crate::manifest::ObjectKey;

    fn item(path: &str, class: Class) -> DriftItem {
        DriftItem {
            path: DriftPath(path.split('.').map(|s| PathStep::Field(s.into())).collect()),
            class,
            manifest: None,
            live: None,
            attribution: Attribution::default(),
            preceding: Default::default(),
        }
    }

    fn drift(items: Vec<DriftItem>) -> ObjectDrift {
        ObjectDrift {
            key: ObjectKey::new("apps", "Deployment", "shop", "web"),
            schema: crate::schema::Schema::UNKNOWN,
            status: ObjectStatus::Drifted,
            items,
        }
    }

    #[test]
    fn by_default_only_what_git_holds_is_kept() {
        let d = drift(vec![
            item("spec.replicas", Class::InGit),
            item("spec.paused", Class::Changed),
        ]);
        let kept = kept(&d, &[]).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].path.to_string(), "spec.replicas");
        assert!(
            kept[0]
                .preview_text()
                .starts_with("leaves spec.replicas as it is live: git already holds")
        );
    }

    #[test]
    fn a_field_named_is_reverted_and_every_other_kept_even_one_in_git() {
        let d = drift(vec![
            item("spec.replicas", Class::InGit),
            item("spec.paused", Class::Changed),
            item("spec.minReadySeconds", Class::AddedLive),
            item("spec.revisionHistoryLimit", Class::Autoscaled),
        ]);
        let kept = kept(&d, &["spec.paused".into()]).unwrap();
        let paths: Vec<String> = kept.iter().map(|k| k.path.to_string()).collect();
        assert_eq!(paths, ["spec.replicas", "spec.minReadySeconds"]);
        // Named by its JSON pointer too, and an in-git field can be named.
        let kept = kept_of(&d, &["/spec/replicas"]);
        assert_eq!(kept, ["spec.paused", "spec.minReadySeconds"]);
    }

    fn kept_of(d: &ObjectDrift, fields: &[&str]) -> Vec<String> {
        let fields: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        kept(d, &fields)
            .unwrap()
            .iter()
            .map(|k| k.path.to_string())
            .collect()
    }

    #[test]
    fn an_unknown_or_autoscaled_field_is_refused_naming_the_drifted_ones() {
        let d = drift(vec![
            item("spec.paused", Class::Changed),
            item("spec.replicas", Class::Autoscaled),
        ]);
        let err = kept(&d, &["spec.template".into()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "deployment/shop/web has no drifted field \"spec.template\" (its drifted fields: spec.paused)"
        );
        assert!(matches!(
            kept(&d, &["spec.replicas".into()]),
            Err(ScopeError::Autoscaled { .. })
        ));
    }
}
