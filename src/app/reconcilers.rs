//! The GitOps owners seen on live objects, and when their Applications, Kustomizations and
//! HelmReleases are read (once each as they appear, then all again every refresh).
use jiff::Timestamp;

use super::App;

/// How often the GitOps owners' Applications, Kustomizations and HelmReleases are read again:
/// their policy and sync status change by hand or at each sync, rarely; a read of each is one
/// GET.
pub const RECONCILER_REFRESH: jiff::SignedDuration = jiff::SignedDuration::from_secs(60);

/// Owners not asked about yet go to `pending` (once each).
pub(crate) fn note_owners(
    asked: &mut std::collections::BTreeSet<crate::gitops::Owner>,
    pending: &mut Vec<crate::gitops::Owner>,
    owners: &[crate::gitops::Owner],
) {
    for owner in owners {
        if asked.insert(owner.clone()) {
            pending.push(owner.clone());
        }
    }
}

impl App {
    /// Whether any live object seen so far names a GitOps owner (the table then shows who).
    pub fn has_gitops_owners(&self) -> bool {
        self.owners_asked.iter().any(|o| self.claims(o))
    }

    /// Whether Helm releases are desired state here (their objects' rows name them).
    pub fn has_helm_releases(&self) -> bool {
        self.releases
            .as_ref()
            .is_some_and(|read| !read.releases.is_empty())
    }

    /// Whether `owner` is one to show: an instance label's app only once it was read
    /// ([`crate::gitops::Reconciler::claims`]).
    pub fn claims(&self, owner: &crate::gitops::Owner) -> bool {
        !matches!(owner, crate::gitops::Owner::Argo { by_label: true, .. })
            || self
                .reconcilers
                .get(owner)
                .is_some_and(crate::gitops::Reconciler::claims)
    }

    /// When the owners are next read again (the loop wakes then).
    pub fn next_reconciler_read(&self) -> Option<Timestamp> {
        if self.owners_asked.is_empty() {
            return None;
        }
        self.reconcilers_asked_at
            .map(|at| at.saturating_add(RECONCILER_REFRESH).unwrap_or(at))
    }
}
