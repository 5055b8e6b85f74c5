//! The Deployment manifest the benches write to disk: one container, an env var and requests,
//! in the block style people write by hand.

/// The manifest of Deployment `name` in `namespace` with `replicas` and image tag `tag`.
pub fn deployment_yaml(name: &str, namespace: &str, replicas: u32, tag: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {namespace}
  labels:
    app: {name}
spec:
  replicas: {replicas}
  selector:
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
          resources:
            requests:
              cpu: 100m
              memory: 128Mi
"
    )
}
