//! The HTTP kdrift speaks to a real API server: HTTP/2 for the commands, offered by ALPN as
//! kubectl offers it, so that every request shares one connection (many reads at once and a
//! watch ride on it); HTTP/1.1 for the live view, whose watches could fill a connection's
//! 100 streams.
use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kdrift::cluster::client::{ConnectionSettings, connect};
use kube::Api;
use kube::api::WatchParams;

#[tokio::test]
async fn a_real_server_is_spoken_to_over_http2_and_carries_many_reads_and_a_watch_at_once() {
    let Some(real) = crate::server::real() else {
        return;
    };
    let conn = connect(&ConnectionSettings {
        kubeconfig: Some(real.kubeconfig.clone()),
        http2: true,
        ..ConnectionSettings::default()
    })
    .await
    .unwrap();
    assert!(conn.http2, "the real server was not spoken to over HTTP/2");
    let namespaces: Api<Namespace> = Api::all(conn.client.clone());
    // A watch stays open while 64 reads are in flight beside it.
    let mut watch = namespaces
        .watch(&WatchParams::default().timeout(5), "0")
        .await
        .unwrap()
        .boxed();
    let reads = (0..64).map(|_| namespaces.get("default"));
    let read = futures::future::join_all(reads).await;
    let failed: Vec<String> = read
        .iter()
        .filter_map(|r| r.as_ref().err().map(|e| e.to_string()))
        .collect();
    assert!(failed.is_empty(), "reads failed: {failed:?}");
    let first = watch
        .next()
        .await
        .expect("the watch ended without an event");
    assert!(first.is_ok(), "{first:?}");
}

#[tokio::test]
async fn the_live_view_speaks_http1_to_a_real_server() {
    let Some(real) = crate::server::real() else {
        return;
    };
    let common = kdrift::cli::CommonArgs {
        kubeconfig: Some(real.kubeconfig.clone()),
        ..kdrift::cli::CommonArgs::default()
    };
    let conn = connect(&common.connection()).await.unwrap();
    assert!(!conn.http2, "the live view's connection offered HTTP/2");
}
