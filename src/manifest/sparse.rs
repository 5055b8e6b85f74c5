//! Manifests a sparse checkout (`git sparse-checkout`) leaves out: in git, not on disk, so
//! neither loaded nor compared. Said where it matters: once by `kdrift check`, and when an
//! object has no manifest on disk but has one in the part left out (with the folder to add).
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::ObjectKey;

/// The manifest files under `root` that the sparse checkout leaves out (none in a full
/// checkout, outside git, or when git cannot say).
pub fn left_out(root: &Path) -> Vec<PathBuf> {
    crate::git::not_checked_out(root)
        .unwrap_or_default()
        .into_iter()
        .filter(|file| super::walk::is_manifest_name(file))
        .collect()
}

/// The note `kdrift check` prints when manifests under `root` are left out of the checkout.
pub fn note(root: &Path) -> Option<String> {
    let left = left_out(root);
    (!left.is_empty()).then(|| {
        format!(
            "note: this checkout is sparse (git sparse-checkout): {} manifest file(s) under {} are in git but not on disk, and are not compared (git sparse-checkout add FOLDER, or git sparse-checkout disable, to include them)",
            left.len(),
            root.display()
        )
    })
}

/// For a sentence about an object with no manifest, when the manifests' `notes` say the
/// checkout is sparse (see [`note`]): where its manifest may be, and how to bring it in. The
/// live view has no git at hand; the headless commands name the file
/// ([`defined_out_of_checkout`]).
pub fn hint_for_missing(notes: &[String]) -> Option<&'static str> {
    notes
        .iter()
        .any(|n| n.contains("this checkout is sparse (git sparse-checkout)"))
        .then_some(
            "this checkout is sparse: a manifest it leaves out may define it (git sparse-checkout add FOLDER, or git sparse-checkout disable)",
        )
}

/// Why `key` has no manifest on disk when a file the sparse checkout leaves out defines it:
/// the file, and the command that brings it back. `None` when no such file defines it.
pub fn defined_out_of_checkout(
    root: &Path,
    key: &ObjectKey,
    default_namespace: &str,
) -> Option<String> {
    let left = left_out(root);
    if left.is_empty() {
        return None;
    }
    // Only the files that mention the name are read and parsed.
    let candidates = crate::git::files_containing(root, &key.name).unwrap_or_default();
    let file = candidates
        .into_iter()
        .filter(|file| left.contains(file))
        .find(|file| {
            let Ok(text) = crate::git::staged_text(root, file) else {
                return false;
            };
            let parsed = super::parse::parse_file(
                &Arc::from(file.as_path()),
                &Arc::from(text),
                default_namespace,
            );
            parsed.objects.iter().any(|object| object.key == *key)
        })?;
    let shown = file.strip_prefix(root).unwrap_or(&file);
    // `sparse-checkout add` takes folders from the repository's top, whatever the manifests root.
    let top = crate::git::repository_root(root).ok().flatten()?;
    let in_repository = std::fs::canonicalize(&top)
        .ok()
        .zip(std::fs::canonicalize(root).ok())
        .and_then(|(top, root)| root.strip_prefix(top).ok().map(|r| r.join(shown)))?;
    let folder = in_repository
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
        .unwrap_or(&in_repository);
    Some(format!(
        "{key} is defined in {}, which this sparse checkout leaves out (it is in git, not on disk): bring it in with git -C {} sparse-checkout add {}, then run again",
        shown.display(),
        top.display(),
        folder.display()
    ))
}
