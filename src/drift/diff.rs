//! One object diff.
