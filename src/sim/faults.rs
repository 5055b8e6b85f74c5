//! sim::faults
