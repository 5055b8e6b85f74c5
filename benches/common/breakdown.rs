//! Where the live view's heap goes, by part of the app: each part is cloned and the heap it
//! took is counted (a lower bound: a clone's vectors are sized exactly, and what the part shares
//! through an `Arc` with another is not copied). Needs `measure.rs`'s counting allocator.

#![allow(dead_code)]

use kdrift::app::App;

fn cloned<T: Clone>(part: &T) -> f64 {
    let before = super::measure::heap_mb();
    let copy = part.clone();
    let took = super::measure::heap_mb() - before;
    drop(copy);
    took
}

/// `cache 3.1 MB, drift 1.0 MB, …`: the heap of each part of `app`, in MB.
pub fn heap_by_part(app: &App) -> String {
    let manifests = app.manifests.as_deref().map_or(0.0, cloned);
    let parts = [
        ("rows", cloned(&app.cache)),
        ("drift ledger", cloned(&app.ledger)),
        ("watched kinds", cloned(&app.objects)),
        ("timeline", cloned(&app.changes)),
        ("manifests", manifests),
        // Again: another thread allocating meanwhile would show as a difference.
        (
            "manifests again",
            app.manifests.as_deref().map_or(0.0, cloned),
        ),
        ("table", cloned(&app.table)),
    ];
    parts
        .iter()
        .map(|(name, mb)| format!("{name} {mb:.1} MB"))
        .collect::<Vec<_>>()
        .join(", ")
}
