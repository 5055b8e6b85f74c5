//! `kdrift check` and `kdrift diff` against the demo cluster, after the changes an operator makes
//! with the real kubectl: exactly those fields are reported, with the managers that made them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::headless_util;
use crate::zero_values_util;

use std::io::Read;

use common::Cluster;
use headless_util::{Repo, drifted_fields, kdrift, kdrift_env, keys_with_status};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};

fn field(key: &str, class: &str, path: &str, manager: &str, sub: &str) -> [String; 6] {
    [key, class, path, manager, "Update", sub].map(str::to_owned)
}

#[test]
fn check_reports_exactly_what_kubectl_changed_with_its_manager() {
    let c = Cluster::start();
    let repo = Repo::demo();

    let first = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(first.code, 0, "the demo cluster starts in sync: {first:?}");
    let report = first.json();
    assert_eq!(report["summary"]["drifted"], 0, "{first:?}");
    assert!(
        report["summary"]["in_sync"].as_u64().unwrap() >= 10,
        "{first:?}"
    );

    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    c.ok(&["set", "env", "deployment/checkout", "-n", "shop", "EXTRA=1"]);
    c.ok(&[
        "set",
        "resources",
        "deployment/frontend",
        "-n",
        "shop",
        "--limits=memory=512Mi",
    ]);
    let edited = c.edit(
        "deployment/catalog",
        "shop",
        "sed -i 's/cpu: 100m/cpu: 150m/' \"$1\"",
    );
    assert!(
        edited.status.success(),
        "{}",
        String::from_utf8_lossy(&edited.stderr)
    );

    let after = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(after.code, 1, "drift is exit 1: {after:?}");
    let containers = "spec.template.spec.containers";
    assert_eq!(
        drifted_fields(&after.json()),
        vec![
            // kubectl 1.32's scale sends no field manager: the server records `kubectl`, an
            // Update through the scale subresource.
            field(
                "deployment/shop/cart",
                "changed",
                "spec.replicas",
                "kubectl",
                "scale"
            ),
            field(
                "deployment/shop/catalog",
                "changed",
                &format!("{containers}[name=catalog].resources.requests.cpu"),
                "kubectl-edit",
                "-",
            ),
            field(
                "deployment/shop/checkout",
                "added-live",
                &format!("{containers}[name=checkout].env[name=EXTRA]"),
                "kubectl-set",
                "-",
            ),
            field(
                "deployment/shop/frontend",
                "changed",
                &format!("{containers}[name=frontend].resources.limits.memory"),
                "kubectl-set",
                "-",
            ),
        ]
    );
    let report = after.json();
    let cart = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["key"] == "deployment/shop/cart")
        .unwrap();
    assert_eq!(
        cart["file"],
        repo.path("shop/cart.yaml").display().to_string()
    );
    assert_eq!(cart["items"][0]["manifest"], 2);
    assert_eq!(cart["items"][0]["live"], 5);
    let line = cart["items"][0]["line"].as_u64().unwrap() as usize;
    assert_eq!(
        repo.read("shop/cart.yaml")
            .lines()
            .nth(line - 1)
            .map(str::trim),
        Some("replicas: 2"),
        "the reported line is the manifest's replicas line"
    );

    let text = kdrift(&c, &repo, &["check", "-A"]);
    assert_eq!(text.code, 1, "{text:?}");
    assert!(
        text.stdout
            .contains("deployment/shop/cart  spec.replicas  2 → 5  kubectl (Update via /scale)"),
        "{text:?}"
    );
    assert!(text.stdout.contains("4 drifted (4 fields)"), "{text:?}");
}

#[test]
fn check_of_one_namespace_does_not_call_other_namespaces_missing() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&["delete", "deployment/cart", "-n", "shop"]);

    let shop = kdrift(&c, &repo, &["check", "-n", "shop", "-o", "json"]);
    assert_eq!(shop.code, 1, "a deleted deployment is missing: {shop:?}");
    let report = shop.json();
    let objects = report["objects"].as_array().unwrap();
    assert!(!objects.is_empty());
    assert!(objects.iter().all(|o| o["namespace"] == "shop"), "{shop:?}");
    assert_eq!(
        keys_with_status(&report, "missing"),
        ["deployment/shop/cart"]
    );

    let payments = kdrift(&c, &repo, &["check", "-n", "payments"]);
    assert_eq!(payments.code, 0, "{payments:?}");
    assert!(
        !payments.stdout.contains("missing from the cluster"),
        "{payments:?}"
    );
    assert!(
        payments.stderr.contains("were not checked")
            && payments.stderr.contains("platform, shop")
            && payments.stderr.contains("pass -A"),
        "says what the scope left out: {payments:?}"
    );
    let all = kdrift(&c, &repo, &["check", "-A"]);
    assert!(!all.stderr.contains("not checked"), "{all:?}");
}

#[test]
fn objects_made_with_kubectl_create_are_in_sync_until_changed() {
    let c = Cluster::start();
    let repo = Repo::demo();
    let manifest = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: created
  namespace: shop
spec:
  replicas: 1
  selector:
    matchLabels: {app: created}
  template:
    metadata:
      labels: {app: created}
    spec:
      containers:
      - name: web
        image: registry.example/shop/tool:1.0
";
    repo.write("shop/created.yaml", manifest);
    let path = repo.path("shop/created.yaml");
    c.ok(&["create", "-f", path.to_str().unwrap()]);
    // The server records the defaults it filled (strategy, dnsPolicy, ...) under kubectl-create.
    let live = c.get_json("deployment/created", "shop");
    assert!(common::owns(
        &live,
        "kubectl-create",
        &["f:spec", "f:revisionHistoryLimit"]
    ));

    let created = kdrift(&c, &repo, &["check", "-n", "shop", "-o", "json"]);
    assert_eq!(
        created.code, 0,
        "defaults of a create are not drift: {created:?}"
    );

    c.ok(&["set", "env", "deployment/created", "-n", "shop", "EXTRA=1"]);
    let changed = kdrift(&c, &repo, &["check", "-n", "shop", "-o", "json"]);
    assert_eq!(changed.code, 1, "{changed:?}");
    assert_eq!(
        drifted_fields(&changed.json()),
        [field(
            "deployment/shop/created",
            "added-live",
            "spec.template.spec.containers[name=web].env[name=EXTRA]",
            "kubectl-set",
            "-",
        )],
        "{changed:?}"
    );
}

#[test]
fn unmanaged_objects_are_listed_only_when_asked_for() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&[
        "create",
        "deployment",
        "hand-made",
        "-n",
        "shop",
        "--image=registry.example/shop/tool:1.0",
    ]);

    let plain = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(
        plain.code, 0,
        "unmanaged objects are not drift by default: {plain:?}"
    );
    assert_eq!(plain.json()["summary"]["unmanaged"], 0, "{plain:?}");

    let asked = kdrift(&c, &repo, &["check", "-A", "--unmanaged", "-o", "json"]);
    assert_eq!(asked.code, 1, "{asked:?}");
    let report = asked.json();
    let unmanaged = keys_with_status(&report, "unmanaged");
    assert_eq!(unmanaged, ["deployment/shop/hand-made"], "{asked:?}");
}

#[test]
fn diff_prints_one_object_plain_when_not_on_a_terminal() {
    let c = Cluster::start();
    let repo = Repo::demo();
    let clean = kdrift(&c, &repo, &["diff", "deploy/cart", "-n", "shop"]);
    assert_eq!(clean.code, 0, "{clean:?}");
    assert_eq!(clean.stdout, "", "nothing to show in sync: {clean:?}");

    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    for spelling in ["deploy/cart", "deployment/cart", "deployments.apps/cart"] {
        let diff = kdrift(&c, &repo, &["diff", spelling, "-n", "shop"]);
        assert_eq!(diff.code, 1, "{diff:?}");
        assert!(
            !diff.stdout.contains('\x1b'),
            "no colour off a terminal: {diff:?}"
        );
        let lines: Vec<&str> = diff.stdout.lines().collect();
        assert!(lines.contains(&"-  replicas: 2"), "{diff:?}");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("+  replicas: 5  # kubectl (Update via /scale)")),
            "{diff:?}"
        );
        let changed = lines
            .iter()
            .filter(|l| l.starts_with(['+', '-']) && !l.starts_with("+++") && !l.starts_with("---"))
            .count();
        assert_eq!(changed, 2, "only the replicas line differs: {diff:?}");
    }

    let unknown = kdrift(&c, &repo, &["diff", "deploy/nope", "-n", "shop"]);
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(
        unknown
            .stderr
            .contains("no manifest for deployment/shop/nope"),
        "{unknown:?}"
    );
    let bad = kdrift(&c, &repo, &["diff", "cart", "-n", "shop"]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(bad.stderr.contains("TYPE/NAME"), "{bad:?}");
}

#[test]
fn a_manifests_folder_that_is_not_there_is_refused_by_the_live_view_as_by_check() {
    let home = tempfile::tempdir().unwrap();
    let repo = Repo::demo();
    let gone = home.path().join("no-such-folder");
    let gone = gone.to_str().unwrap();
    // Refused before any connection is tried: no kubeconfig is needed to be told.
    for args in [&["--manifests", gone][..], &["check", "--manifests", gone]] {
        let run = kdrift_env(home.path(), repo.root(), args, &[]);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {run:?}");
        assert!(
            run.stderr
                .contains("no-such-folder\" is not a readable folder"),
            "{args:?}: {run:?}"
        );
    }
}

#[test]
fn no_kubeconfig_or_an_unreachable_api_is_one_line_and_exit_2() {
    let home = tempfile::tempdir().unwrap();
    let repo = Repo::demo();
    let none = kdrift_env(home.path(), repo.root(), &["check"], &[]);
    assert_eq!(none.code, 2, "{none:?}");
    assert_eq!(none.stderr.lines().count(), 1, "{none:?}");
    assert!(none.stderr.contains("no kubeconfig"), "{none:?}");

    // A port nothing listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let kubeconfig = home.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: gone\n  cluster:\n    server: http://127.0.0.1:{port}\ncontexts:\n- name: gone\n  context:\n    cluster: gone\n    user: u\n    namespace: shop\nusers:\n- name: u\n  user: {{}}\ncurrent-context: gone\n"
        ),
    )
    .unwrap();
    for args in [
        &["check"][..],
        &["check", "-o", "json"],
        &["diff", "deploy/cart"],
        &["accept", "deploy/cart"],
    ] {
        let run = kdrift_env(
            home.path(),
            repo.root(),
            args,
            &[("KUBECONFIG", kubeconfig.as_path())],
        );
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {run:?}");
        assert!(
            run.stderr.contains("unreachable") || run.stderr.contains("did not answer"),
            "{run:?}"
        );
        if args.contains(&"json") {
            // A script reading the JSON gets its shape, with the reason and the exit code.
            let report = run.json();
            assert_eq!(report["exit_code"], 2, "{run:?}");
            assert_eq!(report["objects"], serde_json::json!([]), "{run:?}");
            assert_eq!(report["summary"]["errors"], 1, "{run:?}");
            let error = report["errors"][0].as_str().unwrap_or_default();
            assert!(
                error.contains("unreachable") || error.contains("did not answer"),
                "{run:?}"
            );
        } else {
            assert_eq!(run.stdout, "", "{args:?}: {run:?}");
        }
    }
    assert_eq!(repo.git(&["status", "--porcelain"]), "", "nothing written");
}

#[test]
fn a_forbidden_namespace_and_a_bad_file_are_errors_yet_all_other_drift_is_reported() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    c.server.faults().forbid_namespace("payments");
    repo.write(
        "shop/broken.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: [\n",
    );

    let run = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(run.code, 2, "an incomplete check is an error: {run:?}");
    let report = run.json();
    assert_eq!(report["exit_code"], 2);
    assert_eq!(
        drifted_fields(&report),
        vec![field(
            "deployment/shop/cart",
            "changed",
            "spec.replicas",
            "kubectl",
            "scale"
        )],
        "the drift that could be computed is still there"
    );
    let errors: Vec<&str> = report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    // One per kind the payments manifests hold (Deployment, Service, Secret, CronJob, …).
    assert!(
        errors.iter().all(|e| e.starts_with("cannot list ")
            && e.contains(" in namespace \"payments\": ")
            && e.contains("forbidden")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("cannot list deployments.apps in namespace \"payments\": ")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e
            .starts_with("cannot list backuppolicies.ops.example.com in namespace \"payments\": ")),
        "{errors:?}"
    );
    let objects = report["objects"].as_array().unwrap();
    assert!(
        objects.iter().all(|o| o["namespace"] != "payments"),
        "unlisted manifests are not called missing: {run:?}"
    );
    assert!(
        objects.iter().any(|o| o["namespace"] == "platform"),
        "{run:?}"
    );
    // Helm's records in the forbidden namespace are not read either: a note says so.
    let (helm, problems): (Vec<&serde_json::Value>, Vec<&serde_json::Value>) = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .partition(|p| p["file"] == "helm");
    assert!(
        helm.iter().all(|p| p["message"]
            .as_str()
            .unwrap()
            .contains("were not read (forbidden)")
            && p["message"].as_str().unwrap().contains("payments")),
        "{helm:?}"
    );
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(
        problems[0]["file"],
        repo.path("shop/broken.yaml").display().to_string()
    );
    assert!(problems[0]["line"].as_u64().is_some(), "{problems:?}");

    let text = kdrift(&c, &repo, &["check", "-A"]);
    assert_eq!(text.code, 2, "{text:?}");
    assert!(text.stdout.contains("problem: "), "{text:?}");
    assert!(
        text.stdout
            .contains("error: cannot list deployments.apps in namespace \"payments\""),
        "{text:?}"
    );
}

/// `kdrift diff deploy/cart -n shop` on a pseudo-terminal: all it printed, and its exit code.
fn diff_on_a_terminal(c: &Cluster, repo: &Repo, no_color: bool) -> (String, u32) {
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: 50,
            cols: 200,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_kdrift"));
    cmd.args(["diff", "deploy/cart", "-n", "shop"]);
    cmd.cwd(repo.root());
    cmd.env("KUBECONFIG", &c.kubeconfig);
    cmd.env("HOME", c.dir.path());
    cmd.env("TERM", "xterm-256color");
    if no_color {
        cmd.env("NO_COLOR", "1");
    } else {
        cmd.env_remove("NO_COLOR");
    }
    let mut child = pty.slave.spawn_command(cmd).unwrap();
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().unwrap();
    let collect = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        out
    });
    let status = child.wait().unwrap();
    drop(pty.master);
    let out = collect.join().unwrap();
    (
        String::from_utf8_lossy(&out).into_owned(),
        status.exit_code(),
    )
}

#[test]
fn diff_is_coloured_on_a_terminal_unless_no_color() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);

    let (coloured, code) = diff_on_a_terminal(&c, &repo, false);
    assert_eq!(code, 1, "{coloured}");
    assert!(coloured.contains("replicas: 5"), "{coloured}");
    assert!(
        coloured.contains("\x1b["),
        "colour on a terminal: {coloured:?}"
    );

    let (plain, code) = diff_on_a_terminal(&c, &repo, true);
    assert_eq!(code, 1, "{plain}");
    assert!(plain.contains("replicas: 5"), "{plain}");
    assert!(
        !plain.contains("\x1b["),
        "NO_COLOR turns colour off: {plain:?}"
    );
}

#[test]
fn check_json_has_its_shape_on_every_setup_error() {
    let home = tempfile::tempdir().unwrap();
    let repo = Repo::demo();
    let missing = home.path().join("no-such-kubeconfig");
    let a_file = repo.path("shop/cart.yaml");
    let kubeconfig = home.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n",
    )
    .unwrap();
    let cases: [(&[&str], &std::path::Path); 4] = [
        (&["check", "-o", "json"], &missing),
        (&["check", "-o", "json", "--context", "nope"], &kubeconfig),
        (
            &["check", "-o", "json", "--manifests", "no-such-folder"],
            &kubeconfig,
        ),
        (
            &[
                "check",
                "-o",
                "json",
                "--manifests",
                a_file.to_str().unwrap(),
            ],
            &kubeconfig,
        ),
    ];
    for (args, config) in cases {
        let run = kdrift_env(home.path(), repo.root(), args, &[("KUBECONFIG", config)]);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        let report = run.json();
        assert_eq!(report["exit_code"], 2, "{args:?}: {run:?}");
        assert_eq!(report["summary"]["errors"], 1, "{args:?}: {run:?}");
        assert_eq!(
            report["errors"][0].as_str().map(|e| run.stderr.contains(e)),
            Some(true),
            "the JSON error is the one on stderr: {args:?}: {run:?}"
        );
    }
}

#[test]
fn a_check_that_compared_nothing_is_not_green() {
    let c = Cluster::start();
    let empty = tempfile::tempdir().unwrap();
    let repo = Repo::demo();
    let empty_path = empty.path().to_str().unwrap().to_owned();
    // No manifest at all (in a namespace no Helm release is in: a release is desired state
    // without a manifest), then manifests only outside the namespace in use.
    for args in [
        vec!["check", "-n", "shop", "--manifests", empty_path.as_str()],
        vec!["check", "-n", "default"],
    ] {
        let run = kdrift(&c, &repo, &args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        // Said once on a terminal (stdout and stderr together), in the report.
        let both = format!("{}{}", run.stdout, run.stderr);
        assert_eq!(
            both.matches("nothing was checked").count(),
            1,
            "{args:?}: {run:?}"
        );
        assert!(
            run.stdout.contains("error: ") && run.stdout.contains("nothing was checked"),
            "{args:?}: {run:?}"
        );
        let mut json_args = args.clone();
        json_args.extend(["-o", "json"]);
        let run = kdrift(&c, &repo, &json_args);
        // A machine-read report: its errors hold it, and stderr tells the person.
        assert!(
            run.stderr.contains("nothing was checked"),
            "{args:?}: {run:?}"
        );
        let report = run.json();
        assert_eq!(report["exit_code"], 2, "{run:?}");
        assert!(
            report["errors"][0]
                .as_str()
                .is_some_and(|e| e.contains("nothing was checked")),
            "{run:?}"
        );
        let mut allowed = args.clone();
        allowed.push("--allow-empty");
        let run = kdrift(&c, &repo, &allowed);
        assert_eq!(run.code, 0, "{allowed:?}: {run:?}");
    }
}

#[test]
fn files_kubectl_reads_are_read_and_templates_are_a_note() {
    let c = Cluster::start();
    let repo = Repo::demo();
    // A byte-order mark, a `kind: List`, a JSON file: kubectl applies all three.
    let cart = repo.read("shop/cart.yaml");
    repo.write("shop/cart.yaml", &format!("\u{feff}{cart}"));
    // Its two Deployments, catalog and catalog-search, as the items of one List.
    let items: Vec<serde_json::Value> = repo
        .read("shop/catalog.yaml")
        .split("\n---\n")
        .map(|doc| serde_yaml::from_str(doc).unwrap())
        .collect();
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    repo.write(
        "shop/catalog.yaml",
        &format!(
            "# the catalog, as kubectl get -o yaml writes it\n{}",
            serde_yaml::to_string(&list).unwrap()
        ),
    );
    // The frontend Deployment as JSON; its other objects stay in the YAML file.
    let frontend_file = repo.read("shop/frontend.yaml");
    let (first, rest) = frontend_file.split_once("\n---\n").unwrap();
    let frontend: serde_json::Value = serde_yaml::from_str(first).unwrap();
    repo.write("shop/frontend.yaml", rest);
    repo.write(
        "shop/frontend.json",
        &serde_json::to_string_pretty(&frontend).unwrap(),
    );
    // A Helm chart's template, and a file that is a template by its `{{ }}` alone.
    std::fs::create_dir_all(repo.path("chart/templates")).unwrap();
    repo.write(
        "chart/Chart.yaml",
        "apiVersion: v2\nname: x\nversion: 0.1.0\n",
    );
    repo.write(
        "chart/templates/web.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: \"{{ .Release.Name }}\"\n",
    );
    repo.write("shop/extra.yaml", "replicas: {{ .Values.replicas }}\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "--quiet", "-m", "files as kubectl reads them"]);

    let check = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(check.code, 0, "in sync, templates are notes: {check:?}");
    let report = check.json();
    let statuses: Vec<(String, String)> = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["namespace"] == "shop")
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_owned(),
                o["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for name in ["cart", "catalog", "catalog-search", "frontend"] {
        assert!(
            statuses.contains(&(name.to_owned(), "in-sync".to_owned())),
            "{name}: {statuses:?}"
        );
    }
    // Notes, not problems: two templates and the sub-folders read (as kubectl apply -R). (This
    // copy of the demo leaves its chart out: see `Repo::demo`.)
    assert_eq!(report["problems"], serde_json::json!([]), "{report}");
    assert_eq!(report["summary"]["notes"], 3, "{report}");
    assert_eq!(report["summary"]["problems"], 0, "{report}");
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["file"].as_str())
        .collect();
    assert_eq!(notes.len(), 3, "{report}");
    let folders = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["file"] == repo.root().display().to_string())
        .and_then(|n| n["message"].as_str())
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        folders.contains("in sub-folders (argocd/, crds/, flux-system/, payments/, platform/, shop/) are read, as kubectl apply -R -f reads a folder; kubectl apply -f DIR without -R would not read them"),
        "{folders}"
    );
    // The chart folder is Helm's: not read as manifests, and said not rendered (no release of
    // it is in the cluster, and .kdrift.yaml names none).
    assert!(notes.iter().any(|f| f.ends_with("/chart")), "{notes:?}");
    assert!(
        notes.iter().any(|f| f.ends_with("shop/extra.yaml")),
        "{notes:?}"
    );

    // Drift in each is found, with its place; accept refuses what it cannot edit.
    c.ok(&["scale", "deployment/catalog", "-n", "shop", "--replicas=4"]);
    c.ok(&["scale", "deployment/frontend", "-n", "shop", "--replicas=4"]);
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=4"]);
    let check = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(check.code, 1, "{check:?}");
    let catalog = check.json()["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "catalog")
        .cloned()
        .unwrap();
    // Line 5: the comment, apiVersion, kind, items, then the first item.
    assert_eq!(catalog["line"], 5, "the list item's line: {catalog}");
    let accept = kdrift(&c, &repo, &["accept", "deploy/catalog", "-n", "shop"]);
    assert_eq!(accept.code, 2, "{accept:?}");
    assert!(accept.stderr.contains("kind: List"), "{accept:?}");
    let accept = kdrift(&c, &repo, &["accept", "deploy/frontend", "-n", "shop"]);
    assert_eq!(accept.code, 2, "{accept:?}");
    assert!(accept.stderr.contains("JSON file"), "{accept:?}");
    // The byte-order mark stays through an accept.
    let accept = kdrift(&c, &repo, &["accept", "deploy/cart", "-n", "shop"]);
    assert_eq!(accept.code, 0, "{accept:?}");
    assert!(repo.read("shop/cart.yaml").starts_with("\u{feff}"));
    assert!(repo.read("shop/cart.yaml").contains("replicas: 4"));
}

#[test]
fn kubectl_drift_is_kdrift_as_a_kubectl_plugin() {
    // kubectl finds `kubectl-drift` on PATH and hands it the words after `drift`.
    let c = Cluster::start();
    let repo = Repo::demo();
    let plugin = std::path::Path::new(env!("CARGO_BIN_EXE_kubectl-drift"));
    let path = format!(
        "{}:{}",
        plugin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |args: &[&str]| {
        c.command(args)
            .env("PATH", &path)
            .env("KDRIFT_LOG", "off")
            .current_dir(repo.root())
            .output()
            .unwrap()
    };
    let listed = run(&["plugin", "list"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("kubectl-drift"),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let check = run(&["drift", "check", "-A"]);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    let check = run(&["drift", "check", "-n", "shop"]);
    assert_eq!(check.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&check.stdout).contains("deployment/shop/cart  spec.replicas"));
    let help = run(&["drift", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: kubectl drift"));
}

/// `-o yaml` is the JSON report as YAML (with its `schemaVersion`); `-o github` puts a
/// GitHub Actions `::warning` on the manifest line of each drifted field, the file named
/// relative to the current directory (the workspace in a job), then the summary line.
#[test]
fn check_writes_yaml_and_github_annotations() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    let json = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(json.code, 1, "{json:?}");
    let yaml = kdrift(&c, &repo, &["check", "-A", "-o", "yaml"]);
    assert_eq!(yaml.code, 1, "{yaml:?}");
    let from_yaml: serde_json::Value = serde_yaml::from_str(&yaml.stdout).unwrap();
    assert_eq!(from_yaml["schemaVersion"], 2);
    headless_util::assert_valid_report(&from_yaml);
    assert_eq!(from_yaml["schemaVersion"], json.json()["schemaVersion"]);
    assert_eq!(from_yaml["summary"], json.json()["summary"]);
    assert_eq!(drifted_fields(&from_yaml), drifted_fields(&json.json()));

    let github = kdrift(&c, &repo, &["check", "-A", "-o", "github"]);
    assert_eq!(github.code, 1, "{github:?}");
    let line = json.json()["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["key"] == "deployment/shop/cart")
        .map(|o| o["items"][0]["line"].as_u64().unwrap())
        .unwrap();
    let lines: Vec<&str> = github.stdout.lines().collect();
    // Then the writer and how long ago, as in the text report.
    assert!(
        lines[0].starts_with(&format!(
            "::warning file=shop/cart.yaml,line={line},title=kdrift%3A drift of deployment/shop/cart::spec.replicas: 2 in git, 5 live · kubectl"
        )),
        "{}",
        github.stdout
    );
    // The demo's manifests are in sub-folders: a notice says kubectl apply -f without -R
    // would not read them.
    assert_eq!(lines.len(), 3, "{}", github.stdout);
    assert!(
        lines[1].starts_with("::notice ") && lines[1].contains("kubectl apply -R -f"),
        "{}",
        github.stdout
    );
    assert!(
        lines[2].ends_with(
            "1 drifted (1 fields), 0 missing, 0 unmanaged, 0 errors; 0 problems, 1 notes"
        )
    );
}

/// The shipped schema is strict enough to catch a report that drifted from it: a real report
/// passes, and the same report with an unknown status, a missing field or a string line fails.
#[test]
fn the_shipped_schema_refuses_a_report_of_another_shape() {
    let c = Cluster::start();
    let repo = Repo::demo();
    c.ok(&["scale", "deployment/cart", "-n", "shop", "--replicas=5"]);
    let report = kdrift(&c, &repo, &["check", "-A", "-o", "json"]).json();
    let validator = headless_util::report_validator();
    assert!(validator.is_valid(&report));
    let cart = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .position(|o| o["key"] == "deployment/shop/cart")
        .unwrap();
    type Change = Box<dyn Fn(&mut serde_json::Value)>;
    let broken: [(&str, Change); 5] = [
        (
            "an unknown status",
            Box::new(move |r| r["objects"][cart]["status"] = "stale".into()),
        ),
        (
            "a drifted object without items",
            Box::new(move |r| r["objects"][cart]["items"] = serde_json::json!([])),
        ),
        (
            "a missing summary field",
            Box::new(|r| {
                r["summary"].as_object_mut().unwrap().remove("drifted");
            }),
        ),
        (
            "a line as text",
            Box::new(move |r| r["objects"][cart]["items"][0]["line"] = "7".into()),
        ),
        (
            "another schema version",
            Box::new(|r| r["schemaVersion"] = 1.into()),
        ),
    ];
    for (what, change) in broken {
        let mut copy = report.clone();
        change(&mut copy);
        assert!(!validator.is_valid(&copy), "{what} passed the schema");
    }
}

#[test]
fn a_few_manifests_in_a_big_cluster_are_read_by_name_and_many_are_listed() {
    let c = Cluster::start();
    c.ok(&["create", "namespace", "bulk"]);
    let configmap = |name: &str, value: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: bulk\ndata:\n  a: \"{value}\"\n"
        )
    };
    let all: Vec<String> = (0..40)
        .map(|i| configmap(&format!("cm-{i}"), &i.to_string()))
        .collect();
    c.apply("bulk", &all.join("---\n"));
    c.ok(&["label", "configmap/cm-2", "-n", "bulk", "tier=hotfix"]);
    // Three of the cluster's forty (one changed live since), and one it does not have.
    let repo = Repo::with_files(&[
        ("cm-0.yaml", &configmap("cm-0", "0")),
        ("cm-1.yaml", &configmap("cm-1", "1")),
        ("cm-2.yaml", &configmap("cm-2", "2")),
        ("gone.yaml", &configmap("cm-gone", "x")),
    ]);
    let before = c.server.faults().pages_listed("configmaps");
    let run = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = run.json();
    assert_eq!(
        keys_with_status(&report, "missing"),
        ["configmap/bulk/cm-gone"]
    );
    assert_eq!(
        keys_with_status(&report, "drifted"),
        ["configmap/bulk/cm-2"]
    );
    // (The demo cluster's Helm release is in sync too, from its release record.)
    let in_sync = keys_with_status(&report, "in-sync");
    let bulk: Vec<&&str> = in_sync.iter().filter(|k| k.contains("/bulk/")).collect();
    assert_eq!(bulk, [&"configmap/bulk/cm-0", &"configmap/bulk/cm-1"]);
    assert_eq!(
        c.server.faults().pages_listed("configmaps"),
        before,
        "four manifests against forty ConfigMaps: read by name, not listed"
    );

    // Asked for the objects no manifest describes: the kind is listed, whatever its size.
    let unmanaged = kdrift(&c, &repo, &["check", "-A", "--unmanaged", "-o", "json"]);
    assert_eq!(unmanaged.code, 1, "{unmanaged:?}");
    assert!(c.server.faults().pages_listed("configmaps") > before);
    assert!(
        keys_with_status(&unmanaged.json(), "unmanaged").contains(&"configmap/bulk/cm-39"),
        "{unmanaged:?}"
    );

    // Manifests for most of the kind's objects: one list is cheaper than a read each.
    let most: Vec<(String, String)> = (0..30)
        .map(|i| {
            (
                format!("cm-{i}.yaml"),
                configmap(&format!("cm-{i}"), &i.to_string()),
            )
        })
        .collect();
    let most: Vec<(&str, &str)> = most.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let listed = Repo::with_files(&most);
    let before = c.server.faults().pages_listed("configmaps");
    let run = kdrift(&c, &listed, &["check", "-A", "-o", "json"]);
    assert_eq!(
        keys_with_status(&run.json(), "drifted"),
        ["configmap/bulk/cm-2"]
    );
    assert!(
        c.server.faults().pages_listed("configmaps") > before,
        "{run:?}"
    );
}

#[test]
fn many_labelled_manifests_in_a_big_cluster_are_found_by_a_label_selector() {
    let c = Cluster::start();
    c.ok(&["create", "namespace", "labelled"]);
    let configmap = |name: &str, value: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: labelled\n  labels:\n    app: {name}\n    team: shop\ndata:\n  a: \"{value}\"\n"
        )
    };
    let all: Vec<String> = (0..120)
        .map(|i| configmap(&format!("cm-{i:03}"), &i.to_string()))
        .collect();
    c.apply("labelled", &all.join("---\n"));
    // Changed live: a value (found by the label), and the label itself (then read by name).
    c.ok(&[
        "label",
        "configmap/cm-001",
        "-n",
        "labelled",
        "--overwrite",
        "app=moved",
    ]);
    c.ok(&[
        "patch",
        "configmap/cm-002",
        "-n",
        "labelled",
        "-p",
        r#"{"data":{"a":"hotfix"}}"#,
    ]);
    // Twenty of the cluster's 120 and one it does not have.
    let mut files: Vec<(String, String)> = (0..20)
        .map(|i| {
            let name = format!("cm-{i:03}");
            (format!("{name}.yaml"), configmap(&name, &i.to_string()))
        })
        .collect();
    files.push(("gone.yaml".into(), configmap("cm-gone", "x")));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let repo = Repo::with_files(&files);
    let faults = c.server.faults();
    let (listed, selected, by_name) = (
        faults.pages_listed("configmaps"),
        faults.selectors_served("configmaps").len(),
        faults.read_by_name("configmaps"),
    );
    let run = kdrift(&c, &repo, &["check", "-A", "-o", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = run.json();
    assert_eq!(
        keys_with_status(&report, "missing"),
        ["configmap/labelled/cm-gone"]
    );
    assert_eq!(
        keys_with_status(&report, "drifted"),
        ["configmap/labelled/cm-001", "configmap/labelled/cm-002"]
    );
    let in_sync = keys_with_status(&report, "in-sync");
    assert_eq!(
        in_sync.iter().filter(|k| k.contains("/labelled/")).count(),
        18,
        "{run:?}"
    );
    assert_eq!(
        faults.pages_listed("configmaps"),
        listed,
        "not listed whole"
    );
    let served = faults.selectors_served("configmaps");
    let by_app: Vec<&String> = served[selected..]
        .iter()
        .filter(|s| s.starts_with("app in ("))
        .collect();
    assert_eq!(by_app.len(), 1, "one list by the label `app`: {served:?}");
    assert!(by_app[0].contains("cm-000,cm-001,cm-002,"), "{by_app:?}");
    assert_eq!(
        faults.read_by_name("configmaps") - by_name,
        2,
        "read by name: the one whose label changed and the one that is gone"
    );
}

/// Issue 46: a manifest's `hostNetwork: false`, `minReadySeconds: 0`, a probe's
/// `initialDelaySeconds: 0`… are dropped by the demo cluster as by a real server, and are not
/// drift right after `kubectl apply` (every non-pointer `omitempty` scalar of the structs used).
#[test]
fn zero_values_the_server_drops_are_dropped_and_not_drift() {
    let c = Cluster::start_with(false);
    c.ok(&["create", "namespace", "zero"]);
    let objects = zero_values_util::objects("zero");
    let repo = Repo::with_files(&[("zero.yaml", &zero_values_util::manifests(&objects))]);
    zero_values_util::assert_zeros_are_no_drift(
        &objects,
        &repo.path("zero.yaml"),
        &|args| c.ok(&[args, &["-n", "zero"]].concat()),
        &|name, text| c.file(name, text),
        &|| {
            let run = kdrift(&c, &repo, &["check", "-n", "zero"]);
            (run.code, format!("{run:?}"))
        },
    );
}
