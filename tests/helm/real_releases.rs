//! Helm on a real Kubernetes API server, end to end with the real helm 3 and 4: the public
//! podinfo chart (testdata/helm/charts/podinfo, 6.14.1) installed with `helm install` is in sync
//! right after install; `kubectl scale` of it is drift attributed to kubectl with the release
//! named; revert brings it back in one step; `helm upgrade --set` then works (the revert left
//! helm's fields helm's) and is a new release, in sync again; a hotfix of three fields accepted
//! in one step into a values file makes `helm template` of the result equal live and check green;
//! `revert --field` of a later change leaves the rest live, a plain revert leaves what git holds;
//! `helm upgrade` with the edited values leaves no pending upgrade.
//!
//! The same story runs on the demo cluster, with every helm command a user runs beside it
//! (`list`, `history`, `rollback`, `get manifest|values`, `uninstall`), on both.
//!
//! The server is the one `KDRIFT_REALK8S_KUBECONFIG` names (the real-server tier's variable;
//! realk8s in ../shared/realk8s starts one), the helms `KDRIFT_TEST_HELM4` and
//! `KDRIFT_TEST_HELM3` (either, or both), else `KDRIFT_TEST_HELM`. Without a server or a helm the
//! test says on stderr why it is skipped; a named one that does not work fails it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::kubectl_bin;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn skip(reason: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "\nhelm_real: SKIPPED: {reason} (set KDRIFT_REALK8S_KUBECONFIG to a running realk8s's kubeconfig and KDRIFT_TEST_HELM3 / KDRIFT_TEST_HELM4 to helm binaries)\n"
    );
}

fn named(var: &str) -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os(var).filter(|v| !v.is_empty())?);
    assert!(path.is_file(), "{var}={} is not a file", path.display());
    Some(path)
}

struct Env {
    kubeconfig: PathBuf,
    home: tempfile::TempDir,
}

impl Env {
    fn run(&self, program: &Path, args: &[&str], cwd: &Path) -> Output {
        Command::new(program)
            .args(args)
            .current_dir(cwd)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", self.home.path())
            .env("HELM_CACHE_HOME", self.home.path().join("helm-cache"))
            .env("HELM_CONFIG_HOME", self.home.path().join("helm-config"))
            .env("HELM_DATA_HOME", self.home.path().join("helm-data"))
            .env("KDRIFT_LOG", "off")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env_remove("NO_COLOR")
            .output()
            .unwrap()
    }

    fn ok(&self, program: &Path, args: &[&str], cwd: &Path) -> String {
        let out = self.run(program, args, cwd);
        assert!(
            out.status.success(),
            "{} {args:?}: {}{}",
            program.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `kdrift ARGS` in `cwd`, with `helm` as its helm: exit code, stdout, stderr.
    fn kdrift(&self, helm: &Path, args: &[&str], cwd: &Path) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_kdrift"))
            .args(args)
            .current_dir(cwd)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", self.home.path())
            .env("KDRIFT_HELM", helm)
            .env("KDRIFT_LOG", "off")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `git ARGS` in `dir`: its output, trimmed.
fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The whole story with one helm, in a namespace of its own.
fn story(env: &Env, helm: &Path, namespace: &str) {
    let kubectl = kubectl_bin::path();
    let chart = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/helm/charts/podinfo");
    let chart = chart.to_str().unwrap();
    // A checkout with the chart and a prod values file, named in .kdrift.yaml.
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    copy_dir(Path::new(chart), &root.join("charts/podinfo"));
    std::fs::create_dir_all(root.join("envs")).unwrap();
    std::fs::write(
        root.join("envs/prod.yaml"),
        "# prod\nreplicaCount: 2 # two zones\n",
    )
    .unwrap();
    std::fs::write(
        root.join(".kdrift.yaml"),
        format!("helm:\n  charts:\n    - path: charts/podinfo\n      release: web\n      namespace: {namespace}\n      values: [envs/prod.yaml]\n"),
    )
    .unwrap();
    git(root, &["init", "--quiet", "--initial-branch=main"]);
    git(root, &["config", "user.name", "On Call"]);
    git(root, &["config", "user.email", "oncall@example.com"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "--quiet", "-m", "podinfo"]);
    let ns = ["-n", namespace];

    let _ = env.run(
        &kubectl,
        &["delete", "namespace", namespace, "--wait"],
        root,
    );
    env.ok(&kubectl, &["create", "namespace", namespace], root);
    env.ok(helm, &["install", "web", chart, "-n", namespace], root);

    // In sync right after install (the release is the desired state; git's values differ: a
    // pending upgrade, not drift).
    let (code, out, err) = env.kdrift(helm, &["check", "-n", namespace], root);
    assert_eq!(code, 0, "in sync after install: {out}{err}");
    assert!(out.contains("2 objects: 2 in sync"), "{out}");
    assert!(
        out.contains("deployment/") && out.contains("pending upgrade  spec.replicas  1 → 2"),
        "{out}"
    );

    // kubectl scale: drift attributed to kubectl, the release named.
    env.ok(
        &kubectl,
        &[
            "scale",
            "deployment/web-podinfo",
            "--replicas=3",
            ns[0],
            ns[1],
        ],
        root,
    );
    let (code, out, _) = env.kdrift(helm, &["check", "-n", namespace], root);
    assert_eq!(code, 1, "{out}");
    let line = format!(
        "deployment/{namespace}/web-podinfo  spec.replicas  1 → 3  helm:{namespace}/web rev 1 (chart podinfo-6.14.1) · kubectl (Update via /scale)"
    );
    assert!(out.contains(&line), "{out}");

    // Revert: one step, as helm's own field manager.
    let (code, out, err) = env.kdrift(
        helm,
        &["revert", "deployment/web-podinfo", "-n", namespace, "--yes"],
        root,
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("as field manager \"helm\""), "{out}");
    let (code, out, _) = env.kdrift(helm, &["check", "-n", namespace], root);
    assert_eq!(code, 0, "in sync after one revert: {out}");

    // helm upgrade --set: works after the revert, and is a new release, in sync again.
    env.ok(
        helm,
        &[
            "upgrade",
            "web",
            chart,
            "-n",
            namespace,
            "--set",
            "replicaCount=2",
        ],
        root,
    );
    let (code, out, _) = env.kdrift(helm, &["check", "-n", namespace, "-o", "json"], root);
    assert_eq!(code, 0, "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let deployment = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .unwrap();
    assert_eq!(deployment["helm"]["revision"], 2, "{out}");
    assert!(
        report.get("helm").is_none(),
        "git renders what rev 2 holds: {out}"
    );

    // The night's hotfix, three fields at once (replicas up, a memory limit set, the UI colour
    // flipped), accepted in one plain step into the values file: helm template of the result
    // equals live, and check is green right after (the fields are in git).
    // (`kubectl VERB [SUBVERB] deployment/web-podinfo -n NS ARGS`.)
    let kubectl_on = |verb: &[&str], args: &[&str]| {
        let mut all: Vec<&str> = verb.to_vec();
        all.extend(["deployment/web-podinfo", ns[0], ns[1]]);
        all.extend(args);
        env.ok(&kubectl, &all, root)
    };
    kubectl_on(&["scale"], &["--replicas=4"]);
    kubectl_on(&["set", "resources"], &["--limits=memory=512Mi"]);
    kubectl_on(&["set", "env"], &["PODINFO_UI_COLOR=#ff0000"]);
    let (code, out, err) = env.kdrift(
        helm,
        &["accept", "deployment/web-podinfo", "-n", namespace],
        root,
    );
    assert_eq!(code, 0, "{out}{err}");
    let values = std::fs::read_to_string(root.join("envs/prod.yaml")).unwrap();
    assert!(
        values.starts_with("# prod\nreplicaCount: 4 # two zones\n")
            && values.contains("memory: 512Mi")
            && values.contains("#ff0000"),
        "{values}"
    );
    let rendered = env.ok(
        helm,
        &[
            "template",
            "web",
            "charts/podinfo",
            "-n",
            namespace,
            "-f",
            "envs/prod.yaml",
        ],
        root,
    );
    let live = |path: &str| {
        env.ok(
            &kubectl,
            &[
                "get",
                "deployment/web-podinfo",
                ns[0],
                ns[1],
                "-o",
                &format!("jsonpath={{{path}}}"),
            ],
            root,
        )
    };
    assert_eq!(live(".spec.replicas"), "4");
    assert!(
        rendered.contains("  replicas: 4\n")
            && rendered.contains("memory: 512Mi")
            && rendered.contains("\"#ff0000\""),
        "{rendered}"
    );
    let (code, out, err) = env.kdrift(helm, &["check", "-n", namespace], root);
    assert_eq!(code, 0, "green right after the accept: {out}{err}");

    // Two more changes: one reverted by --field leaves the other and the accepted fields live;
    // a plain revert then puts back what git lacks and leaves what git holds.
    kubectl_on(&["patch"], &["-p", r#"{"spec":{"minReadySeconds":7}}"#]);
    kubectl_on(&["annotate"], &["oncall=paged"]);
    let (code, out, err) = env.kdrift(
        helm,
        &[
            "revert",
            "deployment/web-podinfo",
            "-n",
            namespace,
            "--field",
            "spec.minReadySeconds",
            "--yes",
        ],
        root,
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(live(".spec.minReadySeconds"), "");
    assert_eq!(live(".metadata.annotations.oncall"), "paged");
    assert_eq!(live(".spec.replicas"), "4");
    assert_eq!(
        live(".spec.template.spec.containers[0].resources.limits.memory"),
        "512Mi"
    );
    let (code, out, err) = env.kdrift(
        helm,
        &["revert", "deployment/web-podinfo", "-n", namespace, "--yes"],
        root,
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("leaves spec.replicas as it is live: git already holds this value"),
        "{out}"
    );
    assert_eq!(live(".metadata.annotations.oncall"), "");
    assert_eq!(live(".spec.replicas"), "4");

    // `helm upgrade` of the checkout's chart with its prod values.
    let upgrade = || {
        env.ok(
            helm,
            &[
                "upgrade",
                "web",
                "charts/podinfo",
                "-n",
                namespace,
                "-f",
                "envs/prod.yaml",
            ],
            root,
        )
    };
    // `check` is green and says no helm upgrade is pending.
    let green_nothing_pending = |after: &str| {
        let (code, out, err) = env.kdrift(helm, &["check", "-n", namespace, "-o", "json"], root);
        assert_eq!(code, 0, "{after}: {out}{err}");
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(report.get("helm").is_none(), "{after}: {out}");
    };

    // helm upgrade with the edited values: in sync, and no pending upgrade left.
    upgrade();
    green_nothing_pending("no pending upgrade after helm upgrade");

    // A bad release from git (issue 48): the image pinned in the values file, then a commit that
    // bumps the pin to a crashing build, each released by helm upgrade. One command rolls it
    // back: helm rollback, and one commit that puts the pin back (its comment kept) and names
    // the bad commit — the tag is found inside the composed `repository:tag` the chart renders.
    // Check is green after, nothing pending.
    let pinned = format!(
        "{}image:\n  tag: 6.14.1 # pinned\n",
        std::fs::read_to_string(root.join("envs/prod.yaml")).unwrap()
    );
    std::fs::write(root.join("envs/prod.yaml"), &pinned).unwrap();
    git(root, &["commit", "--quiet", "-am", "web: pin the image"]);
    upgrade();
    std::fs::write(
        root.join("envs/prod.yaml"),
        pinned.replace("tag: 6.14.1 #", "tag: 6.99.0-crash #"),
    )
    .unwrap();
    git(root, &["commit", "--quiet", "-am", "web: podinfo 6.99.0"]);
    let bad = git_out(root, &["rev-parse", "--short=12", "HEAD"]);
    upgrade();
    let image = ".spec.template.spec.containers[0].image";
    assert_eq!(live(image), "ghcr.io/stefanprodan/podinfo:6.99.0-crash");
    let (code, out, err) = env.kdrift(
        helm,
        &[
            "rollback",
            "deployment/web-podinfo",
            "-n",
            namespace,
            "--dry-run",
        ],
        root,
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        std::fs::read_to_string(root.join("envs/prod.yaml")).unwrap(),
        pinned.replace("tag: 6.14.1 #", "tag: 6.99.0-crash #"),
        "a dry run writes nothing"
    );
    let (code, out, err) = env.kdrift(
        helm,
        &[
            "rollback",
            "deployment/web-podinfo",
            "-n",
            namespace,
            "--yes",
        ],
        root,
    );
    assert_eq!(code, 0, "{out}{err}");
    for said in [
        "git brought the values rolled back: envs/prod.yaml holds them",
        &format!("from commit {bad} web: podinfo 6.99.0"),
        "-  tag: 6.99.0-crash # pinned",
        "+  tag: 6.14.1 # pinned",
        // The bad commit changed the values file alone: the commit is its revert.
        &format!(
            "the commit reverts it (as git revert {bad} would: it changed envs/prod.yaml alone)"
        ),
        "Rollback was a success",
        "Revert \"web: podinfo 6.99.0\"",
    ] {
        assert!(out.contains(said), "{said}: {out}");
    }
    assert_eq!(
        std::fs::read_to_string(root.join("envs/prod.yaml")).unwrap(),
        pinned,
        "the values file as before the bad commit, byte for byte"
    );
    let message = git_out(root, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains(&bad)
            && message.contains("kdrift: roll back helm release web to revision"),
        "{message}"
    );
    assert_eq!(live(image), "ghcr.io/stefanprodan/podinfo:6.14.1");
    green_nothing_pending("git renders the revision rolled back to");
    let _ = env.run(
        &kubectl,
        &["delete", "namespace", namespace, "--wait=false"],
        root,
    );
}

#[test]
fn a_public_chart_installed_by_helm_3_and_4_drifts_reverts_upgrades_and_accepts() {
    let Some(kubeconfig) = named("KDRIFT_REALK8S_KUBECONFIG") else {
        skip("no real server");
        return;
    };
    let helms = helms();
    if helms.is_empty() {
        skip("no helm");
        return;
    }
    let env = Env {
        kubeconfig,
        home: tempfile::tempdir().unwrap(),
    };
    for (helm, ns) in &helms {
        story(&env, helm, &format!("kdrift-{ns}"));
        every_command(&env, helm, &format!("commands-{ns}"));
    }
}

/// Every other helm command a user runs, in a namespace of its own: `list`, `history`,
/// `get values|manifest`, `rollback` (through `kdrift rollback`: a third revision, back at the
/// first's values) and
/// `uninstall` (the release's objects and records gone).
fn every_command(env: &Env, helm: &Path, namespace: &str) {
    let kubectl = kubectl_bin::path();
    let chart = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/helm/charts/podinfo");
    let chart = chart.to_str().unwrap();
    let here = env.home.path();
    let _ = env.run(
        &kubectl,
        &["delete", "namespace", namespace, "--wait"],
        here,
    );
    let ns = ["-n", namespace];
    env.ok(
        helm,
        &["install", "api", chart, ns[0], ns[1], "--create-namespace"],
        here,
    );
    env.ok(
        helm,
        &[
            "upgrade",
            "api",
            chart,
            ns[0],
            ns[1],
            "--set",
            "replicaCount=2",
        ],
        here,
    );
    let list = env.ok(helm, &["list", ns[0], ns[1]], here);
    assert!(
        list.lines().any(|l| l.starts_with("api")
            && l.contains("deployed")
            && l.contains("podinfo-6.14.1")),
        "{list}"
    );
    let history = env.ok(helm, &["history", "api", ns[0], ns[1]], here);
    assert!(
        history.contains("superseded") && history.contains("Upgrade complete"),
        "{history}"
    );
    let values = env.ok(helm, &["get", "values", "api", ns[0], ns[1]], here);
    assert!(values.contains("replicaCount: 2"), "{values}");
    let manifest = env.ok(helm, &["get", "manifest", "api", ns[0], ns[1]], here);
    assert!(manifest.contains("replicas: 2"), "{manifest}");
    // The rollback through kdrift (issue 48): a release's object is rolled back by the user's
    // `helm rollback`, after a dry run that changes nothing.
    let empty = tempfile::tempdir().unwrap();
    let rollback = |extra: &[&str]| {
        let mut args = vec![
            "rollback",
            "deployment/api-podinfo",
            ns[0],
            ns[1],
            "--to-revision",
            "1",
        ];
        args.extend_from_slice(extra);
        env.kdrift(helm, &args, empty.path())
    };
    let (code, out, err) = rollback(&["--dry-run"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("through helm: helm rollback api 1 --namespace")
            && out.contains("dry run: nothing was changed"),
        "{out}"
    );
    let history = env.ok(helm, &["history", "api", ns[0], ns[1], "-o", "json"], here);
    let revisions: serde_json::Value = serde_json::from_str(&history).unwrap();
    assert_eq!(revisions.as_array().unwrap().len(), 2, "{history}");
    let (code, out, err) = rollback(&["--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Rollback was a success"), "{out}");
    let replicas = env.ok(
        &kubectl,
        &[
            "get",
            "deployment/api-podinfo",
            ns[0],
            ns[1],
            "-o",
            "jsonpath={.spec.replicas}",
        ],
        here,
    );
    assert_eq!(replicas, "1", "rolled back to revision 1's values");
    let history = env.ok(helm, &["history", "api", ns[0], ns[1], "-o", "json"], here);
    let revisions: serde_json::Value = serde_json::from_str(&history).unwrap();
    assert_eq!(revisions.as_array().unwrap().len(), 3, "{history}");
    env.ok(helm, &["uninstall", "api", ns[0], ns[1]], here);
    let left = env.ok(
        &kubectl,
        &[
            "get",
            "deployments,services,secrets",
            ns[0],
            ns[1],
            "-o",
            "name",
        ],
        here,
    );
    assert!(
        !left.contains("api-podinfo") && !left.contains("sh.helm.release"),
        "{left}"
    );
    let _ = env.run(
        &kubectl,
        &["delete", "namespace", namespace, "--wait=false"],
        here,
    );
}

/// The helms named by `KDRIFT_TEST_HELM4`, `KDRIFT_TEST_HELM3` and `KDRIFT_TEST_HELM`, each
/// with a name for its namespaces.
fn helms() -> Vec<(PathBuf, &'static str)> {
    [
        ("KDRIFT_TEST_HELM4", "helm4"),
        ("KDRIFT_TEST_HELM3", "helm3"),
        ("KDRIFT_TEST_HELM", "helm"),
    ]
    .into_iter()
    .filter_map(|(var, ns)| Some((named(var)?, ns)))
    .fold(Vec::new(), |mut helms, (path, ns)| {
        // KDRIFT_TEST_HELM is often one of the other two: each helm once.
        if !helms.iter().any(|(p, _)| *p == path) {
            helms.push((path, ns));
        }
        helms
    })
}

#[test]
fn on_the_demo_cluster_helm_3_and_4_install_drift_revert_upgrade_roll_back_and_uninstall() {
    let helms = helms();
    if helms.is_empty() {
        skip("no helm");
        return;
    }
    let cluster = common::Cluster::start_with(false);
    let env = Env {
        kubeconfig: cluster.kubeconfig.clone(),
        home: tempfile::tempdir().unwrap(),
    };
    for (helm, ns) in &helms {
        story(&env, helm, &format!("kdrift-{ns}"));
        every_command(&env, helm, &format!("commands-{ns}"));
    }
}
