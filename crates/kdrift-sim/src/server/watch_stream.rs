//! Watch streams: one JSON event per line on a chunked 200 reply, with resourceVersion
//! semantics (unset or "0": the current objects as ADDED first; N: every change after N;
//! too old: an ERROR event carrying a 410 `Expired` Status), label and field selectors (an
//! object leaving the selection is sent as DELETED), `allowWatchBookmarks`, `sendInitialEvents`,
//! `timeoutSeconds`, Tables for `kubectl get -w`, and the faults that end or stall watches.
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;

use super::ServerState;
use super::request::{Query, selectors};
use super::response::{Reply, Wanted, error_reply, error_status};
use super::router::ResourcePath;
use super::rows::{self, IncludeObject};
use crate::error::ApiError;
use crate::resources::ResourceType;
use crate::store::{Entry, EventType, FieldSelector, LabelSelector, WatchEvent, watch_line};

/// How often a watch with `allowWatchBookmarks=true` gets a BOOKMARK.
pub const BOOKMARK_INTERVAL: Duration = Duration::from_secs(5);
/// Lines buffered per watcher before the writer waits for the client.
const LINES_BUFFERED: usize = 64;

/// What one watcher sends.
struct Watcher {
    resource: ResourceType,
    namespace: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
    wanted: Wanted,
    include: IncludeObject,
    /// Tables carry their column definitions in the first event only.
    headers_sent: bool,
}

impl Watcher {
    fn selects(&self, entry: &Entry) -> bool {
        entry.resource == self.resource
            && self
                .namespace
                .as_deref()
                .is_none_or(|ns| *entry.namespace == *ns)
            && self.labels.matches(&entry.labels)
            && self.fields.matches(entry)
    }

    /// The line for `event`, or `None` when this watcher does not see it.
    fn line(&mut self, event: &WatchEvent) -> Option<Bytes> {
        if event.entry.resource != self.resource {
            return None;
        }
        let now = self.selects(&event.entry);
        let kind = match event.kind {
            EventType::Modified => {
                let before = event.previous.as_deref().is_some_and(|p| self.selects(p));
                match (before, now) {
                    (true, true) => EventType::Modified,
                    (false, true) => EventType::Added,
                    (true, false) => EventType::Deleted,
                    (false, false) => return None,
                }
            }
            kind if now => kind,
            _ => return None,
        };
        match self.wanted {
            Wanted::Object if kind == event.kind => Some(event.line()),
            Wanted::Object => Some(watch_line(kind.wire_name(), &event.entry.json)),
            Wanted::Metadata => Some(watch_line(
                kind.wire_name(),
                &rows::partial_metadata(&event.entry),
            )),
            Wanted::Table => {
                let meta = json!({"resourceVersion": event.entry.resource_version.to_string()});
                let entries = [event.entry.clone()];
                let t = rows::table_body(
                    self.resource,
                    &entries,
                    self.include,
                    &meta,
                    !self.headers_sent,
                );
                self.headers_sent = true;
                Some(watch_line(kind.wire_name(), &t))
            }
        }
    }

    fn bookmark(&self, rv: u64, initial_events_end: bool) -> Bytes {
        let mut meta = json!({"resourceVersion": rv.to_string(), "creationTimestamp": null});
        if initial_events_end {
            meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let object = json!({"kind": self.resource.kind(), "apiVersion": self.resource.api_version(), "metadata": meta});
        value_line("BOOKMARK", &object)
    }
}

fn value_line(kind: &str, object: &Value) -> Bytes {
    watch_line(kind, &serde_json::to_vec(object).unwrap_or_default())
}

fn error_line(err: &ApiError) -> Bytes {
    value_line("ERROR", &error_status(err).1)
}

fn random_timeout() -> Duration {
    // A real server closes a watch after 30 to 60 minutes when the client gives no timeout.
    let r = uuid::Uuid::new_v4().as_u128() % 1800;
    Duration::from_secs(1800 + u64::try_from(r).unwrap_or(0))
}

fn stream_reply(rx: mpsc::Receiver<Bytes>) -> Reply {
    let stream = ReceiverStream::new(rx).map(|b| Ok::<_, std::convert::Infallible>(Frame::data(b)));
    let mut reply = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    *reply.status_mut() = StatusCode::OK;
    reply.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    reply
}

/// A stream of one ERROR line, as a real server answers a watch from a forgotten version.
fn gone_reply(err: &ApiError) -> Reply {
    let (tx, rx) = mpsc::channel(1);
    let _ = tx.try_send(error_line(err));
    stream_reply(rx)
}

fn flag(query: &Query, name: &str) -> bool {
    matches!(query.get(name).map(String::as_str), Some("true" | "1"))
}

pub async fn serve(
    state: Arc<ServerState>,
    path: ResourcePath,
    query: &Query,
    wanted: Wanted,
) -> Reply {
    let (labels, fields) = match selectors(&path, query) {
        Ok(s) => s,
        Err(e) => return error_reply(&e),
    };
    let timeout = match query.get("timeoutSeconds").map(|t| t.parse::<u64>()) {
        None => random_timeout(),
        Some(Ok(t)) => Duration::from_secs(t),
        Some(Err(_)) => return error_reply(&ApiError::BadRequest("invalid timeoutSeconds".into())),
    };
    let bookmarks = flag(query, "allowWatchBookmarks");
    let send_initial = flag(query, "sendInitialEvents");
    if send_initial
        && (!bookmarks
            || query.get("resourceVersionMatch").map(String::as_str) != Some("NotOlderThan"))
    {
        return error_reply(&ApiError::Invalid(
            "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchProgressNotifyInterval/allowWatchBookmarks=true and resourceVersionMatch=NotOlderThan are set".into(),
        ));
    }
    let since = match query.get("resourceVersion").map(String::as_str) {
        None | Some("" | "0") => None,
        Some(rv) => match rv.parse::<u64>() {
            Ok(rv) => Some(rv),
            Err(_) => {
                return error_reply(&ApiError::BadRequest(format!(
                    "invalid resource version: {rv}"
                )));
            }
        },
    };
    let start = if send_initial || since.is_none() {
        state
            .store
            .watch_current(path.resource, path.namespace.as_deref())
    } else {
        if state.faults.watch_gone() {
            let rv = since.unwrap_or(0);
            return gone_reply(&ApiError::Gone(format!(
                "too old resource version: {rv} ({})",
                state.store.resource_version()
            )));
        }
        match state.store.watch_from(since) {
            Ok(s) => s,
            Err(e) => return gone_reply(&e),
        }
    };
    let watcher = Watcher {
        resource: path.resource,
        namespace: path
            .namespace
            .clone()
            .filter(|_| path.resource.namespaced()),
        labels,
        fields,
        wanted,
        include: IncludeObject::parse(query.get("includeObject").map(String::as_str)),
        headers_sent: false,
    };
    let (tx, rx) = mpsc::channel(LINES_BUFFERED);
    // Subscribed before the reply goes out, not in the task: a fault raised as soon as the
    // client has the response headers must reach this watch too.
    let mut faults = FaultEpochs {
        dropped: state.faults.watch_epoch(),
        stalled: state.faults.stall_epoch(),
    };
    faults.dropped.mark_unchanged();
    faults.stalled.mark_unchanged();
    tokio::spawn(run(
        state,
        watcher,
        start,
        faults,
        tx,
        Pace {
            timeout,
            bookmarks,
            send_initial,
        },
    ));
    stream_reply(rx)
}

/// The fault switches a watch listens to: its connections dropped, or left open and silent.
struct FaultEpochs {
    dropped: tokio::sync::watch::Receiver<u64>,
    stalled: tokio::sync::watch::Receiver<u64>,
}

/// When a watch ends and what it sends besides events, as its query asked.
struct Pace {
    timeout: Duration,
    bookmarks: bool,
    send_initial: bool,
}

async fn run(
    state: Arc<ServerState>,
    mut watcher: Watcher,
    start: crate::store::WatchStart,
    faults: FaultEpochs,
    tx: mpsc::Sender<Bytes>,
    pace: Pace,
) {
    let Pace {
        timeout,
        bookmarks,
        send_initial,
    } = pace;
    let FaultEpochs {
        dropped: mut epoch,
        stalled: mut stall,
    } = faults;
    let mut closing = state.closing.clone();
    let mut last_rv = start.resource_version;
    for event in &start.replay {
        last_rv = last_rv.max(event.entry.resource_version);
        if let Some(line) = watcher.line(event)
            && tx.send(line).await.is_err()
        {
            return;
        }
    }
    if send_initial && tx.send(watcher.bookmark(last_rv, true)).await.is_err() {
        return;
    }
    // A watch from a resourceVersion the server has not reached yet sends nothing, bookmarks
    // included, until the server gets there (a 1.36 server, captured: 200, then silence).
    let mut waiting_for = start.waiting_for;
    if let Some(rv) = waiting_for {
        last_rv = last_rv.max(rv);
    }
    let mut live = start.live;
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut ticks = tokio::time::interval_at(
        tokio::time::Instant::now() + BOOKMARK_INTERVAL,
        BOOKMARK_INTERVAL,
    );
    loop {
        // Biased: a fault raised before a write must win over that write's event, which is
        // ready in the same poll (unbiased, select! picked either and a "stalled" watch could
        // still send the event that followed the stall).
        tokio::select! {
            biased;
            _ = super::closed(&mut closing) => break,
            _ = stall.changed() => {
                stalled(&state, &tx, &mut closing).await;
                break;
            }
            _ = epoch.changed() => {
                if state.faults.watch_gone() {
                    let err = ApiError::Gone(format!("too old resource version: {last_rv} ({})", state.store.resource_version()));
                    let _ = tx.send(error_line(&err)).await;
                }
                break;
            }
            _ = tx.closed() => break,
            _ = &mut deadline => break,
            _ = ticks.tick(), if bookmarks => {
                if waiting_for.is_some_and(|rv| state.store.resource_version() < rv) {
                    continue;
                }
                waiting_for = None;
                if tx.send(watcher.bookmark(last_rv, false)).await.is_err() {
                    break;
                }
            }
            received = live.recv() => match received {
                Ok(event) => {
                    // Older events were in the replay already.
                    if event.entry.resource_version <= last_rv {
                        continue;
                    }
                    last_rv = event.entry.resource_version;
                    if let Some(line) = watcher.line(&event)
                        && tx.send(line).await.is_err() {
                            break;
                        }
                }
                // A watcher too slow to keep up is cut off, as a real server does; the
                // client resumes from its last resourceVersion.
                Err(broadcast::error::RecvError::Lagged(_) | broadcast::error::RecvError::Closed) => break,
            },
        }
    }
}

/// A stalled stream: open and silent, whatever happens in the store, until the client closes
/// it or the server stops. Holding `tx` keeps the reply's body open.
async fn stalled(
    state: &ServerState,
    tx: &mpsc::Sender<Bytes>,
    closing: &mut tokio::sync::watch::Receiver<bool>,
) {
    let _counted = state.faults.stalled_guard();
    tokio::select! {
        _ = tx.closed() => {}
        _ = super::closed(closing) => {}
    }
}
