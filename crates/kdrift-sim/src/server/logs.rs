//! `GET /api/v1/namespaces/{ns}/pods/{name}/log`: a container's log as the API server serves
//! it from the kubelet — `text/plain`, with `container`, `previous`, `follow`, `tailLines`,
//! `sinceSeconds`/`sinceTime`, `timestamps` and `limitBytes`, and the errors worded as the API
//! server (which container) and the kubelet (the container's state) word them. A follow stays
//! open while the container runs, writing lines as they come, and ends when the pod goes, its
//! container stops or the server closes.
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use jiff::{SignedDuration, Timestamp};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;

use super::ServerState;
use super::request::Query;
use super::response::{Reply, error_reply, full};
use super::router::ResourcePath;
use crate::controller::logs::{Run, rfc3339_nano};
use crate::controller::object::{at, name, str_at, uid};
use crate::controller::pods::{ImageOutcome, image_outcome};
use crate::error::{ApiError, not_found};
use crate::resources::ResourceType;

/// How often a follow looks for new lines and for the pod's end.
const FOLLOW_TICK: Duration = Duration::from_millis(100);

/// What the client asked for.
#[derive(Debug, Clone, Default)]
struct Options {
    container: Option<String>,
    follow: bool,
    previous: bool,
    timestamps: bool,
    tail: Option<u64>,
    since: Option<Timestamp>,
    limit: Option<usize>,
}

fn flag(query: &Query, key: &str) -> bool {
    matches!(query.get(key).map(String::as_str), Some("true" | "1"))
}

fn invalid(pod: &str, field: &str, value: &str, why: &str) -> ApiError {
    ApiError::Invalid(format!(
        "PodLogOptions \"{pod}\" is invalid: {field}: Invalid value: {value}: {why}"
    ))
}

fn options(query: &Query, pod: &str, now: Timestamp) -> Result<Options, ApiError> {
    let number = |key: &str| -> Result<Option<i64>, ApiError> {
        query
            .get(key)
            .filter(|v| !v.is_empty())
            .map(|v| {
                v.parse::<i64>()
                    .map_err(|_| ApiError::BadRequest(format!("invalid value for {key}: \"{v}\"")))
            })
            .transpose()
    };
    // A count below `min` is refused with the API server's wording.
    let at_least = |key: &str, min: i64, rule: &str| -> Result<Option<i64>, ApiError> {
        match number(key)? {
            Some(n) if n < min => Err(invalid(pod, key, &n.to_string(), rule)),
            n => Ok(n),
        }
    };
    let tail =
        at_least("tailLines", 0, "must be greater than or equal to 0")?.map(i64::unsigned_abs);
    let limit =
        at_least("limitBytes", 1, "must be greater than 0")?.and_then(|n| usize::try_from(n).ok());
    let since_seconds = at_least("sinceSeconds", 1, "must be greater than 0")?;
    let since_time = query
        .get("sinceTime")
        .filter(|v| !v.is_empty())
        .map(|v| {
            v.parse::<Timestamp>()
                .map_err(|_| ApiError::BadRequest(format!("invalid value for sinceTime: \"{v}\"")))
        })
        .transpose()?;
    if since_seconds.is_some() && since_time.is_some() {
        return Err(ApiError::Invalid(format!(
            "PodLogOptions \"{pod}\" is invalid: sinceSeconds: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"
        )));
    }
    let since = since_time
        .or_else(|| since_seconds.and_then(|s| now.checked_sub(SignedDuration::from_secs(s)).ok()));
    Ok(Options {
        container: query.get("container").filter(|c| !c.is_empty()).cloned(),
        follow: flag(query, "follow"),
        previous: flag(query, "previous"),
        timestamps: flag(query, "timestamps"),
        tail,
        since,
        limit,
    })
}

fn container_names(pod: &Value, list: &str) -> Vec<String> {
    at(pod, &["spec", list])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect()
}

/// The container the request is for, checked as the API server checks it.
fn choose_container(pod: &Value, asked: Option<&str>) -> Result<String, ApiError> {
    let pod_name = name(pod);
    let containers = container_names(pod, "containers");
    let mut all = container_names(pod, "initContainers");
    all.extend(containers.iter().cloned());
    all.extend(container_names(pod, "ephemeralContainers"));
    match asked {
        Some(c) if all.iter().any(|n| n == c) => Ok(c.to_string()),
        Some(c) => Err(ApiError::BadRequest(format!(
            "container {c} is not valid for pod {pod_name}"
        ))),
        None if containers.len() == 1 => Ok(containers[0].clone()),
        None if containers.is_empty() => Err(ApiError::BadRequest(format!(
            "a container name must be specified for pod {pod_name}"
        ))),
        None => Err(ApiError::BadRequest(format!(
            "a container name must be specified for pod {pod_name}, choose one of: [{}]",
            all.join(" ")
        ))),
    }
}

/// A run described by a `running` or `terminated` container state.
fn run_of(pod: &Value, container: &str, image: &str, state: &Value) -> Option<Run> {
    let started = str_at(state, &["startedAt"])?.parse::<Timestamp>().ok()?;
    let id = str_at(state, &["containerID"]).unwrap_or("");
    Some(Run {
        seed: format!("{}/{}/{container}/{id}", uid(pod), name(pod)),
        container: container.to_string(),
        image: image.to_string(),
        started,
        crashes: image_outcome(image) == ImageOutcome::Crashes,
    })
}

/// Which run the request reads, and whether it is still running; or the kubelet's reason why
/// there is none.
fn choose_run(pod: &Value, container: &str, previous: bool) -> Result<(Run, bool), ApiError> {
    let pod_name = name(pod);
    let status = at(pod, &["status", "containerStatuses"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(
            at(pod, &["status", "initContainerStatuses"])
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        )
        .find(|s| s["name"] == container);
    let Some(status) = status else {
        // Bound, but the kubelet has not reported the container yet: it is being created.
        return Err(ApiError::BadRequest(format!(
            "container \"{container}\" in pod \"{pod_name}\" is waiting to start: ContainerCreating"
        )));
    };
    let image = status["image"].as_str().unwrap_or_default();
    let last = status.pointer("/lastState/terminated");
    let state = &status["state"];
    if previous {
        return last
            .filter(|t| t.get("containerID").is_some())
            .and_then(|t| run_of(pod, container, image, t))
            .map(|r| (r, false))
            .ok_or_else(|| {
                ApiError::BadRequest(format!(
                    "previous terminated container \"{container}\" in pod \"{pod_name}\" not found"
                ))
            });
    }
    if let Some(running) = state.get("running") {
        return run_of(pod, container, image, running)
            .map(|r| (r, true))
            .ok_or_else(|| ApiError::Internal("a running container without a start".into()));
    }
    if let Some(run) = state
        .get("terminated")
        .or(last)
        .and_then(|t| run_of(pod, container, image, t))
    {
        return Ok((run, false));
    }
    let reason = match str_at(state, &["waiting", "reason"]) {
        Some("ErrImagePull") => "image can't be pulled".to_string(),
        Some("ImagePullBackOff") => "trying and failing to pull image".to_string(),
        Some(other) => other.to_string(),
        None => {
            return Err(ApiError::BadRequest(format!(
                "container \"{container}\" in pod \"{pod_name}\" is waiting to start - no logs yet"
            )));
        }
    };
    Err(ApiError::BadRequest(format!(
        "container \"{container}\" in pod \"{pod_name}\" is waiting to start: {reason}"
    )))
}

/// Writes lines as the options say: timestamps, `since`, and the byte limit.
struct Writer {
    timestamps: bool,
    since: Option<Timestamp>,
    left: Option<usize>,
}

impl Writer {
    /// The bytes of `index`..`end` of `run`; `None` once the byte limit is reached.
    fn lines(&mut self, run: &Run, range: std::ops::Range<u64>, out: &mut Vec<u8>) -> bool {
        for i in range {
            let line = run.line(i);
            if self.since.is_some_and(|s| line.at < s) {
                continue;
            }
            let mut text = Vec::with_capacity(line.text.len() + 40);
            if self.timestamps {
                text.extend_from_slice(rfc3339_nano(line.at).as_bytes());
                text.push(b' ');
            }
            text.extend_from_slice(&line.text);
            text.push(b'\n');
            match &mut self.left {
                Some(left) if text.len() >= *left => {
                    out.extend_from_slice(&text[..*left]);
                    *left = 0;
                    return false;
                }
                Some(left) => *left -= text.len(),
                None => {}
            }
            out.extend_from_slice(&text);
        }
        true
    }
}

fn text_reply(body: super::response::Body) -> Reply {
    let mut reply = Response::new(body);
    *reply.status_mut() = StatusCode::OK;
    reply
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    reply
}

/// Serve `pods/{name}/log`.
pub async fn serve(state: Arc<ServerState>, path: &ResourcePath, query: &Query) -> Reply {
    match prepare(&state, path, query) {
        Ok(Prepared::Empty) => text_reply(full(Bytes::new())),
        Ok(Prepared::Lines { body, follow: None }) => text_reply(full(body)),
        Ok(Prepared::Lines {
            body,
            follow: Some(follow),
        }) => {
            let (tx, rx) = mpsc::channel::<Bytes>(16);
            let _ = tx.try_send(Bytes::from(body));
            tokio::spawn(follow.run(state, tx));
            let stream = ReceiverStream::new(rx).map(|b| Ok(Frame::data(b)));
            text_reply(BodyExt::boxed(StreamBody::new(stream)))
        }
        Err(e) => error_reply(&e),
    }
}

enum Prepared {
    /// A pod no node runs yet: the API server has nowhere to ask, and answers nothing.
    Empty,
    Lines {
        body: Vec<u8>,
        follow: Option<Box<Follow>>,
    },
}

fn prepare(state: &ServerState, path: &ResourcePath, query: &Query) -> Result<Prepared, ApiError> {
    let ns = path.namespace.as_deref().unwrap_or("");
    let pod_name = path.name.as_deref().unwrap_or("");
    let pod = state
        .store
        .get(ResourceType::POD, ns, pod_name)
        .ok_or_else(|| not_found(ResourceType::POD, pod_name))?;
    let now = Timestamp::now();
    let opts = options(query, pod_name, now)?;
    let container = choose_container(&pod, opts.container.as_deref())?;
    if str_at(&pod, &["spec", "nodeName"]).is_none_or(str::is_empty) {
        return Ok(Prepared::Empty);
    }
    let (run, running) = choose_run(&pod, &container, opts.previous)?;
    let written = run.written(now);
    let mut first = Run::first_kept(written);
    if let Some(tail) = opts.tail {
        first = first.max(written.saturating_sub(tail));
    }
    let mut writer = Writer {
        timestamps: opts.timestamps,
        since: opts.since,
        left: opts.limit,
    };
    let mut body = Vec::new();
    let more = writer.lines(&run, first..written, &mut body);
    let follow = (opts.follow && running && more).then(|| {
        Box::new(Follow {
            namespace: ns.to_string(),
            pod: pod_name.to_string(),
            uid: uid(&pod).to_string(),
            container,
            restarts: restarts(&pod, &run.container),
            run,
            next: written,
            writer,
        })
    });
    Ok(Prepared::Lines { body, follow })
}

fn restarts(pod: &Value, container: &str) -> i64 {
    at(pod, &["status", "containerStatuses"])
        .and_then(Value::as_array)
        .and_then(|s| s.iter().find(|s| s["name"] == container))
        .and_then(|s| s["restartCount"].as_i64())
        .unwrap_or(0)
}

/// A follow in progress: the run it reads and the next line to send.
struct Follow {
    namespace: String,
    pod: String,
    uid: String,
    container: String,
    restarts: i64,
    run: Run,
    next: u64,
    writer: Writer,
}

impl Follow {
    /// Whether the container this follow reads still runs.
    fn still_running(&self, store: &crate::store::Store) -> bool {
        let Some(pod) = store.get(ResourceType::POD, &self.namespace, &self.pod) else {
            return false;
        };
        uid(&pod) == self.uid
            && restarts(&pod, &self.container) == self.restarts
            && at(&pod, &["status", "containerStatuses"])
                .and_then(Value::as_array)
                .and_then(|s| s.iter().find(|s| s["name"] == self.container.as_str()))
                .is_some_and(|s| s.pointer("/state/running").is_some())
    }

    async fn run(mut self: Box<Self>, state: Arc<ServerState>, tx: mpsc::Sender<Bytes>) {
        let mut closing = state.closing.clone();
        let mut tick = tokio::time::interval(FOLLOW_TICK);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = super::closed(&mut closing) => return,
                _ = tx.closed() => return,
            }
            if !self.still_running(&state.store) {
                return;
            }
            let written = self.run.written(Timestamp::now());
            if written <= self.next {
                continue;
            }
            let mut chunk = Vec::new();
            let more = self.writer.lines(&self.run, self.next..written, &mut chunk);
            self.next = written;
            if !chunk.is_empty() && tx.send(Bytes::from(chunk)).await.is_err() {
                return;
            }
            if !more {
                return;
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(state: Value) -> Value {
        json!({"metadata": {"name": "web-1", "uid": "u1"},
               "spec": {"nodeName": "demo-node-1", "containers": [{"name": "web"}, {"name": "sidecar"}],
                        "initContainers": [{"name": "init"}]},
               "status": {"containerStatuses": [state]}})
    }

    #[test]
    fn the_container_is_checked_as_the_api_server_checks_it() {
        let p = pod(json!({}));
        assert_eq!(
            choose_container(&p, None).unwrap_err().to_string(),
            "a container name must be specified for pod web-1, choose one of: [init web sidecar]"
        );
        assert_eq!(
            choose_container(&p, Some("db")).unwrap_err().to_string(),
            "container db is not valid for pod web-1"
        );
        assert_eq!(choose_container(&p, Some("sidecar")).unwrap(), "sidecar");
    }

    #[test]
    fn the_containers_state_says_which_run_is_read() {
        let waiting = pod(
            json!({"name": "web", "image": "web:1", "state": {"waiting": {"reason": "ContainerCreating"}}, "lastState": {}}),
        );
        assert_eq!(
            choose_run(&waiting, "web", false).unwrap_err().to_string(),
            "container \"web\" in pod \"web-1\" is waiting to start: ContainerCreating"
        );
        let pulling = pod(
            json!({"name": "web", "image": "web:1", "state": {"waiting": {"reason": "ImagePullBackOff"}}, "lastState": {}}),
        );
        assert_eq!(
            choose_run(&pulling, "web", false).unwrap_err().to_string(),
            "container \"web\" in pod \"web-1\" is waiting to start: trying and failing to pull image"
        );
        let running = pod(json!({"name": "web", "image": "web:1", "lastState": {},
            "state": {"running": {"startedAt": "2026-11-24T03:00:00Z"}}, "containerID": "containerd://a"}));
        assert!(choose_run(&running, "web", false).unwrap().1);
        assert_eq!(
            choose_run(&running, "web", true).unwrap_err().to_string(),
            "previous terminated container \"web\" in pod \"web-1\" not found"
        );
        let crashing = pod(json!({"name": "web", "image": "web:2-crash",
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"containerID": "containerd://b", "exitCode": 1, "reason": "Error",
                "startedAt": "2026-11-24T03:00:00Z", "finishedAt": "2026-11-24T03:00:00Z"}}}));
        let (run, live) = choose_run(&crashing, "web", false).unwrap();
        assert!(!live && run.crashes);
        assert_eq!(choose_run(&crashing, "web", true).unwrap().0, run);
    }

    #[test]
    fn options_are_checked() {
        let q = |pairs: &[(&str, &str)]| -> Query {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let now: Timestamp = "2026-11-24T03:00:00Z".parse().unwrap();
        let o = options(
            &q(&[
                ("tailLines", "5"),
                ("sinceSeconds", "60"),
                ("follow", "true"),
            ]),
            "p",
            now,
        )
        .unwrap();
        assert_eq!(o.tail, Some(5));
        assert!(o.follow);
        assert_eq!(o.since, Some("2026-11-24T02:59:00Z".parse().unwrap()));
        assert_eq!(
            options(&q(&[("tailLines", "-1")]), "p", now)
                .unwrap_err()
                .to_string(),
            "PodLogOptions \"p\" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0"
        );
        let mut w = Writer {
            timestamps: true,
            since: None,
            left: Some(10),
        };
        let run = Run {
            seed: "s".into(),
            container: "web".into(),
            image: "web:1".into(),
            started: now,
            crashes: false,
        };
        let mut out = Vec::new();
        assert!(!w.lines(&run, 0..4, &mut out));
        assert_eq!(out, b"2026-11-24");
    }
}
