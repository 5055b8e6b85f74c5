//! `a` on a Helm release's object: the accept into its chart's values file, as `kdrift accept`
//! makes it. The runtime plans and proves the edit by rendering the chart
//! (`Command::PrepareChartAccept`: helm runs once per candidate value, off the loop), again
//! whenever a field is checked or unchecked; the view shows the fields against git's render of
//! the chart, the proof's notes and the values file's diff; `enter` writes and commits it.
use crate::manifest::ObjectKey;
use std::sync::Arc;

use super::accept::{
    AcceptContent, AcceptField, AcceptForm, AcceptView, ChartPlan, FileText, GitState, Preview,
    SharedIndex, flash, git_warning, target_text,
};
use super::screen::Screen;
use super::{App, Command};
use crate::drift::{LiveObject, ObjectStatus, compare};
use crate::manifest::ManifestIndex;

impl App {
    /// `a` on an object a Helm release or a chart of the checkout describes: the chart's
    /// accept, or why there is none (no chart of the checkout renders it, its values are the
    /// release's own).
    pub(super) fn open_chart_accept(&mut self, key: ObjectKey, from_diff: bool) -> Vec<Command> {
        let Some(index) = self.manifests.clone() else {
            return Vec::new();
        };
        let Some(manifest) = index.get(&key) else {
            return Vec::new();
        };
        let object = match crate::accept::helm::chart_object(&index, manifest) {
            Ok(object) => object,
            Err(e) => {
                flash(
                    self,
                    format!("{e} (r reverts the cluster to the release instead)"),
                );
                return Vec::new();
            }
        };
        let values = object.chart.as_ref().and_then(|spec| spec.values_target());
        if values.is_none() {
            flash(
                self,
                format!(
                    "{key}: its chart's values are the release's in the cluster (helm get values), not a file of the checkout: name its values file in .kdrift.yaml (helm.charts) to accept into it; r reverts it to the release"
                ),
            );
            return Vec::new();
        }
        let command = Command::PrepareChartAccept {
            key: key.clone(),
            api_version: manifest.api_version.to_string(),
            index: SharedIndex(Arc::clone(&index)),
            only: None,
        };
        self.screen = Screen::Accept(Box::new(AcceptView {
            key,
            from_diff,
            content: AcceptContent::Loading,
        }));
        vec![command]
    }
}

impl AcceptForm {
    /// The form of a chart's accept: the fields where live differs from git's render of the chart
    /// (those git holds already are a pending upgrade, not offered), checked as planned.
    pub(super) fn of_chart(
        index: &ManifestIndex,
        key: ObjectKey,
        live: &LiveObject,
        file: FileText,
        git: &GitState,
        plan: ChartPlan,
    ) -> Result<AcceptForm, String> {
        let object = key.to_string();
        let manifest = index
            .get(&key)
            .ok_or_else(|| format!("{object} is no longer in the manifests"))?;
        let rendered =
            crate::accept::helm::chart_object(index, manifest).map_err(|e| e.to_string())?;
        let drift = compare(rendered, live, &index.config);
        if let ObjectStatus::Error(e) = &drift.status {
            return Err(format!("{object} cannot be compared: {e}"));
        }
        let fields: Vec<AcceptField> = crate::accept::offered(&drift)
            .into_iter()
            .map(|(item, offered)| {
                let checked = match &plan.only {
                    Some(only) => only.contains(&item.path.to_string()),
                    None => offered,
                };
                AcceptField { item, checked }
            })
            .collect();
        if fields.is_empty() {
            return Err(format!(
                "{object}: git's chart already says what is live (a pending helm upgrade): nothing to accept"
            ));
        }
        let (preview, notes) = match plan.planned {
            Ok((edit, notes)) => (Preview::Edit(edit), notes),
            Err(why) => (Preview::Refused(why), Vec::new()),
        };
        let shown = crate::accept::shown_path(&index.root, &file.path);
        Ok(AcceptForm {
            fields,
            cursor: 0,
            target: target_text(git, &index.config, &key),
            commits: !matches!(git, GitState::NotARepository),
            warning: git_warning(git, &shown, &index.config),
            shown,
            // The values file is edited where the value is; the header names the file.
            line: 1,
            document: 0,
            file,
            preview,
            scroll: 0,
            committing: false,
            root: Some(index.root.clone()),
            key,
            rendered: None,
            chart: Some(notes),
        })
    }

    /// A field of a chart's form was checked or unchecked: plan and prove again for the checked
    /// ones (none checked: nothing to prove).
    pub(super) fn plan_again(&mut self, index: Option<Arc<ManifestIndex>>) -> Vec<Command> {
        let form = self;
        let only: Vec<String> = form
            .fields
            .iter()
            .filter(|f| f.checked)
            .map(|f| f.item.path.to_string())
            .collect();
        form.scroll = 0;
        if only.is_empty() {
            form.preview = Preview::Nothing;
            return Vec::new();
        }
        let Some(index) = index else {
            return Vec::new();
        };
        let Some(manifest) = index.get(&form.key) else {
            return Vec::new();
        };
        form.preview = Preview::Proving;
        vec![Command::PrepareChartAccept {
            key: form.key.clone(),
            api_version: manifest.api_version.to_string(),
            index: SharedIndex(Arc::clone(&index)),
            only: Some(only),
        }]
    }
}
