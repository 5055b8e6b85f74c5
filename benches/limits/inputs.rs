//! The limits bench's inputs: the files each case reads, the demo cluster's objects, and the
//! 3 MB watch events, made on the case's request.
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use kdrift::sim::resources::ResourceType;
use kdrift::sim::store::{Patch, Store, WriteOptions};
use serde_json::json;

use super::manifest::deployment_yaml;

pub const FILES: usize = 20_000;
pub const NAMESPACES: usize = 5_000;
/// Size of the one-file cases and of the watch events.
pub const FILE_BYTES: usize = 9_000_000;
pub const EVENT_BYTES: usize = 3_000_000;
pub const CONTAINERS: usize = 500;

pub fn namespace(i: usize) -> String {
    format!("ns-{i:04}")
}

/// The Deployment of the `event` case, in namespace `shop`.
pub const EVENT_OBJECT: &str = "big";

/// 5,000 namespaces with a Deployment each, rolled out (the status its controller would write),
/// and the `event` case's Deployment, made by the "bench" manager (its manifest's applier).
pub fn seed(store: &Store) {
    store.set_clock_behind(3 * 86_400);
    let opts = WriteOptions::manager("bench");
    let status = WriteOptions::status("kube-controller-manager");
    let deploy = |ns: &str, name: &str| {
        let object: serde_json::Value =
            serde_yaml::from_str(&deployment_yaml(name, ns, 3, "1.4.2")).unwrap();
        store
            .create(ResourceType::DEPLOYMENT, object, &opts)
            .unwrap();
        let s = json!({"status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 3,
            "readyReplicas": 3, "availableReplicas": 3}});
        store
            .patch(
                ResourceType::DEPLOYMENT,
                ns,
                name,
                &Patch::Merge(s),
                &status,
            )
            .unwrap();
    };
    for n in 0..NAMESPACES {
        let ns = namespace(n);
        let namespace = json!({"metadata": {"name": ns}});
        store
            .create(ResourceType::NAMESPACE, namespace, &opts)
            .unwrap();
        deploy(&ns, "app");
    }
    let shop = json!({"metadata": {"name": "shop"}});
    store.create(ResourceType::NAMESPACE, shop, &opts).unwrap();
    deploy("shop", EVENT_OBJECT);
    store.set_clock_behind(0);
}

/// The file text of `count` Deployment documents, the `i`th named `app-{i}`.
fn deployments(from: usize, until_bytes: usize, prefix: &str) -> String {
    let mut text = String::new();
    let mut i = from;
    while text.len() < until_bytes {
        let doc = deployment_yaml(&format!("app-{i:05}"), "shop", 3, "1.4.2");
        for line in doc.lines() {
            text.push_str(prefix);
            text.push_str(line);
            text.push('\n');
        }
        if prefix.is_empty() {
            text.push_str("---\n");
        }
        i += 1;
    }
    text
}

/// A ConfigMap whose one value (a block scalar) makes the document `bytes` long.
fn configmap(bytes: usize) -> String {
    let mut text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: blob\n  namespace: shop\ndata:\n  blob.txt: |\n".to_owned();
    let line = format!("    {}\n", "x".repeat(95));
    while text.len() < bytes {
        text.push_str(&line);
    }
    text
}

/// Writes what `case` reads under `dir/case`.
pub fn write(case: &str, dir: &Path) {
    let root = dir.join(case);
    std::fs::create_dir_all(&root).unwrap();
    match case {
        "files" => {
            for i in 0..FILES {
                let folder = root.join(format!("team-{:03}", i % 200));
                std::fs::create_dir_all(&folder).unwrap();
                let name = format!("app-{i:05}");
                std::fs::write(
                    folder.join(format!("{name}.yaml")),
                    deployment_yaml(&name, "shop", 3, "1.4.2"),
                )
                .unwrap();
            }
        }
        "many-docs" => {
            std::fs::write(root.join("all.yaml"), deployments(0, FILE_BYTES, "")).unwrap()
        }
        "list" => {
            let items = deployments(0, FILE_BYTES - 40, "  ");
            // Each document's first line starts an item.
            let items = items.replace("  apiVersion: apps/v1", "- apiVersion: apps/v1");
            std::fs::write(
                root.join("list.yaml"),
                format!("apiVersion: v1\nkind: List\nitems:\n{items}"),
            )
            .unwrap();
        }
        "one-doc" => {
            std::fs::write(root.join("blob.yaml"), configmap(FILE_BYTES)).unwrap();
            std::fs::write(
                root.join("over.yaml"),
                configmap(11 * 1024 * 1024).replace("name: blob", "name: over"),
            )
            .unwrap();
        }
        "event" => {
            std::fs::write(
                root.join(format!("{EVENT_OBJECT}.yaml")),
                deployment_yaml(EVENT_OBJECT, "shop", 3, "1.4.2"),
            )
            .unwrap();
            std::fs::write(root.join(".kdrift.yaml"), "appliers: [bench]\n").unwrap();
        }
        "namespaces" | "containers" => {}
        _ => panic!("no case {case}"),
    }
}

/// Makes the `event` case's Deployment 3 MB (`annotation`: one annotation value; `env`: an env
/// list of the container), replicas 4 or 5 so that its row changes; writes the object's JSON
/// to `dir/event-WHAT.json`. Returns the wall time just before the write, in ns since the epoch.
pub fn big_event(store: &Store, what: &str, dir: &Path) -> u128 {
    let patch = match what {
        "annotation" => json!({
            "metadata": {"annotations": {"bench/blob": "x".repeat(EVENT_BYTES)}},
            "spec": {"replicas": 4}
        }),
        "env" => {
            // ~60 bytes of JSON each, 50,000 of them.
            let env: Vec<_> = (0..EVENT_BYTES / 60)
                .map(|i| json!({"name": format!("VAR_{i:06}"), "value": format!("value-{i:030}")}))
                .collect();
            json!({"spec": {"replicas": 5, "template": {"spec": {"containers": [
                {"name": "app", "env": env}
            ]}}}})
        }
        _ => panic!("no event {what}"),
    };
    let at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let patch = match what {
        "env" => Patch::Strategic(patch),
        _ => Patch::Merge(patch),
    };
    store
        .patch(
            ResourceType::DEPLOYMENT,
            "shop",
            EVENT_OBJECT,
            &patch,
            &WriteOptions::manager("kubectl-edit"),
        )
        .unwrap();
    let object = store
        .get(ResourceType::DEPLOYMENT, "shop", EVENT_OBJECT)
        .unwrap();
    std::fs::write(
        dir.join(format!("event-{what}.json")),
        serde_json::to_string(&object).unwrap(),
    )
    .unwrap();
    at
}
