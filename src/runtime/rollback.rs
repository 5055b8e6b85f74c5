//! The rollback view's IO: the plan ([`crate::commands::rollback::plan`], the headless
//! command's) made on a task, kept here so that `y` carries out exactly what was shown, then
//! carried out on a task. Both answer the loop.
use crate::manifest::ObjectKey;
use std::path::PathBuf;
use std::sync::Arc;

use crate::app::Message;
use crate::app::message::Say;
use crate::cluster::client::Client;
use crate::commands::rollback::{Action, Inputs, Plan};
use crate::manifest::ManifestIndex;
use crate::schema::Schemas;

/// What a plan and its carrying out read and write with, owned for the tasks.
#[derive(Clone)]
pub struct Owned {
    pub client: Client,
    pub index: Arc<ManifestIndex>,
    pub schemas: Arc<Schemas>,
    pub context: String,
    pub kubeconfig: Option<PathBuf>,
}

impl Owned {
    fn inputs(&self) -> Inputs<'_> {
        Inputs {
            client: &self.client,
            index: &self.index,
            schemas: &self.schemas,
            context: &self.context,
            kubeconfig: self.kubeconfig.as_deref(),
        }
    }
}

/// A plan's answer, before it reaches the app.
pub type Planned = Result<Box<Plan>, String>;

/// The latest plan, awaiting confirmation.
#[derive(Default)]
pub struct Rollbacks {
    pending: Option<(u64, Box<Plan>, Owned)>,
}

impl Rollbacks {
    /// Plans the rollback of `key` on a task; the plan goes to `answer` (to be kept by
    /// [`Rollbacks::planned`]).
    pub fn plan(
        &mut self,
        key: ObjectKey,
        owned: Owned,
        answer: impl FnOnce(Planned, Owned) + Send + 'static,
    ) {
        self.pending = None;
        tokio::spawn(async move {
            let result = crate::commands::rollback::plan(&owned.inputs(), &key, None)
                .await
                .map(Box::new);
            answer(result, owned);
        });
    }

    /// The plan answered: keep it for `y`, show it.
    pub fn planned(&mut self, id: u64, result: Planned, owned: Owned) -> Message {
        let result = result.map(|plan| {
            let shown = (
                plan.lines.clone(),
                plan.question.clone(),
                matches!(plan.action, Action::Nothing),
            );
            self.pending = Some((id, plan, owned));
            shown
        });
        Message::RollbackPlanned { id, result }
    }

    /// `y`: carry out the plan of view `id`.
    pub fn execute(&mut self, id: u64, say: &Say) {
        let say = say.clone();
        let Some((_, plan, owned)) = self.pending.take().filter(|(p, ..)| *p == id) else {
            say(Message::RolledBack {
                id,
                result: Err("the plan is gone: press u to plan again".to_owned()),
            });
            return;
        };
        tokio::spawn(async move {
            let result = crate::commands::rollback::execute(&owned.inputs(), &plan, false)
                .await
                .map(|done| done.lines)
                .map_err(|(e, _)| e);
            say(Message::RolledBack { id, result });
        });
    }
}
