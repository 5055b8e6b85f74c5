#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::collections::BTreeMap;

use serde_json::json;

use super::*;

#[test]
fn repository_urls_compare_without_scheme_user_port_and_dot_git() {
    let same = [
        "https://github.com/Org/App.git",
        "https://github.com/org/app",
        "git@github.com:org/app.git",
        "ssh://git@github.com:22/org/app.git/",
        "http://user@github.com/org/app/",
    ];
    for url in same {
        assert_eq!(
            repo_key(url).as_deref(),
            Some("github.com/org/app"),
            "{url}"
        );
    }
    assert_ne!(repo_key("https://github.com/org/app2"), repo_key(same[0]));
    assert_ne!(repo_key("https://gitlab.com/org/app"), repo_key(same[0]));
    assert_eq!(repo_key(""), None);
}

fn app(name: &str, source: Value, destination: Value) -> Value {
    json!({
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {"source": source, "destination": destination},
    })
}

fn here(ns: &str) -> Value {
    json!({"server": "https://kubernetes.default.svc", "namespace": ns})
}

#[test]
fn applications_of_the_checkout_map_their_folders_and_say_so() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path();
    for dir in ["shop", "platform/overlays/prod", "chart", "other"] {
        std::fs::create_dir_all(top.join(dir)).unwrap();
    }
    std::fs::write(
        top.join("platform/overlays/prod/kustomization.yaml"),
        "resources: []\n",
    )
    .unwrap();
    std::fs::write(top.join("chart/Chart.yaml"), "name: c\n").unwrap();
    let remotes = vec![(
        "origin".to_owned(),
        "git@git.example:team/deploy.git".to_owned(),
    )];
    let url = "https://git.example/team/deploy";
    let apps = vec![
        app(
            "shop",
            json!({"repoURL": url, "path": "shop", "targetRevision": "HEAD"}),
            here("shop"),
        ),
        app(
            "platform",
            json!({"repoURL": url, "path": "platform/overlays/prod"}),
            json!({"name": "in-cluster"}),
        ),
        app(
            "charted",
            json!({"repoURL": url, "path": "chart"}),
            here("c"),
        ),
        app(
            "gone",
            json!({"repoURL": url, "path": "nowhere", "targetRevision": "release"}),
            here("g"),
        ),
        app(
            "elsewhere",
            json!({"repoURL": url, "path": "other"}),
            json!({"server": "https://prod.example:6443"}),
        ),
        app(
            "foreign",
            json!({"repoURL": "https://git.example/team/other", "path": "other"}),
            here("f"),
        ),
        app("escape", json!({"repoURL": url, "path": "../x"}), here("e")),
    ];
    let mapping = map_checkout(top, &remotes, Some("main"), &apps, "https://127.0.0.1:6443");
    let folders: Vec<(&str, String, bool)> = mapping
        .folders
        .iter()
        .map(|f| (f.app.as_str(), shown(top, &f.dir), f.kustomize))
        .collect();
    assert_eq!(
        folders,
        [
            ("argocd/platform", "platform/overlays/prod".to_owned(), true),
            ("argocd/shop", "shop".to_owned(), false),
        ]
    );
    assert_eq!(mapping.folders[1].namespace.as_deref(), Some("shop"));
    let notes = mapping.notes.join("\n");
    assert!(notes.starts_with("manifests from Argo CD apps: argocd/platform → platform/overlays/prod (kustomize), argocd/shop → shop (directory)"), "{notes}");
    assert!(
        notes.contains("argocd/charted: \"chart\" is a Helm chart, rendered with helm template as Argo CD renders it (release charted, 0 values file(s))"),
        "{notes}"
    );
    assert_eq!(mapping.charts.len(), 1, "{notes}");
    assert_eq!(mapping.charts[0].namespace, "c");
    assert!(notes.contains("argocd/gone: folder \"nowhere\" is not in this checkout (the app follows release; the checkout is on branch main)"), "{notes}");
    assert!(
        notes.contains("argocd/escape: path \"../x\" leaves the repository"),
        "{notes}"
    );
    assert!(
        !notes.contains("elsewhere") && !notes.contains("foreign"),
        "{notes}"
    );
}

fn kustomization(name: &str, spec: Value) -> Value {
    json!({"metadata": {"name": name, "namespace": "flux-system"}, "spec": spec})
}

fn repository(name: &str, namespace: &str, url: &str, reference: Value) -> Value {
    json!({
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"url": url, "ref": reference},
    })
}

#[test]
fn flux_kustomizations_of_the_checkout_map_their_folders_and_say_so() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path();
    for dir in ["platform", "clusters/prod", "apps"] {
        std::fs::create_dir_all(top.join(dir)).unwrap();
    }
    std::fs::write(
        top.join("clusters/prod/kustomization.yaml"),
        "resources: []\n",
    )
    .unwrap();
    let remotes = vec![(
        "origin".to_owned(),
        "git@git.example:team/deploy.git".to_owned(),
    )];
    let repositories = vec![
        repository(
            "deploy",
            "flux-system",
            "ssh://git@git.example/team/deploy",
            json!({"branch": "main"}),
        ),
        repository(
            "release",
            "flux-system",
            "https://git.example/team/deploy.git",
            json!({"branch": "release"}),
        ),
        repository(
            "deploy",
            "other",
            "https://git.example/team/other.git",
            json!({}),
        ),
    ];
    let source = |name: &str| json!({"kind": "GitRepository", "name": name});
    let kustomizations = vec![
        kustomization(
            "platform",
            json!({"path": "./platform", "sourceRef": source("deploy"), "targetNamespace": "platform"}),
        ),
        kustomization(
            "prod",
            json!({"path": "./clusters/prod", "sourceRef": source("deploy"), "postBuild": {"substitute": {"env": "prod"}}, "patches": [{"patch": "- op: remove\n  path: /metadata/labels"}], "images": []}),
        ),
        kustomization(
            "on-release",
            json!({"path": "./apps", "sourceRef": source("release")}),
        ),
        kustomization(
            "gone",
            json!({"path": "./nowhere", "sourceRef": source("release")}),
        ),
        kustomization(
            "escape",
            json!({"path": "../x", "sourceRef": source("deploy")}),
        ),
        // Another repository, another cluster, another kind of source: left out quietly.
        kustomization(
            "foreign",
            json!({"path": "./platform", "sourceRef": {"kind": "GitRepository", "name": "deploy", "namespace": "other"}}),
        ),
        kustomization(
            "remote",
            json!({"path": "./apps", "sourceRef": source("deploy"), "kubeConfig": {"secretRef": {"name": "k"}}}),
        ),
        kustomization(
            "oci",
            json!({"path": "./apps", "sourceRef": {"kind": "OCIRepository", "name": "deploy"}}),
        ),
    ];
    let mapping = map_flux(top, &remotes, Some("main"), &kustomizations, &repositories);
    let folders: Vec<(&str, String, bool, bool)> = mapping
        .folders
        .iter()
        .map(|f| (f.app.as_str(), shown(top, &f.dir), f.kustomize, f.recurse))
        .collect();
    assert_eq!(
        folders,
        [
            ("flux-system/on-release", "apps".to_owned(), false, true),
            ("flux-system/platform", "platform".to_owned(), false, true),
            ("flux-system/prod", "clusters/prod".to_owned(), true, true),
        ]
    );
    assert_eq!(mapping.folders[1].namespace.as_deref(), Some("platform"));
    let notes = mapping.notes.join("\n");
    assert!(notes.starts_with("manifests from Flux Kustomizations: flux-system/on-release → apps (directory, recursive), flux-system/platform → platform (directory, recursive), flux-system/prod → clusters/prod (kustomize)"), "{notes}");
    assert!(
        notes.contains(
            "flux-system/on-release follows branch release; this checkout is on branch main"
        ),
        "{notes}"
    );
    assert!(notes.contains("flux-system/gone: folder \"./nowhere\" is not in this checkout (its source follows branch release; the checkout is on branch main)"), "{notes}");
    assert!(
        notes.contains("flux-system/escape: path \"../x\" leaves the repository"),
        "{notes}"
    );
    assert!(
        notes.contains("flux-system/platform sets namespace platform on every object")
            && notes.contains("Flux Kustomization flux-system/prod: its patches, postBuild are not applied: the objects of \"./clusters/prod\" are compared as written"),
        "{notes}"
    );
    for quiet in ["foreign", "remote", "oci"] {
        assert!(!notes.contains(quiet), "{quiet}: {notes}");
    }
}

#[test]
fn no_matching_application_maps_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let apps = vec![app(
        "a",
        json!({"repoURL": "https://x.example/a", "path": "."}),
        here("a"),
    )];
    let mapping = map_checkout(
        tmp.path(),
        &[("origin".into(), "https://y.example/b".into())],
        None,
        &apps,
        "",
    );
    assert_eq!(mapping, Mapping::default());
}

#[test]
fn a_mapped_folder_gives_its_namespace_and_comes_before_the_same_object_elsewhere() {
    use crate::manifest::ManifestIndex;
    use crate::manifest::kustomize::Selection;
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path();
    let deployment = |replicas: u32| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: {replicas}\n"
        )
    };
    for (file, text) in [
        ("envs/dev/web.yaml", deployment(1)),
        (
            "envs/dev/extra/job.yaml",
            deployment(7).replace("web", "job"),
        ),
        ("envs/prod/web.yaml", deployment(5)),
        // An older copy of prod's, which sorts first.
        (
            "archive/web.yaml",
            deployment(9).replace("name: web", "name: web\n  namespace: web"),
        ),
    ] {
        std::fs::create_dir_all(top.join(file).parent().unwrap()).unwrap();
        std::fs::write(top.join(file), text).unwrap();
    }
    let apps = vec![
        app(
            "prod",
            json!({"repoURL": "https://git.example/a", "path": "envs/prod"}),
            here("web"),
        ),
        app(
            "dev",
            json!({"repoURL": "https://git.example/a", "path": "envs/dev"}),
            here("web-dev"),
        ),
    ];
    let remotes = [("origin".to_owned(), "https://git.example/a.git".to_owned())];
    let mapping = map_checkout(top, &remotes, None, &apps[..1], "");
    let index = ManifestIndex::load_with(
        top,
        "default",
        Selection {
            apps: mapping.folders,
            notes: mapping.notes,
            ..Selection::default()
        },
    );
    let keys: Vec<String> = index.objects().map(|o| o.key.to_string()).collect();
    // prod's object is in prod's namespace; dev's (not mapped) in `default`.
    assert!(keys.contains(&"deployment/web/web".to_owned()), "{keys:?}");
    assert!(
        keys.contains(&"deployment/default/web".to_owned()),
        "{keys:?}"
    );
    // With both apps, dev's sub-folder is not dev's (no `recurse`): read as always.
    let mapping = map_checkout(top, &remotes, None, &apps, "");
    let index = ManifestIndex::load_with(
        top,
        "web",
        Selection {
            apps: mapping.folders,
            ..Selection::default()
        },
    );
    let keys: Vec<String> = index.objects().map(|o| o.key.to_string()).collect();
    assert!(
        keys.contains(&"deployment/web-dev/web".to_owned()),
        "{keys:?}"
    );
    assert!(keys.contains(&"deployment/web/job".to_owned()), "{keys:?}");
    // Prod's web comes before the archive's copy.
    let web = index
        .objects()
        .find(|o| o.key.to_string() == "deployment/web/web")
        .unwrap();
    assert!(web.file.ends_with("envs/prod/web.yaml"), "{:?}", web.file);
}

#[test]
fn flux_helm_releases_of_the_checkout_map_their_charts_and_say_so() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path();
    std::fs::create_dir_all(top.join("charts/web/templates")).unwrap();
    std::fs::write(
        top.join("charts/web/Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 1.2.0\n",
    )
    .unwrap();
    std::fs::create_dir_all(top.join("envs")).unwrap();
    std::fs::write(top.join("envs/prod.yaml"), "replicaCount: 3\n").unwrap();
    let remotes = vec![(
        "origin".to_owned(),
        "git@git.example:team/deploy.git".to_owned(),
    )];
    let repositories = vec![
        repository(
            "deploy",
            "flux-system",
            "https://git.example/team/deploy.git",
            json!({"branch": "main"}),
        ),
        repository(
            "other",
            "flux-system",
            "https://git.example/team/other.git",
            json!({}),
        ),
    ];
    let chart = |path: &str, source: &str| json!({"spec": {"chart": path, "sourceRef": {"kind": "GitRepository", "name": source}}});
    let release = |name: &str, spec: Value| json!({"metadata": {"name": name, "namespace": "flux-system"}, "spec": spec});
    let mut with_files = chart("./charts/web", "deploy");
    with_files["spec"]["valuesFiles"] = json!(["envs/prod.yaml"]);
    let releases = vec![
        release(
            "web",
            json!({"chart": with_files, "targetNamespace": "shop",
                "values": {"image": {"tag": "1.2.3"}},
                "valuesFrom": [{"kind": "ConfigMap", "name": "web-values"}]}),
        ),
        release(
            "named",
            json!({"chart": chart("charts/web", "deploy"), "releaseName": "front"}),
        ),
        release(
            "missing",
            json!({"chart": chart("./charts/gone", "deploy")}),
        ),
        // Another repository, a chart repository, another cluster: left out quietly.
        release("foreign", json!({"chart": chart("./charts/web", "other")})),
        release(
            "repo",
            json!({"chart": {"spec": {"chart": "podinfo", "sourceRef": {"kind": "HelmRepository", "name": "podinfo"}}}}),
        ),
        release(
            "remote",
            json!({"chart": chart("./charts/web", "deploy"), "kubeConfig": {"secretRef": {"name": "k"}}}),
        ),
    ];
    let mapping = map_flux_helm(top, &remotes, &releases, &repositories);
    let charts: Vec<(String, String, usize, usize)> = mapping
        .charts
        .iter()
        .map(|c| {
            (
                format!("{}/{}", c.namespace, c.release),
                shown(top, &c.dir),
                c.values_files.len(),
                c.inline_values.len(),
            )
        })
        .collect();
    assert_eq!(
        charts,
        [
            (
                "flux-system/front".to_owned(),
                "charts/web".to_owned(),
                0,
                0
            ),
            ("shop/shop-web".to_owned(), "charts/web".to_owned(), 1, 1),
        ]
    );
    let web = &mapping.charts[1];
    assert_eq!(web.values_files, [top.join("envs/prod.yaml")]);
    assert_eq!(web.inline_values, [json!({"image": {"tag": "1.2.3"}})]);
    assert_eq!((web.name.as_str(), web.version.as_str()), ("web", "1.2.0"));
    let notes = mapping.notes.join("\n");
    assert!(
        notes.contains("Flux HelmRelease flux-system/web: \"charts/web\" is a Helm chart, rendered with helm template as helm-controller renders it (release shop/shop-web, 1 values file(s), inline values)"),
        "{notes}"
    );
    assert!(
        notes.contains(
            "Flux HelmRelease flux-system/web: its valuesFrom (ConfigMaps, Secrets) are not read"
        ),
        "{notes}"
    );
    assert!(
        notes.contains("Flux HelmRelease flux-system/missing: chart \"./charts/gone\" has no Chart.yaml in this checkout: not mapped"),
        "{notes}"
    );
    for quiet in ["foreign", "repo", "remote"] {
        assert!(!notes.contains(&format!("/{quiet}")), "{notes}");
    }
}

/// Argo CD on one cluster (a hub) deploying to the others: the hub's Applications whose
/// destination is the watched cluster (its URL, or a name Argo CD's clusters give that URL, or
/// the context's name when Argo CD lists no such cluster) map their folders, named with the
/// hub's context; the hub's own (in-cluster) ones and those of a third cluster do not.
#[test]
fn a_hubs_applications_that_deploy_here_map_their_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path();
    for dir in [
        "clusters/eu",
        "clusters/us",
        "clusters/hub",
        "clusters/named",
        "chart",
    ] {
        std::fs::create_dir_all(top.join(dir)).unwrap();
    }
    std::fs::write(top.join("chart/Chart.yaml"), "name: c\n").unwrap();
    let remotes = vec![("origin".to_owned(), "https://git.example/fleet".to_owned())];
    let url = "https://git.example/fleet.git";
    let source = |path: &str| json!({"repoURL": url, "path": path});
    let hub_apps = vec![
        app(
            "shop-eu",
            source("clusters/eu"),
            json!({"server": "https://eu.example:6443/", "namespace": "shop"}),
        ),
        app(
            "shop-us",
            source("clusters/us"),
            json!({"server": "https://us.example:6443"}),
        ),
        app("argo-itself", source("clusters/hub"), here("argocd")),
        app(
            "by-name",
            source("clusters/named"),
            json!({"name": "europe", "namespace": "named"}),
        ),
        app(
            "chart-eu",
            source("chart"),
            json!({"name": "prod-eu", "namespace": "c"}),
        ),
    ];
    let clusters: BTreeMap<String, String> =
        [("europe".to_owned(), "https://EU.example:6443".to_owned())].into();
    let own_apps = vec![app("local", source("clusters/us"), here("local"))];
    let none = BTreeMap::new();
    let listings = [
        Listed {
            hub: None,
            apps: &own_apps[..0],
            clusters: &none,
        },
        Listed {
            hub: Some("hub"),
            apps: &hub_apps,
            clusters: &clusters,
        },
    ];
    let here = Here {
        cluster_url: "https://eu.example:6443",
        context: "prod-eu",
    };
    let mapping = map_listings(top, &remotes, None, &listings, &here);
    let folders: Vec<(&str, String, Option<&str>)> = mapping
        .folders
        .iter()
        .map(|f| (f.app.as_str(), shown(top, &f.dir), f.namespace.as_deref()))
        .collect();
    assert_eq!(
        folders,
        [
            (
                "argocd/by-name (context hub)",
                "clusters/named".to_owned(),
                Some("named")
            ),
            (
                "argocd/shop-eu (context hub)",
                "clusters/eu".to_owned(),
                Some("shop")
            ),
        ]
    );
    // Named after the context (`argocd cluster add prod-eu`), a chart keeps the app's own name
    // as its release.
    assert_eq!(mapping.charts.len(), 1);
    assert_eq!(mapping.charts[0].release, "chart-eu");
    let notes = mapping.notes.join("\n");
    assert!(
        notes.starts_with("manifests from Argo CD apps: argocd/by-name (context hub) → clusters/named (directory), argocd/shop-eu (context hub) → clusters/eu (directory)"),
        "{notes}"
    );
    assert!(
        !notes.contains("shop-us") && !notes.contains("argo-itself"),
        "{notes}"
    );

    // The hub's own view: its in-cluster Application only.
    let hub_own = [Listed {
        hub: None,
        apps: &hub_apps,
        clusters: &clusters,
    }];
    let hub_here = Here {
        cluster_url: "https://hub.example:6443",
        context: "hub",
    };
    let mapping = map_listings(top, &remotes, None, &hub_own, &hub_here);
    let apps: Vec<&str> = mapping.folders.iter().map(|f| f.app.as_str()).collect();
    assert_eq!(apps, ["argocd/argo-itself"]);
    // Another cluster's own in-cluster Application says nothing of this one.
    let other_own = [Listed {
        hub: Some("us"),
        apps: &own_apps,
        clusters: &none,
    }];
    assert_eq!(
        map_listings(top, &remotes, None, &other_own, &here),
        Mapping::default()
    );
}
