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

/// One cluster's object as read for a comparison: as the API server returned it, as the drift
/// engine reads it, and its `managedFields`.
#[derive(Debug, Clone)]
pub struct ReadObject {
    pub raw: Value,
    pub live: LiveObject,
    pub entries: Vec<ManagedFieldsEntry>,
}

impl ReadObject {
    /// `raw` with its drift engine's view `live`; fails when its `managedFields` cannot be read.
    pub fn new(raw: Value, live: LiveObject) -> Result<ReadObject, String> {
        let entries = ManagedFieldsEntry::read(&raw)
            .map_err(|e| format!("{}: its managedFields cannot be read: {e}", live.key))?;
        Ok(ReadObject { raw, live, entries })
    }
}

/// What one context gave for a comparison: its cluster, the object (if it has it), and the
/// manifest that describes it there.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The cluster's URL.
    pub cluster: String,
    /// Where this context's manifests come from (its folder, overlay or `.kdrift.yaml` entry).
    pub source: String,
    pub key: ObjectKey,
    /// `None`: the cluster has no such object.
    pub object: Option<ReadObject>,
    pub manifest: Option<ManifestObject>,
    pub config: Config,
}

/// The comparison of several contexts' readings.
#[derive(Debug, Clone)]
pub struct Compared {
    /// The readings that have the object, by index; the sides of each difference follow them.
    pub present: Vec<usize>,
    pub found: Vec<FieldDifference>,
}

/// Compares the readings of `contexts` (one each, in order): `None` while one is not read or
/// could not be (`None` in `readings`), or when fewer than two clusters have the object.
pub fn compare_readings(contexts: &[&str], readings: &[Option<&Reading>]) -> Option<Compared> {
    let mut present = Vec::new();
    let mut sides = Vec::new();
    for (index, (context, reading)) in contexts.iter().zip(readings).enumerate() {
        let reading = (*reading)?;
        if let Some(object) = &reading.object {
            present.push(index);
            sides.push(Side {
                context,
                raw: &object.raw,
                live: &object.live,
                entries: &object.entries,
                manifest: reading.manifest.as_ref(),
            });
        }
    }
    if sides.len() < 2 {
        return None;
    }
    let first = readings[present[0]]?;
    Some(Compared {
        found: differences(&first.key, &sides, &first.config),
        present,
    })
}

/// `kubectl-set (Update) 12m ago`, `kubectl (Update via /scale)`, `no manager`: who owns a
/// side's value.
pub fn owner_text(owner: Option<&Attribution>, now: jiff::Timestamp) -> String {
    let Some(owner) = owner else {
        return "no manager".to_owned();
    };
    let manager = owner
        .manager
        .as_deref()
        .filter(|m| !m.is_empty())
        .unwrap_or("manager unknown");
    let how = match (&owner.operation, &owner.subresource) {
        (Some(op), Some(sub)) => format!(" ({op} via /{sub})"),
        (Some(op), None) => format!(" ({op})"),
        _ => String::new(),
    };
    let when = super::report::age(owner.time.as_deref(), now)
        .map(|a| format!(" {a}"))
        .unwrap_or_default();
    format!("{manager}{how}{when}")
}

/// What a side's manifest says of its value, in words.
pub fn git_text(git: Option<GitState>) -> &'static str {
    match git {
        None => "no manifest",
        Some(state) => state.name(),
    }
}

/// Where one context's reading stands.
#[derive(Clone, Copy)]
pub enum ColumnState<'a> {
    /// Still reading (the live view's compare, until the answer arrives).
    Reading,
    Read(&'a Reading),
    Failed(&'a str),
}

/// What a line of a comparison says (the live view styles each kind its own way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// A context: its cluster and manifest, or that it lacks the object.
    Context,
    /// A context that could not be read, or a summary of trouble.
    Error,
    /// The path of a field that differs.
    Path,
    /// One cluster's value of that field, its manager and git.
    Value,
    /// Which clusters' manifests agree.
    Agrees,
    /// The last line: how many fields differ, or that none does.
    Summary,
    Blank,
}

/// A comparison in lines, as `kdrift compare` prints it and the live view's compare shows it:
/// a line per context, then each field that differs with every cluster's value, manager and
/// git, then a summary.
pub fn comparison_lines(
    columns: &[(&str, ColumnState<'_>)],
    compared: Option<&Compared>,
    now: jiff::Timestamp,
) -> Vec<(LineKind, String)> {
    use super::report::short_value;
    let mut out = Vec::new();
    let width = columns
        .iter()
        .map(|(c, _)| c.chars().count())
        .max()
        .unwrap_or(0);
    let key = columns
        .iter()
        .find_map(|(_, state)| match state {
            ColumnState::Read(r) => Some(r.key.to_string()),
            _ => None,
        })
        .unwrap_or_default();
    for (name, state) in columns {
        match state {
            ColumnState::Reading => {
                out.push((LineKind::Context, format!("{name:width$}  reading…")));
            }
            ColumnState::Failed(e) => {
                out.push((LineKind::Error, format!("{name:width$}  error: {e}")));
            }
            ColumnState::Read(read) => {
                let manifest = match &read.manifest {
                    Some(m) => format!("{}:{}", crate::manifest::shown_path(&m.file), m.line),
                    None => "none found".to_owned(),
                };
                let here = if read.object.is_some() {
                    String::new()
                } else {
                    format!("  {} is not in this cluster", read.key)
                };
                out.push((
                    LineKind::Context,
                    format!(
                        "{name:width$}  {}  manifest: {manifest}{here}",
                        read.cluster
                    ),
                ));
            }
        }
    }
    let Some(Compared { present, found }) = compared else {
        let none = columns
            .iter()
            .all(|(_, s)| matches!(s, ColumnState::Read(r) if r.object.is_none()));
        if none {
            out.push((
                LineKind::Summary,
                format!("{key} is in none of these clusters"),
            ));
        }
        return out;
    };
    out.push((LineKind::Blank, String::new()));
    if found.is_empty() {
        out.push((
            LineKind::Summary,
            format!("{key}: the same in every cluster that has it"),
        ));
        return out;
    }
    for difference in found {
        out.push((LineKind::Path, difference.path.to_string()));
        let values: Vec<String> = difference
            .sides
            .iter()
            .map(|side| short_value(side.value.as_ref()))
            .collect();
        let value_width = values.iter().map(|v| v.chars().count()).max().unwrap_or(0);
        for ((side, index), value) in difference.sides.iter().zip(present).zip(&values) {
            let name = columns.get(*index).map_or("", |(c, _)| c);
            out.push((
                LineKind::Value,
                format!(
                    "  {name:width$}  {value:value_width$}  {}  git: {}",
                    owner_text(side.owner.as_ref(), now),
                    git_text(side.git)
                ),
            ));
        }
        let agrees: Vec<&str> = difference
            .git_agrees()
            .into_iter()
            .filter_map(|s| {
                present
                    .get(s)
                    .and_then(|i| columns.get(*i))
                    .map(|(c, _)| *c)
            })
            .collect();
        out.push((
            LineKind::Agrees,
            if agrees.is_empty() {
                "  git agrees with none of them".to_owned()
            } else {
                format!("  git agrees with {}", agrees.join(", "))
            },
        ));
    }
    out.push((
        LineKind::Summary,
        format!("{key}: {} field(s) differ", found.len()),
    ));
    out
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
        } else if lookup(side.live.schema, &at, manifest.body.root()).is_some() {
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
