//! sim::controller
