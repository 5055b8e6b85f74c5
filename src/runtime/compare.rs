//! One context's part of the fleet's compare view ([`crate::app::compare`]): the object as this
//! cluster has it, read on the context's own connection, with the manifest that describes it
//! here.
use std::sync::Arc;

use kube::Client;

use crate::app::ManifestKey;
use crate::cluster::live::{LiveKinds, get_object};
use crate::drift::LiveObject;
use crate::drift::fleet::{ReadObject, Reading};
use crate::manifest::ManifestIndex;

/// Where the comparison is asked, and of what.
pub struct Asked {
    pub context: String,
    pub cluster: String,
    pub key: ManifestKey,
    pub api_version: String,
}

/// Reads `asked.key` on `client`; `index` is the context's manifests (`None` while they load).
pub async fn read(
    client: &Client,
    kinds: &LiveKinds,
    index: Option<Arc<ManifestIndex>>,
    asked: Asked,
) -> Result<Box<Reading>, String> {
    let Asked {
        context,
        cluster,
        key,
        api_version,
    } = asked;
    let object = match get_object(client, kinds, &key, &api_version).await? {
        None => None,
        Some(raw) => {
            let live = LiveObject::from_item(raw.clone(), &api_version, &key.kind, &kinds.schemas)
                .map_err(|e| format!("live {key}: {e}"))?;
            Some(ReadObject::new(raw, live)?)
        }
    };
    let (source, manifest, config) = match index.as_deref() {
        Some(index) => (
            index.source(&context),
            index.get(&key).cloned(),
            index.config.clone(),
        ),
        None => (
            "the manifests are still loading".to_owned(),
            None,
            Default::default(),
        ),
    };
    Ok(Box::new(Reading {
        cluster,
        source,
        key,
        object,
        manifest,
        config,
    }))
}
