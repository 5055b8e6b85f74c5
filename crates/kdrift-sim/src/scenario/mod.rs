//! What the demo cluster holds and does by itself: the demo manifests ([`manifests`]), the seed
//! that creates them as `kubectl apply` would ([`seed()`]), and scenarios — out-of-band changes
//! played over time, each written exactly as kubectl writes it ([`incident`]).
use std::str::FromStr;

use tokio::task::JoinHandle;

use super::controller::Gitops;
use super::store::Store;

mod drain;
pub mod fleet;
pub mod helm;
pub mod incident;
pub mod manifests;
mod release;
pub mod seed;
mod step;

pub use manifests::{DEMO_MANIFESTS, DEMO_REPO_URL};
pub use seed::seed;

/// A scenario the demo cluster can play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// Nothing changes by itself: the cluster stays in sync with `demo/`.
    None,
    /// A short on-call incident: a stuck rollout, an out-of-band scale, live hotfixes.
    Incident,
}

impl Scenario {
    pub const NAMES: &[&str] = &["none", "incident"];
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown scenario \"{0}\": expected one of: none, incident")]
pub struct UnknownScenario(pub String);

impl FromStr for Scenario {
    type Err = UnknownScenario;

    fn from_str(name: &str) -> Result<Scenario, UnknownScenario> {
        match name {
            "none" => Ok(Scenario::None),
            "incident" => Ok(Scenario::Incident),
            other => Err(UnknownScenario(other.to_string())),
        }
    }
}

/// Play `scenario` against `store` (its steps spread over time; a release commits in the
/// repository `gitops` names); the task ends after the last.
pub fn spawn(store: Store, gitops: Gitops, scenario: Scenario) -> JoinHandle<()> {
    tokio::spawn(async move {
        if scenario == Scenario::Incident {
            incident::play(&store, &gitops, &incident::Pacing::demo()).await;
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn scenario_names_parse_and_unknown_names_list_the_choices() {
        assert_eq!("none".parse::<Scenario>(), Ok(Scenario::None));
        assert_eq!("incident".parse::<Scenario>(), Ok(Scenario::Incident));
        let err = "outage".parse::<Scenario>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown scenario \"outage\": expected one of: none, incident"
        );
        for name in Scenario::NAMES {
            assert!(err.contains(name));
        }
    }
}
