//! Git for accept: commit one manifest file alone, optionally on a new branch, by running the
//! user's `git` command (so their identity, hooks and signing apply), and the commit message.
//!
//! Branch mode commits on a new branch made from the committed state of the branch the user is
//! on, in a temporary worktree: the user stays on their branch, with their working copy and
//! index as they were (two hotfixes make two branches, each from that branch, not stacked). An
//! existing branch is never moved or reused. If the commit fails, the new branch is deleted, so a
//! failed accept leaves no trace in git.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitOutcome {
    /// The commit was made; `branch` is the branch it is on (`None` on a detached HEAD), in
    /// the repository whose top folder is `repository` (a submodule's, for a file in one).
    Committed {
        short_hash: String,
        branch: Option<String>,
        repository: PathBuf,
    },
    /// The folder is not inside a git repository: the file is written, nothing is committed.
    NotARepository,
}

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git in {dir}: {source}")]
    Spawn {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{file} is not inside the repository at {repo}")]
    OutsideRepository { file: PathBuf, repo: PathBuf },
    /// One accept's files lie in two repositories (a submodule and its superproject, say).
    #[error(
        "{first} and {second} are in two repositories (a submodule?): one commit cannot hold both; accept with --no-commit and commit each repository yourself"
    )]
    TwoRepositories { first: PathBuf, second: PathBuf },
    #[error("branch \"{branch}\" already exists; kdrift does not move an existing branch")]
    BranchExists { branch: String },
    #[error("\"{branch}\" is not a valid branch name (from the branch template)")]
    BadBranchName { branch: String },
    /// A git command (a hook it ran) did not end in time and was stopped.
    #[error(
        "git {action} did not finish within {seconds} s (a hook or a signing prompt waiting for input, or the network?) and was stopped (KDRIFT_GIT_TIMEOUT=SECONDS allows longer)"
    )]
    TimedOut { action: String, seconds: u64 },
    /// The commit is to be signed (`commit.gpgsign`) and the signing program failed: most often
    /// it wanted to ask for a passphrase, and kdrift's git has no terminal to ask on.
    #[error("{SIGNING}; git said:\n{message}")]
    Signing { message: String },
    /// kdrift was interrupted (ctrl-c, SIGTERM, a second quit) and started no more git.
    #[error("git {action} was not run: kdrift was interrupted")]
    Interrupted { action: String },
    /// git refused (a failing hook, no identity, nothing to commit, ...): its own words.
    #[error("git {action} failed:\n{message}")]
    Refused {
        action: &'static str,
        message: String,
    },
}

/// What a failed signature means, and what to do.
pub const SIGNING: &str = "git commit could not sign the commit (commit.gpgsign is on, and kdrift runs git with no terminal, so a passphrase prompt cannot be answered): sign with an agent that does not prompt (a passphrase cached in gpg-agent or ssh-agent), or set commit.gpgsign=false for this repository (git config commit.gpgsign false)";

/// What one git command printed.
struct Output {
    ok: bool,
    stdout: String,
    stderr: String,
}

impl Output {
    fn message(&self) -> String {
        let text = format!("{}\n{}", self.stderr.trim(), self.stdout.trim());
        text.trim().to_owned()
    }
}

/// How long one git command may run, hooks included: `KDRIFT_GIT_TIMEOUT` seconds, else 120
/// (a signing prompt or a hook on a slow network takes a while; one waiting on a terminal that
/// kdrift's git has not got would wait forever).
pub fn timeout() -> Duration {
    std::env::var("KDRIFT_GIT_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|secs| *secs > 0)
        .map_or(Duration::from_secs(120), Duration::from_secs)
}

mod interrupt;
pub use interrupt::{AfterInterrupt, after_interrupt, unstage};
mod message;
pub use message::{AcceptedField, branch_name, commit_message};

/// Runs `git args` in `dir`: no stdin, no pager, no credential prompt, never waits on a person,
/// and never longer than [`timeout`] (then it and its hooks are killed). Once kdrift is
/// interrupted, not at all ([`GitError::Interrupted`]).
fn run(dir: &Path, args: &[&str]) -> Result<Output, GitError> {
    run_as(dir, args, false)
}

/// [`run`], even once kdrift is interrupted: for what puts the repository back as it was.
fn run_cleanup(dir: &Path, args: &[&str]) -> Result<Output, GitError> {
    run_as(dir, args, true)
}

fn run_as(dir: &Path, args: &[&str], clean_up: bool) -> Result<Output, GitError> {
    let mut command = Command::new("git");
    command
        .arg("--no-pager")
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        // gpg passes this terminal to gpg-agent's pinentry, which would prompt on it (over the
        // live view); without it a passphrase prompt fails instead (see `GitError::Signing`).
        .env_remove("GPG_TTY");
    let limit = timeout();
    let ran = if clean_up {
        crate::process::run_to_clean_up(command, limit)
    } else {
        crate::process::run_bounded(command, limit)
    };
    match ran {
        Ok(done) => Ok(Output {
            ok: done.ok,
            stdout: done.stdout,
            stderr: done.stderr,
        }),
        Err(crate::process::RunError::Spawn(source)) => Err(GitError::Spawn {
            dir: dir.to_path_buf(),
            source,
        }),
        Err(crate::process::RunError::TimedOut(_)) => Err(GitError::TimedOut {
            action: args.first().copied().unwrap_or("git").to_owned(),
            seconds: limit.as_secs(),
        }),
        Err(crate::process::RunError::Interrupted) => Err(GitError::Interrupted {
            action: args.first().copied().unwrap_or("git").to_owned(),
        }),
        // git's output is not capped (run_bounded); said as what it is all the same.
        Err(e @ crate::process::RunError::TooMuchOutput(_)) => Err(GitError::Refused {
            action: "git",
            message: e.to_string(),
        }),
    }
}

fn must(dir: &Path, action: &'static str, args: &[&str]) -> Result<String, GitError> {
    let output = run(dir, args)?;
    if output.ok {
        Ok(output.stdout.trim().to_owned())
    } else {
        Err(GitError::Refused {
            action,
            message: output.message(),
        })
    }
}

/// Why `git commit` (run in `dir`) failed: a signature that could not be made, or git's words.
fn commit_refused(dir: &Path, commit: &Output) -> GitError {
    let message = commit.message();
    let signing = message.contains("failed to sign")
        || (message.contains("failed to write commit object")
            && run(dir, &["config", "--bool", "commit.gpgsign"])
                .is_ok_and(|out| out.ok && out.stdout.trim() == "true"));
    if signing {
        GitError::Signing { message }
    } else {
        GitError::Refused {
            action: "commit",
            message,
        }
    }
}

/// The top folder of the repository holding `dir`, or `None` when there is none. A repository
/// git will not use (another user's: "dubious ownership") is an error in git's words, which say
/// what to do — not "no repository", which would write without committing.
pub fn repository_root(dir: &Path) -> Result<Option<PathBuf>, GitError> {
    let output = run(dir, &["rev-parse", "--show-toplevel"])?;
    if !output.ok && output.stderr.contains("dubious ownership") {
        return Err(GitError::Refused {
            action: "rev-parse",
            message: output.message(),
        });
    }
    Ok(output
        .ok
        .then(|| PathBuf::from(output.stdout.trim()))
        .filter(|root| !root.as_os_str().is_empty()))
}

/// The folder git is asked about for `file` (absolute, or relative to `repo_dir`): its own
/// folder, or the nearest one that exists (a new file's folder may not yet). The repository that
/// holds a file is found from there, not from the manifests root: a file inside a submodule
/// belongs to the submodule's repository.
pub fn folder_of(repo_dir: &Path, file: &Path) -> PathBuf {
    let absolute = if file.is_absolute() {
        file.to_path_buf()
    } else {
        repo_dir.join(file)
    };
    absolute
        .ancestors()
        .skip(1)
        .find(|folder| folder.is_dir())
        .map_or_else(|| repo_dir.to_path_buf(), Path::to_path_buf)
}

/// The top folder of the repository holding `file` (see [`folder_of`]), or `None`.
pub fn repository_of(repo_dir: &Path, file: &Path) -> Result<Option<PathBuf>, GitError> {
    repository_root(&folder_of(repo_dir, file))
}

/// A repository that is a submodule: where its superproject is, and the submodule's path in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submodule {
    pub superproject: PathBuf,
    pub path: String,
}

/// The superproject of the repository at `top` when it is a submodule (checked out inside
/// another repository), else `None`.
pub fn submodule_of(top: &Path) -> Result<Option<Submodule>, GitError> {
    let output = run(top, &["rev-parse", "--show-superproject-working-tree"])?;
    let superproject = PathBuf::from(output.stdout.trim());
    if !output.ok || superproject.as_os_str().is_empty() {
        return Ok(None);
    }
    let real_super = std::fs::canonicalize(&superproject).unwrap_or_else(|_| superproject.clone());
    let real_top = std::fs::canonicalize(top).unwrap_or_else(|_| top.to_path_buf());
    let path = real_top
        .strip_prefix(&real_super)
        .map_or_else(|_| real_top.clone(), Path::to_path_buf)
        .to_string_lossy()
        .into_owned();
    Ok(Some(Submodule { superproject, path }))
}

/// A git operation that has the repository in the middle of something: a commit now would land on
/// its temporary HEAD (and `--abort` would throw it away).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InProgress {
    Rebase,
    /// `git am` (a rebase's `rebase-apply` folder with its `applying` file).
    Am,
    Merge,
    CherryPick,
    Revert,
    Bisect,
}

impl InProgress {
    /// `a rebase`, as a sentence names it.
    pub fn name(self) -> &'static str {
        match self {
            InProgress::Rebase => "a rebase",
            InProgress::Am => "a git am",
            InProgress::Merge => "a merge",
            InProgress::CherryPick => "a cherry-pick",
            InProgress::Revert => "a revert",
            InProgress::Bisect => "a bisect",
        }
    }

    /// What the user can do to end it.
    pub fn advice(self) -> &'static str {
        match self {
            InProgress::Rebase => {
                "finish it (git rebase --continue) or abort it (git rebase --abort)"
            }
            InProgress::Am => "finish it (git am --continue) or abort it (git am --abort)",
            InProgress::Merge => "finish it (git commit) or abort it (git merge --abort)",
            InProgress::CherryPick => {
                "finish it (git cherry-pick --continue) or abort it (git cherry-pick --abort)"
            }
            InProgress::Revert => {
                "finish it (git revert --continue) or abort it (git revert --abort)"
            }
            InProgress::Bisect => "end it (git bisect reset)",
        }
    }
}

/// The operation in progress in the repository holding `dir`, from the files git keeps while
/// it lasts (found with `git rev-parse --git-path`, so worktrees work too).
pub fn operation_in_progress(dir: &Path) -> Result<Option<InProgress>, GitError> {
    const MARKERS: [(&str, InProgress); 8] = [
        ("rebase-apply/applying", InProgress::Am),
        ("rebase-merge", InProgress::Rebase),
        ("rebase-apply", InProgress::Rebase),
        ("MERGE_HEAD", InProgress::Merge),
        ("CHERRY_PICK_HEAD", InProgress::CherryPick),
        ("REVERT_HEAD", InProgress::Revert),
        ("sequencer", InProgress::CherryPick),
        ("BISECT_LOG", InProgress::Bisect),
    ];
    let mut args = vec!["rev-parse"];
    for (marker, _) in MARKERS {
        args.extend(["--git-path", marker]);
    }
    let output = run(dir, &args)?;
    if !output.ok {
        return Ok(None);
    }
    Ok(output
        .stdout
        .lines()
        .zip(MARKERS)
        .find(|(path, _)| dir.join(path).exists())
        .map(|(_, (_, what))| what))
}

/// Pushes `branch` to its remote (`branch.<name>.remote`, else `origin`), as the user's git
/// does — their credentials, no prompt (an SSH key that wants a passphrase fails instead of
/// asking, unless the user set their own ssh command) — within the git timeout. Returns where it
/// went (`origin/main`).
pub fn push(dir: &Path, branch: &str) -> Result<String, GitError> {
    let config = |key: &str| -> Result<Option<String>, GitError> {
        let out = run(dir, &["config", "--get", key])?;
        Ok(out
            .ok
            .then(|| out.stdout.trim().to_owned())
            .filter(|v| !v.is_empty()))
    };
    let remote = config(&format!("branch.{branch}.remote"))?.unwrap_or_else(|| "origin".into());
    let mut args = vec!["push"];
    let batch;
    if std::env::var_os("GIT_SSH_COMMAND").is_none() && config("core.sshCommand")?.is_none() {
        batch = "core.sshCommand=ssh -o BatchMode=yes".to_owned();
        args = vec!["-c", &batch, "push"];
    }
    let refspec = format!("refs/heads/{branch}:refs/heads/{branch}");
    args.extend([remote.as_str(), refspec.as_str()]);
    must(dir, "push", &args)?;
    Ok(format!("{remote}/{branch}"))
}

/// The files under `dir` that a sparse checkout leaves out (skip-worktree: in the index, not on
/// disk), as paths under `dir`; none outside git or in a full checkout.
pub fn not_checked_out(dir: &Path) -> Result<Vec<PathBuf>, GitError> {
    let output = run(dir, &["ls-files", "-t", "-z", "--", "."])?;
    if !output.ok {
        return Ok(Vec::new());
    }
    Ok(output
        .stdout
        .split('\0')
        .filter_map(|entry| entry.strip_prefix("S "))
        .map(|relative| dir.join(relative))
        .collect())
}

/// The files under `dir` whose committed text (as staged) contains `text`, as paths under `dir`
/// (`git grep --cached`: files a sparse checkout leaves out are searched too).
pub fn files_containing(dir: &Path, text: &str) -> Result<Vec<PathBuf>, GitError> {
    let output = run(
        dir,
        &["grep", "--cached", "-l", "-z", "-F", "-e", text, "--", "."],
    )?;
    Ok(output
        .stdout
        .split('\0')
        .filter(|path| !path.is_empty())
        .map(|relative| dir.join(relative))
        .collect())
}

/// The text of `file` (under `dir`) as staged in the index: a file not on disk in a sparse
/// checkout can still be read.
pub fn staged_text(dir: &Path, file: &Path) -> Result<String, GitError> {
    let relative = file.strip_prefix(dir).unwrap_or(file).to_string_lossy();
    let spec = format!(":./{relative}");
    let output = run(dir, &["cat-file", "blob", &spec])?;
    if output.ok {
        Ok(output.stdout)
    } else {
        Err(GitError::Refused {
            action: "cat-file",
            message: output.message(),
        })
    }
}

/// The commits that last changed lines `lines` (1-based) of `file`, as `(short hash, subject)`,
/// each once, oldest line first (`git blame --porcelain`); a line not committed yet is left out.
pub fn blame_lines(
    dir: &Path,
    file: &Path,
    lines: &[usize],
) -> Result<Vec<(String, String)>, GitError> {
    let mut out: Vec<(String, String)> = Vec::new();
    let relative = file
        .strip_prefix(dir)
        .unwrap_or(file)
        .to_string_lossy()
        .into_owned();
    for line in lines {
        let range = format!("{line},{line}");
        let output = run(
            dir,
            &["blame", "--porcelain", "-L", &range, "--", &relative],
        )?;
        if !output.ok {
            return Err(GitError::Refused {
                action: "blame",
                message: output.message(),
            });
        }
        let mut rows = output.stdout.lines();
        let Some(hash) = rows
            .next()
            .and_then(|first| first.split_whitespace().next())
        else {
            continue;
        };
        if hash.bytes().all(|b| b == b'0') {
            continue;
        }
        let subject = rows
            .find_map(|row| row.strip_prefix("summary "))
            .unwrap_or_default()
            .to_owned();
        let short: String = hash.chars().take(12).collect();
        if !out.iter().any(|(h, _)| *h == short) {
            out.push((short, subject));
        }
    }
    Ok(out)
}

/// The text `file` had before commit `sha`, and the commit's full hash, when reverting that
/// commit would give that text: the commit changed `file` alone and nothing changed it since
/// (its blob at `sha` is the one at HEAD). `None` otherwise (a merge, a root commit, other files
/// touched).
pub fn revert_of(dir: &Path, sha: &str, file: &Path) -> Result<Option<(String, String)>, GitError> {
    let relative = file
        .strip_prefix(dir)
        .unwrap_or(file)
        .to_string_lossy()
        .into_owned();
    let out = |args: &[&str]| -> Result<Option<String>, GitError> {
        let output = run(dir, args)?;
        Ok(output.ok.then_some(output.stdout))
    };
    let Some(full) = out(&["ls-files", "--full-name", "--", &relative])? else {
        return Ok(None);
    };
    let Some(touched) = out(&["diff-tree", "--no-commit-id", "--name-only", "-r", sha])? else {
        return Ok(None);
    };
    let touched: Vec<&str> = touched.lines().filter(|l| !l.is_empty()).collect();
    if touched != [full.trim()] {
        return Ok(None);
    }
    let blob = |revision: &str| {
        out(&[
            "rev-parse",
            "--verify",
            "-q",
            &format!("{revision}:./{relative}"),
        ])
    };
    match (blob(sha)?, blob("HEAD")?) {
        (Some(then), Some(now)) if then == now => {}
        _ => return Ok(None),
    }
    let Some(full) = out(&["rev-parse", "--verify", "-q", &format!("{sha}^{{commit}}")])? else {
        return Ok(None);
    };
    Ok(out(&["show", &format!("{sha}^:./{relative}")])?.map(|text| (text, full.trim().to_owned())))
}

/// The current branch, or `None` on a detached HEAD.
pub fn current_branch(top: &Path) -> Result<Option<String>, GitError> {
    let output = run(top, &["symbolic-ref", "--quiet", "--short", "HEAD"])?;
    Ok(output.ok.then(|| output.stdout.trim().to_owned()))
}

/// The fetch URLs of the repository's remotes as `(name, url)` (`git remote -v`, which applies
/// the user's `url.<base>.insteadOf`); none when it has no remote.
pub fn remote_urls(top: &Path) -> Result<Vec<(String, String)>, GitError> {
    let output = run(top, &["remote", "-v"])?;
    Ok(output
        .stdout
        .lines()
        .filter_map(|line| {
            let (name, rest) = line.split_once('\t')?;
            let url = rest.strip_suffix(" (fetch)")?;
            Some((name.to_owned(), url.trim().to_owned()))
        })
        .collect())
}

/// Commits `file` alone with `message` on the current branch. Everything else in the index and
/// working tree stays as it was.
pub fn commit_file(repo_dir: &Path, file: &Path, message: &str) -> Result<CommitOutcome, GitError> {
    commit_files(repo_dir, &[file], message)
}

/// Commits `files` (and nothing else) with `message` on the current branch: one commit. New
/// files are added first (only those paths).
pub fn commit_files(
    repo_dir: &Path,
    files: &[&Path],
    message: &str,
) -> Result<CommitOutcome, GitError> {
    let Some(top) = one_repository(repo_dir, files.iter().copied())? else {
        return Ok(CommitOutcome::NotARepository);
    };
    let mut relatives = Vec::with_capacity(files.len());
    for file in files {
        let relative = relative_to(&top, repo_dir, file)?;
        // `commit --only` takes paths git knows; a new file is added first (only that path).
        let tracked = run(&top, &["ls-files", "--error-unmatch", "--", &relative])?;
        if !tracked.ok {
            must(&top, "add", &["add", "--", &relative])?;
        }
        relatives.push(relative);
    }
    let mut args = vec!["commit", "--quiet", "--only", "-m", message, "--"];
    args.extend(relatives.iter().map(String::as_str));
    let commit = run(&top, &args)?;
    if !commit.ok {
        return Err(commit_refused(&top, &commit));
    }
    let short_hash = must(&top, "rev-parse", &["rev-parse", "--short", "HEAD"])?;
    Ok(CommitOutcome::Committed {
        short_hash,
        branch: current_branch(&top)?,
        repository: top,
    })
}

/// The repository that holds every one of `files` (each found from its own folder), `None`
/// outside git; files of two repositories (one inside a submodule, one not) are refused: one
/// commit cannot hold them.
pub fn one_repository<'f>(
    repo_dir: &Path,
    files: impl IntoIterator<Item = &'f Path>,
) -> Result<Option<PathBuf>, GitError> {
    let mut found: Option<(PathBuf, &Path)> = None;
    let mut outside = false;
    for file in files {
        match (repository_of(repo_dir, file)?, &found) {
            (None, _) => outside = true,
            (Some(top), None) => found = Some((top, file)),
            (Some(top), Some((first_top, first))) if top != *first_top => {
                return Err(GitError::TwoRepositories {
                    first: first.to_path_buf(),
                    second: file.to_path_buf(),
                });
            }
            (Some(_), Some(_)) => {}
        }
    }
    match found {
        Some((_, file)) if outside => Err(GitError::OutsideRepository {
            file: file.to_path_buf(),
            repo: repo_dir.to_path_buf(),
        }),
        found => Ok(found.map(|(top, _)| top)),
    }
}

/// Commits `contents` as `file` on a new branch `name` made from the current commit (the
/// committed state of the branch the user is on), in a temporary worktree: the user's checkout,
/// index and branch stay exactly as they were, and their hooks and signing still apply. A
/// commit that fails leaves no branch behind.
pub fn commit_on_new_branch(
    repo_dir: &Path,
    file: &Path,
    contents: &str,
    message: &str,
    name: &str,
) -> Result<CommitOutcome, GitError> {
    commit_files_on_new_branch(repo_dir, &[(file, contents)], message, name)
}

/// [`commit_on_new_branch`] of several files (new ones are created): one commit.
pub fn commit_files_on_new_branch(
    repo_dir: &Path,
    files: &[(&Path, &str)],
    message: &str,
    name: &str,
) -> Result<CommitOutcome, GitError> {
    let Some(top) = one_repository(repo_dir, files.iter().map(|(file, _)| *file))? else {
        return Ok(CommitOutcome::NotARepository);
    };
    let mut relatives = Vec::with_capacity(files.len());
    for (file, contents) in files {
        relatives.push((relative_to(&top, repo_dir, file)?, *contents));
    }
    if !run(&top, &["check-ref-format", "--branch", name])?.ok {
        return Err(GitError::BadBranchName {
            branch: name.to_owned(),
        });
    }
    let reference = format!("refs/heads/{name}");
    if run(&top, &["rev-parse", "--verify", "--quiet", &reference])?.ok {
        return Err(GitError::BranchExists {
            branch: name.to_owned(),
        });
    }
    let scratch = tempfile::Builder::new()
        .prefix("kdrift-accept-")
        .tempdir()
        .map_err(|source| GitError::Spawn {
            dir: top.clone(),
            source,
        })?;
    let tree = scratch.path().join("tree");
    let tree_text = tree.to_string_lossy().into_owned();
    must(
        &top,
        "worktree add",
        &["worktree", "add", "--quiet", "-b", name, &tree_text, "HEAD"],
    )?;
    let committed = (|| {
        for (relative, contents) in &relatives {
            let target = tree.join(relative);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|source| GitError::Spawn {
                    dir: parent.to_path_buf(),
                    source,
                })?;
            }
            std::fs::write(&target, contents).map_err(|source| GitError::Spawn {
                dir: tree.clone(),
                source,
            })?;
            must(&tree, "add", &["add", "--", relative])?;
        }
        let commit = run(&tree, &["commit", "--quiet", "-m", message])?;
        if !commit.ok {
            return Err(commit_refused(&tree, &commit));
        }
        must(&tree, "rev-parse", &["rev-parse", "--short", "HEAD"])
    })();
    // Cleaned up even when kdrift was interrupted meanwhile.
    let _ = run_cleanup(&top, &["worktree", "remove", "--force", &tree_text]);
    let _ = run_cleanup(&top, &["worktree", "prune"]);
    match committed {
        Ok(short_hash) => Ok(CommitOutcome::Committed {
            short_hash,
            branch: Some(name.to_owned()),
            repository: top,
        }),
        Err(e) => {
            let _ = run_cleanup(&top, &["branch", "--quiet", "-D", name]);
            Err(e)
        }
    }
}

/// `file` relative to the repository top `top` (symlinks resolved), or an error when it lies
/// outside.
fn relative_to(top: &Path, repo_dir: &Path, file: &Path) -> Result<String, GitError> {
    let outside = || GitError::OutsideRepository {
        file: file.to_path_buf(),
        repo: top.to_path_buf(),
    };
    let real_top = std::fs::canonicalize(top).map_err(|_| outside())?;
    let absolute = if file.is_absolute() {
        file.to_path_buf()
    } else {
        repo_dir.join(file)
    };
    // A file not written yet (a new patch): its folder is resolved.
    let real_file = match std::fs::canonicalize(&absolute) {
        Ok(real) => real,
        Err(_) => {
            let parent = absolute.parent().ok_or_else(outside)?;
            let name = absolute.file_name().ok_or_else(outside)?;
            std::fs::canonicalize(parent)
                .map_err(|_| outside())?
                .join(name)
        }
    };
    let relative = real_file.strip_prefix(&real_top).map_err(|_| outside())?;
    Ok(relative.to_string_lossy().into_owned())
}

/// True when `file` differs from HEAD (staged or not), or is not committed yet. `git commit
/// --only` commits the whole file as it is on disk, so such changes would ride along with an
/// accept: the caller can ask the user first. `false` outside a repository.
pub fn has_uncommitted_changes(repo_dir: &Path, file: &Path) -> Result<bool, GitError> {
    let Some(top) = repository_of(repo_dir, file)? else {
        return Ok(false);
    };
    let absolute = if file.is_absolute() {
        file.to_path_buf()
    } else {
        repo_dir.join(file)
    };
    let path = absolute.to_string_lossy().into_owned();
    let status = must(&top, "status", &["status", "--porcelain", "--", &path])?;
    Ok(!status.is_empty())
}

#[cfg(test)]
#[path = "git_tests.rs"]
mod tests;
