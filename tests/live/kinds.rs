//! Every kind in the real loop (`FleetSession::drive` on a TestBackend) against the demo cluster: the
//! incident's `kubectl edit configmap`, `kubectl patch svc` and `kubectl annotate ingress` and a
//! rotated Secret (the real kubectl) show in `:drift` with their managers, as they are watched;
//! `a` accepts the ConfigMap into git and `r` reverts the Service from the list, which then
//! shows them no more; the Secret's value is on no screen.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_screen;

use crossterm::event::KeyCode;
use live_screen::{demo, key, keys, wait_for};

const PLANTED: &str = "planted-s3cret-Xq9";

/// The `:drift` row of `kind` `namespace`/`name`, as drawn.
fn list_row<'s>(screen: &'s str, kind: &str, namespace: &str, name: &str) -> Option<&'s str> {
    screen.lines().find(|line| {
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == '│')
            .filter(|w| !w.is_empty())
            .collect();
        words.len() > 3 && words[0] == kind && words[1] == namespace && words[2] == name
    })
}

fn no_secret(screen: &str) -> bool {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(PLANTED);
    !screen.contains(PLANTED) && !screen.contains(&encoded)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_of_every_kind_is_listed_and_settled_from_the_drift_view() {
    let demo = demo().await;
    let d = &demo;
    let first = demo.git(&["rev-parse", "HEAD"]);
    let script = move |tx, text| async move {
        // Once watched: the list is empty of the seeded objects.
        keys(&tx, ":drift\n");
        wait_for(&text, "an empty drift list", |s| {
            s.contains("drift(all)[0]") && s.contains("every object of the manifests is in sync")
        })
        .await;

        let editor = d.dir.path().join("edit.sh");
        std::fs::write(
            &editor,
            "#!/bin/sh\nsed -i 's/FEATURE_NEW_CHECKOUT: \"off\"/FEATURE_NEW_CHECKOUT: \"on\"/' \"$1\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let edit = tokio::process::Command::new(live_screen::kubectl_bin::path())
            .arg("--kubeconfig")
            .arg(&d.kubeconfig)
            .args(["edit", "configmap/frontend-config", "-n", "shop"])
            .env("EDITOR", &editor)
            .env("HOME", d.dir.path())
            .output()
            .await
            .unwrap();
        assert!(edit.status.success(), "{edit:?}");
        d.kubectl(&[
            "-n",
            "shop",
            "patch",
            "svc/frontend",
            "-p",
            r#"{"spec":{"type":"NodePort"}}"#,
        ])
        .await;
        d.kubectl(&["-n", "shop", "annotate", "ingress/frontend", "hotfix=yes"])
            .await;
        d.kubectl(&[
            "-n",
            "payments",
            "patch",
            "secret/ledger-db",
            "-p",
            &format!(r#"{{"stringData":{{"password":"{PLANTED}"}}}}"#),
        ])
        .await;

        wait_for(&text, "every kind in the list", |s| {
            list_row(s, "ConfigMap", "shop", "frontend-config")
                .is_some_and(|r| r.contains("1 field") && r.contains("kubectl-edit"))
                // The type, not the externalTrafficPolicy the server fills in for a NodePort.
                && list_row(s, "Service", "shop", "frontend")
                    .is_some_and(|r| r.contains("1 field") && r.contains("kubectl-patch"))
                && list_row(s, "Ingress", "shop", "frontend")
                    .is_some_and(|r| r.contains("1 field") && r.contains("kubectl-annotate"))
                && list_row(s, "Secret", "payments", "ledger-db")
                    .is_some_and(|r| r.contains("1 field") && r.contains("kubectl-patch"))
                && s.contains("drifted 4")
        })
        .await;

        // The Secret's diff: digests, never the value. The list is sorted by kind: ConfigMap,
        // Ingress, Secret, Service.
        keys(&tx, "jj");
        keys(&tx, "d");
        wait_for(&text, "the Secret's diff", |s| {
            s.contains("diff secret payments/ledger-db") && s.contains("password: hmac-sha256:")
        })
        .await;
        assert!(no_secret(&text.lock().unwrap()));
        // `a` on it refuses: a Secret's value never goes to git.
        keys(&tx, "a");
        wait_for(&text, "the refusal", |s| s.contains("a Secret's value")).await;
        assert!(no_secret(&text.lock().unwrap()));
        key(&tx, KeyCode::Esc);
        wait_for(&text, "back in the list", |s| s.contains("drift(all)[4]")).await;

        // Revert the Service: the last row. Before the accept below: the demo's Argo CD syncs
        // the shop app as soon as a commit it has not synced lands, which would revert the
        // Service itself.
        keys(&tx, "G");
        keys(&tx, "r");
        wait_for(&text, "the Service's revert preview", |s| {
            s.contains("revert service shop/frontend")
                && s.contains("-  type: NodePort")
                && s.contains("+  type: ClusterIP")
        })
        .await;
        keys(&tx, "y");
        wait_for(&text, "reverted, back in the list", |s| {
            s.contains("reverted service/shop/frontend to the manifest")
                && s.contains("drift(all)[3]")
                && list_row(s, "Service", "shop", "frontend").is_none()
        })
        .await;

        // Accept the ConfigMap: the first row.
        keys(&tx, "g");
        keys(&tx, "a");
        wait_for(&text, "the ConfigMap's accept view", |s| {
            s.contains("accept configmap shop/frontend-config")
                && s.contains("[x] data.FEATURE_NEW_CHECKOUT")
                && s.contains("+  FEATURE_NEW_CHECKOUT: \"on\"")
        })
        .await;
        key(&tx, KeyCode::Enter);
        // (The commit may set Argo CD syncing the shop app: the count is not waited for.)
        wait_for(&text, "the commit, back in the list", |s| {
            s.contains("committed ")
                && s.contains("configmap/shop/frontend-config")
                && s.contains("drift(all)[")
                && list_row(s, "ConfigMap", "shop", "frontend-config").is_none()
        })
        .await;
        keys(&tx, "q");
    };
    demo.drive(script).await;
    assert_ne!(demo.git(&["rev-parse", "HEAD"]), first);
    assert_eq!(
        demo.git(&["show", "--name-only", "--format=", "HEAD"]),
        "shop/frontend.yaml\n"
    );
    let service = demo
        .kubectl(&[
            "-n",
            "shop",
            "get",
            "svc/frontend",
            "-o",
            "jsonpath={.spec.type}",
        ])
        .await;
    assert_eq!(service, "ClusterIP");
    demo.server.shutdown().await;
}
