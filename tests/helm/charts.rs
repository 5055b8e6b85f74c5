//! Helm charts in the checkout, rendered with the real helm (`KDRIFT_TEST_HELM`, else `helm` on
//! PATH; without one each test says on stderr that it is skipped): the chart of
//! `testdata/helm/charts/web` is installed in the demo cluster as helm 4 leaves a release (its
//! record and its objects applied as field manager `helm`, from the real `helm template` with
//! the prod values file), and the checkout names the chart in `.kdrift.yaml`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::headless_util;
use crate::helm_util;

use std::path::{Path, PathBuf};

use common::Cluster;
use headless_util::{Repo, Run, drifted_fields};
use serde_json::{Value, json};

const NAMESPACE: &str = "charts";

const PROD: &str = "# prod runs three\nreplicaCount: 3 # one per zone\ngreeting: hello from prod\n";

const CONFIG: &str = "helm:\n  charts:\n    - path: charts/web\n      release: web\n      namespace: charts\n      values: [envs/prod.yaml]\n";

fn chart_files() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/helm/charts/web");
    let mut files = Vec::new();
    for rel in [
        "Chart.yaml",
        "values.yaml",
        "templates/_helpers.tpl",
        "templates/deployment.yaml",
        "templates/configmap.yaml",
        "templates/tests/test.yaml",
    ] {
        files.push((
            format!("charts/web/{rel}"),
            std::fs::read_to_string(dir.join(rel)).unwrap(),
        ));
    }
    files
}

struct Setup {
    c: Cluster,
    repo: Repo,
    helm: PathBuf,
}

impl Setup {
    /// `kdrift ARGS` in the checkout against the demo cluster, with `helm` as the helm.
    fn kdrift(&self, args: &[&str]) -> Run {
        self.kdrift_with(args, &self.helm)
    }

    fn kdrift_with(&self, args: &[&str], helm: &Path) -> Run {
        let mut cmd = headless_util::command(self.c.dir.path(), self.repo.root(), args);
        cmd.env("KUBECONFIG", &self.c.kubeconfig)
            .env("KDRIFT_HELM", helm);
        let out = cmd.output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The real `helm template` of the checkout's chart with its prod values, hooks included.
    fn template(&self) -> String {
        helm_util::template(
            &self.helm,
            "web",
            &self.repo.path("charts/web"),
            NAMESPACE,
            &[
                "--values",
                self.repo.path("envs/prod.yaml").to_str().unwrap(),
            ],
        )
    }
}

/// The demo cluster with release `charts/web` installed from the chart with the prod values, and
/// the checkout naming the chart; `None` when there is no helm.
fn installed(test: &str) -> Option<Setup> {
    installed_with(test, CONFIG)
}

/// [`installed`] with `config` as the checkout's `.kdrift.yaml`.
fn installed_with(test: &str, config: &str) -> Option<Setup> {
    let helm = helm_util::helm_for_tests(test)?;
    let mut files = chart_files();
    files.push(("envs/prod.yaml".into(), PROD.into()));
    files.push((".kdrift.yaml".into(), config.into()));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let repo = Repo::with_files(&refs);
    let c = Cluster::start_with(false);
    let setup = Setup { c, repo, helm };
    setup.c.ok(&["create", "namespace", NAMESPACE]);
    let manifest = helm_util::without_hooks(&setup.template());
    let config = json!({"replicaCount": 3, "greeting": "hello from prod"});
    let record = helm_util::record_of(NAMESPACE, "web", 1, ("web", "1.2.0"), config, &manifest);
    let file = setup.c.file("record.json", &record.to_string());
    setup.c.ok(&["create", "-f", file.to_str().unwrap()]);
    let objects = helm_util::applied_manifest(NAMESPACE, "web", &manifest);
    let file = setup.c.file("objects.json", &objects.to_string());
    setup.c.ok(&[
        "apply",
        "--server-side",
        "--field-manager=helm",
        "-f",
        file.to_str().unwrap(),
    ]);
    Some(setup)
}

/// The messages of the report's problems and notes.
fn messages(report: &Value) -> Vec<String> {
    ["problems", "notes"]
        .iter()
        .flat_map(|list| report[list].as_array().unwrap())
        .map(|p| p["message"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_chart_in_sync_with_its_release_then_a_hotfix_accepted_into_the_values_file() {
    let Some(s) =
        installed("a_chart_in_sync_with_its_release_then_a_hotfix_accepted_into_the_values_file")
    else {
        return;
    };
    let run = s.kdrift(&["check", "-n", NAMESPACE, "-o", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let report = run.json();
    assert!(
        report.get("helm").is_none(),
        "git renders what the release holds: {run:?}"
    );
    assert_eq!(report["summary"]["in_sync"], 2, "{run:?}");
    assert!(
        messages(&report).iter().any(|m| m.contains(
            "rendered chart charts/web (release charts/web, values from .kdrift.yaml:3)"
        )),
        "which source gave the values is said: {run:?}"
    );

    // A hotfix: five replicas. Drift of the live object from the release, by kubectl.
    s.c.ok(&["scale", "deployment/web", "-n", NAMESPACE, "--replicas=5"]);
    let run = s.kdrift(&["check", "-n", NAMESPACE, "-o", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        drifted_fields(&run.json()),
        [[
            "deployment/charts/web",
            "changed",
            "spec.replicas",
            "kubectl",
            "Update",
            "scale"
        ]
        .map(str::to_owned)]
    );

    // Accepted into the values file the source names: one line, its comment kept, one commit.
    let before = s.repo.head();
    let run = s.kdrift(&["accept", "deployment/web", "-n", NAMESPACE]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("spec.replicas comes from value replicaCount: 3 → 5"),
        "{run:?}"
    );
    assert!(run.stdout.contains("proved: helm template"), "{run:?}");
    assert_eq!(
        s.repo.read("envs/prod.yaml"),
        "# prod runs three\nreplicaCount: 5 # one per zone\ngreeting: hello from prod\n"
    );
    let changed = s.repo.git(&["diff", "--name-only", &before, "HEAD"]);
    assert_eq!(changed.trim(), "envs/prod.yaml");
    assert_eq!(
        s.repo
            .git(&["rev-list", "--count", &format!("{before}..HEAD")])
            .trim(),
        "1"
    );
    // helm template of the result equals live.
    assert!(s.template().contains("  replicas: 5\n"), "{}", s.template());

    // The release still says three, git and live five: the hotfix is in git, a pending helm
    // upgrade and no drift (issue 47): a cron check is green the moment the accept is in git.
    let run = s.kdrift(&["check", "-n", NAMESPACE, "-o", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let report = run.json();
    let web = report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["key"] == "deployment/charts/web")
        .unwrap();
    assert_eq!(web["status"], "in-sync", "{web}");
    assert_eq!(web["items"][0]["class"], "in-git", "{web}");
    assert_eq!(web["items"][0]["path"], "spec.replicas", "{web}");
    let pending = &report["helm"]["pending_upgrades"];
    assert_eq!(pending.as_array().unwrap().len(), 1, "{run:?}");
    assert_eq!(pending[0]["key"], "deployment/charts/web");
    assert_eq!(
        pending[0]["fields"],
        json!([{"path": "spec.replicas", "release": 3, "git": 5}])
    );
    let text = s.kdrift(&["check", "-n", NAMESPACE]);
    assert!(
        text.stdout
            .contains("deployment/charts/web  pending upgrade  spec.replicas  3 → 5"),
        "{text:?}"
    );
    assert!(
        text.stdout
            .contains("spec.replicas  3 → 5  helm:charts/web rev 1")
            && text
                .stdout
                .contains("in git, pending helm upgrade · kubectl"),
        "{text:?}"
    );
}

/// `kubectl set image` of a chart whose template composes the image (`repository:tag`): the
/// tag is the value that differs, accepted into the values file, proved by rendering.
#[test]
fn a_new_image_tag_is_accepted_into_the_value_of_the_composed_image() {
    let Some(s) = installed("a_new_image_tag_is_accepted_into_the_value_of_the_composed_image")
    else {
        return;
    };
    s.c.ok(&[
        "set",
        "image",
        "deployment/web",
        "-n",
        NAMESPACE,
        "web=nginx:1.28-hotfix",
    ]);
    let run = s.kdrift(&["accept", "deployment/web", "-n", NAMESPACE]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("comes from value image.tag: 1.27 → 1.28-hotfix"),
        "{run:?}"
    );
    let values = s.repo.read("envs/prod.yaml");
    assert!(values.contains("tag: 1.28-hotfix"), "{values}");
    let check = s.kdrift(&["check", "-n", NAMESPACE]);
    assert_eq!(check.code, 0, "{check:?}");
}

#[test]
fn a_field_no_value_sets_alone_is_refused_naming_its_template_line() {
    let Some(s) = installed("a_field_no_value_sets_alone_is_refused_naming_its_template_line")
    else {
        return;
    };
    // Another registry and tag at once: no one value of `repository:tag` makes it.
    s.c.ok(&[
        "set",
        "image",
        "deployment/web",
        "-n",
        NAMESPACE,
        "web=registry.example/nginx:1.28-hotfix",
    ]);
    let run = s.kdrift(&["accept", "deployment/web", "-n", NAMESPACE]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(
            "is written by charts/web/templates/deployment.yaml:19 (`image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"`)"
        ),
        "{run:?}"
    );
    assert!(run.stderr.contains("nothing was written"), "{run:?}");
    assert_eq!(
        s.repo.git(&["status", "--porcelain"]),
        "",
        "nothing written"
    );
}

#[test]
fn a_chart_that_fails_to_render_is_named_and_without_helm_the_release_is_still_compared() {
    let Some(s) = installed(
        "a_chart_that_fails_to_render_is_named_and_without_helm_the_release_is_still_compared",
    ) else {
        return;
    };
    // A second chart whose template helm cannot parse.
    std::fs::create_dir_all(s.repo.path("charts/broken/templates")).unwrap();
    s.repo.write(
        "charts/broken/Chart.yaml",
        "apiVersion: v2\nname: broken\nversion: 0.1.0\n",
    );
    s.repo.write(
        "charts/broken/templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name \n",
    );
    s.repo.write(
        ".kdrift.yaml",
        &format!("{CONFIG}    - path: charts/broken\n      namespace: charts\n"),
    );
    s.c.ok(&["scale", "deployment/web", "-n", NAMESPACE, "--replicas=4"]);
    let run = s.kdrift(&["check", "-n", NAMESPACE, "-o", "json"]);
    assert_eq!(
        run.code, 2,
        "a chart that does not render hides its objects: {run:?}"
    );
    let report = run.json();
    let failed: Vec<String> = messages(&report)
        .into_iter()
        .filter(|m| m.contains("charts/broken"))
        .collect();
    assert_eq!(failed.len(), 1, "{run:?}");
    assert!(
        failed[0].contains("chart charts/broken (release charts/broken, values from .kdrift.yaml:")
            && failed[0].contains("not rendered: helm template failed: ")
            && failed[0].contains("templates/cm.yaml"),
        "the chart and helm's words: {failed:?}"
    );
    assert_eq!(
        report["summary"]["drifted"], 1,
        "the rest is compared: {run:?}"
    );

    // No helm at all (issue 46): git's charts are unread, so the check is not green: a problem
    // per chart naming what to fix, and the release is still compared.
    let run = s.kdrift_with(
        &["check", "-n", NAMESPACE, "-o", "json"],
        Path::new("/nonexistent/helm"),
    );
    assert_eq!(run.code, 2, "charts unread: {run:?}");
    let report = run.json();
    assert!(
        messages(&report).iter().any(|m| m.contains(
            "not rendered: KDRIFT_HELM names \"/nonexistent/helm\", which is not a file"
        )),
        "{run:?}"
    );
    assert_eq!(
        drifted_fields(&report),
        [[
            "deployment/charts/web",
            "changed",
            "spec.replicas",
            "kubectl",
            "Update",
            "scale"
        ]
        .map(str::to_owned)]
    );
}

/// The YAML documents of `text`, as JSON, empty ones left out.
fn documents(text: &str) -> Vec<Value> {
    serde_yaml::Deserializer::from_str(text)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .filter(|v: &Value| !v.is_null())
        .collect()
}

/// The demo's Helm release (demo/search) is what the real helm renders from the chart and the
/// values file it names: the demo cluster installs it without a helm, from a copy.
#[test]
fn the_demo_release_is_what_helm_renders_from_the_demo_chart() {
    let Some(helm) =
        helm_util::helm_for_tests("the_demo_release_is_what_helm_renders_from_the_demo_chart")
    else {
        return;
    };
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("demo");
    let releases = kdrift::sim::scenario::manifests::DEMO_RELEASES;
    assert_eq!(releases.len(), 1);
    for release in releases {
        let values = demo.join(release.values);
        let rendered = helm_util::template(
            &helm,
            release.name,
            &demo.join(release.chart),
            release.namespace,
            &["-f", values.to_str().unwrap()],
        );
        assert_eq!(
            documents(&rendered),
            documents(release.manifest),
            "{}: the seed's copy is stale; render it again into crates/kdrift-sim/src/scenario/rendered/",
            release.chart
        );
    }
}

/// The demo incident's last step scales the search release by hand: check names the release
/// and kubectl, accept writes the live value into demo/search/values-prod.yaml (its comment
/// kept, one commit), and helm template of the result equals live.
#[test]
fn the_demo_s_hotfix_to_its_helm_release_is_accepted_into_the_values_file() {
    let Some(helm) = helm_util::helm_for_tests(
        "the_demo_s_hotfix_to_its_helm_release_is_accepted_into_the_values_file",
    ) else {
        return;
    };
    let c = Cluster::start();
    let repo = Repo::demo_with_chart();
    let s = Setup { c, repo, helm };
    let step = search_hotfix();
    s.c.runtime
        .block_on(kdrift::sim::scenario::incident::run_step(
            s.c.server.store(),
            s.c.server.gitops(),
            &step,
        ))
        .unwrap();
    let check = s.kdrift(&["check", "-n", "search"]);
    assert_eq!(check.code, 1, "{check:?}");
    assert!(
        check.stdout.contains("deployment/search/search  spec.replicas  2 → 4  helm:search/search rev 1 (chart search-0.4.2) · kubectl (Update via /scale)"),
        "{check:?}"
    );
    let head = s.repo.head();
    let accept = s.kdrift(&["accept", "deployment/search", "-n", "search"]);
    assert_eq!(accept.code, 0, "{accept:?}");
    assert_eq!(
        s.repo.read("search/values-prod.yaml"),
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/search/values-prod.yaml")
        )
        .unwrap()
        .replace(
            "replicaCount: 2 # one per zone",
            "replicaCount: 4 # one per zone"
        )
    );
    assert_eq!(
        s.repo
            .git(&["rev-list", "--count", &format!("{head}..HEAD")])
            .trim(),
        "1"
    );
    let rendered = helm_util::template(
        &s.helm,
        "search",
        &s.repo.path("search"),
        "search",
        &[
            "-f",
            s.repo.path("search/values-prod.yaml").to_str().unwrap(),
        ],
    );
    let live = s.c.get_json("deployment/search", "search");
    let deployment = documents(&rendered)
        .into_iter()
        .find(|d| d["kind"] == "Deployment")
        .unwrap();
    assert_eq!(deployment["spec"]["replicas"], live["spec"]["replicas"]);
    assert_eq!(live["spec"]["replicas"], 4);
}

/// The same hotfix when no `.kdrift.yaml` names the chart but a Flux HelmRelease installs it
/// from the GitRepository of this checkout: check says the values came from the HelmRelease and
/// accept writes into the values file the HelmRelease names.
#[test]
fn a_flux_helm_release_names_the_chart_and_values_file_an_accept_writes() {
    let Some(helm) = helm_util::helm_for_tests(
        "a_flux_helm_release_names_the_chart_and_values_file_an_accept_writes",
    ) else {
        return;
    };
    let c = Cluster::start();
    let repo = Repo::demo_with_chart();
    repo.write(".kdrift.yaml", "# the search chart is named by Flux\n");
    repo.git(&["commit", "--quiet", "-am", "no chart in .kdrift.yaml"]);
    repo.git(&[
        "remote",
        "add",
        "origin",
        kdrift::sim::scenario::DEMO_REPO_URL,
    ]);
    let s = Setup { c, repo, helm };
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/flux");
    let crd = testdata.join("helmreleases-crd.yaml");
    s.c.ok(&["apply", "-f", crd.to_str().unwrap()]);
    s.c.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/helmreleases.helm.toolkit.fluxcd.io",
        "--timeout=30s",
    ]);
    let release = testdata.join("search-helmrelease.yaml");
    s.c.ok(&["apply", "-f", release.to_str().unwrap()]);
    let kept = s.c.get_json("helmrelease/search", "flux-system");
    assert_eq!(
        kept["spec"]["chart"]["spec"]["valuesFiles"][0], "search/values-prod.yaml",
        "the demo keeps a preserve-unknown-fields spec: {kept}"
    );
    let step = search_hotfix();
    s.c.runtime
        .block_on(kdrift::sim::scenario::incident::run_step(
            s.c.server.store(),
            s.c.server.gitops(),
            &step,
        ))
        .unwrap();

    let check = s.kdrift(&["check", "-n", "search", "-o", "json"]);
    assert_eq!(check.code, 1, "{check:?}");
    let report = check.json();
    let said = messages(&report);
    assert!(
        said.iter().any(|m| m.contains(
            "Flux HelmRelease flux-system/search: \"search\" is a Helm chart, rendered with helm template as helm-controller renders it (release search/search, 1 values file(s)"
        )),
        "{said:#?}"
    );
    assert!(
        said.iter()
            .any(|m| m.contains("values from Flux HelmRelease flux-system/search")),
        "{said:#?}"
    );
    let fields = drifted_fields(&report);
    assert!(
        fields
            .iter()
            .any(|f| f[0] == "deployment/search/search" && f[2] == "spec.replicas"),
        "{fields:?}"
    );

    let accept = s.kdrift(&["accept", "deployment/search", "-n", "search"]);
    assert_eq!(accept.code, 0, "{accept:?}");
    assert!(
        s.repo
            .read("search/values-prod.yaml")
            .contains("replicaCount: 4 # one per zone"),
        "{}",
        s.repo.read("search/values-prod.yaml")
    );
    // Git now says 4 and the release still 2: a pending upgrade (Flux's next reconcile), while
    // live stays apart from what helm applied until then.
    let check = s.kdrift(&["check", "-n", "search"]);
    assert!(
        check.stdout.contains("deployment/search/search  pending upgrade  spec.replicas  2 → 4  (git's chart search (release search/search, values from Flux HelmRelease flux-system/search) vs helm:search/search rev 1 (chart search-0.4.2))"),
        "{check:?}"
    );
}

/// Issue 47: the night's hotfix is several fields at once (replicas up, a memory limit raised,
/// an env var turned to debug): one plain `kdrift accept` writes all three into the environment's values
/// file in one commit, proved by rendering, and `check` is green right after (the hotfix is in
/// git, a pending helm upgrade).
#[test]
fn a_three_field_hotfix_is_accepted_in_one_step_and_check_is_green_after() {
    let Some(s) =
        installed("a_three_field_hotfix_is_accepted_in_one_step_and_check_is_green_after")
    else {
        return;
    };
    s.c.ok(&["scale", "deployment/web", "-n", NAMESPACE, "--replicas=5"]);
    s.c.ok(&[
        "set",
        "resources",
        "deployment/web",
        "-n",
        NAMESPACE,
        "--limits=memory=512Mi",
    ]);
    s.c.ok(&[
        "set",
        "env",
        "deployment/web",
        "-n",
        NAMESPACE,
        "LOG_LEVEL=debug",
    ]);
    let check = s.kdrift(&["check", "-n", NAMESPACE, "-o", "json"]);
    assert_eq!(check.code, 1, "{check:?}");
    assert_eq!(drifted_fields(&check.json()).len(), 3, "{check:?}");
    // In a CI job, each annotation is placed where the checkout says the field (GitHub cannot
    // place one on the release): on the line of the environment's values file that sets the
    // value, else on the template line that writes the field.
    let github = s.kdrift(&["check", "-n", NAMESPACE, "-o", "github"]);
    assert!(
        github.stdout.contains(&format!(
            "::warning file=envs/prod.yaml,line=2,title=kdrift%3A drift of deployment/{NAMESPACE}/web::spec.replicas: 3 in git, 5 live"
        )) && github.stdout.contains(
            "::warning file=charts/web/templates/deployment.yaml,line=27,"
        ) && !github.stdout.contains("file=helm:"),
        "{github:?}"
    );

    let before = s.repo.head();
    let run = s.kdrift(&["accept", "deployment/web", "-n", NAMESPACE]);
    assert_eq!(run.code, 0, "{run:?}");
    for note in [
        "spec.replicas comes from value replicaCount: 3 → 5",
        "comes from value resources.limits.memory: 128Mi → 512Mi",
        "comes from value logLevel: info → debug",
        "proved: helm template",
    ] {
        assert!(run.stdout.contains(note), "{note}: {run:?}");
    }
    let values = s.repo.read("envs/prod.yaml");
    assert!(
        values.starts_with(
            "# prod runs three\nreplicaCount: 5 # one per zone\ngreeting: hello from prod\n"
        ) && values.contains("memory: 512Mi")
            && values.contains("logLevel: debug"),
        "{values}"
    );
    assert_eq!(
        s.repo
            .git(&["rev-list", "--count", &format!("{before}..HEAD")])
            .trim(),
        "1",
        "one commit"
    );
    let rendered = s.template();
    assert!(
        rendered.contains("  replicas: 5\n") && rendered.contains("memory: 512Mi"),
        "{rendered}"
    );
    let check = s.kdrift(&["check", "-n", NAMESPACE]);
    assert_eq!(check.code, 0, "green right after the accept: {check:?}");

    // Two more changes later: a revert of one of them by `--field` leaves the other and the
    // accepted fields live; a plain revert then puts back what git lacks and still leaves the
    // accepted fields (in git, waiting for helm upgrade) as they are.
    let live = |path: &str| {
        s.c.ok(&[
            "get",
            "deployment/web",
            "-n",
            NAMESPACE,
            "-o",
            &format!("jsonpath={{{path}}}"),
        ])
    };
    s.c.ok(&[
        "patch",
        "deployment/web",
        "-n",
        NAMESPACE,
        "-p",
        r#"{"spec":{"minReadySeconds":7}}"#,
    ]);
    s.c.ok(&[
        "annotate",
        "deployment/web",
        "-n",
        NAMESPACE,
        "oncall=paged",
    ]);
    let run = s.kdrift(&[
        "revert",
        "deployment/web",
        "-n",
        NAMESPACE,
        "--field",
        "spec.minReadySeconds",
        "--yes",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    for said in [
        "leaves metadata.annotations.oncall as it is live: not named with --field",
        "leaves spec.replicas as it is live: not named with --field",
    ] {
        assert!(run.stdout.contains(said), "{said}: {run:?}");
    }
    assert_eq!(live(".spec.minReadySeconds"), "");
    assert_eq!(live(".metadata.annotations.oncall"), "paged");
    assert_eq!(live(".spec.replicas"), "5");
    assert_eq!(
        live(".spec.template.spec.containers[0].resources.limits.memory"),
        "512Mi"
    );
    let unknown = s.kdrift(&[
        "revert",
        "deployment/web",
        "-n",
        NAMESPACE,
        "--field",
        "spec.paused",
        "--yes",
    ]);
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(
        unknown
            .stderr
            .contains("has no drifted field \"spec.paused\" (its drifted fields: ")
            && unknown.stderr.contains("metadata.annotations.oncall"),
        "{unknown:?}"
    );

    let run = s.kdrift(&["revert", "deployment/web", "-n", NAMESPACE, "--yes"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("leaves spec.replicas as it is live: git already holds this value"),
        "{run:?}"
    );
    assert_eq!(live(".metadata.annotations.oncall"), "");
    assert_eq!(live(".spec.replicas"), "5");
    assert_eq!(
        live(".spec.template.spec.containers[0].env[?(@.name==\"LOG_LEVEL\")].value"),
        "debug"
    );
    let check = s.kdrift(&["check", "-n", NAMESPACE]);
    assert_eq!(check.code, 0, "green after the reverts: {check:?}");
}

/// Issue 47: a chart that renders differently every time (a token from `randAlphaNum`) cannot
/// prove any value; the refusal says so and names the function, not "it changes other fields".
#[test]
fn a_chart_that_renders_differently_every_run_is_named_as_the_cause() {
    let Some(s) = installed("a_chart_that_renders_differently_every_run_is_named_as_the_cause")
    else {
        return;
    };
    s.repo.write(
        "charts/web/templates/token.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: web-token\nstringData:\n  token: {{ randAlphaNum 16 | quote }}\n",
    );
    s.repo.git(&["add", "-A"]);
    s.repo.git(&["commit", "--quiet", "-m", "a token"]);
    s.c.ok(&["scale", "deployment/web", "-n", NAMESPACE, "--replicas=5"]);
    let run = s.kdrift(&["accept", "deployment/web", "-n", NAMESPACE]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("renders differently on every run (its templates call randAlphaNum): two renders of the same values differ at secret/charts/web-token"),
        "{run:?}"
    );
    assert_eq!(s.repo.read("envs/prod.yaml"), PROD, "nothing was written");
}

/// Issue 47: a release's object deleted live is not created behind helm's back by a revert: it
/// says that `helm upgrade` (or `helm rollback` to the release's revision) recreates it.
#[test]
fn a_missing_release_object_is_left_to_helm_to_recreate() {
    let Some(s) = installed("a_missing_release_object_is_left_to_helm_to_recreate") else {
        return;
    };
    s.c.ok(&["delete", "deployment/web", "-n", NAMESPACE]);
    let run = s.kdrift(&["revert", "deployment/web", "-n", NAMESPACE, "--yes"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "does not exist in the cluster: there is nothing to revert (it is an object of Helm release {NAMESPACE}/web: `helm upgrade web … -n {NAMESPACE}` recreates it, or `helm rollback web 1 -n {NAMESPACE}` applies revision 1 again)"
        )),
        "{run:?}"
    );
}

/// Issue 46: an accept interrupted while helm renders (its proof writes live values into
/// temporary folders) stops helm, leaves no temporary folder behind, and exits 130.
#[test]
fn an_interrupted_accept_of_a_chart_leaves_no_temporary_folder() {
    let Some(s) = installed("an_interrupted_accept_of_a_chart_leaves_no_temporary_folder") else {
        return;
    };
    s.c.ok(&["scale", "deployment/web", "-n", NAMESPACE, "--replicas=5"]);
    // A helm whose `template` takes long: the accept is interrupted while it renders.
    let scratch = tempfile::tempdir().unwrap();
    let slow = scratch.path().join("slow-helm");
    std::fs::write(
        &slow,
        format!(
            "#!/bin/sh\nif [ \"$1\" = template ]; then sleep 60; fi\nexec {} \"$@\"\n",
            s.helm.display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let tmp = scratch.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut cmd = headless_util::command(
        s.c.dir.path(),
        s.repo.root(),
        &["accept", "deployment/web", "-n", NAMESPACE],
    );
    cmd.env("KUBECONFIG", &s.c.kubeconfig)
        .env("KDRIFT_HELM", &slow)
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    // Until the render's folder is there (helm sleeping in it).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::fs::read_dir(&tmp).unwrap().next().is_none() {
        assert!(std::time::Instant::now() < deadline, "no render started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) of the child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    assert_eq!(s.repo.git(&["status", "--porcelain"]), "", "git as it was");
}

/// Issue 47: a value set outside the values files and over them (`.kdrift.yaml`'s `set:`, as an
/// Argo CD Application's parameters) is named as the source of the field: an edit of the values
/// file would render nothing new. Before, the accept tried the values file and refused saying the
/// value "changes other fields" or to edit the template.
#[test]
fn a_value_set_over_the_values_files_is_named_as_the_field_s_source() {
    let config = format!("{CONFIG}      set: {{replicaCount: \"3\"}}\n");
    let Some(s) = installed_with(
        "a_value_set_over_the_values_files_is_named_as_the_field_s_source",
        &config,
    ) else {
        return;
    };
    let check = s.kdrift(&["check", "-n", NAMESPACE]);
    assert_eq!(check.code, 0, "{check:?}");
    s.c.ok(&["scale", "deployment/web", "-n", NAMESPACE, "--replicas=5"]);
    let head = s.repo.head();
    let run = s.kdrift(&["accept", "deployment/web", "-n", NAMESPACE]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(
            "spec.replicas comes from value replicaCount, which the set: of .kdrift.yaml:3 (replicaCount=3) sets, outside the values files and over them: change it there"
        ),
        "{run:?}"
    );
    assert_eq!(s.repo.head(), head, "nothing committed");
    assert_eq!(s.repo.read("envs/prod.yaml"), PROD);
}

/// The demo incident's hand scale of its Helm release.
fn search_hotfix() -> kdrift::sim::scenario::incident::Step {
    kdrift::sim::scenario::incident::steps()
        .into_iter()
        .find(|s| s.target().namespace == "search")
        .unwrap()
}
