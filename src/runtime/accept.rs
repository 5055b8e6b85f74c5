//! The IO of the accept view, run off the loop: reading what the view shows (the whole live
//! object, the manifest file as it is on disk, where git would commit) and, on `enter`, reading
//! the live object again, then the shared write + commit of [`crate::accept`] (git is blocking:
//! it runs on the blocking pool).
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cluster::client::Client;

use crate::accept::{AcceptError, check_still_live, manifest_in, shown_path, write_and_commit};
use crate::app::accept::{
    AcceptFetched, AcceptRequest, ChartPlan, FileText, GitState, SharedIndex,
};
use crate::cluster::live::{LiveKinds, fetch_objects};
use crate::drift::{LiveObject, compare};
use crate::manifest::ObjectKey;
use crate::manifest::edit::ContentHash;

/// The whole live object of `key` (in its manifest's `api_version`), or why it cannot be had.
async fn live_object(
    client: &Client,
    kinds: &LiveKinds,
    key: &ObjectKey,
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
    key: ObjectKey,
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
        chart: None,
    }
}

/// `Command::PrepareChartAccept`: the live object, the accept into its chart's values file
/// planned and proved for the fields `only` names (every field offered when `None`; blocking:
/// helm renders), and that values file with git's state.
pub async fn prepare_chart(
    client: Client,
    kinds: LiveKinds,
    key: ObjectKey,
    api_version: String,
    index: SharedIndex,
    only: Option<Vec<String>>,
) -> AcceptFetched {
    let live = live_object(&client, &kinds, &key, &api_version).await;
    let found = live.clone();
    let asked = key.clone();
    let wanted = only.clone();
    let planned = tokio::task::spawn_blocking(move || {
        let live = match found {
            Ok(Some(live)) => live,
            Ok(None) => return Err(format!("{asked} is not in the cluster: nothing to accept")),
            Err(e) => return Err(e),
        };
        let index = &index.0;
        let manifest = index
            .get(&asked)
            .ok_or_else(|| format!("{asked} is no longer in the manifests"))?;
        let object =
            crate::accept::helm::chart_object(index, manifest).map_err(|e| e.to_string())?;
        let values = object
            .chart
            .as_ref()
            .and_then(|spec| spec.values_target())
            .ok_or_else(|| format!("{asked}: its chart's values are not a file of the checkout"))?;
        let drift = compare(object, &live, &index.config);
        let chosen: Vec<crate::drift::DriftItem> = crate::accept::offered(&drift)
            .into_iter()
            .filter(|(item, offered)| match &wanted {
                Some(only) => only.contains(&item.path.to_string()),
                None => *offered,
            })
            .map(|(item, _)| item)
            .collect();
        let refs: Vec<&crate::drift::DriftItem> = chosen.iter().collect();
        let planned = crate::accept::helm::plan_and_prove(index, manifest, &refs, &live)
            .map_err(|e| e.to_string());
        let file = read_file(&values);
        let git = git_state(&index.root, &values);
        Ok((planned, file, git))
    })
    .await
    .unwrap_or_else(|e| Err(format!("planning the accept failed: {e}")));
    let (planned, file, git) = match planned {
        Ok(found) => found,
        Err(e) => (Err(e.clone()), Err(e), GitState::Unknown(String::new())),
    };
    AcceptFetched {
        key,
        live,
        file,
        git,
        others: Vec::new(),
        chart: Some(ChartPlan { only, planned }),
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
    if let Some(index) = request.chart.clone() {
        // A Helm release's object: its fields checked against git's chart render again (the
        // edit was proved by rendering when planned; the write refuses a values file changed
        // since), then written and committed.
        let index = &index.0;
        let manifest = index.get(&request.key).ok_or_else(|| {
            format!("{object} is no longer in the manifests; nothing was written")
        })?;
        let rendered =
            crate::accept::helm::chart_object(index, manifest).map_err(|e| e.to_string())?;
        let now = compare(rendered, &live, &request.config);
        check_still_live(&request.chosen, &now).map_err(|e| e.to_string())?;
        let release = manifest.helm.as_ref().map(|r| r.source());
        let shown = shown_path(&request.root, &prepared.file);
        return commit_one(request).await.map(|mut text| {
            if let Some(release) = release {
                text.push_str(&format!(
                    " — {release} still holds the old value: the next helm upgrade with {shown} takes the live one (a pending upgrade until then)"
                ));
            }
            text
        });
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
    commit_one(request).await
}

/// Writes the request's one file and commits it (git is blocking: on the blocking pool); the
/// answer is the status bar's line.
async fn commit_one(request: AcceptRequest) -> Result<String, String> {
    let shown = shown_path(&request.root, &request.prepared.file);
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
