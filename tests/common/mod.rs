//! A demo cluster for integration tests: a `SimServer` on a free port with its kubeconfig in a
//! temporary folder, and the real kubectl run against it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use kdrift::sim::controller::Timings;
use kdrift::sim::scenario::Scenario;
use kdrift::sim::{SimConfig, SimServer};
use serde_json::Value;

/// Declared by each test binary beside this module (a file is loaded as one module only).
pub use crate::kubectl_bin;

/// A running demo cluster (seeded, scenario none, fast timings) and a kubeconfig for it.
pub struct Cluster {
    pub server: SimServer,
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
    // Declared last: dropped after the server, whose tasks run on it.
    pub runtime: tokio::runtime::Runtime,
}

impl Cluster {
    pub fn start() -> Cluster {
        Self::start_with(true)
    }

    pub fn start_with(seed: bool) -> Cluster {
        Self::start_config(SimConfig {
            port: 0,
            scenario: Scenario::None,
            seed,
            timings: Timings::fast(),
            ..SimConfig::default()
        })
    }

    /// A seeded cluster (fast timings) whose GitOps controllers read `repo` as the demo
    /// repository, self-heal acting `self_heal` after an out-of-band change.
    pub fn start_gitops(repo: &std::path::Path, self_heal: Duration) -> Cluster {
        Self::start_config(SimConfig {
            timings: Timings {
                self_heal,
                ..Timings::fast()
            },
            gitops_repos: [(
                kdrift::sim::scenario::DEMO_REPO_URL.to_string(),
                repo.to_path_buf(),
            )]
            .into_iter()
            .collect(),
            ..SimConfig::default()
        })
    }

    pub fn start_config(config: SimConfig) -> Cluster {
        // Found (or the test fails saying how to name one) before the cluster starts.
        kubectl_bin::path();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let server = runtime.block_on(SimServer::start(config)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(&kubeconfig, server.kubeconfig_yaml()).unwrap();
        Cluster {
            server,
            dir,
            kubeconfig,
            runtime,
        }
    }

    /// A kubectl command against this cluster (its cache in the temporary folder).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(kubectl_bin::path());
        cmd.args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", self.dir.path())
            .env("KUBECACHEDIR", self.dir.path().join("cache"))
            .env_remove("KUBECTL_EXTERNAL_DIFF");
        cmd
    }

    /// Start a kubectl that keeps printing (`get -w`, `logs -f`): the process, and its stdout
    /// line by line as it comes.
    pub fn spawn_lines(&self, args: &[&str]) -> (Child, mpsc::Receiver<String>) {
        let mut child = self
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        (child, rx)
    }

    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Run kubectl; it must succeed and say nothing on stderr (no warnings). Returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "kubectl {args:?} failed: {stderr}");
        assert!(
            stderr.trim().is_empty(),
            "kubectl {args:?} warned: {stderr}"
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Run kubectl; it must fail. Returns stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            !out.status.success(),
            "kubectl {args:?} should have failed: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// `kubectl get -o json` of one object.
    pub fn get_json(&self, what: &str, namespace: &str) -> Value {
        let mut args = vec!["get", what, "-n", namespace, "-o", "json"];
        // kubectl 1.21 and later hide managedFields unless asked; 1.20 always shows them.
        if kubectl_bin::minor() >= 21 {
            args.push("--show-managed-fields");
        }
        serde_json::from_str(&self.ok(&args)).unwrap()
    }

    /// `kubectl edit TARGET -n NAMESPACE` with a shell script as the editor (it gets the file
    /// as `$1`, e.g. `sed -i 's/a/b/' "$1"`).
    pub fn edit(&self, target: &str, namespace: &str, script: &str) -> Output {
        let editor = self.file("editor.sh", &format!("#!/bin/sh\n{script}\n"));
        std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        self.command(&["edit", target, "-n", namespace])
            .env("EDITOR", &editor)
            .output()
            .unwrap()
    }

    /// `kubectl apply -f` of `yaml`, written to `name` in the temporary folder; its output.
    pub fn apply(&self, name: &str, yaml: &str) -> String {
        let file = self.file(name, yaml);
        self.ok(&["apply", "-f", file.to_str().unwrap()])
    }

    /// `kubectl apply -k DIR`; its output. Debian's kubectl 1.20 (the CI's second run) embeds
    /// kustomize v2.0.3, which knows no components or `replicas:`: with it, the folder is rendered
    /// by the kubectl on PATH and the output applied with the old one.
    pub fn apply_k(&self, dir: &std::path::Path) -> String {
        let old = std::env::var_os("KDRIFT_TEST_KUBECTL").is_some_and(|v| !v.is_empty());
        if !old {
            return self.ok(&["apply", "-k", dir.to_str().unwrap()]);
        }
        let rendered = std::process::Command::new("kubectl")
            .args(["kustomize", dir.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(rendered.status.success(), "{rendered:?}");
        self.apply(
            "rendered.yaml",
            &String::from_utf8(rendered.stdout).unwrap(),
        )
    }

    /// Write a file in the temporary folder.
    pub fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }
}

/// The managedFields entry of `manager`, or a panic listing the managers present.
pub fn managed_entry<'a>(object: &'a Value, manager: &str) -> &'a Value {
    let entries = object["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let managers: Vec<String> = entries.iter().map(|e| e["manager"].to_string()).collect();
    object["metadata"]["managedFields"]
        .as_array()
        .and_then(|a| a.iter().find(|e| e["manager"] == manager))
        .unwrap_or_else(|| panic!("no managedFields entry for {manager}; managers: {managers:?}"))
}

/// Does `manager`'s fieldsV1 own the path of keys (`["f:spec", "f:replicas"]`)?
pub fn owns(object: &Value, manager: &str, path: &[&str]) -> bool {
    let mut node = &managed_entry(object, manager)["fieldsV1"];
    for key in path {
        node = &node[*key];
        if node.is_null() {
            return false;
        }
    }
    true
}

/// Poll `check` until it returns true or `timeout` passes (generous: the machine is shared).
pub fn eventually(timeout: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    check()
}

#[path = "../copy_tree/mod.rs"]
mod copy_tree_mod;
#[allow(unused_imports)]
pub use copy_tree_mod::copy_tree;
