//! A release from git ([`Step::Release`]): a teammate's commit in the demo repository, and the
//! push's webhook asking Argo CD to refresh. The repository is the one the Application syncs
//! from (`spec.source.repoURL` through [`Gitops::repo`]), whose HEAD stands for the pushed
//! branch; the commit takes the one file it changes (`git commit -- FILE`), so whatever the user
//! has staged or edited elsewhere in that checkout stays as it was, and a file the user changed
//! is left alone (the step is skipped).
use std::path::{Path, PathBuf};

use super::step::{Step, request_for};
use crate::controller::Gitops;
use crate::controller::gitops::APPLICATION;
use crate::error::ApiError;
use crate::object::{Key, str_at};
use crate::store::Store;

/// Why a step did nothing: the API refused it, or a release could not commit.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error("no Application {0} to release through")]
    NoApplication(Key),
    #[error("no local repository stands for {0}")]
    NoRepository(String),
    #[error("{}: {problem}; the release is skipped", .file.display())]
    File { file: PathBuf, problem: String },
    #[error("{0}")]
    Git(String),
    #[error(transparent)]
    Api(#[from] ApiError),
}

/// Make `step`'s commit in the repository its Application syncs, then ask Argo CD to refresh
/// the Application. Returns the commit's sha.
pub async fn release(store: &Store, gitops: &Gitops, step: &Step) -> Result<String, StepError> {
    let Step::Release {
        app,
        file,
        from,
        to,
        author,
        message,
        ..
    } = step
    else {
        return Err(ApiError::BadRequest(format!("{step:?} is not a release")).into());
    };
    let resource = store
        .resource_type_of(APPLICATION.0, APPLICATION.1)
        .ok_or_else(|| StepError::NoApplication(app.clone()))?;
    let application = store
        .get(resource, &app.namespace, &app.name)
        .ok_or_else(|| StepError::NoApplication(app.clone()))?;
    let url = str_at(&application, &["spec", "source", "repoURL"]).unwrap_or_default();
    let repo = gitops
        .repo(url)
        .cloned()
        .ok_or_else(|| StepError::NoRepository(url.to_string()))?;
    let folder = str_at(&application, &["spec", "source", "path"]).unwrap_or_default();
    let relative = Path::new(folder).join(file);
    let change = Change {
        file: relative,
        from: from.clone(),
        to: to.clone(),
        author: author.clone(),
        message: message.clone(),
    };
    let sha = tokio::task::spawn_blocking(move || commit(&repo, &change))
        .await
        .map_err(|e| ApiError::Internal(format!("the release's commit stopped: {e}")))??;
    let (patch, opts) = request_for(step, &application);
    store.patch(resource, &app.namespace, &app.name, &patch, &opts)?;
    Ok(sha)
}

/// One commit's change: `from` → `to` in `file` (relative to the repository).
#[derive(Debug, Clone)]
pub struct Change {
    pub file: PathBuf,
    pub from: String,
    pub to: String,
    /// `Name <email>`: the commit's author and committer.
    pub author: String,
    pub message: String,
}

/// Commit `change` in `repo` alone; the file is put back as it was when the commit fails.
pub fn commit(repo: &Path, change: &Change) -> Result<String, StepError> {
    let path = repo.join(&change.file);
    let problem = |problem: String| StepError::File {
        file: path.clone(),
        problem,
    };
    let name = change.file.to_string_lossy().into_owned();
    let status = git(repo, &["status", "--porcelain", "--", &name], &[])?;
    if !status.trim().is_empty() {
        return Err(problem("it has changes not committed".into()));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| problem(e.to_string()))?;
    let found = text.matches(change.from.as_str()).count();
    if found != 1 {
        return Err(problem(format!(
            "\"{}\" is there {found} times, not once",
            change.from
        )));
    }
    let changed = text.replacen(change.from.as_str(), &change.to, 1);
    std::fs::write(&path, changed).map_err(|e| problem(e.to_string()))?;
    let (who, email) = change
        .author
        .split_once(" <")
        .map_or((change.author.as_str(), ""), |(n, e)| {
            (n, e.trim_end_matches('>'))
        });
    let identity = [
        ("GIT_AUTHOR_NAME", who),
        ("GIT_AUTHOR_EMAIL", email),
        ("GIT_COMMITTER_NAME", who),
        ("GIT_COMMITTER_EMAIL", email),
    ];
    let args = [
        "-c",
        "commit.gpgsign=false",
        "commit",
        "-q",
        "--no-verify",
        "-m",
        &change.message,
        "--",
        &name,
    ];
    if let Err(e) = git(repo, &args, &identity) {
        let _ = std::fs::write(&path, text);
        return Err(e);
    }
    Ok(git(repo, &["rev-parse", "HEAD"], &[])?.trim().to_string())
}

fn git(repo: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<String, StepError> {
    crate::git::run(repo, args, env).map_err(StepError::Git)
}
