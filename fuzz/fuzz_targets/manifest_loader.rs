//! Fuzz target: see `checks::manifest_loader` for the property.
#![no_main]

#[path = "../checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::manifest_loader(data));
