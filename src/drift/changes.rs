//! `kdrift changes`: a timeline of the writes the API can date — each `managedFields` entry,
//! each new ReplicaSet (a rollout, with what changed in its pod template), Warning events.
use std::time::Duration;

use serde_json::{Value, json};

use crate::managed_fields::{FieldPath, ManagedFieldsEntry, Operation};

use crate::manifest::tree::NodeRef;
use crate::schema::Schema;

use super::ObjectDrift;
use super::owners::{field_path, in_git};

/// An object's manifest and its comparison with the live object.
pub struct Desired<'a> {
    pub schema: Schema,
    pub manifest: NodeRef<'a>,
    pub drift: &'a ObjectDrift,
}

/// A Go-style duration (`10m`, `1h30m`, `90s`, `1.5h`), as kubectl's `--since` reads it.
pub fn parse_since(text: &str) -> Result<Duration, String> {
    let bad = |why: &str| {
        format!("invalid duration {text:?}: {why} (use Go-style durations such as 10m, 1h30m, 90s)")
    };
    if text.is_empty() {
        return Err(bad("empty"));
    }
    let mut rest = text;
    let mut seconds = 0f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| bad("a number needs a unit (ns, us, ms, s, m, h)"))?;
        if digits == 0 {
            return Err(bad("expected a number"));
        }
        let number: f64 = rest[..digits]
            .parse()
            .map_err(|_| bad(&format!("{:?} is not a number", &rest[..digits])))?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            unit => return Err(bad(&format!("unknown unit {unit:?}"))),
        };
        seconds += number * scale;
        rest = &rest[unit_len..];
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| bad("out of range"))
}

/// Whether git agrees now with what a line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agrees {
    InSync,
    Drifted,
    NotInGit,
    /// The manifests were not read yet when the line was made (the live view's first seconds).
    NotCompared,
    /// A line that names no field: an event, a GitOps sync — git has nothing to agree with.
    NoField,
}

impl Agrees {
    pub fn name(self) -> &'static str {
        match self {
            Agrees::InSync => "in sync",
            Agrees::Drifted => "drifted",
            Agrees::NotInGit => "not in git",
            Agrees::NotCompared => "not compared",
            Agrees::NoField => "",
        }
    }
}

/// One line of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// RFC 3339; `None` for a write the server records no time for (a v1.36 `/scale` write).
    pub time: Option<String>,
    /// `deployment/shop/web`.
    pub object: String,
    /// `kubectl (scale)`, `argocd-controller`, `deployment-controller`...
    pub who: String,
    pub what: String,
    pub git: Agrees,
    /// A write's line: who wrote it and every field it names (boxed: the live view's ring
    /// holds thousands of lines, most without it).
    pub writer: Option<Box<Writer>>,
}

/// A `managedFields` entry's writer, and the fields its line names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writer {
    pub manager: String,
    pub operation: Operation,
    pub subresource: Option<String>,
    /// Every field the line names, drifted ones first (`what` shows the first few).
    pub fields: Vec<String>,
}

impl Change {
    pub fn to_json(&self) -> Value {
        let mut out = json!({
            "time": self.time, "object": self.object, "who": self.who,
            "what": self.what,
        });
        if self.git != Agrees::NoField {
            out["git"] = json!(self.git.name());
        }
        if let Some(writer) = &self.writer {
            out["fields"] = json!(writer.fields);
            out["manager"] = json!(writer.manager);
            out["operation"] = json!(writer.operation.to_string());
            if let Some(sub) = &writer.subresource {
                out["subresource"] = json!(sub);
            }
        }
        out
    }
}

fn starts_with(path: &FieldPath, prefix: &FieldPath) -> bool {
    path.0.len() >= prefix.0.len() && path.0.iter().zip(&prefix.0).all(|(a, b)| a == b)
}

/// Shown leaf paths of one entry at most (the rest counted).
const SHOWN_FIELDS: usize = 6;

/// The lines of one object's `managedFields` entries: the fields each owns (old → new for a
/// drifted one, the manifest's value the old), and whether git agrees: drifted when one of its
/// fields is, in sync when the manifest has one of them, else not in git. `desired` is `None`
/// when no manifest of the object was found.
pub fn entry_changes(
    object: &str,
    entries: &[ManagedFieldsEntry],
    desired: Option<&Desired<'_>>,
) -> Vec<Change> {
    entry_lines(object, entries, desired)
        .into_iter()
        .map(|(change, _)| change)
        .collect()
}

/// [`entry_changes`], each with the first field its entry owns (where the live view opens it).
pub fn entry_lines(
    object: &str,
    entries: &[ManagedFieldsEntry],
    desired: Option<&Desired<'_>>,
) -> Vec<(Change, Option<FieldPath>)> {
    let drifted: Vec<(FieldPath, &super::DriftItem)> = desired
        .map(|d| {
            d.drift
                .items
                .iter()
                .filter(|i| i.class.is_drift())
                .map(|i| (field_path(&i.path), i))
                .collect()
        })
        .unwrap_or_default();
    let owned: Vec<Vec<FieldPath>> = entries.iter().map(|e| e.fields.leaves()).collect();
    // A drifted field below a leaf an entry owns is that entry's unless another owns a field
    // nearer it: `f:data: {}` left to kubectl-create after kubectl-patch took `f:data.f:a`
    // is not a write of `.data.a`.
    let nearer_owner = |me: usize, leaf: &FieldPath, drifted: &FieldPath| {
        drifted.0.len() > leaf.0.len()
            && owned.iter().enumerate().any(|(other, leaves)| {
                other != me
                    && leaves.iter().any(|l| {
                        l.0.len() > leaf.0.len() && starts_with(drifted, l) && starts_with(l, leaf)
                    })
            })
    };
    entries
        .iter()
        .zip(&owned)
        .enumerate()
        .map(|(me, (entry, leaves))| {
            // A leaf under no drifted field is its own text (leaves differ, so do their
            // texts). The drifted fields come first: an apply that took ownership of 45 fields
            // and changed one names that one, not the first six it merely owns.
            let mut drift_texts: Vec<String> = Vec::new();
            let mut plain: Vec<String> = Vec::new();
            for leaf in leaves {
                let hit = drifted.iter().find(|(p, _)| {
                    starts_with(leaf, p) || (starts_with(p, leaf) && !nearer_owner(me, leaf, p))
                });
                match hit {
                    Some((path, item)) => {
                        let side = |v: &Option<Value>| {
                            v.as_ref()
                                .map_or_else(|| "(none)".to_owned(), Value::to_string)
                        };
                        let text =
                            format!("{path}: {} → {}", side(&item.manifest), side(&item.live));
                        if !drift_texts.contains(&text) {
                            drift_texts.push(text);
                        }
                    }
                    None => plain.push(leaf.to_string()),
                }
            }
            let drifted_any = !drift_texts.is_empty();
            let mut fields = drift_texts;
            fields.extend(plain);
            let more = fields.len().saturating_sub(SHOWN_FIELDS);
            let mut what = fields[..fields.len().min(SHOWN_FIELDS)].join(", ");
            if more > 0 {
                what.push_str(&format!(" (+{more} more)"));
            }
            let change = Change {
                time: entry.time.clone(),
                object: object.to_owned(),
                who: who_of(entry),
                what,
                git: match desired {
                    _ if drifted_any => Agrees::Drifted,
                    Some(d) => git_of_leaves(d.schema, leaves, d.manifest),
                    None => Agrees::NotInGit,
                },
                writer: Some(Box::new(Writer {
                    manager: entry.manager.clone(),
                    operation: entry.operation,
                    subresource: entry.subresource.clone(),
                    fields,
                })),
            };
            (change, leaves.first().cloned())
        })
        .collect()
}

/// Whether git agrees with what one writer's fields (`leaves`) set, given that none of them
/// drifted: in sync when one of them is in the manifest; no verdict when all of them are
/// bookkeeping (kubectl's last-applied annotation and a Namespace's name label, all that a
/// client-side apply of a Namespace owns; a controller's revision annotation): nothing a manifest
/// writes or could disagree with; else not in git.
fn git_of_leaves(schema: Schema, leaves: &[FieldPath], manifest: NodeRef<'_>) -> Agrees {
    if leaves.iter().any(|leaf| in_git(schema, leaf, manifest)) {
        Agrees::InSync
    } else if !leaves.is_empty() && leaves.iter().all(super::normalize::is_bookkeeping) {
        Agrees::NoField
    } else {
        Agrees::NotInGit
    }
}

/// Who wrote an entry, as a line says it: `kubectl (scale) Update`.
pub fn who_of(entry: &ManagedFieldsEntry) -> String {
    who(
        &entry.manager,
        entry.subresource.as_deref(),
        entry.operation,
    )
}

/// Who wrote with `manager` through `subresource`, as a line says it.
pub fn who(manager: &str, subresource: Option<&str>, operation: Operation) -> String {
    let mut who = manager.to_owned();
    if let Some(sub) = subresource {
        who.push_str(&format!(" ({sub})"));
    }
    who.push_str(&format!(" {operation}"));
    who
}

/// Whether git agrees now with `paths` of an object: drifted when one of them is (or lies
/// above or below a drifted field), in sync when the manifest sets one, else not in git.
pub fn agrees(paths: &[FieldPath], desired: Option<&Desired<'_>>) -> Agrees {
    let Some(d) = desired else {
        return Agrees::NotInGit;
    };
    agrees_with(paths, &drifted_paths(d.drift), Some((d.schema, d.manifest)))
}

/// The drifted fields of a compare, as [`agrees_with`] takes them.
pub fn drifted_paths(drift: &super::ObjectDrift) -> Vec<FieldPath> {
    drift
        .items
        .iter()
        .filter(|i| i.class.is_drift())
        .map(|i| field_path(&i.path))
        .collect()
}

/// [`agrees`] from the drifted fields and the manifest (`None`: the object has none).
pub fn agrees_with(
    paths: &[FieldPath],
    drifted: &[FieldPath],
    manifest: Option<(Schema, NodeRef<'_>)>,
) -> Agrees {
    let Some((schema, manifest)) = manifest else {
        return Agrees::NotInGit;
    };
    let drifted = drifted.iter().any(|p| {
        paths
            .iter()
            .any(|path| starts_with(path, p) || starts_with(p, path))
    });
    if drifted {
        Agrees::Drifted
    } else {
        git_of_leaves(schema, paths, manifest)
    }
}

/// What changed in a pod template between two revisions: images per container, env, resources.
pub fn template_change(old: &Value, new: &Value) -> String {
    let containers = |t: &Value| -> Vec<(String, Value)> {
        t.pointer("/spec/containers")
            .and_then(Value::as_array)
            .map(|cs| {
                cs.iter()
                    .map(|c| {
                        (
                            c.get("name")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_owned(),
                            c.clone(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (before, after) = (containers(old), containers(new));
    let mut parts = Vec::new();
    for (name, c) in &after {
        let Some((_, b)) = before.iter().find(|(n, _)| n == name) else {
            parts.push(format!("container {name} added"));
            continue;
        };
        let field = |v: &Value, f: &str| v.get(f).cloned().unwrap_or(Value::Null);
        if field(b, "image") != field(c, "image") {
            parts.push(format!(
                "{name} image {} → {}",
                field(b, "image").as_str().unwrap_or("(none)"),
                field(c, "image").as_str().unwrap_or("(none)")
            ));
        }
        for f in ["env", "envFrom", "resources", "command", "args"] {
            if field(b, f) != field(c, f) {
                parts.push(format!("{name} {f} {} → {}", field(b, f), field(c, f)));
            }
        }
    }
    for (name, _) in &before {
        if !after.iter().any(|(n, _)| n == name) {
            parts.push(format!("container {name} removed"));
        }
    }
    for f in ["labels", "annotations"] {
        let at = |t: &Value| {
            t.pointer(&format!("/metadata/{f}"))
                .cloned()
                .unwrap_or(Value::Null)
        };
        if at(old) != at(new) {
            parts.push(format!("template {f} {} → {}", at(old), at(new)));
        }
    }
    if parts.is_empty() && old != new {
        parts.push("pod template changed (outside containers' image, env, resources and its labels and annotations)".to_owned());
    }
    parts.join("; ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn since_reads_go_durations_and_says_what_is_wrong() {
        assert_eq!(parse_since("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_since("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_since("1.5h").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_since("90s").unwrap(), Duration::from_secs(90));
        assert!(parse_since("10").unwrap_err().contains("needs a unit"));
        assert!(
            parse_since("1d")
                .unwrap_err()
                .contains("unknown unit \"d\"")
        );
        assert!(parse_since("").unwrap_err().contains("empty"));
        assert!(parse_since("h").unwrap_err().contains("expected a number"));
    }

    #[test]
    fn a_rollout_names_the_image_and_env_it_changed() {
        let old = json!({"spec": {"containers": [{"name": "web", "image": "a:1"}]}});
        let new = json!({"spec": {"containers": [{"name": "web", "image": "a:2",
            "env": [{"name": "X", "value": "1"}]}]}});
        assert_eq!(
            template_change(&old, &new),
            "web image a:1 → a:2; web env null → [{\"name\":\"X\",\"value\":\"1\"}]"
        );
    }

    #[test]
    fn entries_name_their_manager_and_fields() {
        let entries = ManagedFieldsEntry::parse_list(&json!([{
            "manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1",
            "subresource": "scale", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:replicas": {}}}
        }]))
        .unwrap();
        let lines = entry_changes("deployment/shop/web", &entries, None);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].who, "kubectl (scale) Update");
        assert_eq!(lines[0].what, ".spec.replicas");
        assert_eq!(lines[0].time, None);
        assert_eq!(lines[0].git, Agrees::NotInGit);
    }

    /// The lines of `live`'s managedFields entries, judged against `manifest` (one document,
    /// the object of `key`).
    fn lines_against(manifest: &str, key: crate::manifest::ObjectKey, live: &Value) -> Vec<Change> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.yaml"), manifest).unwrap();
        let index = crate::manifest::ManifestIndex::load(dir.path(), "default");
        let manifest = index.get(&key).unwrap();
        let entries = ManagedFieldsEntry::parse_list(&live["metadata"]["managedFields"]).unwrap();
        let object = crate::drift::LiveObject::from_item_json(
            &live.to_string(),
            live["apiVersion"].as_str().unwrap(),
            live["kind"].as_str().unwrap(),
            crate::schema::Schemas::builtin(),
        )
        .unwrap();
        let drift = crate::drift::check::compare_in(&index, manifest, &object);
        let desired = Desired {
            schema: object.schema,
            manifest: manifest.body.root(),
            drift: &drift,
        };
        entry_changes(&key.to_string(), &entries, Some(&desired))
    }

    #[test]
    fn a_field_another_entry_took_over_is_not_said_by_the_entry_that_kept_its_map() {
        // kubectl create wrote data.a = 1; kubectl patch set it to 2 and took `f:data.f:a`,
        // leaving kubectl-create `f:data: {}`. The manifest says 1.
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "shop", "managedFields": [
                {"manager": "kubectl-create", "operation": "Update", "apiVersion": "v1",
                 "time": "2026-01-01T10:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:data": {}}},
                {"manager": "kubectl-patch", "operation": "Update", "apiVersion": "v1",
                 "time": "2026-01-01T10:05:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:data": {"f:a": {}}}}]},
            "data": {"a": "2"}});
        let lines = lines_against(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: shop\ndata:\n  a: \"1\"\n",
            crate::manifest::ObjectKey::new("", "ConfigMap", "shop", "c"),
            &live,
        );
        let said: Vec<(&str, &str, Agrees)> = lines
            .iter()
            .map(|l| (l.who.as_str(), l.what.as_str(), l.git))
            .collect();
        assert_eq!(
            said,
            [
                ("kubectl-create Update", ".data", Agrees::InSync),
                (
                    "kubectl-patch Update",
                    ".data.a: \"1\" → \"2\"",
                    Agrees::Drifted
                ),
            ]
        );
    }

    #[test]
    fn a_namespaces_client_side_apply_line_of_bookkeeping_has_no_git_verdict() {
        // `kubectl apply` of a Namespace: its entry owns the last-applied annotation and the
        // name label the server sets, neither of which a manifest writes.
        let live = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "trial",
                "labels": {"kubernetes.io/metadata.name": "trial"},
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
                "managedFields": [
                {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",
                 "time": "2026-01-01T10:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {
                     "f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}},
                     "f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}}}]},
            "spec": {"finalizers": ["kubernetes"]}});
        let lines = lines_against(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: trial\n",
            crate::manifest::ObjectKey::new("", "Namespace", "", "trial"),
            &live,
        );
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].git, Agrees::NoField, "{}", lines[0].what);
        // Without a manifest it is not in git, as before.
        let entries = ManagedFieldsEntry::parse_list(&live["metadata"]["managedFields"]).unwrap();
        let lines = entry_changes("namespace/trial", &entries, None);
        assert_eq!(lines[0].git, Agrees::NotInGit);
    }

    #[test]
    fn an_entry_of_many_fields_shows_six_and_counts_the_rest() {
        let fields: serde_json::Map<String, Value> =
            (0..8).map(|i| (format!("f:k{i}"), json!({}))).collect();
        let entries = ManagedFieldsEntry::parse_list(&json!([{
            "manager": "helm", "operation": "Update", "apiVersion": "v1",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:data": fields}
        }]))
        .unwrap();
        let lines = entry_lines("configmap/shop/c", &entries, None);
        assert_eq!(
            lines[0].0.what,
            ".data.k0, .data.k1, .data.k2, .data.k3, .data.k4, .data.k5 (+2 more)"
        );
        assert_eq!(lines[0].1.as_ref().unwrap().to_string(), ".data.k0");
    }
}
