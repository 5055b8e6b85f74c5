//! sim::discovery
