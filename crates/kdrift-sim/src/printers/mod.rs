//! Server-side printing: the columns a real server gives each type and the cells of an object's
//! row, which is what `kubectl get` prints. Below the store, which prints each object's cells
//! once per write (`Entry::cells`), as a real server's registry holds its table convertor; the
//! server only lays the cached cells into `meta.k8s.io/v1` Tables.
use serde_json::{Value, json};

use crate::resources::ResourceType;

mod cell;
mod workloads;

use cell::{column, containers, int, or_none, selector, template_columns, text};

/// Marks an age cell in the store's cached cells: the unix seconds it counts from follow, and
/// the age is filled in per request.
pub const AGE_MARK: &str = "\u{0}age:";

const NAME_DOC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const AGE_DOC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// The column definitions of a type, as a real server declares them.
pub fn columns(resource: ResourceType) -> Value {
    let name = column("Name", "string", "name", NAME_DOC, 0);
    let age = column("Age", "string", "", AGE_DOC, 0);
    let custom = resource.printer_columns();
    if !custom.is_empty() {
        // A definition's own columns replace Age; Name always comes first.
        let mut cols = vec![name];
        cols.extend(custom.iter().map(|c| {
            json!({"name": c.name, "type": c.type_, "format": c.format, "description": c.description, "priority": c.priority})
        }));
        return Value::Array(cols);
    }
    let [containers, images] = template_columns();
    let cols = match (resource.group(), resource.kind()) {
        ("apps", "Deployment") => vec![
            name,
            column(
                "Ready",
                "string",
                "",
                "Number of the pod with ready state",
                0,
            ),
            column(
                "Up-to-date",
                "string",
                "",
                "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
                0,
            ),
            column(
                "Available",
                "string",
                "",
                "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
                0,
            ),
            age,
            containers.clone(),
            images.clone(),
            column(
                "Selector",
                "string",
                "",
                "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
                1,
            ),
        ],
        ("apps", "ReplicaSet") => vec![
            name,
            column(
                "Desired",
                "integer",
                "",
                "Replicas is the number of desired replicas.",
                0,
            ),
            column(
                "Current",
                "integer",
                "",
                "Replicas is the most recently observed number of replicas.",
                0,
            ),
            column(
                "Ready",
                "integer",
                "",
                "The number of ready replicas for this replica set.",
                0,
            ),
            age,
            containers.clone(),
            images.clone(),
            column(
                "Selector",
                "string",
                "",
                "Selector is a label query over pods that should match the replica count.",
                1,
            ),
        ],
        ("", "Pod") => vec![
            name,
            column(
                "Ready",
                "string",
                "",
                "The aggregate readiness state of this pod for accepting traffic.",
                0,
            ),
            column(
                "Status",
                "string",
                "",
                "The aggregate status of the containers in this pod.",
                0,
            ),
            column(
                "Restarts",
                "string",
                "",
                "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
                0,
            ),
            age,
            column(
                "IP",
                "string",
                "",
                "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
                1,
            ),
            column(
                "Node",
                "string",
                "",
                "NodeName is a request to schedule this pod onto a specific node.",
                1,
            ),
            column(
                "Nominated Node",
                "string",
                "",
                "nominatedNodeName is set only when this pod preempts other pods on the node.",
                1,
            ),
            column(
                "Readiness Gates",
                "string",
                "",
                "If specified, all readiness gates will be evaluated for pod readiness.",
                1,
            ),
        ],
        ("", "Namespace") => vec![
            name,
            column("Status", "string", "", "The status of the namespace", 0),
            age,
        ],
        ("scheduling.k8s.io", "PriorityClass") => vec![
            name,
            column(
                "Value",
                "integer",
                "",
                "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.",
                0,
            ),
            column(
                "Global-Default",
                "boolean",
                "",
                "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.",
                0,
            ),
            age,
            column(
                "PreemptionPolicy",
                "string",
                "",
                "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.",
                0,
            ),
        ],
        ("", "Event") => vec![
            column(
                "Last Seen",
                "string",
                "",
                "The time at which the most recent occurrence of this event was recorded.",
                0,
            ),
            column(
                "Type",
                "string",
                "",
                "Type of this event (Normal, Warning), new types could be added in the future.",
                0,
            ),
            column(
                "Reason",
                "string",
                "",
                "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
                0,
            ),
            column(
                "Object",
                "string",
                "",
                "The object that this event is about.",
                0,
            ),
            column(
                "Subobject",
                "string",
                "",
                "The subobject that this event is about.",
                1,
            ),
            column(
                "Source",
                "string",
                "",
                "The component reporting this event.",
                1,
            ),
            column(
                "Message",
                "string",
                "",
                "A human-readable description of the status of this operation.",
                0,
            ),
            column(
                "First Seen",
                "string",
                "",
                "The time at which the event was first recorded.",
                1,
            ),
            column(
                "Count",
                "string",
                "",
                "The number of times this event has occurred.",
                1,
            ),
            column("Name", "string", "name", NAME_DOC, 1),
        ],
        ("", "ConfigMap") => vec![
            name,
            column("Data", "string", "", "Number of keys.", 0),
            age,
        ],
        ("", "Secret") => vec![
            name,
            column("Type", "string", "", "The type of the secret.", 0),
            column("Data", "string", "", "Number of keys.", 0),
            age,
        ],
        ("", "Service") => vec![
            name,
            column("Type", "string", "", "The type of the service.", 0),
            column("Cluster-IP", "string", "", "The IP of the service.", 0),
            column(
                "External-IP",
                "string",
                "",
                "External IPs of the service.",
                0,
            ),
            column("Port(s)", "string", "", "The ports of the service.", 0),
            age,
            column("Selector", "string", "", "The selector of the service.", 1),
        ],
        // Nodes and the other workloads; any other type: name and age, as a server prints a
        // type without columns of its own.
        _ => match workloads::columns(resource, name.clone(), age.clone()) {
            Some(cols) => cols,
            None => vec![name, age],
        },
    };
    Value::Array(cols)
}

/// The value a simple JSONPath finds, as a server evaluates a printer column's: fields
/// (`.status.sync.status`), indexes (`.spec.items[0]`) and a filter on a list's items
/// (`.status.conditions[?(@.type=="Ready")].status`, its first match).
fn json_path<'v>(object: &'v Value, path: &str) -> Option<&'v Value> {
    let path = path.trim().trim_start_matches('{').trim_end_matches('}');
    let mut at = object;
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let inside = &after[..end];
            rest = &after[end + 1..];
            at = match inside
                .strip_prefix("?(@.")
                .and_then(|f| f.strip_suffix(')'))
            {
                Some(filter) => {
                    let (key, value) = filter.split_once("==")?;
                    let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
                    at.as_array()?
                        .iter()
                        .find(|item| item.get(key.trim()).and_then(Value::as_str) == Some(value))?
                }
                None => at.get(inside.trim().parse::<usize>().ok()?)?,
            };
        } else {
            let step = rest.strip_prefix('.').unwrap_or(rest);
            let end = step.find(['.', '[']).unwrap_or(step.len());
            if end > 0 {
                at = at.get(&step[..end])?;
            }
            rest = &step[end..];
        }
    }
    Some(at)
}

/// One cell of a definition's column, as a server fills it: nothing when the path finds
/// nothing, a date as an age, a string column as text, other types as their JSON value.
fn custom_cell(
    column: &crate::resources::PrinterColumn,
    object: &Value,
    now: Option<jiff::Timestamp>,
) -> Value {
    let Some(value) = json_path(object, &column.json_path).filter(|v| !v.is_null()) else {
        return Value::Null;
    };
    match column.type_.as_str() {
        "date" => json!(age_of(value.as_str(), now)),
        "string" => match value {
            Value::String(text) => json!(text),
            other => json!(other.to_string()),
        },
        _ => value.clone(),
    }
}

/// The number of keys of the map at `pointer`.
fn keys(object: &Value, pointer: &str) -> usize {
    object
        .pointer(pointer)
        .and_then(Value::as_object)
        .map_or(0, serde_json::Map::len)
}

/// `80/TCP,443:30443/TCP`, as kubectl prints a Service's ports.
fn service_ports(object: &Value) -> String {
    let ports: Vec<String> = object
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| {
            let protocol = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
            match p.get("nodePort").and_then(Value::as_i64) {
                Some(node) => format!("{}:{node}/{protocol}", int(p, "/port")),
                None => format!("{}/{protocol}", int(p, "/port")),
            }
        })
        .collect();
    if ports.is_empty() {
        "<none>".into()
    } else {
        ports.join(",")
    }
}

/// A duration as kubectl prints ages: `45s`, `3m12s`, `2h5m`, `4d`.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    let s = seconds.max(0);
    if s < 120 {
        return format!("{s}s");
    }
    let minutes = s / 60;
    if minutes < 10 {
        return if s % 60 == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{}s", s % 60)
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        return if minutes % 60 == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{}m", minutes % 60)
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        return if hours % 24 == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{}h", hours / 24, hours % 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    format!("{}y", hours / 24 / 365)
}

/// An age cell; with no `now`, a mark to fill in at request time (see `Entry::cells`).
fn age_of(timestamp: Option<&str>, now: Option<jiff::Timestamp>) -> String {
    let Some(ts) = timestamp.and_then(|t| t.parse::<jiff::Timestamp>().ok()) else {
        return "<unknown>".into();
    };
    match now {
        Some(now) => human_duration(now.as_second() - ts.as_second()),
        None => format!("{AGE_MARK}{}", ts.as_second()),
    }
}

/// The STATUS column of a pod, as kubectl's printer derives it.
fn pod_status(pod: &Value) -> String {
    if pod
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
    {
        return "Terminating".into();
    }
    let mut reason = text(pod, "/status/reason").to_string();
    if reason.is_empty() {
        reason = text(pod, "/status/phase").to_string();
    }
    let statuses = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut running = false;
    for cs in statuses.iter().rev() {
        let waiting = text(cs, "/state/waiting/reason");
        let terminated = text(cs, "/state/terminated/reason");
        if !waiting.is_empty() {
            reason = waiting.to_string();
        } else if !terminated.is_empty() {
            reason = terminated.to_string();
        } else if cs.pointer("/state/running").is_some() && cs["ready"] == json!(true) {
            running = true;
        }
    }
    if reason == "Completed" && running {
        reason = "Running".into();
    }
    if reason.is_empty() {
        "Unknown".into()
    } else {
        reason
    }
}

/// The cells of one row.
pub fn cells(resource: ResourceType, object: &Value, now: jiff::Timestamp) -> Vec<Value> {
    cells_at(resource, object, Some(now))
}

/// The cells of one row with its ages left as marks, to cache.
pub fn deferred_cells(resource: ResourceType, object: &Value) -> Vec<Value> {
    cells_at(resource, object, None)
}

fn cells_at(resource: ResourceType, object: &Value, now: Option<jiff::Timestamp>) -> Vec<Value> {
    let name = json!(text(object, "/metadata/name"));
    let age = json!(age_of(
        object
            .pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str),
        now
    ));
    let custom = resource.printer_columns();
    if !custom.is_empty() {
        let mut cells = vec![name];
        cells.extend(custom.iter().map(|c| custom_cell(c, object, now)));
        return cells;
    }
    match (resource.group(), resource.kind()) {
        ("apps", "Deployment") => vec![
            name,
            json!(format!(
                "{}/{}",
                int(object, "/status/readyReplicas"),
                int(object, "/spec/replicas")
            )),
            json!(int(object, "/status/updatedReplicas")),
            json!(int(object, "/status/availableReplicas")),
            age,
            json!(containers(object, "name")),
            json!(containers(object, "image")),
            json!(selector(object)),
        ],
        ("apps", "ReplicaSet") => vec![
            name,
            json!(int(object, "/spec/replicas")),
            json!(int(object, "/status/replicas")),
            json!(int(object, "/status/readyReplicas")),
            age,
            json!(containers(object, "name")),
            json!(containers(object, "image")),
            json!(selector(object)),
        ],
        ("", "Pod") => {
            let total = object
                .pointer("/spec/containers")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            let statuses = object
                .pointer("/status/containerStatuses")
                .and_then(Value::as_array);
            let ready = statuses.map_or(0, |s| {
                s.iter().filter(|c| c["ready"] == json!(true)).count()
            });
            let restarts: i64 =
                statuses.map_or(0, |s| s.iter().map(|c| int(c, "/restartCount")).sum());
            vec![
                name,
                json!(format!("{ready}/{total}")),
                json!(pod_status(object)),
                json!(restarts.to_string()),
                age,
                json!(or_none(text(object, "/status/podIP"))),
                json!(or_none(text(object, "/spec/nodeName"))),
                json!("<none>"),
                json!("<none>"),
            ]
        }
        ("", "Namespace") => vec![name, json!(text(object, "/status/phase")), age],
        ("scheduling.k8s.io", "PriorityClass") => vec![
            name,
            json!(int(object, "/value")),
            json!(
                object
                    .get("globalDefault")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
            ),
            age,
            json!(text(object, "/preemptionPolicy")),
        ],
        ("", "Event") => {
            let last = [
                text(object, "/lastTimestamp"),
                text(object, "/eventTime"),
                text(object, "/metadata/creationTimestamp"),
            ]
            .into_iter()
            .find(|t| !t.is_empty())
            .map(|t| age_of(Some(t), now))
            .unwrap_or_else(|| "<unknown>".into());
            let first = [text(object, "/firstTimestamp"), text(object, "/eventTime")]
                .into_iter()
                .find(|t| !t.is_empty())
                .map(|t| age_of(Some(t), now))
                .unwrap_or_else(|| "<unknown>".into());
            let source = [
                text(object, "/source/component"),
                text(object, "/reportingComponent"),
            ]
            .into_iter()
            .find(|t| !t.is_empty())
            .unwrap_or("");
            vec![
                json!(last),
                json!(text(object, "/type")),
                json!(text(object, "/reason")),
                json!(format!(
                    "{}/{}",
                    text(object, "/involvedObject/kind").to_lowercase(),
                    text(object, "/involvedObject/name")
                )),
                json!(text(object, "/involvedObject/fieldPath")),
                json!(source),
                json!(text(object, "/message").trim()),
                json!(first),
                json!(
                    object
                        .pointer("/count")
                        .and_then(Value::as_i64)
                        .unwrap_or(1)
                        .to_string()
                ),
                name,
            ]
        }
        ("", "ConfigMap") => vec![
            name,
            json!(keys(object, "/data") + keys(object, "/binaryData")),
            age,
        ],
        ("", "Secret") => vec![
            name,
            json!(text(object, "/type")),
            json!(keys(object, "/data")),
            age,
        ],
        ("", "Service") => {
            // As kubectl's printer (getServiceExternalIP): an ExternalName's name; a
            // LoadBalancer's ingress addresses, then its external IPs, else <pending>; the
            // external IPs of any other type, else <none>.
            let joined = |ips: Vec<&str>| (!ips.is_empty()).then(|| ips.join(","));
            let external_ips: Vec<&str> = object
                .pointer("/spec/externalIPs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let external = match text(object, "/spec/type") {
                "ExternalName" => or_none(text(object, "/spec/externalName")),
                "LoadBalancer" => {
                    let mut ips: Vec<&str> = object
                        .pointer("/status/loadBalancer/ingress")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|i| i.get("ip").or_else(|| i.get("hostname"))?.as_str())
                        .collect();
                    ips.extend(&external_ips);
                    joined(ips).unwrap_or_else(|| "<pending>".into())
                }
                _ => joined(external_ips).unwrap_or_else(|| "<none>".into()),
            };
            let cluster_ip = or_none(text(object, "/spec/clusterIP"));
            let selector = object
                .pointer("/spec/selector")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .unwrap_or_else(|| "<none>".into());
            vec![
                name,
                json!(text(object, "/spec/type")),
                json!(cluster_ip),
                json!(external),
                json!(service_ports(object)),
                age,
                json!(selector),
            ]
        }
        _ => match workloads::cells(resource, object, name.clone(), age.clone()) {
            Some(cells) => cells,
            None => vec![name, age],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printer_column_paths_find_fields_indexes_and_filtered_items() {
        let object = json!({
            "status": {
                "sync": {"status": "Synced"},
                "conditions": [
                    {"type": "Reconciling", "status": "False"},
                    {"type": "Ready", "status": "True", "message": "Applied revision: main@sha1:1"}
                ],
                "count": 3
            }
        });
        let find = |path: &str| json_path(&object, path).cloned();
        assert_eq!(find(".status.sync.status"), Some(json!("Synced")));
        assert_eq!(find(".status.conditions[1].type"), Some(json!("Ready")));
        assert_eq!(
            find(r#".status.conditions[?(@.type=="Ready")].message"#),
            Some(json!("Applied revision: main@sha1:1"))
        );
        assert_eq!(find(".status.conditions[?(@.type=='Gone')].status"), None);
        assert_eq!(find(".status.health.status"), None);
        assert_eq!(find(".status.conditions[9]"), None);
        let column = |type_: &str, json_path: &str| crate::resources::PrinterColumn {
            name: "X".into(),
            type_: type_.into(),
            format: String::new(),
            description: String::new(),
            priority: 0,
            json_path: json_path.into(),
        };
        assert_eq!(
            custom_cell(&column("integer", ".status.count"), &object, None),
            json!(3)
        );
        assert_eq!(
            custom_cell(&column("string", ".status.count"), &object, None),
            json!("3")
        );
        assert_eq!(
            custom_cell(&column("string", ".status.nothing"), &object, None),
            Value::Null
        );
    }

    #[test]
    fn ages_print_as_kubectl_prints_them() {
        let cases = [
            (5, "5s"),
            (119, "119s"),
            (125, "2m5s"),
            (600, "10m"),
            (3 * 3600 + 60, "3h1m"),
            (9 * 3600, "9h"),
            (50 * 3600, "2d2h"),
            (30 * 86400, "30d"),
        ];
        for (secs, want) in cases {
            assert_eq!(human_duration(secs), want, "{secs}s");
        }
    }

    #[test]
    fn a_deployment_row_reads_ready_of_desired() {
        let d = json!({
            "metadata": {"name": "web", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}
        });
        let now: jiff::Timestamp = "2026-01-01T00:01:00Z"
            .parse()
            .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        let c = cells(ResourceType::DEPLOYMENT, &d, now);
        assert_eq!(
            c,
            vec![
                json!("web"),
                json!("2/3"),
                json!(3),
                json!(2),
                json!("60s"),
                json!("web"),
                json!("nginx:1.25"),
                json!("app=web")
            ]
        );
    }

    #[test]
    fn a_crashing_pod_shows_its_waiting_reason() {
        let p = json!({
            "metadata": {"name": "web-1"},
            "spec": {"containers": [{"name": "web"}]},
            "status": {"phase": "Running", "containerStatuses": [{"ready": false, "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}
        });
        let c = cells(ResourceType::POD, &p, jiff::Timestamp::now());
        assert_eq!(
            (c[1].clone(), c[2].clone(), c[3].clone()),
            (json!("0/1"), json!("CrashLoopBackOff"), json!("4"))
        );
    }
}
