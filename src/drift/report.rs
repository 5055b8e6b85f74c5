//! The headless drift report.
