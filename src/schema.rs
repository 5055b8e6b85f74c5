//! Kubernetes list merge keys and atomic fields of the workload kinds.
