//! The comparison of one manifest with its live object: a walk of the manifest's fields
//! (changed, removed live), then a walk of what out-of-band managers own (added live).
use serde_json::Value;

use crate::manifest::tree::{Kind, NodeRef, Packed};
use crate::manifest::{Config, ManifestObject, ObjectKey};
use crate::schema::{ListType, Schema};

use super::list_keys::{ListIndex, Match, live_matches};
use super::live::{CLIENT_SIDE_APPLY, LiveObject, is_applied_set};
use super::normalize::{
    Place, is_restart_annotation, is_tracking_metadata, never_drift, never_drift_path, same_value,
};
use super::owners::{drift_path, lookup, owners};
use super::path::{DriftPath, PathStep};
use super::{
    AUTOSCALERS, Attribution, BUILTIN_APPLIERS, Class, DriftItem, ObjectDrift, ObjectStatus,
    SYSTEM_MANAGERS,
};
use crate::managed_fields::{FieldPath, ManagedFieldsEntry, Operation, PathElement};

/// The drift of an object in git and in the cluster.
pub fn compare(manifest: &ManifestObject, live: &LiveObject, config: &Config) -> ObjectDrift {
    compare_node(&manifest.key, manifest.body.root(), live, config)
}

/// [`compare`] on a bare manifest value (tests, benches, callers without a file).
pub fn compare_values(
    key: &ObjectKey,
    manifest: &Value,
    live: &LiveObject,
    config: &Config,
) -> ObjectDrift {
    compare_node(key, Packed::from(manifest).root(), live, config)
}

/// [`compare`] on a manifest body.
pub fn compare_node(
    key: &ObjectKey,
    manifest: NodeRef<'_>,
    live: &LiveObject,
    config: &Config,
) -> ObjectDrift {
    if super::secret::is_secret(key) {
        // `stringData` is compared as the `data` the server stores; no value is reported.
        let folded = Packed::from(super::secret::fold_string_data(&manifest.to_value()));
        let mut drift = compare_walk(key, folded.root(), live, config);
        super::secret::mask_items(&mut drift.items);
        return drift;
    }
    compare_walk(key, manifest, live, config)
}

fn compare_walk(
    key: &ObjectKey,
    manifest: NodeRef<'_>,
    live: &LiveObject,
    config: &Config,
) -> ObjectDrift {
    // The last client-side apply's set, unless it applied the manifest in git (then it holds
    // nothing beyond it) or a reduced extract carries it already.
    let applied_set = live
        .last_applied
        .as_ref()
        .filter(|_| !live.managers.iter().any(|e| e.manager == CLIENT_SIDE_APPLY))
        .filter(|applied| !super::live::applied_is_manifest(&applied.config, manifest))
        .and_then(|applied| applied.entry(live.schema));
    let managers: std::borrow::Cow<'_, [ManagedFieldsEntry]> = match applied_set {
        Some(entry) => {
            let mut all = live.managers.clone();
            all.push(entry);
            std::borrow::Cow::Owned(all)
        }
        None => std::borrow::Cow::Borrowed(&live.managers),
    };
    // Zeros a server drops (`hostNetwork: false`) read as fields the manifest leaves out; the
    // last apply's annotation was compared with the manifest as written, above.
    let decoded = super::normalize::without_dropped_zeros(manifest, live.schema).map(Packed::from);
    let written = decoded.as_ref().map(|_| manifest);
    let manifest = decoded.as_ref().map_or(manifest, Packed::root);
    let mut walk = Walk {
        live,
        manifest,
        written,
        rekeyed_live: Vec::new(),
        managers: &managers,
        config,
        items: Vec::new(),
        stack: Vec::new(),
        place: Place::default(),
        defaulted: std::cell::OnceCell::new(),
    };
    let root = live.schema;
    walk.manifest_fields(manifest, Some(&live.body), root);
    for entry in managers.iter() {
        if walk.is_out_of_band(entry) || walk.is_untrusted_apply(entry) {
            walk.added_fields(root, entry, manifest);
        }
    }
    let mut items = walk.items;
    dedupe_added(&mut items);
    if items.len() > 1 {
        // Listed as the live object has them (what an operator reads top to bottom).
        let mut lists = Positions::default();
        items.sort_by_cached_key(|item| live_position(&live.body, &item.path, &mut lists));
    }
    items.retain(|item| {
        !config
            .ignore
            .iter()
            .any(|rule| rule.selects(key) && rule.paths.iter().any(|p| item.path.is_under(p)))
    });
    let status = if items.iter().any(|item| item.class.is_drift()) {
        ObjectStatus::Drifted
    } else {
        ObjectStatus::InSync
    };
    ObjectDrift {
        key: key.clone(),
        schema: live.schema,
        status,
        items,
    }
}

/// An object in git that the cluster does not have.
pub fn missing(key: &ObjectKey) -> ObjectDrift {
    ObjectDrift {
        key: key.clone(),
        schema: Schema::UNKNOWN,
        status: ObjectStatus::Missing,
        items: Vec::new(),
    }
}

/// An object in the cluster that no manifest describes.
pub fn unmanaged(key: &ObjectKey) -> ObjectDrift {
    ObjectDrift {
        key: key.clone(),
        schema: Schema::UNKNOWN,
        status: ObjectStatus::Unmanaged,
        items: Vec::new(),
    }
}

/// Two managers may share an added field; keep the most recent writer only (in one pass: a list
/// that gained thousands of items live has thousands of added fields).
fn dedupe_added(items: &mut Vec<DriftItem>) {
    let mut first_of: std::collections::HashMap<String, usize> = Default::default();
    let mut kept: Vec<DriftItem> = Vec::with_capacity(items.len());
    for item in items.drain(..) {
        let text = item.path.to_string();
        match first_of
            .get(&text)
            .copied()
            .filter(|&at| kept[at].path == item.path)
        {
            Some(at) => {
                if item.attribution.time > kept[at].attribution.time {
                    kept[at] = item;
                }
            }
            None => {
                first_of.insert(text, kept.len());
                kept.push(item);
            }
        }
    }
    *items = kept;
}

/// A step of the path being walked, borrowed from the manifest; made into a [`PathStep`] only
/// when an item is reported.
enum Step<'a> {
    Field(&'a str),
    /// An item of a keyed list, its key read from `item` when needed.
    Item {
        item: NodeRef<'a>,
        schema: Schema,
        index: Option<usize>,
    },
    Value(NodeRef<'a>),
}

struct Walk<'a> {
    live: &'a LiveObject,
    /// The whole manifest, as a server decodes it (zeros it drops left out).
    manifest: NodeRef<'a>,
    /// The manifest as written, when it sets zeros the server drops: an apply of it owns the
    /// zeros it sent, whatever the server made of them (an allocated `clusterIP` for `""`).
    written: Option<NodeRef<'a>>,
    /// Live list items taken as a manifest's item with a key changed live: not added live.
    rekeyed_live: Vec<FieldPath>,
    /// The live object's entries, with the last client-side apply's set when it matters.
    managers: &'a [ManagedFieldsEntry],
    config: &'a Config,
    items: Vec<DriftItem>,
    stack: Vec<Step<'a>>,
    place: Place<'a>,
    /// The manifest with the server's defaults filled in, made when first needed.
    defaulted: std::cell::OnceCell<Value>,
}

impl<'a> Walk<'a> {
    fn is_applier(&self, manager: &str) -> bool {
        BUILTIN_APPLIERS.contains(&manager) || self.config.appliers.iter().any(|a| a == manager)
    }

    /// An `Update` by a manager that neither applies manifests nor runs the control plane.
    fn is_out_of_band(&self, entry: &ManagedFieldsEntry) -> bool {
        entry.operation == Operation::Update
            && !self.is_applier(&entry.manager)
            && !SYSTEM_MANAGERS.contains(&entry.manager.as_str())
    }

    /// An applier's set, which is trusted only for what the manifest says: every server-side
    /// apply (a config that is not the manifest may have been applied) and the last client-side
    /// apply's configuration. The control plane's applies are left alone.
    fn is_untrusted_apply(&self, entry: &ManagedFieldsEntry) -> bool {
        is_applied_set(entry) && !SYSTEM_MANAGERS.contains(&entry.manager.as_str())
    }

    /// True when `live` at `path` is what the server fills in when the manifest leaves it out:
    /// the object then behaves as the manifest says, whoever wrote the field.
    fn is_default(
        &self,
        root: Schema,
        path: &FieldPath,
        manifest: NodeRef<'_>,
        live: &Value,
    ) -> bool {
        let defaulted = self.defaulted.get_or_init(|| {
            let mut value = manifest.to_value();
            let key = &self.live.key;
            crate::schema::defaults::apply_defaults(&key.group, &key.kind, root, &mut value);
            value
        });
        let at = drift_path(root, path, manifest);
        let same = |default: &Value| same_value(Place::of(&at), path.schema(root), default, live);
        if path.lookup(root, defaulted).is_some_and(same) {
            return true;
        }
        // A default that depends on another field (`externalTrafficPolicy: Cluster` of a
        // `type: NodePort`, the timeout of `sessionAffinity: ClientIP`) when that field was
        // changed live: the server filled it in for the live value, so it is judged by it.
        let (group, kind) = (&self.live.key.group, &self.live.key.kind);
        crate::schema::defaults::has_code_defaults(group, kind)
            && crate::managed_fields::default_without(group, kind, root, &self.live.body, path)
                .is_some_and(|default| same(&default))
    }

    fn path(&self) -> DriftPath {
        DriftPath(
            self.stack
                .iter()
                .map(|step| match step {
                    Step::Field(name) => PathStep::Field((*name).to_owned()),
                    Step::Item {
                        item,
                        schema,
                        index,
                    } => PathStep::Item {
                        key: schema.item_key(&item.to_value()).unwrap_or_default(),
                        index: *index,
                    },
                    Step::Value(value) => PathStep::Value(value.to_value()),
                })
                .collect(),
        )
    }

    fn enter_field(&mut self, name: &'a str) -> Place<'a> {
        self.stack.push(Step::Field(name));
        let inner = self.place.child(name);
        std::mem::replace(&mut self.place, inner)
    }

    fn enter(&mut self, step: Step<'a>) -> Place<'a> {
        self.stack.push(step);
        let inner = self.place.item();
        std::mem::replace(&mut self.place, inner)
    }

    fn leave(&mut self, place: Place<'a>) {
        self.stack.pop();
        self.place = place;
    }

    fn push(
        &mut self,
        class: Class,
        path: DriftPath,
        manifest: Option<NodeRef<'_>>,
        live: Option<&Value>,
        attribution: Attribution,
    ) {
        self.items.push(DriftItem {
            class,
            path,
            manifest: manifest.map(NodeRef::to_value),
            live: live.cloned(),
            attribution,
            preceding: Default::default(),
        });
    }

    /// A field the manifest sets differs live: who wrote it? An out-of-band manager if one owns
    /// it; the autoscaler for `spec.replicas`; else unknown (the applier still owns it: old
    /// servers do not record scale writes) — shown, never hidden.
    fn changed(&mut self, manifest: NodeRef<'_>, live: &Value) {
        let path = self.path();
        self.changed_owned(manifest, live, path.clone(), &path);
    }

    /// [`Walk::changed`] of the field at `path`, whose live value is at `owned` (the live item of
    /// a key changed live).
    fn changed_owned(
        &mut self,
        manifest: NodeRef<'_>,
        live: &Value,
        path: DriftPath,
        owned: &DriftPath,
    ) {
        let owners = owners(self.live.schema, self.managers, owned);
        // An out-of-band update; else a server-side apply of a config that is not the manifest;
        // else the last client-side apply, when the value it applied is the live one.
        let out_of_band = owners.iter().find(|o| self.is_out_of_band(o)).or_else(|| {
            owners.iter().find(|o| {
                if o.manager == CLIENT_SIDE_APPLY {
                    self.applied_value(owned, live)
                } else {
                    o.operation == Operation::Apply && self.is_untrusted_apply(o)
                }
            })
        });
        let autoscaler = owners.iter().find(|o| {
            AUTOSCALERS.contains(&o.manager.as_str()) && o.operation == Operation::Update
        });
        let (class, attribution) = match (out_of_band, autoscaler) {
            (Some(entry), _) => (Class::Changed, Attribution::of(entry)),
            (None, Some(entry)) if path.is_fields(&["spec", "replicas"]) => {
                (Class::Autoscaled, Attribution::of(entry))
            }
            // Else who wrote it all the same: a control-plane manager, or an applier's own
            // write (helm 3 upgrades and rolls back as `helm`, operation Update), as blame says.
            (None, _) => match owners
                .iter()
                .find(|o| SYSTEM_MANAGERS.contains(&o.manager.as_str()))
                .or_else(|| owners.iter().find(|o| self.is_applier(&o.manager)))
            {
                Some(entry) => (Class::Changed, Attribution::of(entry)),
                None => (Class::Changed, Attribution::default()),
            },
        };
        self.push(class, path, Some(manifest), Some(live), attribution);
    }

    /// A manifest's list item whose key was changed live (`port` 8080 → 8081): one changed
    /// item, whose live value is written as the manifest writes it (a field it leaves out is left
    /// out where live holds the server's default), attributed to who owns the live item. The
    /// live item is then no field added live.
    fn rekeyed(&mut self, manifest: NodeRef<'a>, live: &'a Value, list: Schema) {
        let path = self.path();
        let Some(key) = list.item_key(live) else {
            return self.manifest_fields(manifest, Some(live), list.item());
        };
        let mut owned = path.clone();
        owned.0.pop();
        owned.0.push(PathStep::Item { key, index: None });
        let live_path = super::owners::field_path(&owned);
        let mut shown = live.clone();
        if let Value::Object(fields) = &mut shown {
            fields.retain(|name, value| {
                let key_default = list
                    .list_keys()
                    .iter()
                    .any(|k| k.name == name && k.default.is_some_and(|d| value == d));
                manifest.get(name).is_some()
                    || !(key_default
                        || self.is_default(
                            self.live.schema,
                            &live_path.child(PathElement::field(name)),
                            self.manifest,
                            value,
                        ))
            });
        }
        self.rekeyed_live.push(live_path);
        self.changed_owned(manifest, &shown, path, &owned);
    }

    /// True when the last client-side apply set `path` to `live` (not the manifest's value).
    fn applied_value(&self, path: &DriftPath, live: &Value) -> bool {
        let Some(applied) = &self.live.last_applied else {
            return false;
        };
        let path = super::owners::field_path(path);
        path.lookup(self.live.schema, &applied.config)
            .is_some_and(|applied| {
                same_value(self.place, path.schema(self.live.schema), applied, live)
            })
    }

    /// Changed and removed-live fields: every field the manifest sets, compared by meaning.
    fn manifest_fields(&mut self, manifest: NodeRef<'a>, live: Option<&'a Value>, schema: Schema) {
        match (manifest.kind(), live) {
            (Kind::Null, _) => {}
            (_, None | Some(Value::Null)) => {
                if !manifest.is_empty() {
                    let path = self.path();
                    self.push(
                        Class::RemovedLive,
                        path,
                        Some(manifest),
                        None,
                        Attribution::default(),
                    );
                }
            }
            (Kind::Map(fields), Some(Value::Object(live_fields))) if !schema.is_atomic() => {
                for (name, value) in fields {
                    if never_drift(self.place, name) {
                        continue;
                    }
                    let outer = self.enter_field(name);
                    self.manifest_fields(value, live_fields.get(name), schema.field(name));
                    self.leave(outer);
                }
            }
            (Kind::List(items), Some(Value::Array(live_items)))
                if schema.list_type() == ListType::Map =>
            {
                let item_schema = schema.item();
                let items: Vec<NodeRef<'a>> = items.collect();
                let matches = live_matches(schema, &items, live_items);
                for ((index, item), found) in items.iter().copied().enumerate().zip(matches) {
                    let outer = self.enter(Step::Item {
                        item,
                        schema,
                        index: Some(index),
                    });
                    match found {
                        Match::Rekeyed(at) => self.rekeyed(item, &live_items[at], schema),
                        Match::Same(at) => {
                            self.manifest_fields(item, live_items.get(at), item_schema);
                        }
                        Match::None => self.manifest_fields(item, None, item_schema),
                    }
                    self.leave(outer);
                }
                if self.place.field == Some("env") {
                    self.env_order(&items, live_items);
                }
            }
            (Kind::List(values), Some(Value::Array(live_values)))
                if schema.list_type() == ListType::Set =>
            {
                for value in values.filter(|v| !live_values.iter().any(|l| v.eq_value(l))) {
                    let outer = self.enter(Step::Value(value));
                    let path = self.path();
                    self.push(
                        Class::RemovedLive,
                        path,
                        Some(value),
                        None,
                        Attribution::default(),
                    );
                    self.leave(outer);
                }
            }
            (_, Some(live)) => {
                // Equal as written is the common case, and needs no `Value` of the manifest's.
                if !manifest.eq_value(live)
                    && !same_value(self.place, schema, &manifest.to_value(), live)
                {
                    self.changed(manifest, live);
                }
            }
        }
    }

    /// A reordered `env`: the variables both sides have, in another relative order.
    fn env_order(&mut self, manifest: &[NodeRef<'_>], live: &[Value]) {
        // The common case without allocating: the manifest's variables found live in order.
        let position = |item: &NodeRef<'_>| {
            let name = item.get("name").and_then(NodeRef::as_str)?;
            live.iter()
                .position(|l| l.get("name").and_then(Value::as_str) == Some(name))
        };
        let mut last = None;
        let in_order = manifest.iter().filter_map(position).all(|at| {
            let ordered = last.is_none_or(|before| at > before);
            last = Some(at);
            ordered
        });
        if in_order {
            return;
        }
        let name_of = |item: &Value| item.get("name").and_then(Value::as_str).map(str::to_owned);
        let live_names: Vec<String> = live.iter().filter_map(name_of).collect();
        let common: Vec<String> = manifest
            .iter()
            .filter_map(|item| {
                item.get("name")
                    .and_then(NodeRef::as_str)
                    .map(str::to_owned)
            })
            .filter(|name| live_names.contains(name))
            .collect();
        let live_order: Vec<String> = live_names
            .into_iter()
            .filter(|name| common.contains(name))
            .collect();
        if common == live_order {
            return;
        }
        let path = self.path();
        let owners = owners(self.live.schema, self.managers, &path);
        let attribution = owners
            .iter()
            .find(|o| self.is_out_of_band(o))
            .map(|entry| Attribution::of(entry))
            .unwrap_or_default();
        let names = |list: Vec<String>| Value::Array(list.into_iter().map(Value::String).collect());
        self.items.push(DriftItem {
            class: Class::Reordered,
            path,
            manifest: Some(names(common)),
            live: Some(names(live_order)),
            attribution,
            preceding: Default::default(),
        });
    }

    /// Added-live fields: what `entry` (an out-of-band manager) owns that the manifest does
    /// not set. Reported where the manager set it: into granular maps and lists it owns entries
    /// of (`resources.limits.memory`, each env entry), as `kubectl set` was typed; a list item
    /// or an atomic value whole.
    fn added_fields(&mut self, root: Schema, entry: &ManagedFieldsEntry, manifest: NodeRef<'_>) {
        // `paths()` is depth first: what lies under a reported path comes right after it.
        let mut reported: Option<FieldPath> = None;
        let mut lists = ListIndex::default();
        let body = &self.live.body;
        for path in entry.fields.paths() {
            if reported.as_ref().is_some_and(|done| path.starts_with(done))
                || never_drift_path(&path)
                || self.rekeyed_live.iter().any(|item| path.starts_with(item))
            {
                continue;
            }
            if lookup(root, &path, manifest).is_some_and(|v| !v.is_null()) {
                continue;
            }
            // A zero the manifest sets and an apply of it sent: the apply owns the field, the
            // server holds what it makes of the zero (nothing, a default, an allocation).
            if is_applied_set(entry)
                && self
                    .written
                    .is_some_and(|written| lookup(root, &path, written).is_some())
            {
                continue;
            }
            let Some(live) = lists.lookup(root, &path, body).filter(|v| !v.is_null()) else {
                continue;
            };
            // An apply's set holds the zero values the server always serializes (`resources:
            // {}`), and the tracking metadata GitOps controllers add.
            if is_applied_set(entry)
                && (live.as_object().is_some_and(serde_json::Map::is_empty)
                    || is_tracking_metadata(&path))
            {
                continue;
            }
            // Defaults fill fields, never list items: only a field can be one.
            let is_field = matches!(path.0.last(), Some(PathElement::Field(_)));
            if is_field && self.is_default(root, &path, manifest, live) {
                continue;
            }
            if is_field
                && !path.schema(root).is_atomic_for(live)
                && !entry.fields.child(&path).is_empty()
            {
                continue;
            }
            let drift_path = drift_path(root, &path, manifest);
            let class = if is_restart_annotation(Place::of(&drift_path)) {
                Class::Restarted
            } else {
                Class::AddedLive
            };
            let preceding = lists.preceding(root, &path, body);
            let live = live.clone();
            self.push(class, drift_path, None, Some(&live), Attribution::of(entry));
            if let Some(item) = self.items.last_mut() {
                item.preceding = preceding;
            }
            reported = Some(path);
        }
    }
}

/// The places of a live list's items by their key fields' values (as JSON), by list (its
/// address while the live object is borrowed) and key fields: built once per list.
type Positions =
    std::collections::HashMap<(usize, String), std::collections::HashMap<String, usize>>;

/// The position of `path` in `live`, step by step (the index of a map key or list item), for
/// listing fields in live order; a step that is not live sorts last among its siblings.
fn live_position(live: &Value, path: &DriftPath, lists: &mut Positions) -> Vec<usize> {
    let mut out = Vec::with_capacity(path.0.len());
    let mut node = Some(live);
    for step in &path.0 {
        let found = match (step, node) {
            (PathStep::Field(name), Some(Value::Object(map))) => map
                .keys()
                .position(|k| k == name)
                .and_then(|at| map.get(name).map(|child| (at, child))),
            (PathStep::Item { key, .. }, Some(Value::Array(items))) => {
                let fields: Vec<&str> = key.keys().map(String::as_str).collect();
                let places = lists
                    .entry((items.as_ptr() as usize, fields.join("\u{0}")))
                    .or_insert_with(|| {
                        // The first item of each key, as a search from the start finds it.
                        items
                            .iter()
                            .enumerate()
                            .rev()
                            .filter_map(|(i, item)| {
                                let values: Vec<Option<&Value>> =
                                    fields.iter().map(|f| item.get(*f)).collect();
                                Some((serde_json::to_string(&values).ok()?, i))
                            })
                            .collect()
                    });
                let want: Vec<Option<&Value>> = key.values().map(Some).collect();
                serde_json::to_string(&want)
                    .ok()
                    .and_then(|want| places.get(&want))
                    .and_then(|&i| items.get(i).map(|item| (i, item)))
            }
            (PathStep::Value(want), Some(Value::Array(items))) => {
                items.iter().enumerate().find(|(_, item)| *item == want)
            }
            _ => None,
        };
        match found {
            Some((at, child)) => {
                out.push(at);
                node = Some(child);
            }
            None => {
                out.push(usize::MAX);
                node = None;
            }
        }
    }
    out
}
