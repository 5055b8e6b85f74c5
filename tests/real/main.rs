//! The real-server tier: kdrift and the real kubectl against a real Kubernetes v1.36 API server
//! (realk8s: kube-apiserver, controller manager, scheduler, etcd, a stand-in kubelet), and the
//! demo cluster's conformance to it. Which server, and when the tier is skipped (with the reason
//! written to stderr): `server.rs`; how to run it: docs/real-server.md.
//!
//! - `cli`: `kdrift check`, `diff`, `accept` (a commit) and `revert` of every kubectl write path,
//!   each attributed to its manager; a Secret's values never shown;
//! - `changes`: `kdrift changes` and `kdrift blame` after kubectl scale, set image, label
//!   and another manager's patch;
//! - `fleet`: `check` and `compare` over two real servers as two contexts (a second realk8s);
//! - `kustomize`: the demo's kustomize app (`demo/inventory`, prod overlay) applied with
//!   `kubectl apply -k`, drifted, accepted into the overlay and reverted;
//! - `secrets`: a Secret changed live, shown only as digests, refused by accept, reverted;
//! - `live`: the live view's rows and keys (`FleetSession::drive` on a TestBackend);
//! - `readonly`: a ServiceAccount bound to `view`, through a `kubectl create token` kubeconfig;
//! - `third_party`: answers found wrong on third-party repositories (a port whose manifest
//!   omits `protocol`, defaults that follow another field, one-step reverts of nested fields);
//! - `transport`: HTTP/2 to the server, many reads and a watch on one connection;
//! - `zero_values`: zero values a server drops (`hostNetwork: false`) are dropped and not drift;
//! - `conformance`: one kubectl script run against the demo cluster and the real server,
//!   compared command by command (testdata/conformance/).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../changes_util/mod.rs"]
mod changes_util;
#[path = "../common/mod.rs"]
mod common;
#[path = "../headless_util/mod.rs"]
mod headless_util;
#[path = "../kubectl_bin/mod.rs"]
pub mod kubectl_bin;
#[path = "../live_screen/mod.rs"]
mod live_screen;

#[path = "../realk8s_unpack/mod.rs"]
mod realk8s_unpack;
#[path = "../zero_values_util/mod.rs"]
mod zero_values_util;

mod case;
mod changes;
mod cli;
mod conformance;
mod fleet;
mod kustomize;
mod live;
mod readonly;
mod rollback;
mod secrets;
mod server;
mod third_party;
mod transport;
mod zero_values;

/// Says, in every run, whether the tier runs and against what (on stderr, past the capture).
#[test]
fn the_tier_runs_or_says_why_not() {
    if let Some(real) = server::real() {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "\nkdrift real-server tier: against {} (kubectl {})",
            real.origin,
            common::kubectl_bin::path().display()
        );
        real.ok(&["get", "--raw", "/version"]);
    }
}
