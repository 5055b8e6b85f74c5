//! sim::controller::deployment (in progress)
