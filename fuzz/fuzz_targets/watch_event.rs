//! Fuzz target: see `checks::watch_event` for the property.
#![no_main]

#[path = "../checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::watch_event(data));
