//! A Secret on the real server (the demo's `payments/ledger.yaml`: a Deployment reading the
//! `ledger-db` Secret, written with `stringData`): a `kubectl patch` of its password is drift
//! shown only as digests, in every output kdrift has (check as text, JSON and YAML, diff, accept,
//! revert and its preview, git); accept refuses the value and says why; revert puts the
//! manifest's value back.

use base64::Engine;

use crate::case::Case;

const IN_GIT: &str = "demo-only-not-a-secret";
const LIVE: &str = "hunter2-live-only";

/// Neither value, plain or in base64, appears in `text`.
fn assert_masked(what: &str, text: &str) {
    let b64 = base64::engine::general_purpose::STANDARD;
    for value in [IN_GIT, LIVE] {
        for shown in [value.to_owned(), b64.encode(value)] {
            assert!(
                !text.contains(&shown),
                "{what} shows a Secret value ({shown}):\n{text}"
            );
        }
    }
}

#[test]
fn a_secret_changed_live_is_drift_shown_only_as_digests_and_reverted() {
    let Some(c) = Case::demo("secrets", "payments", &["payments/ledger.yaml"]) else {
        return;
    };
    assert_eq!(c.kdrift_ns(&["check"]).code, 0);
    c.ok(&[
        "patch",
        "secret/ledger-db",
        "-p",
        &format!(r#"{{"stringData":{{"password":"{LIVE}"}}}}"#),
    ]);

    let text = c.kdrift_ns(&["check"]);
    assert_eq!(text.code, 1, "{text:?}");
    let key = format!("secret/{}/ledger-db", c.ns());
    assert!(
        text.stdout.lines().any(|l| l.contains(&key)
            && l.contains("data.password")
            && l.matches("sha256:").count() == 2
            && l.contains("kubectl-patch")),
        "{text:?}"
    );
    assert_masked("check", &format!("{}{}", text.stdout, text.stderr));
    for format in ["json", "yaml"] {
        let out = c.kdrift_ns(&["check", "-o", format]);
        assert_eq!(out.code, 1, "{out:?}");
        assert_masked(&format!("check -o {format}"), &out.stdout);
    }
    let diff = c.kdrift_ns(&["diff", "secret/ledger-db"]);
    assert_eq!(diff.code, 1, "{diff:?}");
    assert!(diff.stdout.contains("sha256:"), "{diff:?}");
    assert_masked("diff", &format!("{}{}", diff.stdout, diff.stderr));

    let head = c.repo.head();
    let accept = c.kdrift_ns(&["accept", "secret/ledger-db"]);
    assert_masked("accept", &format!("{}{}", accept.stdout, accept.stderr));
    assert_ne!(
        accept.code, 0,
        "a Secret's value is not accepted: {accept:?}"
    );
    assert!(accept.stderr.contains("Secret"), "says why: {accept:?}");
    assert_eq!(c.repo.head(), head, "nothing committed");

    let preview = c.kdrift_ns(&["revert", "secret/ledger-db", "--dry-run"]);
    assert_masked(
        "revert --dry-run",
        &format!("{}{}", preview.stdout, preview.stderr),
    );
    let revert = c.kdrift_ns(&["revert", "secret/ledger-db", "--yes"]);
    assert_eq!(revert.code, 0, "{revert:?}");
    assert_masked("revert", &format!("{}{}", revert.stdout, revert.stderr));
    assert_eq!(c.kdrift_ns(&["check"]).code, 0);
    let live = c.ok(&["get", "secret/ledger-db", "-o", "jsonpath={.data.password}"]);
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(live.trim())
            .unwrap(),
        IN_GIT.as_bytes()
    );
}
