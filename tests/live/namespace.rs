//! A manifest without a namespace goes where kubectl would put it: `-n`, else the kubeconfig
//! context's namespace, else `default`; in the live view (the real loop on a TestBackend) as in
//! `kdrift check`, and `:ctx` to a context of another namespace takes that one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_screen;

use live_screen::{keys, run, start_cluster, wait_for};

/// The DRIFT cell of the row of `name` in namespace `ns`.
fn row_drift(screen: &str, ns: &str, name: &str) -> Option<String> {
    screen.lines().find_map(|line| {
        let words = live_screen::row_words(line);
        if words.first() != Some(&ns) || words.get(1) != Some(&name) {
            return None;
        }
        let tail = line.trim_end().trim_end_matches('│').trim_end();
        ["in sync", "unmanaged", "missing", "error"]
            .iter()
            .find(|d| tail.ends_with(*d))
            .map(|d| d.to_string())
            .or_else(|| {
                let n = words.len();
                (n >= 2 && words[n - 1].starts_with("field"))
                    .then(|| format!("{} {}", words[n - 2], words[n - 1]))
            })
    })
}

/// A kubeconfig for the demo cluster at `url` with two contexts: `shop` (current, namespace
/// shop) and `payments` (namespace payments).
fn kubeconfig(url: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: demo\n  cluster:\n    server: {url}\ncontexts:\n- name: shop\n  context:\n    cluster: demo\n    user: demo\n    namespace: shop\n- name: payments\n  context:\n    cluster: demo\n    user: demo\n    namespace: payments\ncurrent-context: shop\nusers:\n- name: demo\n  user: {{}}\n"
    )
}

/// The demo's cart manifests with every `namespace:` line left out.
fn cart_without_namespace() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/shop/cart.yaml");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| line.trim() != "namespace: shop")
        .map(|line| format!("{line}\n"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_less_manifest_takes_the_contexts_namespace_and_ctx_takes_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = start_cluster(dir.path()).await;
    let config = dir.path().join("contexts");
    std::fs::write(&config, kubeconfig(&server.url())).unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir_all(&manifests).unwrap();
    std::fs::write(manifests.join("cart.yaml"), cart_without_namespace()).unwrap();
    assert!(
        !std::fs::read_to_string(manifests.join("cart.yaml"))
            .unwrap()
            .contains("namespace: shop")
    );

    let kubectl = |args: &[&str]| {
        let out = std::process::Command::new(live_screen::kubectl_bin::path())
            .arg("--kubeconfig")
            .arg(&config)
            .args(args)
            .env("HOME", dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // A hotfix in the context's namespace (kubectl, too, takes it from the context).
    kubectl(&["scale", "deployment/cart", "--replicas=5"]);

    // Every namespace watched, no `-n`: the manifest is the context's namespace's.
    let common = kdrift::cli::CommonArgs {
        kubeconfig: Some(config.clone()),
        all_namespaces: true,
        manifests: Some(manifests.clone()),
        ..kdrift::cli::CommonArgs::default()
    };
    let script = |tx, text| async move {
        wait_for(&text, "shop/cart drifted by one field", |s| {
            row_drift(s, "shop", "cart").as_deref() == Some("1 field") && s.contains(" drifted 1 ")
        })
        .await;
        // Another context, of another namespace: the manifest is that namespace's now.
        keys(&tx, ":ctx payments\n");
        wait_for(
            &text,
            "shop/cart unmanaged under the payments context",
            |s| {
                s.contains(" ctx  payments ")
                    && row_drift(s, "shop", "cart").as_deref() == Some("unmanaged")
                    && row_drift(s, "payments", "cart").as_deref() == Some("missing")
            },
        )
        .await;
        keys(&tx, "q");
    };
    run(&common, 150, 40, script).await;

    // `kdrift check` on the same flags says the same.
    let check = std::process::Command::new(env!("CARGO_BIN_EXE_kdrift"))
        .args(["check", "-A", "-o", "json", "--kubeconfig"])
        .arg(&config)
        .arg("--manifests")
        .arg(&manifests)
        .env("HOME", dir.path())
        .env("KDRIFT_LOG", "off")
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    let cart = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["key"] == "deployment/shop/cart")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(cart["status"], "drifted", "{report}");
    assert_eq!(check.status.code(), Some(1), "{report}");
    server.shutdown().await;
}
