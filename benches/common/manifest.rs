//! The Deployment manifest the benches write to disk: one container, an env var and requests,
//! in the block style people write by hand.

/// The manifest of Deployment `name` in `namespace` with `replicas` and image tag `tag`.
#[allow(dead_code)] // not every bench that includes this file writes Deployments alone
pub fn deployment_yaml(name: &str, namespace: &str, replicas: u32, tag: &str) -> String {
    let requests = "          resources:
            requests:
              cpu: 100m
              memory: 128Mi
";
    workload_yaml(
        "Deployment",
        name,
        namespace,
        &format!("  replicas: {replicas}\n"),
        tag,
        requests,
    )
}

/// The manifest of workload `kind` `name` in `namespace`: `spec` is the lines of its spec
/// before the selector (`  replicas: 3\n`), `container` the lines ending its container.
pub fn workload_yaml(
    kind: &str,
    name: &str,
    namespace: &str,
    spec: &str,
    tag: &str,
    container: &str,
) -> String {
    format!(
        "apiVersion: apps/v1
kind: {kind}
metadata:
  name: {name}
  namespace: {namespace}
  labels:
    app: {name}
spec:
{spec}  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
    spec:
      containers:
        - name: app
          image: registry.example/{name}:{tag}
          env:
            - name: LOG_LEVEL
              value: info
{container}"
    )
}

/// The Service in front of Deployment `name`: port 80 to the container's 8080.
#[allow(dead_code)] // not every bench that includes this file writes Services
pub fn service_yaml(name: &str, namespace: &str) -> String {
    format!(
        "apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: {namespace}
  labels:
    app: {name}
spec:
  selector:
    app: {name}
  ports:
    - name: http
      port: 80
      targetPort: 8080
"
    )
}

/// The ConfigMap of Deployment `name`, with a feature flag set to `flag`.
#[allow(dead_code)]
pub fn configmap_yaml(name: &str, namespace: &str, flag: &str) -> String {
    format!(
        "apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}-config
  namespace: {namespace}
data:
  LOG_FORMAT: json
  FEATURE_NEW_CHECKOUT: \"{flag}\"
  settings.yaml: |
    retries: 3
    timeout: 5s
"
    )
}

/// The ServiceAccount of Deployment `name`.
#[allow(dead_code)]
pub fn serviceaccount_yaml(name: &str, namespace: &str) -> String {
    format!(
        "apiVersion: v1
kind: ServiceAccount
metadata:
  name: {name}
  namespace: {namespace}
"
    )
}
