//! `kdrift compare`: one object as several clusters have it. The first cluster's object, less
//! what no one writes ([`super::blame::shown`]), is compared with each other cluster's by the
//! drift engine itself, both ways, so that equality is by meaning (quantities, defaults, list
//! keys) and status and server bookkeeping are left out as a drift check leaves them out. Each
//! field that differs is then given, per cluster, its value, the manager owning it (from that
//! object's `managedFields`), and whether that cluster's manifest agrees.
use serde_json::Value;

use crate::managed_fields::ManagedFieldsEntry;
use crate::manifest::{Config, ManifestObject, ObjectKey};

use super::blame::GitState;
use super::owners::{field_path, lookup, owners};
use super::{Attribution, Class, DriftPath, LiveObject, ObjectStatus, compare, compare_values};

/// One cluster's object, as read for a comparison.
pub struct Side<'a> {
    pub context: &'a str,
    /// The object as the API server returned it (managedFields kept).
    pub raw: &'a Value,
    pub live: &'a LiveObject,
    /// Its `managedFields`, all of them.
    pub entries: &'a [ManagedFieldsEntry],
    /// The manifest describing this cluster's object, if one was found.
    pub manifest: Option<&'a ManifestObject>,
}

/// One cluster's value of a field that differs.
#[derive(Debug, Clone, PartialEq)]
pub struct SideValue {
    /// `None`: the field is absent in this cluster.
    pub value: Option<Value>,
    /// The newest write of a manager owning the field, if any owns it.
    pub owner: Option<Attribution>,
    /// What this cluster's manifest says of the field: `None` without a manifest.
    pub git: Option<GitState>,
}

/// A field that is not the same in every cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldDifference {
    pub path: DriftPath,
    /// One per side, in the order of the sides.
    pub sides: Vec<SideValue>,
}

impl FieldDifference {
    /// The indices of the sides whose manifest agrees with their live value (git in sync).
    pub fn git_agrees(&self) -> Vec<usize> {
        self.sides
            .iter()
            .enumerate()
            .filter(|(_, s)| s.git == Some(GitState::InSync))
            .map(|(at, _)| at)
            .collect()
    }
}

/// The fields that differ between the sides' objects, in the order the first side's object
/// has them (then those only the others have). `config`'s `ignore` rules apply.
pub fn differences(key: &ObjectKey, sides: &[Side<'_>], config: &Config) -> Vec<FieldDifference> {
    let Some((first, others)) = sides.split_first() else {
        return Vec::new();
    };
    let first_shown = super::blame::shown(first.raw.clone());
    // (path, the first side's value, the other sides' values where they differ)
    type Found = (DriftPath, Option<Value>, Vec<Option<Option<Value>>>);
    let mut found: Vec<Found> = Vec::new();
    let mut note =
        |path: &DriftPath, first_value: Option<Value>, at: usize, value: Option<Value>| {
            let slot = match found.iter().position(|(p, ..)| p == path) {
                Some(slot) => slot,
                None => {
                    found.push((path.clone(), first_value.clone(), vec![None; others.len()]));
                    found.len() - 1
                }
            };
            found[slot].2[at] = Some(value);
        };
    let counted = |class: Class| !matches!(class, Class::AddedLive | Class::Restarted);
    for (at, other) in others.iter().enumerate() {
        // The first as the manifest, the other live: what the first has and the other has not,
        // or has otherwise.
        let forward = compare_values(key, &first_shown, other.live, config);
        for item in forward.items.iter().filter(|i| counted(i.class)) {
            note(&item.path, item.manifest.clone(), at, item.live.clone());
        }
        // And the other way: what only the other has.
        let other_shown = super::blame::shown(other.raw.clone());
        let reverse = compare_values(key, &other_shown, first.live, config);
        for item in reverse
            .items
            .iter()
            .filter(|i| counted(i.class) && i.class == Class::RemovedLive)
        {
            note(&item.path, None, at, item.manifest.clone());
        }
    }
    found
        .into_iter()
        .map(|(path, first_value, values)| {
            let mut all = vec![first_value.clone()];
            // A side the comparison found nothing for has the first side's value.
            all.extend(values.into_iter().map(|v| v.unwrap_or(first_value.clone())));
            let sides = sides
                .iter()
                .zip(all)
                .map(|(side, value)| side_value(side, &path, value, config))
                .collect();
            FieldDifference { path, sides }
        })
        .collect()
}

fn side_value(
    side: &Side<'_>,
    path: &DriftPath,
    value: Option<Value>,
    config: &Config,
) -> SideValue {
    let owner = value.as_ref().and_then(|_| {
        owners(side.live.schema, side.entries, path)
            .first()
            .map(|entry| Attribution::of(entry))
    });
    let at = field_path(path);
    let overlaps = |other: &DriftPath| {
        let other = field_path(other);
        let (short, long) = if other.0.len() <= at.0.len() {
            (&other.0, &at.0)
        } else {
            (&at.0, &other.0)
        };
        long.iter().zip(short.iter()).all(|(a, b)| a == b)
    };
    let git = side.manifest.map(|manifest| {
        let drift = compare(manifest, side.live, config);
        let drifted = matches!(drift.status, ObjectStatus::Drifted)
            && drift
                .items
                .iter()
                .filter(|i| i.class.is_drift())
                .any(|i| overlaps(&i.path));
        if drifted {
            GitState::Drifted
        } else if lookup(side.live.schema, &at, &manifest.body).is_some() {
            GitState::InSync
        } else {
            GitState::NotInGit
        }
    });
    SideValue { value, owner, git }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(replicas: u64, image: &str, memory: &str, manager: &str) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {
                "name": "web", "namespace": "shop", "uid": format!("uid-{manager}"),
                "resourceVersion": "7", "generation": 3,
                "creationTimestamp": "2026-11-26T20:00:00Z",
                "managedFields": [{
                    "manager": manager, "operation": "Update", "apiVersion": "apps/v1",
                    "time": "2026-11-26T21:00:00Z", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
                        "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}, "f:resources": {"f:requests": {"f:memory": {}}}}
                    }}}}}
                }]
            },
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": image, "resources": {"requests": {"memory": memory}}}]}
                }
            },
            "status": {"replicas": replicas, "observedGeneration": 3}
        })
    }

    #[test]
    fn only_the_fields_that_differ_by_meaning_each_side_with_its_manager() {
        let schemas = crate::schema::Schemas::builtin().clone();
        let eu_raw = deployment(3, "web:2.0", "1Gi", "kubectl-edit");
        let us_raw = deployment(2, "web:1.9", "1024Mi", "kubectl-client-side-apply");
        let eu = LiveObject::from_value(eu_raw.clone(), &schemas).unwrap();
        let us = LiveObject::from_value(us_raw.clone(), &schemas).unwrap();
        let eu_entries = ManagedFieldsEntry::read(&eu_raw).unwrap();
        let us_entries = ManagedFieldsEntry::read(&us_raw).unwrap();
        let sides = [
            Side {
                context: "prod-eu",
                raw: &eu_raw,
                live: &eu,
                entries: &eu_entries,
                manifest: None,
            },
            Side {
                context: "prod-us",
                raw: &us_raw,
                live: &us,
                entries: &us_entries,
                manifest: None,
            },
        ];
        let found = differences(&eu.key, &sides, &Config::default());
        let paths: Vec<String> = found.iter().map(|d| d.path.to_string()).collect();
        // 1Gi = 1024Mi; uid, status and the other bookkeeping are left out.
        assert_eq!(
            paths,
            [
                "spec.replicas",
                "spec.template.spec.containers[name=web].image"
            ]
        );
        let image = &found[1];
        assert_eq!(image.sides[0].value, Some(json!("web:2.0")));
        assert_eq!(image.sides[1].value, Some(json!("web:1.9")));
        assert_eq!(
            image.sides[0].owner.as_ref().unwrap().manager.as_deref(),
            Some("kubectl-edit")
        );
        assert_eq!(
            image.sides[1].owner.as_ref().unwrap().manager.as_deref(),
            Some("kubectl-client-side-apply")
        );
        assert_eq!(image.sides[0].git, None);

        // The same object on both sides: nothing differs.
        let same = [
            Side { ..sides[0] },
            Side {
                context: "staging",
                ..sides[0]
            },
        ];
        assert!(differences(&eu.key, &same, &Config::default()).is_empty());
    }

    #[test]
    fn a_field_only_one_side_has_is_a_difference_with_the_other_side_absent() {
        let schemas = crate::schema::Schemas::builtin().clone();
        let eu_raw = deployment(3, "web:2.0", "1Gi", "kubectl-edit");
        let mut us_raw = eu_raw.clone();
        us_raw["spec"]["template"]["spec"]["containers"][0]["env"] =
            json!([{"name": "REGION", "value": "us-east-1"}]);
        let eu = LiveObject::from_value(eu_raw.clone(), &schemas).unwrap();
        let us = LiveObject::from_value(us_raw.clone(), &schemas).unwrap();
        let entries = ManagedFieldsEntry::read(&eu_raw).unwrap();
        let side = |context, raw, live| Side {
            context,
            raw,
            live,
            entries: &entries,
            manifest: None,
        };
        let sides = [side("eu", &eu_raw, &eu), side("us", &us_raw, &us)];
        let found = differences(&eu.key, &sides, &Config::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].path.to_string(),
            "spec.template.spec.containers[name=web].env"
        );
        assert_eq!(found[0].sides[0].value, None);
        assert_eq!(
            found[0].sides[1].value,
            Some(json!([{"name": "REGION", "value": "us-east-1"}]))
        );
        assert_eq!(found[0].sides[0].owner, None);
    }
}
