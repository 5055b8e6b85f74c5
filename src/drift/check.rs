//! `kdrift check` without the IO: pair every manifest with its live object and build the report
//! (missing, unmanaged, drift per object, problems). The caller lists the live objects.
use std::collections::HashMap;

use crate::manifest::{ManifestIndex, ManifestObject, ObjectKey};

use super::ObjectDrift;
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
    let pairs: Vec<(&ManifestObject, Option<LiveObject>)> = index
        .objects()
        .filter(|manifest| coverage.covers(&manifest.key))
        .map(|manifest| (manifest, live.remove(&manifest.key)))
        .collect();
    let compare_pair = |(manifest, object): &(&ManifestObject, Option<LiveObject>)| match object {
        Some(object) => compare(manifest, object, &index.config),
        None => missing(&manifest.key),
    };
    // Thousands of objects: every core takes a share (each compare is independent).
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let drifts: Vec<ObjectDrift> = if workers == 1 || pairs.len() < 256 {
        pairs.iter().map(compare_pair).collect()
    } else {
        let chunk = pairs.len().div_ceil(workers);
        std::thread::scope(|scope| {
            let handles: Vec<_> = pairs
                .chunks(chunk)
                .map(|share| {
                    (
                        share,
                        scope.spawn(move || share.iter().map(compare_pair).collect::<Vec<_>>()),
                    )
                })
                .collect();
            // A share whose worker died is computed again here, so that drifts stay in order.
            handles
                .into_iter()
                .flat_map(|(share, handle)| {
                    handle
                        .join()
                        .unwrap_or_else(|_| share.iter().map(compare_pair).collect())
                })
                .collect()
        })
    };
    for ((manifest, _), drift) in pairs.iter().zip(drifts) {
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
