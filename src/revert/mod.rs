//! Revert: make a live object equal its manifest again (see `docs/ARCHITECTURE.md`, "Accept and
//! revert"). The decisions are pure and live here, apart from the drift engine they use, so the
//! TUI and the headless command share them; the kube IO is in [`crate::cluster::revert`].
//!
//! - [`plan`]: the apply configuration, the fields added live to remove, the guarded JSON patch,
//!   and the preview diff (live now → live after).
//! - [`rekey`]: list items whose key was changed live, put back in place before the apply.
//! - [`scope`]: which drifted fields a revert puts back (`--field`; a release's fields already
//!   in git are left).
//! - [`rollback`]: a workload's revisions, the one to go back to, and where the bad values came
//!   from (git, out of band, no manifest).
pub mod plan;
pub mod rekey;
pub mod rollback;
pub mod scope;

pub use plan::{PreviewKind, PreviewLine, Removal, RemovalPatch};
