//! `managedFields` field sets (`fieldsV1`): parse, build from an object, set algebra.
