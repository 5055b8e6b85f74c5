//! What the demo's containers write, as pure functions of the container's run: made up on
//! demand from the pod, the container and the time, never stored, so a log costs nothing until
//! someone reads it. A healthy container writes its start-up lines, then a request line every
//! few hundred milliseconds; a crashing image (see `pods`) writes its start-up and an exception
//! with its stack, then exits with code 1. An image tagged `garbled` starts with the lines a log
//! viewer must survive: terminal escape sequences, invalid UTF-8 and a line of 1 MiB. As a
//! kubelet's log rotation does, only the newest [`KEPT_LINES`] lines of a run can be read.
use jiff::{SignedDuration, Timestamp};

use super::pods::small_hash;

/// How many of a run's newest lines the node keeps (its log rotation).
pub const KEPT_LINES: u64 = 10_000;
/// The exit code of a crashing image's run.
pub const CRASH_EXIT_CODE: i64 = 1;
/// How long after its start a running container writes its first request line.
const FIRST_REQUEST: SignedDuration = SignedDuration::from_millis(900);

/// One run of a container: what it is, and when it started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// Distinguishes runs (the pod, the container, the run's container id).
    pub seed: String,
    pub container: String,
    pub image: String,
    pub started: Timestamp,
    /// A crashing image's run: start-up, then the exception.
    pub crashes: bool,
}

/// One line with the time it was written: bytes, as a container writes them (not always
/// UTF-8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub at: Timestamp,
    pub text: Vec<u8>,
}

/// The length of the longest line a `garbled` image writes.
pub const GARBLED_LONG_LINE: usize = 1 << 20;

/// An image whose tag says `garbled` writes hostile lines at start-up.
pub fn garbled(image: &str) -> bool {
    let last = image.rsplit('/').next().unwrap_or(image);
    last.split_once(':')
        .is_some_and(|(_, tag)| tag.to_ascii_lowercase().contains("garbled"))
}

const PATHS: &[(&str, &str)] = &[
    ("GET", "/healthz"),
    ("GET", "/ready"),
    ("GET", "/api/v1/items"),
    ("GET", "/api/v1/items/4711"),
    ("POST", "/api/v1/orders"),
    ("GET", "/api/v1/orders/9f2c1b"),
    ("PUT", "/api/v1/carts/b7e4"),
    ("GET", "/metrics"),
];

impl Run {
    fn hash(&self, index: u64) -> u32 {
        small_hash(&format!("{}#{index}", self.seed))
    }

    fn version(&self) -> &str {
        let last = self.image.rsplit('/').next().unwrap_or(&self.image);
        last.split_once(':').map_or("latest", |(_, tag)| tag)
    }

    fn startup(&self) -> Vec<Vec<u8>> {
        let c = &self.container;
        let mut lines = vec![
            format!("INFO starting {c} {}", self.version()),
            format!("INFO config loaded from /etc/{c}/config.yaml"),
        ];
        if self.crashes {
            lines.push("INFO connecting to the database".into());
            lines.push("ERROR unhandled exception, exiting".into());
        } else {
            lines.push("INFO listening on :8080".into());
            lines.push("INFO ready to serve requests".into());
        }
        let mut lines: Vec<Vec<u8>> = lines.into_iter().map(String::into_bytes).collect();
        if garbled(&self.image) {
            lines.push(
                b"\x1b[31mERROR\x1b[0m colours from a logger that thinks it has a terminal"
                    .to_vec(),
            );
            lines.push(b"WARN \x1b]0;owned\x07title \x1b[2Jclear \x08\x08backspace".to_vec());
            lines.push(b"WARN invalid UTF-8: \xff\xfe \xc3( end".to_vec());
            let mut long = b"DEBUG dump ".to_vec();
            long.resize(GARBLED_LONG_LINE, b'A');
            lines.push(long);
        }
        lines
    }

    /// The stack a crashing run ends with (written without the app's time and level).
    fn stack(&self) -> Vec<String> {
        let class = self.container.replace('-', "");
        vec![
            format!(
                "Exception in thread \"main\" java.lang.NullPointerException: Cannot invoke \"com.example.{class}.db.Pool.connection()\" because \"this.pool\" is null"
            ),
            format!("\tat com.example.{class}.Server.start(Server.java:88)"),
            format!("\tat com.example.{class}.Main.main(Main.java:31)"),
        ]
    }

    /// The time between two request lines: 300 to 600 ms, by container.
    fn period(&self) -> SignedDuration {
        SignedDuration::from_millis(300 + i64::from(small_hash(&self.seed) % 300))
    }

    fn request_at(&self, k: u64) -> Timestamp {
        let period = self.period();
        let jitter = i64::from(self.hash(k) % 100);
        let steps = i64::try_from(k).unwrap_or(i64::MAX / 2);
        self.started
            + FIRST_REQUEST
            + period * i32::try_from(steps).unwrap_or(i32::MAX)
            + SignedDuration::from_millis(jitter)
    }

    /// How many lines the run has written by `now`.
    pub fn written(&self, now: Timestamp) -> u64 {
        if now < self.started {
            return 0;
        }
        let startup = self.startup().len() as u64;
        if self.crashes {
            return startup + self.stack().len() as u64;
        }
        let first = self.started + FIRST_REQUEST;
        if now < first {
            return startup;
        }
        let period = self.period().as_millis().max(1);
        let elapsed = now.duration_since(first).as_millis();
        let mut k = u64::try_from(elapsed / period).unwrap_or(0);
        // The line of step k may lie after `now` by its jitter.
        if self.request_at(k) > now {
            k = k.saturating_sub(1);
            if k == 0 && self.request_at(0) > now {
                return startup;
            }
        }
        startup + k + 1
    }

    /// Line `index` of the run (0-based).
    pub fn line(&self, index: u64) -> Line {
        let startup = self.startup();
        let n = startup.len() as u64;
        let stamp = |at: Timestamp, text: &str| Line {
            at,
            text: text.as_bytes().to_vec(),
        };
        if index < n {
            let at =
                self.started + SignedDuration::from_millis(i64::try_from(index * 7).unwrap_or(0));
            return Line {
                at,
                text: startup[usize::try_from(index).unwrap_or(0)].clone(),
            };
        }
        if self.crashes {
            let at = self.started + SignedDuration::from_millis(40);
            let stack = self.stack();
            let i = usize::try_from(index - n).unwrap_or(0).min(stack.len() - 1);
            return Line {
                at,
                text: stack[i].clone().into_bytes(),
            };
        }
        let k = index - n;
        let at = self.request_at(k);
        let h = self.hash(k);
        let (method, path) = PATHS[usize::try_from(h % PATHS.len() as u32).unwrap_or(0)];
        let (level, status) = match h % 97 {
            0 => ("ERROR", 500),
            1..=4 => ("WARN", 404),
            5..=9 => ("INFO", 304),
            _ if method == "POST" => ("INFO", 201),
            _ => ("INFO", 200),
        };
        let millis = 1 + (h / 7) % if status == 500 { 900 } else { 60 };
        stamp(at, &format!("{level} {method} {path} {status} {millis}ms"))
    }

    /// The first line still kept of `written` lines.
    pub fn first_kept(written: u64) -> u64 {
        written.saturating_sub(KEPT_LINES)
    }
}

/// `time` as the kubelet prefixes lines with `timestamps=true` (RFC 3339 with nanoseconds,
/// trailing zeros dropped, as Go's `RFC3339Nano`).
pub fn rfc3339_nano(time: Timestamp) -> String {
    let whole = time.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    let nanos = time.subsec_nanosecond();
    if nanos == 0 {
        return format!("{whole}Z");
    }
    let fraction = format!("{nanos:09}");
    format!("{whole}.{}Z", fraction.trim_end_matches('0'))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn run(crashes: bool) -> Run {
        Run {
            seed: "checkout-6944fbcdc6-dbmxm/checkout/containerd://abc".into(),
            container: "checkout".into(),
            image: "registry.example/shop/checkout:3.1.0".into(),
            started: at("2026-11-24T03:00:00Z"),
            crashes,
        }
    }

    #[test]
    fn a_healthy_container_starts_then_logs_requests_a_few_times_a_second() {
        let r = run(false);
        assert_eq!(r.written(at("2026-11-24T02:59:59Z")), 0);
        assert_eq!(r.written(at("2026-11-24T03:00:00.5Z")), 4);
        let first = r.line(0);
        assert_eq!(first.text, b"INFO starting checkout 3.1.0");
        assert_eq!(first.at, at("2026-11-24T03:00:00Z"));
        let minute = r.written(at("2026-11-24T03:01:00Z"));
        assert!((100..=210).contains(&minute), "{minute}");
        // Lines come in time order, each no later than the count says.
        let mut last = r.line(0).at;
        for i in 1..minute {
            let line = r.line(i);
            assert!(line.at >= last, "line {i} goes back in time");
            assert!(line.at <= at("2026-11-24T03:01:00Z"));
            last = line.at;
        }
        assert!(r.line(minute).at > at("2026-11-24T03:01:00Z"));
        assert!(r.line(10).text.ends_with(b"ms"), "{:?}", r.line(10).text);
        assert_eq!(r.line(10), r.line(10), "the same line every time");
        assert_eq!(Run::first_kept(25_000), 15_000);
    }

    #[test]
    fn a_crashing_container_writes_its_startup_and_an_exception() {
        let r = run(true);
        let n = r.written(at("2026-11-24T04:00:00Z"));
        let text: Vec<String> = (0..n)
            .map(|i| String::from_utf8(r.line(i).text).unwrap())
            .collect();
        assert_eq!(text.len(), 7);
        assert_eq!(text[3], "ERROR unhandled exception, exiting");
        assert!(text[4].starts_with("Exception in thread \"main\" java.lang.NullPointerException"));
        assert!(text[5].starts_with("\tat com.example.checkout.Server.start"));
    }

    #[test]
    fn timestamps_drop_trailing_zeros_as_go_does() {
        assert_eq!(
            rfc3339_nano(at("2026-11-24T03:00:00.120Z")),
            "2026-11-24T03:00:00.12Z"
        );
        assert_eq!(
            rfc3339_nano(at("2026-11-24T03:00:00Z")),
            "2026-11-24T03:00:00Z"
        );
    }
}
