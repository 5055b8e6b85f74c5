//! Issue 46 on the real server: every non-pointer `omitempty` scalar of the structs the objects
//! of `testdata/zero-values/objects.yaml` use, sent at Go's zero, is dropped (what
//! `kdrift_schema::gotypes` says), and a manifest holding them is in sync right after apply.

use crate::case::Case;
use crate::zero_values_util;

#[test]
fn zero_values_the_server_drops_are_dropped_and_not_drift() {
    let Some(c) = Case::new("zero-values", |ns| {
        let objects = zero_values_util::objects(ns);
        vec![(
            "zero.yaml".to_owned(),
            zero_values_util::manifests(&objects),
        )]
    }) else {
        return;
    };
    let objects = zero_values_util::objects(c.ns());
    zero_values_util::assert_zeros_are_no_drift(
        &objects,
        &c.repo.path("zero.yaml"),
        &|args| c.ok(args),
        &|name, text| c.file(name, text),
        &|| {
            let run = c.kdrift_ns(&["check"]);
            (run.code, format!("{run:?}"))
        },
    );
}
