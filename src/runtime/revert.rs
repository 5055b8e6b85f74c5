//! The revert view's IO: the server-side dry run and the revert itself, on tasks that answer the
//! loop. The runtime keeps the latest [`Preview`] with its [`Reverter`], so that `y` executes
//! exactly what the operator saw (the app only holds what it shows).
use crate::app::Message;
use crate::app::message::Say;
use crate::app::revert::{PreviewShown, RevertDone};
use crate::cluster::client::Client;
use crate::cluster::revert::{Preview, RevertError, Reverter, Scope};
use crate::manifest::ManifestIndex;
use crate::manifest::ObjectKey;
use crate::schema::Schemas;

/// A dry run's answer, before it reaches the app.
pub type Previewed = Result<Box<(Reverter, Preview)>, RevertError>;

/// The latest preview, awaiting confirmation.
#[derive(Default)]
pub struct Reverts {
    pending: Option<(u64, Reverter, Preview)>,
}

impl Reverts {
    /// Start the dry run of reverting `key` to its manifest in `index`; its answer goes to
    /// `answer` (to be kept by [`Reverts::previewed`]), or to `say` when it cannot start.
    pub fn preview(
        &mut self,
        (id, key): (u64, ObjectKey),
        index: Option<&ManifestIndex>,
        (client, schemas): (&Client, &std::sync::Arc<Schemas>),
        say: &Say,
        answer: impl FnOnce(Previewed) + Send + 'static,
    ) {
        self.pending = None;
        let object = key;
        let Some((manifest, config)) =
            index.and_then(|i| Some((i.get(&object)?.clone(), i.config.clone())))
        else {
            // The app checked; the manifest went away in between (a file was deleted).
            let text = match index {
                Some(i) => crate::app::revert::no_manifest(&object.to_string(), &i.root),
                None => "the manifests are still loading".to_owned(),
            };
            say(Message::RevertPreviewed {
                id,
                result: Err(text),
            });
            return;
        };
        // A release object's fields that git already holds are left as they are (as `kdrift
        // revert` leaves them).
        let scope = index.map_or_else(Scope::default, |i| Scope::of(i, &manifest, Vec::new()));
        let (client, schemas) = (client.clone(), schemas.clone());
        tokio::spawn(async move {
            let result = match Reverter::new(&client, &manifest, &config, &schemas).await {
                Ok(reverter) => {
                    let reverter = reverter.scoped(scope);
                    reverter.preview().await.map(|p| Box::new((reverter, p)))
                }
                Err(e) => Err(e),
            };
            answer(result);
        });
    }

    /// The dry run answered: keep it for `y`, show it.
    pub fn previewed(&mut self, id: u64, result: Previewed) -> Message {
        let result = match result {
            Ok(pair) => {
                let (reverter, preview) = *pair;
                let shown = PreviewShown::from_preview(&preview);
                self.pending = Some((id, reverter, preview));
                Ok(shown)
            }
            Err(e) => Err(e.to_string()),
        };
        Message::RevertPreviewed { id, result }
    }

    /// `y`: revert as previewed under `id`.
    /// `who` asks (for the revert's trace, [`Reverter::record`]).
    pub fn execute(&mut self, id: u64, key: ObjectKey, who: String, say: &Say) {
        let say = say.clone();
        let Some((_, reverter, preview)) = self.pending.take().filter(|(p, ..)| *p == id) else {
            say(Message::Reverted {
                id,
                result: Err("the preview is gone: press r to preview again".to_owned()),
            });
            return;
        };
        tokio::spawn(async move {
            let result = match reverter.execute(&preview).await {
                Ok(outcome) => {
                    if let Err(error) = reverter.record(&preview, &outcome, &who, "revert").await {
                        tracing::warn!(%error, object = %key, "the revert's trace was not recorded");
                    }
                    Ok(RevertDone {
                        key,
                        removed: outcome.removed.iter().map(|r| r.label()).collect(),
                        kept: outcome.kept.iter().map(|r| r.label()).collect(),
                    })
                }
                Err(e) => Err(e.to_string()),
            };
            say(Message::Reverted { id, result });
        });
    }
}
