//! What a real API server fills in on create/update (docs/ARCHITECTURE.md, "Server defaults"): the
//! `SetDefaults_*` functions of the built-in API groups (as a 1.36 server applies them; the
//! objects it stored after `kubectl apply` are in testdata/kubernetes-1.36/objects), plus what the
//! admission plugins of a stock server add to pods (priority, service account) and namespaces
//! (finalizer, name label), and for custom resources the defaults of their schema, as the
//! apiextensions server applies them. The node tolerations and service account token volume
//! admission adds to pods are left out; so are what the server allocates (a Service's cluster
//! IPs and node ports): those are the demo cluster's.
//!
//! Shared by the demo cluster (which fills them in as a server does) and the drift engine (a
//! field absent from the manifest whose live value is the server's default is not drift).
use serde_json::{Map, Value, json};

use super::{Schema, Shape};

/// Fill in the defaults of an object of `group` and `kind` in place; `schema` is the kind's
/// (whose `default`s a custom resource gets). Kinds without known defaults are left as they are.
pub fn apply_defaults(group: &str, kind: &str, schema: Schema, object: &mut Value) {
    let Some(root) = object.as_object_mut() else {
        return;
    };
    match (group, kind) {
        ("apps", "Deployment") => deployment(root),
        ("apps", "ReplicaSet") => replica_set(root),
        ("apps", "StatefulSet") => stateful_set(root),
        ("apps", "DaemonSet") => daemon_set(root),
        ("batch", "Job") => job(root),
        ("batch", "CronJob") => cron_job(root),
        ("", "Pod") => pod(root),
        ("", "Namespace") => namespace(root),
        ("", "Service") => service(root),
        ("", "Secret") => default(root, "type", json!("Opaque")),
        ("", "PersistentVolumeClaim") => {
            if let Some(spec) = map_at(root, "spec") {
                default(spec, "volumeMode", json!("Filesystem"));
            }
        }
        ("autoscaling", "HorizontalPodAutoscaler") => autoscaler(root),
        ("networking.k8s.io", "NetworkPolicy") => network_policy(root),
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => binding(root),
        ("storage.k8s.io", "StorageClass") => {
            default(root, "reclaimPolicy", json!("Delete"));
            default(root, "volumeBindingMode", json!("Immediate"));
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => definition(root),
        _ if !is_builtin_group(group) => schema_defaults(schema, object),
        _ => {}
    }
}

/// The groups of the built-in kinds (whose defaults are code, not schema).
fn is_builtin_group(group: &str) -> bool {
    group.is_empty() || !group.contains('.') || group.ends_with(".k8s.io")
}

/// The `default`s of a structural schema, filled in where the object lacks them (fields of the
/// objects present, and of every list item), as the apiextensions server defaults a custom
/// resource.
fn schema_defaults(schema: Schema, value: &mut Value) {
    match (schema.shape(), value) {
        (Shape::Struct, Value::Object(map)) => {
            for field in schema.node().fields {
                if !map.contains_key(field.name)
                    && let Some(default) = field.node.default
                {
                    map.insert(field.name.to_owned(), default.clone());
                }
            }
            for (name, child) in map.iter_mut() {
                schema_defaults(schema.field(name), child);
            }
        }
        (Shape::Map, Value::Object(map)) => {
            for child in map.values_mut() {
                schema_defaults(schema.item(), child);
            }
        }
        (Shape::List, Value::Array(items)) => {
            for item in items {
                schema_defaults(schema.item(), item);
            }
        }
        _ => {}
    }
}

fn stateful_set(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "replicas", json!(1));
    default(spec, "podManagementPolicy", json!("OrderedReady"));
    default(spec, "revisionHistoryLimit", json!(10));
    if let Some(strategy) = map_at(spec, "updateStrategy") {
        default(strategy, "type", json!("RollingUpdate"));
        if strategy.get("type") == Some(&json!("RollingUpdate"))
            && let Some(rolling) = map_at(strategy, "rollingUpdate")
        {
            default(rolling, "partition", json!(0));
        }
    }
    if let Some(policy) = map_at(spec, "persistentVolumeClaimRetentionPolicy") {
        default(policy, "whenDeleted", json!("Retain"));
        default(policy, "whenScaled", json!("Retain"));
    }
    for claim in items(spec, "volumeClaimTemplates") {
        default(claim, "apiVersion", json!("v1"));
        default(claim, "kind", json!("PersistentVolumeClaim"));
        if let Some(claim_spec) = map_at(claim, "spec") {
            default(claim_spec, "volumeMode", json!("Filesystem"));
        }
        if let Some(status) = map_at(claim, "status") {
            default(status, "phase", json!("Pending"));
        }
    }
    pod_template(spec);
}

fn daemon_set(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "revisionHistoryLimit", json!(10));
    if let Some(strategy) = map_at(spec, "updateStrategy") {
        default(strategy, "type", json!("RollingUpdate"));
        if strategy.get("type") == Some(&json!("RollingUpdate"))
            && let Some(rolling) = map_at(strategy, "rollingUpdate")
        {
            default(rolling, "maxUnavailable", json!(1));
            default(rolling, "maxSurge", json!(0));
        }
    }
    pod_template(spec);
}

fn job(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    if spec.get("completions").is_none_or(Value::is_null)
        && spec.get("parallelism").is_none_or(Value::is_null)
    {
        spec.insert("completions".into(), json!(1));
    }
    default(spec, "parallelism", json!(1));
    default(spec, "backoffLimit", json!(6));
    default(spec, "completionMode", json!("NonIndexed"));
    default(spec, "suspend", json!(false));
    if spec.get("podFailurePolicy").is_none_or(Value::is_null) {
        default(spec, "podReplacementPolicy", json!("TerminatingOrFailed"));
    }
    pod_template(spec);
}

fn cron_job(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "concurrencyPolicy", json!("Allow"));
    default(spec, "suspend", json!(false));
    default(spec, "successfulJobsHistoryLimit", json!(3));
    default(spec, "failedJobsHistoryLimit", json!(1));
    // The job template's pod template is defaulted; the job's own fields are not (they are
    // when the controller makes a Job of it).
    if let Some(template) = map_at(spec, "jobTemplate") {
        // An empty ObjectMeta serializes as `{}`.
        let _ = map_at(template, "metadata");
        if let Some(job_spec) = map_at(template, "spec") {
            pod_template(job_spec);
        }
    }
}

fn service(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "type", json!("ClusterIP"));
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if ty == "ExternalName" {
        return;
    }
    default(spec, "sessionAffinity", json!("None"));
    if spec.get("sessionAffinity") == Some(&json!("ClientIP"))
        && let Some(config) = map_at(spec, "sessionAffinityConfig")
        && let Some(client) = map_at(config, "clientIP")
    {
        default(client, "timeoutSeconds", json!(10800));
    }
    default(spec, "internalTrafficPolicy", json!("Cluster"));
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer") {
        default(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if ty == "LoadBalancer" {
        default(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
    for port in items(spec, "ports") {
        default(port, "protocol", json!("TCP"));
        if let Some(number) = port.get("port").cloned() {
            default(port, "targetPort", number);
        }
    }
}

fn autoscaler(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "minReplicas", json!(1));
    if spec
        .get("metrics")
        .is_none_or(|m| m.as_array().is_none_or(Vec::is_empty))
    {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
}

fn network_policy(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    for direction in ["ingress", "egress"] {
        for rule in items(spec, direction) {
            for port in items(rule, "ports") {
                default(port, "protocol", json!("TCP"));
            }
        }
    }
    if spec.get("policyTypes").is_none_or(Value::is_null) {
        let mut types = vec![json!("Ingress")];
        if spec.get("egress").is_some_and(|e| !e.is_null()) {
            types.push(json!("Egress"));
        }
        spec.insert("policyTypes".into(), Value::Array(types));
    }
}

fn binding(root: &mut Map<String, Value>) {
    for subject in items(root, "subjects") {
        let group = match subject.get("kind").and_then(Value::as_str) {
            Some("ServiceAccount") => "",
            Some("User" | "Group") => "rbac.authorization.k8s.io",
            _ => continue,
        };
        default(subject, "apiGroup", json!(group));
    }
}

fn definition(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    if let Some(conversion) = map_at(spec, "conversion") {
        default(conversion, "strategy", json!("None"));
    }
    if let Some(names) = map_at(spec, "names")
        && let Some(kind) = names.get("kind").and_then(Value::as_str).map(str::to_owned)
    {
        default(names, "listKind", json!(format!("{kind}List")));
        default(names, "singular", json!(kind.to_ascii_lowercase()));
    }
}

/// The map at `key`, created empty when absent; `None` when something else is there (a
/// malformed object the store's validation rejects: nothing to default).
fn map_at<'a>(parent: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    parent
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
}

/// Set `key` to `value` when it is absent or null.
fn default(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_string(), value);
    }
}

fn deployment(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "replicas", json!(1));
    if let Some(strategy) = map_at(spec, "strategy") {
        default(strategy, "type", json!("RollingUpdate"));
        if strategy.get("type") == Some(&json!("RollingUpdate"))
            && let Some(rolling) = map_at(strategy, "rollingUpdate")
        {
            default(rolling, "maxUnavailable", json!("25%"));
            default(rolling, "maxSurge", json!("25%"));
        }
    }
    default(spec, "revisionHistoryLimit", json!(10));
    default(spec, "progressDeadlineSeconds", json!(600));
    pod_template(spec);
}

fn replica_set(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    default(spec, "replicas", json!(1));
    pod_template(spec);
}

/// The pod template under a workload's `spec`.
fn pod_template(spec: &mut Map<String, Value>) {
    let Some(template) = map_at(spec, "template") else {
        return;
    };
    // An empty ObjectMeta serializes as `{}` (since 1.34 a zero creation time is left out,
    // where older servers wrote `creationTimestamp: null`).
    let _ = map_at(template, "metadata");
    if let Some(pod_spec_map) = map_at(template, "spec") {
        pod_spec(pod_spec_map);
    }
}

fn pod(root: &mut Map<String, Value>) {
    let Some(spec) = map_at(root, "spec") else {
        return;
    };
    pod_spec(spec);
    default(spec, "enableServiceLinks", json!(true));
    // Priority and ServiceAccount admission.
    default(spec, "priority", json!(0));
    default(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    default(spec, "serviceAccountName", json!("default"));
    let account = spec
        .get("serviceAccountName")
        .cloned()
        .unwrap_or(json!("default"));
    default(spec, "serviceAccount", account);
    // Requests default to limits in a pod (not in a template).
    for list in ["initContainers", "containers"] {
        for container in items(spec, list) {
            let Some(Value::Object(resources)) = container.get_mut("resources") else {
                continue;
            };
            let Some(Value::Object(limits)) = resources.get("limits").cloned() else {
                continue;
            };
            let Some(requests) = map_at(resources, "requests") else {
                continue;
            };
            for (name, quantity) in limits {
                requests.entry(name).or_insert(quantity);
            }
        }
    }
}

fn namespace(root: &mut Map<String, Value>) {
    let name = root
        .get("metadata")
        .and_then(|m| m.get("name"))
        .cloned()
        .unwrap_or(Value::Null);
    if let Value::String(name) = name
        && let Some(labels) = map_at(root, "metadata").and_then(|m| map_at(m, "labels"))
    {
        labels.insert("kubernetes.io/metadata.name".into(), Value::String(name));
    }
    if let Some(spec) = map_at(root, "spec") {
        default(spec, "finalizers", json!(["kubernetes"]));
    }
    if let Some(status) = map_at(root, "status") {
        default(status, "phase", json!("Active"));
    }
}

/// The object items of the list at `key`, if it is a list.
fn items<'a>(
    parent: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    parent
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

fn pod_spec(spec: &mut Map<String, Value>) {
    // `serviceAccount` is the deprecated name of `serviceAccountName`: the server's conversion
    // fills either from the other in every pod spec, templates included.
    if let Some(account) = spec
        .get("serviceAccountName")
        .filter(|v| !v.is_null())
        .cloned()
    {
        default(spec, "serviceAccount", account);
    } else if let Some(account) = spec.get("serviceAccount").filter(|v| !v.is_null()).cloned() {
        default(spec, "serviceAccountName", account);
    }
    default(spec, "restartPolicy", json!("Always"));
    default(spec, "terminationGracePeriodSeconds", json!(30));
    default(spec, "dnsPolicy", json!("ClusterFirst"));
    default(spec, "securityContext", json!({}));
    default(spec, "schedulerName", json!("default-scheduler"));
    let host_network = spec.get("hostNetwork") == Some(&json!(true));
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for c in items(spec, list) {
            container(c, host_network);
        }
    }
    for v in items(spec, "volumes") {
        volume(v);
    }
}

fn container(c: &mut Map<String, Value>, host_network: bool) {
    // Not a default: the empty ResourceRequirements the API types serialize.
    default(c, "resources", json!({}));
    default(c, "terminationMessagePath", json!("/dev/termination-log"));
    default(c, "terminationMessagePolicy", json!("File"));
    let image = c.get("image").and_then(Value::as_str).unwrap_or("");
    default(c, "imagePullPolicy", json!(pull_policy(image)));
    for port in items(c, "ports") {
        default(port, "protocol", json!("TCP"));
        // With the host's network the container port is the host port.
        if host_network && let Some(p) = port.get("containerPort").cloned() {
            default(port, "hostPort", p);
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(Value::Object(p)) = c.get_mut(probe) {
            default(p, "timeoutSeconds", json!(1));
            default(p, "periodSeconds", json!(10));
            default(p, "successThreshold", json!(1));
            default(p, "failureThreshold", json!(3));
            http_get(p);
        }
    }
    if let Some(Value::Object(lifecycle)) = c.get_mut("lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(Value::Object(h)) = lifecycle.get_mut(hook) {
                http_get(h);
            }
        }
    }
    for env in items(c, "env") {
        if let Some(Value::Object(from)) = env.get_mut("valueFrom")
            && let Some(Value::Object(field_ref)) = from.get_mut("fieldRef")
        {
            default(field_ref, "apiVersion", json!("v1"));
        }
    }
}

fn http_get(handler: &mut Map<String, Value>) {
    if let Some(Value::Object(get)) = handler.get_mut("httpGet") {
        if get.get("path").is_none_or(|p| p.is_null() || p == "") {
            get.insert("path".into(), json!("/"));
        }
        default(get, "scheme", json!("HTTP"));
    }
}

fn volume(v: &mut Map<String, Value>) {
    const SOURCES: [&str; 7] = [
        "configMap",
        "secret",
        "emptyDir",
        "persistentVolumeClaim",
        "hostPath",
        "projected",
        "downwardAPI",
    ];
    let has_source = v.keys().any(|k| k != "name");
    if !has_source {
        v.insert("emptyDir".into(), json!({}));
    }
    for source in SOURCES {
        if let Some(Value::Object(s)) = v.get_mut(source) {
            match source {
                // 0644
                "configMap" | "secret" | "projected" | "downwardAPI" => {
                    default(s, "defaultMode", json!(420))
                }
                "hostPath" => default(s, "type", json!("")),
                _ => {}
            }
        }
    }
}

/// `Always` for `:latest` or an image without tag or digest, else `IfNotPresent`.
pub fn pull_policy(image: &str) -> &'static str {
    let name = image.rsplit('/').next().unwrap_or(image);
    if name.contains('@') {
        return "IfNotPresent";
    }
    match name.rsplit_once(':') {
        Some((_, "latest")) | None => "Always",
        Some(_) => "IfNotPresent",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn reference(file: &str) -> Value {
        let path = format!(
            "{}/../../testdata/kubernetes-1.20/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn web_yaml() -> Value {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/kubernetes-1.20/web.yaml"
        );
        serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn a_template_names_its_service_account_twice_as_a_server_stores_it() {
        // As a 1.36 server stores a Deployment applied with only serviceAccountName (and one
        // with only the deprecated serviceAccount).
        for given in ["serviceAccountName", "serviceAccount"] {
            let mut object =
                json!({"spec": {"template": {"spec": {given: "cart", "containers": []}}}});
            apply_defaults(
                "apps",
                "Deployment",
                crate::schema::builtin_kind("Deployment"),
                &mut object,
            );
            let spec = &object["spec"]["template"]["spec"];
            assert_eq!(spec["serviceAccountName"], "cart", "{given}: {spec}");
            assert_eq!(spec["serviceAccount"], "cart", "{given}: {spec}");
        }
    }

    #[test]
    fn deployment_defaults_match_the_reference_server() {
        let mut object = web_yaml();
        apply_defaults(
            "apps",
            "Deployment",
            crate::schema::builtin_kind("Deployment"),
            &mut object,
        );
        let mut expected = reference("deploy-after-client-apply.json")["spec"].clone();
        // A 1.20 server wrote the zero creation time of the template; current ones leave it out.
        remove_template_creation_time(&mut expected);
        assert_eq!(object["spec"], expected);
    }

    #[test]
    fn replica_set_and_pod_template_defaults_match_the_reference() {
        let rs = &reference("replicasets.json")["items"][0];
        let mut object = json!({"spec": {
            "replicas": 2,
            "selector": rs["spec"]["selector"],
            "template": {"metadata": {"labels": rs["spec"]["template"]["metadata"]["labels"]},
                "spec": web_yaml()["spec"]["template"]["spec"]}
        }});
        apply_defaults(
            "apps",
            "ReplicaSet",
            crate::schema::builtin_kind("ReplicaSet"),
            &mut object,
        );
        let mut expected = rs["spec"].clone();
        remove_template_creation_time(&mut expected);
        assert_eq!(object["spec"], expected);
    }

    fn remove_template_creation_time(spec: &mut Value) {
        if let Some(meta) = spec
            .pointer_mut("/template/metadata")
            .and_then(Value::as_object_mut)
        {
            meta.remove("creationTimestamp");
        }
    }

    #[test]
    fn pod_defaults_match_the_reference_except_admission_extras() {
        let mut expected = reference("pods.json")["items"][0]["spec"].clone();
        let spec = expected.as_object_mut().unwrap();
        // Added by admission plugins and the scheduler, which the demo cluster does elsewhere or not.
        for key in ["tolerations", "volumes", "nodeName"] {
            spec.remove(key);
        }
        spec["containers"][0]
            .as_object_mut()
            .unwrap()
            .remove("volumeMounts");
        let mut object = json!({"spec": web_yaml()["spec"]["template"]["spec"]});
        apply_defaults("", "Pod", crate::schema::builtin_kind("Pod"), &mut object);
        assert_eq!(object["spec"], expected);
    }

    #[test]
    fn recreate_strategy_gets_no_rolling_update_and_explicit_values_stay() {
        let mut object = json!({"spec": {"replicas": 0, "strategy": {"type": "Recreate"}, "revisionHistoryLimit": 2}});
        apply_defaults(
            "apps",
            "Deployment",
            crate::schema::builtin_kind("Deployment"),
            &mut object,
        );
        assert_eq!(object["spec"]["strategy"], json!({"type": "Recreate"}));
        assert_eq!(object["spec"]["replicas"], json!(0));
        assert_eq!(object["spec"]["revisionHistoryLimit"], json!(2));
        let mut object = json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": 1}}}});
        apply_defaults(
            "apps",
            "Deployment",
            crate::schema::builtin_kind("Deployment"),
            &mut object,
        );
        assert_eq!(
            object["spec"]["strategy"],
            json!({"rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}, "type": "RollingUpdate"})
        );
        assert_eq!(object["spec"]["replicas"], json!(1));
    }

    #[test]
    fn image_pull_policy_follows_the_tag() {
        for (image, policy) in [
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("registry.example:5000/web", "Always"),
            ("registry.example:5000/web:1.0", "IfNotPresent"),
            ("web@sha256:abc", "IfNotPresent"),
        ] {
            assert_eq!(pull_policy(image), policy, "{image}");
        }
        let mut object = json!({"spec": {"containers": [{"name": "a", "image": "nginx", "imagePullPolicy": "Never"}]}});
        apply_defaults("", "Pod", crate::schema::builtin_kind("Pod"), &mut object);
        assert_eq!(
            object["spec"]["containers"][0]["imagePullPolicy"],
            json!("Never")
        );
    }

    #[test]
    fn probes_env_field_refs_volumes_and_pod_requests() {
        let mut object = json!({"spec": {"containers": [{
            "name": "a", "image": "a:1",
            "readinessProbe": {"httpGet": {"port": 8080}},
            "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "1"}}
        }], "volumes": [{"name": "cfg", "configMap": {"name": "cfg"}}, {"name": "scratch"}]}});
        apply_defaults("", "Pod", crate::schema::builtin_kind("Pod"), &mut object);
        let c = &object["spec"]["containers"][0];
        assert_eq!(
            c["readinessProbe"],
            json!({"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                   "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
        );
        assert_eq!(
            c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"],
            json!("v1")
        );
        assert_eq!(
            c["resources"]["requests"],
            json!({"cpu": "1", "memory": "1Gi"})
        );
        assert_eq!(
            object["spec"]["volumes"][0]["configMap"]["defaultMode"],
            json!(420)
        );
        assert_eq!(object["spec"]["volumes"][1]["emptyDir"], json!({}));
    }

    #[test]
    fn namespace_gets_its_finalizer_phase_and_name_label() {
        let mut object = json!({"metadata": {"name": "demo"}});
        apply_defaults(
            "",
            "Namespace",
            crate::schema::builtin_kind("Namespace"),
            &mut object,
        );
        assert_eq!(
            object["metadata"]["labels"],
            json!({"kubernetes.io/metadata.name": "demo"})
        );
        assert_eq!(object["spec"], json!({"finalizers": ["kubernetes"]}));
        assert_eq!(object["status"], json!({"phase": "Active"}));
    }
}
