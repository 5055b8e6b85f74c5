//! Property: an object compared with itself after random key reordering, list reordering and
//! equivalent spellings of quantities and int-or-string values has no drift.
use kdrift::drift::{LiveObject, ObjectStatus, compare_values};
use kdrift::manifest::{Config, ObjectKey};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// A tiny deterministic shuffle driven by the case's seed (proptest shrinks the seed).
struct Shuffle(u64);

impl Shuffle {
    fn next(&mut self, bound: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % bound.max(1)
    }

    fn vec<T>(&mut self, mut items: Vec<T>) -> Vec<T> {
        for i in (1..items.len()).rev() {
            let j = self.next(i + 1);
            items.swap(i, j);
        }
        items
    }

    /// Every map's keys in a random order, recursively; lists of containers and ports reordered
    /// (not env: its order is meaning, `$(VAR)` expands only from earlier variables).
    fn reorder(&mut self, value: Value, keyed_list: bool) -> Value {
        match value {
            Value::Object(map) => {
                let entries: Vec<(String, Value)> = map.into_iter().collect();
                let entries = self.vec(entries);
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| {
                            let keyed = matches!(k.as_str(), "containers" | "ports");
                            let v = self.reorder(v, keyed);
                            (k, v)
                        })
                        .collect::<Map<_, _>>(),
                )
            }
            Value::Array(items) => {
                let items: Vec<Value> = items.into_iter().map(|v| self.reorder(v, false)).collect();
                Value::Array(if keyed_list { self.vec(items) } else { items })
            }
            other => other,
        }
    }
}

#[derive(Debug, Clone)]
struct Container {
    cpu_millis: u32,
    memory_mi: u32,
    env: Vec<(String, String)>,
    ports: Vec<u16>,
}

fn container() -> impl Strategy<Value = Container> {
    (
        1u32..8000,
        1u32..8192,
        prop::collection::btree_map("[A-Z]{1,6}", "[a-z0-9]{0,5}", 0..5),
        prop::collection::btree_set(1u16..65535, 0..3),
    )
        .prop_map(|(cpu_millis, memory_mi, env, ports)| Container {
            cpu_millis,
            memory_mi,
            env: env.into_iter().collect(),
            ports: ports.into_iter().collect(),
        })
}

/// One spelling of `millis` CPU: `250m`, `0.25`, `"0.25"`, `250e-3`.
fn cpu(millis: u32, spelling: u8) -> Value {
    match spelling % 4 {
        0 => json!(format!("{millis}m")),
        1 if millis.is_multiple_of(1000) => json!(millis / 1000),
        1 | 2 => json!(format!("{}", f64::from(millis) / 1000.0)),
        _ => json!(format!("{millis}e-3")),
    }
}

/// One spelling of `mi` mebibytes: `64Mi`, `65536Ki`, bytes, `1Gi` when whole.
fn memory(mi: u32, spelling: u8) -> Value {
    match spelling % 4 {
        0 => json!(format!("{mi}Mi")),
        1 => json!(format!("{}Ki", u64::from(mi) * 1024)),
        2 if mi.is_multiple_of(1024) => json!(format!("{}Gi", mi / 1024)),
        _ => json!(format!("{}", u64::from(mi) * 1024 * 1024)),
    }
}

fn deployment(
    replicas: u32,
    surge: u32,
    containers: &[Container],
    spelling: u8,
    live: bool,
) -> Value {
    let containers: Vec<Value> = containers
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut ports: Vec<Value> = c.ports.iter().map(|p| json!({"containerPort": p})).collect();
            if live {
                for port in &mut ports {
                    port["protocol"] = json!("TCP");
                }
            }
            json!({
                "name": format!("c{i}"),
                "image": format!("img{i}:1"),
                "env": c.env.iter().map(|(k, v)| json!({"name": k, "value": v})).collect::<Vec<_>>(),
                "ports": ports,
                "resources": {"limits": {"cpu": cpu(c.cpu_millis, spelling), "memory": memory(c.memory_mi, spelling.wrapping_add(1))}},
            })
        })
        .collect();
    let max_surge = if live && spelling % 2 == 1 {
        json!(surge.to_string())
    } else {
        json!(surge)
    };
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web", "tier": "front"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": max_surge}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}},
        },
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn an_object_is_in_sync_with_itself_however_it_is_spelled(
        replicas in 0u32..50,
        surge in 0u32..10,
        containers in prop::collection::vec(container(), 1..4),
        spelling in 0u8..8,
        live_spelling in 0u8..8,
        seed in any::<u64>(),
    ) {
        let manifest = deployment(replicas, surge, &containers, spelling, false);
        let live = Shuffle(seed).reorder(deployment(replicas, surge, &containers, live_spelling, true), false);
        let live = LiveObject::from_value(live, kdrift::schema::Schemas::builtin()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let key = ObjectKey::new("apps", "Deployment", "shop", "web");
        let drift = compare_values(&key, &manifest, &live, &Config::default());
        prop_assert_eq!(drift.status, ObjectStatus::InSync, "{:?}", drift.items);
        prop_assert!(drift.items.is_empty());
    }

    #[test]
    fn env_in_another_order_is_reordered_and_nothing_else(
        containers in prop::collection::vec(container(), 1..3),
        seed in any::<u64>(),
    ) {
        let manifest = deployment(2, 1, &containers, 0, false);
        let mut live = deployment(2, 1, &containers, 0, true);
        let mut expected = Vec::new();
        for (i, c) in containers.iter().enumerate() {
            if c.env.len() < 2 {
                continue;
            }
            let env = &mut live["spec"]["template"]["spec"]["containers"][i]["env"];
            if let Some(items) = env.as_array_mut() {
                items.reverse();
            }
            expected.push(format!("spec.template.spec.containers[name=c{i}].env"));
        }
        let live = Shuffle(seed).reorder(live, false);
        let live = LiveObject::from_value(live, kdrift::schema::Schemas::builtin()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let drift = compare_values(&ObjectKey::new("apps", "Deployment", "shop", "web"), &manifest, &live, &Config::default());
        let mut found: Vec<String> = drift.items.iter().map(|i| format!("{} {}", i.class.name(), i.path)).collect();
        found.sort();
        let expected: Vec<String> = expected.iter().map(|p| format!("reordered {p}")).collect();
        prop_assert_eq!(found, expected);
    }

    #[test]
    fn a_different_replica_count_is_always_found(
        replicas in 0u32..50,
        containers in prop::collection::vec(container(), 1..3),
        seed in any::<u64>(),
    ) {
        let manifest = deployment(replicas, 1, &containers, 0, false);
        let live = Shuffle(seed).reorder(deployment(replicas + 1, 1, &containers, 1, true), false);
        let live = LiveObject::from_value(live, kdrift::schema::Schemas::builtin()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let drift = compare_values(&ObjectKey::new("apps", "Deployment", "shop", "web"), &manifest, &live, &Config::default());
        let paths: Vec<String> = drift.items.iter().map(|i| i.path.to_string()).collect();
        prop_assert_eq!(paths, vec!["spec.replicas".to_owned()]);
    }
}
