//! Table-driven tests of each drift class and each normalisation case, on a Deployment the way
//! a current API server returns it (defaults filled in, `managedFields` per manager).
use kdrift::drift::{Class, LiveObject, ObjectStatus, compare_values};
use kdrift::manifest::{Config, ObjectKey, config};
use serde_json::{Value, json};

const MANIFEST: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {app: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  strategy: {rollingUpdate: {maxSurge: 1}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: web:1.0
        ports: [{containerPort: 8080}]
        env: [{name: MODE, value: prod}, {name: LOG, value: info}]
        resources: {requests: {cpu: 0.5, memory: 1Gi}}
      - name: proxy
        image: envoy:1
"#;

fn manifest() -> Value {
    serde_yaml::from_str(MANIFEST).expect("manifest")
}

/// The object as the server returns it right after `kubectl apply`: defaults filled in, other
/// spellings of the same values, list items in another order, status and server metadata.
fn applied() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": "web", "namespace": "shop", "labels": {"app": "web"}, "uid": "1", "resourceVersion": "7", "generation": 2,
            "annotations": {"deployment.kubernetes.io/revision": "2", "kubectl.kubernetes.io/last-applied-configuration": "{}"},
            "managedFields": [
                {"manager": "kubectl-client-side-apply", "operation": "Update", "time": "2026-11-22T01:00:00Z",
                 "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:dnsPolicy": {}, "f:containers": {"k:{\"name\":\"web\"}": {"f:image": {}}}}}}}},
                {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status", "time": "2026-11-22T01:00:05Z",
                 "fieldsV1": {"f:status": {"f:replicas": {}}}}
            ]
        },
        "spec": {
            "replicas": 3, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "1", "maxUnavailable": "25%"}},
            "template": {
                "metadata": {"labels": {"app": "web"}, "creationTimestamp": null},
                "spec": {
                    "containers": [
                        {"name": "proxy", "image": "envoy:1", "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log"},
                        {"name": "web", "image": "web:1.0", "imagePullPolicy": "IfNotPresent",
                         "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                         "env": [{"name": "MODE", "value": "prod"}, {"name": "LOG", "value": "info"}],
                         "resources": {"requests": {"cpu": "500m", "memory": "1024Mi"}}}
                    ],
                    "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                    "securityContext": {}, "terminationGracePeriodSeconds": 30
                }
            }
        },
        "status": {"replicas": 3, "readyReplicas": 3}
    })
}

fn pointer_mut<'a>(value: &'a mut Value, pointer: &str) -> &'a mut Value {
    value
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer}"))
}

fn manager(name: &str, operation: &str, subresource: Option<&str>, fields: Value) -> Value {
    let mut entry = json!({"manager": name, "operation": operation, "time": "2026-11-22T02:00:00Z", "fieldsV1": fields});
    if let Some(sub) = subresource {
        entry["subresource"] = json!(sub);
    }
    entry
}

fn add_manager(live: &mut Value, entry: Value) {
    if let Some(list) = pointer_mut(live, "/metadata/managedFields").as_array_mut() {
        list.push(entry);
    }
}

const WEB: &str = "/spec/template/spec/containers/1";
const WEB_FIELDS: &str = "k:{\"name\":\"web\"}";

type Case = (
    &'static str,
    fn(&mut Value),
    fn(&mut Config),
    ObjectStatus,
    Vec<(Class, &'static str, Option<&'static str>)>,
);

fn no_config(_: &mut Config) {}

fn cases() -> Vec<Case> {
    vec![
        (
            "in sync after apply: defaults, spellings, order, status, server metadata",
            |_| {},
            no_config,
            ObjectStatus::InSync,
            vec![],
        ),
        (
            "kubectl edit of the image: changed, attributed to kubectl-edit",
            |live| {
                *pointer_mut(live, &format!("{WEB}/image")) = json!("web:1.1");
                add_manager(
                    live,
                    manager(
                        "kubectl-edit",
                        "Update",
                        None,
                        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {WEB_FIELDS: {"f:image": {}}}}}}}),
                    ),
                );
            },
            no_config,
            ObjectStatus::Drifted,
            vec![(
                Class::Changed,
                "spec.template.spec.containers[name=web].image",
                Some("kubectl-edit"),
            )],
        ),
        (
            "value differs while the client-side apply owns it but its annotation does not say \
             it: changed, manager unknown",
            |live| *pointer_mut(live, "/spec/replicas") = json!(5),
            no_config,
            ObjectStatus::Drifted,
            vec![(Class::Changed, "spec.replicas", None)],
        ),
        (
            "helm 3 upgraded it (manager helm, operation Update): changed, by helm",
            |live| {
                *pointer_mut(live, "/spec/replicas") = json!(5);
                if let Some(list) = pointer_mut(live, "/metadata/managedFields").as_array_mut() {
                    list.retain(|e| e["manager"] != "kubectl-client-side-apply");
                }
                add_manager(
                    live,
                    manager(
                        "helm",
                        "Update",
                        None,
                        json!({"f:spec": {"f:replicas": {}}}),
                    ),
                );
            },
            no_config,
            ObjectStatus::Drifted,
            vec![(Class::Changed, "spec.replicas", Some("helm"))],
        ),
        (
            "no one owns the field: changed, manager unknown",
            |live| {
                *pointer_mut(live, "/spec/replicas") = json!(5);
                if let Some(list) = pointer_mut(live, "/metadata/managedFields").as_array_mut() {
                    list.retain(|e| e["manager"] != "kubectl-client-side-apply");
                }
            },
            no_config,
            ObjectStatus::Drifted,
            vec![(Class::Changed, "spec.replicas", None)],
        ),
        (
            "kubectl scale on a current server: changed by kubectl-scale",
            |live| {
                *pointer_mut(live, "/spec/replicas") = json!(5);
                add_manager(
                    live,
                    manager(
                        "kubectl-scale",
                        "Update",
                        Some("scale"),
                        json!({"f:spec": {"f:replicas": {}}}),
                    ),
                );
            },
            no_config,
            ObjectStatus::Drifted,
            vec![(Class::Changed, "spec.replicas", Some("kubectl-scale"))],
        ),
        (
            "replicas owned by the autoscaler: autoscaled, not drift",
            |live| {
                *pointer_mut(live, "/spec/replicas") = json!(7);
                add_manager(
                    live,
                    manager(
                        "kube-controller-manager",
                        "Update",
                        Some("scale"),
                        json!({"f:spec": {"f:replicas": {}}}),
                    ),
                );
            },
            no_config,
            ObjectStatus::InSync,
            vec![(
                Class::Autoscaled,
                "spec.replicas",
                Some("kube-controller-manager"),
            )],
        ),
        (
            "an env entry removed live: removed live",
            |live| {
                if let Some(env) = pointer_mut(live, &format!("{WEB}/env")).as_array_mut() {
                    env.remove(1);
                }
            },
            no_config,
            ObjectStatus::Drifted,
            vec![(
                Class::RemovedLive,
                "spec.template.spec.containers[name=web].env[name=LOG]",
                None,
            )],
        ),
        (
            "kubectl set env: added live by kubectl-set",
            |live| {
                if let Some(env) = pointer_mut(live, &format!("{WEB}/env")).as_array_mut() {
                    env.push(json!({"name": "DEBUG", "value": "1"}));
                }
                add_manager(
                    live,
                    manager(
                        "kubectl-set",
                        "Update",
                        None,
                        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {WEB_FIELDS: {"f:env": {"k:{\"name\":\"DEBUG\"}": {".": {}, "f:name": {}, "f:value": {}}}}}}}}}),
                    ),
                );
            },
            no_config,
            ObjectStatus::Drifted,
            vec![(
                Class::AddedLive,
                "spec.template.spec.containers[name=web].env[name=DEBUG]",
                Some("kubectl-set"),
            )],
        ),
        (
            "a server default taken over by kubectl edit: added live",
            |live| {
                *pointer_mut(live, "/spec/template/spec/dnsPolicy") = json!("Default");
                add_manager(
                    live,
                    manager(
                        "kubectl-edit",
                        "Update",
                        None,
                        json!({"f:spec": {"f:template": {"f:spec": {"f:dnsPolicy": {}}}}}),
                    ),
                );
            },
            no_config,
            ObjectStatus::Drifted,
            vec![(
                Class::AddedLive,
                "spec.template.spec.dnsPolicy",
                Some("kubectl-edit"),
            )],
        ),
        (
            "kubectl rollout restart: restarted, not drift",
            |live| {
                pointer_mut(live, "/spec/template/metadata")["annotations"] =
                    json!({"kubectl.kubernetes.io/restartedAt": "2026-11-22T02:00:00Z"});
                add_manager(
                    live,
                    manager(
                        "kubectl-rollout",
                        "Update",
                        None,
                        json!({"f:spec": {"f:template": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/restartedAt": {}}}}}}),
                    ),
                );
            },
            no_config,
            ObjectStatus::InSync,
            vec![(
                Class::Restarted,
                "spec.template.metadata.annotations[\"kubectl.kubernetes.io/restartedAt\"]",
                Some("kubectl-rollout"),
            )],
        ),
        (
            "Argo CD (Apply) is trusted only for what the manifest says: a field it applied that git lacks is drift",
            |live| {
                pointer_mut(live, "/metadata")["annotations"]["team"] = json!("a");
                add_manager(
                    live,
                    manager(
                        "argocd-controller",
                        "Apply",
                        None,
                        json!({"f:metadata": {"f:annotations": {"f:team": {}}}}),
                    ),
                );
            },
            no_config,
            ObjectStatus::Drifted,
            vec![(
                Class::AddedLive,
                "metadata.annotations.team",
                Some("argocd-controller"),
            )],
        ),
        (
            "the tracking metadata GitOps controllers apply is not drift",
            |live| {
                pointer_mut(live, "/metadata")["annotations"]["argocd.argoproj.io/tracking-id"] =
                    json!("shop:apps/Deployment:shop/web");
                pointer_mut(live, "/metadata")["labels"]["kustomize.toolkit.fluxcd.io/name"] =
                    json!("apps");
                add_manager(
                    live,
                    manager(
                        "argocd-controller",
                        "Apply",
                        None,
                        json!({"f:metadata": {
                            "f:annotations": {"f:argocd.argoproj.io/tracking-id": {}},
                            "f:labels": {"f:kustomize.toolkit.fluxcd.io/name": {}}}}),
                    ),
                );
            },
            no_config,
            ObjectStatus::InSync,
            vec![],
        ),
        (
            "a manager named as applier in .kdrift.yaml is not out of band",
            |live| {
                pointer_mut(live, "/metadata")["annotations"]["team"] = json!("a");
                add_manager(
                    live,
                    manager(
                        "deploy-bot",
                        "Update",
                        None,
                        json!({"f:metadata": {"f:annotations": {"f:team": {}}}}),
                    ),
                );
            },
            |config| config.appliers.push("deploy-bot".to_owned()),
            ObjectStatus::InSync,
            vec![],
        ),
        (
            "an ignore rule silences a path",
            |live| {
                *pointer_mut(live, &format!("{WEB}/image")) = json!("web:1.1");
                *pointer_mut(live, "/spec/replicas") = json!(5);
            },
            |config| {
                let (parsed, problems) = config::parse(
                    std::path::Path::new(".kdrift.yaml"),
                    "ignore:\n- kind: Deployment\n  name: 'w*'\n  paths: [/spec/template/spec/containers/web/image]\n",
                );
                assert!(problems.is_empty(), "{problems:?}");
                *config = parsed;
            },
            ObjectStatus::Drifted,
            vec![(Class::Changed, "spec.replicas", None)],
        ),
        (
            "quantities compared by amount: 0.5 vs 600m differs",
            |live| *pointer_mut(live, &format!("{WEB}/resources/requests/cpu")) = json!("600m"),
            no_config,
            ObjectStatus::Drifted,
            vec![(
                Class::Changed,
                "spec.template.spec.containers[name=web].resources.requests.cpu",
                None,
            )],
        ),
        (
            // The only port, its key changed live: one changed item (accept edits it in place,
            // revert puts it back in place), not a port removed and another added.
            "a port with another protocol live: the same port changed",
            |live| *pointer_mut(live, &format!("{WEB}/ports/0/protocol")) = json!("UDP"),
            no_config,
            ObjectStatus::Drifted,
            vec![(
                Class::Changed,
                "spec.template.spec.containers[name=web].ports[containerPort=8080,protocol=TCP]",
                None,
            )],
        ),
        (
            "a whole container missing live: removed live once",
            |live| {
                if let Some(containers) =
                    pointer_mut(live, "/spec/template/spec/containers").as_array_mut()
                {
                    containers.remove(0);
                }
            },
            no_config,
            ObjectStatus::Drifted,
            vec![(
                Class::RemovedLive,
                "spec.template.spec.containers[name=proxy]",
                None,
            )],
        ),
    ]
}

#[test]
fn each_class_and_normalisation_case() {
    let key = ObjectKey::new("apps", "Deployment", "shop", "web");
    for (name, change, configure, status, expected) in cases() {
        let mut live = applied();
        change(&mut live);
        let mut config = Config::default();
        configure(&mut config);
        let live =
            LiveObject::from_value(live, kdrift::schema::Schemas::builtin()).expect("live object");
        let drift = compare_values(&key, &manifest(), &live, &config);
        // The compact extract the live view keeps gives the same drift.
        let mut reduced = live.clone();
        reduced.reduce_to(&manifest(), &config);
        assert_eq!(
            compare_values(&key, &manifest(), &reduced, &config),
            drift,
            "case (reduced): {name}"
        );
        assert!(
            reduced
                .body
                .pointer("/spec/template/spec/schedulerName")
                .is_none(),
            "case: {name}"
        );
        let found: Vec<_> = drift
            .items
            .iter()
            .map(|i| (i.class, i.path.to_string(), i.attribution.manager.clone()))
            .collect();
        let expected: Vec<_> = expected
            .into_iter()
            .map(|(c, p, m)| (c, p.to_owned(), m.map(str::to_owned)))
            .collect();
        assert_eq!((drift.status, found), (status, expected), "case: {name}");
    }
}

/// A list that gained 20,000 items live (a `kubectl edit` of a huge env list) is compared in one
/// pass per list: each added item found by key once, its preceding items shared, duplicates
/// dropped through a map — the comparison took minutes for a few thousand before.
#[test]
fn twenty_thousand_items_added_live_are_each_reported_in_live_order() {
    const N: usize = 20_000;
    let manifest: Value = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "a:1", "env": [{"name": "MODE", "value": "prod"}]}]}}}});
    let mut env = vec![json!({"name": "MODE", "value": "prod"})];
    let mut fields = serde_json::Map::new();
    for i in 0..N {
        env.push(json!({"name": format!("VAR_{i:06}"), "value": format!("v{i}")}));
        fields.insert(
            format!("k:{{\"name\":\"VAR_{i:06}\"}}"),
            json!({".": {}, "f:name": {}, "f:value": {}}),
        );
    }
    let live = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "1", "managedFields": [
            {"manager": "kubectl-edit", "operation": "Update", "time": "2026-11-22T01:00:00Z",
             "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {
                 "k:{\"name\":\"app\"}": {"f:env": fields}}}}}}}]},
        "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "a:1", "env": env}]}}}});
    let live = LiveObject::from_value(live, kdrift::schema::Schemas::builtin()).expect("live");
    let key = ObjectKey::new("apps", "Deployment", "shop", "web");
    let drift = compare_values(&key, &manifest, &live, &Config::default());
    assert_eq!(drift.status, ObjectStatus::Drifted);
    assert_eq!(drift.items.len(), N);
    let names: Vec<String> = drift.items.iter().map(|i| i.path.to_string()).collect();
    assert!(names[0].ends_with("env[name=VAR_000000]"), "{}", names[0]);
    assert!(
        names[N - 1].ends_with("env[name=VAR_019999]"),
        "{}",
        names[N - 1]
    );
    assert!(drift.items.iter().all(|i| i.class == Class::AddedLive));
    // The last one's preceding items: every variable before it, nearest first, then MODE.
    let preceding: Vec<String> = drift.items[N - 1]
        .preceding
        .nearest_first()
        .map(|s| format!("{s:?}"))
        .collect();
    assert_eq!(preceding.len(), N);
    assert!(preceding[0].contains("VAR_019998"), "{}", preceding[0]);
    assert!(preceding[N - 1].contains("MODE"), "{}", preceding[N - 1]);
}
