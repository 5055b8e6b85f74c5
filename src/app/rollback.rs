//! `u` in a Deployment's detail view: its rollback to the previous revision, as `kdrift
//! rollback` plans and does it (the runtime plans it with [`crate::commands::rollback::plan`]
//! and keeps the plan, so that `y` does exactly what was shown). The view shows the plan's
//! lines — the fields that change, where the bad values came from, the commit's diff and the
//! server's dry run — and, once done, goes back to the detail view, where the rollout back is
//! watched as any other.
use crate::manifest::ObjectKey;
use crossterm::event::{KeyCode, KeyEvent};

use super::{App, Command, Flash, Screen};

/// Where the rollback view is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RollbackStage {
    /// The plan is being made (the workload and its revisions read, the dry runs).
    Planning,
    /// The plan, waiting for `y` or `esc`; `nothing`: there is nothing to roll back.
    Ready {
        lines: Vec<String>,
        question: String,
        nothing: bool,
    },
    /// Confirmed; the commit and the apply are running.
    RollingBack { lines: Vec<String> },
    /// The plan was refused or failed, as the headless command words it.
    Failed(String),
}

/// The `u` view of one workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RollbackView {
    /// Answers for another id belong to a view closed since.
    pub id: u64,
    pub key: ObjectKey,
    pub stage: RollbackStage,
    /// First line on screen.
    pub scroll: usize,
}

/// A plan as the view shows it: its lines, its question, and whether it does nothing.
pub type PlanShown = (Vec<String>, String, bool);

impl App {
    /// `u` on `key`: plan its rollback to the previous revision. Read-only: said, nothing else.
    pub fn open_rollback(&mut self, key: ObjectKey) -> Vec<Command> {
        if self.readonly {
            self.flash = Some(Flash {
                text: "rollback is disabled: kdrift runs read-only".to_owned(),
                error: true,
            });
            return Vec::new();
        }
        self.revert_seq += 1;
        let id = self.revert_seq;
        self.open_over(Screen::Rollback(Box::new(RollbackView {
            id,
            key: key.clone(),
            stage: RollbackStage::Planning,
            scroll: 0,
        })));
        vec![Command::PlanRollback { id, key }]
    }

    /// The plan answered: show it, if its view is still open.
    pub fn rollback_planned(&mut self, id: u64, result: Result<PlanShown, String>) {
        let Screen::Rollback(view) = &mut self.screen else {
            return;
        };
        if view.id != id || view.stage != RollbackStage::Planning {
            return;
        }
        view.stage = match result {
            Ok((lines, question, nothing)) => RollbackStage::Ready {
                lines,
                question,
                nothing,
            },
            Err(e) => RollbackStage::Failed(e),
        };
        self.dirty = true;
    }

    /// The rollback ended: back where `u` was pressed (the detail view shows the rollout back),
    /// what it did in the status bar.
    pub fn rolled_back(&mut self, id: u64, result: Result<Vec<String>, String>) {
        if let Screen::Rollback(view) = &self.screen
            && view.id == id
        {
            self.go_back();
        }
        self.flash = Some(match result {
            Ok(said) => Flash {
                text: said.join(" — "),
                error: false,
            },
            Err(e) => Flash {
                text: e,
                error: true,
            },
        });
        self.dirty = true;
    }
}

/// Keys of the rollback view: `y`/`enter` rolls back as planned, `esc` goes back, `j`/`k`
/// scroll.
pub fn rollback_key(app: &mut App, key: KeyEvent) -> Vec<Command> {
    let Screen::Rollback(view) = &mut app.screen else {
        return Vec::new();
    };
    match key.code {
        KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('n')
            if !matches!(view.stage, RollbackStage::RollingBack { .. }) =>
        {
            app.go_back();
        }
        KeyCode::Char('j') | KeyCode::Down => view.scroll = view.scroll.saturating_add(1),
        KeyCode::Char('k') | KeyCode::Up => view.scroll = view.scroll.saturating_sub(1),
        KeyCode::Char('y') | KeyCode::Enter => {
            if let RollbackStage::Ready {
                lines,
                nothing: false,
                ..
            } = &view.stage
            {
                view.stage = RollbackStage::RollingBack {
                    lines: lines.clone(),
                };
                return vec![Command::Rollback {
                    id: view.id,
                    key: view.key.clone(),
                }];
            }
        }
        _ => {}
    }
    Vec::new()
}
