//! Which kubectl the tests drive: the one `KDRIFT_TEST_KUBECTL` names, else `kubectl` on PATH
//! (`.ci/run` runs the kubectl tests with both the PATH one and Debian's 1.20).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The kubectl binary.
pub fn path() -> PathBuf {
    if let Some(named) = std::env::var_os("KDRIFT_TEST_KUBECTL").filter(|v| !v.is_empty()) {
        return PathBuf::from(named);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("kubectl"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!(
                "these tests drive the real kubectl: put one on PATH or name it in KDRIFT_TEST_KUBECTL"
            )
        })
}

/// The kubectl's minor version (`20` for 1.20), from `kubectl version --client -o json`.
pub fn minor() -> u32 {
    static MINOR: OnceLock<u32> = OnceLock::new();
    *MINOR.get_or_init(|| {
        let out = Command::new(path())
            .args(["version", "--client", "-o", "json"])
            .output()
            .expect("kubectl runs");
        let version: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("kubectl version prints JSON");
        let minor = version["clientVersion"]["minor"].as_str().unwrap_or("");
        minor
            .trim_end_matches('+')
            .parse()
            .unwrap_or_else(|_| panic!("no minor version in {version}"))
    })
}
