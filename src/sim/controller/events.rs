//! sim::controller::events (in progress)
