//! `kdrift completions SHELL` and `kdrift man`: made from the command line itself, and working
//! where a user puts them (bash completes a subcommand and a flag; man reads the page).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

use crate::demo_helm;

fn kdrift(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kdrift"))
        .args(args)
        .env("KDRIFT_LOG", "off")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What bash offers after `words` (the last one being completed) in `dir`, with kdrift's script
/// loaded: the registration calls kdrift back on TAB, as in a user's shell.
fn bash_completes_in(dir: &Path, words: &[&str]) -> Vec<String> {
    let script = kdrift(&["completions", "bash"]);
    let scripts = tempfile::tempdir().unwrap();
    let file = scripts.path().join("kdrift.bash");
    std::fs::write(&file, script).unwrap();
    let line = words.join(" ");
    let program = format!(
        "source {}\nCOMP_WORDS=({line})\nCOMP_CWORD={}\nCOMP_LINE='{line}'\nCOMP_POINT=${{#COMP_LINE}}\nCOMP_TYPE=9\n_clap_complete_kdrift kdrift '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        file.display(),
        words.len() - 1,
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(program)
        .current_dir(dir)
        .env("KDRIFT_LOG", "off")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

fn bash_completes(words: &[&str]) -> Vec<String> {
    bash_completes_in(&std::env::temp_dir(), words)
}

/// A manifests folder: Deployments web (shop, payments) and worker (shop), Service web (shop),
/// ConfigMap settings (payments).
fn manifests() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let deployment = |ns: &str, name: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  replicas: 1\n"
        )
    };
    std::fs::create_dir(dir.path().join("k8s")).unwrap();
    std::fs::write(
        dir.path().join("k8s/shop.yaml"),
        format!(
            "{}---\n{}---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: shop\n",
            deployment("shop", "web"),
            deployment("shop", "worker")
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("k8s/payments.yaml"),
        format!(
            "{}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: payments\n",
            deployment("payments", "web")
        ),
    )
    .unwrap();
    dir
}

#[test]
fn bash_completes_subcommands_and_their_flags() {
    assert_eq!(bash_completes(&["kdrift", "che"]), ["check"]);
    let flags = bash_completes(&["kdrift", "check", "--allow"]);
    assert_eq!(flags, ["--allow-empty"]);
    let outputs = bash_completes(&["kdrift", "check", "-o", ""]);
    assert!(outputs.contains(&"json".to_owned()), "{outputs:?}");
}

#[test]
fn bash_completes_type_and_name_from_the_manifests_folder() {
    let dir = manifests();
    let k8s = dir.path().join("k8s");
    assert_eq!(
        bash_completes_in(&k8s, &["kdrift", "diff", "deploy/w"]),
        ["deploy/web", "deploy/worker"]
    );
    assert_eq!(
        bash_completes_in(&k8s, &["kdrift", "accept", "svc/"]),
        ["svc/web"]
    );
    // --manifests and -n on the line choose the folder and the namespace.
    let payments: Vec<String> = bash_completes_in(
        dir.path(),
        &[
            "kdrift",
            "--manifests",
            "k8s",
            "-n",
            "payments",
            "revert",
            "",
        ],
    )
    .into_iter()
    .filter(|c| !c.starts_with('-'))
    .collect();
    assert_eq!(payments, ["configmap/settings", "deployment/web"]);
    // rollback completes the workloads of the manifests as the other commands on one object do.
    assert_eq!(
        bash_completes_in(
            dir.path(),
            &[
                "kdrift",
                "--manifests",
                "k8s",
                "-n",
                "payments",
                "rollback",
                "deploy"
            ]
        ),
        ["deployment/web"]
    );
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(
        bash_completes_in(empty.path(), &["kdrift", "diff", "deploy/"]),
        Vec::<String>::new(),
        "no manifests, no names"
    );
}

/// kubectl (1.26+) completes `kubectl drift …` by running `kubectl_complete-drift` with the
/// words after `drift` and reading cobra's format: candidates, then `:4` (no file names).
#[test]
fn kubectl_plugin_completion_answers_in_cobras_format() {
    let dir = manifests();
    let k8s = dir.path().join("k8s");
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl_complete-drift"))
        .args(["diff", "deploy/w"])
        .current_dir(&k8s)
        .env("KDRIFT_LOG", "off")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "deploy/web\tnamespace payments, shop\ndeploy/worker\tnamespace shop\n:4\n"
    );
    let subcommands = Command::new(env!("CARGO_BIN_EXE_kubectl_complete-drift"))
        .arg("ch")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&subcommands.stdout);
    assert!(text.starts_with("check\t"), "{text}");

    // kubectl itself, when it is new enough to complete plugins, finds it on PATH.
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_kubectl_complete-drift"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let kubectl = Command::new("kubectl")
        .args(["__complete", "drift", "diff", "deploy/w"])
        .current_dir(&k8s)
        .env("PATH", &path)
        .env("KDRIFT_LOG", "off")
        .output();
    if let Ok(kubectl) = kubectl
        && String::from_utf8_lossy(&kubectl.stderr).contains("kubectl_complete-drift")
    {
        let text = String::from_utf8_lossy(&kubectl.stdout);
        assert!(text.starts_with("deploy/web\t"), "{text}");
    }
}

/// `kubectl-drift` and `kubectl_complete-drift` are small launchers of `kdrift`: found through a
/// symlink (as krew links `bin` onto PATH) they run the `kdrift` beside their real file; with
/// none beside them and none on PATH they say so and exit 2.
#[test]
fn the_plugin_launchers_run_the_kdrift_beside_them_or_say_it_is_missing() {
    let launcher = Path::new(env!("CARGO_BIN_EXE_kubectl-drift"));
    let linked = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(launcher, linked.path().join("kubectl-drift")).unwrap();
    let out = Command::new(linked.path().join("kubectl-drift"))
        .arg("--help")
        .env("PATH", "/nonexistent")
        .env("KDRIFT_LOG", "off")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(help.contains("Usage: kubectl drift"), "{help}");
    // The launcher is small: it does not link the library.
    let size = std::fs::metadata(launcher).unwrap().len();
    let kdrift_size = std::fs::metadata(env!("CARGO_BIN_EXE_kdrift"))
        .unwrap()
        .len();
    assert!(
        size * 10 < kdrift_size,
        "{size} bytes against kdrift's {kdrift_size}"
    );

    let alone = tempfile::tempdir().unwrap();
    for name in ["kubectl-drift", "kubectl_complete-drift"] {
        let copy = alone.path().join(name);
        std::fs::copy(launcher.with_file_name(name), &copy).unwrap();
        let out = Command::new(&copy)
            .arg("check")
            .env("PATH", "/nonexistent")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.starts_with(&format!(
                "{name}: the kdrift binary is neither beside this one ("
            )) && said.contains(&alone.path().display().to_string()),
            "{said}"
        );
    }
}

#[test]
fn the_man_page_is_roff_with_every_subcommand_and_man_reads_it() {
    let page = kdrift(&["man"]);
    assert!(page.contains(".TH kdrift 1"), "{page}");
    for sub in [
        "check",
        "diff",
        "accept",
        "revert",
        "rollback",
        "logs",
        "demo",
        "completions",
    ] {
        assert!(page.contains(sub), "no {sub} in the page");
    }
    // man itself, where the machine has it, renders it.
    if let Ok(rendered) = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} man | man -l - 2>/dev/null",
            env!("CARGO_BIN_EXE_kdrift")
        ))
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
        && rendered.status.success()
        && !rendered.stdout.is_empty()
    {
        let text = String::from_utf8_lossy(&rendered.stdout);
        assert!(text.contains("NAME"), "{text}");
    }
}

#[test]
fn the_version_names_the_commit_it_was_built_from() {
    let version = kdrift(&["--version"]);
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let expected = match head {
        Some(commit) => format!("kdrift {} ({commit})\n", env!("CARGO_PKG_VERSION")),
        None => format!("kdrift {} (unknown)\n", env!("CARGO_PKG_VERSION")),
    };
    let (first, renderer) = version.split_at(version.find('\n').unwrap() + 1);
    assert_eq!(first, expected);
    // kubectl is on PATH for the tests: its kustomize renders the kustomize roots.
    assert!(
        renderer.starts_with("kustomize renderer: ") && renderer.contains("kustomize v"),
        "{version}"
    );
    assert_eq!(kdrift(&["-V"]), expected, "-V is the short version");
}

/// The krew template, filled in as krew-release-bot would, is a krew Plugin whose `bin` and
/// files are binaries this package builds.
#[test]
fn the_krew_template_names_the_binaries_cargo_builds() {
    let root = env!("CARGO_MANIFEST_DIR");
    let template = std::fs::read_to_string(format!("{root}/packaging/krew/drift.yaml")).unwrap();
    let filled = template
        .lines()
        .map(
            |line| match line.trim_start().strip_prefix("{{addURIAndSha") {
                Some(_) => {
                    let indent = &line[..line.len() - line.trim_start().len()];
                    format!(
                        "{indent}uri: https://example.com/kdrift.tar.gz\n{indent}sha256: {}",
                        "0".repeat(64)
                    )
                }
                None => line.replace("{{ .TagName }}", "v0.1.0"),
            },
        )
        .collect::<Vec<_>>()
        .join("\n");
    let plugin: serde_json::Value = serde_yaml::from_str(&filled).unwrap();
    assert_eq!(
        plugin["apiVersion"],
        "krew.googlecontainertools.github.com/v1alpha2"
    );
    assert_eq!(plugin["kind"], "Plugin");
    assert_eq!(plugin["metadata"]["name"], "drift", "kubectl drift");
    let manifest = std::fs::read_to_string(format!("{root}/Cargo.toml")).unwrap();
    let platforms = plugin["spec"]["platforms"].as_array().unwrap();
    assert!(!platforms.is_empty());
    for platform in platforms {
        assert_eq!(platform["bin"], "kubectl-drift");
        assert_eq!(platform["sha256"].as_str().unwrap().len(), 64);
        for file in platform["files"].as_array().unwrap() {
            let from = file["from"].as_str().unwrap();
            let name = from.rsplit('/').next().unwrap();
            assert!(
                name == "README.md" || manifest.contains(&format!("name = \"{name}\"")),
                "{from} is not a binary of Cargo.toml"
            );
        }
    }
}

/// `kdrift demo --serve` gives a user without the source tree everything to try kdrift from
/// the shell: a kubeconfig and the demo manifests in a git repository; `kubectl drift check -A`
/// run there is green, and the temporary manifests go when the server stops.
#[test]
fn demo_serve_writes_the_manifests_that_kubectl_drift_checks() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let mut serve = Command::new(env!("CARGO_BIN_EXE_kdrift"))
        .args(["demo", "--serve", "--port", "0", "--scenario", "none"])
        .arg("--kubeconfig-out")
        .arg(&kubeconfig)
        .current_dir(dir.path())
        .env("KDRIFT_LOG", "off")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = serve.stdout.take().unwrap();
    let (send, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    let mut manifests = None;
    while let Ok(line) = lines.recv_timeout(std::time::Duration::from_secs(20)) {
        if let Some(path) = line.strip_prefix("manifests (a git repository): ") {
            manifests = Some(std::path::PathBuf::from(path));
        }
        if line.starts_with("try: cd ") {
            break;
        }
    }
    let Some(manifests) = manifests else {
        let _ = serve.kill();
        panic!("serve does not name the manifests folder");
    };
    assert!(manifests.join(".git").is_dir(), "{}", manifests.display());
    // The seeded cluster settles (pods ready, statuses written) within a few seconds.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let check = loop {
        let check = Command::new(env!("CARGO_BIN_EXE_kubectl-drift"))
            .args(["check", "-A"])
            .current_dir(&manifests)
            .env("KUBECONFIG", &kubeconfig)
            .env("KDRIFT_LOG", "off")
            .env("KDRIFT_HELM", demo_helm::kdrift_helm())
            .output()
            .unwrap();
        if check.status.code() == Some(demo_helm::expected(0))
            || std::time::Instant::now() > deadline
        {
            break check;
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    let text = String::from_utf8_lossy(&check.stdout);
    assert_eq!(
        check.status.code(),
        Some(demo_helm::expected(0)),
        "{text}{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(text.contains(" 0 drifted"), "{text}");
    // SIGTERM, as a service manager stops it: the temporary manifests are removed.
    Command::new("kill")
        .arg(serve.id().to_string())
        .status()
        .unwrap();
    assert!(serve.wait().unwrap().success());
    assert!(!manifests.exists(), "{} left behind", manifests.display());
}

/// Issue 49: one `demo --serve` for one cluster and for a fleet. A reader that stops reading
/// (`kdrift demo --serve | head -1`) does not end the cluster it was told of: the one-cluster
/// serve printed with `println!`, which panics on a closed stdout, as the fleet's no longer did.
#[test]
fn demo_serve_outlives_a_reader_that_stops_reading() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let mut serve = Command::new(env!("CARGO_BIN_EXE_kdrift"))
        .args(["demo", "--serve", "--port", "0", "--scenario", "none"])
        .arg("--kubeconfig-out")
        .arg(&kubeconfig)
        .current_dir(dir.path())
        .env("KDRIFT_LOG", "off")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader is gone before anything is written.
    drop(serve.stdout.take());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !kubeconfig.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "no kubeconfig written"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(700));
    let still = serve.try_wait().unwrap();
    let _ = serve.kill();
    let out = serve.wait_with_output().unwrap();
    assert!(
        still.is_none(),
        "serve ended ({still:?}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
