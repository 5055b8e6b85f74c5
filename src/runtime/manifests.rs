//! The manifests for the live view: loaded off the UI thread at start, then watched on disk
//! (`notify`); changed files are re-read after a short quiet period (an editor's save or a
//! `git pull` is a burst of events) and only they are sent to the app.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;

use crate::app::message::Say;
use crate::app::{Flash, Message};
use crate::manifest::ManifestIndex;
use crate::manifest::config::CONFIG_FILE;
use crate::manifest::kustomize::{Kustomize, Selection};
use crate::manifest::reload::{concerns_kustomize, read_change, read_kustomize_change};

/// Events closer together than this are one change.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// The load and the file watcher; dropping it stops both.
pub struct ManifestWatch {
    task: JoinHandle<()>,
}

impl Drop for ManifestWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Whether an event on `path` may change a manifest: any file outside hidden folders (a
/// kustomize generator may read any file; [`wanted`] tells) and the config, not `.git`.
fn relevant(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return false;
    };
    if rel == Path::new(CONFIG_FILE) {
        return true;
    }
    !rel.components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
}

/// Whether a relevant change is read: a manifest, a kustomization, or a file the kustomize side
/// reads or holds.
fn wanted(root: &Path, kustomize: &Kustomize, path: &Path) -> bool {
    path == root.join(CONFIG_FILE)
        || crate::manifest::walk::is_manifest_name(path)
        || concerns_kustomize(root, kustomize, path)
}

/// How often the folder itself is looked at when the folder holding it cannot be watched: a watch
/// on a folder that was removed sees nothing of the one made again in its place (`rm -rf k8s &&
/// git checkout k8s`).
pub const FOLDER_CHECK: Duration = Duration::from_secs(2);

/// How often it is looked at anyway while the folder holding it is watched ([`watch_parent`]
/// tells of a removal or a new folder at once): for what that watch cannot see, such as a
/// symbolic link at the root pointed elsewhere, or the holding folder itself removed. An idle
/// live view then wakes once a minute for it rather than thirty times.
pub const FOLDER_CHECK_WATCHED: Duration = Duration::from_secs(60);

/// The file watcher on `root`, sending the relevant paths of each change.
fn watch_folder(
    root: &Path,
    paths_tx: UnboundedSender<PathBuf>,
) -> notify::Result<notify::RecommendedWatcher> {
    let watch_root = root.to_path_buf();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(event) = res
            && !matches!(event.kind, EventKind::Access(_))
        {
            for path in event.paths {
                if relevant(&watch_root, &path) {
                    let _ = paths_tx.send(path);
                }
            }
        }
    })?;
    watcher.watch(root, RecursiveMode::Recursive)?;
    Ok(watcher)
}

/// A watch on the folder holding `root` (not recursive), sending `()` when something happens to
/// `root` itself: made, removed, renamed. `None` when there is no such folder or it cannot be
/// watched.
fn watch_parent(root: &Path, folder_tx: UnboundedSender<()>) -> Option<notify::RecommendedWatcher> {
    let root = std::fs::canonicalize(root)
        .or_else(|_| std::path::absolute(root))
        .ok()?;
    let parent = root.parent()?.to_path_buf();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(event) = res
            && !matches!(event.kind, EventKind::Access(_))
            && event.paths.iter().any(|p| p == &root)
        {
            let _ = folder_tx.send(());
        }
    })
    .ok()?;
    watcher.watch(&parent, RecursiveMode::NonRecursive).ok()?;
    Some(watcher)
}

/// Which folder is at `root` now (device and inode), or `None` when there is none.
fn folder_id(root: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(root)
        .ok()
        .filter(std::fs::Metadata::is_dir)
        .map(|m| (m.dev(), m.ino()))
}

fn notice(say: &Say, text: String, error: bool) -> bool {
    say(Message::Notice(Flash { text, error }))
}

/// Loads the whole index off the UI thread and sends it; returns its kustomize side (the
/// watcher re-renders from it), `None` when the app is gone.
async fn load(root: &Path, namespace: &str, selection: &Selection, say: &Say) -> Option<Kustomize> {
    let (load_root, namespace, selection) =
        (root.to_path_buf(), namespace.to_owned(), selection.clone());
    let loaded = tokio::task::spawn_blocking(move || {
        ManifestIndex::load_with(&load_root, &namespace, selection)
    })
    .await;
    let index = loaded.ok()?;
    tracing::info!(root = %root.display(), objects = index.len(), problems = index.problems().len(), roots = index.kustomize.roots.len(), "manifests loaded");
    let kustomize = index.kustomize.clone();
    say(Message::Manifests(Arc::new(index))).then_some(kustomize)
}

/// Loads the manifests under the root `chosen` gives (objects without a namespace take
/// `default_namespace`, or their Application's destination), sends
/// `Message::Manifests`, then watches the folder and sends `Message::ManifestsChanged`. A folder
/// removed is said to be gone; made again, it is watched and loaded again.
pub fn start(
    chosen: impl std::future::Future<Output = (PathBuf, Selection)> + Send + 'static,
    default_namespace: String,
    say: Say,
) -> ManifestWatch {
    let task = tokio::spawn(async move {
        // Which folders: `--manifests`, else what the Argo CD Applications deploy (a list call).
        let (root, mut selection) = chosen.await;
        // Manifests a sparse checkout leaves out are not compared: said once, and in :problems.
        let sparse_root = root.clone();
        let sparse =
            tokio::task::spawn_blocking(move || crate::manifest::sparse::note(&sparse_root))
                .await
                .ok()
                .flatten()
                .map(|note| note.trim_start_matches("note: ").to_owned());
        if let Some(sparse) = sparse {
            let _ = notice(&say, sparse.clone(), true);
            selection.notes.push(sparse);
        } else if !selection.apps.is_empty()
            && let Some(first) = selection.notes.first()
        {
            let _ = notice(&say, first.clone(), false);
        }
        // Watch first, so that an edit made during the load is not lost (it is applied after).
        let (paths_tx, mut paths_rx) = unbounded_channel::<PathBuf>();
        let mut watcher = match watch_folder(&root, paths_tx.clone()) {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!(root = %root.display(), error = %e, "cannot watch the manifests");
                let text = format!(
                    "manifests in \"{}\" are not watched ({e}): restart kdrift to see edits",
                    root.display()
                );
                let _ = notice(&say, text, true);
                None
            }
        };
        let mut folder = folder_id(&root);
        let Some(mut kustomize) = load(&root, &default_namespace, &selection, &say).await else {
            return;
        };
        // The folder itself is looked at when the folder holding it tells of a change to it,
        // else every few seconds.
        let (folder_tx, mut folder_rx) = unbounded_channel::<()>();
        let parent = watch_parent(&root, folder_tx);
        let mut check = tokio::time::interval(if parent.is_some() {
            FOLDER_CHECK_WATCHED
        } else {
            FOLDER_CHECK
        });
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let first = tokio::select! {
                first = paths_rx.recv() => first,
                Some(()) = folder_rx.recv() => {
                    // A removal and a folder made again close together are looked at once.
                    while let Ok(Some(())) = tokio::time::timeout(DEBOUNCE, folder_rx.recv()).await {}
                    check.reset_immediately();
                    continue;
                }
                _ = check.tick() => {
                    let now = folder_id(&root);
                    if now == folder {
                        continue;
                    }
                    folder = now;
                    let sent = if folder.is_none() {
                        watcher = None;
                        tracing::warn!(root = %root.display(), "the manifests folder is gone");
                        notice(&say, format!("the manifests folder \"{}\" is gone: its objects read as unmanaged until it is back", root.display()), true)
                    } else {
                        watcher = watch_folder(&root, paths_tx.clone()).ok();
                        match load(&root, &default_namespace, &selection, &say).await {
                            Some(now) => {
                                kustomize = now;
                                notice(&say, format!("the manifests folder \"{}\" is back: read again", root.display()), false)
                            }
                            None => false,
                        }
                    };
                    if !sent {
                        break;
                    }
                    continue;
                }
            };
            let Some(first) = first else {
                break;
            };
            let mut paths = BTreeSet::from([first]);
            // Wait for the burst to end.
            while let Ok(Some(path)) = tokio::time::timeout(DEBOUNCE, paths_rx.recv()).await {
                paths.insert(path);
            }
            let (root, namespace, selection) =
                (root.clone(), default_namespace.clone(), selection.clone());
            let mut state = kustomize.clone();
            let read = tokio::task::spawn_blocking(move || {
                let mut changes = Vec::new();
                let mut rendered = false;
                let wanted: Vec<&PathBuf> =
                    paths.iter().filter(|p| wanted(&root, &state, p)).collect();
                for path in wanted {
                    if concerns_kustomize(&root, &state, path) {
                        // One reading of the kustomize side covers every file of the burst.
                        if !rendered {
                            rendered = true;
                            changes.push(read_kustomize_change(
                                &root, &namespace, &selection, &mut state,
                            ));
                        }
                    } else {
                        changes.push(read_change(&root, &namespace, &selection, path));
                    }
                }
                (changes, state)
            })
            .await;
            let Ok((changes, state)) = read else {
                continue;
            };
            kustomize = state;
            if changes.is_empty() {
                continue;
            }
            tracing::debug!(files = changes.len(), "manifest files changed");
            if !say(Message::ManifestsChanged(changes)) {
                break;
            }
        }
        drop(watcher);
        drop(parent);
    });
    ManifestWatch { task }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn only_yaml_and_the_config_outside_hidden_folders_are_relevant() {
        let root = Path::new("/m");
        assert!(relevant(root, Path::new("/m/apps/web.yaml")));
        assert!(relevant(root, Path::new("/m/web.yml")));
        assert!(relevant(root, Path::new("/m/.kdrift.yaml")));
        assert!(!relevant(root, Path::new("/m/.git/index")));
        assert!(!relevant(root, Path::new("/m/.git/x.yaml")));
        assert!(!relevant(root, Path::new("/m/apps/.web.yaml.swp")));
        // Any file may be a kustomize generator's source: the watcher's task tells.
        assert!(relevant(root, Path::new("/m/README.md")));
        assert!(!wanted(
            root,
            &Kustomize::default(),
            Path::new("/m/README.md")
        ));
        assert!(wanted(
            root,
            &Kustomize::default(),
            Path::new("/m/base/kustomization.yaml")
        ));
        assert!(!relevant(root, Path::new("/elsewhere/web.yaml")));
    }
}
