//! The log view in the real loop against the demo cluster: on the crash-looping Deployment,
//! `enter`, select a pod, `l` shows its log and `p` the crashed run's stack trace; a container
//! writing escape sequences, invalid UTF-8 and a 1 MiB line is shown plainly; a 403 on
//! `pods/log`, a pod deleted while viewed and a container that never started are each said.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_screen;

use kdrift::cluster::client::connect;
use live_screen::{demo, key, keys, run_on, wait_for};

/// The restarts of the first pod listed (the newest, where the cursor starts).
fn first_pod_restarts(screen: &str) -> Option<u32> {
    let mut lines = screen.lines().skip_while(|l| !l.contains("PODS"));
    let pod = lines.nth(1)?;
    let words: Vec<&str> = pod.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "restarts")?;
    words.get(at.checked_sub(1)?)?.parse().ok()
}

/// The pod whose log is shown, from the title (`log shop/NAME [container]`).
fn logged_pod(screen: &str) -> Option<String> {
    let line = screen.lines().find(|l| l.contains(" log shop/"))?;
    let rest = &line[line.find(" log shop/")? + " log shop/".len()..];
    Some(rest.split(' ').next()?.to_owned())
}

/// `kubectl set image` of shop's Deployment `name` to `image`, through `demo`'s kubectl.
async fn set_image(demo: &live_screen::Demo, name: &str, image: &str) {
    let deployment = format!("deployment/{name}");
    let container = format!("{name}={image}");
    demo.kubectl(&["set", "image", "-n", "shop", &deployment, &container])
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_then_p_shows_the_crashed_containers_last_lines() {
    let demo = demo().await;
    let common = demo.watching_only();
    let conn = connect(&common.connection()).await.unwrap();
    set_image(
        &demo,
        "checkout",
        "registry.example/shop/checkout:3.2.0-crash",
    )
    .await;
    let script = |tx, text| async move {
        wait_for(&text, "the table", |s| s.contains("checkout")).await;
        keys(&tx, "/checkout\n");
        key(&tx, crossterm::event::KeyCode::Enter);
        wait_for(&text, "a crashed pod first in the detail", |s| {
            s.contains("deployment shop/checkout") && first_pod_restarts(s).is_some_and(|r| r > 0)
        })
        .await;
        // The cursor moves down and back to the newest pod.
        keys(&tx, "jk");
        keys(&tx, "l");
        wait_for(&text, "the pod's log", |s| {
            logged_pod(s).is_some()
                && s.contains("[checkout]")
                && s.contains("INFO starting checkout")
        })
        .await;
        keys(&tx, "p");
        wait_for(&text, "the previous run's stack trace", |s| {
            s.contains("previous run")
                && s.contains("ERROR unhandled exception, exiting")
                && s.contains("java.lang.NullPointerException")
                && s.contains("        at com.example.checkout.Server.start")
        })
        .await;
        key(&tx, crossterm::event::KeyCode::Esc);
        wait_for(&text, "back in the detail", |s| {
            s.contains("REVISIONS") && !s.contains("previous run")
        })
        .await;
        keys(&tx, "q");
    };
    run_on(conn, &common, 150, 40, script).await;
    demo.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_lines_a_403_a_deleted_pod_and_a_container_never_started_are_said_plainly() {
    let demo = demo().await;
    let common = demo.watching_only();
    let conn = connect(&common.connection()).await.unwrap();
    set_image(&demo, "cart", "registry.example/shop/cart:1.0-garbled").await;
    let server = &demo.server;
    let demo_ref = &demo;
    let script = |tx, text| async move {
        wait_for(&text, "the table", |s| s.contains("cart")).await;
        keys(&tx, "/cart\n");
        // The garbled revision rolled out: no pod of the old one is first in the detail (pods
        // created in the same second as the old ones are ordered by name).
        wait_for(&text, "cart rolled out", |s| {
            s.lines()
                .any(|l| l.contains(" cart ") && l.contains("complete"))
        })
        .await;
        key(&tx, crossterm::event::KeyCode::Enter);
        wait_for(&text, "the garbled pods running", |s| {
            s.contains("deployment shop/cart")
                && s.contains("1.0-garbled")
                && s.contains(" Running ")
                && !s.contains("Pending")
                // The old revision's pods gone: the cursor's first pod is a garbled one.
                && !s.contains("Terminating")
        })
        .await;
        keys(&tx, "l");
        wait_for(&text, "the log", |s| s.contains("INFO GET")).await;
        // The hostile lines come just after the start-up, at the top.
        keys(&tx, "g");
        wait_for(
            &text,
            "escapes shown, UTF-8 replaced, the long line cut",
            |s| {
                s.contains("^[[31mERROR^[[0m colours")
                    && s.contains("^[]0;owned^Gtitle ^[[2Jclear ^H^Hbackspace")
                    && s.contains("invalid UTF-8: \u{fffd}\u{fffd} \u{fffd}( end")
                    && s.contains(
                        "[line cut: 1,048,576 bytes, the first 65,536 shown] DEBUG dump AAA",
                    )
                    && s.contains("paused (G follows)")
            },
        )
        .await;
        assert!(!text.lock().unwrap().contains('\u{1b}'));
        let pod = logged_pod(&text.lock().unwrap()).unwrap();

        server.faults().forbid_resource("", "pods/log");
        keys(&tx, "pp");
        wait_for(&text, "the 403 in the API's words", |s| {
            s.contains("cannot get resource \"pods/log\"")
        })
        .await;
        server.faults().allow_resource("", "pods/log");
        keys(&tx, "pp");
        wait_for(&text, "the log again", |s| s.contains("streaming")).await;

        demo_ref
            .kubectl(&["delete", "pod", "-n", "shop", &pod, "--wait=false"])
            .await;
        wait_for(&text, "the pod deleted", |s| s.contains("pod deleted")).await;

        key(&tx, crossterm::event::KeyCode::Esc);
        set_image(demo_ref, "cart", "registry.example/shop/cart:1.1-missing").await;
        wait_for(&text, "the pull failing", |s| s.contains("ErrImagePull")).await;
        keys(&tx, "gl");
        wait_for(&text, "waiting to start, asked again", |s| {
            s.contains("is waiting to start")
        })
        .await;
        keys(&tx, "q");
    };
    run_on(conn, &common, 150, 40, script).await;
    demo.server.shutdown().await;
}
