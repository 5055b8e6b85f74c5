//! The server-side columns of the node and workload types beyond Deployments: Nodes,
//! StatefulSets, DaemonSets, ControllerRevisions and PodDisruptionBudgets, as a 1.36 server
//! declares and fills them (what `kubectl get nodes`, `get sts`, `get ds`, `get
//! controllerrevisions`, `get pdb` print).
use serde_json::{Value, json};

use super::cell::{column, containers, int, or_none, selector, template_columns, text};
use crate::resources::ResourceType;

/// The columns of `resource` after Name (and where Age goes), if it is one of these types.
pub fn columns(resource: ResourceType, name: Value, age: Value) -> Option<Vec<Value>> {
    let cols = match (resource.group(), resource.kind()) {
        ("", "Node") => vec![
            name,
            column("Status", "string", "", "The status of the node", 0),
            column("Roles", "string", "", "The roles of the node", 0),
            age,
            column(
                "Version",
                "string",
                "",
                "Kubelet Version reported by the node.",
                0,
            ),
            column(
                "Internal-IP",
                "string",
                "",
                "List of internal IPs in the node.",
                1,
            ),
            column(
                "External-IP",
                "string",
                "",
                "List of external IPs in the node.",
                1,
            ),
            column(
                "OS-Image",
                "string",
                "",
                "OS image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
                1,
            ),
            column(
                "Kernel-Version",
                "string",
                "",
                "Kernel version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
                1,
            ),
            column(
                "Container-Runtime",
                "string",
                "",
                "Container runtime version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
                1,
            ),
        ],
        ("apps", "StatefulSet") => {
            let mut cols = vec![
                name,
                column(
                    "Ready",
                    "string",
                    "",
                    "Number of the pod with ready state",
                    0,
                ),
                age,
            ];
            cols.extend(template_columns());
            cols
        }
        ("apps", "DaemonSet") => {
            let mut cols = vec![
                name,
                column("Desired", "integer", "", "The desired number of pods.", 0),
                column("Current", "integer", "", "The current number of pods.", 0),
                column("Ready", "integer", "", "The number of pods ready.", 0),
                column(
                    "Up-to-date",
                    "integer",
                    "",
                    "The number of pods updated.",
                    0,
                ),
                column(
                    "Available",
                    "integer",
                    "",
                    "The number of pods available.",
                    0,
                ),
                column(
                    "Node Selector",
                    "string",
                    "",
                    "Which nodes will the pod be scheduled on.",
                    0,
                ),
                age,
            ];
            cols.extend(template_columns());
            cols.push(column(
                "Selector",
                "string",
                "",
                "The label selector used to identify the daemon set's pods.",
                1,
            ));
            cols
        }
        ("policy", "PodDisruptionBudget") => vec![
            name,
            column(
                "Min Available",
                "string",
                "",
                "The minimum number or percentage of available pods this budget requires.",
                0,
            ),
            column(
                "Max Unavailable",
                "string",
                "",
                "The maximum number or percentage of unavailable pods this budget requires.",
                0,
            ),
            column(
                "Allowed Disruptions",
                "integer",
                "",
                "Calculated number of pods that may be disrupted at this time.",
                0,
            ),
            age,
        ],
        ("apps", "ControllerRevision") => vec![
            name,
            column("Controller", "string", "", "Controller of the object", 0),
            column(
                "Revision",
                "string",
                "",
                "Revision of the ControllerRevision",
                0,
            ),
            age,
        ],
        _ => return None,
    };
    Some(cols)
}

/// `Ready`, `Ready,SchedulingDisabled`, `NotReady`: a node's STATUS column.
fn node_status(node: &Value) -> String {
    let ready = node
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
        .map(|c| match c["status"].as_str() {
            Some("True") => "Ready",
            Some("False") => "NotReady",
            _ => "Unknown",
        })
        .unwrap_or("Unknown");
    if node.pointer("/spec/unschedulable") == Some(&json!(true)) {
        format!("{ready},SchedulingDisabled")
    } else {
        ready.to_string()
    }
}

/// The roles a node's labels give it (`node-role.kubernetes.io/<role>`), or `<none>`.
fn node_roles(node: &Value) -> String {
    let mut roles: Vec<&str> = node
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| match k.strip_prefix("node-role.kubernetes.io/") {
            Some(role) if !role.is_empty() => Some(role),
            _ if k == "kubernetes.io/role" => v.as_str(),
            _ => None,
        })
        .collect();
    roles.sort_unstable();
    if roles.is_empty() {
        "<none>".into()
    } else {
        roles.join(",")
    }
}

fn addresses(node: &Value, kind: &str) -> String {
    let found: Vec<&str> = node
        .pointer("/status/addresses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|a| a["type"] == kind)
        .filter_map(|a| a["address"].as_str())
        .collect();
    if found.is_empty() {
        "<none>".into()
    } else {
        found.join(",")
    }
}

/// The cells of one row of these types (`age` already formatted), if it is one of them.
pub fn cells(
    resource: ResourceType,
    object: &Value,
    name: Value,
    age: Value,
) -> Option<Vec<Value>> {
    let row = match (resource.group(), resource.kind()) {
        ("", "Node") => vec![
            name,
            json!(node_status(object)),
            json!(node_roles(object)),
            age,
            json!(text(object, "/status/nodeInfo/kubeletVersion")),
            json!(addresses(object, "InternalIP")),
            json!(addresses(object, "ExternalIP")),
            json!(or_none(text(object, "/status/nodeInfo/osImage"))),
            json!(or_none(text(object, "/status/nodeInfo/kernelVersion"))),
            json!(or_none(text(
                object,
                "/status/nodeInfo/containerRuntimeVersion"
            ))),
        ],
        ("apps", "StatefulSet") => vec![
            name,
            json!(format!(
                "{}/{}",
                int(object, "/status/readyReplicas"),
                object
                    .pointer("/spec/replicas")
                    .and_then(Value::as_i64)
                    .unwrap_or(1)
            )),
            age,
            json!(containers(object, "name")),
            json!(containers(object, "image")),
        ],
        ("apps", "DaemonSet") => {
            let node_selector: Vec<String> = object
                .pointer("/spec/template/spec/nodeSelector")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect();
            vec![
                name,
                json!(int(object, "/status/desiredNumberScheduled")),
                json!(int(object, "/status/currentNumberScheduled")),
                json!(int(object, "/status/numberReady")),
                json!(int(object, "/status/updatedNumberScheduled")),
                json!(int(object, "/status/numberAvailable")),
                json!(or_none(&node_selector.join(","))),
                age,
                json!(containers(object, "name")),
                json!(containers(object, "image")),
                json!(selector(object)),
            ]
        }
        ("policy", "PodDisruptionBudget") => {
            let bound = |field: &str| match object.pointer(&format!("/spec/{field}")) {
                Some(Value::Number(n)) => n.to_string(),
                Some(Value::String(s)) => s.clone(),
                _ => "N/A".into(),
            };
            vec![
                name,
                json!(bound("minAvailable")),
                json!(bound("maxUnavailable")),
                json!(int(object, "/status/disruptionsAllowed")),
                age,
            ]
        }
        ("apps", "ControllerRevision") => {
            let controller = object
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .and_then(|refs| refs.iter().find(|r| r["controller"] == true))
                .map(|r| {
                    let group = text(r, "/apiVersion")
                        .split_once('/')
                        .map_or("", |(g, _)| g);
                    let kind = text(r, "/kind").to_ascii_lowercase();
                    let kind = if group.is_empty() {
                        kind
                    } else {
                        format!("{kind}.{group}")
                    };
                    format!("{kind}/{}", text(r, "/name"))
                })
                .unwrap_or_else(|| "<none>".into());
            vec![
                name,
                json!(controller),
                json!(int(object, "/revision")),
                age,
            ]
        }
        _ => return None,
    };
    Some(row)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_cordoned_node_reads_scheduling_disabled() {
        let node = json!({"metadata": {"name": "demo-node-1", "labels": {"kubernetes.io/os": "linux"}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}],
                       "nodeInfo": {"kubeletVersion": "v1.36.2", "osImage": "Debian GNU/Linux 12 (bookworm)"}}});
        let row = cells(ResourceType::NODE, &node, json!("demo-node-1"), json!("5m")).unwrap();
        assert_eq!(
            row[..6],
            [
                json!("demo-node-1"),
                json!("Ready,SchedulingDisabled"),
                json!("<none>"),
                json!("5m"),
                json!("v1.36.2"),
                json!("172.18.0.2")
            ]
        );
        let cols = columns(ResourceType::NODE, json!("n"), json!("a")).unwrap();
        assert_eq!(cols.len(), row.len());
    }

    #[test]
    fn workload_rows_match_their_columns() {
        let sts = json!({"metadata": {"name": "db"}, "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "db", "image": "db:1"}]}}},
                         "status": {"readyReplicas": 2}});
        let row = cells(ResourceType::STATEFUL_SET, &sts, json!("db"), json!("1m")).unwrap();
        assert_eq!(row[1], json!("2/3"));
        let ds = json!({"metadata": {"name": "agent"}, "spec": {"selector": {"matchLabels": {"app": "agent"}}},
                        "status": {"desiredNumberScheduled": 3, "numberReady": 3}});
        let row = cells(ResourceType::DAEMON_SET, &ds, json!("agent"), json!("1m")).unwrap();
        assert_eq!(row[1..4], [json!(3), json!(0), json!(3)]);
        assert_eq!(row[6], json!("<none>"));
        let rev = json!({"metadata": {"name": "db-7c9d", "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": true}]}, "revision": 2});
        let row = cells(
            ResourceType::CONTROLLER_REVISION,
            &rev,
            json!("db-7c9d"),
            json!("1m"),
        )
        .unwrap();
        assert_eq!(row[1..3], [json!("statefulset.apps/db"), json!(2)]);
        for r in [
            ResourceType::STATEFUL_SET,
            ResourceType::DAEMON_SET,
            ResourceType::CONTROLLER_REVISION,
        ] {
            let cols = columns(r, json!("n"), json!("a")).unwrap();
            let row = cells(r, &json!({}), json!("n"), json!("a")).unwrap();
            assert_eq!(cols.len(), row.len(), "{r:?}");
        }
    }
}
