//! The whole demo repository holds a Helm chart (`demo/search`), and a check is green only when
//! git's desired state was read whole: a chart no helm renders is a problem (exit 2). The tests
//! that check the whole demo give kdrift the helm of the test run (`KDRIFT_TEST_HELM`, as CI
//! sets it, else `helm` on PATH) and expect the exit code that follows from it.
#![allow(dead_code)]

use std::path::PathBuf;

/// The helm to render the demo's chart with, if the test run has one.
pub fn helm() -> Option<PathBuf> {
    std::env::var_os("KDRIFT_TEST_HELM")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::split_paths(&std::env::var_os("PATH")?)
                .map(|dir| dir.join("helm"))
                .find(|p| p.is_file())
        })
}

/// The value of `KDRIFT_HELM` for kdrift: that helm, else a path that is none.
pub fn kdrift_helm() -> PathBuf {
    helm().unwrap_or_else(|| PathBuf::from("/nonexistent/helm"))
}

/// What a check of the whole demo exits with when everything it reads is `code` (0 in sync,
/// 1 drifted): that, when a helm renders the chart; else 2, the chart unread. Said on stderr.
pub fn expected(code: i32) -> i32 {
    if helm().is_some() {
        code
    } else {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "\nno helm (KDRIFT_TEST_HELM or on PATH): the demo's chart is unread, so its check exits 2\n"
        );
        2
    }
}
