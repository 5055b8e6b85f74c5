//! sim::controller::replicaset (in progress)
