//! `kdrift blame`: each leaf field of a live object with the managers owning it (from its
//! `managedFields`, read by [`crate::managed_fields`]) and whether git agrees with it.
//!
//! The object is printed as `kubectl get -o yaml` prints it, less what no one writes by hand:
//! `status`, `metadata.managedFields`, `resourceVersion`, `uid`, `generation`,
//! `creationTimestamp`, `selfLink` and the `kubectl.kubernetes.io/last-applied-configuration`
//! annotation ([`LEFT_OUT`]).
use serde_json::{Map, Value, json};

use crate::managed_fields::{FieldPath, ManagedFieldsEntry, PathElement, owners_in};
use crate::manifest::tree::NodeRef;
use crate::schema::Schema;

use super::owners::{field_path, in_git};
use super::{Attribution, ObjectDrift};

/// What blame leaves out of the object, as the user reads it (for help and docs).
pub const LEFT_OUT: &str = "status, metadata.managedFields, metadata.resourceVersion, metadata.uid, metadata.generation, metadata.creationTimestamp, metadata.selfLink and the kubectl.kubernetes.io/last-applied-configuration annotation";

/// Whether git agrees with a live field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitState {
    /// The manifest has the field and it is not drifted.
    InSync,
    /// The field is in a drift the comparison found (changed, added or removed live).
    Drifted,
    /// The manifest does not have the field (a default, a controller's write).
    NotInGit,
}

impl GitState {
    pub fn name(self) -> &'static str {
        match self {
            GitState::InSync => "in sync",
            GitState::Drifted => "drifted",
            GitState::NotInGit => "not in git",
        }
    }
}

/// The manifest of the object and its comparison with the live object, when one was found.
pub struct Desired<'a> {
    pub manifest: NodeRef<'a>,
    pub drift: &'a ObjectDrift,
}

/// One leaf field (a scalar, an empty map or list) of the object.
#[derive(Debug, Clone, PartialEq)]
pub struct BlamedField {
    pub path: FieldPath,
    pub value: Value,
    /// The managers owning the field (itself or an atomic field above it), newest write first.
    pub owners: Vec<Attribution>,
    /// `None` when no manifest of the object was found.
    pub git: Option<GitState>,
}

/// One line of the printed object; `field` indexes [`Blame::fields`] for a leaf's line.
#[derive(Debug, Clone, PartialEq)]
pub struct BlameLine {
    pub text: String,
    pub field: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Blame {
    pub lines: Vec<BlameLine>,
    pub fields: Vec<BlamedField>,
}

/// The object as blame shows it: `live` less [`LEFT_OUT`], a Secret's values as the digests
/// every other output shows ([`super::secret::mask_object`]).
pub fn shown(mut live: Value) -> Value {
    if super::secret::is_secret_object(&live) {
        super::secret::mask_object(&mut live);
    }
    if let Some(map) = live.as_object_mut() {
        map.remove("status");
        if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
            for name in [
                "managedFields",
                "resourceVersion",
                "uid",
                "generation",
                "creationTimestamp",
                "selfLink",
            ] {
                meta.remove(name);
            }
            let empty = match meta.get_mut("annotations").and_then(Value::as_object_mut) {
                Some(annotations) => {
                    annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
                    annotations.is_empty()
                }
                None => false,
            };
            if empty {
                meta.remove("annotations");
            }
        }
    }
    live
}

/// Blames every leaf of `live` (as [`shown`] leaves it) on `entries`, the object's
/// `managedFields` (all of them: status and scale writes too); `root` is its kind's schema.
pub fn blame(
    root: Schema,
    live: &Value,
    entries: &[ManagedFieldsEntry],
    desired: Option<&Desired<'_>>,
) -> Blame {
    let drifted: Vec<FieldPath> = desired
        .map(|d| {
            d.drift
                .items
                .iter()
                .filter(|item| item.class.is_drift())
                .map(|item| field_path(&item.path))
                .collect()
        })
        .unwrap_or_default();
    let mut walk = Walk {
        root,
        entries,
        desired,
        drifted,
        out: Blame {
            lines: Vec::new(),
            fields: Vec::new(),
        },
    };
    let mut path = Vec::new();
    if let Value::Object(map) = live {
        walk.map(map, root, &mut path, 0, "");
    }
    walk.out
}

struct Walk<'a> {
    root: Schema,
    entries: &'a [ManagedFieldsEntry],
    desired: Option<&'a Desired<'a>>,
    drifted: Vec<FieldPath>,
    out: Blame,
}

fn is_leaf(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => true,
    }
}

/// A scalar (or empty container) as YAML writes it on one line.
fn scalar(value: &Value) -> String {
    match value {
        Value::Object(_) => "{}".to_owned(),
        Value::Array(_) => "[]".to_owned(),
        Value::String(s) if s.contains('\n') => value.to_string(),
        // Quoted where YAML 1.1 (as Kubernetes reads it) would read another type: `"yes"`.
        _ => {
            crate::manifest::edit::render::inline(value, false).unwrap_or_else(|| value.to_string())
        }
    }
}

fn starts_with(path: &[PathElement], prefix: &[PathElement]) -> bool {
    path.len() >= prefix.len() && path.iter().zip(prefix).all(|(a, b)| a == b)
}

impl Walk<'_> {
    fn leaf(&mut self, text: String, path: &[PathElement], value: &Value) {
        let path = FieldPath(path.to_vec());
        let mut owners = owners_in(self.root, self.entries, &path);
        // RFC 3339 times from one server sort as text.
        owners.sort_by(|a, b| b.time.cmp(&a.time));
        let git = self.desired.map(|d| {
            if self
                .drifted
                .iter()
                .any(|p| starts_with(&path.0, &p.0) || starts_with(&p.0, &path.0))
            {
                GitState::Drifted
            } else if in_git(self.root, &path, d.manifest) {
                GitState::InSync
            } else {
                GitState::NotInGit
            }
        });
        self.out.lines.push(BlameLine {
            text,
            field: Some(self.out.fields.len()),
        });
        self.out.fields.push(BlamedField {
            path,
            value: value.clone(),
            owners: owners.into_iter().map(Attribution::of).collect(),
            git,
        });
    }

    /// The fields of `map` at `indent`; the first line starts with `first` (`- ` for a list
    /// item) in place of its indent's last two spaces.
    fn map(
        &mut self,
        map: &Map<String, Value>,
        schema: Schema,
        path: &mut Vec<PathElement>,
        indent: usize,
        first: &str,
    ) {
        for (i, (name, value)) in map.iter().enumerate() {
            let lead = if i == 0 && !first.is_empty() {
                format!("{}{first}", " ".repeat(indent.saturating_sub(2)))
            } else {
                " ".repeat(indent)
            };
            let key = scalar(&Value::String(name.clone()));
            path.push(PathElement::field(name));
            let child = schema.field(name);
            if is_leaf(value) {
                self.leaf(format!("{lead}{key}: {}", scalar(value)), path, value);
            } else {
                self.out.lines.push(BlameLine {
                    text: format!("{lead}{key}:"),
                    field: None,
                });
                match value {
                    Value::Object(inner) => self.map(inner, child, path, indent + 2, ""),
                    Value::Array(items) => self.list(items, child, path, indent),
                    _ => {}
                }
            }
            path.pop();
        }
    }

    /// The items of a list at `indent` (as kubectl: `- ` at the key's indent).
    fn list(
        &mut self,
        items: &[Value],
        schema: Schema,
        path: &mut Vec<PathElement>,
        indent: usize,
    ) {
        for (index, item) in items.iter().enumerate() {
            path.push(PathElement::for_item(schema, item, index));
            let pad = " ".repeat(indent);
            match item {
                Value::Object(inner) if !inner.is_empty() => {
                    self.map(inner, schema.item(), path, indent + 2, "- ");
                }
                Value::Array(inner) if !inner.is_empty() => {
                    self.out.lines.push(BlameLine {
                        text: format!("{pad}-"),
                        field: None,
                    });
                    self.list(inner, schema.item(), path, indent + 2);
                }
                _ => self.leaf(format!("{pad}- {}", scalar(item)), path, item),
            }
            path.pop();
        }
    }
}

/// An owner as blame prints it: `kubectl (scale) Update 2026-11-26T20:00:00Z`.
pub fn owner_text(owner: &Attribution) -> String {
    let mut text = owner
        .manager
        .clone()
        .unwrap_or_else(|| "unknown".to_owned());
    if let Some(sub) = &owner.subresource {
        text.push_str(&format!(" ({sub})"));
    }
    if let Some(op) = &owner.operation {
        text.push_str(&format!(" {op}"));
    }
    if let Some(time) = &owner.time {
        text.push_str(&format!(" {time}"));
    }
    text
}

/// The printed object, each leaf's owners and git state beside it after `#`.
pub fn text(blame: &Blame) -> String {
    let width = blame
        .lines
        .iter()
        .filter(|l| l.field.is_some())
        .map(|l| l.text.chars().count())
        .max()
        .unwrap_or(0)
        .min(60);
    let mut out = String::new();
    for line in &blame.lines {
        out.push_str(&line.text);
        if let Some(field) = line.field.and_then(|i| blame.fields.get(i)) {
            let pad = width.saturating_sub(line.text.chars().count());
            let owners = if field.owners.is_empty() {
                "no manager".to_owned()
            } else {
                field
                    .owners
                    .iter()
                    .map(owner_text)
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            out.push_str(&" ".repeat(pad));
            out.push_str("  # ");
            out.push_str(&owners);
            if let Some(git) = field.git {
                out.push_str(" · ");
                out.push_str(git.name());
            }
        }
        out.push('\n');
    }
    out
}

/// The blame as data (`-o json`).
pub fn json(blame: &Blame) -> Value {
    let fields: Vec<Value> = blame
        .fields
        .iter()
        .map(|f| {
            json!({
                "path": f.path.to_string(),
                "value": f.value,
                "owners": f.owners.iter().map(|o| json!({
                    "manager": o.manager,
                    "operation": o.operation,
                    "subresource": o.subresource,
                    "time": o.time,
                })).collect::<Vec<_>>(),
                "git": f.git.map(GitState::name),
            })
        })
        .collect();
    json!({ "fields": fields })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn entry(manager: &str, op: &str, sub: Option<&str>, time: &str, fields: Value) -> Value {
        let mut e = json!({
            "manager": manager, "operation": op, "apiVersion": "apps/v1",
            "time": time, "fieldsType": "FieldsV1", "fieldsV1": fields,
        });
        if let Some(sub) = sub {
            e["subresource"] = json!(sub);
        }
        e
    }

    fn managers(text: &str, blame: &Blame) -> Vec<String> {
        let field = blame
            .fields
            .iter()
            .find(|f| f.path.to_string() == text)
            .unwrap_or_else(|| panic!("no field {text} in {:?}", blame.fields));
        field.owners.iter().map(owner_text).collect()
    }

    #[test]
    fn a_secret_key_git_writes_as_string_data_is_in_git() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("s.yaml"),
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: shop\n\
             stringData:\n  user: admin\n",
        )
        .unwrap();
        let index = crate::manifest::ManifestIndex::load(dir.path(), "default");
        let key = crate::manifest::ObjectKey::new("", "Secret", "shop", "s");
        let manifest = index.get(&key).unwrap();
        // "admin" and "extra" in base64: the server keeps stringData as data.
        let raw = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "shop"},
            "data": {"user": "YWRtaW4=", "extra": "ZXh0cmE="}});
        let schemas = crate::schema::Schemas::builtin();
        let live = crate::drift::LiveObject::from_value(raw.clone(), schemas).unwrap();
        let drift = crate::drift::check::compare_in(&index, manifest, &live);
        let desired = Desired {
            manifest: manifest.body.root(),
            drift: &drift,
        };
        let blame = blame(live.schema, &shown(raw), &[], Some(&desired));
        let git = |text: &str| {
            blame
                .fields
                .iter()
                .find(|f| f.path.to_string() == text)
                .and_then(|f| f.git)
        };
        assert_eq!(git(".data.user"), Some(GitState::InSync), "{blame:?}");
        assert_eq!(git(".data.extra"), Some(GitState::NotInGit), "{blame:?}");
    }

    #[test]
    fn fields_with_two_owners_and_keyed_items_are_blamed_on_each_owner() {
        let live = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "labels": {"team": "a"}},
            "spec": {"replicas": 5, "template": {"spec": {"containers": [
                {"name": "side", "image": "busybox:1"},
                {"name": "web", "image": "nginx:1.27",
                 "ports": [{"containerPort": 80, "protocol": "TCP"}],
                 "env": [{"name": "MODE", "value": "x"}]}
            ]}}}
        });
        let apply = json!({"f:metadata": {"f:labels": {"f:team": {}}},
            "f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
                "k:{\"name\":\"side\"}": {".": {}, "f:name": {}, "f:image": {}},
                "k:{\"name\":\"web\"}": {".": {}, "f:name": {}, "f:image": {},
                    "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}, "f:protocol": {}}}}}}}}});
        let scale = json!({"f:spec": {"f:replicas": {}}});
        let set_image = json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"web\"}": {"f:image": {}, "f:env": {"k:{\"name\":\"MODE\"}": {".": {}, "f:name": {}, "f:value": {}}}}}}}}});
        let entries = ManagedFieldsEntry::parse_list(&json!([
            entry(
                "argocd-controller",
                "Apply",
                None,
                "2026-11-26T20:00:00Z",
                apply
            ),
            entry(
                "kubectl",
                "Update",
                Some("scale"),
                "2026-11-26T20:10:00Z",
                scale
            ),
            entry(
                "kubectl-set",
                "Update",
                None,
                "2026-11-26T20:20:00Z",
                set_image
            ),
        ]))
        .unwrap();
        let schema = crate::schema::builtin_kind("Deployment");
        let blame = blame(schema, &shown(live), &entries, None);
        // Two owners of one field: both, newest write first.
        assert_eq!(
            managers(".spec.replicas", &blame),
            [
                "kubectl (scale) Update 2026-11-26T20:10:00Z",
                "argocd-controller Apply 2026-11-26T20:00:00Z"
            ]
        );
        // Keyed list items: the image of container web is not the one of container side.
        assert_eq!(
            managers(".spec.template.spec.containers[name=\"web\"].image", &blame),
            [
                "kubectl-set Update 2026-11-26T20:20:00Z",
                "argocd-controller Apply 2026-11-26T20:00:00Z"
            ]
        );
        assert_eq!(
            managers(
                ".spec.template.spec.containers[name=\"side\"].image",
                &blame
            ),
            ["argocd-controller Apply 2026-11-26T20:00:00Z"]
        );
        assert_eq!(
            managers(
                ".spec.template.spec.containers[name=\"web\"].env[name=\"MODE\"].value",
                &blame
            ),
            ["kubectl-set Update 2026-11-26T20:20:00Z"]
        );
        assert_eq!(
            managers(
                ".spec.template.spec.containers[name=\"web\"].ports[containerPort=80,protocol=\"TCP\"].containerPort",
                &blame
            ),
            ["argocd-controller Apply 2026-11-26T20:00:00Z"]
        );
        assert_eq!(managers(".metadata.name", &blame), Vec::<String>::new());
        let printed = text(&blame);
        assert!(
            printed.contains("      - name: web            # argocd-controller Apply"),
            "list items as kubectl prints them:\n{printed}"
        );
        assert!(printed.contains("replicas: 5"), "{printed}");
    }

    #[test]
    fn strings_yaml_1_1_reads_as_another_type_are_quoted_as_kubectl_quotes_them() {
        assert_eq!(scalar(&json!("yes")), "\"yes\"");
        assert_eq!(scalar(&json!("on")), "\"on\"");
        assert_eq!(scalar(&json!("1.10")), "\"1.10\"");
        assert_eq!(scalar(&json!("12:30")), "\"12:30\"");
        assert_eq!(scalar(&json!("nginx:1.27")), "nginx:1.27");
        assert_eq!(scalar(&json!(true)), "true");
        assert_eq!(scalar(&json!(5)), "5");
    }

    #[test]
    fn shown_leaves_out_status_and_server_metadata() {
        let live = json!({"metadata": {"name": "a", "uid": "u", "resourceVersion": "1",
            "managedFields": [], "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "status": {"x": 1}});
        assert_eq!(shown(live), json!({"metadata": {"name": "a"}}));
    }
}
