//! Accept in the real loop (`FleetSession::drive` on a TestBackend) against the demo cluster, its
//! manifests in a temporary git repository: a `kubectl scale` hotfix (the real kubectl) is
//! accepted with `a` and `enter`; the commit changes exactly the one line, the comments stay,
//! the status bar names the commit, and the row goes back in sync without a restart. A value
//! that moved live since it was shown, a dirty manifest file and a failing hook are refused, and
//! say so.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_screen;

use std::sync::{Arc, Mutex};

use crossterm::event::KeyCode;
use kdrift::runtime::event_loop::Event;
use live_screen::{Demo, changed_lines, demo, key, keys, keys_until, wait_for};
use tokio::sync::mpsc::UnboundedSender;

/// The row of `name` in the table, as drawn.
fn row<'s>(screen: &'s str, name: &str) -> Option<&'s str> {
    screen
        .lines()
        .find(|line| live_screen::row_words(line).get(1) == Some(&name))
}

fn row_ends_with(screen: &str, name: &str, drift: &str) -> bool {
    row(screen, name).is_some_and(|l| {
        l.trim_end()
            .trim_end_matches('│')
            .trim_end()
            .ends_with(drift)
    })
}

/// The message under the status bar (it may wrap onto several lines), as one line.
fn status_line(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let bar = lines
        .iter()
        .rposition(|l| l.starts_with(" ctx "))
        .map_or(lines.len().saturating_sub(1), |at| at + 1);
    let joined: Vec<&str> = lines[bar.min(lines.len())..]
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    joined.join(" ")
}

/// frontend in sync, then `kubectl scale` to 5: the row drifts; select it and press `a`.
async fn scale_and_press_a(d: &Demo, tx: &UnboundedSender<Event>, text: &Arc<Mutex<String>>) {
    wait_for(text, "frontend in sync", |s| {
        row_ends_with(s, "frontend", "in sync")
    })
    .await;
    d.kubectl(&["-n", "shop", "scale", "deployment/frontend", "--replicas=5"])
        .await;
    wait_for(text, "frontend drifted by one field", |s| {
        row_ends_with(s, "frontend", "1 field")
    })
    .await;
    keys(tx, "/shop/frontend\n");
    keys(tx, "a");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scale_hotfix_is_accepted_in_three_keys_and_the_row_goes_back_in_sync() {
    let demo = demo().await;
    let before = demo.read("shop/frontend.yaml");
    let first = demo.git(&["rev-parse", "HEAD"]);
    let d = &demo;
    let script = move |tx, text| async move {
        scale_and_press_a(d, &tx, &text).await;
        wait_for(&text, "the accept view with its diff", |s| {
            s.contains("accept deployment shop/frontend")
                && s.contains("[x] spec.replicas")
                && s.contains("2 → 5")
                && s.contains("shop/frontend.yaml:3")
                && s.contains("-  replicas: 2")
                && s.contains("+  replicas: 5")
        })
        .await;
        key(&tx, KeyCode::Enter);
        wait_for(&text, "the commit in the status bar", |s| {
            s.contains("committed ")
                && s.contains("kdrift: accept live spec.replicas of deployment/shop/frontend")
        })
        .await;

        let head = d.git(&["rev-parse", "--short", "HEAD"]);
        assert!(
            text.lock()
                .unwrap()
                .contains(&format!("committed {}", head.trim())),
            "the status bar names the commit"
        );
        assert_ne!(d.git(&["rev-parse", "HEAD"]), first);
        assert_eq!(
            d.git(&["show", "--name-only", "--format=", "HEAD"]),
            "shop/frontend.yaml\n",
            "one file committed"
        );
        let patch = d.git(&["show", "--format=", "--unified=0", "HEAD"]);
        assert_eq!(
            changed_lines(&patch),
            ["-  replicas: 2", "+  replicas: 5"],
            "{patch}"
        );
        let after = d.read("shop/frontend.yaml");
        assert_eq!(after, before.replace("  replicas: 2\n", "  replicas: 5\n"));
        for comment in before.lines().filter(|l| l.trim_start().starts_with('#')) {
            assert!(after.contains(comment), "comment kept: {comment}");
        }
        assert_eq!(d.git(&["status", "--porcelain"]), "", "nothing left over");

        // The file watcher sees the commit's file: back in sync, no restart.
        wait_for(&text, "frontend back in sync", |s| {
            row_ends_with(s, "frontend", "in sync")
        })
        .await;
        keys(&tx, "q");
    };
    demo.drive(script).await;
    demo.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moved_value_a_dirty_file_and_a_failing_hook_are_refused_and_say_so() {
    let demo = demo().await;
    let before = demo.read("shop/frontend.yaml");
    let first = demo.git(&["rev-parse", "HEAD"]);
    let d = &demo;
    let script = move |tx, text| async move {
        scale_and_press_a(d, &tx, &text).await;
        wait_for(&text, "the accept view", |s| s.contains("2 → 5")).await;

        // Scaled again while the view is open: enter refuses, nothing is written.
        d.kubectl(&["-n", "shop", "scale", "deployment/frontend", "--replicas=6"])
            .await;
        key(&tx, KeyCode::Enter);
        wait_for(&text, "the refusal", |s| {
            status_line(s) == "spec.replicas changed live since it was shown (5 → 6); press a again"
        })
        .await;
        assert_eq!(d.read("shop/frontend.yaml"), before);
        assert_eq!(d.git(&["rev-parse", "HEAD"]), first);

        // The user's own unfinished edit of the file: the view warns, enter refuses.
        let mine = before.replace("# Owner:", "# Owners:");
        std::fs::write(d.manifests.join("shop/frontend.yaml"), &mine).unwrap();
        keys_until(&tx, &text, "a", "the warning", |s| {
            s.contains("2 → 6")
                && s.contains("shop/frontend.yaml has uncommitted changes: enter will refuse")
        })
        .await;
        key(&tx, KeyCode::Enter);
        wait_for(&text, "the whole dirty-file refusal", |s| {
            let line = status_line(s);
            line.starts_with(
                "shop/frontend.yaml has uncommitted changes: commit or stash them first",
            ) && line.ends_with("nothing was written")
        })
        .await;
        assert_eq!(d.read("shop/frontend.yaml"), mine, "nothing written");
        assert_eq!(d.git(&["rev-parse", "HEAD"]), first);

        // A pre-commit hook that fails: the file is written, git's words are shown.
        std::fs::write(d.manifests.join("shop/frontend.yaml"), &before).unwrap();
        let hook = d.manifests.join(".git/hooks/pre-commit");
        std::fs::write(
            &hook,
            "#!/bin/sh\necho 'lint: replicas must be even' >&2\nexit 1\n",
        )
        .unwrap();
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        // The file changed back: its reload may still be computing the row's drift.
        keys_until(&tx, &text, "a", "the view without a warning", |s| {
            s.contains("2 → 6") && !s.contains("uncommitted changes")
        })
        .await;
        key(&tx, KeyCode::Enter);
        wait_for(&text, "git's message", |s| {
            let line = status_line(s);
            line.starts_with("git commit failed; the file is written but not committed:")
                && line.contains("lint: replicas must be even")
        })
        .await;
        assert_eq!(
            d.read("shop/frontend.yaml"),
            before.replace("  replicas: 2\n", "  replicas: 6\n"),
            "written, not committed"
        );
        assert_eq!(d.git(&["rev-parse", "HEAD"]), first);
        keys(&tx, "q");
    };
    demo.drive(script).await;
    demo.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q_while_a_commit_runs_waits_for_it_and_says_what_it_did() {
    let demo = demo().await;
    // A slow hook: the commit is still running when q is pressed.
    let hook = demo.manifests.join(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\nsleep 2\n").unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let first = demo.git(&["rev-parse", "HEAD"]);
    let d = &demo;
    let script = move |tx, text| async move {
        scale_and_press_a(d, &tx, &text).await;
        wait_for(&text, "the accept view", |s| s.contains("+  replicas: 5")).await;
        key(&tx, KeyCode::Enter);
        keys(&tx, "q");
        wait_for(&text, "the quit waiting for the commit", |s| {
            status_line(s).contains("quitting once the accept or revert under way ends")
        })
        .await;
    };
    let outcomes = live_screen::run(&demo.common, 150, 40, script).await;
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert!(outcomes[0].starts_with("committed "), "{outcomes:?}");
    assert_eq!(
        demo.git(&["rev-parse", "HEAD~1"]),
        first,
        "the commit was made"
    );
    demo.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_manifest_and_a_signature_that_would_prompt_are_said_in_the_status_bar() {
    let demo = demo().await;
    let file = demo.manifests.join("shop/frontend.yaml");
    let before = demo.read("shop/frontend.yaml");
    let first = demo.git(&["rev-parse", "HEAD"]);
    let mode = |mode| std::fs::Permissions::from_mode(mode);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, mode(0o444)).unwrap();
    // Signing on, with a signing program that can only fail without a terminal to ask on.
    let signer = demo.manifests.join(".git/ask-passphrase");
    std::fs::write(
        &signer,
        "#!/bin/sh\nexec 3<>/dev/tty || exit 2\nread pass <&3\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&signer, mode(0o755)).unwrap();
    demo.git(&["config", "commit.gpgsign", "true"]);
    demo.git(&["config", "gpg.program", signer.to_str().unwrap()]);
    let d = &demo;
    let (file, before_text) = (&file, &before);
    let script = move |tx, text| async move {
        scale_and_press_a(d, &tx, &text).await;
        wait_for(&text, "the accept view", |s| s.contains("2 → 5")).await;
        key(&tx, KeyCode::Enter);
        wait_for(&text, "the read-only refusal", |s| {
            let line = status_line(s);
            line.contains("shop/frontend.yaml is read-only (mode 0444)")
                && line.contains("chmod u+w")
                && line.ends_with("nothing was written")
        })
        .await;
        assert_eq!(
            &d.read("shop/frontend.yaml"),
            before_text,
            "nothing written"
        );

        // Made writable: the commit cannot be signed; said, the file kept written.
        std::fs::set_permissions(file, mode(0o644)).unwrap();
        keys_until(&tx, &text, "a", "the accept view again", |s| {
            s.contains("2 → 5")
        })
        .await;
        key(&tx, KeyCode::Enter);
        wait_for(&text, "the signing refusal", |s| {
            let line = status_line(s);
            line.starts_with("git commit could not sign the commit")
                && line.contains("commit.gpgsign=false")
                && line.contains("the file is written but not committed")
        })
        .await;
        assert!(d.read("shop/frontend.yaml").contains("  replicas: 5\n"));
        keys(&tx, "q");
    };
    demo.drive(script).await;
    assert_eq!(demo.git(&["rev-parse", "HEAD"]), first, "no commit");
    demo.server.shutdown().await;
}
