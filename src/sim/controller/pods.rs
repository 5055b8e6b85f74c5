//! sim::controller::pods (in progress)
