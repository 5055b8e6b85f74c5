//! sim::server
