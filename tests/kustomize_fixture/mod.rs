//! The kustomize tree the kustomize tests share: a base (a Deployment and a Service, a
//! ConfigMap generator), a prod overlay (namespace, replicas, images, a strategic-merge patch, a
//! component) and a staging overlay (namespace, name prefix).
#![allow(dead_code)]

pub const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.25
          envFrom:
            - configMapRef: {name: web-config}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
";

/// (path, text) of every file of the tree.
pub const FILES: &[(&str, &str)] = &[
    ("base/deployment.yaml", DEPLOYMENT),
    (
        "base/kustomization.yaml",
        "resources:\n  - deployment.yaml\nconfigMapGenerator:\n  - name: web-config\n    literals: [MODE=fast]\n",
    ),
    (
        "overlays/prod/kustomization.yaml",
        "namespace: prod\nresources:\n  - ../../base\nreplicas:\n  - name: web\n    count: 4\nimages:\n  - name: nginx\n    newTag: \"1.27\"\npatches:\n  - path: patch.yaml\ncomponents:\n  - ../../components/team\n",
    ),
    (
        "overlays/prod/patch.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n        - name: web\n          env: [{name: REGION, value: eu}]\n",
    ),
    (
        "overlays/staging/kustomization.yaml",
        "namespace: staging\nnamePrefix: stg-\nresources:\n  - ../../base\n",
    ),
    (
        "components/team/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nlabels:\n  - pairs: {team: shop}\n",
    ),
];
