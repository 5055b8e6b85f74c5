//! The IO of the accept view, run off the loop: reading what the view shows (the whole live
//! object, the manifest file as it is on disk, where git would commit) and, on `enter`, reading
//! the live object again, then the shared write + commit of [`crate::accept`] (git is blocking:
//! it runs on the blocking pool).
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cluster::client::Client;

use crate::accept::{AcceptError, check_still_live, manifest_in, shown_path, write_and_commit};
use crate::app::ManifestKey;
use crate::app::accept::{AcceptFetched, AcceptRequest, FileText, GitState};
use crate::cluster::live::{LiveKinds, fetch_objects};
use crate::drift::{LiveObject, compare};
use crate::manifest::edit::ContentHash;

/// The whole live object of `key` (in its manifest's `api_version`), or why it cannot be had.
async fn live_object(
    client: &Client,
    kinds: &LiveKinds,
    key: &ManifestKey,
    api_version: &str,
) -> Result<Option<Box<LiveObject>>, String> {
    let wanted = vec![(key.clone(), api_version.to_owned())];
    match fetch_objects(client, kinds, wanted)
        .await
        .into_iter()
        .next()
    {
        Some((_, result)) => result,
        None => Err(format!("no answer for {key}")),
    }
}

/// The file's text and the hash of its bytes.
fn read_file(file: &Path) -> Result<FileText, String> {
    let bytes =
        std::fs::read(file).map_err(|e| format!("{}: cannot read it: {e}", file.display()))?;
    let hash = ContentHash::of(&bytes);
    let text =
        String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", file.display()))?;
    Ok(FileText {
        path: Arc::from(file),
        text: Arc::from(text),
        hash,
    })
}

/// Is there a repository, on which branch, and is the file already changed in it.
fn git_state(root: &Path, file: &Path) -> GitState {
    let top = match crate::git::repository_of(root, file) {
        Ok(Some(top)) => top,
        Ok(None) => return GitState::NotARepository,
        Err(e) => return GitState::Unknown(e.to_string()),
    };
    let branch = match crate::git::current_branch(&top) {
        Ok(branch) => branch,
        Err(e) => return GitState::Unknown(e.to_string()),
    };
    match crate::git::has_uncommitted_changes(root, file) {
        Ok(dirty) => GitState::Repository { branch, dirty },
        Err(e) => GitState::Unknown(e.to_string()),
    }
}

/// `Command::PrepareAccept`: what the accept view needs to show.
pub async fn prepare(
    client: Client,
    kinds: LiveKinds,
    key: ManifestKey,
    api_version: String,
    (file, others): (PathBuf, Vec<PathBuf>),
    root: PathBuf,
) -> AcceptFetched {
    let local = tokio::task::spawn_blocking(move || {
        let others: Vec<FileText> = others.iter().filter_map(|f| read_file(f).ok()).collect();
        (read_file(&file), git_state(&root, &file), others)
    });
    let live = live_object(&client, &kinds, &key, &api_version).await;
    let (file, git, others) = match local.await {
        Ok(found) => found,
        Err(e) => (
            Err(format!("reading the manifest failed: {e}")),
            GitState::Unknown(e.to_string()),
            Vec::new(),
        ),
    };
    AcceptFetched {
        key,
        live,
        file,
        git,
        others,
    }
}

/// `Command::Accept`: refuse if a chosen live value moved since it was shown, else write and
/// commit. The answer is the line for the status bar.
pub async fn accept(
    client: Client,
    kinds: LiveKinds,
    request: AcceptRequest,
) -> Result<String, String> {
    let object = request.key.to_string();
    let live = live_object(&client, &kinds, &request.key, &request.api_version)
        .await
        .map_err(|e| {
            let text = e.to_string();
            if text.contains("nothing was written") {
                text
            } else {
                format!("{text}; nothing was written")
            }
        })?
        .ok_or_else(|| format!("{object} is no longer in the cluster; nothing was written"))?;
    let prepared = &request.prepared;
    if let Some(index) = request.kustomize.clone() {
        // A kustomize root's object: proved by rendering, then every file in one commit.
        let manifest = index
            .0
            .get(&request.key)
            .ok_or_else(|| format!("{object} is no longer rendered; nothing was written"))?
            .clone();
        let now = compare(&manifest, &live, &request.config);
        check_still_live(&request.chosen, &now).map_err(|e| e.to_string())?;
        let shown: Vec<String> = request
            .edits()
            .map(|e| shown_path(&request.root, &e.file))
            .collect();
        let done = tokio::task::spawn_blocking(move || {
            let edits: Vec<_> = request.edits().cloned().collect();
            let notes = crate::accept::kustomize::prove(
                &index.0,
                &manifest,
                &edits,
                &request.chosen,
                &live,
            )?;
            write_and_commit(&request.root, &edits, Some(&request.commit))
                .map(|outcome| (outcome, notes))
        })
        .await
        .map_err(|e| format!("the accept task failed: {e}"))?;
        // The first note is the proof; any other (a generated object's new name) is said too.
        return done
            .map(|(outcome, notes)| {
                let mut text = outcome.describe(&shown.join(", "));
                for note in notes.iter().skip(1) {
                    text.push_str(" — ");
                    text.push_str(note);
                }
                text
            })
            .map_err(|e| e.to_string().replace('\n', " "));
    }
    let manifest = manifest_in(
        &Arc::from(prepared.file.as_path()),
        &Arc::from(prepared.before.as_str()),
        &request.key,
        &request.default_namespace,
    )
    .map_err(|e| e.to_string())?;
    let now = compare(&manifest, &live, &request.config);
    check_still_live(&request.chosen, &now).map_err(|e| e.to_string())?;
    let shown = shown_path(&request.root, &prepared.file);
    let done = tokio::task::spawn_blocking(move || {
        write_and_commit(
            &request.root,
            std::slice::from_ref(&request.prepared),
            Some(&request.commit),
        )
    })
    .await
    .map_err(|e| format!("the accept task failed: {e}"))?;
    // Git's own words can span lines (a failed commit, a refused signature); the status bar has
    // one.
    done.map(|outcome| outcome.describe(&shown))
        .map_err(|e: AcceptError| e.to_string().replace('\n', " "))
}
