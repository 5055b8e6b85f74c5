//! One context's part of the fleet's compare view ([`crate::app::compare`]): the object as this
//! cluster has it, read on the context's own connection, with the manifest that describes it
//! here.
use std::sync::Arc;

use crate::cluster::client::Client;

use crate::cluster::live::{LiveKinds, get_object};
use crate::drift::LiveObject;
use crate::drift::fleet::{ReadObject, Reading};
use crate::manifest::ManifestIndex;
use crate::manifest::ObjectKey;

/// How long a cluster's column waits for its object.
const READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Where the comparison is asked, and of what.
pub struct Asked {
    pub context: String,
    pub cluster: String,
    pub key: ObjectKey,
    pub api_version: String,
}

/// Reads `asked.key` on `client`; `index` is the context's manifests (`None` while they load).
pub async fn read(
    client: &Client,
    kinds: &LiveKinds,
    index: Option<Arc<ManifestIndex>>,
    asked: Asked,
) -> Result<Box<Reading>, String> {
    read_within(client, kinds, index, asked, READ_TIMEOUT).await
}

/// [`read`], the cluster given `timeout` to answer.
async fn read_within(
    client: &Client,
    kinds: &LiveKinds,
    index: Option<Arc<ManifestIndex>>,
    asked: Asked,
    timeout: std::time::Duration,
) -> Result<Box<Reading>, String> {
    let Asked {
        context,
        cluster,
        key,
        api_version,
    } = asked;
    // A cluster that accepted the request and went quiet would otherwise hold its column at
    // `reading…` until the server's own timeout (60 s).
    let got = tokio::time::timeout(timeout, get_object(client, kinds, &key, &api_version))
        .await
        .map_err(|_| format!("no answer within {:?}", timeout))??;
    let object = match got {
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// A cluster that accepts the connection and never answers gives its column an error after
    /// the timeout, not `reading…` until the server's own.
    #[tokio::test]
    async fn a_cluster_that_never_answers_says_so_after_the_timeout() {
        let hole = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", hole.local_addr().unwrap());
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((stream, _)) = hole.accept().await {
                open.push(stream);
            }
        });
        let config = kube::Config::new(url.parse().unwrap());
        let client = Client::try_from(config).unwrap();
        let asked = Asked {
            context: "stalled".into(),
            cluster: url,
            key: ObjectKey::new("apps", "Deployment", "shop", "web"),
            api_version: "apps/v1".into(),
        };
        let started = std::time::Instant::now();
        let timeout = std::time::Duration::from_millis(300);
        let read = read_within(
            &client,
            &LiveKinds::before_discovery(),
            None,
            asked,
            timeout,
        )
        .await;
        let Err(error) = read else {
            panic!("a cluster that never answers was read")
        };
        assert_eq!(error, "no answer within 300ms");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        held.abort();
    }
}
