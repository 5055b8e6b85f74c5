//! The headless drift report of `kdrift check`: text (one line per field), JSON with stable
//! field names, and the exit code (0 in sync, 1 drift, 2 error).
//!
//! # JSON (`kdrift check -o json`)
//!
//! ```json
//! {
//!   "schemaVersion": 2,                      // raised when a field changes meaning or goes
//!                                            // (2: notes left `problems` for `notes`)
//!   "objects": [{
//!     "key": "deployment/shop/web",          // kind/namespace/name, as in the text report
//!     "group": "apps", "kind": "Deployment", "namespace": "shop", "name": "web",
//!     "status": "drifted",                   // in-sync | drifted | missing | unmanaged | error
//!     "file": "apps/web.yaml", "line": 1,     // the manifest document (null when unmanaged)
//!     "rendered_by": null,                   // kustomize root (its kustomization file) whose
//!                                            // output this object is; file/line: its source
//!     "restarted": false,                    // `kubectl rollout restart` seen (not drift)
//!     "error": null,                         // why the object could not be compared
//!     "items": [{
//!       "class": "changed",                  // changed | removed-live | added-live | reordered | autoscaled | restarted
//!       "path": "spec.replicas",             // display path, list items by key: containers[name=web]
//!       "pointer": "/spec/replicas",         // JSON pointer, list items by key value
//!       "line": 7,                           // line of the field in "file" (or nearest ancestor)
//!       "source": {"file": "apps/web.yaml", "line": 7, "what": null},
//!                                            // where the value is written; for a kustomize
//!                                            // root's object what sets it: "replicas", "images",
//!                                            // "patch", "JSON patch", "generator literal", …,
//!                                            // "resource" (the document); null when unmanaged
//!       "manifest": 3,                       // null when absent from the manifest
//!       "live": 5,                           // null when absent live
//!       "manager": "kubectl",                // null when unknown
//!       "operation": "Update", "subresource": "scale",
//!       "time": "2026-11-22T02:59:15Z"
//!     }]
//!   }],
//!   "problems": [{"file": "bad.yaml", "line": 3, "message": "..."}],
//!                                            // each may hide an object: exit code 2
//!   "notes": [{"file": "chart/templates/a.yaml", "line": null, "message": "..."}],
//!                                            // worth knowing, hide no object (a template,
//!                                            // the kustomize roots rendered): no exit code
//!   "errors": ["..."],
//!   "kustomize": {"renderer": "kubectl kustomize (kustomize v5.5.0)", "roots": ["overlays/prod"]},
//!                                            // null when the manifests hold no kustomization
//!   "summary": {"objects": 1, "in_sync": 0, "drifted": 1, "missing": 0, "unmanaged": 0, "errors": 0, "fields": 1, "problems": 0, "notes": 0},
//!   "exit_code": 1
//! }
//! ```
//! Objects with status `in-sync` are listed too, with no items. The shape is pinned by the JSON
//! Schema `docs/check-report.schema.json`, which the tests validate real reports against.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::manifest::{ManifestObject, Problem};

use super::{Class, DriftItem, ObjectDrift, ObjectStatus};

/// One object of the report with where its manifest is.
#[derive(Debug, Clone)]
pub struct ReportedObject {
    pub drift: ObjectDrift,
    pub file: Option<PathBuf>,
    pub line: Option<usize>,
    /// Where each item's manifest value is written (same order as `drift.items`).
    pub item_places: Vec<Option<crate::manifest::Place>>,
    /// The kustomization file of the kustomize root that renders the object.
    pub rendered_by: Option<PathBuf>,
    /// The GitOps controllers its live object says own it (see [`crate::gitops`]).
    pub owners: Vec<crate::gitops::Owner>,
    /// What they will do about its drift, once read (drifted and missing objects only).
    pub reconcilers: Vec<crate::gitops::Reconciler>,
    /// The Helm release whose manifest is the object's desired state (`file` is then the
    /// release's source, not a file).
    pub helm: Option<std::sync::Arc<crate::helm::Release>>,
}

/// The kustomize side of a check: the renderer and the roots rendered.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KustomizeInfo {
    pub renderer: Option<String>,
    pub roots: Vec<String>,
}

/// Everything `kdrift check` found: drift per object, manifest problems, errors.
#[derive(Debug, Clone, Default)]
pub struct DriftReport {
    pub objects: Vec<ReportedObject>,
    /// The manifests' problems and notes ([`Problem::is_note`]), printed apart.
    pub problems: Vec<Problem>,
    /// Errors that stopped part of the check (a namespace forbidden, the cluster unreachable).
    pub errors: Vec<String>,
    /// Set when the manifests hold kustomizations.
    pub kustomize: Option<KustomizeInfo>,
    /// Whether in-sync objects are listed in the text report.
    pub show_in_sync: bool,
    /// Objects whose chart in git renders otherwise than their Helm release in the cluster: a
    /// `helm upgrade` would change them. Not drift of the live object.
    pub pending: Vec<crate::manifest::charts::PendingUpgrade>,
}

fn status_name(status: &ObjectStatus) -> &'static str {
    match status {
        ObjectStatus::InSync => "in-sync",
        ObjectStatus::Drifted => "drifted",
        ObjectStatus::Missing => "missing",
        ObjectStatus::Unmanaged => "unmanaged",
        ObjectStatus::Error(_) => "error",
    }
}

/// A value as one short line: strings bare (quoted and escaped when they hold a line break or
/// another control character: [`crate::text::one_line`]), anything else as compact JSON.
pub fn short_value(value: Option<&Value>) -> String {
    match value {
        None => "(absent)".to_owned(),
        Some(Value::String(text)) => crate::text::one_line(text).into_owned(),
        Some(other) => crate::text::printable(&other.to_string()).into_owned(),
    }
}

/// `12m ago`, `3h ago`, from an RFC 3339 time; `None` when the time is missing or unreadable.
pub fn age(time: Option<&str>, now: jiff::Timestamp) -> Option<String> {
    let then: jiff::Timestamp = time?.parse().ok()?;
    let seconds = now.as_second().saturating_sub(then.as_second()).max(0);
    Some(match seconds {
        s if s < 60 => format!("{s}s ago"),
        s if s < 3600 => format!("{}m ago", s / 60),
        s if s < 86_400 => format!("{}h ago", s / 3600),
        s => format!("{}d ago", s / 86_400),
    })
}

/// `kubectl-set (Update) 12m ago`, `kubectl (Update via /scale) 1m ago`, `manager unknown`, `autoscaled by kube-controller-manager 2m ago`.
pub fn attribution_text(item: &DriftItem, now: jiff::Timestamp) -> String {
    let who = match (&item.attribution.manager, &item.attribution.operation) {
        // A write through a subresource says so (`kubectl (Update via /scale)`): kubectl 1.32's
        // `scale` sends no field manager, so the bare name alone would not say what was run.
        (Some(manager), operation)
            if item.class.is_drift()
                && item
                    .attribution
                    .subresource
                    .as_deref()
                    .is_some_and(|s| !s.is_empty()) =>
        {
            let sub = item.attribution.subresource.as_deref().unwrap_or_default();
            match operation {
                Some(operation) => format!("{manager} ({operation} via /{sub})"),
                None => format!("{manager} (via /{sub})"),
            }
        }
        (Some(manager), Some(operation)) => format!("{manager} ({operation})"),
        (Some(manager), None) => manager.clone(),
        (None, _) => "manager unknown".to_owned(),
    };
    let when = age(item.attribution.time.as_deref(), now)
        .map(|a| format!(" {a}"))
        .unwrap_or_default();
    match item.class {
        Class::Autoscaled => format!("autoscaled by {who}{when}"),
        Class::Restarted => format!("restarted by {who}{when}"),
        Class::InGit => format!("in git, pending helm upgrade · {who}{when}"),
        Class::HelmUpgrading => {
            format!("helm mid-upgrade, its pending revision sets this · {who}{when}")
        }
        _ => format!("{who}{when}"),
    }
}

#[derive(Serialize)]
struct JsonSource {
    file: String,
    line: usize,
    what: Option<&'static str>,
}

#[derive(Serialize)]
struct JsonItem<'a> {
    class: &'static str,
    path: String,
    pointer: String,
    line: Option<usize>,
    source: Option<JsonSource>,
    manifest: Option<&'a Value>,
    live: Option<&'a Value>,
    manager: Option<&'a str>,
    operation: Option<&'a str>,
    subresource: Option<&'a str>,
    time: Option<&'a str>,
}

#[derive(Serialize)]
struct JsonObject<'a> {
    key: String,
    group: &'a str,
    kind: &'a str,
    namespace: &'a str,
    name: &'a str,
    status: &'static str,
    file: Option<String>,
    line: Option<usize>,
    rendered_by: Option<String>,
    restarted: bool,
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reconciler: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reconcilers: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    helm: Option<Value>,
    items: Vec<JsonItem<'a>>,
}

#[derive(Serialize)]
struct JsonProblem {
    file: String,
    line: Option<usize>,
    message: String,
}

#[derive(Serialize, Default)]
struct Summary {
    objects: usize,
    in_sync: usize,
    drifted: usize,
    missing: usize,
    unmanaged: usize,
    errors: usize,
    fields: usize,
    problems: usize,
    notes: usize,
}

/// The `helm` member of an object of a release: the release and the revision compared.
fn helm_json(release: &crate::helm::Release) -> Value {
    serde_json::json!({
        "release": release.name,
        "namespace": release.namespace,
        "revision": release.revision,
        "status": release.status.as_str(),
        "chart": release.chart.name,
        "chart_version": release.chart.version,
        "source": release.source(),
        "newer": release.newer.as_ref().map(|(revision, status)| serde_json::json!({
            "revision": revision, "status": status.as_str()
        })),
    })
}

/// The lines of one pending upgrade: the object, then each field, release's value → git's.
fn pending_text(pending: &crate::manifest::charts::PendingUpgrade) -> String {
    let key = &pending.key;
    let mut out = String::new();
    let whose = format!("git's {} vs {}", pending.chart, pending.release);
    if pending.fields.is_empty() {
        let _ = writeln!(out, "{key}  pending upgrade: {}  ({whose})", pending.change);
        return out;
    }
    for (path, release, git) in &pending.fields {
        let _ = writeln!(
            out,
            "{key}  pending upgrade  {path}  {} → {}  ({whose})",
            short_value(release.as_ref()),
            short_value(git.as_ref())
        );
    }
    out
}

/// The report's `helm` member: the pending upgrades.
fn pending_json(pending: &[crate::manifest::charts::PendingUpgrade]) -> Value {
    let upgrades: Vec<Value> = pending
        .iter()
        .map(|p| {
            serde_json::json!({
                "key": p.key.to_string(),
                "chart": p.chart,
                "release": p.release,
                "change": if p.change.is_empty() { "changed" } else { p.change },
                "fields": p.fields.iter().map(|(path, release, git)| serde_json::json!({
                    "path": path, "release": release, "git": git,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({ "pending_upgrades": upgrades })
}

/// A workflow command's message, escaped as GitHub's toolkit escapes it.
fn github_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value (`file=`, `title=`), escaped as GitHub's toolkit does.
fn github_property(text: &str) -> String {
    github_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// The version of the JSON (and YAML) report's shape: raised when a field changes meaning or
/// goes; new fields may appear without it.
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Serialize)]
struct JsonReport<'a> {
    #[serde(rename = "schemaVersion")]
    schema_version: u32,
    objects: Vec<JsonObject<'a>>,
    problems: Vec<JsonProblem>,
    notes: Vec<JsonProblem>,
    errors: &'a [String],
    kustomize: Option<&'a KustomizeInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    helm: Option<Value>,
    summary: Summary,
    exit_code: u8,
}

impl DriftReport {
    /// Adds an object's drift with the place of its manifest (if it has one, in `index`: a
    /// kustomize root's fields are traced to the overlay entry or patch that sets them).
    pub fn add(
        &mut self,
        drift: ObjectDrift,
        manifest: Option<&ManifestObject>,
        index: Option<&crate::manifest::ManifestIndex>,
    ) {
        // A release's object whose chart is in the checkout: its fields are placed on the
        // template line that writes them (a file GitHub can annotate), not on the release.
        // A values file of the environment that sets the value the template reads is the place
        // rather than the template.
        let template = manifest
            .filter(|m| m.helm.is_some())
            .and_then(|m| index?.chart_object(&m.key))
            .and_then(|chart| {
                let text = std::fs::read_to_string(&chart.file).unwrap_or_default();
                Some((chart.chart.clone()?, chart.file.to_path_buf(), text))
            });
        let item_places = drift
            .items
            .iter()
            .map(|item| {
                if let Some((spec, template, text)) = &template {
                    let path = item.path.edit_path();
                    return Some(crate::manifest::charts::field_place(
                        spec,
                        template,
                        text,
                        path.steps(),
                    ));
                }
                let steps = item.path.line_steps();
                manifest.map(|m| match index {
                    Some(index) => index.place_of(m, &item.path.edit_path(), &steps),
                    None => m.place(&steps),
                })
            })
            .collect();
        self.objects.push(ReportedObject {
            file: manifest.map(|m| m.file.to_path_buf()),
            line: manifest.map(|m| m.line),
            item_places,
            rendered_by: manifest.and_then(|m| m.rendered.as_deref().map(Path::to_path_buf)),
            drift,
            owners: Vec::new(),
            reconcilers: Vec::new(),
            helm: manifest.and_then(|m| m.helm.clone()),
        });
    }

    fn summary(&self) -> Summary {
        let notes = self.problems.iter().filter(|p| p.is_note()).count();
        let mut summary = Summary {
            objects: self.objects.len(),
            problems: self.problems.len() - notes,
            notes,
            ..Summary::default()
        };
        for object in &self.objects {
            summary.fields += object.drift.drift_count();
            match object.drift.status {
                ObjectStatus::InSync => summary.in_sync += 1,
                ObjectStatus::Drifted => summary.drifted += 1,
                ObjectStatus::Missing => summary.missing += 1,
                ObjectStatus::Unmanaged => summary.unmanaged += 1,
                ObjectStatus::Error(_) => summary.errors += 1,
            }
        }
        // Errors that stopped part of the check count as well as objects that failed.
        summary.errors += self.errors.len();
        summary
    }

    /// True when the check is incomplete: an error stopped part of it, or a manifest problem
    /// (malformed, skipped, duplicated, a bad `.kdrift.yaml` rule) means some manifest could
    /// not be compared as written. One rule for every problem: each may hide an object. A
    /// template is a note: it is no manifest until rendered.
    fn has_errors(&self) -> bool {
        !self.errors.is_empty()
            || self.problems.iter().any(|p| !p.is_note())
            || self
                .objects
                .iter()
                .any(|o| matches!(o.drift.status, ObjectStatus::Error(_)))
    }

    /// 0 in sync, 1 drift (drifted or missing objects, and unmanaged ones when they were asked
    /// for: only then are they in the report), 2 error — as `kubectl diff`.
    pub fn exit_code(&self) -> u8 {
        if self.has_errors() {
            2
        } else if self.objects.iter().any(|o| {
            matches!(
                o.drift.status,
                ObjectStatus::Drifted | ObjectStatus::Missing | ObjectStatus::Unmanaged
            )
        }) {
            1
        } else {
            0
        }
    }

    /// GitHub Actions workflow commands: a `::warning` on the manifest line of each drifted
    /// field (on its source for a kustomize root's object) and of each object missing from the
    /// cluster, `::error` for errors and problems, `::notice` for notes, then the summary line.
    /// Files are named relative to the current directory (the workspace, in a job).
    pub fn to_github(&self, now: jiff::Timestamp) -> String {
        let mut out = String::new();
        let mut annotate = |level: &str, place: Option<(&Path, usize)>, title: &str, text: &str| {
            let mut properties = Vec::new();
            if let Some((file, line)) = place {
                properties.push(format!(
                    "file={}",
                    github_property(&crate::manifest::shown_path(file))
                ));
                properties.push(format!("line={line}"));
            }
            properties.push(format!("title={}", github_property(title)));
            let _ = writeln!(
                out,
                "::{level} {}::{}",
                properties.join(","),
                github_data(text)
            );
        };
        for object in &self.objects {
            let key = object.drift.key.to_string();
            let object_place = match (&object.file, object.line) {
                (Some(file), Some(line)) => Some((file.as_path(), line)),
                _ => None,
            };
            match &object.drift.status {
                ObjectStatus::Missing => annotate(
                    "warning",
                    object_place,
                    "kdrift: missing",
                    &format!("{key} is in git but not in the cluster"),
                ),
                ObjectStatus::Error(message) => annotate(
                    "error",
                    object_place,
                    "kdrift: error",
                    &format!("{key}: {message}"),
                ),
                _ => {}
            }
            for (at, item) in object.drift.items.iter().enumerate() {
                if !item.class.is_drift() {
                    continue;
                }
                let place = match object.item_places.get(at) {
                    Some(Some(place)) => Some((place.file.as_path(), place.line)),
                    _ => object_place,
                };
                annotate(
                    "warning",
                    place,
                    &format!("kdrift: drift of {key}"),
                    &format!(
                        "{}: {} in git, {} live · {}",
                        item.path,
                        short_value(item.manifest.as_ref()),
                        short_value(item.live.as_ref()),
                        attribution_text(item, now)
                    ),
                );
            }
        }
        for problem in &self.problems {
            let (file, line) = problem.place();
            let level = if problem.is_note() { "notice" } else { "error" };
            annotate(
                level,
                Some((file, line.unwrap_or(1))),
                "kdrift",
                &problem.to_string(),
            );
        }
        for error in &self.errors {
            annotate("error", None, "kdrift", error);
        }
        out.push_str(&self.summary_line());
        out
    }

    /// `N objects: N in sync, N drifted (N fields), …; N problems, N notes`, with its line break.
    fn summary_line(&self) -> String {
        let s = self.summary();
        format!(
            "{} objects: {} in sync, {} drifted ({} fields), {} missing, {} unmanaged, {} errors; {} problems, {} notes\n",
            s.objects,
            s.in_sync,
            s.drifted,
            s.fields,
            s.missing,
            s.unmanaged,
            s.errors,
            s.problems,
            s.notes
        )
    }

    /// One line per drifted field, then problems, errors and a summary line.
    pub fn to_text(&self, now: jiff::Timestamp) -> String {
        let mut out = String::new();
        for object in &self.objects {
            let key = object.drift.key.to_string();
            let place = match (&object.file, object.line) {
                (Some(file), Some(line)) => {
                    format!("{}:{line}", crate::manifest::shown_path(file))
                }
                _ => String::new(),
            };
            let place = match (&object.rendered_by, &object.helm) {
                (_, Some(release)) => release.source(),
                (Some(root), None) => format!(
                    "{place} (rendered by {})",
                    crate::manifest::shown_path(root)
                ),
                (None, None) => place,
            };
            match &object.drift.status {
                ObjectStatus::Missing => {
                    let _ = writeln!(out, "{key}  missing from the cluster  {place}");
                }
                ObjectStatus::Unmanaged => {
                    let _ = writeln!(out, "{key}  not in git");
                }
                ObjectStatus::Error(message) => {
                    let _ = writeln!(out, "{key}  error: {message}");
                }
                ObjectStatus::InSync if self.show_in_sync && object.drift.items.is_empty() => {
                    let _ = writeln!(out, "{key}  in sync");
                }
                _ => {}
            }
            for (at, item) in object.drift.items.iter().enumerate() {
                let values = format!(
                    "{} → {}",
                    short_value(item.manifest.as_ref()),
                    short_value(item.live.as_ref())
                );
                // A kustomize root's field: the file that sets it (an overlay, a patch).
                let source = match object.item_places.get(at) {
                    _ if object.helm.is_some() => {
                        format!(
                            "{} · ",
                            object.helm.as_ref().map(|r| r.source()).unwrap_or_default()
                        )
                    }
                    Some(Some(place)) if object.rendered_by.is_some() => {
                        format!("{} · ", place.shown_here())
                    }
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "{key}  {}  {values}  {source}{}",
                    item.path,
                    attribution_text(item, now)
                );
            }
            for reconciler in &object.reconcilers {
                let _ = writeln!(out, "{key}  ↳ {}", reconciler.sentence());
            }
        }
        for pending in &self.pending {
            out.push_str(&pending_text(pending));
        }
        // A note hides no object: it is not called a problem.
        for problem in &self.problems {
            let _ = writeln!(out, "{}: {problem}", problem.label());
        }
        for error in &self.errors {
            let _ = writeln!(out, "error: {error}");
        }
        out.push_str(&self.summary_line());
        out
    }

    /// The JSON document described in the module documentation.
    pub fn to_json(&self) -> Value {
        let objects = self
            .objects
            .iter()
            .map(|object| {
                let key = &object.drift.key;
                JsonObject {
                    key: key.to_string(),
                    group: &key.group,
                    kind: &key.kind,
                    namespace: &key.namespace,
                    name: &key.name,
                    status: status_name(&object.drift.status),
                    file: object.file.as_ref().map(|f| f.display().to_string()),
                    line: object.line,
                    rendered_by: object.rendered_by.as_ref().map(|f| f.display().to_string()),
                    restarted: object.drift.restarted(),
                    error: match &object.drift.status {
                        ObjectStatus::Error(message) => Some(message),
                        _ => None,
                    },
                    reconciler: object.reconcilers.first().map(|r| r.to_json()),
                    reconcilers: (object.reconcilers.len() > 1)
                        .then(|| object.reconcilers.iter().map(|r| r.to_json()).collect()),
                    helm: object.helm.as_ref().map(|r| helm_json(r)),
                    items: object
                        .drift
                        .items
                        .iter()
                        .zip(object.item_places.iter().chain(std::iter::repeat(&None)))
                        .map(|(item, place)| JsonItem {
                            class: item.class.name(),
                            path: item.path.to_string(),
                            pointer: item.path.pointer(),
                            line: place
                                .as_ref()
                                .filter(|p| Some(&p.file) == object.file.as_ref())
                                .map(|p| p.line),
                            source: place.as_ref().map(|p| JsonSource {
                                file: p.file.display().to_string(),
                                line: p.line,
                                what: p.what,
                            }),
                            manifest: item.manifest.as_ref(),
                            live: item.live.as_ref(),
                            manager: item.attribution.manager.as_deref(),
                            operation: item.attribution.operation.as_deref(),
                            subresource: item.attribution.subresource.as_deref(),
                            time: item.attribution.time.as_deref(),
                        })
                        .collect(),
                }
            })
            .collect();
        let entry = |problem: &Problem| {
            let (file, line) = problem.place();
            JsonProblem {
                file: file.display().to_string(),
                line,
                message: problem.to_string(),
            }
        };
        let (notes, problems): (Vec<&Problem>, Vec<&Problem>) =
            self.problems.iter().partition(|p| p.is_note());
        let report = JsonReport {
            schema_version: SCHEMA_VERSION,
            objects,
            problems: problems.into_iter().map(entry).collect(),
            notes: notes.into_iter().map(entry).collect(),
            errors: &self.errors,
            kustomize: self.kustomize.as_ref(),
            helm: (!self.pending.is_empty()).then(|| pending_json(&self.pending)),
            summary: self.summary(),
            exit_code: self.exit_code(),
        };
        serde_json::to_value(report).unwrap_or(Value::Null)
    }
}
