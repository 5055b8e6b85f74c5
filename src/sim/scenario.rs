//! sim::scenario
