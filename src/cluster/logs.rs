//! A container's log read off the loop: `pods/log` with `follow`, each line cut at [`MAX_LINE`]
//! bytes (a 1 MB line costs 64 KiB, never an unbounded allocation), made safe to show
//! ([`crate::text::log_line`]) and sent in batches; when the stream ends while the container
//! runs it is read again from the last line's time, and otherwise the reason is said (pod
//! deleted, container terminated, the API's refusal).
use std::time::Duration;

use futures::io::{AsyncBufRead, AsyncBufReadExt};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::Api;
pub use kube::api::LogParams;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// The longest line kept, in bytes; the rest of a longer line is dropped and said so.
pub const MAX_LINE: usize = 64 * 1024;
/// Lines that are ready at once travel as one message, up to this many.
const BATCH: usize = 1024;
/// How long a line waits for others to travel with it.
const BATCH_WAIT: Duration = Duration::from_millis(20);
/// How long to wait before asking again for the log of a container waiting to start.
const WAITING_RETRY: Duration = Duration::from_secs(2);
/// The longest wait between two reconnects of a stream that keeps ending at once.
const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// The annotation kubectl reads for the container to show when none is named.
const DEFAULT_CONTAINER: &str = "kubectl.kubernetes.io/default-container";

/// One line of a log, as shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub text: String,
    /// The line had this many bytes and was cut at [`MAX_LINE`].
    pub cut: Option<u64>,
}

impl LogLine {
    /// A line from its bytes (at most [`MAX_LINE`] of them) and the length it had.
    pub fn from_bytes(bytes: &[u8], len: u64) -> LogLine {
        LogLine {
            text: crate::text::log_line(bytes),
            cut: (len > bytes.len() as u64).then_some(len),
        }
    }
}

/// Which log to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRequest {
    pub namespace: String,
    pub pod: String,
    /// `None`: the pod's default container (its annotation, else the first).
    pub container: Option<String>,
    /// The previous run's log (the crash of a crash-looping container).
    pub previous: bool,
    /// Keep reading new lines (not for `previous`: that run has ended).
    pub follow: bool,
    /// Only this many of the newest lines.
    pub tail: Option<i64>,
}

/// What happens to a log stream, as the app hears it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEvent {
    /// The pod's containers (init containers last) and the one being read.
    Opened {
        containers: Vec<String>,
        container: String,
    },
    /// The stream is open (again).
    Streaming,
    Lines(Vec<LogLine>),
    /// The stream broke or ended while the container runs: reading on.
    Reconnecting(String),
    /// No log yet, in the API's words (a container waiting to start); asking again shortly.
    Waiting(String),
    Ended(LogEnd),
}

/// Why a log stream ended for good.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEnd {
    /// Everything was read (not following, or a previous run's log).
    Complete,
    PodDeleted,
    /// The container stopped: how (`exit code 1 (Error)`), or that it waits to restart.
    Terminated(String),
    /// The API refused (forbidden, no such container, no previous run), in its words.
    Failed(String),
}

/// A log task; dropping it stops the stream.
pub struct LogTask(JoinHandle<()>);

impl Drop for LogTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Start reading `req` on a task; `send` returns false once nobody listens.
pub fn spawn_log(
    client: Client,
    req: LogRequest,
    send: impl Fn(LogEvent) -> bool + Send + Sync + 'static,
) -> LogTask {
    LogTask(tokio::spawn(async move {
        read_log(client, req, send).await;
    }))
}

/// Reads one line at a time from a log stream, keeping at most [`MAX_LINE`] bytes of each.
/// Cancel-safe: a partial line lives here, so a read given up at a batch deadline loses nothing.
#[derive(Debug, Default)]
pub struct LineReader {
    line: Vec<u8>,
    /// The bytes of the line so far, kept or not.
    len: u64,
    started: bool,
}

impl LineReader {
    /// The next line without its newline, and how many bytes it had; `None` at the end.
    pub async fn next<R: AsyncBufRead + Unpin>(
        &mut self,
        reader: &mut R,
    ) -> std::io::Result<Option<(Vec<u8>, u64)>> {
        loop {
            let buf = reader.fill_buf().await?;
            if buf.is_empty() {
                // The last line may lack its newline.
                return Ok(self.started.then(|| self.take()));
            }
            self.started = true;
            let (chunk, used, done) = match buf.iter().position(|b| *b == b'\n') {
                Some(i) => (&buf[..i], i + 1, true),
                None => (buf, buf.len(), false),
            };
            let room = MAX_LINE.saturating_sub(self.line.len());
            self.line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            self.len += chunk.len() as u64;
            reader.consume_unpin(used);
            if done {
                return Ok(Some(self.take()));
            }
        }
    }

    fn take(&mut self) -> (Vec<u8>, u64) {
        let len = std::mem::take(&mut self.len);
        self.started = false;
        (std::mem::take(&mut self.line), len)
    }
}

/// The containers of a pod (init containers last) and the one to read: `asked`, else the
/// default-container annotation's, else the first.
pub fn choose_container(pod: &Pod, asked: Option<&str>) -> Result<(Vec<String>, String), String> {
    let spec = pod.spec.as_ref();
    let mut containers: Vec<String> = spec
        .map(|s| s.containers.iter().map(|c| c.name.clone()).collect())
        .unwrap_or_default();
    containers.extend(
        spec.and_then(|s| s.init_containers.as_ref())
            .into_iter()
            .flatten()
            .map(|c| c.name.clone()),
    );
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let chosen = match asked {
        Some(c) if containers.iter().any(|n| n == c) => c.to_owned(),
        Some(c) => {
            return Err(format!(
                "container \"{c}\" not found in pod {name}: its containers are {}",
                containers.join(", ")
            ));
        }
        None => pod
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(DEFAULT_CONTAINER))
            .filter(|c| containers.contains(c))
            .or_else(|| containers.first())
            .cloned()
            .ok_or_else(|| format!("pod {name} has no containers"))?,
    };
    Ok((containers, chosen))
}

/// A log request's error in the API's words, and whether it says the container is waiting to
/// start (no log yet: worth asking again).
pub fn log_error(error: &kube::Error) -> (String, bool) {
    match error {
        kube::Error::Api(status) => {
            let waiting = status.code == 400 && status.message.contains("is waiting to start");
            (status.message.clone(), waiting)
        }
        other => (other.to_string(), false),
    }
}

fn is_not_found(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(s) if s.code == 404)
}

/// How the container of a pod stands, for a stream that ended.
enum Standing {
    Gone,
    Running,
    Stopped(String),
}

fn standing(pod: &Pod, uid: Option<&str>, container: &str) -> Standing {
    if uid.is_some() && pod.metadata.uid.as_deref() != uid {
        return Standing::Gone;
    }
    let status = pod.status.as_ref().and_then(|s| {
        s.container_statuses
            .iter()
            .chain(s.init_container_statuses.iter())
            .flatten()
            .find(|c| c.name == container)
    });
    let Some(state) = status.and_then(|s| s.state.as_ref()) else {
        return Standing::Stopped("container not started".into());
    };
    if state.running.is_some() {
        return Standing::Running;
    }
    let ended = state.terminated.as_ref().or_else(|| {
        status
            .and_then(|s| s.last_state.as_ref())
            .and_then(|l| l.terminated.as_ref())
    });
    let how = match ended {
        Some(t) => match &t.reason {
            Some(r) => format!("exit code {} ({r})", t.exit_code),
            None => format!("exit code {}", t.exit_code),
        },
        None => "stopped".into(),
    };
    match state.waiting.as_ref().and_then(|w| w.reason.as_deref()) {
        Some(reason) => Standing::Stopped(format!("{how}; now {reason}")),
        None => Standing::Stopped(how),
    }
}

/// Where a stream read up to, so that a reconnect neither repeats nor loses lines: the time
/// of the last line and how many lines carried that time.
#[derive(Debug, Default, Clone, Copy)]
struct Mark {
    at: Option<Timestamp>,
    at_count: usize,
}

/// The timestamp the API puts before each line with `timestamps=true`, and the rest.
fn split_time(line: &[u8]) -> (Option<Timestamp>, &[u8]) {
    let Some(space) = line.iter().take(40).position(|b| *b == b' ') else {
        return (None, line);
    };
    match std::str::from_utf8(&line[..space])
        .ok()
        .and_then(|t| t.parse::<Timestamp>().ok())
    {
        Some(at) => (Some(at), &line[space + 1..]),
        None => (None, line),
    }
}

impl Mark {
    /// Whether a line at `at` is new: not before the mark, and past the lines read at its time.
    fn admit(&mut self, at: Option<Timestamp>, skip: &mut usize) -> bool {
        let Some(at) = at else { return true };
        match self.at {
            Some(mark) if at < mark => false,
            Some(mark) if at == mark && *skip > 0 => {
                *skip -= 1;
                false
            }
            Some(mark) if at == mark => {
                self.at_count += 1;
                true
            }
            _ => {
                self.at = Some(at);
                self.at_count = 1;
                true
            }
        }
    }
}

async fn read_log(client: Client, req: LogRequest, send: impl Fn(LogEvent) -> bool) {
    let api: Api<Pod> = Api::namespaced(client, &req.namespace);
    let pod = match api.get(&req.pod).await {
        Ok(pod) => pod,
        Err(e) if is_not_found(&e) => {
            send(LogEvent::Ended(LogEnd::PodDeleted));
            return;
        }
        Err(e) => {
            send(LogEvent::Ended(LogEnd::Failed(log_error(&e).0)));
            return;
        }
    };
    let uid = pod.metadata.uid.clone();
    let (containers, container) = match choose_container(&pod, req.container.as_deref()) {
        Ok(chosen) => chosen,
        Err(e) => {
            send(LogEvent::Ended(LogEnd::Failed(e)));
            return;
        }
    };
    if !send(LogEvent::Opened {
        containers,
        container: container.clone(),
    }) {
        return;
    }
    let follow = req.follow && !req.previous;
    let mut mark = Mark::default();
    let mut backoff = Duration::from_secs(1);
    loop {
        let params = LogParams {
            container: Some(container.clone()),
            follow,
            previous: req.previous,
            timestamps: true,
            tail_lines: if mark.at.is_none() { req.tail } else { None },
            since_time: mark.at,
            ..LogParams::default()
        };
        let reader = match api.log_stream(&req.pod, &params).await {
            Ok(reader) => reader,
            Err(e) if is_not_found(&e) => {
                send(LogEvent::Ended(LogEnd::PodDeleted));
                return;
            }
            Err(e) => {
                let (text, waiting) = log_error(&e);
                if waiting && follow {
                    if !send(LogEvent::Waiting(text)) {
                        return;
                    }
                    tokio::time::sleep(WAITING_RETRY).await;
                    continue;
                }
                send(LogEvent::Ended(LogEnd::Failed(text)));
                return;
            }
        };
        if !send(LogEvent::Streaming) {
            return;
        }
        let started = Instant::now();
        let (read, broke) = match pump(reader, &mut mark, &send).await {
            Some(outcome) => outcome,
            None => return,
        };
        if !follow {
            send(LogEvent::Ended(LogEnd::Complete));
            return;
        }
        // The stream ended: read on while the container runs, else say why not.
        let why = match broke {
            Some(e) => format!("the log stream broke ({e})"),
            None => "the log stream ended".to_owned(),
        };
        match api.get(&req.pod).await {
            Err(e) if is_not_found(&e) => {
                send(LogEvent::Ended(LogEnd::PodDeleted));
                return;
            }
            Ok(pod) => match standing(&pod, uid.as_deref(), &container) {
                Standing::Gone => {
                    send(LogEvent::Ended(LogEnd::PodDeleted));
                    return;
                }
                Standing::Stopped(how) => {
                    send(LogEvent::Ended(LogEnd::Terminated(how)));
                    return;
                }
                Standing::Running => {}
            },
            // The API is not answering: try again after a while.
            Err(_) => {}
        }
        if !send(LogEvent::Reconnecting(why)) {
            return;
        }
        // A stream that keeps ending at once is asked again less and less often.
        if read > 0 || started.elapsed() > MAX_BACKOFF {
            backoff = Duration::from_secs(1);
        } else {
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
        tokio::time::sleep(backoff).await;
    }
}

/// Reads a stream to its end, sending its new lines in batches. Returns the lines read and the
/// error that broke it, or `None` once nobody listens.
async fn pump<R: AsyncBufRead + Unpin>(
    mut reader: R,
    mark: &mut Mark,
    send: &impl Fn(LogEvent) -> bool,
) -> Option<(usize, Option<std::io::Error>)> {
    let mut lines = LineReader::default();
    let mut batch: Vec<LogLine> = Vec::new();
    let mut read = 0;
    // Lines at the mark's time were read before the reconnect.
    let mut skip = mark.at_count;
    let mut deadline: Option<Instant> = None;
    let broke = loop {
        let next = tokio::select! {
            next = lines.next(&mut reader) => next,
            _ = async { match deadline { Some(d) => tokio::time::sleep_until(d).await, None => std::future::pending().await } } => {
                if !send(LogEvent::Lines(std::mem::take(&mut batch))) {
                    return None;
                }
                deadline = None;
                continue;
            }
        };
        match next {
            Ok(Some((bytes, len))) => {
                let (at, text) = split_time(&bytes);
                if !mark.admit(at, &mut skip) {
                    continue;
                }
                let kept = len - (bytes.len() - text.len()) as u64;
                batch.push(LogLine::from_bytes(text, kept));
                read += 1;
                deadline.get_or_insert_with(|| Instant::now() + BATCH_WAIT);
                if batch.len() >= BATCH {
                    if !send(LogEvent::Lines(std::mem::take(&mut batch))) {
                        return None;
                    }
                    deadline = None;
                }
            }
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    if !batch.is_empty() && !send(LogEvent::Lines(batch)) {
        return None;
    }
    Some((read, broke))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    async fn lines_of(input: &[u8]) -> Vec<(Vec<u8>, u64)> {
        let mut reader = futures::io::BufReader::with_capacity(4096, input);
        let mut lines = LineReader::default();
        let mut out = Vec::new();
        while let Some(line) = lines.next(&mut reader).await.unwrap() {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn a_megabyte_line_is_cut_at_the_cap_and_its_length_kept() {
        let mut input = vec![b'x'; 1 << 20];
        input.extend_from_slice(b"\nnext\nlast without newline");
        let lines = lines_of(&input).await;
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].0.len(), MAX_LINE);
        assert_eq!(lines[0].1, 1 << 20);
        assert_eq!(lines[1], (b"next".to_vec(), 4));
        assert_eq!(lines[2].0, b"last without newline");
        let shown = LogLine::from_bytes(&lines[0].0, lines[0].1);
        assert_eq!(shown.cut, Some(1 << 20));
        assert_eq!(LogLine::from_bytes(b"ok", 2).cut, None);
        assert!(lines_of(b"").await.is_empty());
        assert_eq!(lines_of(b"\n").await, [(Vec::new(), 0)]);
    }

    #[test]
    fn a_reconnect_skips_the_lines_it_already_read() {
        let t = |s: &str| Some(s.parse::<Timestamp>().unwrap());
        let (at, text) = split_time(b"2026-11-24T03:00:00.5Z INFO up");
        assert_eq!((at, text), (t("2026-11-24T03:00:00.5Z"), &b"INFO up"[..]));
        assert_eq!(split_time(b"no time here").0, None);
        let mut mark = Mark::default();
        let mut skip = 0;
        assert!(mark.admit(t("2026-11-24T03:00:01Z"), &mut skip));
        assert!(mark.admit(t("2026-11-24T03:00:01Z"), &mut skip));
        // Read again from that second: its two lines are skipped, a third is new.
        let mut skip = mark.at_count;
        assert_eq!(skip, 2);
        assert!(!mark.admit(t("2026-11-24T03:00:00Z"), &mut skip));
        assert!(!mark.admit(t("2026-11-24T03:00:01Z"), &mut skip));
        assert!(!mark.admit(t("2026-11-24T03:00:01Z"), &mut skip));
        assert!(mark.admit(t("2026-11-24T03:00:01Z"), &mut skip));
        assert!(mark.admit(t("2026-11-24T03:00:02Z"), &mut skip));
        assert_eq!(mark.at_count, 1);
    }
}
