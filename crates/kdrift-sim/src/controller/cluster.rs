//! The scheduler's cache, kept by the driver from the change feed: every node with the requests
//! of the pods bound to it (added and removed one pod at a time, never summed again), the pods
//! of each controller per node (for spreading), and the queue of pods waiting for a node — FIFO
//! as kube-scheduler's, with the pods no node fits parked until a node or a freed pod changes
//! the picture.
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use serde_json::Value;

use super::scheduler::{NodeFit, Resources, allocatable};
use crate::object::Key;

/// One node in the cache.
#[derive(Debug, Clone)]
pub struct NodeEntry {
    pub node: Value,
    pub allocatable: Resources,
    pub requested: Resources,
    /// The pods bound to it.
    pub pods: BTreeSet<Key>,
}

#[derive(Debug, Clone)]
struct BoundPod {
    node: String,
    requests: Resources,
    owner: Option<String>,
}

#[derive(Default)]
pub struct Cluster {
    pub nodes: BTreeMap<String, NodeEntry>,
    bound: HashMap<Key, BoundPod>,
    /// Controller uid → node → how many of its pods are bound there.
    spread: HashMap<String, HashMap<String, usize>>,
    queue: VecDeque<Key>,
    queued: HashSet<Key>,
    /// Pods no node fitted, waiting for a change.
    parked: BTreeSet<Key>,
    /// A node or a freed pod changed the picture: the parked pods try again.
    retry: bool,
}

impl Cluster {
    /// A node appeared or changed; whether pods waiting for room should look again.
    pub fn set_node(&mut self, node: &Value) {
        let name = node
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let entry = self.nodes.entry(name).or_insert_with(|| NodeEntry {
            node: Value::Null,
            allocatable: Resources::default(),
            requested: Resources::default(),
            pods: BTreeSet::new(),
        });
        let relevant = |n: &Value| {
            (
                n.pointer("/metadata/labels").cloned(),
                n.get("spec").cloned(),
                n.pointer("/status/allocatable").cloned(),
            )
        };
        if relevant(&entry.node) != relevant(node) {
            self.retry = true;
        }
        entry.allocatable = allocatable(node);
        entry.node = node.clone();
    }

    /// A node went: the pods bound to it (now orphans).
    pub fn remove_node(&mut self, name: &str) -> Vec<Key> {
        let Some(entry) = self.nodes.remove(name) else {
            return Vec::new();
        };
        for key in &entry.pods {
            if let Some(pod) = self.bound.remove(key)
                && let Some(owner) = &pod.owner
            {
                self.uncount(owner, name);
            }
        }
        entry.pods.into_iter().collect()
    }

    pub fn is_bound(&self, key: &Key) -> bool {
        self.bound.contains_key(key)
    }

    /// The node `key` is bound to, as the cache knows it.
    pub fn node_of(&self, key: &Key) -> Option<&str> {
        self.bound.get(key).map(|b| b.node.as_str())
    }

    /// Count a pod bound to `node` (unknown nodes too: their pods are collected).
    pub fn bind(&mut self, key: &Key, node: &str, requests: Resources, owner: Option<&str>) {
        if self.bound.contains_key(key) {
            return;
        }
        self.unqueue(key);
        if let Some(entry) = self.nodes.get_mut(node) {
            entry.requested.add(requests);
            entry.pods.insert(key.clone());
        }
        if let Some(owner) = owner {
            *self
                .spread
                .entry(owner.to_string())
                .or_default()
                .entry(node.to_string())
                .or_default() += 1;
        }
        self.bound.insert(
            key.clone(),
            BoundPod {
                node: node.to_string(),
                requests,
                owner: owner.map(str::to_string),
            },
        );
    }

    /// A pod went (or stopped holding its requests): its room is free again.
    pub fn forget(&mut self, key: &Key) {
        self.unqueue(key);
        let Some(pod) = self.bound.remove(key) else {
            return;
        };
        if let Some(entry) = self.nodes.get_mut(&pod.node) {
            entry.requested.remove(pod.requests);
            entry.pods.remove(key);
            self.retry = true;
        }
        if let Some(owner) = &pod.owner {
            self.uncount(owner, &pod.node);
        }
    }

    fn uncount(&mut self, owner: &str, node: &str) {
        if let Some(nodes) = self.spread.get_mut(owner) {
            if let Some(n) = nodes.get_mut(node) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    nodes.remove(node);
                }
            }
            if nodes.is_empty() {
                self.spread.remove(owner);
            }
        }
    }

    fn unqueue(&mut self, key: &Key) {
        if self.queued.remove(key) {
            self.queue.retain(|k| k != key);
        }
        self.parked.remove(key);
    }

    /// A pod without a node: it waits its turn (unless it waits already).
    pub fn enqueue(&mut self, key: &Key) {
        if self.bound.contains_key(key) || self.parked.contains(key) || self.queued.contains(key) {
            return;
        }
        self.queued.insert(key.clone());
        self.queue.push_back(key.clone());
    }

    /// No node fits the pod: it waits for a change.
    pub fn park(&mut self, key: &Key) {
        self.parked.insert(key.clone());
    }

    /// The next pod to schedule: the queue's head, else (after a change) the parked pods again.
    pub fn next_to_schedule(&mut self) -> Option<Key> {
        if self.queue.is_empty() && self.retry {
            self.retry = false;
            for key in std::mem::take(&mut self.parked) {
                self.queued.insert(key.clone());
                self.queue.push_back(key);
            }
        }
        let key = self.queue.pop_front()?;
        self.queued.remove(&key);
        Some(key)
    }

    /// Whether a pod waits to be scheduled now.
    pub fn has_work(&self) -> bool {
        !self.queue.is_empty() || (self.retry && !self.parked.is_empty())
    }

    /// The nodes as the scheduler weighs them for a pod of `owner`, sorted by name.
    pub fn fits(&self, owner: Option<&str>) -> Vec<NodeFit<'_>> {
        let spread = owner.and_then(|o| self.spread.get(o));
        self.nodes
            .iter()
            .map(|(name, entry)| NodeFit {
                name,
                node: &entry.node,
                allocatable: entry.allocatable,
                requested: entry.requested,
                same_owner: spread.and_then(|s| s.get(name)).copied().unwrap_or(0),
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str) -> Value {
        json!({"metadata": {"name": name}, "spec": {},
               "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    }

    fn req(memory: i64) -> Resources {
        Resources {
            milli_cpu: 100,
            memory,
            pods: 1,
        }
    }

    #[test]
    fn requests_are_counted_per_node_and_freed_with_the_pod() {
        let mut c = Cluster::default();
        c.set_node(&node("a"));
        c.set_node(&node("b"));
        let p1 = Key::new("ns", "p1");
        let p2 = Key::new("ns", "p2");
        c.bind(&p1, "a", req(100), Some("rs"));
        c.bind(&p2, "a", req(50), Some("rs"));
        c.bind(&p2, "a", req(50), Some("rs"));
        assert_eq!(
            c.nodes["a"].requested,
            Resources {
                milli_cpu: 200,
                memory: 150,
                pods: 2
            }
        );
        let fits = c.fits(Some("rs"));
        assert_eq!((fits[0].same_owner, fits[1].same_owner), (2, 0));
        c.forget(&p1);
        assert_eq!(c.nodes["a"].requested.memory, 50);
        assert_eq!(c.remove_node("a"), vec![p2.clone()]);
        assert!(!c.is_bound(&p2));
        assert!(c.fits(Some("rs")).iter().all(|f| f.same_owner == 0));
    }

    #[test]
    fn parked_pods_wait_for_a_change() {
        let mut c = Cluster::default();
        c.set_node(&node("a"));
        let p = Key::new("ns", "p");
        c.next_to_schedule();
        c.enqueue(&p);
        c.enqueue(&p);
        assert_eq!(c.next_to_schedule(), Some(p.clone()));
        assert_eq!(c.next_to_schedule(), None);
        c.park(&p);
        c.enqueue(&p);
        assert!(
            !c.has_work(),
            "a parked pod is not queued again by its own updates"
        );
        c.set_node(&node("a"));
        assert!(!c.has_work(), "nothing changed");
        let mut bigger = node("a");
        bigger["status"]["allocatable"]["memory"] = json!("16Gi");
        c.set_node(&bigger);
        assert!(c.has_work());
        assert_eq!(c.next_to_schedule(), Some(p));
    }
}
