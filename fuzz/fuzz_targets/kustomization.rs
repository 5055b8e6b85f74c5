//! Fuzz target: see `checks::kustomization` for the property.
#![no_main]

use std::sync::OnceLock;

#[path = "../checks/mod.rs"]
mod checks;

/// One folder for the whole run: the input is written into it each time.
static FOLDER: OnceLock<checks::KustomizeFolder> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let folder = FOLDER.get_or_init(|| checks::KustomizeFolder::new().expect("a temporary folder"));
    checks::kustomization(folder, data);
});
