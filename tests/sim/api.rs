//! The demo cluster through kdrift's own client path (kube-rs): lists, watches, Status errors
//! as a real server words them, and the injected faults.
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kdrift::sim::resources::ResourceType;
use kdrift::sim::store::WriteOptions;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use serde_json::{Value, json};

use crate::common::Cluster;

const PATIENCE: Duration = Duration::from_secs(60);

fn client(c: &Cluster) -> kube::Client {
    let _guard = c.runtime.enter();
    let config = kube::Config::new(c.server.url().parse().unwrap());
    kube::Client::try_from(config).unwrap()
}

fn api_error(err: kube::Error) -> kube::core::Status {
    match err {
        kube::Error::Api(status) => *status,
        other => panic!("expected a Status from the server, got {other:?}"),
    }
}

/// Change a Deployment through the store, as a controller or another client would.
fn relabel(c: &Cluster, ns: &str, name: &str, key: &str, value: &str) {
    let patch = kdrift::sim::store::Patch::Merge(json!({"metadata": {"labels": {key: value}}}));
    c.server
        .store()
        .patch(
            ResourceType::DEPLOYMENT,
            ns,
            name,
            &patch,
            &WriteOptions::manager("test"),
        )
        .unwrap();
}

#[test]
fn paginated_lists_return_every_object_once() {
    let c = Cluster::start();
    let api: Api<Deployment> = Api::all(client(&c));
    let stored = c.server.store().list(ResourceType::DEPLOYMENT, None).len();
    let names = c.runtime.block_on(async {
        let mut names = Vec::new();
        let mut params = ListParams::default().limit(3);
        loop {
            let page = api.list(&params).await.unwrap();
            names.extend(page.items.iter().map(|d| {
                format!(
                    "{}/{}",
                    d.metadata.namespace.as_deref().unwrap(),
                    d.metadata.name.as_deref().unwrap()
                )
            }));
            match page.metadata.continue_.filter(|t| !t.is_empty()) {
                Some(token) => params = params.continue_token(&token),
                None => break names,
            }
        }
    });
    assert_eq!(names.len(), stored);
    let mut unique = names.clone();
    unique.dedup();
    assert_eq!(unique.len(), stored, "no object twice: {names:?}");
}

/// Every page of a list is as of the first page's resourceVersion (as etcd serves it), so a
/// client watching from that version sees each change after it once and nothing newer before.
#[test]
fn a_continued_list_is_one_snapshot_and_the_watch_from_it_sees_what_changed_meanwhile() {
    let c = Cluster::start();
    let api: Api<Deployment> = Api::all(client(&c));
    let keys = |d: &Deployment| {
        (
            d.metadata.namespace.clone().unwrap(),
            d.metadata.name.clone().unwrap(),
        )
    };
    c.runtime.block_on(async {
        let first = api.list(&ListParams::default().limit(3)).await.unwrap();
        let rv = first.metadata.resource_version.clone().unwrap();
        let all = c.server.store().list(ResourceType::DEPLOYMENT, None);
        let name_of = |v: &Value| {
            (
                v["metadata"]["namespace"].as_str().unwrap().to_string(),
                v["metadata"]["name"].as_str().unwrap().to_string(),
            )
        };
        let (changed, deleted) = (name_of(&all[all.len() - 1]), name_of(&all[all.len() - 2]));
        // Between the pages: a later object changes, another goes, a new one comes.
        relabel(&c, &changed.0, &changed.1, "between", "pages");
        c.server
            .store()
            .delete(ResourceType::DEPLOYMENT, &deleted.0, &deleted.1, false)
            .unwrap();
        let mut created = all[all.len() - 1].clone();
        created["metadata"] = json!({"name": "zz-new", "namespace": changed.0});
        c.server
            .store()
            .create(
                ResourceType::DEPLOYMENT,
                created,
                &WriteOptions::manager("test"),
            )
            .unwrap();
        let mut items = first.items.clone();
        let mut token = first.metadata.continue_.clone();
        while let Some(t) = token.filter(|t| !t.is_empty()) {
            let page = api
                .list(&ListParams::default().limit(3).continue_token(&t))
                .await
                .unwrap();
            assert_eq!(page.metadata.resource_version.as_deref(), Some(rv.as_str()));
            items.extend(page.items);
            token = page.metadata.continue_;
        }
        assert_eq!(items.len(), all.len(), "the objects as they were at {rv}");
        let version = |d: &Deployment| -> u64 {
            d.metadata
                .resource_version
                .as_deref()
                .unwrap()
                .parse()
                .unwrap()
        };
        assert!(items.iter().all(|d| version(d) <= rv.parse().unwrap()));
        assert!(items.iter().any(|d| keys(d) == deleted));
        assert!(
            !items
                .iter()
                .any(|d| d.metadata.name.as_deref() == Some("zz-new"))
        );
        let old = items.iter().find(|d| keys(d) == changed).unwrap();
        assert!(
            !old.metadata
                .labels
                .clone()
                .unwrap_or_default()
                .contains_key("between")
        );
        // The watch from the list's version brings the three changes (among the controllers').
        let mut stream = api
            .watch(&WatchParams::default(), &rv)
            .await
            .unwrap()
            .boxed();
        let (mut saw_change, mut saw_delete, mut saw_new) = (false, false, false);
        while !(saw_change && saw_delete && saw_new) {
            let event = tokio::time::timeout(PATIENCE, stream.try_next()).await;
            match event.unwrap().unwrap() {
                Some(WatchEvent::Modified(d)) if keys(&d) == changed => {
                    saw_change |= d
                        .metadata
                        .labels
                        .unwrap_or_default()
                        .contains_key("between");
                }
                Some(WatchEvent::Deleted(d)) => saw_delete |= keys(&d) == deleted,
                Some(WatchEvent::Added(d)) => {
                    saw_new |= d.metadata.name.as_deref() == Some("zz-new");
                }
                Some(_) => {}
                None => panic!("the watch ended early"),
            }
        }
    });
}

#[test]
fn watches_see_changes_bookmarks_and_objects_leaving_a_selector() {
    let c = Cluster::start();
    let api: Api<Deployment> = Api::namespaced(client(&c), "shop");
    c.runtime.block_on(async {
        let list = api.list(&ListParams::default()).await.unwrap();
        let rv = list.metadata.resource_version.unwrap();
        let params = WatchParams::default().labels("app.kubernetes.io/name=cart");
        let mut stream = api.watch(&params, &rv).await.unwrap().boxed();
        relabel(&c, "shop", "cart", "tier", "backend");
        relabel(&c, "shop", "frontend", "tier", "web");
        // Only cart's changes arrive (the controllers may write it too), among them the label.
        loop {
            match tokio::time::timeout(PATIENCE, stream.try_next())
                .await
                .unwrap()
                .unwrap()
            {
                Some(WatchEvent::Modified(d)) => {
                    assert_eq!(d.metadata.name.as_deref(), Some("cart"));
                    if d.metadata
                        .labels
                        .unwrap_or_default()
                        .get("tier")
                        .map(String::as_str)
                        == Some("backend")
                    {
                        break;
                    }
                }
                Some(WatchEvent::Bookmark(_)) => continue,
                other => panic!("expected cart's changes, got {other:?}"),
            }
        }
        // The selector no longer matches: the watcher is told the object is gone.
        relabel(&c, "shop", "cart", "app.kubernetes.io/name", "basket");
        let mut saw_delete = false;
        let mut saw_bookmark = false;
        while !(saw_delete && saw_bookmark) {
            match tokio::time::timeout(PATIENCE, stream.try_next())
                .await
                .unwrap()
                .unwrap()
            {
                Some(WatchEvent::Deleted(d)) => {
                    assert_eq!(d.metadata.name.as_deref(), Some("cart"));
                    saw_delete = true;
                }
                Some(WatchEvent::Bookmark(b)) => {
                    assert!(!b.metadata.resource_version.is_empty());
                    saw_bookmark = true;
                }
                // A controller write to cart before the relabel.
                Some(WatchEvent::Modified(d)) if !saw_delete => {
                    assert_eq!(d.metadata.name.as_deref(), Some("cart"))
                }
                Some(other) => panic!("unexpected {other:?}"),
                None => panic!("the watch ended early"),
            }
        }
    });
}

#[test]
fn a_watch_from_a_forgotten_version_gets_410_expired() {
    let c = Cluster::start();
    let api: Api<Pod> = Api::all(client(&c));
    c.server.faults().set_watch_gone(true);
    c.runtime.block_on(async {
        let mut stream = api
            .watch(&WatchParams::default(), "1")
            .await
            .unwrap()
            .boxed();
        match stream.try_next().await.unwrap() {
            Some(WatchEvent::Error(status)) => {
                assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
                assert!(
                    status.message.starts_with("too old resource version: 1 ("),
                    "{}",
                    status.message
                );
            }
            other => panic!("expected a 410 ERROR event, got {other:?}"),
        }
        assert!(
            stream.try_next().await.unwrap().is_none(),
            "the stream ends after the error"
        );
    });
    c.server.faults().set_watch_gone(false);
    c.runtime.block_on(async {
        let rv = c.server.store().resource_version().to_string();
        let stream = api
            .watch(&WatchParams::default().timeout(1), &rv)
            .await
            .unwrap()
            .boxed();
        let events: Vec<_> = stream.try_collect().await.unwrap();
        assert!(
            events.iter().all(|e| !matches!(e, WatchEvent::Error(_))),
            "{events:?}"
        );
    });
}

#[test]
fn a_version_the_server_has_not_reached_gets_silence_on_a_watch_and_504_on_a_list() {
    // As a 1.36 server answers (testdata of shared/reference/kubernetes-1.36/errors).
    let c = Cluster::start();
    // Without kube-rs's retries of a 504 (15, backing off): the first answer is the one asked.
    let api: Api<Deployment> = {
        let _guard = c.runtime.enter();
        let mut config = kube::Config::new(c.server.url().parse().unwrap());
        config.default_retry = false;
        Api::all(kube::Client::try_from(config).unwrap())
    };
    let ahead = c.server.store().resource_version() + 100_000;
    c.runtime.block_on(async {
        // Bookmarks every 5 s and the controllers' writes: none of them may reach this watch.
        let params = WatchParams {
            bookmarks: true,
            ..WatchParams::default().timeout(7)
        };
        let stream = api
            .watch(&params, &ahead.to_string())
            .await
            .unwrap()
            .boxed();
        let events: Vec<_> = stream.try_collect().await.unwrap();
        assert!(events.is_empty(), "{events:?}");

        let params = ListParams::default()
            .at(&ahead.to_string())
            .matching(kube::api::VersionMatch::NotOlderThan);
        let status = api_error(api.list(&params).await.unwrap_err());
        assert_eq!((status.code, status.reason.as_str()), (504, "Timeout"));
        assert!(
            status.message.starts_with(&format!(
                "Timeout: Too large resource version: {ahead}, current: "
            )),
            "{}",
            status.message
        );
    });
}

#[test]
fn dropped_watches_end_and_a_restart_keeps_state_on_the_same_port() {
    let mut c = Cluster::start();
    let api: Api<Deployment> = Api::all(client(&c));
    let before = c
        .runtime
        .block_on(api.list(&ListParams::default()))
        .unwrap();
    let rv = before.metadata.resource_version.clone().unwrap();
    let mut stream = c
        .runtime
        .block_on(api.watch(&WatchParams::default(), &rv))
        .unwrap()
        .boxed();
    c.server.faults().drop_watches();
    let ended = c.runtime.block_on(async {
        loop {
            match tokio::time::timeout(PATIENCE, stream.next()).await {
                Ok(None) | Ok(Some(Err(_))) => break true,
                Ok(Some(Ok(_))) => continue,
                Err(_) => break false,
            }
        }
    });
    assert!(ended, "the watch stream ended after drop_watches()");

    let port = c.server.addr().port();
    c.runtime.block_on(c.server.restart()).unwrap();
    assert_eq!(c.server.addr().port(), port);
    // A restart closes every connection, as a real API server's does: a pooled keep-alive
    // connection may fail once (IncompleteMessage) before the client opens a new one.
    let after = c.runtime.block_on(async {
        let mut last = None;
        for _ in 0..5 {
            match api.list(&ListParams::default()).await {
                Ok(list) => return list,
                Err(e) => last = Some(e),
            }
        }
        panic!("list after restart kept failing: {last:?}");
    });
    let names = |l: &kube::api::ObjectList<Deployment>| -> Vec<String> {
        l.items
            .iter()
            .map(|d| d.metadata.name.clone().unwrap())
            .collect()
    };
    assert_eq!(names(&before), names(&after));
    // Resuming from the old version still works: the history survived the restart.
    let resumed = c
        .runtime
        .block_on(api.watch(&WatchParams::default().timeout(1), &rv));
    assert!(resumed.is_ok());
}

#[test]
fn a_stalled_watch_stays_open_and_silent_until_its_client_leaves() {
    let c = Cluster::start();
    let api: Api<Deployment> = Api::namespaced(client(&c), "shop");
    c.runtime.block_on(async {
        let rv = api
            .list(&ListParams::default())
            .await
            .unwrap()
            .metadata
            .resource_version
            .unwrap();
        // Bookmarks every 5 s and an end after 2 s, were it not stalled.
        let params = WatchParams::default().timeout(2);
        let mut stalled = api.watch(&params, &rv).await.unwrap().boxed();
        c.server.faults().stall_watches();
        relabel(&c, "shop", "cart", "tier", "stalled");
        // Past its timeout and a bookmark interval: nothing at all, and not the end either.
        let silent = tokio::time::timeout(Duration::from_secs(7), stalled.next()).await;
        assert!(silent.is_err(), "a stalled watch sent {silent:?}");
        assert_eq!(c.server.faults().stalled_watches(), 1);
        // A watch opened after the stall is served: it sees the change.
        let mut fresh = api.watch(&params, &rv).await.unwrap().boxed();
        let seen = loop {
            match tokio::time::timeout(PATIENCE, fresh.try_next()).await {
                Ok(Ok(Some(WatchEvent::Modified(d))))
                    if d.metadata.name.as_deref() == Some("cart") =>
                {
                    break d.metadata.labels.unwrap_or_default().get("tier").cloned();
                }
                Ok(Ok(Some(_))) => continue,
                other => panic!("the new watch did not see the change: {other:?}"),
            }
        };
        assert_eq!(seen.as_deref(), Some("stalled"));
        // The client gives up on the stalled stream: the server lets it go.
        drop(stalled);
        let start = std::time::Instant::now();
        while c.server.faults().stalled_watches() > 0 {
            assert!(
                start.elapsed() < PATIENCE,
                "the stalled stream outlived its client"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
}

#[test]
fn a_forbidden_namespace_answers_403_and_the_others_keep_working() {
    let c = Cluster::start();
    let kube = client(&c);
    c.server.faults().forbid_namespace("shop");
    let shop: Api<Deployment> = Api::namespaced(kube.clone(), "shop");
    let err = api_error(
        c.runtime
            .block_on(shop.list(&ListParams::default()))
            .unwrap_err(),
    );
    assert_eq!((err.code, err.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        err.message,
        "deployments.apps is forbidden: User \"kdrift-demo\" cannot list resource \"deployments\" in API group \"apps\" in the namespace \"shop\""
    );
    let payments: Api<Deployment> = Api::namespaced(kube.clone(), "payments");
    assert!(
        !c.runtime
            .block_on(payments.list(&ListParams::default()))
            .unwrap()
            .items
            .is_empty()
    );
    let all: Api<Deployment> = Api::all(kube);
    let err = api_error(
        c.runtime
            .block_on(all.list(&ListParams::default()))
            .unwrap_err(),
    );
    assert_eq!(err.code, 403);
    c.server.faults().allow_namespace("shop");
    assert!(
        c.runtime
            .block_on(shop.list(&ListParams::default()))
            .is_ok()
    );
}

#[test]
fn latency_slows_replies_without_breaking_them() {
    let c = Cluster::start();
    c.server.faults().set_latency(Duration::from_millis(50));
    let api: Api<Deployment> = Api::namespaced(client(&c), "shop");
    let got = c.runtime.block_on(api.get("frontend")).unwrap();
    assert_eq!(got.metadata.name.as_deref(), Some("frontend"));
}

/// Send one raw request; returns the HTTP code and the body.
fn raw(c: &Cluster, method: &str, path: &str, content_type: &str, body: &str) -> (u16, Value) {
    let kube = client(c);
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("Content-Type", content_type)
        .body(body.as_bytes().to_vec())
        .unwrap();
    c.runtime.block_on(async {
        let response = kube
            .send(request.map(kube::client::Body::from))
            .await
            .unwrap();
        let code = response.status().as_u16();
        let bytes = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap()
            .to_bytes();
        (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    })
}

/// The reference capture `name` of a real server: (code, body).
fn reference(name: &str) -> (u16, Value) {
    let text = std::fs::read_to_string(format!(
        "{}/testdata/kubernetes-1.20/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let (code, body) = text.split_once('\n').unwrap();
    (
        code.trim().parse().unwrap(),
        serde_json::from_str(body).unwrap(),
    )
}

#[test]
fn errors_are_worded_and_coded_as_a_real_server_words_them() {
    let c = Cluster::start();
    let path = "/apis/apps/v1/namespaces/shop/deployments";
    assert_eq!(
        raw(&c, "GET", &format!("{path}/nope"), "application/json", ""),
        reference("status-404.txt")
    );
    assert_eq!(
        raw(&c, "PATCH", &format!("{path}/frontend"), "text/plain", "{}"),
        reference("status-415.txt")
    );

    let mut stale = c
        .server
        .store()
        .get(ResourceType::DEPLOYMENT, "shop", "frontend")
        .unwrap();
    stale["metadata"]["resourceVersion"] = json!("1");
    stale["spec"]["replicas"] = json!(9);
    let (code, body) = raw(
        &c,
        "PUT",
        &format!("{path}/frontend"),
        "application/json",
        &stale.to_string(),
    );
    let (want_code, mut want) = reference("status-409-conflict.txt");
    want["message"] = json!(
        want["message"]
            .as_str()
            .unwrap()
            .replace("\"web\"", "\"frontend\"")
    );
    want["details"]["name"] = json!("frontend");
    assert_eq!((code, body), (want_code, want));

    let (code, body) = raw(&c, "POST", path, "application/json", "{not json");
    assert_eq!((code, body["reason"].as_str()), (400, Some("BadRequest")));
    let (code, body) = raw(
        &c,
        "POST",
        "/apis/apps/v1/namespaces/nowhere/deployments",
        "application/json",
        &json!({"metadata": {"name": "x"}, "spec": {"selector": {}, "template": {}}}).to_string(),
    );
    assert_eq!(
        (code, body["message"].as_str()),
        (404, Some("namespaces \"nowhere\" not found"))
    );
    let (code, body) = raw(
        &c,
        "POST",
        path,
        "application/json",
        &json!({"metadata": {"name": "Bad_Name"}}).to_string(),
    );
    assert_eq!(
        (
            code,
            body["reason"].as_str(),
            body["details"]["causes"][0]["field"].as_str()
        ),
        (422, Some("Invalid"), Some("metadata.name"))
    );
}

#[test]
fn a_streaming_list_sends_the_objects_then_the_initial_events_end_bookmark() {
    let c = Cluster::start();
    let api: Api<Deployment> = Api::namespaced(client(&c), "shop");
    let stored: Vec<String> = c
        .server
        .store()
        .list(ResourceType::DEPLOYMENT, Some("shop"))
        .iter()
        .map(|d| d["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    c.runtime.block_on(async {
        let mut stream = api
            .watch(&WatchParams::streaming_lists(), "")
            .await
            .unwrap()
            .boxed();
        let mut added = Vec::new();
        loop {
            match tokio::time::timeout(PATIENCE, stream.try_next())
                .await
                .unwrap()
                .unwrap()
            {
                Some(WatchEvent::Added(d)) => added.push(d.metadata.name.unwrap()),
                Some(WatchEvent::Bookmark(b)) => {
                    assert_eq!(
                        b.metadata
                            .annotations
                            .get("k8s.io/initial-events-end")
                            .map(String::as_str),
                        Some("true")
                    );
                    break;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        added.sort();
        assert_eq!(added, stored);
    });
}

#[test]
fn a_kube_runtime_watcher_recovers_from_the_410_fault_and_keeps_up() {
    use kube::runtime::watcher;
    let c = Cluster::start();
    let api: Api<Deployment> = Api::namespaced(client(&c), "shop");
    c.runtime.block_on(async {
        let mut events = watcher(api, watcher::Config::default()).boxed();
        // The initial list ends with InitDone.
        loop {
            match tokio::time::timeout(PATIENCE, events.try_next())
                .await
                .unwrap()
                .unwrap()
            {
                Some(watcher::Event::InitDone) => break,
                Some(_) => continue,
                None => panic!("the watcher ended"),
            }
        }
        c.server.faults().set_watch_gone(true);
        c.server.faults().set_watch_gone(false);
        relabel(&c, "shop", "cart", "after", "gone");
        // Whether the change arrives live or in the relist, the watcher sees cart relabelled.
        let seen = tokio::time::timeout(PATIENCE, async {
            while let Ok(Some(event)) = events.try_next().await {
                if let watcher::Event::Apply(d) | watcher::Event::InitApply(d) = event
                    && d.metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get("after"))
                        .is_some()
                {
                    return true;
                }
            }
            false
        })
        .await;
        assert_eq!(seen, Ok(true));
    });
}

#[test]
fn an_oversized_body_is_refused_before_it_is_stored() {
    let c = Cluster::start();
    let big = format!(
        "{{\"metadata\":{{\"name\":\"big\",\"annotations\":{{\"a\":\"{}\"}}}}}}",
        "x".repeat(4 * 1024 * 1024)
    );
    let (code, body) = raw(
        &c,
        "POST",
        "/apis/apps/v1/namespaces/shop/deployments",
        "application/json",
        &big,
    );
    assert_eq!(
        (code, body["reason"].as_str()),
        (413, Some("RequestEntityTooLarge"))
    );
    assert!(
        c.server
            .store()
            .get(ResourceType::DEPLOYMENT, "shop", "big")
            .is_none()
    );
}

/// After the manifests load, the live view asks for every Deployment it listed: the answers come
/// a list page at a time (never more than a page's objects held at once), and every key gets
/// one answer, a key that no page had included (deleted meanwhile: `None`).
#[test]
fn fetched_deployments_are_handed_over_a_page_at_a_time() {
    use kdrift::cluster::live::{Fetched, LiveKinds, fetch};
    use kdrift::manifest::ObjectKey;
    let c = Cluster::start_with(false);
    let client = client(&c);
    let api: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let count = 1_100;
    let batches: Vec<Vec<Fetched>> = c.runtime.block_on(async {
        futures::stream::iter(0..count)
            .map(|i| {
                let api = api.clone();
                async move {
                    let d: Deployment = serde_json::from_value(json!({
                        "apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": {"name": format!("d{i:04}"), "namespace": "default"},
                        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "d"}},
                            "template": {"metadata": {"labels": {"app": "d"}},
                                "spec": {"containers": [{"name": "c", "image": "d:1"}]}}}
                    }))
                    .unwrap();
                    api.create(&Default::default(), &d).await.unwrap();
                }
            })
            .buffer_unordered(16)
            .collect::<Vec<()>>()
            .await;
        let deployment = |name: &str| {
            (
                ObjectKey::new("apps", "Deployment", "default", name),
                "apps/v1".to_owned(),
            )
        };
        let mut keys: Vec<(ObjectKey, String)> = (0..count)
            .map(|i| deployment(format!("d{i:04}").as_str()))
            .collect();
        keys.push(deployment("gone"));
        // A kind the cluster does not serve is answered with the reason, not left out.
        keys.push((
            ObjectKey::new("example.com", "Widget", "default", "w"),
            "example.com/v1".to_owned(),
        ));
        let kinds = LiveKinds::before_discovery();
        let mut batches = Vec::new();
        fetch(&client, &kinds, keys, 8, &mut |batch| batches.push(batch)).await;
        batches
    });
    let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
    assert!(sizes.len() >= 3, "{sizes:?}");
    assert!(sizes.iter().all(|&n| n <= 500), "{sizes:?}");
    let answers: Vec<&Fetched> = batches.iter().flatten().collect();
    assert_eq!(answers.len(), count + 2);
    let mut names: Vec<&str> = answers.iter().map(|(k, _)| &*k.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), count + 2, "each key answered once");
    for (key, result) in answers {
        match (&*key.name, result) {
            ("gone", Ok(None)) => {}
            ("w", Err(reason)) => assert!(reason.contains("Widget"), "{reason}"),
            ("w", Ok(found)) => panic!("an unserved kind was fetched: {:?}", found.is_some()),
            ("gone", other) => panic!("gone: {:?}", other.as_ref().map(Option::is_some)),
            (_, Ok(Some(_))) => {}
            (name, other) => panic!("{name}: {:?}", other.as_ref().map(Option::is_some)),
        }
    }
}
