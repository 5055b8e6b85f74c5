//! The drift engine: a live object compared with its manifest, field by field, by meaning.
pub mod quantity;
