//! The schemas of the cluster's kinds from its own OpenAPI v3 (`/openapi/v3`: an index, then one
//! document per group-version, custom resources included), fetched only for the group-versions in
//! use and kept on disk per server (`$XDG_CACHE_HOME/kdrift/openapi/<server version>/`, each file
//! named by the hash the index pins it with, so a document is fetched again only when the server's
//! changes). When a document cannot be read (403, 404, a broken document) the documents of
//! Kubernetes 1.36 built into kdrift stand in for the built-in kinds, and a notice says so once.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use kube::Client;
use serde_json::Value;

use crate::cluster::kinds::{DiscoveryError, ServedKinds, split_api_version};
use crate::schema::{BUILTIN_DOCUMENTS, Schemas};

/// The schemas found, and what the reader should know about where they came from.
#[derive(Debug, Clone, Default)]
pub struct LoadedSchemas {
    pub schemas: Schemas,
    /// One line per group-version whose server document could not be used.
    pub notices: Vec<String>,
}

/// The disk cache of documents: `$XDG_CACHE_HOME/kdrift/openapi` (else `~/.cache/…`), or
/// `KDRIFT_CACHE_DIR/openapi`.
pub fn cache_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("KDRIFT_CACHE_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => dirs::cache_dir()?.join("kdrift"),
    };
    Some(base.join("openapi"))
}

/// `api/v1` for `v1`, `apis/apps/v1` for `apps/v1`: where a group-version's document is.
pub fn document_path(api_version: &str) -> String {
    if api_version.contains('/') {
        format!("apis/{api_version}")
    } else {
        format!("api/{api_version}")
    }
}

/// A file name for one document: its path and its hash, without anything a file system minds.
fn cache_file(dir: &Path, server_version: &str, path: &str, hash: &str) -> PathBuf {
    let clean = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    dir.join(clean(server_version))
        .join(format!("{}.{}.json", clean(path), clean(hash)))
}

/// Writes `text` to `file` through a temporary file, so a reader never sees half of it.
fn write_atomically(file: &Path, text: &str) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut temp, text.as_bytes())?;
    temp.persist(file).map_err(|e| e.error)?;
    Ok(())
}

async fn get_text(client: &Client, url: &str) -> Result<String, String> {
    let request = http::Request::get(url)
        .header(http::header::ACCEPT, "application/json")
        .body(Vec::new())
        .map_err(|e| e.to_string())?;
    client
        .request_text(request)
        .await
        .map_err(|e| crate::cluster::describe(&e))
}

/// The groups every discovery reads (the core group, and `apps`, whose Deployments the screen
/// always shows), and the group-versions of theirs nearly every repository uses.
pub const COMMON_GROUPS: [&str; 2] = ["", "apps"];
pub const COMMON_VERSIONS: [&str; 2] = ["v1", "apps/v1"];

/// What discovery can read before the manifests are loaded: the [`COMMON_GROUPS`] and the
/// schemas of the [`COMMON_VERSIONS`] (for a repository of 1,002 objects on a 2-core machine,
/// ~15 ms that then run beside the manifests' parsing).
pub struct Prefetched {
    served: Result<ServedKinds, DiscoveryError>,
    loaded: LoadedSchemas,
}

fn owned(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

/// Reads the [`Prefetched`] part of discovery.
pub async fn prefetch(client: &Client, server_version: &str) -> Prefetched {
    let served = ServedKinds::discover(client, &owned(&COMMON_GROUPS)).await;
    let versions = owned(&COMMON_VERSIONS);
    let cache = cache_dir();
    let loaded = load(client, server_version, &versions, cache.as_deref()).await;
    Prefetched { served, loaded }
}

/// Discovery of the groups of `kinds` (plus the core group, `apps` and `extra_group`), and the
/// schemas of those of `kinds` the cluster serves (plus `apps/v1`, whose Deployments the screen
/// always shows) from the cluster's OpenAPI, through the disk cache. What `prefetched` read is
/// not read again, unless it said something (a notice, an error) that may not concern `kinds`:
/// then all is read as if nothing had been.
pub async fn discover_with_schemas(
    client: &Client,
    server_version: &str,
    kinds: &BTreeSet<(String, String)>,
    extra_group: Option<String>,
    prefetched: Option<Prefetched>,
) -> Result<(ServedKinds, LoadedSchemas), DiscoveryError> {
    let mut groups: BTreeSet<String> = kinds
        .iter()
        .map(|(api_version, _)| split_api_version(api_version).0.to_owned())
        .collect();
    groups.extend(owned(&COMMON_GROUPS));
    groups.extend(extra_group);
    let prefetched = prefetched.and_then(|p| match p.served {
        Ok(served) if p.loaded.notices.is_empty() => Some((served, p.loaded)),
        _ => None,
    });
    // The group-versions whose schemas are loaded already.
    let (served, mut loaded, read): (_, _, &[&str]) = match prefetched {
        Some((mut served, loaded)) => {
            groups.retain(|g| !COMMON_GROUPS.contains(&g.as_str()));
            if !groups.is_empty() {
                served.extend(ServedKinds::discover(client, &groups).await?);
            }
            (served, loaded, &COMMON_VERSIONS)
        }
        None => {
            let served = ServedKinds::discover(client, &groups).await?;
            (served, LoadedSchemas::builtin(), &[])
        }
    };
    let mut api_versions: BTreeSet<String> = kinds
        .iter()
        .filter(|(api_version, kind)| served.get(api_version, kind).is_some())
        .map(|(api_version, _)| api_version.clone())
        .collect();
    api_versions.insert("apps/v1".to_owned());
    api_versions.retain(|v| !read.contains(&v.as_str()));
    let cache = cache_dir();
    load_into(
        &mut loaded,
        client,
        server_version,
        &api_versions,
        cache.as_deref(),
    )
    .await;
    Ok((served, loaded))
}

impl LoadedSchemas {
    /// The schemas built into kdrift, before any of the cluster's.
    fn builtin() -> LoadedSchemas {
        LoadedSchemas {
            schemas: Schemas::builtin().clone(),
            notices: Vec::new(),
        }
    }
}

/// The schemas of the kinds of `api_versions` (`apps/v1`, `v1`, `example.com/v1`): the server's
/// documents where they can be read (from the cache when their hash is already there), else the
/// built-in ones, with a notice.
pub async fn load(
    client: &Client,
    server_version: &str,
    api_versions: &BTreeSet<String>,
    cache: Option<&Path>,
) -> LoadedSchemas {
    let mut out = LoadedSchemas::builtin();
    load_into(&mut out, client, server_version, api_versions, cache).await;
    out
}

/// [`load`] into schemas already loaded.
async fn load_into(
    out: &mut LoadedSchemas,
    client: &Client,
    server_version: &str,
    api_versions: &BTreeSet<String>,
    cache: Option<&Path>,
) {
    if api_versions.is_empty() {
        return;
    }
    let index = match get_text(client, "/openapi/v3").await.and_then(|text| {
        serde_json::from_str::<Value>(&text).map_err(|e| format!("not an OpenAPI index: {e}"))
    }) {
        Ok(index) => index,
        Err(reason) => {
            out.notices.push(format!(
                "cannot read the cluster's OpenAPI (/openapi/v3: {reason}): the schemas of Kubernetes 1.36 built into kdrift stand in"
            ));
            return;
        }
    };
    let mut unreadable: Vec<(String, String)> = Vec::new();
    let mut absent: Vec<String> = Vec::new();
    for api_version in api_versions {
        let path = document_path(api_version);
        let Some(url) = index
            .pointer(&format!(
                "/paths/{}/serverRelativeURL",
                path.replace('~', "~0").replace('/', "~1")
            ))
            .and_then(Value::as_str)
        else {
            absent.push(api_version.clone());
            continue;
        };
        let hash = url
            .split_once("hash=")
            .map(|(_, h)| h.split('&').next().unwrap_or(h))
            .unwrap_or("");
        let file = cache
            .filter(|_| !hash.is_empty())
            .map(|dir| cache_file(dir, server_version, &path, hash));
        let cached = file
            .as_ref()
            .and_then(|f| std::fs::read(f).ok())
            .filter(|bytes| out.schemas.add_document(bytes).is_ok());
        if cached.is_some() {
            continue;
        }
        match get_text(client, url).await {
            Ok(text) => match out.schemas.add_document(text.as_bytes()) {
                Ok(_) => {
                    if let Some(file) = &file
                        && let Err(e) = write_atomically(file, &text)
                    {
                        tracing::warn!(file = %file.display(), error = %e, "cannot cache an OpenAPI document");
                    }
                }
                Err(e) => unreadable.push((api_version.clone(), e.to_string())),
            },
            Err(reason) => unreadable.push((api_version.clone(), reason)),
        }
    }
    // One line for each way it went wrong, not one per document.
    let fallback = |versions: &[&String]| {
        let custom = versions
            .iter()
            .any(|v| !BUILTIN_DOCUMENTS.iter().any(|d| d.path == document_path(v)));
        if custom {
            "the schemas of Kubernetes 1.36 built into kdrift stand in (a custom resource without one is compared without a schema: its lists as a whole)"
        } else {
            "the schemas of Kubernetes 1.36 built into kdrift stand in"
        }
    };
    let list = |versions: &[&String]| {
        versions
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some((_, reason)) = unreadable.first() {
        let versions: Vec<&String> = unreadable.iter().map(|(v, _)| v).collect();
        out.notices.push(format!(
            "cannot read the cluster's OpenAPI for {} ({reason}): {}",
            list(&versions),
            fallback(&versions)
        ));
    }
    if !absent.is_empty() {
        let versions: Vec<&String> = absent.iter().collect();
        out.notices.push(format!(
            "the cluster's OpenAPI has no document for {}: {}",
            list(&versions),
            fallback(&versions)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_found_and_cached_by_path_and_hash() {
        assert_eq!(document_path("v1"), "api/v1");
        assert_eq!(document_path("apps/v1"), "apis/apps/v1");
        let file = cache_file(
            Path::new("/c"),
            "v1.36.2+k3s1",
            "apis/example.com/v1",
            "AB12",
        );
        assert_eq!(
            file,
            Path::new("/c/v1.36.2_k3s1/apis_example.com_v1.AB12.json")
        );
    }
}
