//! Manifests from the Argo CD Applications (pure; the reads are the caller's). Started in a git
//! checkout without `--manifests`, kdrift asks which Applications deploy to this cluster from one
//! of the checkout's remotes: each such Application's `path` is a folder of the manifests, read
//! the way Argo CD reads it (a kustomize root when it holds a kustomization, else a plain
//! directory, its sub-folders only with `directory.recurse`), its objects without a namespace in
//! the Application's `destination.namespace`, and before the same objects defined elsewhere in
//! the checkout (another environment's overlay, say); the rest of the checkout is read as always,
//! since something other than Argo CD may apply it. Flux Kustomizations whose GitRepository is
//! one of the checkout's remotes map their `path` the same way ([`map_flux`]).
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use crate::manifest::kustomize::AppFolder;
use crate::manifest::kustomize::tree::FILE_NAMES;

/// What the Applications made of the checkout: the folders, and sentences for the user (which
/// Application mapped which folder, what was left out and why).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mapping {
    pub folders: Vec<AppFolder>,
    /// Helm charts of the checkout an Application renders, with its `helm` settings.
    pub charts: Vec<crate::helm::chart::ChartSpec>,
    pub notes: Vec<String>,
}

/// A repository URL as a key to compare: host and path, lower case, without the scheme, the user,
/// the port and a trailing `.git` — so `git@github.com:org/app.git`,
/// `https://github.com/org/app` and `ssh://git@github.com:22/org/app.git/` are one repository.
pub fn repo_key(url: &str) -> Option<String> {
    let url = url.trim();
    let rest = match url.split_once("://") {
        Some((_, rest)) => rest.to_owned(),
        // scp-like `user@host:path` (a `:` before any `/`).
        None => match url.split_once(':') {
            Some((host, path)) if !host.contains('/') && !host.is_empty() => {
                format!("{host}/{path}")
            }
            _ => url.to_owned(),
        },
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest.as_str(), ""));
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = host.split(':').next().unwrap_or(host);
    let path = path.trim_matches('/');
    let path = path
        .strip_suffix(".git")
        .unwrap_or(path)
        .trim_end_matches('/');
    if host.is_empty() && path.is_empty() {
        return None;
    }
    Some(format!("{host}/{path}").to_ascii_lowercase())
}

/// The cluster kdrift watches, as an Application names its destination.
#[derive(Debug, Clone, Copy)]
pub struct Here<'a> {
    /// The API server's URL in the kubeconfig.
    pub cluster_url: &'a str,
    /// The kubeconfig context: `argocd cluster add CONTEXT` names the cluster after it.
    pub context: &'a str,
}

/// Applications as listed on one context.
#[derive(Debug, Clone, Copy)]
pub struct Listed<'a> {
    /// The context they were listed on when it is another than [`Here`]'s: an Argo CD there
    /// (a hub) deploying to the cluster kdrift watches.
    pub hub: Option<&'a str>,
    pub apps: &'a [Value],
    /// The clusters that Argo CD knows, name → server URL (its cluster secrets), for a
    /// destination given by `name`.
    pub clusters: &'a std::collections::BTreeMap<String, String>,
}

/// Argo CD's name and address for the cluster it runs in.
const IN_CLUSTER_URL: &str = "https://kubernetes.default.svc";
const IN_CLUSTER_NAME: &str = "in-cluster";

fn same_url(a: &str, b: &str) -> bool {
    let trim = |s: &str| s.trim_end_matches('/').to_ascii_lowercase();
    !b.is_empty() && trim(a) == trim(b)
}

/// Whether an Application's destination (listed as `listed` says) is the cluster kdrift
/// watches: on that cluster's own Argo CD, the in-cluster address or name, or the same server
/// URL; on a hub's, the same server URL, or a name that Argo CD's clusters give that URL (a
/// name Argo CD does not list is taken as `argocd cluster add`'s default, the context's name).
fn deploys_here(destination: &Value, here: &Here, listed: &Listed) -> bool {
    let server = destination.get("server").and_then(Value::as_str);
    let name = destination.get("name").and_then(Value::as_str);
    match (server, name, listed.hub) {
        (Some(server), _, None) => {
            same_url(server, IN_CLUSTER_URL) || same_url(server, here.cluster_url)
        }
        (Some(server), _, Some(_)) => {
            !same_url(server, IN_CLUSTER_URL) && same_url(server, here.cluster_url)
        }
        (None, Some(name), hub) => match listed.clusters.get(name) {
            Some(server) => deploys_here(&serde_json::json!({ "server": server }), here, listed),
            None if hub.is_none() => name == IN_CLUSTER_NAME,
            None => name != IN_CLUSTER_NAME && name == here.context,
        },
        (None, None, _) => false,
    }
}

/// Whether Application `app` (listed as `listed` says) deploys to the cluster kdrift watches.
pub fn deploys_to(app: &Value, here: &Here, listed: &Listed) -> bool {
    let destination = app.pointer("/spec/destination").unwrap_or(&Value::Null);
    deploys_here(destination, here, listed)
}

/// Whether some of `apps` name their destination by a name other than Argo CD's own cluster's
/// (then Argo CD's cluster list says which server that is).
pub fn names_clusters(apps: &[Value]) -> bool {
    apps.iter().any(|app| {
        app.pointer("/spec/destination/name")
            .and_then(Value::as_str)
            .is_some_and(|name| !name.is_empty() && name != IN_CLUSTER_NAME)
    })
}

/// A relative `path` inside the checkout, or `None` when it would leave it.
fn folder_in(top: &Path, path: &str) -> Option<PathBuf> {
    let relative = Path::new(path.trim_start_matches("./"));
    if relative.is_absolute()
        || relative
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::Prefix(_)))
    {
        return None;
    }
    Some(
        relative
            .components()
            .filter(|c| !matches!(c, Component::CurDir))
            .fold(top.to_path_buf(), |dir, c| dir.join(c)),
    )
}

fn name_of(app: &Value) -> String {
    let text = |key: &str| {
        app.pointer(&format!("/metadata/{key}"))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    format!("{}/{}", text("namespace"), text("name"))
}

/// The checkout's remotes as repository keys.
fn remote_keys(remotes: &[(String, String)]) -> BTreeSet<String> {
    remotes
        .iter()
        .filter_map(|(_, url)| repo_key(url))
        .collect()
}

/// `objects` in the order of their `namespace/name`: notes in a stable order.
fn by_name(objects: &[Value]) -> Vec<&Value> {
    let mut sorted: Vec<&Value> = objects.iter().collect();
    sorted.sort_by_key(|o| name_of(o));
    sorted
}

/// `shop` (`.` for the checkout's top), as notes name folders.
fn shown(top: &Path, dir: &Path) -> String {
    crate::manifest::kustomize::shown(top, dir)
}

/// The folders of the Applications (`apps`, as the API returns them) that deploy to the cluster
/// at `cluster_url` from a repository whose URL is one of `remotes` (the checkout at `top`, on
/// `branch`). Applications of other repositories or clusters are left out quietly; one that
/// matches but cannot be read as a folder (a Helm chart, a plugin, a path not in the checkout) is
/// said.
pub fn map_checkout(
    top: &Path,
    remotes: &[(String, String)],
    branch: Option<&str>,
    apps: &[Value],
    cluster_url: &str,
) -> Mapping {
    let clusters = std::collections::BTreeMap::new();
    let own = Listed {
        hub: None,
        apps,
        clusters: &clusters,
    };
    let here = Here {
        cluster_url,
        context: "",
    };
    map_listings(top, remotes, branch, &[own], &here)
}

/// [`map_checkout`] over the Applications of several contexts: the watched cluster's own and
/// those of other contexts (hubs) whose Argo CD deploys to it. A hub's Application is named
/// with its context in the notes (`argocd/shop-eu (context hub)`).
pub fn map_listings(
    top: &Path,
    remotes: &[(String, String)],
    branch: Option<&str>,
    listings: &[Listed],
    here: &Here,
) -> Mapping {
    let keys = remote_keys(remotes);
    let mut mapping = Mapping::default();
    for listed in listings {
        for app in by_name(listed.apps) {
            let spec = app.get("spec").unwrap_or(&Value::Null);
            if !deploys_here(
                spec.get("destination").unwrap_or(&Value::Null),
                here,
                listed,
            ) {
                continue;
            }
            let name = match listed.hub {
                Some(hub) => format!("{} (context {hub})", name_of(app)),
                None => name_of(app),
            };
            let sources: Vec<&Value> = match spec.get("sources").and_then(Value::as_array) {
                Some(list) => list.iter().collect(),
                None => spec.get("source").into_iter().collect(),
            };
            let namespace = spec
                .pointer("/destination/namespace")
                .and_then(Value::as_str)
                .filter(|ns| !ns.is_empty())
                .map(str::to_owned);
            for source in sources {
                let text = |key: &str| source.get(key).and_then(Value::as_str);
                let Some(url) = text("repoURL") else { continue };
                if !repo_key(url).is_some_and(|k| keys.contains(&k)) {
                    continue;
                }
                let app = AppName {
                    shown: &name,
                    release: app
                        .pointer("/metadata/name")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                };
                map_source(top, branch, app, source, namespace.clone(), &mut mapping);
            }
        }
    }
    say_folders(top, "Argo CD apps", "Argo CD", &mut mapping);
    mapping
}

/// The note, first, of which folder each of `mapping`'s owners (`who`: "Argo CD apps") mapped,
/// and how it is read.
fn say_folders(top: &Path, who: &str, reader: &str, mapping: &mut Mapping) {
    if mapping.folders.is_empty() {
        return;
    }
    let list: Vec<String> = mapping
        .folders
        .iter()
        .map(|f| {
            let how = if f.kustomize {
                "kustomize"
            } else if f.recurse {
                "directory, recursive"
            } else {
                "directory"
            };
            format!("{} → {} ({how})", f.app, shown(top, &f.dir))
        })
        .collect();
    mapping.notes.insert(
        0,
        format!(
            "manifests from {who}: {}; their objects are read from these folders as {reader} reads them, the rest of the checkout as always",
            list.join(", ")
        ),
    );
}

/// The folders of the Flux Kustomizations (`kustomizations`, as the API returns them) that apply
/// a path of a GitRepository (among `repositories`) whose URL is one of `remotes`: read as Flux's
/// kustomize-controller reads them — the folder's kustomization when it has one, else every
/// manifest of the folder and its sub-folders (Flux writes a kustomization of them all) — with
/// `targetNamespace` the namespace of the objects that set none (Flux also moves those that set
/// another: said). A Kustomization that applies to another cluster (`kubeConfig`) or from
/// another kind of source is left out quietly.
pub fn map_flux(
    top: &Path,
    remotes: &[(String, String)],
    branch: Option<&str>,
    kustomizations: &[Value],
    repositories: &[Value],
) -> Mapping {
    let keys = remote_keys(remotes);
    let mut mapping = Mapping::default();
    for kustomization in by_name(kustomizations) {
        let spec = kustomization.get("spec").unwrap_or(&Value::Null);
        let text = |pointer: &str| spec.pointer(pointer).and_then(Value::as_str);
        if spec.get("kubeConfig").is_some_and(|c| !c.is_null())
            || text("/sourceRef/kind").is_some_and(|kind| kind != "GitRepository")
        {
            continue;
        }
        let name = name_of(kustomization);
        let Some(repository) = checkout_repository(
            spec.get("sourceRef").unwrap_or(&Value::Null),
            kustomization,
            repositories,
            &keys,
        ) else {
            continue;
        };
        let path = text("/path").filter(|p| !p.is_empty()).unwrap_or("./");
        let Some(dir) = folder_in(top, path) else {
            mapping.notes.push(format!(
                "Flux Kustomization {name}: path \"{path}\" leaves the repository: not mapped"
            ));
            continue;
        };
        let reference = repository.pointer("/spec/ref");
        let follows = ["branch", "tag", "semver", "commit", "name"]
            .iter()
            .find_map(|field| {
                reference
                    .and_then(|r| r.get(*field))
                    .and_then(Value::as_str)
                    .map(|value| (*field, value))
            });
        if !dir.is_dir() {
            let on = branch.map_or_else(|| "a detached HEAD".to_owned(), |b| format!("branch {b}"));
            let follows = follows.map_or_else(
                || "its default branch".to_owned(),
                |(field, value)| format!("{field} {value}"),
            );
            mapping.notes.push(format!(
                "Flux Kustomization {name}: folder \"{path}\" is not in this checkout (its source follows {follows}; the checkout is on {on}): not mapped"
            ));
            continue;
        }
        if let (Some(("branch", wanted)), Some(branch)) = (follows, branch)
            && wanted != branch
        {
            mapping.notes.push(format!(
                "Flux Kustomization {name} follows branch {wanted}; this checkout is on branch {branch}: its folder \"{path}\" is compared as checked out"
            ));
        }
        // What Flux changes in the objects after kustomize: not done here.
        let rewrites: Vec<&str> = [
            "patches",
            "images",
            "namePrefix",
            "nameSuffix",
            "commonMetadata",
            "components",
            "postBuild",
        ]
        .into_iter()
        .filter(|field| {
            spec.get(*field).is_some_and(|v| match v {
                Value::Null => false,
                Value::Array(list) => !list.is_empty(),
                Value::Object(map) => !map.is_empty(),
                _ => true,
            })
        })
        .collect();
        if !rewrites.is_empty() {
            mapping.notes.push(format!(
                "Flux Kustomization {name}: its {} are not applied: the objects of \"{path}\" are compared as written",
                rewrites.join(", ")
            ));
        }
        let namespace = text("/targetNamespace")
            .filter(|ns| !ns.is_empty())
            .map(str::to_owned);
        if let Some(ns) = &namespace {
            mapping.notes.push(format!(
                "Flux Kustomization {name} sets namespace {ns} on every object; kdrift gives it to the objects of \"{path}\" that set none, and compares the others where they say"
            ));
        }
        let folder = AppFolder {
            app: name,
            kustomize: FILE_NAMES.iter().any(|file| dir.join(file).is_file()),
            dir,
            recurse: true,
            namespace,
        };
        add_folder(&mut mapping, folder, "Flux Kustomizations", path);
    }
    say_folders(top, "Flux Kustomizations", "Flux", &mut mapping);
    mapping
}

/// `folder` added to `mapping`, unless one of the `owners` ("Argo CD apps") maps it already:
/// then it is compared once, as the first one's, and said.
/// The GitRepository `source_ref` (of `owner`, a Kustomization or a HelmRelease) names, when
/// its URL is one of the checkout's remotes (`keys`).
fn checkout_repository<'r>(
    source_ref: &Value,
    owner: &Value,
    repositories: &'r [Value],
    keys: &BTreeSet<String>,
) -> Option<&'r Value> {
    let own_namespace = owner
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let source_namespace = source_ref
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or(own_namespace);
    let source_name = source_ref.get("name").and_then(Value::as_str)?;
    let repository = repositories.iter().find(|r| {
        r.pointer("/metadata/name").and_then(Value::as_str) == Some(source_name)
            && r.pointer("/metadata/namespace").and_then(Value::as_str) == Some(source_namespace)
    })?;
    let url = repository.pointer("/spec/url").and_then(Value::as_str)?;
    repo_key(url)
        .is_some_and(|key| keys.contains(&key))
        .then_some(repository)
}

/// The charts of the checkout that Flux HelmReleases (`helm_releases`, as the API returns them)
/// install from a GitRepository among `repositories` whose URL is one of `remotes`: rendered as
/// helm-controller renders them — release name `releaseName`, else `[targetNamespace-]name`; the
/// namespace `targetNamespace`, else the HelmRelease's; `valuesFiles` (from the repository's top),
/// then `values`. `valuesFrom` (ConfigMaps and Secrets) is not read: said. A HelmRelease of
/// another cluster (`kubeConfig`), of a chart repository or OCI, is left out quietly.
pub fn map_flux_helm(
    top: &Path,
    remotes: &[(String, String)],
    helm_releases: &[Value],
    repositories: &[Value],
) -> Mapping {
    let keys = remote_keys(remotes);
    let mut mapping = Mapping::default();
    for release in by_name(helm_releases) {
        let spec = release.get("spec").unwrap_or(&Value::Null);
        let chart = spec.pointer("/chart/spec").unwrap_or(&Value::Null);
        let source_ref = chart.get("sourceRef").unwrap_or(&Value::Null);
        if spec.get("kubeConfig").is_some_and(|c| !c.is_null())
            || source_ref.get("kind").and_then(Value::as_str) != Some("GitRepository")
            || checkout_repository(source_ref, release, repositories, &keys).is_none()
        {
            continue;
        }
        let name = name_of(release);
        match flux_chart(&name, top, release) {
            Ok((spec, notes)) => {
                mapping.notes.push(format!(
                    "Flux HelmRelease {name}: \"{}\" is a Helm chart, rendered with helm template as helm-controller renders it (release {}/{}, {} values file(s){})",
                    shown(top, &spec.dir),
                    spec.namespace,
                    spec.release,
                    spec.values_files.len(),
                    if spec.inline_values.is_empty() { "" } else { ", inline values" }
                ));
                mapping.notes.extend(notes);
                mapping.charts.push(spec);
            }
            Err(why) => mapping
                .notes
                .push(format!("Flux HelmRelease {name}: {why}: not mapped")),
        }
    }
    mapping
}

/// The chart of HelmRelease `name` (`release`, as the API returns it) in the checkout at `top`,
/// and the notes of what is not rendered as Flux would.
fn flux_chart(
    name: &str,
    top: &Path,
    release: &Value,
) -> Result<(crate::helm::chart::ChartSpec, Vec<String>), String> {
    let spec = release.get("spec").unwrap_or(&Value::Null);
    let text = |pointer: &str| {
        spec.pointer(pointer)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let path = text("/chart/spec/chart").ok_or("its chart names no path")?;
    let dir = folder_in(top, path).ok_or(format!("chart \"{path}\" leaves the repository"))?;
    if !dir.join("Chart.yaml").is_file() {
        return Err(format!(
            "chart \"{path}\" has no Chart.yaml in this checkout"
        ));
    }
    let (chart, version) = crate::helm::chart::read_chart_meta(&dir)?;
    let mut values_files = Vec::new();
    for file in spec
        .pointer("/chart/spec/valuesFiles")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let resolved =
            folder_in(top, file).ok_or(format!("values file \"{file}\" leaves the repository"))?;
        values_files.push(resolved);
    }
    let inline_values: Vec<Value> = spec
        .get("values")
        .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
        .cloned()
        .into_iter()
        .collect();
    let own_namespace = release
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default");
    let target = text("/targetNamespace");
    let short = name.rsplit('/').next().unwrap_or(name);
    let release_name = text("/releaseName").map_or_else(
        || target.map_or_else(|| short.to_owned(), |t| format!("{t}-{short}")),
        str::to_owned,
    );
    let mut notes = Vec::new();
    if spec
        .get("valuesFrom")
        .and_then(Value::as_array)
        .is_some_and(|v| !v.is_empty())
    {
        notes.push(format!(
            "Flux HelmRelease {name}: its valuesFrom (ConfigMaps, Secrets) are not read: the chart is rendered without them"
        ));
    }
    Ok((
        crate::helm::chart::ChartSpec {
            dir,
            name: chart,
            version,
            release: release_name,
            namespace: target.unwrap_or(own_namespace).to_owned(),
            values_files,
            inline_values,
            set: Vec::new(),
            kube_version: None,
            source: crate::helm::chart::ValuesSource::FluxHelmRelease {
                name: name.to_owned(),
            },
        },
        notes,
    ))
}

fn add_folder(mapping: &mut Mapping, folder: AppFolder, owners: &str, path: &str) {
    if let Some(taken) = mapping.folders.iter().find(|f| f.dir == folder.dir) {
        mapping.notes.push(format!(
            "{owners} {} and {} both deploy \"{path}\": compared once, as {}'s",
            taken.app, folder.app, taken.app
        ));
        return;
    }
    mapping.folders.push(folder);
}

/// An Application as the notes name it (`argocd/shop`, with the hub's context when listed on
/// another) and the release name a chart of it takes unless it sets one (its `metadata.name`).
#[derive(Clone, Copy)]
struct AppName<'a> {
    shown: &'a str,
    release: &'a str,
}

/// One source of Application `app` whose repository is the checkout's.
fn map_source(
    top: &Path,
    branch: Option<&str>,
    app: AppName,
    source: &Value,
    namespace: Option<String>,
    mapping: &mut Mapping,
) {
    let name = app.shown;
    let text = |key: &str| source.get(key).and_then(Value::as_str);
    if let Some(chart) = text("chart") {
        mapping.notes.push(format!(
            "Argo CD app {name} deploys Helm chart {chart}: kdrift does not render charts, its objects are compared only where manifests exist"
        ));
        return;
    }
    let path = text("path").unwrap_or(".");
    let Some(dir) = folder_in(top, path) else {
        mapping.notes.push(format!(
            "Argo CD app {name}: path \"{path}\" leaves the repository: not mapped"
        ));
        return;
    };
    if !dir.is_dir() {
        let revision = text("targetRevision").unwrap_or("HEAD");
        let on = branch.map_or_else(|| "a detached HEAD".to_owned(), |b| format!("branch {b}"));
        mapping.notes.push(format!(
            "Argo CD app {name}: folder \"{path}\" is not in this checkout (the app follows {revision}; the checkout is on {on}): not mapped"
        ));
        return;
    }
    let kustomize =
        source.get("kustomize").is_some() || FILE_NAMES.iter().any(|file| dir.join(file).is_file());
    if source.get("plugin").is_some() {
        mapping.notes.push(format!(
            "Argo CD app {name}: \"{path}\" is rendered by a config management plugin, which kdrift does not run: not mapped"
        ));
        return;
    }
    if source.get("helm").is_some() || dir.join("Chart.yaml").is_file() {
        match argo_chart(app, &dir, source, namespace) {
            Ok(chart) => {
                mapping.notes.push(format!(
                    "Argo CD app {name}: \"{path}\" is a Helm chart, rendered with helm template as Argo CD renders it (release {}, {} values file(s){})",
                    chart.release,
                    chart.values_files.len(),
                    if chart.inline_values.is_empty() { "" } else { ", inline values" }
                ));
                mapping.charts.push(chart);
            }
            Err(why) => mapping.notes.push(format!(
                "Argo CD app {name}: \"{path}\" is a Helm chart kdrift cannot render as Argo CD does ({why}): not mapped"
            )),
        }
        return;
    }
    if let Some(revision) = text("targetRevision")
        && let Some(branch) = branch
        && !matches!(revision, "HEAD" | "")
        && revision != branch
        && !revision.starts_with("refs/")
    {
        mapping.notes.push(format!(
            "Argo CD app {name} follows {revision}; this checkout is on branch {branch}: its folder \"{path}\" is compared as checked out"
        ));
    }
    let directory = source.get("directory");
    if directory.is_some_and(|d| {
        ["include", "exclude", "jsonnet"].iter().any(|k| {
            d.get(k)
                .is_some_and(|v| !v.is_null() && v != "" && v != &Value::Object(Default::default()))
        })
    }) {
        mapping.notes.push(format!(
            "Argo CD app {name}: the directory's include/exclude/jsonnet settings are not applied: every manifest of \"{path}\" is compared"
        ));
    }
    let folder = AppFolder {
        app: name.to_owned(),
        dir,
        kustomize,
        recurse: directory
            .and_then(|d| d.get("recurse"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        namespace,
    };
    add_folder(mapping, folder, "Argo CD apps", path);
}

/// The chart at `dir` as Application `app`'s `helm` source renders it: `releaseName` (else the
/// app's name), the destination namespace, `valueFiles` (relative to the chart's folder, as
/// Argo CD reads them), `valuesObject` or `values` (inline), and `parameters` (as `--set`).
fn argo_chart(
    app: AppName,
    dir: &Path,
    source: &Value,
    namespace: Option<String>,
) -> Result<crate::helm::chart::ChartSpec, String> {
    let helm = source.get("helm").unwrap_or(&Value::Null);
    let (chart, version) = crate::helm::chart::read_chart_meta(dir)?;
    let text = |key: &str| {
        helm.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let mut values_files = Vec::new();
    for file in helm
        .get("valueFiles")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if file.starts_with('$') {
            return Err(format!("value file \"{file}\" is another source's"));
        }
        let resolved =
            folder_in(dir, file).ok_or(format!("value file \"{file}\" leaves the repository"))?;
        values_files.push(resolved);
    }
    let mut inline_values = Vec::new();
    if let Some(object) = helm.get("valuesObject").filter(|v| v.is_object()) {
        inline_values.push(object.clone());
    } else if let Some(values) = text("values") {
        let parsed: Value = serde_yaml::from_str(values)
            .map_err(|e| format!("its helm.values is not YAML: {e}"))?;
        if parsed.is_object() {
            inline_values.push(parsed);
        }
    }
    let set = helm
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let key = p.get("name")?.as_str()?.to_owned();
            let value = match p.get("value")? {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            Some((key, value))
        })
        .collect();
    Ok(crate::helm::chart::ChartSpec {
        dir: dir.to_path_buf(),
        name: chart,
        version,
        release: text("releaseName").unwrap_or(app.release).to_owned(),
        namespace: namespace.unwrap_or_else(|| "default".to_owned()),
        values_files,
        inline_values,
        set,
        kube_version: None,
        source: crate::helm::chart::ValuesSource::ArgoApp {
            app: app.shown.to_owned(),
        },
    })
}

#[cfg(test)]
#[path = "source_tests.rs"]
mod tests;
