//! Replays the fuzz targets' checked-in inputs through the same checks the targets run
//! (`fuzz/checks/`), on the stable toolchain: every crash a fuzz run found, once fixed, has its
//! input in `fuzz/regressions/<target>/`, and the seed corpus in `fuzz/corpus/<target>/` is
//! replayed too. See docs/fuzzing.md.
use crate::checks;

use std::path::{Path, PathBuf};

/// The inputs of `target` in `fuzz/regressions/` and `fuzz/corpus/`, by path.
fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut found = Vec::new();
    for folder in ["regressions", "corpus"] {
        let Ok(entries) = std::fs::read_dir(root.join(folder).join(target)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_file() {
                let bytes = std::fs::read(&path).unwrap();
                found.push((path, bytes));
            }
        }
    }
    found.sort();
    assert!(!found.is_empty(), "no inputs for the fuzz target {target}");
    found
}

/// Runs `check` on every input of `target`, naming the input that fails.
fn replay(target: &str, mut check: impl FnMut(&[u8])) {
    for (path, bytes) in inputs(target) {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&bytes)));
        if let Err(panic) = result {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            panic!("{}: {message}", path.display());
        }
    }
}

#[test]
fn manifest_loader_inputs_pass() {
    replay("manifest_loader", checks::manifest_loader);
}

#[test]
fn editor_inputs_pass() {
    replay("editor", checks::editor);
}

#[test]
fn config_inputs_pass() {
    replay("config", checks::config);
}

#[test]
fn kustomization_inputs_pass() {
    let folder = checks::KustomizeFolder::new().unwrap();
    replay("kustomization", |data| checks::kustomization(&folder, data));
}

#[test]
fn watch_event_inputs_pass() {
    replay("watch_event", checks::watch_event);
}
