//! The checkout's Helm charts in the live view: rendered off the loop as `check` renders them
//! (`Command::RenderCharts`), again when a file of a chart or a values file changes or the
//! releases change, so a release's object is compared with git's render as well as with its
//! release (a hotfix accepted into values is a pending upgrade, not drift).
use std::path::Path;

use super::{App, Command};
use crate::manifest::charts::ChartRender;
use crate::manifest::{ManifestIndex, Problem};

impl App {
    /// The render to ask for when the index has charts: numbered, so only the answer to the
    /// newest ask is set (an older one was rendered from files changed since).
    pub(super) fn render_charts(&mut self) -> Option<Command> {
        let index = self.manifests.as_ref().filter(|i| i.has_charts())?.clone();
        self.charts_asked += 1;
        Some(Command::RenderCharts {
            id: self.charts_asked,
            index: super::accept::SharedIndex(index),
        })
    }

    /// Whether changed files may change a chart's render.
    pub(super) fn charts_concerned<'p>(
        index: &ManifestIndex,
        mut paths: impl Iterator<Item = &'p Path>,
    ) -> bool {
        index.has_charts() && paths.any(|p| index.concerns_charts(p))
    }

    /// `Message::ChartsRendered`: the renders set into the manifests (their problems in
    /// `:problems`), and what they touched compared again.
    pub fn charts_rendered(
        &mut self,
        id: u64,
        renders: Vec<ChartRender>,
        problems: Vec<Problem>,
    ) -> Vec<Command> {
        if id != self.charts_asked {
            return Vec::new();
        }
        let Some(touched) = self.change_manifests(|index| index.set_charts(renders, problems))
        else {
            return Vec::new();
        };
        self.note_pending_upgrades();
        self.desired_changed(touched)
    }

    /// The objects git's render of a chart holds otherwise than its release does (a `helm
    /// upgrade` is pending), read again after the renders or the releases changed.
    pub(super) fn note_pending_upgrades(&mut self) {
        self.pending_upgrades = self
            .manifests
            .as_ref()
            .map(|index| {
                index
                    .pending_upgrades()
                    .into_iter()
                    .map(|pending| pending.key)
                    .collect()
            })
            .unwrap_or_default();
    }
}
