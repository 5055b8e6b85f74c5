//! `kdrift check` without the IO: pair every manifest with its live object and build the report
//! (missing, unmanaged, drift per object, problems). The caller lists the live objects.
use std::collections::HashMap;

use crate::manifest::{ManifestIndex, ObjectKey};

use super::compare::{compare, missing, unmanaged};
use super::live::LiveObject;
use super::report::DriftReport;

/// What the live listing covered, so that a manifest of a kind or namespace that was not listed
/// is not called missing.
pub trait Coverage {
    fn covers(&self, key: &ObjectKey) -> bool;
}

impl<F: Fn(&ObjectKey) -> bool> Coverage for F {
    fn covers(&self, key: &ObjectKey) -> bool {
        self(key)
    }
}

/// Compares every manifest the listing covers with its live object. Live objects without a
/// manifest are listed as unmanaged only when `show_unmanaged` (the `kubectl`-like default hides
/// them). Manifest problems and `errors` (failed listings) go into the report as they are.
pub fn check(
    index: &ManifestIndex,
    live: Vec<LiveObject>,
    coverage: &dyn Coverage,
    show_unmanaged: bool,
    errors: Vec<String>,
) -> DriftReport {
    let mut report = DriftReport {
        problems: index.problems().into_iter().cloned().collect(),
        errors,
        ..DriftReport::default()
    };
    let mut live: HashMap<ObjectKey, LiveObject> =
        live.into_iter().map(|l| (l.key.clone(), l)).collect();
    for manifest in index.objects() {
        if !coverage.covers(&manifest.key) {
            continue;
        }
        let drift = match live.remove(&manifest.key) {
            Some(object) => compare(manifest, &object, &index.config),
            None => missing(&manifest.key),
        };
        report.add(drift, Some(manifest));
    }
    if show_unmanaged {
        let mut rest: Vec<ObjectKey> = live.into_keys().collect();
        rest.sort();
        for key in rest {
            report.add(unmanaged(&key), None);
        }
    }
    report
}
