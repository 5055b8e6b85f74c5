//! A rollback's GitOps owners and what follows it: what the plan says each owner will do with
//! the commit, asking them to sync once it is pushed, and `--wait`'s following of the rollout and
//! of their sync.
use crate::cluster::client::Client;
use crate::cluster::rollback::Followed;
use crate::gitops::Reconciler;
use crate::manifest::ObjectKey;

use super::super::{EXIT_DRIFT, EXIT_ERROR, EXIT_IN_SYNC};
use super::Inputs;

/// What the GitOps owners of the workload do with the rollback's commit: each owner that
/// applies from git is named, with what the commit needs before it syncs (a push to the branch
/// it watches, unless `.kdrift.yaml`'s `accept.push` pushes it); one that self-heals would put
/// the bad values back from an unpushed branch, and that is said as a warning.
pub(super) async fn gitops_lines(
    inputs: &Inputs<'_>,
    owners: Vec<crate::gitops::Owner>,
) -> (Vec<String>, Vec<Reconciler>) {
    let mut lines = Vec::new();
    let mut syncing = Vec::new();
    let pushed = inputs.index.config.accept_push;
    for owner in owners {
        let reconciler = crate::cluster::gitops::read(inputs.client, &owner).await;
        if !reconciler.claims() {
            continue;
        }
        let syncs = reconciler
            .policy
            .as_ref()
            .is_ok_and(crate::gitops::Policy::syncs_commits);
        if syncs {
            syncing.push(reconciler.clone());
        }
        let heals = reconciler
            .policy
            .as_ref()
            .is_ok_and(crate::gitops::Policy::reverts_changes);
        let line = match (pushed, heals, reconciler.after_accept()) {
            (true, _, _) if syncs => format!(
                "{}: the commit is pushed (accept.push) and it applies it: kdrift asks it to sync now and leaves the cluster to it (--wait follows its sync, then the rollout)",
                reconciler.marker()
            ),
            (true, _, _) => format!(
                "{}: the commit is pushed (accept.push); it does not sync by itself, so kdrift applies the cluster half (as a sync of it would)",
                reconciler.marker()
            ),
            (false, true, Some(after)) => format!(
                "warning: {} self-heals from the branch it watches, where the bad values are until the commit is pushed: {after}, or it puts them back",
                reconciler.owner.short()
            ),
            (false, _, Some(after)) => after,
            (false, _, None) => continue,
        };
        lines.push(line);
    }
    (lines, syncing)
}

/// A rollback's commit, and the owners that apply that path by themselves.
#[derive(Debug, Clone)]
pub struct SyncToFollow {
    /// The commit's abbreviated hash.
    pub commit: String,
    pub owners: Vec<Reconciler>,
}

/// Asks each owner to look at git now ([`crate::cluster::gitops::request_sync`]): what was
/// asked, or why it could not be, a line each.
pub(super) async fn ask_to_sync(client: &Client, owners: &[Reconciler]) -> Vec<String> {
    let mut said = Vec::new();
    for owner in owners {
        said.push(
            match crate::cluster::gitops::request_sync(client, owner).await {
                Ok(asked) => asked,
                Err(e) => format!("note: could not ask {} to sync: {e}", owner.owner),
            },
        );
    }
    said
}

/// `--wait`: the rollback's rollout followed until it completes or sticks, or the wait ends.
/// Follows each owner until it says it applied the rollback's commit, for at most `limit`: 0
/// when all did, 1 when one did not (it would put the bad values back at a later sync).
pub(super) async fn follow_sync(
    client: &Client,
    sync: &SyncToFollow,
    limit: std::time::Duration,
) -> u8 {
    let deadline = tokio::time::Instant::now() + limit;
    let mut waiting: Vec<&Reconciler> = sync.owners.iter().collect();
    let mut last: Vec<Result<Option<String>, String>> = Vec::new();
    loop {
        last.clear();
        let mut left = Vec::new();
        for owner in waiting {
            let revision = crate::cluster::gitops::synced_revision(client, owner).await;
            match &revision {
                Ok(Some(at)) if crate::gitops::is_commit(at, &sync.commit) => {
                    say!("{}: synced commit {}", owner.owner, sync.commit);
                }
                _ => {
                    left.push(owner);
                    last.push(revision);
                }
            }
        }
        waiting = left;
        if waiting.is_empty() {
            return EXIT_IN_SYNC;
        }
        if tokio::time::Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
    for (owner, revision) in waiting.iter().zip(&last) {
        let at = match revision {
            Ok(Some(at)) => format!("it is at {}", &at[..at.len().min(12)]),
            Ok(None) => "it reports no synced commit".to_owned(),
            Err(e) => format!("it could not be read: {e}"),
        };
        let hint = owner.after_accept().unwrap_or_default();
        tell!(
            "{}: has not synced commit {} after the wait ({at}); {hint}",
            owner.owner,
            sync.commit
        );
    }
    EXIT_DRIFT
}

pub(super) async fn follow(client: Client, key: &ObjectKey, limit: std::time::Duration) -> u8 {
    say!("following the rollout of {key}…");
    match crate::cluster::rollback::follow(&client, key, limit).await {
        Ok(Followed::Complete) => {
            say!("{key}: rollout complete");
            EXIT_IN_SYNC
        }
        Ok(Followed::Stuck(why)) => {
            tell!("{key}: the rollout is stuck: {why}");
            EXIT_DRIFT
        }
        Ok(Followed::TimedOut(progress)) => {
            tell!("{key}: still rolling out after the wait ({progress})");
            EXIT_DRIFT
        }
        Err(e) => {
            tell!("kdrift: {e}");
            EXIT_ERROR
        }
    }
}
