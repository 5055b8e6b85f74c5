//! What the soak compares: the app's state of every workload (its row or its absence, the row's
//! desired, ready, updated and available counts and rollout phase, its drift, and whether a
//! missing one is listed as such) against what fresh lists from the server imply. The lists go
//! through a client of their own and the drift through `kdrift check`'s pairing of manifests and
//! live objects, not through the live view's watch path.

#![allow(dead_code)] // the bench and the short test each use part of it

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use kdrift::app::{App, DriftSummary};
use kdrift::cluster::live::{
    LiveDaemonSet, LiveDeployment, LiveRow, LiveStatefulSet, TableResource,
};
use kdrift::commands::context::Context;
use kdrift::drift::LiveObject;
use kdrift::manifest::ObjectKey;
use kdrift::rollout::{RolloutPhase, rollout_status};
use kube::api::{Api, ListParams};

/// A row's figures as the table shows them, and which object (creation time) and spec
/// (generation) they are of.
#[derive(Debug, Clone, PartialEq)]
pub struct Counts {
    pub created: Option<jiff::Timestamp>,
    pub generation: i64,
    pub observed_generation: i64,
    pub desired: i32,
    /// Pods of every revision (old ones still there make a rollout progressing).
    pub replicas: i32,
    pub ready: i32,
    pub updated: i32,
    pub available: i32,
    pub phase: RolloutPhase,
}

/// One workload as the app holds it, or as the server implies it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// `None`: no row (deleted, or missing live).
    pub counts: Option<Counts>,
    pub drift: DriftSummary,
    /// A missing one is listed as a row of the table's missing list.
    pub listed_missing: bool,
}

/// Every workload the app knows of (rows and drift entries), by key.
pub type View = HashMap<ObjectKey, Shown>;

/// The app's state after a frame.
pub fn seen(app: &App) -> View {
    let mut view: View = app
        .cache
        .workloads
        .iter()
        .map(|entry| {
            let r = &entry.row;
            let counts = Counts {
                created: r.created,
                generation: r.generation,
                observed_generation: r.observed_generation,
                desired: r.desired,
                replicas: r.replicas,
                ready: r.ready,
                updated: r.updated,
                available: r.available,
                phase: entry.rollout.phase.clone(),
            };
            let shown = Shown {
                counts: Some(counts),
                drift: app.drift_of(&r.key).clone(),
                listed_missing: false,
            };
            (r.key.clone(), shown)
        })
        .collect();
    for (key, entry) in app.ledger.iter() {
        if !kdrift::app::App::is_row_kind(key) {
            continue;
        }
        let key = key.clone();
        let listed_missing = app.table.missing.binary_search(&key).is_ok();
        view.entry(key).or_insert_with(|| Shown {
            counts: None,
            drift: entry.summary.clone(),
            listed_missing,
        });
    }
    view
}

/// What fresh lists of the three kinds imply: a row per object, its drift as `kdrift check`
/// pairs it with the manifests, and the manifests without an object as missing.
pub async fn expected(ctx: &Context) -> Result<View, String> {
    let client = &ctx.conn.client;
    let mut rows = list::<LiveDeployment>(client).await?;
    rows.extend(list::<LiveStatefulSet>(client).await?);
    rows.extend(list::<LiveDaemonSet>(client).await?);
    let mut objects = Vec::with_capacity(rows.len());
    let mut view = View::with_capacity(rows.len());
    for LiveRow { row, json } in rows {
        let kind = row.kind().kind();
        let object = LiveObject::from_item_json(json.text(), "apps/v1", kind, &ctx.schemas)
            .map_err(|e| format!("{kind} {}: {e}", row.key.name))?;
        objects.push(object);
        let counts = Counts {
            created: row.created,
            generation: row.generation,
            observed_generation: row.observed_generation,
            desired: row.desired,
            replicas: row.replicas,
            ready: row.ready,
            updated: row.updated,
            available: row.available,
            phase: rollout_status(&row).phase,
        };
        view.insert(
            row.key.clone(),
            Shown {
                counts: Some(counts),
                drift: DriftSummary::NotComputed,
                listed_missing: false,
            },
        );
    }
    let everything = |_: &kdrift::manifest::ObjectKey| true;
    let report = kdrift::drift::check::check(&ctx.index, objects, &everything, true, Vec::new());
    for object in &report.objects {
        if !kdrift::app::App::is_row_kind(&object.drift.key) {
            continue;
        }
        let key = object.drift.key.clone();
        let (drift, _) = kdrift::app::drift::summarize(&object.drift);
        let missing = drift == DriftSummary::Missing;
        let shown = view.entry(key).or_insert(Shown {
            counts: None,
            drift: DriftSummary::NotComputed,
            listed_missing: missing,
        });
        shown.drift = drift;
    }
    Ok(view)
}

/// Where the last fresh lists found each workload: `page N (list at RV X), object RV Y` — said
/// beside a stale row, since a continued list's later pages are as of its first page's
/// resourceVersion.
pub static LISTED: std::sync::Mutex<BTreeMap<ObjectKey, String>> =
    std::sync::Mutex::new(BTreeMap::new());

/// Every object of kind `K` in all namespaces, page by page, as the table's watcher decodes it.
async fn list<K: TableResource>(client: &kube::Client) -> Result<Vec<LiveRow>, String> {
    let api: Api<K> = Api::all(client.clone());
    let mut params = ListParams::default().limit(500);
    let mut rows = Vec::new();
    let mut page_number = 0;
    loop {
        let page = api
            .list(&params)
            .await
            .map_err(|e| format!("cannot list {}: {e}", K::KIND.resource()))?;
        page_number += 1;
        let list_rv = page.metadata.resource_version.clone().unwrap_or_default();
        let new_rows: Vec<LiveRow> = page.items.into_iter().map(K::into_row).collect();
        if let Ok(mut listed) = LISTED.lock() {
            for row in &new_rows {
                let object_rv = serde_json::from_str::<serde_json::Value>(row.json.text())
                    .ok()
                    .and_then(|v| {
                        v.pointer("/metadata/resourceVersion")
                            .and_then(|r| r.as_str().map(str::to_owned))
                    })
                    .unwrap_or_default();
                listed.insert(
                    row.row.key.clone(),
                    format!("page {page_number} (list at RV {list_rv}), object RV {object_rv}"),
                );
            }
        }
        rows.extend(new_rows);
        match page.metadata.continue_ {
            Some(token) if !token.is_empty() => params = params.continue_token(&token),
            _ => return Ok(rows),
        }
    }
}

/// A workload whose state in the app differs from the server's: what each side says.
#[derive(Debug, Clone)]
pub struct Stale {
    pub key: ObjectKey,
    pub server: Option<Shown>,
    pub app: Option<Shown>,
}

/// The workloads whose state differs (an app entry with nothing to show for it on the server
/// side — a drift entry left for a deleted unmanaged row — counts too).
pub fn stale(expected: &View, seen: &View) -> Vec<Stale> {
    let mut keys: BTreeMap<&ObjectKey, ()> = expected.keys().map(|k| (k, ())).collect();
    keys.extend(seen.keys().map(|k| (k, ())));
    keys.into_keys()
        .filter_map(|key| {
            let (server, app) = (expected.get(key), seen.get(key));
            (server != app).then(|| Stale {
                key: key.clone(),
                server: server.cloned(),
                app: app.cloned(),
            })
        })
        .collect()
}

/// The latest view, shared between the frame probe and the comparison.
pub type Latest = Arc<View>;
