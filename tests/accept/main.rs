//! Accept's file edits without a cluster: the comment-preserving edit, quoting, the write and
//! its git commit, and properties over generated documents.
//!
//! One test binary per theme (each links the whole crate); each file a module.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod edit;
mod git;
mod props;
mod quoting;
mod write;
