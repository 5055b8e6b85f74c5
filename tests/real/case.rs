//! One test's setting on the real server: its namespace, demo manifests moved into it and
//! committed to a git repository, applied with kubectl as an operator would, and `kdrift` run
//! from that repository.
#![allow(dead_code)]

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use crate::headless_util::{Repo, Run, kdrift_at};
use crate::server::{Namespace, Real, real};

pub struct Case {
    pub real: &'static Real,
    pub ns: Namespace,
    pub repo: Repo,
    /// HOME of the kdrift and kubectl runs, and the folder of the test's scratch files.
    pub home: tempfile::TempDir,
}

/// `text` of a demo manifest with its namespace `from` moved to `to`.
pub fn moved(text: &str, from: &str, to: &str) -> String {
    text.replace(
        &format!("namespace: {from}\n"),
        &format!("namespace: {to}\n"),
    )
}

impl Case {
    /// A namespace for `test` on the real server and an empty repository; `None` when the tier
    /// is skipped.
    pub fn new(test: &str, files: impl FnOnce(&str) -> Vec<(String, String)>) -> Option<Case> {
        let real = real()?;
        let ns = real.namespace(test);
        let files = files(&ns.name);
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        Some(Case {
            real,
            repo: Repo::with_files(&files),
            ns,
            home: tempfile::tempdir().unwrap(),
        })
    }

    /// The demo's `demo/<path>` files of namespace `from`, moved into the test's namespace as
    /// files of the same names, applied, and their Deployments rolled out.
    pub fn demo(test: &str, from: &str, paths: &[&str]) -> Option<Case> {
        let case = Case::new(test, |ns| {
            paths
                .iter()
                .map(|path| {
                    let text = std::fs::read_to_string(
                        Path::new(env!("CARGO_MANIFEST_DIR"))
                            .join("demo")
                            .join(path),
                    )
                    .unwrap();
                    (path.to_string(), moved(&text, from, ns))
                })
                .collect()
        })?;
        for path in paths {
            case.ok(&["apply", "-f", case.repo.path(path).to_str().unwrap()]);
        }
        case.rolled_out();
        Some(case)
    }

    pub fn ns(&self) -> &str {
        &self.ns.name
    }

    /// kubectl in the test's namespace.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        let mut all = args.to_vec();
        all.extend(["-n", self.ns()]);
        self.real.kubectl(&all)
    }

    /// kubectl in the test's namespace; it must succeed. Returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} -n {} failed: {}",
            self.ns(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `kubectl edit TARGET` with a shell script as the editor (it gets the file as `$1`).
    pub fn edit(&self, target: &str, script: &str) {
        let editor = self.file("editor.sh", &format!("#!/bin/sh\n{script}\n"));
        std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let out = self
            .real
            .command(&["edit", target, "-n", self.ns()])
            .env("EDITOR", &editor)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "kubectl edit {target}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A scratch file outside the repository.
    pub fn file(&self, name: &str, text: &str) -> std::path::PathBuf {
        let path = self.home.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Waits until every Deployment of the namespace has rolled out (`kubectl rollout status`).
    pub fn rolled_out(&self) {
        let names = self.ok(&["get", "deployments", "-o", "name"]);
        for name in names.lines() {
            self.ok(&["rollout", "status", name, "--timeout=120s"]);
        }
    }

    /// `kdrift ARGS` in the repository against the real server, as the admin.
    pub fn kdrift(&self, args: &[&str]) -> Run {
        kdrift_at(
            &self.real.kubeconfig,
            self.home.path(),
            self.repo.root(),
            args,
        )
    }

    /// `kdrift ARGS -n NS`.
    pub fn kdrift_ns(&self, args: &[&str]) -> Run {
        let mut all = args.to_vec();
        all.extend(["-n", self.ns()]);
        self.kdrift(&all)
    }
}

/// Polls `check` until it holds or a minute passes (the machine is shared).
pub fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "waited a minute for {what}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
