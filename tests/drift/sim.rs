//! The drift engine on objects written through the demo cluster's own write path (defaults,
//! strategic merge patch, `managedFields` bookkeeping), as kubectl drives it: each out-of-band
//! command is reported as exactly its fields with its manager.
use kdrift::drift::{Class, LiveObject, ObjectStatus, compare_values};
use kdrift::manifest::{Config, ObjectKey};
use kdrift::schema::defaults::apply_defaults;
use kdrift::sim::patch::strategic_merge_patch;
use kdrift::sim::resources::ResourceType;
use kdrift::sim::ssa::{apply, record_update};
use serde_json::{Value, json};

const DEPLOYMENT: ResourceType = ResourceType::DEPLOYMENT;

fn manifest() -> Value {
    serde_yaml::from_str(
        "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: web:1.0
        ports: [{containerPort: 8080}]
        env: [{name: MODE, value: prod}]
        resources: {requests: {cpu: 100m, memory: 64Mi}}
",
    )
    .expect("manifest")
}

/// `kubectl apply` (client-side) creating the object.
fn created() -> Value {
    let mut object = manifest();
    apply_defaults(
        "apps",
        "Deployment",
        kdrift::schema::builtin_kind("Deployment"),
        &mut object,
    );
    record_update(
        DEPLOYMENT,
        None,
        &mut object,
        "kubectl-client-side-apply",
        None,
        "2026-11-22T01:00:00Z",
    );
    object
}

/// An Update by `manager`: a strategic merge patch of `patch`, defaults, ownership.
fn patched(
    old: &Value,
    patch: Value,
    manager: &str,
    subresource: Option<&str>,
    time: &str,
) -> Value {
    let mut new = strategic_merge_patch(DEPLOYMENT, old, &patch).expect("patch");
    apply_defaults(
        "apps",
        "Deployment",
        kdrift::schema::builtin_kind("Deployment"),
        &mut new,
    );
    record_update(DEPLOYMENT, Some(old), &mut new, manager, subresource, time);
    new
}

fn drift(live: Value) -> (ObjectStatus, Vec<(Class, String, Option<String>)>) {
    let live = LiveObject::from_value(live, kdrift::schema::Schemas::builtin()).expect("live");
    let drift = compare_values(
        &ObjectKey::new("apps", "Deployment", "shop", "web"),
        &manifest(),
        &live,
        &Config::default(),
    );
    let items = drift
        .items
        .iter()
        .map(|i| (i.class, i.path.to_string(), i.attribution.manager.clone()))
        .collect();
    (drift.status, items)
}

fn item(class: Class, path: &str, manager: Option<&str>) -> (Class, String, Option<String>) {
    (class, path.to_owned(), manager.map(str::to_owned))
}

const WEB: &str = "spec.template.spec.containers[name=web]";

#[test]
fn after_apply_in_sync() {
    assert_eq!(drift(created()), (ObjectStatus::InSync, vec![]));
}

#[test]
fn set_env_set_resources_scale_and_edit_are_reported_with_their_managers() {
    let container =
        |fields: Value| json!({"spec": {"template": {"spec": {"containers": [fields]}}}});
    let set_env = patched(
        &created(),
        container(json!({"name": "web", "env": [{"name": "EXTRA", "value": "1"}]})),
        "kubectl-set",
        None,
        "2026-11-22T02:00:00Z",
    );
    assert_eq!(
        drift(set_env.clone()),
        (
            ObjectStatus::Drifted,
            vec![item(
                Class::AddedLive,
                &format!("{WEB}.env[name=EXTRA]"),
                Some("kubectl-set")
            )]
        )
    );

    let set_resources = patched(
        &set_env,
        container(json!({"name": "web", "resources": {"limits": {"memory": "256Mi"}}})),
        "kubectl-set",
        None,
        "2026-11-22T02:01:00Z",
    );
    let scaled = patched(
        &set_resources,
        json!({"spec": {"replicas": 5}}),
        "kubectl-scale",
        Some("scale"),
        "2026-11-22T02:02:00Z",
    );
    let edited = patched(
        &scaled,
        container(json!({"name": "web", "image": "web:1.1"})),
        "kubectl-edit",
        None,
        "2026-11-22T02:03:00Z",
    );
    assert_eq!(
        drift(edited),
        (
            ObjectStatus::Drifted,
            vec![
                item(Class::Changed, "spec.replicas", Some("kubectl-scale")),
                item(
                    Class::Changed,
                    &format!("{WEB}.image"),
                    Some("kubectl-edit")
                ),
                item(
                    Class::AddedLive,
                    &format!("{WEB}.env[name=EXTRA]"),
                    Some("kubectl-set")
                ),
                item(
                    Class::AddedLive,
                    &format!("{WEB}.resources.limits.memory"),
                    Some("kubectl-set")
                ),
            ]
        )
    );
}

#[test]
fn rollout_restart_is_a_restart_and_server_side_apply_settles_everything() {
    let restarted = patched(
        &created(),
        json!({"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-22T02:00:00Z"}}}}}),
        "kubectl-rollout",
        None,
        "2026-11-22T02:00:00Z",
    );
    let restart = "spec.template.metadata.annotations[\"kubectl.kubernetes.io/restartedAt\"]";
    assert_eq!(
        drift(restarted),
        (
            ObjectStatus::InSync,
            vec![item(Class::Restarted, restart, Some("kubectl-rollout"))]
        )
    );

    // `kdrift revert` / `kubectl apply --server-side --force-conflicts` takes the fields back.
    let scaled = patched(
        &created(),
        json!({"spec": {"replicas": 5}}),
        "kubectl-scale",
        Some("scale"),
        "2026-11-22T02:02:00Z",
    );
    assert_eq!(drift(scaled.clone()).0, ObjectStatus::Drifted);
    let reverted = apply(
        DEPLOYMENT,
        Some(&scaled),
        &manifest(),
        "kdrift",
        true,
        "2026-11-22T02:05:00Z",
    )
    .expect("apply");
    assert_eq!(drift(reverted), (ObjectStatus::InSync, vec![]));
}
