//! Requests sent to API servers, counted on the client (a tower layer under every kube
//! [`kube::Client`] kdrift builds), so that what kdrift asks of a server while nothing changes
//! can be measured without the server's audit log: `benches/real_idle.rs` prints it per minute.
//! Counting is two relaxed atomic adds per request.
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use http::Request;

/// Watch requests (`?watch=…`) sent since the process started.
static WATCHES: AtomicU64 = AtomicU64::new(0);
/// Every other request (lists, gets, writes, discovery) sent since the process started.
static OTHERS: AtomicU64 = AtomicU64::new(0);

/// Requests sent by this process so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sent {
    /// Watch requests (each a new watch; a resumed watch is a new request).
    pub watches: u64,
    /// Everything else.
    pub others: u64,
}

impl Sent {
    /// All requests.
    pub fn total(&self) -> u64 {
        self.watches + self.others
    }

    /// What was sent between `earlier` and `self`.
    pub fn since(&self, earlier: Sent) -> Sent {
        Sent {
            watches: self.watches.saturating_sub(earlier.watches),
            others: self.others.saturating_sub(earlier.others),
        }
    }
}

/// The requests this process has sent so far.
pub fn sent() -> Sent {
    Sent {
        watches: WATCHES.load(Ordering::Relaxed),
        others: OTHERS.load(Ordering::Relaxed),
    }
}

/// True for a watch request: a `watch` query parameter that is not false (`watch=1`,
/// `watch=true`, as kube and kubectl send it).
fn is_watch(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        q.split('&').any(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            key == "watch" && !matches!(value, "false" | "0")
        })
    })
}

/// The layer that counts each request as it is sent.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountLayer;

impl<S> tower::Layer<S> for CountLayer {
    type Service = Count<S>;

    fn layer(&self, inner: S) -> Count<S> {
        Count { inner }
    }
}

/// A service that counts requests and passes them on unchanged.
#[derive(Debug, Clone)]
pub struct Count<S> {
    inner: S,
}

impl<S, B> tower::Service<Request<B>> for Count<S>
where
    S: tower::Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let counter = if is_watch(request.uri().query()) {
            &WATCHES
        } else {
            &OTHERS
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.inner.call(request)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn watches_are_told_from_other_requests_by_their_query() {
        assert!(is_watch(Some(
            "watch=true&timeoutSeconds=300&allowWatchBookmarks=true"
        )));
        assert!(is_watch(Some("labelSelector=a&watch=1")));
        assert!(!is_watch(Some("watch=false")));
        assert!(!is_watch(Some("limit=1&resourceVersion=0")));
        // A parameter whose name only contains "watch" is not one.
        assert!(!is_watch(Some("allowWatchBookmarks=true")));
        assert!(!is_watch(None));
    }
}
