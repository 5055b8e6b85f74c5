//! Reading the Argo CD Applications and Flux Kustomizations/HelmReleases that own live objects
//! (see [`crate::gitops`]): a GET each, through the same client as everything else. What cannot
//! be read (a 403, a cluster without the kind, no such object) is said, not fatal.
use std::collections::BTreeMap;

use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams};

use crate::gitops::{Owner, Policy, Reconciler};

/// Where Argo CD keeps its Applications unless told otherwise.
const ARGO_NAMESPACE: &str = "argocd";

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: format!("{group}/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    }
}

fn application() -> ApiResource {
    resource("argoproj.io", "v1alpha1", "Application", "applications")
}

fn kustomization() -> ApiResource {
    resource(
        "kustomize.toolkit.fluxcd.io",
        "v1",
        "Kustomization",
        "kustomizations",
    )
}

fn helm_release() -> ApiResource {
    resource(
        "helm.toolkit.fluxcd.io",
        "v2",
        "HelmRelease",
        "helmreleases",
    )
}

fn git_repository() -> ApiResource {
    resource(
        "source.toolkit.fluxcd.io",
        "v1",
        "GitRepository",
        "gitrepositories",
    )
}

/// Why an owner could not be read, in a few words.
fn unreadable(owner: &Owner, err: &kube::Error) -> String {
    match err {
        kube::Error::Api(s) if s.code == 403 => format!("forbidden: {}", s.message),
        kube::Error::Api(s) if s.code == 404 && s.reason == "NotFound" && s.details.is_none() => {
            format!("the cluster serves no {} kind", owner.kind())
        }
        kube::Error::Api(s) if s.code == 404 => {
            let (name, namespace) = owner.name();
            match namespace {
                Some(ns) => format!("no {} \"{name}\" in \"{ns}\"", owner.kind()),
                None => format!("no {} \"{name}\"", owner.kind()),
            }
        }
        other => crate::cluster::describe(other),
    }
}

async fn get(
    client: &Client,
    res: &ApiResource,
    namespace: &str,
    name: &str,
) -> Result<serde_json::Value, kube::Error> {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, res);
    let object = api.get(name).await?;
    serde_json::to_value(&object).map_err(kube::Error::SerdeError)
}

/// The owning object of `reconciler`: its API resource, namespace and name.
fn owning_object(reconciler: &Reconciler) -> (ApiResource, String, String) {
    match &reconciler.owner {
        Owner::Argo { app, namespace, .. } => (
            application(),
            namespace
                .clone()
                .or_else(|| reconciler.found_in.clone())
                .unwrap_or_else(|| ARGO_NAMESPACE.to_owned()),
            app.clone(),
        ),
        Owner::FluxKustomization { name, namespace } => {
            (kustomization(), namespace.clone(), name.clone())
        }
        Owner::FluxHelmRelease { name, namespace } => {
            (helm_release(), namespace.clone(), name.clone())
        }
    }
}

/// The commit the owner says it has applied ([`crate::gitops::synced_revision`]), read now.
pub async fn synced_revision(
    client: &Client,
    reconciler: &Reconciler,
) -> Result<Option<String>, String> {
    let (res, namespace, name) = owning_object(reconciler);
    get(client, &res, &namespace, &name)
        .await
        .map(|object| crate::gitops::synced_revision(&object))
        .map_err(|e| unreadable(&reconciler.owner, &e))
}

/// Asks the owner to look at git now, as its own command line does: Argo CD's
/// `argocd.argoproj.io/refresh: normal` (`argocd app get --refresh`), Flux's
/// `reconcile.fluxcd.io/requestedAt` on the Kustomization and its GitRepository (`flux reconcile
/// kustomization NAME --with-source`). Returns what was asked, in words.
pub async fn request_sync(client: &Client, reconciler: &Reconciler) -> Result<String, String> {
    let (res, namespace, name) = owning_object(reconciler);
    let annotate =
        async |res: &ApiResource, namespace: &str, name: &str, key: &str, value: &str| {
            let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, res);
            let patch = serde_json::json!({"metadata": {"annotations": {key: value}}});
            let params = PatchParams {
                field_manager: Some(crate::cluster::revert::FIELD_MANAGER.to_owned()),
                ..PatchParams::default()
            };
            api.patch(name, &params, &Patch::Merge(&patch))
                .await
                .map(|_| ())
                .map_err(|e| unreadable(&reconciler.owner, &e))
        };
    match &reconciler.owner {
        Owner::Argo { .. } => {
            annotate(&res, &namespace, &name, ARGO_REFRESH, "normal").await?;
            Ok(format!(
                "asked {} to refresh ({ARGO_REFRESH})",
                reconciler.owner
            ))
        }
        Owner::FluxKustomization { .. } | Owner::FluxHelmRelease { .. } => {
            let now = jiff::Timestamp::now().to_string();
            if let Owner::FluxKustomization { .. } = reconciler.owner {
                let object = get(client, &res, &namespace, &name)
                    .await
                    .map_err(|e| unreadable(&reconciler.owner, &e))?;
                let source = |field: &str| {
                    object
                        .pointer(&format!("/spec/sourceRef/{field}"))
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_owned)
                };
                if source("kind").as_deref() == Some("GitRepository")
                    && let Some(source_name) = source("name")
                {
                    let source_namespace = source("namespace").unwrap_or(namespace.clone());
                    annotate(
                        &git_repository(),
                        &source_namespace,
                        &source_name,
                        FLUX_REQUESTED,
                        &now,
                    )
                    .await?;
                }
            }
            annotate(&res, &namespace, &name, FLUX_REQUESTED, &now).await?;
            Ok(format!(
                "asked {} to reconcile ({FLUX_REQUESTED})",
                reconciler.owner
            ))
        }
    }
}

/// Argo CD's request to refresh an Application now.
const ARGO_REFRESH: &str = "argocd.argoproj.io/refresh";
/// Flux's request to reconcile an object now.
const FLUX_REQUESTED: &str = "reconcile.fluxcd.io/requestedAt";

/// Reads one owner: its Application (in the namespace its tracking id names, else found among
/// every namespace's, else in `argocd`), Kustomization or HelmRelease.
pub async fn read(client: &Client, owner: &Owner) -> Reconciler {
    let mut found_in = None;
    let policy = match owner {
        Owner::Argo { app, namespace, .. } => read_application(client, app, namespace.as_deref())
            .await
            .map(|(value, ns)| {
                found_in = Some(ns);
                Policy::of_application(&value)
            })
            .map_err(|e| unreadable(owner, &e)),
        Owner::FluxKustomization { name, namespace }
        | Owner::FluxHelmRelease { name, namespace } => {
            let res = match owner {
                Owner::FluxHelmRelease { .. } => helm_release(),
                _ => kustomization(),
            };
            get(client, &res, namespace, name)
                .await
                .map(|v| Policy::of_flux(&v))
                .map_err(|e| unreadable(owner, &e))
        }
    };
    Reconciler {
        owner: owner.clone(),
        policy,
        found_in,
    }
}

/// An Application by name, and the namespace it was found in.
async fn read_application(
    client: &Client,
    app: &str,
    namespace: Option<&str>,
) -> Result<(serde_json::Value, String), kube::Error> {
    let res = application();
    if let Some(ns) = namespace {
        return Ok((get(client, &res, ns, app).await?, ns.to_owned()));
    }
    // Applications may live in any namespace; a user who may not list them all may still read
    // Argo CD's own.
    let all: Api<DynamicObject> = Api::all_with(client.clone(), &res);
    match all.list(&ListParams::default()).await {
        Ok(list) => {
            let found = list
                .items
                .into_iter()
                .filter(|o| o.metadata.name.as_deref() == Some(app))
                .min_by_key(|o| o.metadata.namespace.as_deref() != Some(ARGO_NAMESPACE));
            match found {
                Some(o) => {
                    let ns = o.metadata.namespace.clone().unwrap_or_default();
                    Ok((
                        serde_json::to_value(&o).map_err(kube::Error::SerdeError)?,
                        ns,
                    ))
                }
                None => Ok((
                    get(client, &res, ARGO_NAMESPACE, app).await?,
                    ARGO_NAMESPACE.to_owned(),
                )),
            }
        }
        Err(_) => Ok((
            get(client, &res, ARGO_NAMESPACE, app).await?,
            ARGO_NAMESPACE.to_owned(),
        )),
    }
}

/// Reads each owner once. The apps instance labels name are looked up in one metadata-only
/// list of the Applications (many Helm releases set the label too: a GET each would be wasted,
/// and whole Applications can be large), then each one found is read. With `hubs` (the contexts
/// watched with this one, and this cluster as Applications name it), an Application that is not
/// on this cluster is looked for among theirs that deploy here ([`super::hub`]).
pub async fn read_all(
    client: &Client,
    owners: impl IntoIterator<Item = Owner>,
    hubs: Option<(&super::hub::Peers, crate::gitops::source::Here<'_>)>,
) -> BTreeMap<Owner, Reconciler> {
    let mut out = read_here(client, owners).await;
    if let Some((peers, here)) = hubs {
        super::hub::find_missing_apps(peers, &here, &mut out).await;
    }
    out
}

async fn read_here(
    client: &Client,
    owners: impl IntoIterator<Item = Owner>,
) -> BTreeMap<Owner, Reconciler> {
    let mut out = BTreeMap::new();
    let mut names: Option<Result<Vec<(String, String)>, String>> = None;
    for owner in owners {
        let std::collections::btree_map::Entry::Vacant(slot) = out.entry(owner) else {
            continue;
        };
        let reconciler = match slot.key() {
            Owner::Argo {
                app,
                by_label: true,
                ..
            } => {
                if names.is_none() {
                    names = Some(application_names(client).await);
                }
                by_instance_label(client, slot.key(), app, names.as_ref()).await
            }
            owner => read(client, owner).await,
        };
        slot.insert(reconciler);
    }
    out
}

/// The (namespace, name) of every Application the user may list (all namespaces', else Argo
/// CD's own namespace's), from their metadata alone.
async fn application_names(client: &Client) -> Result<Vec<(String, String)>, String> {
    let res = application();
    let names = |list: kube::core::ObjectList<kube::core::PartialObjectMeta<DynamicObject>>| {
        list.items
            .into_iter()
            .map(|o| {
                (
                    o.metadata.namespace.unwrap_or_default(),
                    o.metadata.name.unwrap_or_default(),
                )
            })
            .collect()
    };
    let all: Api<DynamicObject> = Api::all_with(client.clone(), &res);
    match all.list_metadata(&ListParams::default()).await {
        Ok(list) => Ok(names(list)),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(Vec::new()),
        Err(kube::Error::Api(s)) if s.code == 403 => {
            let own: Api<DynamicObject> =
                Api::namespaced_with(client.clone(), ARGO_NAMESPACE, &res);
            own.list_metadata(&ListParams::default())
                .await
                .map(names)
                .map_err(|e| crate::cluster::describe(&e))
        }
        Err(e) => Err(crate::cluster::describe(&e)),
    }
}

/// The reconciler of an instance label's app: the Application of that name (Argo CD's own
/// namespace first when several have it), read, or why there is none.
async fn by_instance_label(
    client: &Client,
    owner: &Owner,
    app: &str,
    names: Option<&Result<Vec<(String, String)>, String>>,
) -> Reconciler {
    let namespace = match names {
        Some(Ok(names)) => names
            .iter()
            .filter(|(_, name)| name == app)
            .min_by_key(|(ns, _)| ns != ARGO_NAMESPACE)
            .map(|(ns, _)| ns.clone())
            .ok_or_else(|| {
                format!("no Argo CD Application \"{app}\" (the label is another tool's)")
            }),
        Some(Err(why)) => Err(why.clone()),
        None => Err("not listed".to_owned()),
    };
    let read = match namespace {
        Ok(ns) => get(client, &application(), &ns, app)
            .await
            .map(|v| (Policy::of_application(&v), ns))
            .map_err(|e| unreadable(owner, &e)),
        Err(why) => Err(why),
    };
    match read {
        Ok((policy, ns)) => Reconciler {
            owner: owner.clone(),
            policy: Ok(policy),
            found_in: Some(ns),
        },
        Err(why) => Reconciler {
            owner: owner.clone(),
            policy: Err(why),
            found_in: None,
        },
    }
}

/// Every Application the user may list: all namespaces', else Argo CD's own namespace's. `Ok`
/// and empty when the cluster serves no Applications.
pub async fn list_applications(client: &Client) -> Result<Vec<serde_json::Value>, String> {
    list_everywhere(client, &application(), ARGO_NAMESPACE).await
}

/// Where Flux keeps its objects unless told otherwise.
const FLUX_NAMESPACE: &str = "flux-system";

/// Every Flux Kustomization and GitRepository the user may list (all namespaces', else
/// `flux-system`'s). Both empty when the cluster serves no Flux.
pub async fn list_flux(client: &Client) -> Result<FluxObjects, String> {
    let kustomizations = kustomization();
    let helm_releases = helm_release();
    let repositories = git_repository();
    let kustomizations = list_everywhere(client, &kustomizations, FLUX_NAMESPACE).await?;
    let helm_releases = list_everywhere(client, &helm_releases, FLUX_NAMESPACE).await?;
    if kustomizations.is_empty() && helm_releases.is_empty() {
        return Ok(FluxObjects::default());
    }
    let repositories = list_everywhere(client, &repositories, FLUX_NAMESPACE).await?;
    Ok(FluxObjects {
        kustomizations,
        helm_releases,
        repositories,
    })
}

/// Flux's objects that say what it applies from git, as the API returns them.
#[derive(Debug, Default)]
pub struct FluxObjects {
    pub kustomizations: Vec<serde_json::Value>,
    pub helm_releases: Vec<serde_json::Value>,
    pub repositories: Vec<serde_json::Value>,
}

/// The objects of `res` in every namespace, else (403) in `fallback`. Empty when the cluster
/// does not serve the kind.
async fn list_everywhere(
    client: &Client,
    res: &ApiResource,
    fallback: &str,
) -> Result<Vec<serde_json::Value>, String> {
    let all: Api<DynamicObject> = Api::all_with(client.clone(), res);
    let list = match all.list(&ListParams::default()).await {
        Ok(list) => list,
        Err(kube::Error::Api(s)) if s.code == 404 => return Ok(Vec::new()),
        Err(kube::Error::Api(s)) if s.code == 403 => {
            let own: Api<DynamicObject> = Api::namespaced_with(client.clone(), fallback, res);
            own.list(&ListParams::default())
                .await
                .map_err(|e| match e {
                    kube::Error::Api(s) if s.code == 403 => format!("forbidden: {}", s.message),
                    other => crate::cluster::describe(&other),
                })?
        }
        Err(e) => return Err(crate::cluster::describe(&e)),
    };
    list.items
        .into_iter()
        .map(|o| serde_json::to_value(&o).map_err(|e| e.to_string()))
        .collect()
}

/// What the Applications chose for a run without `--manifests`.
#[derive(Debug, Default)]
pub struct FromApps {
    /// The checkout's top folder and the Applications' folders in it, when any deploy here.
    pub mapped: Option<(
        std::path::PathBuf,
        Vec<crate::manifest::kustomize::AppFolder>,
    )>,
    /// The Helm charts of the checkout the Applications render (see
    /// [`crate::gitops::source::Mapping::charts`]).
    pub charts: Vec<crate::helm::chart::ChartSpec>,
    /// Sentences for the manifests' notes.
    pub notes: Vec<String>,
}

/// The manifests the Argo CD Applications and Flux Kustomizations of the cluster at
/// `cluster_url` (context `context`) deploy from the git checkout holding `dir` (see
/// [`crate::gitops::source`]); with `peers`, also the Applications of the other contexts
/// watched with it whose Argo CD deploys to this cluster (a hub). Nothing when `dir` is not in
/// a checkout with a remote, or nothing deploys here from it; a note when either kind could
/// not be listed. A folder both map is read as the Application's.
pub async fn manifests_from_apps(
    client: &Client,
    here: &crate::gitops::source::Here<'_>,
    peers: Option<&super::hub::Peers>,
    dir: &std::path::Path,
) -> FromApps {
    let start = dir.to_path_buf();
    let checkout = tokio::task::spawn_blocking(move || {
        let top = crate::git::repository_root(&start).ok().flatten()?;
        let remotes = crate::git::remote_urls(&top).ok()?;
        let branch = crate::git::current_branch(&top).ok().flatten();
        (!remotes.is_empty()).then_some((top, remotes, branch))
    })
    .await
    .ok()
    .flatten();
    let Some((top, remotes, branch)) = checkout else {
        return FromApps::default();
    };
    let mut notes = Vec::new();
    let (own, others) = match peers {
        Some(peers) => (
            peers.own(here.context, client).await,
            peers.others(here.context).await,
        ),
        None => (super::hub::listing(client.clone()).await, Vec::new()),
    };
    let mut listings = Vec::new();
    match &own.apps {
        Ok(apps) => listings.push(crate::gitops::source::Listed {
            hub: None,
            apps,
            clusters: &own.clusters,
        }),
        Err(reason) => {
            tracing::info!(%reason, "Argo CD Applications not listed");
            notes.push(format!(
                "Argo CD Applications could not be listed ({reason}): their folders are not mapped"
            ));
        }
    }
    for (context, listing) in &others {
        match &listing.apps {
            Ok(apps) => listings.push(crate::gitops::source::Listed {
                hub: Some(context),
                apps,
                clusters: &listing.clusters,
            }),
            Err(reason) => notes.push(format!(
                "the Argo CD Applications of context {context} could not be read ({reason}): those there that deploy to {} are not mapped",
                here.context
            )),
        }
    }
    let every = std::iter::once((here.context, &own)).chain(
        others
            .iter()
            .map(|(context, listing)| (context.as_str(), listing)),
    );
    for (context, listing) in every {
        if let Some(reason) = &listing.clusters_unread {
            notes.push(format!(
                "Argo CD's clusters on context {context} could not be read ({reason}): a destination given by name is taken as the kubeconfig context of that name"
            ));
        }
    }
    let mut mapping =
        crate::gitops::source::map_listings(&top, &remotes, branch.as_deref(), &listings, here);
    match list_flux(client).await {
        Ok(flux) => {
            let charts = crate::gitops::source::map_flux_helm(
                &top,
                &remotes,
                &flux.helm_releases,
                &flux.repositories,
            );
            mapping.charts.extend(charts.charts);
            mapping.notes.extend(charts.notes);
            let flux = crate::gitops::source::map_flux(
                &top,
                &remotes,
                branch.as_deref(),
                &flux.kustomizations,
                &flux.repositories,
            );
            for folder in flux.folders {
                match mapping.folders.iter().find(|f| f.dir == folder.dir) {
                    Some(taken) => notes.push(format!(
                        "Argo CD app {} and Flux Kustomization {} both deploy \"{}\": compared once, as {}'s",
                        taken.app,
                        folder.app,
                        crate::manifest::kustomize::shown(&top, &folder.dir),
                        taken.app
                    )),
                    None => mapping.folders.push(folder),
                }
            }
            mapping.notes.extend(flux.notes);
        }
        Err(reason) => {
            tracing::info!(%reason, "Flux Kustomizations not listed");
            notes.push(format!(
                "Flux Kustomizations could not be listed ({reason}): their folders are not mapped"
            ));
        }
    }
    notes.extend(mapping.notes);
    let mapping = crate::gitops::source::Mapping {
        folders: mapping.folders,
        charts: mapping.charts,
        notes,
    };
    if mapping.folders.is_empty() {
        return FromApps {
            mapped: None,
            charts: mapping.charts,
            notes: mapping.notes,
        };
    }
    FromApps {
        mapped: Some((top, mapping.folders)),
        charts: mapping.charts,
        notes: mapping.notes,
    }
}
